"""`taskdsl check --fix`: apply every safe quick fix until the document is stable.

Each round checks the text, takes the safe fixes of its diagnostics in document order, skips any
whose edits overlap an edit already taken this round, applies them (nothing else in the file
changes) and checks again; it stops when a round has nothing to apply (or after MAX_ROUNDS).
"""

from __future__ import annotations

from taskdsl.diagnostics import Diagnostic, Fix, TextEdit, apply_edits

MAX_ROUNDS = 10


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    if a.span.start == a.span.end == b.span.start == b.span.end:
        return True  # two insertions at one point: their order would be arbitrary
    return a.span.start < b.span.end and b.span.start < a.span.end or (
        a.span.start == a.span.end and b.span.start < a.span.start < b.span.end) or (
        b.span.start == b.span.end and a.span.start < b.span.start < a.span.end)


def apply_safe_fixes(text: str, path: str | None = None, library=None, settings=None
                     ) -> tuple[str, list[tuple[Diagnostic, Fix]]]:
    """(new text, the (diagnostic, fix) pairs applied, in the order applied)."""
    from taskdsl.checker import check_text

    applied: list[tuple[Diagnostic, Fix]] = []
    for _ in range(MAX_ROUNDS):
        result = check_text(text, path=path, library=library, settings=settings)
        taken: list[TextEdit] = []
        chosen: list[tuple[Diagnostic, Fix]] = []
        for diagnostic in result.diagnostics:
            fix = next((f for f in diagnostic.fixes if f.safe), None)
            if fix is None or not fix.edits:
                continue
            if any(_overlaps(edit, other) for edit in fix.edits for other in taken):
                continue
            taken.extend(fix.edits)
            chosen.append((diagnostic, fix))
        if not chosen:
            break
        new_text = apply_edits(text, taken)
        if new_text == text:
            break
        text = new_text
        applied.extend(chosen)
    return text, applied
