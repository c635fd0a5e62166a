"""The one fixer: `taskdsl check --fix` and the editor's "Fix all" code action both apply the
safe quick fixes through `fix_text`; `taskdsl check --fix --unsafe-fixes` applies the unsafe ones
too (`fix_text(..., unsafe=True)`: a guessed name, an added empty argument).

Each round checks the text, takes the chosen fixes of its diagnostics in document order, skips any
whose edits overlap an edit already taken this round, applies them (nothing else in the file
changes) and checks again; it stops when a round has nothing to apply (or after MAX_ROUNDS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from taskdsl.language.diagnostics import Diagnostic, Fix, TextEdit, apply_edits

MAX_ROUNDS = 10


@dataclass(frozen=True)
class Applied:
    """One fix applied: the diagnostic it fixed, the fix, and where (0-based line and column in
    the text as it was in that round)."""

    diagnostic: Diagnostic
    fix: Fix
    line: int
    column: int


@dataclass
class Fixed:
    text: str
    applied: list[Applied] = field(default_factory=list)


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    if a.span.start == a.span.end == b.span.start == b.span.end:
        return True  # two insertions at one point: their order would be arbitrary
    return a.span.start < b.span.end and b.span.start < a.span.end or (
        a.span.start == a.span.end and b.span.start < a.span.start < b.span.end) or (
        b.span.start == b.span.end and a.span.start < b.span.start < a.span.end)


def safe_fix(diagnostic: Diagnostic, unsafe: bool = False) -> Fix | None:
    """The fix `--fix` applies for a diagnostic: its first safe fix that edits something (with
    unsafe, its first fix of any kind: the one the editor offers first)."""
    return next((f for f in diagnostic.fixes if (f.safe or unsafe) and f.edits), None)


def fix_text(text: str, path: str | None = None, library=None, settings=None, unsafe: bool = False) -> Fixed:
    """Apply every safe fix (with unsafe, every fix), round after round, until the text is stable."""
    from taskdsl.rules.checker import check_text

    fixed = Fixed(text)
    for _ in range(MAX_ROUNDS):
        result = check_text(fixed.text, path=path, library=library, settings=settings)
        taken: list[TextEdit] = []
        chosen: list[Applied] = []
        for diagnostic in result.diagnostics:
            fix = safe_fix(diagnostic, unsafe)
            if fix is None or any(_overlaps(edit, other) for edit in fix.edits for other in taken):
                continue  # overlapping fixes wait for the next round, on the updated text
            taken.extend(fix.edits)
            chosen.append(Applied(diagnostic, fix, *result.document.position(diagnostic.span.start)))
        if not chosen:
            break
        new_text = apply_edits(fixed.text, taken)
        if new_text == fixed.text:
            break
        fixed.text = new_text
        fixed.applied.extend(chosen)
    fixed.text = same_line_endings(text, fixed.text)
    return fixed


def same_line_endings(original: str, text: str) -> str:
    """`text` with the line endings of `original` when those are all CRLF: the fixes' own lines
    end in LF, and a fixed file must not mix the two."""
    if "\r\n" not in original or re.search(r"(?<!\r)\n", original):
        return text
    return re.sub(r"(?<!\r)\n", "\r\n", text)


def apply_safe_fixes(text: str, path: str | None = None, library=None, settings=None
                     ) -> tuple[str, list[tuple[Diagnostic, Fix]]]:
    """(new text, the (diagnostic, fix) pairs applied, in the order applied)."""
    fixed = fix_text(text, path, library, settings)
    return fixed.text, [(a.diagnostic, a.fix) for a in fixed.applied]
