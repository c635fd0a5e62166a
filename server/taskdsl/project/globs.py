"""Globs over '/'-separated relative paths (the `files` setting), matched in time linear in the path times
the pattern: a regex of `[^/]*a[^/]*a…b` backtracks exponentially in the number of stars, and a repository's
taskdsl.toml could hold the server and `taskdsl check` for minutes (12 stars, a 40-letter name: 228 s).

`*` is any characters but '/', `?` one such character, `[…]` a class (fnmatch's: `!` or `^` negates), `**/`
any folders or none, `**` anything, '/' included; `\\` escapes the next character."""

from __future__ import annotations

import re
from dataclasses import dataclass

_LITERAL, _ONE, _CLASS, _STAR, _OPTIONAL, _ANYTHING = range(6)

#: `.gitignore` and `exclude` lines go to pathspec, whose regexes backtrack the same way: a line with more
#: single `*` wildcards than this is not applied (see docs/configuration.md)
MAX_GITIGNORE_STARS = 2


@dataclass(frozen=True)
class Glob:
    pattern: str
    tokens: tuple

    def match(self, path: str) -> bool:
        """Whether the whole path matches (a simulation of the pattern's automaton: no backtracking)."""
        states = self._closure({0})
        for char in path:
            following = set()
            for i in states:
                if i == len(self.tokens):
                    continue
                kind, value = self.tokens[i]
                if kind == _STAR:
                    if char != "/":
                        following.add(i)
                elif kind == _ANYTHING:
                    following.add(i)
                elif kind == _OPTIONAL:  # consumes nothing: its closure went on
                    continue
                elif kind == _LITERAL:
                    if char == value:
                        following.add(i + 1)
                elif kind == _ONE:
                    if char != "/":
                        following.add(i + 1)
                elif char != "/" and (char in value[1]) != value[0]:  # _CLASS: (negated, characters)
                    following.add(i + 1)
            if not following:
                return False
            states = self._closure(following)
        return len(self.tokens) in states

    fullmatch = match

    def _closure(self, states: set) -> set:
        found, todo = set(states), list(states)
        while todo:
            i = todo.pop()
            if i >= len(self.tokens):
                continue
            kind, value = self.tokens[i]
            nexts = (i + 1,) if kind in (_STAR, _ANYTHING) else (i + 1, i + value) if kind == _OPTIONAL else ()
            for j in nexts:
                if j not in found:
                    found.add(j)
                    todo.append(j)
        return found


@dataclass(frozen=True)
class NameGlob:
    """`**/PRE*SUF` or `PRE*SUF` (the default `**/*.task.xml`): a test of the path's last name, which costs
    nothing per folder. The automaton walks every character of the path (a repository of 2,000 files in
    folders named with 250 characters each, 15 deep, held `taskdsl check` for a minute)."""
    pattern: str
    prefix: str
    suffix: str
    any_folder: bool

    def match(self, path: str) -> bool:
        slash = path.rfind("/")
        if slash >= 0 and not self.any_folder:
            return False
        name = path[slash + 1:]
        return len(name) >= len(self.prefix) + len(self.suffix) and name.startswith(self.prefix) \
            and name.endswith(self.suffix)

    fullmatch = match


_NAME_GLOB = re.compile(r"(\*\*/)?([^*?\[\\/]*)\*([^*?\[\\/]*)\Z")


def compile_glob(pattern: str) -> Glob | NameGlob:
    if named := _NAME_GLOB.match(pattern):
        return NameGlob(pattern, named.group(2), named.group(3), bool(named.group(1)))
    return _automaton(pattern)


def _automaton(pattern: str) -> Glob:
    tokens, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):  # (anything, then '/') or nothing
            tokens += [(_OPTIONAL, 3), (_ANYTHING, None), (_LITERAL, "/")]
            i += 3
        elif pattern.startswith("**", i):
            tokens.append((_ANYTHING, None))
            i += 2
        elif char == "*":
            if not tokens or tokens[-1][0] != _STAR:  # `***` is `*`… as is `**` inside a name: one star
                tokens.append((_STAR, None))
            i += 1
        elif char == "?":
            tokens.append((_ONE, None))
            i += 1
        elif char == "[" and (end := _class_end(pattern, i)) is not None:
            body = pattern[i + 1:end]
            negated = body[:1] in ("!", "^")
            tokens.append((_CLASS, (negated, _class_characters(body[1:] if negated else body))))
            i = end + 1
        elif char == "\\" and i + 1 < len(pattern):
            tokens.append((_LITERAL, pattern[i + 1]))
            i += 2
        else:
            tokens.append((_LITERAL, char))
            i += 1
    return Glob(pattern, tuple(tokens))


def _class_end(pattern: str, start: int) -> int | None:
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a ']' first is a member
        i += 1
    end = pattern.find("]", i)
    return None if end < 0 else end


def _class_characters(body: str) -> frozenset:
    found, i = set(), 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if ord(high) - ord(low) <= 0x10000:
                found.update(chr(c) for c in range(ord(low), ord(high) + 1))
            i += 3
        else:
            found.add(body[i])
            i += 1
    return frozenset(found)


def costly_gitignore_line(line: str) -> bool:
    """A .gitignore/exclude line whose regex (pathspec's) could backtrack exponentially: more wildcards within
    path segments than MAX_GITIGNORE_STARS. Each run of stars inside a segment counts once (pathspec reads `a**b`
    as `a*b`); a `**` that is a whole segment (`**/x`, `x/**`) matches folders and is not counted."""
    segments = line.strip().split("/")
    runs = sum(len(re.findall(r"\*+", segment)) for segment in segments if segment != "**")
    # whole-segment `**` backtrack too when chained (`**/a/**/a/…/**/b`): more than two of them, not applied
    return runs > MAX_GITIGNORE_STARS or segments.count("**") > MAX_GITIGNORE_STARS
