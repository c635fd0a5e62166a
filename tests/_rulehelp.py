"""Helpers for the rule tests: check a template, pick diagnostics, show where they are."""

from __future__ import annotations

import textwrap

from taskdsl.rules.checker import check_text
from taskdsl.language.diagnostics import apply_edits


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def check(text: str, **kwargs):
    return check_text(text, **kwargs)


def found(text: str, code: str, **kwargs):
    """(result, diagnostics with that code)."""
    result = check_text(text, **kwargs)
    return result, [d for d in result.diagnostics if d.code == code]


def where(result, diagnostic) -> tuple[int, int, str]:
    """1-based line, 1-based column and the underlined text."""
    line, col = result.document.position(diagnostic.span.start)
    return line + 1, col + 1, result.document.text[diagnostic.span.start:diagnostic.span.end]


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


def apply_fix(text: str, diagnostic, index: int = 0) -> str:
    return apply_edits(text, diagnostic.fixes[index].edits)
