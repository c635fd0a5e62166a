"""Document and range formatting: re-indent the lines that begin with a tag.

Only the whitespace at the start of a line that begins with a start tag, an end tag or a
one-line comment is ever changed, and only where that whitespace is formatting — between
elements of element-only content, or at the top level. Whitespace inside an element that holds
text (a description, an initial value, a CDATA section) is text content and is kept byte for
byte, as are comments, CDATA and everything else — except an enumerated attribute value written
with extra whitespace (`type=" sequential "`), which is written collapsed, as checking and running
read it. A document the scanner could not parse cleanly is not formatted (its structure is a guess).

Each changed line yields one TextEdit of its leading whitespace, so the edits are minimal.
"""

from __future__ import annotations

from lsprotocol import types

from taskdsl.language.document import Document, Element, Span
from taskdsl.features.util import Positions


def _schema_simple(path: tuple[str, ...]) -> bool:
    try:
        from taskdsl.language import schema

        return schema.model().has_simple_content(path)
    except Exception:  # no schema model: judge by the text alone
        return False


def _formatting_whitespace(element: Element | None) -> bool:
    """Is whitespace directly inside ``element`` (None = top level) free to re-indent?"""
    if element is None:
        return True
    if any(piece.cdata or piece.value.strip() for piece in element.text_pieces):
        return False
    return not _schema_simple(element.path)


def _indent_unit(options: types.FormattingOptions | None) -> str:
    if options is None:
        return "  "
    if not options.insert_spaces:
        return "\t"
    return " " * max(int(options.tab_size or 2), 0)


def indentation_edits(doc: Document, options: types.FormattingOptions | None = None,
                      lines: range | None = None) -> list[tuple[Span, str]]:
    """(span of leading whitespace, new whitespace) for each line to re-indent."""
    if doc.problems or doc.root is None:
        return []
    unit = _indent_unit(options)
    wanted: dict[int, tuple[int, Element | None]] = {}  # line -> (depth, whose whitespace)

    def consider(offset: int, depth: int, container: Element | None) -> None:
        line, column = doc.position(offset)
        if column and doc.text[offset - column:offset].strip(" \t"):
            return  # something precedes the tag on its line
        wanted.setdefault(line, (depth, container))

    for element in doc.iter():
        depth = element.depth
        consider(element.start_tag.start, depth, element.parent)
        if element.end_tag is not None:
            consider(element.end_tag.start, depth, element)
    for comment in doc.comments:
        if "\n" in doc.text[comment.start:comment.end] or "\r" in doc.text[comment.start:comment.end]:
            continue  # a multi-line comment keeps its own layout
        container = doc.element_at(comment.start)
        if container is not None and not (container.start_tag.end <= comment.start):
            continue
        consider(comment.start, container.depth + 1 if container else 0, container)

    edits = []
    for line, (depth, container) in sorted(wanted.items()):
        if lines is not None and line not in lines:
            continue
        if not _formatting_whitespace(container):
            continue
        start = doc.line_starts[line]
        end = start
        while end < len(doc.text) and doc.text[end] in " \t":
            end += 1
        new = unit * depth
        if doc.text[start:end] != new:
            edits.append((Span(start, end), new))
    return edits


def value_edits(doc: Document, lines: range | None = None) -> list[tuple[Span, str]]:
    """(value span, collapsed value) of each enumerated attribute value written with extra whitespace."""
    from taskdsl.language.vocabulary import ENUM_ATTRIBUTES, collapse, enum_value

    if doc.problems or doc.root is None:
        return []
    edits = []
    for element in doc.iter():
        for attr in element.attrs:
            kind = ENUM_ATTRIBUTES.get((element.tag, attr.name))
            span = attr.value_span
            if kind is None or span is None or "&" in doc.text[span.start:span.end]:
                continue
            value = enum_value(attr.value, kind)
            if value is not None and value != attr.value and (lines is None or doc.position(span.start)[0] in lines):
                edits.append((span, collapse(attr.value)))
    return edits


def format_document(doc: Document, positions: Positions, options: types.FormattingOptions | None) -> list[types.TextEdit]:
    edits = sorted(indentation_edits(doc, options) + value_edits(doc), key=lambda edit: edit[0].start)
    return [types.TextEdit(positions.range(span), text) for span, text in edits]


def format_range(doc: Document, positions: Positions, range_: types.Range,
                 options: types.FormattingOptions | None) -> list[types.TextEdit]:
    last = range_.end.line
    if range_.end.character == 0 and range_.end.line > range_.start.line:
        last -= 1  # a selection ending at the start of a line does not include that line
    selected = range(range_.start.line, last + 1)
    edits = sorted(indentation_edits(doc, options, selected) + value_edits(doc, selected), key=lambda edit: edit[0].start)
    return [types.TextEdit(positions.range(span), text) for span, text in edits]
