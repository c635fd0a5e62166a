"""`{{…}}` placeholders: a pure scanner shared by the checker (TD402/TD404) and the evaluator.

    {{name}}  {{name.field}}  {{name[0]}}  {{name["key"]}}     kind "var"
    {{fn(a, "lit", 3, true)}}                                  kind "call"
    anything else between {{ and }}, or a {{ never closed       kind "malformed"

Offsets are indices into the text given (add the text piece's start for document offsets).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_ACCESSOR = re.compile(rf"""\s*(?:\.\s*(?P<field>{IDENT})|\[\s*(?:(?P<index>-?\d+)|(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'))\s*\])""")
_NAME = re.compile(rf"\s*({IDENT})")
_IDENT = re.compile(IDENT)
_PLAIN_VAR = re.compile(rf"\s*({IDENT})\s*")  # {{name}}: what most placeholders are
_ARG = re.compile(rf"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<name>{IDENT}(?:\.{IDENT}|\[\d+\])*))\s*""")


@dataclass(frozen=True)
class Arg:
    """One argument of an inline call: a literal value, or a variable path to look up."""
    kind: str  # literal | var
    value: Any = None  # the literal's value
    name: str | None = None  # the variable's first name
    path: tuple = ()  # accessors after the name: str for .field/["key"], int for [0]
    text: str = ""
    offset: int = field(default=0, compare=False)  # where `text` starts in the scanned text (rename edits it)


@dataclass(frozen=True)
class Placeholder:
    start: int  # offset of '{{'
    end: int  # offset just past '}}' (or the end of the text when unclosed)
    expr_text: str  # the text between the braces, stripped
    kind: str  # var | call | malformed
    name: str | None = None  # variable or template name
    error: str | None = None  # why it is malformed
    path: tuple = ()  # var accessors: str for .field / ["key"], int for [0]
    args: tuple[Arg, ...] = field(default=())  # call arguments


_ESCAPE_OR_QUOTE = re.compile(r'\\.|"', re.DOTALL)


def _json_escape(m: re.Match) -> str:
    if m.group() == '"':
        return '\\"'  # a bare double quote (in a single-quoted literal)
    return "'" if m.group() == "\\'" else m.group()  # \' is a quote; json.loads judges the other escapes


def _unquote(token: str) -> str:
    "Either quote, one escape set: JSON's, and \\' for a single quote (as in the cond language)."
    body = _ESCAPE_OR_QUOTE.sub(_json_escape, token[1:-1])
    return json.loads('"' + body + '"')  # a ValueError for an invalid escape: parse_placeholder reports it


def _parse_path(text: str, pos: int) -> tuple[tuple, int]:
    path = []
    while m := _ACCESSOR.match(text, pos):
        if m.group("field") is not None:
            path.append(m.group("field"))
        elif m.group("index") is not None:
            path.append(int(m.group("index")))
        else:
            path.append(_unquote(m.group("key")))
        pos = m.end()
    return tuple(path), pos


def _parse_arg(text: str) -> Arg | None:
    m = _ARG.fullmatch(text)
    if not m:
        return None
    if m.group("str") is not None:
        return Arg("literal", _unquote(m.group("str")), text=text.strip())
    if m.group("num") is not None:
        num = m.group("num")
        return Arg("literal", float(num) if "." in num else int(num), text=num)
    word = m.group("name")
    if word in ("true", "false", "null"):
        return Arg("literal", {"true": True, "false": False, "null": None}[word], text=word)
    name = _IDENT.match(word).group()
    path, _ = _parse_path(word, len(name))
    return Arg("var", name=name, path=path, text=word)


def _split_args(text: str) -> list[str] | None:
    "Split on commas outside quotes; None when a quote is unbalanced."
    if '"' not in text and "'" not in text:
        return _split_result(text.split(","))
    parts, current, quote, escaped = [], [], None, False
    for ch in text:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quote:
        return None
    parts.append("".join(current))
    return _split_result(parts)


def _split_result(parts: list[str]) -> list[str]:
    return [] if parts == [""] or (len(parts) == 1 and not parts[0].strip()) else parts


_RAW_CONTROLS = (("\t", "\\t", "tab"), ("\n", "\\n", "line break"), ("\r", "\\r", "line break"))
_SHOWN = {char: escape for char, escape, _ in _RAW_CONTROLS}


def parse_placeholder(inner: str, start: int = 0, end: int = 0) -> Placeholder:
    """Classify the text between `{{` and `}}`."""
    expr = inner.strip()

    def bad(why: str) -> Placeholder:
        return Placeholder(start, end, expr, "malformed", error=why)

    try:
        return _classify(inner, expr, start, end, bad)
    except ValueError:  # json.loads of a quoted key or argument
        for char, escape, what in _RAW_CONTROLS:
            if char in expr:  # json.loads refuses it too, but it is no escape: say what it is
                shown = "".join(_SHOWN.get(c, c) for c in expr)
                return bad(f"a quoted string cannot hold a raw {what} in '{shown}': write {escape}")
        return bad(f"invalid escape in a quoted string of '{expr}': use \\\\, \\\", \\' or \\uXXXX")


def _classify(inner: str, expr: str, start: int, end: int, bad: Callable[[str], Placeholder]) -> Placeholder:

    if not expr:
        return bad("empty placeholder: write {{name}}")
    m = _NAME.match(inner)
    if not m:
        return bad(f"'{expr}' is not a variable name: names start with a letter or '_'")
    name = m.group(1)
    rest = inner[m.end():]
    if rest.lstrip().startswith("("):
        body = rest.strip()
        if not body.endswith(")"):
            return bad(f"call to '{name}' is missing its closing ')'")
        pieces = _split_args(body[1:-1])
        if pieces is None:
            return bad(f"unterminated string in the arguments of '{name}'")
        args = []
        # where the pieces start: the splitter keeps every character but the separating commas
        at = start + 2 + m.end() + (len(rest) - len(rest.lstrip())) + 1
        for piece in pieces:
            arg = _parse_arg(piece)
            if arg is None:
                return bad(f"argument '{piece.strip()}' of '{name}' must be a string, number, true/false/null or a variable")
            args.append(replace(arg, offset=at + len(piece) - len(piece.lstrip())))
            at += len(piece) + 1
        return Placeholder(start, end, expr, "call", name=name, args=tuple(args))
    path, pos = _parse_path(inner, m.end())
    if inner[pos:].strip():
        leftover = inner[pos:].strip()
        return bad(f"unexpected '{leftover}' after '{inner[:pos].strip()}': use {{{{name}}}}, {{{{name.field}}}} or {{{{name[0]}}}}")
    return Placeholder(start, end, expr, "var", name=name, path=path)


def find_placeholders(text: str) -> list[Placeholder]:
    """Every `{{…}}` in text, in order, with its offsets and classification."""
    if len(text) <= REMEMBERED_LENGTH:
        return list(_remembered(text))
    return _scan(text)


#: The placeholders of the last texts up to this long are remembered: the library index and the
#: rules scan the same texts, and an edited document is checked again with most texts unchanged.
REMEMBERED_LENGTH = 1000


@functools.lru_cache(maxsize=4096)
def _remembered(text: str) -> tuple[Placeholder, ...]:
    return tuple(_scan(text))


def _scan(text: str) -> list[Placeholder]:
    found, pos, close = [], 0, -1
    while (start := text.find("{{", pos)) != -1:
        if close < start + 2:  # else the '}}' found for an earlier, reopened '{{' is still the first one: the
            close = text.find("}}", start + 2)  # scan stays linear ("{{" * k + "} " * k: no search per '{{')
        reopened = text.find("{{", start + 2)
        if close == -1 or (reopened != -1 and reopened < close):
            stop = len(text) if close == -1 else reopened
            found.append(Placeholder(start, stop, text[start + 2:stop].strip(), "malformed",
                                     error="'{{' is never closed: add '}}'"))
            pos = stop
            continue
        inner = text[start + 2:close]
        plain = _PLAIN_VAR.fullmatch(inner)
        if plain is not None:  # what parse_placeholder would say, without its general parse
            found.append(Placeholder(start, close + 2, plain.group(1), "var", name=plain.group(1)))
        else:
            found.append(parse_placeholder(inner, start, close + 2))
        pos = close + 2
    return found


def render(text: str, value_of: Callable[[Placeholder], str]) -> str:
    """Replace every placeholder with value_of(placeholder); value_of raises for malformed ones."""
    out, pos = [], 0
    for ph in find_placeholders(text):
        out.append(text[pos:ph.start])
        out.append(value_of(ph))
        pos = ph.end
    out.append(text[pos:])
    return "".join(out)
