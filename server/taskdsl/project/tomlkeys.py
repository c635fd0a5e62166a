"""Where each key of a TOML text is written: tomllib gives values but no positions, and a
diagnostic about a config key must point at the key itself.

    places = key_places('[lint]\\nselect = ["TD3"]\\n')
    places[("lint", "select")]  # KeyPlace(key=Span(7, 13), value=Span(16, 23))

Keys are full paths: table headers (`[tool.taskdsl.lint]`), dotted keys (`lint.select = …`) and
the keys of inline tables (`globals = { a = "1" }`) all count. Every prefix of a path is recorded
(the header `[lint]` gives ("lint",) its place). The scanner is for valid TOML (tomllib has already
accepted the text); on anything else it stops early and returns what it found, never raising.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskdsl.language.document import Span

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SPACE = " \t"
MAX_NESTING = 64  # arrays and inline tables inside each other: deeper is not a config anyone writes


@dataclass(frozen=True)
class KeyPlace:
    key: Span  # the last segment of the key as written (quotes included)
    value: Span | None = None  # the value of a key/value pair; None for a table header


class _Stop(Exception):
    """Not TOML the scanner understands: keep what was found so far."""


class _Scanner:
    def __init__(self, text: str):
        self.text, self.i, self.depth = text, 0, 0
        self.places: dict[tuple[str, ...], KeyPlace] = {}

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.text[j] if j < len(self.text) else ""

    def skip_space(self, newlines: bool = False) -> None:
        """Spaces (and, inside arrays, line breaks and comments)."""
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in _SPACE or (newlines and c in "\r\n"):
                self.i += 1
            elif newlines and c == "#":
                self.skip_comment()
            else:
                return

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    # -- keys ------------------------------------------------------------------------------

    def key(self, prefix: tuple[str, ...], value: bool) -> tuple[tuple[str, ...], Span]:
        """A dotted key; records every segment's place under its path. Returns (path, last span)."""
        path = prefix
        while True:
            self.skip_space()
            start = self.i
            name = self.segment()
            span = Span(start, self.i)
            path = path + (name,)
            self.skip_space()
            if self.peek() == ".":
                self.places.setdefault(path, KeyPlace(span))
                self.i += 1
                continue
            if not value:
                self.places[path] = KeyPlace(span)
            return path, span

    def segment(self) -> str:
        c = self.peek()
        if c == '"':
            return self.basic_string()
        if c == "'":
            end = self.text.find("'", self.i + 1)
            if end < 0:
                raise _Stop
            name, self.i = self.text[self.i + 1 : end], end + 1
            return name
        start = self.i
        while self.peek() and self.peek() in _BARE:
            self.i += 1
        if self.i == start:
            raise _Stop
        return self.text[start : self.i]

    def basic_string(self) -> str:
        """A one-line "…" string (escapes kept as written: key names need no decoding here)."""
        j = self.i + 1
        text = self.text
        while j < len(text) and text[j] not in '"\n':
            j += 2 if text[j] == "\\" else 1
        if j >= len(text) or text[j] != '"':
            raise _Stop
        name, self.i = text[self.i + 1 : j], j + 1
        return name

    # -- values ----------------------------------------------------------------------------

    def value(self, path: tuple[str, ...]) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise _Stop
            self._value(path)
        finally:
            self.depth -= 1

    def _value(self, path: tuple[str, ...]) -> None:
        c = self.peek()
        if self.text.startswith('"""', self.i) or self.text.startswith("'''", self.i):
            quote = self.text[self.i : self.i + 3]
            j = self.i + 3
            while True:
                j = self.text.find(quote, j)
                if j < 0:
                    raise _Stop
                if quote == '"""' and _escaped(self.text, j):
                    j += 1
                    continue
                break
            while self.text.startswith(quote[0], j + 3):  # up to two quotes may close the content
                j += 1
            self.i = j + 3
        elif c == '"':
            self.basic_string()
        elif c == "'":
            self.segment()
        elif c == "[":
            self.i += 1
            while True:
                self.skip_space(newlines=True)
                if self.peek() == "]":
                    self.i += 1
                    return
                if not self.peek():
                    raise _Stop
                self.value(path)
                self.skip_space(newlines=True)
                if self.peek() == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self.skip_space()
                if self.peek() == "}":
                    self.i += 1
                    return
                self.pair(path)
                self.skip_space()
                if self.peek() == ",":
                    self.i += 1
                elif self.peek() != "}":
                    raise _Stop
        else:  # numbers, booleans, dates: up to the next delimiter
            start = self.i
            while self.peek() and self.peek() not in ",]}#\r\n":
                self.i += 1
            while self.i > start and self.text[self.i - 1] in _SPACE:
                self.i -= 1
            if self.i == start:
                raise _Stop

    def pair(self, prefix: tuple[str, ...]) -> None:
        path, key_span = self.key(prefix, value=True)
        self.skip_space()
        if self.peek() != "=":
            raise _Stop
        self.i += 1
        self.skip_space()
        start = self.i
        self.value(path)
        self.places[path] = KeyPlace(key_span, Span(start, self.i))

    # -- the document ----------------------------------------------------------------------

    def run(self) -> dict[tuple[str, ...], KeyPlace]:
        table: tuple[str, ...] = ()
        try:
            while True:
                self.skip_space(newlines=True)
                c = self.peek()
                if not c:
                    break
                if c == "[":
                    double = self.peek(1) == "["
                    self.i += 2 if double else 1
                    table, _ = self.key((), value=False)
                    self.skip_space()
                    if not self.text.startswith("]]" if double else "]", self.i):
                        raise _Stop
                    self.i += 2 if double else 1
                else:
                    self.pair(table)
                self.skip_space()
                if self.peek() == "#":
                    self.skip_comment()
        except _Stop:
            pass
        return self.places


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def key_places(text: str) -> dict[tuple[str, ...], KeyPlace]:
    """Key path → where its key (and value) is written in text."""
    return _Scanner(text).run()
