"""Diagnostics as plain data: offsets into the checked document, no LSP types.

The LSP layer turns spans into ranges in the client's position encoding; the command line turns
them into 1-based line:column. A fix is a list of exact text edits of the same document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from taskdsl.language.document import Span


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"


@dataclass(frozen=True, slots=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[TextEdit, ...]
    safe: bool = True  # applied by `taskdsl check --fix`


@dataclass(frozen=True, slots=True)
class Related:
    """Related information: a place in this document (path None) or another file."""

    message: str
    span: Span | None = None  # in this document
    path: str | None = None  # another file
    range: tuple[tuple[int, int], tuple[int, int]] | None = None  # 0-based (line, col) in that file


@dataclass(slots=True)
class Diagnostic:
    code: str
    severity: Severity
    span: Span
    message: str
    related: list[Related] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


def apply_edits(text: str, edits: list[TextEdit] | tuple[TextEdit, ...]) -> str:
    """Apply non-overlapping edits (any order) to text; everything else is kept byte for byte."""
    result = text
    for edit in sorted(edits, key=lambda e: (e.span.start, e.span.end), reverse=True):
        result = result[: edit.span.start] + edit.new_text + result[edit.span.end :]
    return result
