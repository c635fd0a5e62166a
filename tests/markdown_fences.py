"""The one reader of a Markdown page's fenced blocks, for the tests that execute or compare what
the docs show (tests/test_docs_commands.py, tests/test_memory_docs.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

OPENING = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass
class Fence:
    line: int  # 1-based line of the opening ```
    language: str
    above: list[str]  # the `<!-- … -->` comment lines among the three lines above the fence
    body: list[str]  # the lines inside, dedented to the fence's own indentation


def fences(path: Path, indented: bool = False) -> list[Fence]:
    """Every fenced block of a page, top to bottom; with `indented`, blocks inside list items too."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        if not opening or (opening.group(1) and not indented):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        above = [line for line in lines[max(0, i - 3):i] if line.startswith("<!--")]
        indent = opening.group(1)
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:end]]
        found.append(Fence(i + 1, opening.group(2), above, body))
        i = end + 1
    return found
