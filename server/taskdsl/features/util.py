"""Helpers shared by the feature modules: positions in the client's encoding, client
capabilities as plain flags, and small queries over the element tree."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from taskdsl.language.document import Document, Element, Span
from taskdsl.language import vocabulary

# elements that are tasks (have a type, context settings, inputs)
TASK_TAGS = frozenset(vocabulary.TASK_TAGS)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME_CHARS_RE = re.compile(r"[A-Za-z0-9_.\-:]")


class _Lines(Sequence):
    """The document's lines (without line breaks), as the codec wants them; built lazily."""

    def __init__(self, doc: Document):
        self.doc = doc

    def __len__(self) -> int:
        return len(self.doc.line_starts)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self.doc.line_text(i) for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.doc.line_text(index)


class Positions:
    """Offsets (code points into ``doc.text``) ↔ LSP positions in the negotiated encoding."""

    def __init__(self, doc: Document, codec: PositionCodec | None = None):
        self.doc = doc
        self.codec = codec or PositionCodec(types.PositionEncodingKind.Utf16)
        self.lines = _Lines(doc)
        self._units: dict[int, tuple[int, list[int] | None]] = {}  # line → (length, client units; None: the same)

    def position(self, offset: int) -> types.Position:
        """Linear in the document whatever the number of positions asked: each line's client units
        are counted once (a diagnostic per element of a 1 MB line no longer re-reads the line)."""
        line, column = self.doc.position(offset)
        if line not in self._units:
            text = self.doc.line_text(line)
            self._units[line] = (len(text), self._line_units(text))
        length, units = self._units[line]
        column = min(column, length)  # a line break's offset: the end of its line
        return types.Position(line, column if units is None else units[column])

    def _line_units(self, text: str) -> list[int] | None:
        encoding = getattr(self.codec.encoding, "value", self.codec.encoding)
        if encoding in (types.PositionEncodingKind.Utf32, "utf-32") or text.isascii():
            return None
        if encoding in (types.PositionEncodingKind.Utf16, "utf-16") and max(text, default="\0") <= "\uffff":
            return None
        units, total = [0], 0
        for ch in text:
            code = ord(ch)
            if encoding in (types.PositionEncodingKind.Utf8, "utf-8"):
                total += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
            else:
                total += 2 if code > 0xFFFF else 1
            units.append(total)
        return units

    def range(self, span: Span) -> types.Range:
        return types.Range(self.position(span.start), self.position(span.end))

    def offset(self, position: types.Position) -> int:
        if position.line >= len(self.lines):
            return len(self.doc.text)
        # the codec mutates a position past the end of the line: give it a copy
        copy = types.Position(position.line, position.character)
        server = self.codec.position_from_client_units(self.lines, copy)
        return self.doc.offset(server.line, server.character)

    def span(self, range_: types.Range) -> Span:
        return Span(self.offset(range_.start), self.offset(range_.end))


@dataclass(frozen=True)
class ClientFeatures:
    """What the client supports, as the features need it (read once at initialize)."""

    snippets: bool = False
    markdown: bool = True  # hover contents
    completion_formats: tuple[str, ...] = ("markdown", "plaintext")  # completion documentation
    hierarchical_symbols: bool = True
    document_changes: bool = False
    create_files: bool = False
    prepare_rename: bool = False
    line_folding_only: bool = False
    link_tooltips: bool = False
    completion_item_kinds: frozenset[int] | None = None

    @classmethod
    def from_capabilities(cls, caps: types.ClientCapabilities | None) -> "ClientFeatures":
        caps = caps or types.ClientCapabilities()
        td = caps.text_document or types.TextDocumentClientCapabilities()
        ws = caps.workspace or types.WorkspaceClientCapabilities()
        item = td.completion.completion_item if td.completion else None
        hover_formats = list(td.hover.content_format or []) if td.hover else []
        edit = ws.workspace_edit
        operations = list(edit.resource_operations or []) if edit else []
        return cls(
            snippets=bool(item and item.snippet_support),
            markdown=(not hover_formats) or types.MarkupKind.Markdown in hover_formats,
            completion_formats=tuple(str(f.value if hasattr(f, "value") else f) for f in (item.documentation_format or []))
            if item else (),
            hierarchical_symbols=bool(td.document_symbol and td.document_symbol.hierarchical_document_symbol_support),
            document_changes=bool(edit and edit.document_changes),
            create_files=bool(edit and edit.document_changes and types.ResourceOperationKind.Create in operations),
            prepare_rename=bool(td.rename and td.rename.prepare_support),
            line_folding_only=bool(td.folding_range and td.folding_range.line_folding_only),
            link_tooltips=bool(td.document_link and td.document_link.tooltip_support),
        )


# -- uris and paths ------------------------------------------------------------------------


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return str(Path(unquote(parsed.path)))


def path_to_uri(path: str) -> str:
    return from_fs_path(path) or Path(path).as_uri()


# -- tree queries ---------------------------------------------------------------------------


def is_task(element: Element) -> bool:
    return element.tag in TASK_TAGS


def enclosing(element: Element | None, tags: frozenset[str] | set[str]) -> Element | None:
    while element is not None and element.tag not in tags:
        element = element.parent
    return element


def task_type(element: Element) -> str:
    from taskdsl.meaning.model import task_kind  # the one answer (XSD whitespace collapsed)

    return task_kind(element)


def word_span(text: str, offset: int, pattern: re.Pattern[str] = NAME_CHARS_RE) -> Span:
    """The run of name characters around an offset."""
    start = offset
    while start > 0 and pattern.match(text[start - 1]):
        start -= 1
    end = offset
    while end < len(text) and pattern.match(text[end]):
        end += 1
    return Span(start, end)


def stripped_span(text: str, span: Span) -> Span:
    """The span without leading and trailing whitespace (empty spans stay where they are)."""
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


def command_spec(args, names: tuple[str, ...]) -> dict:
    """A workspace command's arguments as one dict: a single object as sent, else the positional
    arguments named in order (extra ones dropped)."""
    args = list(args)
    return dict(args[0]) if len(args) == 1 and isinstance(args[0], dict) else dict(zip(names, args))
