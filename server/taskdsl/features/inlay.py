"""Inlay hints: the effective context settings a task leaves implicit.

Shown after the task's ``</context_management>`` end tag, or at the end of its start tag when it
has no block, e.g. ``inherit: full · fresh: disabled (defaults)``. A task that writes every
setting that applies to it gets no hint; a ``ref`` task gets none either (its settings are the
target's, shown on hover).
"""

from __future__ import annotations

from lsprotocol import types

from taskdsl.language.document import Document, Element, Span
from taskdsl.features.util import TASK_TAGS, Positions


def applicable(settings) -> list[str]:
    names = ["inherit_context", "fresh_context"]
    if settings.accumulate_data is not None:
        names.append("accumulate_data")
        if settings.accumulate_data:
            names.append("accumulation_format")
    return names


def hint_for(element: Element):
    """(offset, label, tooltip) for a task, or None when it leaves nothing implicit."""
    from taskdsl.meaning import context

    if element.tag not in TASK_TAGS or element.get("ref") or not element.start_tag_complete:
        return None
    settings = context.effective_settings(element)
    if all(name in settings.explicit for name in applicable(settings)):
        return None
    block = element.child("context_management")
    if block is not None and block.end_tag is not None:
        offset = block.end_tag.end
    elif block is not None and block.self_closing:
        offset = block.start_tag.end
    else:
        offset = element.start_tag.end
    return offset, context.describe(settings), f"effective context settings of this {settings.operator} task"


def inlay_hints(doc: Document, positions: Positions, span: Span | None = None) -> list[types.InlayHint]:
    hints = []
    for element in doc.iter():
        found = hint_for(element)
        if found is None:
            continue
        offset, label, tooltip = found
        if span is not None and not span.start <= offset <= span.end:
            continue
        hints.append(types.InlayHint(
            position=positions.position(offset), label=label, padding_left=True, tooltip=tooltip,
        ))
    return hints
