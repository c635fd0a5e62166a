"""Small helpers shared by the rule families (spans, did-you-mean, line-preserving edits)."""

from __future__ import annotations

import re

import difflib
from typing import Iterable

from taskdsl.language.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from taskdsl.language.document import ENTITY_RE, Attr, Document, Element, Span, decode_entities
from taskdsl.rules.registry import RULES, RuleContext

from taskdsl.meaning.model import is_ref, raw_type as _raw_type, task_type as kind  # noqa: F401  (the rules' names for them)
from taskdsl.language.vocabulary import TASK_TAGS, task_types

TASK_TYPES = task_types()


def make(code: str, span: Span, message: str, *, severity: Severity | None = None,
         related: Iterable[Related] = (), fixes: Iterable[Fix] = ()) -> Diagnostic:
    # A message is one line in every editor: a line break quoted from the user's text (a name that
    # starts with one) is shown as its escape.
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return Diagnostic(code, severity or RULES[code].severity, span, message, list(related), list(fixes))


def tasks(ctx: RuleContext) -> list[Element]:
    """Every task, inner_task and reduction_task, in document order."""
    return ctx.tagged(*TASK_TAGS)


def operators(ctx: RuleContext) -> dict[Element, str | None]:
    """Every task-like element that is not a ref → its kind() (None for a type version 1 does not
    know), in document order; computed once per document."""
    return ctx.cached(_operators)


def _operators(ctx: RuleContext) -> dict[Element, str | None]:
    return {task: kind(task) for task in tasks(ctx) if not is_ref(task)}


def raw_type(element: Element) -> str | None:
    return _raw_type(element) if element.get("type") is not None else None


def did_you_mean(word: str, options: Iterable[str], cutoff: float = 0.7) -> str | None:
    matches = difflib.get_close_matches(word, list(options), n=1, cutoff=cutoff)
    return matches[0] if matches else None


def text_span(element: Element) -> Span | None:
    """The element's direct text, trimmed (None when it has none)."""
    pieces = [p for p in element.text_pieces if p.value.strip()]
    if not pieces:
        return None
    first, last = pieces[0], pieces[-1]
    start = first.span.start + (len(first.raw) - len(first.raw.lstrip()))
    end = last.span.end - (len(last.raw) - len(last.raw.rstrip()))
    return Span(start, end)


def raw_offsets(raw: str) -> list[tuple[int, int]]:
    """For each character of decode_entities(raw): its (start, end) in raw."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _DECODED_RE.finditer(raw):  # an entity, or a CR LF that decodes to one LF
        spans.extend((i, i + 1) for i in range(pos, match.start()))
        decoded = decode_entities(match.group(0))
        spans.extend([(match.start(), match.end())] * len(decoded))
        pos = match.end()
    spans.extend((i, i + 1) for i in range(pos, len(raw)))
    return spans


_DECODED_RE = re.compile(f"(?:{ENTITY_RE.pattern})|\r\n")


def value_subspan(document: Document, attr: Attr, start: int, length: int) -> Span:
    """The source span of value[start:start+length] of an attribute (entity references mapped)."""
    assert attr.value_span is not None
    base = attr.value_span.start
    spans = raw_offsets(document.text[attr.value_span.start:attr.value_span.end])
    if not spans:
        return Span(base, base)
    if start >= len(spans):  # at the end of the value (e.g. "unexpected end")
        end = attr.value_span.end
        return Span(end - 1, end) if spans else Span(end, end)
    start = max(start, 0)
    last = min(start + max(length, 1), len(spans)) - 1
    return Span(base + spans[start][0], base + spans[last][1])


def line_indent(text: str, offset: int) -> str:
    """The whitespace that starts the line of offset (empty when other text precedes offset)."""
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    return prefix if not prefix.strip() else ""


def indent_unit(indent: str) -> str:
    if "\t" in indent:
        return "\t"
    return "    " if indent and len(indent) % 4 == 0 else "  "


def removal_span(text: str, span: Span) -> Span:
    """span, widened to its whole line(s) when nothing else is on them (so no blank line stays)."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:span.start].strip() or text[span.end:line_end].strip():
        return span
    return Span(line_start, min(line_end + 1, len(text)))


def remove_fix(document: Document, element: Element, title: str, *, safe: bool = False) -> Fix:
    return Fix(title, (TextEdit(removal_span(document.text, element.span), ""),), safe=safe)


def append_child_edit(document: Document, parent: Element, xml: str) -> TextEdit | None:
    """An edit that adds xml as the parent's last child, on its own line when the parent's end tag
    is on its own line; a self-closing parent is opened and closed around it (None when the parent
    is unfinished)."""
    text = document.text
    if parent.self_closing:
        close = parent.start_tag.end - 2
        if text[close:parent.start_tag.end] != "/>":
            return None
        return TextEdit(Span(close, parent.start_tag.end), f">{xml}</{parent.tag}>")
    if parent.end_tag is None:
        return None
    end = parent.end_tag.start
    line_start = text.rfind("\n", 0, end) + 1
    if text[line_start:end].strip():
        return TextEdit(Span(end, end), xml)
    indent = line_indent(text, parent.start_tag.start)
    return TextEdit(Span(line_start, line_start), f"{indent}{indent_unit(indent)}{xml}\n")


def replace_fix(span: Span, new_text: str, title: str, *, safe: bool = True) -> Fix:
    return Fix(title, (TextEdit(span, new_text),), safe=safe)


#: did-you-mean searches one document's check may make: each scans every known name (about 15 ms over
#: litellm's model map), so a document of thousands of unknown names would hold the server for minutes
SUGGESTIONS_PER_DOCUMENT = 100


def may_suggest(ctx) -> bool:
    """Whether this document's check may still look for a did-you-mean (then counted); past the cap,
    a diagnostic is given without one."""
    left = ctx.cached(_suggestion_budget)
    if left[0] <= 0:
        return False
    left[0] -= 1
    return True


def _suggestion_budget(ctx) -> list[int]:
    return [SUGGESTIONS_PER_DOCUMENT]
