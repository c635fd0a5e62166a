"""docs/memory.md is what the memory system does (its worked example is run command by command by
tests/test_docs_commands.py, in a new project holding the page's files); the index and the structured request it shows are the ones the code writes; the [memory]
table of docs/configuration.md parses without a problem."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_fences import fences
from paths import REPO
from taskdsl.evaluator.memory import ContextGenerationInput

PAGE = REPO / "docs" / "memory.md"
FILE_MARKER = re.compile(r"^<!--\s*file:\s*(\S+)\s*-->$")


def blocks(path: Path) -> list[tuple[str, str, str | None]]:
    """(language, text, the file: marker above it) of every fenced block of a page."""
    found = []
    for fence in fences(path, indented=True):
        names = [marker.group(1) for comment in fence.above if (marker := FILE_MARKER.match(comment))]
        found.append((fence.language, "\n".join(fence.body) + "\n", names[-1] if names else None))
    return found


def test_the_structured_request_is_the_one_the_page_shows():
    (shown,) = [text for language, text, file in blocks(PAGE) if language == "xml" and file is None]
    assert shown == ContextGenerationInput("Summarise the quarterly revenue for the board").as_xml() + "\n"


def test_the_configuration_page_s_complete_file_has_no_problem(tmp_path):
    from taskdsl.project.config import parse_config

    page = REPO / "docs" / "configuration.md"
    complete = [text for language, text, _ in blocks(page) if language == "toml"][0]
    config = parse_config(complete, tmp_path, tmp_path / "taskdsl.toml")
    assert config.problems == []
    assert (config.get("memory", "index"), config.get("memory", "matcher")) == (".taskdsl/memory.json", "local")
