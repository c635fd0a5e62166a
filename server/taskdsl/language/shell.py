"""`{{…}}` in shell commands: where each placeholder sits in the shell's quoting, and the one safe
way to substitute it there. The checker (TD801), the runner and the editor's run plan ask here.

A value is never pasted into the command. Each placeholder becomes a reference to an environment
variable that holds the value (TASKDSL_SUB_<n>), written in the form its quoting context needs:

    bare        echo {{x}}            → echo "${TASKDSL_SUB_1}"
    "…"         echo "a {{x}}"        → echo "a ${TASKDSL_SUB_1}"
    here-doc    cat <<EOF …{{x}}…     → …${TASKDSL_SUB_1}…
    `…`, $(…)   the context inside them, recursively; a comment takes the bare form

The shell expands a parameter once and never parses the result again, so the value reaches the
command byte for byte, whatever it holds. Where no reference expands (inside '…', a here-document
with a quoted delimiter or its delimiter word, right after a backslash or a `$`, inside ${…} or
$((…))), the placeholder is unsafe: the checker reports TD801 and the runner refuses.

The lexer is small on purpose: it follows quotes, escapes, `$(…)`, backticks, `${…}`, `$((…))`,
comments and here-documents as POSIX sh reads them. A placeholder is opaque to it (the shell
never sees the placeholder's own text), and anything it cannot place is unsafe.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from taskdsl.language.templating import Placeholder, find_placeholders

SUB_PREFIX = "TASKDSL_SUB_"
INPUT_PREFIX = "TASKDSL_INPUT_"
UNSAFE_CODE = "TD801"

#: context → the reference written there (%s: the variable's name)
FORMS = {"bare": '"${%s}"', "comment": '"${%s}"', "double": "${%s}", "heredoc": "${%s}"}

#: unsafe context → where it is, and how to write it safely (%s: the placeholder as written)
WHERE = {
    "single": ("inside '…', where nothing is expanded",
               "close the quotes around it: '…'%s'…'"),
    "quoted_heredoc": ("inside a here-document whose delimiter is quoted, where nothing is expanded",
                       "unquote the delimiter (<<EOF), or read the value from $%s in the script"),
    "heredoc_word": ("in a here-document's delimiter", "write the delimiter as a fixed word"),
    "escaped": ("right after a backslash", "remove the backslash"),
    "dollar": ("right after '$'", "remove the '$' (the value is substituted as it is)"),
    "parameter": ("inside ${…}", "move it out of ${…}: ${NAME:-…} cannot hold a substituted value"),
    "arithmetic": ("inside $((…))", "pass the number as an input and compute with $%s"),
    "unparsed": ("where the shell's quoting cannot be followed", "write it as a separate word: … {{x}} …"),
}

_METACHARS = frozenset(" \t\n;&|()<>")


@dataclass(frozen=True)
class Site:
    """One placeholder of a command and the quoting context it sits in."""
    placeholder: Placeholder
    context: str  # a key of FORMS (safe) or of WHERE (unsafe)

    @property
    def safe(self) -> bool:
        return self.context in FORMS


def sites(command: str) -> tuple[Site, ...]:
    """Every placeholder of command with its context, in text order."""
    return _sites(command)


def unsafe_sites(command: str) -> list[Site]:
    return [site for site in sites(command) if not site.safe]


def env_name(placeholder: Placeholder) -> str | None:
    """TASKDSL_INPUT_<NAME> when the placeholder is a plain {{name}} (the runner exports it)."""
    if placeholder.kind == "var" and not placeholder.path and placeholder.name:
        return INPUT_PREFIX + placeholder.name.upper()
    return None


def unsafe_message(site: Site) -> str:
    """What TD801 and the runner's refusal say: where the placeholder is and the safe way to write it."""
    shown = f"{{{{{site.placeholder.expr_text}}}}}"
    where, how = WHERE[site.context]
    if "%s" in how:
        how = how % (shown if site.context == "single" else env_name(site.placeholder) or f"{INPUT_PREFIX}<NAME>")
    return f"{shown} is {where}: no value can be substituted there safely; {how}"


@dataclass(frozen=True)
class RenderedCommand:
    """The exact script a step runs: text for /bin/sh -c, and the variables that carry the values."""
    text: str
    env: dict

    def shown(self) -> str:
        """The command as a user could type it to run the same thing (the editor's consent shows it)."""
        assignments = "".join(f"{name}={shlex.quote(value)} " for name, value in self.env.items())
        return f"{assignments}/bin/sh -c {shlex.quote(self.text)}"


class UnsafeCommand(ValueError):
    def __init__(self, site: Site):
        super().__init__(unsafe_message(site))
        self.site = site


def substitute(command: str, values: Sequence[str]) -> RenderedCommand:
    """command with its placeholders (values in text order) replaced by references to variables
    holding them. Raises UnsafeCommand for the first placeholder no reference can stand for."""
    found = sites(command)
    if len(values) != len(found):
        raise ValueError(f"{len(found)} placeholder(s) but {len(values)} value(s)")
    out, env, pos = [], {}, 0
    for number, (site, value) in enumerate(zip(found, values), 1):
        if not site.safe:
            raise UnsafeCommand(site)
        name = f"{SUB_PREFIX}{number}"
        out += [command[pos:site.placeholder.start], FORMS[site.context] % name]
        env[name] = value
        pos = site.placeholder.end
    return RenderedCommand("".join(out) + command[pos:], env)


def planned(command: str) -> RenderedCommand:
    """What a command will run before its values are known: each variable shown as the placeholder
    whose value it will hold (the editor's run question). Raises UnsafeCommand as substitute does."""
    return substitute(command, [f"{{{{{site.placeholder.expr_text}}}}}" for site in sites(command)])


# ---------------------------------------------------------------- the lexer

@lru_cache(maxsize=512)
def _sites(command: str) -> tuple[Site, ...]:
    placeholders = find_placeholders(command)
    if not placeholders:
        return ()
    lexer = _Lexer(command, placeholders)
    lexer.command(0)
    return tuple(Site(ph, lexer.context.get(ph.start, "unparsed")) for ph in placeholders)


class _Lexer:
    def __init__(self, text: str, placeholders: list[Placeholder]):
        self.text, self.n = text, len(text)
        self.at = {ph.start: ph for ph in placeholders}
        self.context: dict[int, str] = {}
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents: (delimiter, quoted, strip tabs)

    def mark(self, i: int, context: str) -> int:
        "Record the placeholder at i; the index just past it."
        self.context.setdefault(i, context)
        return self.at[i].end

    def command(self, i: int, stop: str | None = None) -> int:
        """A command list, until stop (')' of $(…), '`') at depth 0 or the end; index past stop."""
        text, depth, word_start = self.text, 0, True
        while i < self.n:
            if i in self.at:
                i, word_start = self.mark(i, "bare"), False
                continue
            c = text[i]
            if c == "\\":
                i = self.mark(i + 1, "escaped") if i + 1 in self.at else i + 2
                word_start = False
                continue
            if c == stop == "`":
                return i + 1
            if c == "'":
                i, word_start = self.single(i + 1), False
            elif c == '"':
                i, word_start = self.double(i + 1), False
            elif c == "`":
                i, word_start = self.command(i + 1, "`"), False
            elif c == "$":
                i, word_start = self.dollar(i), False
            elif c == "#" and word_start:
                i = self.comment(i)
            elif text.startswith("<<<", i):
                i, word_start = i + 3, True
            elif text.startswith("<<", i):
                i, word_start = self.heredoc_operator(i + 2), False
            elif c == "\n" and self.pending:
                i, word_start = self.heredoc_bodies(i + 1), True
            else:
                if c == "(":
                    depth += 1
                elif c == ")":
                    if stop == ")" and depth == 0:
                        return i + 1
                    depth = max(depth - 1, 0)
                word_start = c in _METACHARS
                i += 1
        return self.n

    def single(self, i: int, context: str = "single") -> int:
        """Inside '…' from i; index past the closing quote."""
        while i < self.n:
            if i in self.at:
                i = self.mark(i, context)
            elif self.text[i] == "'":
                return i + 1
            else:
                i += 1
        return self.n

    def double(self, i: int, context: str = "double", end: int | None = None) -> int:
        """Inside "…" (or a here-document body up to end, where '"' is plain); index past it."""
        text, end = self.text, self.n if end is None else end
        while i < end:
            if i in self.at:
                i = self.mark(i, context)
                continue
            c = text[i]
            if c == "\\":
                i = self.mark(i + 1, "escaped") if i + 1 in self.at else i + 2
            elif c == '"' and context == "double":
                return i + 1
            elif c == "`":
                i = self.command(i + 1, "`")
            elif c == "$":
                i = self.dollar(i)
            else:
                i += 1
        return end

    def dollar(self, i: int) -> int:
        """At a '$': $(…), $((…)), ${…}, $'…' or a plain parameter; index past what it starts."""
        text, after = self.text, i + 1
        if after in self.at:
            return self.mark(after, "dollar")
        if text.startswith("((", after):
            return self.balanced(after + 2, "(", ")", 2, "arithmetic")
        if text.startswith("(", after):
            return self.command(after + 1, ")")
        if text.startswith("{", after):
            return self.balanced(after + 1, "{", "}", 1, "parameter")
        if text.startswith("'", after):
            return self.single(after + 1)
        return after

    def balanced(self, i: int, open_: str, close: str, depth: int, context: str) -> int:
        """Until depth closing brackets (placeholders inside are in context); index past them."""
        while i < self.n:
            if i in self.at:
                i = self.mark(i, context)
                continue
            c = self.text[i]
            if c == "\\":
                i += 2
                continue
            depth += (c == open_) - (c == close)
            i += 1
            if depth == 0:
                return i
        return self.n

    def comment(self, i: int) -> int:
        end = self.text.find("\n", i)
        end = self.n if end == -1 else end
        for start in [s for s in self.at if i <= s < end]:
            self.mark(start, "comment")
        return end

    def heredoc_operator(self, i: int) -> int:
        """After '<<': read [-] and the delimiter word; its body starts at the next line."""
        text = self.text
        strip = text.startswith("-", i)
        i += strip
        while i < self.n and text[i] in " \t":
            i += 1
        word, quoted = [], False
        while i < self.n and text[i] not in _METACHARS:
            if i in self.at:
                i, quoted = self.mark(i, "heredoc_word"), True
                continue
            c = text[i]
            if c in "'\"":
                close = text.find(c, i + 1)
                close = self.n if close == -1 else close
                word.append(text[i + 1:close])
                i, quoted = close + 1, True
            elif c == "\\":
                word.append(text[i + 1:i + 2])
                i, quoted = i + 2, True
            else:
                word.append(c)
                i += 1
        if word or quoted:
            self.pending.append(("".join(word), quoted, strip))
        return i

    def heredoc_bodies(self, i: int) -> int:
        """The bodies of the pending here-documents, from i; index past the last delimiter line."""
        pending, self.pending = self.pending, []
        for delimiter, quoted, strip in pending:
            start, pos, body_end = i, i, self.n
            while pos < self.n:
                line_end = self.text.find("\n", pos)
                line_end = self.n if line_end == -1 else line_end
                line = self.text[pos:line_end]
                if (line.lstrip("\t") if strip else line) == delimiter:
                    body_end, i = pos, min(line_end + 1, self.n)
                    break
                pos = line_end + 1
            else:
                i = self.n
            if quoted:
                for s in [s for s in self.at if start <= s < body_end]:
                    self.mark(s, "quoted_heredoc")
            else:
                self.double(start, "heredoc", body_end)
        return i
