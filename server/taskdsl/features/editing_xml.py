"""The XML editing lemminx users expect: linked editing of a start and end tag, selection ranges
that grow element by element, and document highlights of a name's declaration and uses.

Pure functions of a ``Document`` and a ``Positions``; ``lsp/editing.py`` wires them. Highlights ask
``taskdsl.meaning.uses`` (the one index of every use of every name) what the name under the cursor
means; a tag name with no name under it highlights its start and end tag, as lemminx does.
"""

from __future__ import annotations

from lsprotocol import types

from taskdsl.features.util import Positions
from taskdsl.language.document import Document, Element, Span
from taskdsl.language.templating import find_placeholders
from taskdsl.meaning.uses import Workspace

#: what an editor may type into a linked tag name (an XML name, roughly; no blanks, no '>')
TAG_NAME_PATTERN = r"[A-Za-z_:][-A-Za-z0-9_.:]*"


# -- tag pairs --------------------------------------------------------------------------------------


def end_name_span(doc: Document, element: Element) -> Span | None:
    """The name inside the element's end tag, when it has one that matches its start tag."""
    if element.end_tag_start < 0 or element.self_closing:
        return None
    start = element.end_tag_start + 2
    end = start + len(element.tag)
    if doc.text[element.end_tag_start:start] != "</" or doc.text[start:end] != element.tag:
        return None
    return Span(start, end)


def tag_pair_at(doc: Document, offset: int) -> tuple[Span, Span] | None:
    """(start tag name, end tag name) of the element whose start or end tag name the offset touches."""
    element = doc.element_at(offset)
    while element is not None:
        end_name = end_name_span(doc, element)
        if end_name is not None and (offset in element.name_span or offset in end_name):
            return element.name_span, end_name
        if element.start_tag.start <= offset <= element.start_tag.end:
            return None  # inside a start tag but not on its name
        element = element.parent  # an end tag's offset may also touch a child's end
    return None


def linked_editing_ranges(doc: Document, offset: int, positions: Positions) -> types.LinkedEditingRanges | None:
    pair = tag_pair_at(doc, offset)
    if pair is None:
        return None
    return types.LinkedEditingRanges(ranges=[positions.range(span) for span in pair], word_pattern=TAG_NAME_PATTERN)


# -- selection ranges -------------------------------------------------------------------------------


def _attribute_spans(element: Element, offset: int) -> list[Span]:
    for attr in element.attrs:
        value = attr.value_span
        end = (value.end + (1 if attr.quoted else 0)) if value is not None else attr.name_span.end
        whole = Span(attr.name_start, end)
        if offset in whole:
            spans = []
            if value is not None and offset in value:
                trimmed = _trimmed(attr.value, value)
                if trimmed is not None and offset in trimmed:
                    spans.append(trimmed)
                spans.append(value)
            elif offset in attr.name_span:
                spans.append(attr.name_span)
            return spans + [whole]
    return []


def _trimmed(value: str, span: Span) -> Span | None:
    """The value without surrounding blanks (only when the source spells it as decoded)."""
    if len(span) != len(value):
        return None
    start = span.start + len(value) - len(value.lstrip())
    return Span(start, max(start, span.end - (len(value) - len(value.rstrip()))))


def _placeholder_spans(raw: str, base: int, offset: int) -> list[Span]:
    """Inside a {{…}}: the name under the cursor, then the whole placeholder."""
    for placeholder in find_placeholders(raw):
        whole = Span(base + placeholder.start, base + placeholder.end)
        if offset in whole:
            inner = raw[placeholder.start + 2:placeholder.end - 2]
            name_start = whole.start + 2 + len(inner) - len(inner.lstrip())
            name = Span(name_start, name_start + len(placeholder.name or ""))
            return ([name] if placeholder.name and offset in name else []) + [whole]
    return []


def _spans_in(doc: Document, element: Element, offset: int) -> list[Span]:
    """The spans, innermost first, that hold the offset inside this element but outside its children."""
    if element.start_tag.start <= offset <= element.start_tag.end:
        if offset in element.name_span:
            return [element.name_span, element.start_tag]
        return _attribute_spans(element, offset) + [element.start_tag]
    end_tag = element.end_tag
    if end_tag is not None and offset in end_tag:
        end_name = end_name_span(doc, element)
        return ([end_name] if end_name is not None and offset in end_name else []) + [end_tag]
    content = element.content
    found: list[Span] = []
    for piece in element.text_pieces:
        if offset in piece.span and piece.raw.strip():
            found.extend(_placeholder_spans(piece.raw, piece.start, offset))
            found.append(_trimmed(piece.raw, piece.span) or piece.span)
    if content is not None and offset in content:
        found.append(content)
    return found


def selection_chain(doc: Document, offset: int) -> list[Span]:
    """Innermost first: name → attribute → start tag → element → parent element … → the document."""
    element = doc.element_at(offset)
    chain: list[Span] = []
    first = True
    while element is not None:
        if first:
            chain.extend(_spans_in(doc, element, offset))
            first = False
        else:
            content = element.content
            if content is not None:
                chain.append(content)
        chain.append(element.span)
        element = element.parent
    chain.append(Span(0, len(doc.text)))
    grown: list[Span] = []
    for span in chain:  # each range strictly holds the one before it (LSP requires it to hold it)
        if not grown or (span.start <= grown[-1].start and span.end >= grown[-1].end and span != grown[-1]):
            grown.append(span)
    return grown


def selection_ranges(doc: Document, offsets: list[int], positions: Positions) -> list[types.SelectionRange]:
    answers = []
    for offset in offsets:
        current: types.SelectionRange | None = None
        for span in reversed(selection_chain(doc, offset)):
            current = types.SelectionRange(range=positions.range(span), parent=current)
        answers.append(current or types.SelectionRange(range=positions.range(Span(offset, offset))))
    return answers


# -- highlights -------------------------------------------------------------------------------------


def document_highlights(doc: Document, offset: int, positions: Positions, *, path: str = "", library=None,
                        settings=None) -> list[types.DocumentHighlight]:
    """The uses, in this document, of the name under the cursor (its declarations as Write, the
    rest as Read), as references lists them; on a tag name, its start and end tag (Text)."""
    workspace = Workspace(doc, path, library=library, settings=settings)  # no reader: this document only
    site = workspace.site(offset)
    if site is not None:
        uses = workspace.uses(site.symbol).get(path, [])
        return [types.DocumentHighlight(range=positions.range(use.span),
                                        kind=types.DocumentHighlightKind.Write if use.declaration
                                        else types.DocumentHighlightKind.Read)
                for use in uses]
    pair = tag_pair_at(doc, offset)
    if pair is not None:
        return [types.DocumentHighlight(range=positions.range(span), kind=types.DocumentHighlightKind.Text)
                for span in pair]
    return []
