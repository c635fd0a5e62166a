"""docs/memory.md is what the memory system does (its worked example is run command by command by
tests/test_docs_commands.py, in a new project holding the page's files); the index and the structured request it shows are the ones the code writes; the [memory]
table of docs/configuration.md parses without a problem."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from paths import REPO
from taskdsl.evaluator.memory import ContextGenerationInput

PAGE = REPO / "docs" / "memory.md"
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


def blocks(path: Path) -> list[tuple[str, str, str | None]]:
    """(language, text, the file: marker above it) of every fenced block of a page."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        marker = re.match(r"^<!--\s*file:\s*(\S+)\s*-->$", lines[i - 2] if i >= 2 else "") or \
            re.match(r"^<!--\s*file:\s*(\S+)\s*-->$", lines[i - 1] if i >= 1 else "")
        end = i + 1
        while lines[end].strip() != "```":
            end += 1
        text = textwrap.dedent("\n".join(lines[i + 1:end])) + "\n"
        found.append((opening.group(2), text, marker.group(1) if marker else None))
        i = end + 1
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
