"""The document model: a tolerant XML scanner that keeps the exact source span of every part.

lxml decides whether a template is well-formed and validates it; it does not tell where an
attribute value or an end tag is. This scanner does, and it keeps going on broken input (a
template being typed is broken most of the time), so completion, hover and the other features
always have a tree to work on.

Offsets are Python string indices (code points) into ``Document.text``; spans are half-open.
Nothing here expands entities beyond the five predefined ones and character references, reads
a DTD, or touches the file system.
"""

from __future__ import annotations

import bisect
import gc
import re
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator


@dataclass(frozen=True, slots=True, init=False)
class Span:
    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        # the generated frozen __init__ goes through object.__setattr__ per field; a scan makes
        # ~5 spans per element, and the slot setters directly are 1.6x faster (still frozen)
        _set_start(self, start)
        _set_end(self, end)

    def __contains__(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    def __len__(self) -> int:
        return self.end - self.start


_set_start = Span.start.__set__  # type: ignore[attr-defined]
_set_end = Span.end.__set__  # type: ignore[attr-defined]


class Attr:
    """An attribute: its name and decoded value, with the spans of both (built on first use:
    most attributes are read, few are ever underlined)."""

    __slots__ = ("name", "value", "name_start", "value_start", "value_end", "quoted")

    def __init__(self, name: str, value: str, name_start: int, value_start: int = -1, value_end: int = -1,
                 quoted: bool = True) -> None:
        self.name = name
        self.value = value  # decoded value ('' when the value is missing)
        self.name_start = name_start
        self.value_start = value_start  # inside the quotes; -1 when there is no value at all
        self.value_end = value_end
        self.quoted = quoted  # False when the closing quote is missing

    @property
    def name_span(self) -> Span:
        return Span(self.name_start, self.name_start + len(self.name))

    @property
    def value_span(self) -> Span | None:
        return Span(self.value_start, self.value_end) if self.value_start >= 0 else None

    def __repr__(self) -> str:
        return f"Attr({self.name!r}, {self.value!r})"


class TextPiece:
    """A run of character data: the raw source (for CDATA: the content inside <![CDATA[ ... ]]>)
    and its decoded value (entities and character references resolved)."""

    __slots__ = ("start", "raw", "cdata", "_value")

    def __init__(self, start: int, raw: str, cdata: bool = False) -> None:
        self.start = start
        self.raw = raw
        self.cdata = cdata
        self._value: str | None = None

    @property
    def span(self) -> Span:
        return Span(self.start, self.start + len(self.raw))

    @property
    def value(self) -> str:
        value = self._value
        if value is None:
            value = self._value = (self.raw.replace("\r\n", "\n").replace("\r", "\n") if self.cdata
                                   else decode_entities(self.raw))
        return value

    def __repr__(self) -> str:
        return f"TextPiece({self.start}, {self.raw!r})"


class Element:
    """An element with the offsets of its parts; spans are built from them on demand."""

    __slots__ = ("tag", "start", "start_tag_end", "end_tag_start", "end_tag_end", "end", "parent_ref",
                 "attrs", "children", "text_pieces", "self_closing", "closed", "start_tag_complete", "level",
                 "__weakref__")

    def __init__(self, tag: str, start: int, start_tag_end: int, parent_ref: weakref.ReferenceType[Element] | None,
                 attrs: list[Attr], level: int) -> None:
        self.tag = tag
        self.start = start  # offset of its '<'
        self.start_tag_end = start_tag_end
        self.end_tag_start = -1  # -1: no end tag
        self.end_tag_end = -1
        self.end = -1  # end offset of the whole element
        # the parent is held weakly (the tree holds its children): a Document has no reference
        # cycles, so an old one is freed as soon as the last reference goes, not by the cyclic GC
        # (whose full collections over discarded 2,000-line documents were the editing p95)
        self.parent_ref = parent_ref
        self.attrs = attrs
        self.children: list[Element] = []
        self.text_pieces: list[TextPiece] = []
        self.self_closing = False
        self.closed = False  # the element was properly ended (self-closing or matching end tag)
        self.start_tag_complete = True  # the start tag reached its '>'
        self.level = level  # nesting depth (0 for a root), recorded while scanning

    @property
    def parent(self) -> Element | None:
        """The enclosing element (None for a root, or once its Document is gone)."""
        ref = self.parent_ref
        return ref() if ref is not None else None

    @property
    def name_span(self) -> Span:
        return Span(self.start + 1, self.start + 1 + len(self.tag))

    @property
    def start_tag(self) -> Span:
        return Span(self.start, self.start_tag_end)

    @property
    def end_tag(self) -> Span | None:
        return Span(self.end_tag_start, self.end_tag_end) if self.end_tag_start >= 0 else None

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)

    @property
    def content(self) -> Span | None:
        """What lies between the start tag and the end tag (None for a self-closing element)."""
        if self.self_closing or not self.start_tag_complete:
            return None
        end = self.end_tag_start if self.end_tag_start >= 0 else self.end
        return Span(self.start_tag_end, end)

    @property
    def text(self) -> str:
        """The element's own decoded text, without comments and without its children's text."""
        pieces = self.text_pieces
        if len(pieces) == 1:  # the common case: one run of text
            return pieces[0].value
        return "".join(piece.value for piece in pieces)

    @property
    def has_text(self) -> bool:
        # white space decodes to white space: only a run with something else in it is decoded
        return any(piece.raw.strip() and piece.value.strip() for piece in self.text_pieces)

    def attr(self, name: str) -> Attr | None:
        for attribute in self.attrs:
            if attribute.name == name:
                return attribute
        return None

    def get(self, name: str, default: str | None = None) -> str | None:
        attribute = self.attr(name)
        return attribute.value if attribute is not None else default

    def child(self, tag: str) -> Element | None:
        for element in self.children:
            if element.tag == tag:
                return element
        return None

    def children_named(self, tag: str) -> list[Element]:
        return [element for element in self.children if element.tag == tag]

    def iter(self) -> Iterator[Element]:
        """This element and all its descendants, in document order."""
        stack = [self]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(element.children))

    def ancestors(self) -> Iterator[Element]:
        element = self.parent
        while element is not None:
            yield element
            element = element.parent

    @property
    def path(self) -> tuple[str, ...]:
        """Tag names from the root down to this element (what the schema model is queried by)."""
        tags = [self.tag]
        tags.extend(a.tag for a in self.ancestors())
        return tuple(reversed(tags))

    @property
    def depth(self) -> int:
        return self.level

    def __repr__(self) -> str:
        return f"<Element {self.tag} @{self.start}>"


@dataclass(frozen=True, slots=True)
class ScanProblem:
    """A well-formedness problem the scanner itself recognised, with the span to underline."""

    kind: str  # unclosed | mismatched | stray_end | unterminated | several_roots | text_outside | doctype
    span: Span
    message: str
    related: Element | None = None  # the unclosed start tag, for related information


@dataclass(frozen=True, slots=True)
class Location:
    """What is under an offset: which element, and which part of it."""

    kind: str  # tag_name | attr_name | attr_value | start_tag | content | end_tag | outside
    element: Element | None
    attr: Attr | None = None


NAME_START = r"A-Za-z_:\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD"
NAME_RE = re.compile(rf"[{NAME_START}][{NAME_START}\-.0-9\u00B7\u0300-\u036F\u203F-\u2040]*")
# attribute names are read leniently: anything up to a delimiter, so a typo still gets a span
ATTR_NAME_RE = re.compile(r"[^\s=/<>\"']+")
SPACE_RE = re.compile(r"[ \t\r\n]*")
# the fast path for a complete start tag (see _Scanner.start_tag_fast); anything else takes the
# general path, which reports problems and recovers
_ATTR_FAST = r"""([^\s=/<>"']+)[ \t\r\n]*=[ \t\r\n]*(?:"([^"<]*)"|'([^'<]*)')"""
ATTR_FAST_RE = re.compile(_ATTR_FAST)
START_TAG_RE = re.compile(
    rf"<({NAME_RE.pattern})((?:[ \t\r\n]+{_ATTR_FAST.replace('(', '(?:').replace('(?:?:', '(?:')})*)[ \t\r\n]*(/?)>"
)
FAST_PATH = True
ENTITY_RE = re.compile(r"&(#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z_][A-Za-z0-9._-]*);")
PREDEFINED = {"lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": '"'}
# Deeper nesting than this is refused (TD001, safexml.py) before lxml sees it; the scanner notes
# the first element that deep, so nobody has to walk the tree to find it.
MAX_DEPTH = 200
LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
END_TAG_RE = re.compile(rf"</({NAME_RE.pattern})[ \t\r\n]*>")
UNQUOTED_VALUE_RE = re.compile(r"[^\s<>/]*")


def decode_entities(raw: str) -> str:
    """Resolve the predefined entities and character references; leave anything else as written.
    Line ends are normalised first, as XML 1.0 §2.11 does before parsing (CR LF and a lone CR
    become LF; a `&#13;` reference still gives CR): a CRLF file means what its LF twin means."""
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    if "&" not in raw:
        return raw

    def replace(match: re.Match[str]) -> str:
        ref = match.group(1)
        try:
            if ref.startswith("#x"):
                return chr(int(ref[2:], 16))
            if ref.startswith("#"):
                return chr(int(ref[1:]))
        except (ValueError, OverflowError):
            return match.group(0)
        return PREDEFINED.get(ref, match.group(0))

    return ENTITY_RE.sub(replace, raw)


class Document:
    """A parsed template: the text, the element tree and the scanner's problems."""

    def __init__(self, text: str):
        self.text = text
        self.roots: list[Element] = []
        self.comments: list[Span] = []
        self.cdata: list[Span] = []  # whole <![CDATA[...]]> sections
        self.problems: list[ScanProblem] = []
        self.doctype: Span | None = None
        self.too_deep: Element | None = None  # the first element nested MAX_DEPTH deep
        self._line_starts: list[int] | None = None

    @property
    def root(self) -> Element | None:
        return self.roots[0] if self.roots else None

    def iter(self) -> Iterator[Element]:
        for root in self.roots:
            yield from root.iter()

    # -- positions ---------------------------------------------------------------------------

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            starts.extend(m.end() for m in LINE_BREAK_RE.finditer(self.text))
            self._line_starts = starts
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """0-based (line, code-point column) of an offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line, offset - self.line_starts[line]

    def offset(self, line: int, column: int) -> int:
        """The offset of a 0-based (line, code-point column); clamped to the line and the text."""
        starts = self.line_starts
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        line_end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        # do not step past the line break into the next line
        content_end = line_end
        while content_end > start and self.text[content_end - 1] in "\r\n":
            content_end -= 1
        return min(start + max(column, 0), content_end)

    def line_text(self, line: int) -> str:
        start = self.offset(line, 0)
        end = self.line_starts[line + 1] if line + 1 < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    # -- queries -----------------------------------------------------------------------------

    def element_at(self, offset: int) -> Element | None:
        """The innermost element whose span holds the offset."""
        found = None
        candidates = self.roots
        while True:
            for element in candidates:
                if element.start <= offset <= element.end:
                    found = element
                    candidates = element.children
                    break
            else:
                return found

    def locate(self, offset: int) -> Location:
        element = self.element_at(offset)
        if element is None:
            return Location("outside", None)
        if element.start_tag.start <= offset <= element.start_tag.end and (
            offset < element.start_tag.end or not element.start_tag_complete
        ):
            if element.name_span.start <= offset <= element.name_span.end:
                return Location("tag_name", element)
            for attribute in element.attrs:
                if attribute.value_span is not None and attribute.value_span.start <= offset <= attribute.value_span.end:
                    return Location("attr_value", element, attribute)
                if attribute.name_span.start <= offset <= attribute.name_span.end:
                    return Location("attr_name", element, attribute)
            return Location("start_tag", element)
        if element.end_tag and element.end_tag.start <= offset <= element.end_tag.end:
            if offset == element.end_tag.start:
                return Location("content", element)
            return Location("end_tag", element)
        return Location("content", element)

    def find_by_xpath(self, path: str) -> Element | None:
        """Resolve a simple lxml/libxml2 error path such as ``/task/steps/task[2]/description``."""
        current: Element | None = None
        siblings = self.roots
        for step in path.strip("/").split("/"):
            match = re.fullmatch(r"([^\[\]]+)(?:\[(\d+)\])?", step)
            if not match:
                return None
            tag, index = match.group(1), int(match.group(2) or 1)
            same = [element for element in siblings if element.tag == tag]
            if len(same) < index:
                return None
            current = same[index - 1]
            siblings = current.children
        return current

    def in_comment(self, offset: int) -> bool:
        return any(span.start < offset < span.end for span in self.comments)


class _Scanner:
    """One pass over the text, building the tree with an explicit stack (no recursion)."""

    def __init__(self, text: str):
        self.text = text
        self.doc = Document(text)
        self.stack: list[Element] = []
        self.pos = 0

    def problem(self, kind: str, start: int, end: int, message: str, related: Element | None = None) -> None:
        self.doc.problems.append(ScanProblem(kind, Span(start, end), message, related))

    def run(self) -> Document:
        text, length = self.text, len(self.text)
        stack = self.stack
        pos = 0
        # The loop handles the common forms inline (a text run, a complete start tag with quoted
        # attributes, the end tag of the innermost element); anything else goes to a scan_*
        # method, which reports problems and recovers.
        while pos < length:
            lt = text.find("<", pos)
            if lt < 0:
                self.add_text(pos, length)
                break
            if lt > pos:
                if stack:
                    stack[-1].text_pieces.append(TextPiece(pos, text[pos:lt]))
                else:
                    self.add_text(pos, lt)
            following = text[lt + 1 : lt + 2]
            if following == "/":
                match = END_TAG_RE.match(text, lt)
                if match is not None and stack and stack[-1].tag == match.group(1):
                    element = stack.pop()
                    element.end_tag_start = lt
                    element.end_tag_end = element.end = pos = match.end()
                    element.closed = True
                    continue
                self.pos = lt
                self.scan_end_tag()
            elif following == "!" or following == "?":
                self.pos = lt
                if text.startswith("<!--", lt):
                    self.scan_comment()
                elif text.startswith("<![CDATA[", lt):
                    self.scan_cdata()
                elif following == "?":
                    self.scan_processing_instruction()
                else:
                    self.scan_declaration()
            else:
                match = START_TAG_RE.match(text, lt) if FAST_PATH else None
                if match is not None:
                    pos = self.start_tag_fast(match)
                    continue
                self.pos = lt
                self.scan_start_tag()
            pos = self.pos
        for element in reversed(stack):
            self.unclosed(element, length, fault=Span(length, length))
        stack.clear()
        return self.doc

    # -- text --------------------------------------------------------------------------------

    def add_text(self, start: int, end: int, cdata: bool = False) -> None:
        raw = self.text[start:end]
        if self.stack:
            self.stack[-1].text_pieces.append(TextPiece(start, raw, cdata))
        elif raw.strip():
            stripped = len(raw) - len(raw.lstrip())
            self.problem(
                "text_outside",
                start + stripped,
                start + len(raw.rstrip()),
                "text outside the root element: a template holds one root element and nothing else",
            )

    def scan_comment(self) -> None:
        start = self.pos
        close = self.text.find("-->", start + 4)
        if close < 0:
            self.problem("unterminated", start, start + 4, "comment is never closed: add '-->'")
            end = len(self.text)
        else:
            end = close + 3
            # XML forbids '--' inside a comment; point at it rather than at the comment's end
            double = self.text.find("--", start + 4, close)
            if double >= 0:
                self.problem("comment", double, double + 2, "'--' is not allowed inside a comment: write it differently (e.g. '- -')")
        self.doc.comments.append(Span(start, end))
        self.pos = end

    def scan_cdata(self) -> None:
        start = self.pos
        body = start + len("<![CDATA[")
        close = self.text.find("]]>", body)
        if close < 0:
            self.problem("unterminated", start, body, "CDATA section is never closed: add ']]>'")
            close, end = len(self.text), len(self.text)
        else:
            end = close + 3
        self.doc.cdata.append(Span(start, end))
        if self.stack:
            self.add_text(body, close, cdata=True)
        self.pos = end

    def scan_processing_instruction(self) -> None:
        close = self.text.find("?>", self.pos + 2)
        self.pos = len(self.text) if close < 0 else close + 2

    def scan_declaration(self) -> None:
        """<!DOCTYPE ...> (possibly with an internal subset) or another <!...> declaration."""
        start, text = self.pos, self.text
        depth, index = 0, start + 2
        while index < len(text):
            char = text[index]
            if char in "\"'":
                close = text.find(char, index + 1)
                index = len(text) if close < 0 else close + 1
                continue
            if char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
            elif char == ">" and depth <= 0:
                index += 1
                break
            index += 1
        end = min(index, len(text))
        if text.startswith("<!DOCTYPE", start):
            self.doc.doctype = Span(start, end)
            self.problem(
                "doctype",
                start,
                min(end, start + len("<!DOCTYPE")),
                "DOCTYPE declarations are not allowed in templates: remove it (entities and DTDs are never loaded)",
            )
        else:
            self.problem("unterminated", start, min(end, start + 2), "unexpected '<!' markup")
        self.pos = end

    # -- tags --------------------------------------------------------------------------------

    def scan_start_tag(self) -> None:
        """The general path: a start tag the fast pattern did not match (unfinished, unquoted
        or broken attributes, '<' inside a value, a lone '<')."""
        text, start = self.text, self.pos
        match = NAME_RE.match(text, start + 1)
        if not match:
            # a lone '<' (often mid-typing): treat it as text so the tree stays usable
            self.problem("unterminated", start, start + 1, "'<' must start a tag name; write '&lt;' for a literal '<'")
            self.add_text(start, start + 1)
            self.pos = start + 1
            return
        parent = self.stack[-1] if self.stack else None
        element = Element(match.group(0), start, match.end(), weakref.ref(parent) if parent is not None else None,
                          [], len(self.stack))
        if element.level == MAX_DEPTH and self.doc.too_deep is None:
            self.doc.too_deep = element
        self.pos = match.end()
        self.scan_attributes(element)
        if parent is not None:
            parent.children.append(element)
        else:
            self.add_root(element)
        if element.self_closing:
            element.closed = True
            element.end = element.start_tag_end
        elif not element.start_tag_complete and self.pos >= len(text):
            element.end = len(text)
            self.stack.append(element)
        else:
            self.stack.append(element)

    def add_root(self, element: Element) -> None:
        if self.doc.roots:
            self.problem(
                "several_roots",
                element.start + 1,
                element.start + 1 + len(element.tag),
                f"a template file holds exactly one root element; <{element.tag}> is a second one "
                "(put each in its own file, or wrap templates and tasks in <library>)",
            )
        self.doc.roots.append(element)

    def start_tag_fast(self, whole: re.Match[str]) -> int:
        """A complete start tag whose attribute values are all quoted, without '<' in them and
        separated by XML white space (almost every tag): one regex match, then the same tree
        as the general path builds. Returns the offset after the tag."""
        stack = self.stack
        parent = stack[-1] if stack else None
        if whole.end(2) > whole.start(2):
            attrs = []
            for a in ATTR_FAST_RE.finditer(self.text, whole.start(2), whole.end(2)):
                quote = 2 if a.start(2) >= 0 else 3
                value = a.group(quote)
                attrs.append(Attr(a.group(1), decode_entities(value) if "&" in value or "\r" in value else value, a.start(1),
                                  a.start(quote), a.end(quote)))
        else:
            attrs = []
        end = whole.end()
        level = len(stack)
        element = Element(whole.group(1), whole.start(), end, weakref.ref(parent) if parent is not None else None,
                          attrs, level)
        if level == MAX_DEPTH and self.doc.too_deep is None:
            self.doc.too_deep = element
        if parent is not None:
            parent.children.append(element)
        else:
            self.add_root(element)
        if whole.group(3):
            element.self_closing = True
            element.closed = True
            element.end = end
        else:
            stack.append(element)
        return end

    def scan_attributes(self, element: Element) -> None:
        text, length = self.text, len(self.text)
        while True:
            self.pos = SPACE_RE.match(text, self.pos).end()
            if self.pos >= length or text[self.pos] == "<":
                element.start_tag_complete = False
                element.start_tag_end = self.pos
                self.problem(
                    "unterminated",
                    element.start + 1,
                    element.start + 1 + len(element.tag),
                    f"start tag <{element.tag}> is not finished: add '>'",
                    element,
                )
                return
            char = text[self.pos]
            if char == ">":
                self.pos += 1
                element.start_tag_end = self.pos
                return
            if text.startswith("/>", self.pos):
                self.pos += 2
                element.self_closing = True
                element.start_tag_end = self.pos
                return
            name = ATTR_NAME_RE.match(text, self.pos)
            if not name:  # a stray '/', '=' or quote: skip it
                self.pos += 1
                continue
            self.pos = name.end()
            attribute = Attr(name.group(0), "", name.start())
            element.attrs.append(attribute)
            after = SPACE_RE.match(text, self.pos).end()
            if after < length and text[after] == "=":
                self.pos = SPACE_RE.match(text, after + 1).end()
                self.scan_attribute_value(attribute)

    def scan_attribute_value(self, attribute: Attr) -> None:
        text, pos = self.text, self.pos
        if pos >= len(text) or text[pos] not in "\"'":
            # unquoted value: read up to a delimiter so it still has a span
            match = UNQUOTED_VALUE_RE.match(text, pos)
            attribute.value_start, attribute.value_end = pos, match.end()
            attribute.value = decode_entities(match.group(0))
            attribute.quoted = False
            self.pos = match.end()
            return
        quote = text[pos]
        close = text.find(quote, pos + 1)
        angle = text.find("<", pos + 1)
        if close < 0 or (0 <= angle < close):
            # missing closing quote: stop at the end of the line so the rest of the file survives
            newline = text.find("\n", pos + 1)
            candidates = [c for c in (angle, newline, len(text)) if c >= 0]
            end = min(candidates)
            # a '>' on the same line most likely ends the tag
            gt = text.find(">", pos + 1, end)
            if gt >= 0:
                end = gt
            attribute.value_start, attribute.value_end = pos + 1, end
            attribute.value = decode_entities(text[pos + 1 : end])
            attribute.quoted = False
            self.pos = end
            return
        attribute.value_start, attribute.value_end = pos + 1, close
        attribute.value = decode_entities(text[pos + 1 : close])
        self.pos = close + 1

    def scan_end_tag(self) -> None:
        text, start = self.text, self.pos
        match = NAME_RE.match(text, start + 2)
        name = match.group(0) if match else ""
        after = SPACE_RE.match(text, match.end() if match else start + 2).end()
        if after < len(text) and text[after] == ">":
            end = after + 1
        else:
            end = after
            self.problem("unterminated", start, max(end, start + 2), f"end tag </{name}> is not finished: add '>'")
        self.pos = max(end, start + 2)
        span = Span(start, self.pos)
        # search from the innermost open element: O(1) for a matching end tag, so deep nesting stays linear
        if name and self.stack and self.stack[-1].tag == name:
            index = len(self.stack) - 1  # the usual case: the innermost element ends
        else:
            index = next((i for i in range(len(self.stack) - 1, -1, -1) if self.stack[i].tag == name), None) if name else None
        if index is not None:
            for element in reversed(self.stack[index + 1 :]):
                self.unclosed(element, start, fault=span, closing=name)
            element = self.stack[index]
            del self.stack[index:]
            element.end_tag_start, element.end_tag_end = span.start, span.end
            element.end = span.end
            element.closed = True
            return
        innermost = self.stack[-1] if self.stack else None
        if innermost is not None:
            self.problem(
                "mismatched",
                start,
                span.end,
                f"end tag </{name}> does not match the open element <{innermost.tag}>: "
                f"close it with </{innermost.tag}>",
                innermost,
            )
        else:
            self.problem("stray_end", start, span.end, f"end tag </{name}> has no matching start tag: remove it")

    def unclosed(self, element: Element, end: int, fault: Span, closing: str | None = None) -> None:
        """Record an element that was never closed; the fault is where its end tag was due."""
        element.end = end
        element.closed = False
        if closing:
            message = f"<{element.tag}> is not closed before </{closing}>: add </{element.tag}>"
        else:
            message = f"<{element.tag}> is never closed: the file ends first; add </{element.tag}>"
        self.problem("unclosed", fault.start, fault.end, message, element)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees) while a burst of
    long-lived objects is built: each young collection would otherwise walk them again, and the
    older ones the whole heap. Only for bulk work that keeps what it builds (a whole-workspace
    check): paused collections are made up slowly, so cyclic garbage (old Documents) piles up.
    Nested and concurrent uses leave it as the outermost found it."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


# The last few parses, newest first: the server parses a buffer for its features and the library
# indexes the same buffer right after; both get one Document. Documents are never mutated after
# the scan, so sharing one is safe. Large texts are not kept (memory).
_RECENT: list[tuple[str, Document]] = []
_RECENT_SIZE = 2  # the buffer just parsed, and the one before (a library file being indexed)
_RECENT_MAX_CHARS = 2_000_000


def parse(text: str) -> Document:
    """Scan a template into a Document. Never raises; broken input gives a partial tree."""
    global _RECENT
    recent = _RECENT  # a snapshot: another thread may rebind the list, never mutate it
    for cached_text, cached in recent:
        if cached_text is text or cached_text == text:
            return cached
    # Not under gc_paused: an editor re-parses on every edit and the old Document (a cyclic
    # structure: parent <-> children) is freed only by the cyclic GC. Pausing it here made
    # full collections so rare that a server typing into a 2,000-line file grew by ~1 MB per edit.
    document = _Scanner(text).run()
    if len(text) <= _RECENT_MAX_CHARS:
        _RECENT = [(text, document), *recent[: _RECENT_SIZE - 1]]
    return document
