"""`{{…}}` in shell commands: where each placeholder sits in the shell's grammar, and the one safe
way to substitute it there. The checker (TD801, TD803, TD804, TD805), the runner and the editor's
run plan ask here, and nowhere else.

A value is never pasted into the command. Each placeholder becomes a reference to an environment
variable that holds the value (TASKDSL_SUB_<n>), written in the form its context needs:

    a word      echo {{x}}            → echo "${TASKDSL_SUB_1}"
    "…"         echo "a {{x}}"        → echo "a ${TASKDSL_SUB_1}"
    here-doc    cat <<EOF …{{x}}…     → …${TASKDSL_SUB_1}…
    comment     # {{x}}               → # "${TASKDSL_SUB_1}" (never run)

The command, with every reference written in, is parsed with tree-sitter-bash (the grammar editors
and GitHub use). A placeholder is substituted only where the syntax tree positively places its
reference as a `${…}` expansion directly inside a double-quoted string that is a whole word of a
simple command, a redirection target, an assignment's value, a `for` list item or a `case` subject,
or directly inside the body of a here-document whose delimiter is unquoted, or inside a comment.
Anywhere else (the parser's error nodes, '…', ${…} operands, arithmetic in any form, subscripts,
`[[ … ]]` operators other than string comparison, names given to `let`, `unset`, `read`, …) it is
TD801, and the runner refuses. A command the grammar cannot parse is TD804.

The shell expands such a reference exactly once and never parses the result again, so the value
reaches the program byte for byte, as one word. Programs that parse their arguments again (`eval`,
`sh -c`, `ssh HOST`, `python -c`, `awk` programs, a shell reading a pipe or a here-document, …)
would turn the value back into code: TD803. What each program does with its words is one table,
PROGRAMS (which options take a value, which values and operands are code, where a wrapped command
starts, whether it runs its standard input), read by one scanner (_scan) once per simple command;
wrappers are peeled by the same scanner, and a program named at run time fails closed. A value in
option position of a program whose options run commands (Program.exec_options) is TD805 as an
error; of one whose options write files (OPTION_PROGRAMS), TD805 as a warning; both with a fix
inserting `--`. Each analysis is linear in the command's length and its placeholders, but for a wrapper
option the table does not know, whose command is read from two places (at most WRAPPER_ALTERNATIVES deep).
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

from taskdsl.language.templating import Placeholder, find_placeholders

SUB_PREFIX = "TASKDSL_SUB_"
INPUT_PREFIX = "TASKDSL_INPUT_"
UNSAFE_CODE = "TD801"
REPARSE_CODE = "TD803"
PARSE_ERROR_CODE = "TD804"
OPTION_CODE = "TD805"

#: context → the reference written there (%s: the variable's name)
FORMS = {"bare": '"${%s}"', "comment": '"${%s}"', "double": "${%s}", "heredoc": "${%s}"}

#: unsafe context → where it is, and how to write it safely (%s: the placeholder as written)
WHERE = {
    "single": ("inside '…', where nothing is expanded",
               "read the value from the environment variable $%s instead (awk: ENVIRON[\"…\"], or \"$…\" "
               "outside the quotes)"),
    "backtick": ("inside `…` (old-style command substitution), where the shell processes backslashes before "
                 "it parses the text", "use $(…) instead of backticks"),
    "descriptor": ("after >& or <&, where the shell reads a file descriptor", "redirect to a file with > or <"),
    "quoted_heredoc": ("inside a here-document whose delimiter is quoted, where nothing is expanded",
                       "unquote the delimiter (<<EOF), or read the value from $%s in the script"),
    "heredoc_word": ("in a here-document's delimiter", "write the delimiter as a fixed word"),
    "escaped": ("right after a backslash", "remove the backslash"),
    "dollar": ("right after '$'", "remove the '$' (the value is substituted as it is)"),
    "parameter": ("inside ${…}", "move it out of ${…}: ${NAME:-…} cannot hold a substituted value"),
    "arithmetic": ("in arithmetic ($((…)), ((…)), let, [[ … -eq … ]], declare -i, a subscript), where bash "
                   "evaluates a value as an expression", "compare or compute in a program that reads the value "
                   "as data (e.g. test \"$%s\" -gt 3 with [ ], or awk -v n=…)"),
    "name": ("where the shell reads a variable name (let, unset, read, declare, printf -v, …)",
             "use a fixed name and pass the value as data"),
    "unparsed": ("where the shell grammar does not place it as one word",
                 "write it as a separate word or inside \"…\": … {{x}} … or \"… {{x}} …\""),
    "parse_error": ("in a command the shell grammar cannot parse (TD804)", "fix the command's syntax first"),
    "reparse": ("in text that %s parses again as code", "pass it as a positional argument: "
                "sh -c '… \"$1\"' _ %s"),
}

#: an option that runs a command, shown in TD805's message
EXAMPLES = {"tar": "--to-command=…", "env": "-S …", "find": "-exec …", "xargs": "-I… sh -c", "git": "--upload-pack=…",
            "ssh": "-oProxyCommand=…", "scp": "-S …", "sftp": "-S …", "rsync": "--rsh=…", "zip": "--unzip-command=…",
            "sort": "--compress-program=…", "man": "--pager=…", "tcpdump": "-z …", "make": "--eval=…", "rg": "--pre=…", "npx": "--call=…", "vim": "+!…",
            "wget": "--use-askpass=…", "sed": "--expression=…e", "perl": "-e…", "python": "-c…", "python3": "-c…",
            "awk": "--source=…", "gawk": "--source=…", "node": "--eval=…", "ruby": "-e…", "php": "-r…"}

#: TD801 contexts that have a code of their own
CODES = {"reparse": REPARSE_CODE, "parse_error": PARSE_ERROR_CODE, "option": OPTION_CODE}

#: Programs whose options can run commands or write files (TD805). Sources: GTFOBins
#: (https://gtfobins.github.io, "Command", "Shell", "File write") and SonarSource's argument
#: injection vectors (https://sonarsource.github.io/argument-injection-vectors/).
OPTION_PROGRAMS = frozenset("""
    env tar find xargs git rsync ssh scp sftp curl wget zip unzip 7z 7za sed sort awk gawk mawk nawk
    cp mv ln install tee man less vim vi nvim emacs psql mysql sqlite3 docker kubectl npm npx pip pip3
    gzip bzip2 xz split tcpdump openssl gpg ffmpeg nmap chown chmod sudo nice timeout nohup stdbuf
    sh bash dash zsh ksh python python3 perl ruby node php lua busybox hg svn make ssh-keygen
""".split())



@dataclass(frozen=True)
class Site:
    """One placeholder of a command and the context it sits in."""
    placeholder: Placeholder
    context: str  # a key of FORMS (safe) or of WHERE (unsafe)
    program: str | None = None  # TD803: the program that parses the value again; TD805: whose option
    option_at: int | None = None  # TD805: where `-- ` goes (an offset in the command's text)
    fix: tuple = field(default=(), compare=False)  # TD803: ((start, end, new text), …) in the command's text

    @property
    def safe(self) -> bool:
        return self.context in FORMS

    @property
    def code(self) -> str | None:
        return None if self.safe else CODES.get(self.context, UNSAFE_CODE)


def sites(command: str) -> tuple[Site, ...]:
    """Every placeholder of command with its context, in text order."""
    return _analysis(command)[0]


def unsafe_sites(command: str) -> list[Site]:
    return [site for site in sites(command) if not site.safe]


def parse_error(command: str) -> tuple[int, int] | None:
    """Where the grammar first fails to parse command (offsets in its text), or None."""
    return _analysis(command)[1]


#: why a command is TD804 (besides a syntax error) → what the diagnostic says
PROBLEMS = {
    "control": "the command holds a control character ({char}) that shells read differently (tree-sitter-bash "
               "reads it as a blank, dash as part of a word): remove it",
    "ansi_c": "$'…' is bash-only syntax, and the runner runs /bin/sh (which may be dash, where it changes how "
              "the quotes pair up): write the text in '…' or \"…\" in a command that holds a {{…}}",
    "deep": "the command is too deeply nested to check: simplify it",
    "heredoc": "a here-document whose end line is not exactly its delimiter (a blank before or after it, or the "
               "delimiter met earlier): the shell and the checker's grammar end it in different places; write the "
               "delimiter alone on its line",
    "coproc": "coproc is bash-only syntax the checker's grammar does not model (coproc { sh; } reads as words): "
              "remove it from a command with a {{…}}",
    "descriptor": "a descriptor number written right before a redirection (sh 0<&0) is a word to the checker's "
                  "grammar and a descriptor to the shell: in a command with a {{…}}, write the redirection after a "
                  "blank-separated word or drop the number where it is the default",
    "heredoc_continuation": "a line continuation (\\ at the end of a line) in a command with a here-document whose "
                            "delimiter is unquoted: the shell joins the document's lines before it looks for the end line, so the document "
                            "may end elsewhere than the checker's grammar ends it; in a command with a {{…}}, quote "
                            "the delimiter (<<'EOF') or end no line of the document with \\",
    "continuation": "a line continuation (\\ at the end of a line) joins two parts of a word here, which the "
                    "checker's grammar reads as two words: in a command with a {{…}}, end a line with \\ only "
                    "after a blank",
}


def parse_problem(command: str) -> tuple[int, int, str | None] | None:
    """(start, end, message) of why command is TD804, or None; message None: a syntax error there."""
    _, error, reason = _analysis(command)
    if error is None:
        return None
    if reason == "control":
        char = command[error[0]]
        return error[0], error[1], PROBLEMS[reason].format(char=repr(char)[1:-1])
    return error[0], error[1], PROBLEMS.get(reason)


def escape_controls(text: str) -> str:
    """text with every control character but TAB and LF written as an escape (\r, \x1b, …), for showing."""
    return "".join(repr(c)[1:-1] if (ord(c) < 32 and c not in "\t\n") or c == "\x7f" else c for c in text)


def env_name(placeholder: Placeholder) -> str | None:
    """TASKDSL_INPUT_<NAME> when the placeholder is a plain {{name}} (the runner exports it)."""
    if placeholder.kind == "var" and not placeholder.path and placeholder.name:
        return INPUT_PREFIX + placeholder.name.upper()
    return None


def unsafe_message(site: Site) -> str:
    """What TD801/TD803/TD804 and the runner's refusal say: where the placeholder is, the safe way to write it."""
    if site.context == "option":
        return option_message(site)
    shown = f"{{{{{site.placeholder.expr_text}}}}}"
    where, how = WHERE[site.context]
    if site.context == "reparse" and site.program.startswith("what reads $"):
        name = site.program[len("what reads $"):]
        return (f"{shown} is the value of ${name}, which the shell or a program reads as code (expanded, run or "
                f"loaded): the value would become code; pass it in a variable of another name")
    if site.context == "reparse" and site.program == "alias":
        return (f"{shown} is in a command that defines an alias, and sh expands aliases in scripts: a command "
                f"name there may stand for a program that runs the value as code (alias s=sh; s -c {shown}); "
                f"the value would become code; remove the alias and name the program")
    if site.context == "reparse" and _named_at_run_time(site.program):
        return (f"{shown} is an argument of a program named at run time (`{site.program}`): the checker cannot "
                f"tell whether it parses the value again as code; name the program in the command (e.g. sh -c "
                f"'… \"$1\"' _ {shown}), or pass the value through $"
                f"{env_name(site.placeholder) or INPUT_PREFIX + '<NAME>'}")
    if site.context == "reparse":
        where = where % f"`{site.program}`"
        variable = env_name(site.placeholder) or INPUT_PREFIX + "<NAME>"
        if site.program in SEDS:
            how = (f"GNU sed runs shell commands from its script (the e command and flag); pass the value "
                   f"through a file, or use awk with ENVIRON[\"{variable}\"]")
            return f"{shown} is {where}: the value would become code; {how}"
        how = how % shown if site.program in SHELLS | {"xargs", "find"} else (
            f"pass it as an argument after the code and read it there (sys.argv, ARGV, process.argv, awk -v), "
            f"or from ${env_name(site.placeholder) or INPUT_PREFIX + '<NAME>'}")
        return f"{shown} is {where}: the value would become code; {how}"
    if "%s" in how:
        how = how % (env_name(site.placeholder) or f"{INPUT_PREFIX}<NAME>")
    return f"{shown} is {where}: no value can be substituted there safely; {how}"


def _named_at_run_time(program: str) -> bool:
    """program is shown as written because the command names it with an expansion ("$SHELL", {{…}}) or a
    pattern (/bin/[s]h)."""
    return any(c in program for c in "$`\"'{") or _globbed(program)


def _globbed(word: str) -> bool:
    """A command word holding pattern characters: the shell names the program by matching files (fail closed)."""
    return word not in ("[", "[[") and any(c in word for c in "[?*")


#: other names of a program in the table
ALIASES = {"nodejs": "node", "ex": "vim", "view": "vim", "rvim": "vim", "vimdiff": "vim", "gvim": "vim"}


def _program_name(word: str) -> str:
    """The table's name for the program a command word names: its file name, without a version suffix
    (python3.11, perl5.36.0, lua-5.4 → python, perl, lua) unless the table lists it as written."""
    name = os.path.basename(word)
    if name in PROGRAMS or name in OPTION_PROGRAMS or name in SEDS:
        return name
    name = ALIASES.get(name, name)
    stripped = re.sub(r"[-_.]?[0-9][0-9.]*$", "", name)
    if stripped and stripped != name and (stripped in PROGRAMS or stripped in OPTION_PROGRAMS or stripped in SEDS):
        return stripped
    # perl5.36-x86_64-linux-gnu, python3.12-dbg, bash-static, sh.distrib: an interpreter's name followed by a
    # version, platform or build suffix is that interpreter (fail closed)
    found = max((reader for reader in INTERPRETERS if name.startswith(reader) and len(name) > len(reader) and
                 name[len(reader)] in "-_.0123456789"), key=len, default=None)
    return found or name


def option_message(site: Site) -> str:
    shown = f"{{{{{site.placeholder.expr_text}}}}}"
    if site.context == "option":
        example = EXAMPLES.get(site.program) or ("-c …" if site.program in SHELLS else None)
        return (f"{shown} is where `{site.program}` reads a leading '-' as an option, and one of its options runs "
                f"a command{f' (e.g. {example})' if example else ''}: put -- before it")
    return (f"{shown} is where `{site.program}` reads a leading '-' as an option, and its options can run "
            f"commands or write files: a value such as --help or -o… would change what it does; put -- before it")


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
        self.code = site.code


def substitute(command: str, values: Sequence[str]) -> RenderedCommand:
    """command with its placeholders (values in text order) replaced by references to variables
    holding them. Raises UnsafeCommand for the first placeholder no reference can stand for."""
    found = sites(command)
    if len(values) != len(found):
        raise ValueError(f"{len(found)} placeholder(s) but {len(values)} value(s)")
    for site in found:
        if not site.safe:
            raise UnsafeCommand(site)
    text, _ = _render(command, [s.placeholder for s in found], [s.context for s in found])
    return RenderedCommand(text, {f"{SUB_PREFIX}{n}": value for n, value in enumerate(values, 1)})


def planned(command: str) -> RenderedCommand:
    """What a command will run before its values are known: each variable shown as the placeholder
    whose value it will hold (the editor's run question). Raises UnsafeCommand as substitute does."""
    return substitute(command, [f"{{{{{site.placeholder.expr_text}}}}}" for site in sites(command)])


# ---------------------------------------------------------------- the grammar

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def _render(command: str, placeholders: list[Placeholder], contexts: list[str]) -> tuple[str, list[tuple]]:
    """command with each placeholder written as its reference; and for each, where its `${…}` and its
    whole written form are."""
    out, spans, pos, length = [], [], 0, 0
    for number, (ph, context) in enumerate(zip(placeholders, contexts), 1):
        chunk = command[pos:ph.start]
        out.append(chunk)
        length += len(chunk)
        form = FORMS.get(context, "${%s}") % f"{SUB_PREFIX}{number}"
        inner = form.index("$")
        spans.append((length + inner, length + inner + len(f"{SUB_PREFIX}{number}") + 3, length, length + len(form)))
        out.append(form)
        length += len(form)
        pos = ph.end
    out.append(command[pos:])
    return "".join(out), _Starts(spans)


class _Tree:
    """A parsed text with character offsets (tree-sitter counts UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
        self.cache: dict = {}
        data = text.encode("utf-8", "surrogatepass")
        self.root = _parser().parse(data).root_node
        if len(data) == len(text):
            self.to_byte = self.to_char = None
        else:
            self.to_byte, self.to_char, b = [], {}, 0
            for i, ch in enumerate(text):
                self.to_byte.append(b)
                self.to_char[b] = i
                b += len(ch.encode("utf-8", "surrogatepass"))
            self.to_byte.append(b)
            self.to_char[b] = len(text)

    def byte(self, i: int) -> int:
        return i if self.to_byte is None else self.to_byte[i]

    def char(self, b: int) -> int:
        return b if self.to_char is None else self.to_char.get(b, 0)

    def at(self, start: int, end: int):
        return self.root.descendant_for_byte_range(self.byte(start), self.byte(end))

    def span(self, node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def source(self, node) -> str:
        a, b = self.span(node)
        return self.text[a:b]


@lru_cache(maxsize=512)
def _analysis(command: str) -> tuple[tuple[Site, ...], tuple[int, int] | None, str | None]:
    placeholders = find_placeholders(command)
    control = next((i for i, c in enumerate(command) if ord(c) < 32 and c not in "\t\n"), None)
    if control is not None:  # CR, ESC, NUL, …: tree-sitter-bash and dash disagree on them
        return tuple(Site(ph, "parse_error") for ph in placeholders), (control, control + 1), "control"
    try:
        return _analysis_of(command, placeholders)
    except RecursionError:  # fail closed: what cannot be followed cannot run
        return tuple(Site(ph, "parse_error") for ph in placeholders), (0, min(1, len(command))), "deep"


#: node types that nest one command in another; the analysis follows each level
_NESTING = frozenset("command_substitution process_substitution subshell compound_statement expansion "
                     "arithmetic_expansion".split())


def _problem(tree: _Tree, placeholders) -> tuple[int, int, str] | None:
    """The first node nested deeper than MAX_NESTING, or (with placeholders) the first $'…'."""
    stack = [(tree.root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.type in _NESTING:
            depth += 1
            if depth > MAX_NESTING:
                return (*tree.span(node), "deep")
        if placeholders and node.type == "ansi_c_string":
            return (*tree.span(node), "ansi_c")
        if placeholders and node.type == "command_name" and tree.source(node) == "coproc":
            return (*tree.span(node), "coproc")
        if placeholders and node.type in ("number", "word") and node.parent is not None and \
                node.parent.type == "command" and tree.source(node).isdigit() and \
                tree.text[tree.span(node)[1]:tree.span(node)[1] + 1] in ("<", ">"):
            return (*tree.span(node), "descriptor")
        if placeholders and node.type == "heredoc_redirect" and _heredoc_disagrees(tree, node):
            return (*tree.span(node), "heredoc")
        stack.extend((child, depth) for child in reversed(node.children))
    return _joins(tree) if placeholders else None


def _joins(tree: _Tree) -> tuple[int, int, str] | None:
    """The first line continuation (an odd run of backslashes before a line end, which the shell removes) after
    something other than a blank: there the shell joins what the grammar may read as two words. Inside '…', a
    comment or a quoted here-document the backslash is text."""
    text = tree.text
    at = text.find("\\\n")
    unquoted_heredoc = at >= 0 and "<<" in text and _has_unquoted_heredoc(tree)
    while at >= 0:
        run = at
        while run > 0 and text[run - 1] == "\\":
            run -= 1
        if (at - run) % 2 == 0:
            node = tree.at(at, at + 1)
            quoted, heredoc = False, False
            while node is not None and not quoted:
                quoted = node.type in ("raw_string", "comment") or (
                    node.type == "heredoc_body" and _landing_quoted(tree, node))
                heredoc |= unquoted_heredoc or node.type in ("heredoc_body", "heredoc_redirect")
                node = node.parent
            # in an unquoted here-document the shell joins the lines before it looks for the end line: any
            # continuation there may move where the document ends (fail closed)
            if not quoted and (heredoc or (run > 0 and text[run - 1] not in " \t\n")):
                return at, at + 2, "heredoc_continuation" if heredoc else "continuation"
        at = text.find("\\\n", at + 1)
    return None


def _has_unquoted_heredoc(tree: _Tree) -> bool:
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_start" and not any(q in tree.source(node) for q in "'\"\\"):
            return True
        stack.extend(node.children)
    return False


def _heredoc_disagrees(tree: _Tree, redirect) -> bool:
    """The grammar ends a here-document at a line that is not exactly its delimiter ("EOF " or " EOF"), or a
    line of its body is the delimiter: POSIX shells end it elsewhere than the tree says."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    end = next((c for c in redirect.children if c.type == "heredoc_end"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if start is None or end is None:
        return False  # unterminated: a parse error, reported as such
    delimiter = tree.source(start).replace("'", "").replace('"', "").replace("\\", "")
    strip = any(not c.is_named and tree.source(c) == "<<-" for c in redirect.children)
    a, b = tree.span(end)
    line_start = tree.text.rfind("\n", 0, a) + 1
    line_end = tree.text.find("\n", b)
    line = tree.text[line_start:len(tree.text) if line_end < 0 else line_end]
    if (line.lstrip("\t") if strip else line) != delimiter:
        return True
    if body is not None:
        lines = tree.source(body).split("\n")
        return any((text.lstrip("\t") if strip else text) == delimiter for text in lines[1:-1] or lines[:0])
    return False


def _landing_quoted(tree: _Tree, body) -> bool:
    redirect = body.parent
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None) if redirect else None
    return start is None or any(q in tree.source(start) for q in "'\"\\")


def _analysis_of(command: str, placeholders) -> tuple[tuple[Site, ...], tuple[int, int] | None, str | None]:
    probe_text, probe_spans = _render(command, placeholders, ["double"] * len(placeholders))
    probe = _Tree(probe_text)
    problem = _problem(probe, placeholders)
    if problem is not None:
        where = (_to_command(problem[0], placeholders, probe_spans, command),
                 _to_command(problem[1], placeholders, probe_spans, command))
        where = (where[0], max(where[1], where[0] + 1))
        return tuple(Site(ph, "parse_error") for ph in placeholders), where, problem[2]
    error = _first_error(probe) if (placeholders or "{{" not in command) else None
    if error is not None:
        error = (_to_command(error[0], placeholders, probe_spans, command),
                 _to_command(error[1], placeholders, probe_spans, command))
        while error[0] < len(command) - 1 and command[error[0]] in " \t\n":
            error = (error[0] + 1, max(error[1], error[0] + 2))
        if error[1] <= error[0]:
            error = (error[0], min(len(command), error[0] + 1))
    if not placeholders:
        return (), error, None
    if error is not None:
        return tuple(Site(ph, "parse_error") for ph in placeholders), error, None
    # first: where each reference lands when written as ${…}
    contexts = []
    for ph, (start, end, _, _) in zip(placeholders, probe_spans):
        contexts.append(_landing(probe, command, ph, start, end))
    # then: the text that runs, parsed again; every reference must be where the first parse put it
    final_text, final_spans = _render(command, placeholders, contexts)
    final = _Tree(final_text) if final_text != probe_text else probe
    if final.root.has_error:
        return tuple(Site(ph, "unparsed") for ph in placeholders), None, None
    result = []
    for ph, context, (start, end, _, _) in zip(placeholders, contexts, final_spans):
        if context not in FORMS:
            result.append(Site(ph, context))
            continue
        site = _judge(final, ph, context, start, end, command, placeholders, final_spans)
        if site.safe and site.context != "comment":
            hidden = _hidden_reader(final)
            if hidden:
                site = Site(ph, "reparse", hidden)
        result.append(site)
    return tuple(result), None, None


def _first_error(tree: _Tree) -> tuple[int, int] | None:
    if not tree.root.has_error:
        return None
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return tree.span(node)
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing or c.is_error]))
    return 0, len(tree.text)


def _to_command(offset: int, placeholders, spans, command: str) -> int:
    """An offset in a rendered text → the offset in the command as written (inside a reference: its placeholder).
    A binary search over the references (spans are in text order): linear in the number of placeholders overall."""
    k = bisect.bisect_right([span[2] for span in spans], offset) - 1 if not isinstance(spans, _Starts) else \
        bisect.bisect_right(spans.starts, offset) - 1
    if k < 0:
        return max(0, min(len(command), offset))
    ph, (_, _, form_start, form_end) = placeholders[k], spans[k]
    if offset < form_end:
        return ph.start
    return max(0, min(len(command), offset - (form_end - ph.end)))


class _Starts(list):
    """A rendered text's spans, with where each reference starts (for _to_command's binary search)."""

    def __init__(self, spans):
        super().__init__(spans)
        self.starts = [span[2] for span in spans]


def _landing(tree: _Tree, command: str, ph: Placeholder, start: int, end: int) -> str:
    """The context of a reference written as ${…} at start..end of tree's text."""
    before = command[ph.start - 1] if ph.start else ""
    if before == "\\":
        return "escaped"
    if before == "$":
        return "dollar"
    node = tree.at(start, end)
    if node is None:
        return "unparsed"
    if _in_backticks(tree, node):
        return "backtick"
    exact = node.type == "expansion" and tree.span(node) == (start, end) and node.named_child_count == 1 \
        and node.named_children[0].type == "variable_name"
    if not exact:
        kinds = [node.type]
        parent = node.parent
        while parent is not None:
            kinds.append(parent.type)
            parent = parent.parent
        if "comment" in kinds:
            return "comment"
        if "heredoc_start" in kinds or "heredoc_end" in kinds:
            return "heredoc_word"
        if "heredoc_body" in kinds:
            return "quoted_heredoc"
        if kinds[0] in ("raw_string", "ansi_c_string") or "raw_string" in kinds or "ansi_c_string" in kinds:
            return "single"
        if "expansion" in kinds:
            return "parameter"
        return "unparsed"
    parent = node.parent
    if parent.type == "string":
        return "double"
    if parent.type == "heredoc_body":
        redirect = parent.parent
        start_node = next((c for c in redirect.children if c.type == "heredoc_start"), None) if redirect else None
        word = tree.source(start_node) if start_node is not None else "'"
        if any(q in word for q in "'\"\\"):
            return "quoted_heredoc"
        return "backtick" if "`" in tree.source(parent) else "heredoc"
    return "bare"


def _in_backticks(tree: _Tree, node) -> bool:
    """node sits inside `…` (at any depth): the shell removes backslashes there before parsing, which the
    grammar does not model."""
    while node is not None:
        if node.type == "command_substitution" and tree.source(node).startswith("`"):
            return True
        node = node.parent
    return False


def _judge(tree: _Tree, ph, context, start, end, command, placeholders, spans) -> Site:
    """Hold a reference of the text that runs to the positive list of safe places."""
    node = tree.at(start, end)
    if node is not None and _in_backticks(tree, node):
        return Site(ph, "backtick")
    if node is None or node.type != "expansion" or tree.span(node) != (start, end):
        return Site(ph, "comment" if context == "comment" and _in_comment(node) else "unparsed")
    evaluated = _evaluated(tree, node)
    if evaluated:
        return Site(ph, evaluated)
    parent = node.parent
    if parent.type == "heredoc_body":
        redirect = parent.parent
        runner = _fed_runner(tree, redirect)
        if runner:
            return Site(ph, "reparse", runner)
        return _flow(tree, Site(ph, "heredoc"), redirect.parent, None, command, placeholders, spans)
    if parent.type != "string" or tree.text[tree.span(parent)[0]] != '"':
        return Site(ph, "unparsed")
    if tree.span(parent)[0] > 0 and tree.text[tree.span(parent)[0] - 1] == "$":
        return Site(ph, "unparsed")  # $"…": bash translates it first
    leading = parent.named_children[0].id == node.id and tree.span(node)[0] == tree.span(parent)[0] + 1
    return _place(tree, Site(ph, context), parent, leading, command, placeholders, spans)


def _evaluated(tree: _Tree, node) -> str | None:
    """'arithmetic' or 'parameter' when node sits (at any depth, through $(…) too) where bash evaluates
    text again: arithmetic, a subscript, a c-style for header, an operand of ${…}."""
    child = node
    for ancestor in _ancestors(node):
        kind = ancestor.type
        if kind in ("arithmetic_expansion", "subscript"):
            return "arithmetic"
        if kind == "compound_statement" and tree.source(ancestor).startswith("(("):
            return "arithmetic"
        if kind == "c_style_for_statement" and child.type not in ("do_group", "compound_statement"):
            return "arithmetic"
        if kind == "expansion":
            return "parameter"
        child = ancestor
    return None


def _place(tree, site, part, leading, command, placeholders, spans) -> Site:
    """part (a "…" string, or a $(…)) carries the value into a word: is that word in a place where it is
    one word or literal text, and what does the program there do with it?"""
    ph = site.placeholder
    word = part.parent if part.parent.type == "concatenation" else part
    leading = leading and tree.span(word)[0] == tree.span(part)[0]
    holder = word.parent
    kind = holder.type
    if kind == "command" and word.id != (holder.child_by_field_name("name") or word).id:
        return _flow(tree, site, holder, (word, leading), command, placeholders, spans)
    if kind == "command_name":
        return _flow(tree, site, holder.parent, None, command, placeholders, spans)
    if kind == "herestring_redirect":
        runner = _fed_runner(tree, holder)
        if runner:
            return Site(ph, "reparse", runner)
        statement = holder.parent
        if statement is not None and statement.type == "redirected_statement":
            statement = statement.child_by_field_name("body")
        return _flow(tree, site, statement, None, command, placeholders, spans, stdin=True)
    if kind == "file_redirect":
        if any(not c.is_named and tree.source(c) in (">&", "<&", ">&-", "<&-") for c in holder.children):
            return Site(ph, "descriptor")
        return _flow_up(tree, site, holder, command, placeholders, spans)
    value = holder.child_by_field_name("value") if kind == "variable_assignment" else None
    if value is not None and value.id == word.id:
        if holder.child_by_field_name("name").type != "variable_name":
            return Site(ph, "arithmetic")
        name = tree.source(holder.child_by_field_name("name"))
        if _code_variable(name):
            return Site(ph, "reparse", f"what reads ${name}")
        declaration = holder.parent
        if declaration is not None and declaration.type == "declaration_command":
            flags = [tree.source(c) for c in declaration.named_children if c.type == "word"]
            if any(f.startswith(("-", "+")) for f in flags):
                return Site(ph, "arithmetic" if any("i" in f for f in flags) else "name")
        return _flow_up(tree, site, holder, command, placeholders, spans)
    if kind == "for_statement":  # for BASH_ENV in {{x}}: the loop assigns the value to the variable
        variable = holder.child_by_field_name("variable")
        if variable is not None and _code_variable(tree.source(variable)):
            return Site(ph, "reparse", f"what reads ${tree.source(variable)}")
    if kind in ("for_statement", "case_statement", "array"):
        return _flow_up(tree, site, holder, command, placeholders, spans)
    if kind == "unary_expression" and tree.source(holder.children[0]) == "!" and holder.parent is not None and \
            holder.parent.type == "binary_expression":
        # [[ ! {{x}} -eq 3 ]]: the grammar reads `! {{x}}` as the left operand, bash negates the comparison, whose
        # operand the value is (an arithmetic one here)
        holder, kind = holder.parent, "binary_expression"
    if kind == "binary_expression" and _in_test(holder):
        operator = holder.child_by_field_name("operator")
        if operator is not None and tree.source(operator) in STRING_TEST_OPERATORS:
            return _flow_up(tree, site, holder, command, placeholders, spans)
        return Site(ph, "arithmetic")
    if kind == "unary_expression" and _in_test(holder):
        if tree.source(holder.children[0]) == "-v":
            return Site(ph, "name")
        return _flow_up(tree, site, holder, command, placeholders, spans)
    if kind in ("declaration_command", "unset_command"):
        return Site(ph, "name")
    return Site(ph, "unparsed")


def _in_comment(node) -> bool:
    while node is not None:
        if node.type == "comment":
            return True
        node = node.parent
    return False


def _in_test(node) -> bool:
    while node is not None and node.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
        node = node.parent
    return node is not None and node.type == "test_command"


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _literal(tree: _Tree, node) -> str | None:
    """The text a word stands for when it holds no expansion (quotes removed), else None."""
    if node.type == "word":
        text = tree.source(node)
        return text.replace("\\", "") if "$" not in text and "`" not in text else None
    if node.type == "raw_string":
        return tree.source(node)[1:-1]
    if node.type == "string":
        if all(c.type == "string_content" for c in node.named_children):
            return tree.source(node)[1:-1]
        return None
    if node.type == "number":
        return tree.source(node)
    if node.type == "concatenation":
        parts = [_literal(tree, c) for c in node.named_children]
        return None if None in parts else "".join(parts)
    return None


def _words(command_node) -> list:
    words = []
    name = command_node.child_by_field_name("name")
    if name is None:
        return words
    words.append(name.named_children[0] if name.named_child_count == 1 else name)
    words.extend(command_node.children_by_field_name("argument"))
    return words


def _flow(tree, site, command_node, target, command, placeholders, spans, stdin=False) -> Site:
    """The value is target (word, leading) of command_node (or reaches the command's standard input
    when target is None): does a program there parse it again, or read it as an option?"""
    if command_node is None:
        return site
    if command_node.type == "redirected_statement":
        body = command_node.child_by_field_name("body")
        return _flow(tree, site, body, target, command, placeholders, spans, stdin=True)
    if command_node.type != "command":
        return _flow_up(tree, site, command_node, command, placeholders, spans)
    info = _command_info(tree, command_node)
    if target is None:
        if stdin and info is not None and info.stdin:
            return Site(site.placeholder, "reparse", info.program)
        piped = _pipe(tree, site, command_node, command, placeholders, spans)
        return piped if piped.context == "reparse" else _flow_up(tree, site, command_node, command, placeholders, spans)
    word, leading = target
    index = info.index.get(word.id) if info is not None else None
    if index is None:
        return site
    verdict = info.verdicts[index]
    if verdict is not None:
        kind, program, script = verdict
        if kind == "reparse":
            return Site(site.placeholder, "reparse", program,
                        fix=_positional_fix(tree, info.words, script, command, placeholders, spans))
        if kind in ("name", "arithmetic"):
            return Site(site.placeholder, kind, program)
        in_option = _prefix(tree, word).startswith("-")  # tar --{{x}}: the value completes an option's name
        if kind in ("option", "option_exec") and (leading or in_option):
            # one `--` for the command, before its first word in option position: every fix inserts it there
            first = next(w for w, v in zip(info.words, info.verdicts) if v is not None and v[0] == kind)
            option_at = _to_command(tree.span(first)[0], placeholders, spans, command)
            if kind == "option_exec":
                return Site(site.placeholder, "option", program, option_at=option_at)
            site = Site(site.placeholder, site.context, program, option_at=option_at)
    piped = _pipe(tree, site, command_node, command, placeholders, spans)
    return piped if piped.context == "reparse" else _flow_up(tree, site, command_node, command, placeholders, spans)


def _pipe(tree, site, command_node, command, placeholders, spans) -> Site:
    """Output piped (at any level: `! …`, `( … )`, `{ …; }`, `$(…)`) into a program that runs what it reads
    as code: the value becomes code there."""
    child = command_node
    for ancestor in _ancestors(command_node):
        if ancestor.type == "pipeline":
            program = _readers_after(tree, ancestor).get(child.id)
            if program:
                return Site(site.placeholder, "reparse", program)
        child = ancestor
    return site


def _readers_after(tree, pipeline) -> dict:
    """For each part of a pipeline: the first program after it that runs its standard input as code (once per
    pipeline)."""
    cache = tree.cache.setdefault("pipeline", {})
    if pipeline.id not in cache:
        found, later = {}, None
        for part in reversed(pipeline.named_children):
            found[part.id] = later
            later = _reader_in(tree, part) or later
        cache[pipeline.id] = found
    return cache[pipeline.id]


def _fed_runner(tree, redirect) -> str | None:
    """A here-document or here-string is standard input (or a descriptor) of what its statement runs: a
    compound command, a pipe into one (cat <<EOF | { sh; }), a loop (while read l; do sh -c "$l"; done <<EOF),
    a descriptor a later command reads (sh /dev/fd/3 3<<EOF). Fail closed: a program anywhere in the statement
    holding the redirect that runs its standard input, or a value not written in the command, as code; after
    `exec <<EOF` (standard input or a descriptor of the whole script from here on) anywhere in the command."""
    top = redirect
    while top.parent is not None and top.parent.type != "program":
        top = top.parent
    runner = _runner_in(tree, top)
    if runner is None and _exec_redirect(tree, redirect):
        runner = _runner_in(tree, tree.root)
    return runner


def _exec_redirect(tree, redirect) -> bool:
    statement = redirect.parent
    body = statement.child_by_field_name("body") if statement is not None and \
        statement.type == "redirected_statement" else None
    if body is None or body.type != "command":
        return False
    info = _command_info(tree, body)
    return info is not None and info.program == "exec" and len(info.words) == 1


def _runner_in(tree, node) -> str | None:
    """A program in node (at any depth) that runs its standard input as code, or a word it does not see written
    (sh -c "$l", eval "$l") as code (computed once per node)."""
    cache = tree.cache.setdefault("runner", {})
    if node.id in cache:
        return cache[node.id]
    found, stack, seen = None, [node], set()
    while stack and found is None:
        part = stack.pop()
        if part.id in seen:
            continue
        seen.add(part.id)
        if part.type == "command":
            info = _command_info(tree, part)
            if info is not None and (info.stdin or any(
                    v is not None and v[0] == "reparse" and _literal(tree, w) is None
                    for w, v in zip(info.words, info.verdicts))):
                found = info.program or "sh"
            stack.extend(_called_functions(tree, info))
        stack.extend(part.named_children)
    cache[node.id] = found
    return found


def _called_functions(tree, info) -> list:
    """The bodies of the functions the command defines under the name info's command calls (f() { sh; }; f <<EOF):
    what runs there is what the call runs."""
    if info is None or not info.words:
        return []
    functions = tree.cache.get("functions")
    if functions is None:
        functions, stack = {}, [tree.root]
        while stack:
            node = stack.pop()
            if node.type == "function_definition":
                name = node.child_by_field_name("name")
                body = node.child_by_field_name("body")
                if name is not None and body is not None:
                    functions.setdefault(tree.source(name), []).append(body)
            stack.extend(node.named_children)
        tree.cache["functions"] = functions
    # the name after unquoting ("f", \f), and behind command, builtin, eval or exec (eval f <<EOF): any word
    # there whose first token names a function may call it (fail closed)
    words = [_literal(tree, w) for w in info.words]
    named = [tree.source(info.words[0]), words[0] or ""]
    if words[0] in ALIAS_WRAPPERS | {"exec"}:
        named += [token for text in words[1:] if text for token in text.split()[:1]]
    return [body for name in dict.fromkeys(named) for body in functions.get(name, [])]


def _reader_in(tree, node) -> str | None:
    """A program in node (at any depth) that runs its standard input as code (computed once per node)."""
    cache = tree.cache.setdefault("reader", {})
    if node.id in cache:
        return cache[node.id]
    found = None
    stack, seen = [node], set()
    while stack and found is None:
        part = stack.pop()
        if part.id in cache:
            found = cache[part.id]
            continue
        if part.id in seen:
            continue
        seen.add(part.id)
        if part.type == "command":
            info = _command_info(tree, part)
            if info is not None and info.stdin:
                found = info.program
            elif info is not None:
                found = _reads_through_substitution(tree, info) or _relative_script_after_cd(tree, info)
            stack.extend(_called_functions(tree, info))
        stack.extend(part.named_children)
    cache[node.id] = found
    return found


def _reads_through_substitution(tree, info) -> str | None:
    """eval "$(cat)": code made of a command substitution, which may read the command's standard input."""
    for word, verdict in zip(info.words, info.verdicts):
        if verdict is not None and verdict[0] == "reparse" and _literal(tree, word) is None:
            stack = [word]
            while stack:
                node = stack.pop()
                if node.type == "command_substitution":
                    return verdict[1]
                stack.extend(node.named_children)
    return None


def _relative_script_after_cd(tree, info) -> str | None:
    """cd /dev && bash stdin: after a change of directory a relative script path may name standard input
    (fail closed: a program that runs a script file, given a relative path, in a command that changes directory)."""
    if info.program not in SCRIPT_READERS or not _changes_directory(tree):
        return None
    operands = [_literal(tree, w) for w in info.words[1:]]
    if any(text is not None and text and not text.startswith(("-", "/")) for text in operands):
        return info.program
    return None


def _changes_directory(tree) -> bool:
    if "cd" not in tree.cache:
        found, stack = False, [tree.root]
        while stack and not found:
            node = stack.pop()
            if node.type == "command":
                words = _words(node)
                found = bool(words) and os.path.basename(_literal(tree, words[0]) or "") in ("cd", "pushd", "popd")
            stack.extend(node.named_children)
        tree.cache["cd"] = found
    return tree.cache["cd"]


def _flow_up(tree, site, node, command, placeholders, spans) -> Site:
    """Through an enclosing $(…) or `…`: its output is a word again, held to the same places. Through an
    enclosing <(…): its output is a file the command around it reads (as a script: TD803), or its standard
    input (`sh < <(…)`); the value then flows on as that command's output would."""
    for ancestor in _ancestors(node):
        if ancestor.type == "command_substitution":
            part = ancestor.parent if ancestor.parent.type == "string" else ancestor
            # its output may begin with the value: a word it begins is in option position like the value itself
            # (env "$(printf %s {{x}})" true with x=-Ssh… ran a command)
            return _place(tree, site, part, True, command, placeholders, spans)
        if ancestor.type == "process_substitution" and tree.source(ancestor).startswith("<("):
            holder = ancestor.parent.parent if ancestor.parent.type == "concatenation" else ancestor.parent
            if holder.type == "file_redirect":
                statement = holder.parent
                body = statement.child_by_field_name("body") if statement.type == "redirected_statement" else None
                info = _command_info(tree, body) if body is not None and body.type == "command" else None
            else:
                body = holder if holder.type == "command" else None
                info = _command_info(tree, body) if body is not None else None
                at = next((k for k, w in enumerate(info.words) if w.id == ancestor.id or w.id == ancestor.parent.id),
                          None) if info is not None else None
                after_f = at is not None and at > 0 and _literal(tree, info.words[at - 1]) in ("-f", "--file")
                if info is not None and info.program is not None and (after_f or  # awk -f <(…), sed -f, make -f
                        _named_at_run_time(info.program) or os.path.basename(info.program) in SCRIPT_READERS):
                    return Site(site.placeholder, "reparse", info.program)
            if info is not None and info.stdin and holder.type == "file_redirect":
                return Site(site.placeholder, "reparse", info.program)
            if body is None:
                return site
            piped = _pipe(tree, site, body, command, placeholders, spans)
            return piped if piped.context == "reparse" else _flow_up(tree, site, body, command, placeholders, spans)
    return site


def _hidden_reader(tree) -> str | None:
    """A program anywhere in the command that runs as code what other commands write where it cannot be followed:
    inside >(…) (`exec > >(sh)`, `echo … > >(sh)`); or an alias definition (any command name may then be another
    program). Every value of such a command is held to be code (fail closed)."""
    if "hidden" in tree.cache:
        return tree.cache["hidden"]
    found, stack = None, [tree.root]
    while stack and found is None:
        node = stack.pop()
        if node.type == "process_substitution" and tree.source(node).startswith(">("):
            found = _reader_in(tree, node)
        if node.type == "redirected_statement" and found is None and any(
                r.type in ("file_redirect", "heredoc_redirect", "herestring_redirect") and
                any(not c.is_named and tree.source(c).startswith("<") for c in r.children)
                for r in node.children_by_field_name("redirect")) and _exec_redirect(
                tree, node.children_by_field_name("redirect")[0]):
            # exec < FILE: the rest of the script reads FILE, which the command may have written a value into
            found = _reader_in(tree, tree.root)
        if node.type == "command":  # alias s=sh: dash expands aliases in scripts, s -c … runs sh (fail closed)
            info = _command_info(tree, node)
            if info is not None and info.program == "alias" and any(
                    "=" in _prefix(tree, w) or _literal(tree, w) is None for w in info.words[1:]):
                found = "alias"
            # command alias s=sh, builtin alias …, eval "alias s=sh": a wrapped alias definition (fail closed)
            if info is not None and found is None and _literal(tree, info.words[0]) in ALIAS_WRAPPERS and any(
                    (_literal(tree, w) or _prefix(tree, w)).split()[:1] == ["alias"] for w in info.words[1:]):
                found = "alias"
        stack.extend(node.named_children)
    tree.cache["hidden"] = found
    return found


# ---------------------------------------------------------------- programs and their arguments

@dataclass(frozen=True)
class Program:
    """How a program reads its arguments: which options take a value, which of them (or which operands) are
    code it runs, where a wrapped command starts. One table (PROGRAMS), read by one scanner (_scan)."""
    args: str = ""  # short options that take a value (attached, or the next word)
    long_args: frozenset = frozenset()  # long options that take a value (--opt=V or --opt V)
    code: str = ""  # short options whose value is code
    long_code: frozenset = frozenset()  # long options whose value is code
    first_code: bool = False  # the first operand is code (awk's program) unless a code option gave it
    all_code: bool = False  # every operand is code (eval, watch)
    code_from: int | None = None  # operands from this one on are code (ssh HOST COMMAND…: 1)
    command_at: int | None = None  # a wrapper: the command it runs starts at this operand
    flag_code: str = ""  # shells: a flag letter (c) that makes the first operand code
    stops: str = ""  # short options after whose value the rest are the program's arguments (python -m)
    stdin: bool = False  # runs its standard input as code when given no script
    stdin_flags: str = ""  # flags that make it read the script from standard input although operands follow
    gnu: bool = True  # options may follow operands
    exec_options: bool = False  # one of its options runs a command: a value in option position is TD805, an error
    plus: bool = False  # +o … options (shells)
    assigns: bool = False  # NAME=VALUE operands before the command set its environment (env, sudo)
    stdin_always: bool = False  # runs its standard input as code even with operands (at TIME)
    script_args: frozenset = frozenset()  # options (taking a value) that give the script from a file (awk -f)
    subcommand: bool = False  # the first operand names a subcommand whose own options the table does not know


def _p(**kw) -> Program:
    for key in ("long_args", "long_code", "script_args"):
        if key in kw:
            kw[key] = frozenset(kw[key].split())
    return Program(**kw)


_SHELL = _p(args="oO", long_args="--rcfile --init-file", flag_code="c", stdin=True, stdin_flags="s", gnu=False,
            exec_options=True, plus=True)
_PYTHON = _p(args="WXQm", code="c", stops="cm", stdin=True, gnu=False, exec_options=True)
_AWK = _p(args="vFfil", long_args="--assign --field-separator --file --include --load", code="e",
          long_code="--source", first_code=True, exec_options=True, gnu=False, script_args="-f --file")
#: Sources: GTFOBins (https://gtfobins.github.io, "Command", "Shell", "Sudo") and SonarSource's argument
#: injection vectors (https://sonarsource.github.io/argument-injection-vectors/).
PROGRAMS = {
    **{name: _SHELL for name in "sh bash dash zsh ksh ash mksh yash".split()},
    **{name: _PYTHON for name in "python python2 python3 pypy pypy3".split()},
    **{name: _AWK for name in "awk gawk mawk nawk".split()},
    "perl": _p(args="I", code="eEMm", stdin=True, exec_options=True),
    "ruby": _p(args="IrCFEKx", code="e", stdin=True, exec_options=True),
    "node": _p(args="r", long_args="--require", code="ep", long_code="--eval --print", stdin=True, exec_options=True),
    "php": _p(args="cdfFtz", code="rBRE", stdin=True, exec_options=True),
    "lua": _p(args="l", code="e", stdin=True, exec_options=True),
    "eval": _p(all_code=True, gnu=False), "alias": _p(all_code=True, gnu=False),
    "watch": _p(args="nqd", long_args="--interval --differences", all_code=True, gnu=False),
    "su": _p(args="sgGw", long_args="--shell --group --supp-group --whitelist-environment", code="c",
             long_code="--command --session-command", stdin=True),
    "runuser": _p(args="sgGwu", long_args="--shell --group --supp-group --user", code="c",
                  long_code="--command --session-command", command_at=1, gnu=False),
    "sg": _p(code="c", code_from=1, gnu=False),
    "script": _p(args="EIOTBmt", long_args="--echo --log-in --log-out --log-timing --log-io --logging-format",
                 code="c", long_code="--command"),
    "ssh": _p(args="bcDEeFIiJLlmOopQRSWw", code="o", code_from=1, stdin=True, gnu=False, exec_options=True),
    "scp": _p(args="cDFiJlPS", code="oS", exec_options=True),
    "sftp": _p(args="BbcDFiJlPRs", code="oS", exec_options=True),
    "git": _p(args="C", long_args="--git-dir --work-tree --namespace --exec-path", code="c",
              long_code="--config-env --upload-pack --receive-pack --exec", exec_options=True, subcommand=True),
    "tar": _p(args="bCfgHKLNTVX", code="IF", long_code="--use-compress-program --to-command --checkpoint-action "
              "--info-script --new-volume-script --rsh-command --rmt-command", exec_options=True),
    "rg": _p(args="ABCefgjmMrtTEd", long_args="--type --glob --iglob --max-count --max-depth --encoding --file "
             "--regexp --replace --type-add --threads --context --after-context --before-context --sort --sortr",
             long_code="--pre", exec_options=True),
    "rsync": _p(args="BfMT", code="e", long_code="--rsh --rsync-path", exec_options=True),
    "zip": _p(args="bnt", long_code="-TT --unzip-command", exec_options=True),
    "sort": _p(args="kotST", long_code="--compress-program", exec_options=True),
    "man": _p(args="CMS", code="Pp", long_code="--pager --preprocessor --html", exec_options=True),
    "tcpdump": _p(args="BcCEFGiMmrsTVwWyZ", code="z", exec_options=True),
    "make": _p(args="CfIjlow", long_args="--file --makefile", long_code="--eval", exec_options=True,
               script_args="-f --file --makefile"),
    "wget": _p(args="OoaPeU", long_code="--use-askpass --execute", exec_options=True),
    "emacs": _p(long_code="--eval", exec_options=True),
    "env": _p(args="uC", long_args="--unset --chdir", code="S", long_code="--split-string", command_at=0, gnu=False,
              exec_options=True, assigns=True),
    "xargs": _p(args="adEILnPs", long_args="--arg-file --delimiter --eof --replace --max-lines --max-args "
                "--max-procs --max-chars --process-slot-var", command_at=0, gnu=False, exec_options=True),
    "sudo": _p(args="ugCDhprtUT", command_at=0, gnu=False, assigns=True), "doas": _p(args="uC", command_at=0, gnu=False),
    "command": _p(command_at=0, gnu=False), "exec": _p(args="a", command_at=0, gnu=False),
    "builtin": _p(command_at=0, gnu=False), "nohup": _p(command_at=0, gnu=False),
    "setsid": _p(command_at=0, gnu=False), "time": _p(args="fo", command_at=0, gnu=False),
    "nice": _p(args="n", long_args="--adjustment", command_at=0, gnu=False),
    "stdbuf": _p(args="ioe", long_args="--input --output --error", command_at=0, gnu=False),
    "ionice": _p(args="cnpPu", long_args="--class --classdata --pid --pgid --uid", command_at=0, gnu=False),
    "taskset": _p(command_at=1, gnu=False), "chrt": _p(args="TPD", command_at=1, gnu=False),
    "chroot": _p(long_args="--userspec --groups", command_at=1, gnu=False),
    "flock": _p(args="wE", long_args="--timeout --conflict-exit-code", code="c", long_code="--command",
                command_at=1),
    "timeout": _p(args="ks", long_args="--kill-after --signal", command_at=1, gnu=False),
    "unbuffer": _p(command_at=0, gnu=False), "strace": _p(args="abeEoOpPsSuUX", command_at=0, gnu=False, exec_options=True),
    "ltrace": _p(args="aAeEfFlnoPsu", command_at=0, gnu=False, exec_options=True), "busybox": _p(command_at=0, gnu=False),
    "xvfb-run": _p(args="fnpes", command_at=0, gnu=False), "dbus-run-session": _p(command_at=0, gnu=False),
    "nsenter": _p(args="tSG", command_at=0, gnu=False), "unshare": _p(args="SGRwC", long_args="--setuid --setgid --root "
    "--wd --propagation --map-user --map-group --map-users --map-groups --setgroups --load-interp", command_at=0,
    gnu=False),
    "setpriv": _p(long_args="--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps "
                  "--bounding-set --securebits --selinux-label --apparmor-profile --landlock-access --landlock-rule "
                  "--pdeathsig --ptracer --rlimit", command_at=0, gnu=False),
    "setarch": _p(long_args="--uname-2.6", command_at=1, gnu=False), "linux32": _p(command_at=0, gnu=False),
    "linux64": _p(command_at=0, gnu=False), "ssh-agent": _p(args="aEPtO", command_at=0, gnu=False),
    "fakeroot": _p(args="lisb", long_args="--lib --faked", command_at=0, gnu=False),
    "valgrind": _p(command_at=0, gnu=False), "catchsegv": _p(command_at=0, gnu=False),
    "capsh": _p(command_at=None, all_code=True, gnu=False, exec_options=True),
    "tmux": _p(args="LSfcT", code="c", all_code=True, exec_options=True),
    "screen": _p(args="cdDrRSpeLhlmstTUx", all_code=True, exec_options=True),
    "npm": _p(code="c", long_code="--call"),  # npm exec -c CMD, npm exec --call=CMD
    "npx": _p(args="p", long_args="--package", code="c", long_code="--call", gnu=False, exec_options=True),
    **{name: _p(args="uUiTtqWwdr", code="cS", long_code="--cmd", stdin=True, stdin_always=True, exec_options=True)
       for name in "vim vi nvim".split()},
    "ed": _p(args="p", stdin=True, stdin_always=True), "red": _p(args="p", stdin=True, stdin_always=True), "prlimit": _p(args="p", command_at=0, gnu=False),
    "systemd-run": _p(args="uMpEH", command_at=0, gnu=False), "firejail": _p(command_at=0, gnu=False),
    "proxychains": _p(args="f", command_at=0, gnu=False), "torsocks": _p(command_at=0, gnu=False),
    **{name: _p(flag_code="c", stdin=True, gnu=False, exec_options=True) for name in "fish csh tcsh".split()},
    "expect": _p(args="fD", code="c", stdin=True, exec_options=True), "tclsh": _p(stdin=True),
    "Rscript": _p(code="e", exec_options=True), "julia": _p(code="eE", stdin=True, exec_options=True),
    "pwsh": _p(code="c", long_code="-Command -command -c", stdin=True, gnu=False, exec_options=True),
    "bun": _p(code="ep", long_code="--eval --print", exec_options=True),
    "sqlite3": _p(long_args="-cmd", long_code="-cmd", code_from=1, stdin=True, gnu=False),
    "psql": _p(args="dfhLoPpUvT", code="c", long_code="--command", stdin=True, exec_options=True),
    "mysql": _p(args="DhPpuS", code="e", long_code="--execute --init-command", stdin=True),
    "gdb": _p(args="x", long_args="--command -command", long_code="-ex --ex -eval-command --eval-command -iex",
              exec_options=True, script_args="-x --command -command"),
    "source": _p(stdin=True, gnu=False), ".": _p(stdin=True, gnu=False),  # source /dev/stdin
    "compgen": _p(args="AGoPSX", code="WCF"), "complete": _p(args="AGoPSX", code="WCF"),  # -W is expanded
    "at": _p(args="qt", code="f", stdin=True, stdin_always=True, gnu=False),
    "batch": _p(args="q", code="f", stdin=True, stdin_always=True, gnu=False),
}
SHELLS = frozenset(name for name, spec in PROGRAMS.items() if spec is _SHELL)
#: programs whose code option takes a shell script
SHELL_CODE = frozenset("su runuser sg script flock".split())
#: python modules that run their arguments as code (python -m timeit CODE, python -m pdb -c CMD)
CODE_MODULES = frozenset("timeit pdb cProfile profile trace code".split())
#: a script operand that is the program's own standard input (and see _names_stdin: any spelling of it)
STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _names_stdin(path: str | None) -> bool:
    """A script path that may be the program's standard input in any spelling: -, /dev/stdin, /dev//stdin,
    ../dev/stdin, any /dev/fd/N or /proc/…/fd/N (a descriptor may be a copy of it), a pattern (/dev/std[i]n)
    (fail closed); a path given at run time (None) too."""
    if path is None or path == "-" or _globbed(path):
        return True
    norm = re.sub(r"/+", "/", path)
    return norm.rstrip("/").endswith(("/stdin", "dev/stdin")) or "/fd/" in norm or norm.endswith("/fd") or \
        norm.startswith("/proc/")
#: environment variables a shell or a program reads as code (expanded, run or loaded): a value assigned to one is
#: TD803 (NAME={{x}} cmd, export NAME={{x}}, env NAME={{x}} cmd)
CODE_VARIABLES = frozenset("""BASH_ENV ENV PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND BASH_LOADABLES_PATH SHELLOPTS BASHOPTS
    LD_PRELOAD LD_AUDIT LD_LIBRARY_PATH GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_ASKPASS
    GIT_PROXY_COMMAND GIT_CONFIG_PARAMETERS PAGER MANPAGER EDITOR VISUAL LESSOPEN LESSCLOSE SSH_ASKPASS SUDO_ASKPASS
    PYTHONSTARTUP PYTHONPATH PYTHONHOME PERL5OPT PERL5LIB PERLLIB NODE_OPTIONS RUBYOPT RUBYLIB BROWSER
    RSYNC_RSH RSYNC_CONNECT_PROG CVS_RSH PERL5DB PYTHONBREAKPOINT GIT_EXEC_PATH ZDOTDIR""".split())
#: families of variables read as code: GIT_CONFIG_KEY_0/VALUE_0 (any git setting), BASH_FUNC_f%% (a function
#: bash imports), *EDITOR and *PAGER (run by git, less, man, …), TAR_OPTIONS, MAKEFLAGS and MFLAGS (options, among
#: them --to-command and --eval)
CODE_VARIABLE_PREFIXES = ("GIT_CONFIG", "BASH_FUNC_")
CODE_VARIABLE_SUFFIXES = ("EDITOR", "PAGER", "_OPTIONS", "FLAGS", "_COMMAND", "_CMD", "ASKPASS")


def _code_variable(name: str) -> bool:
    """A variable a shell or a program reads as code: listed, of a family, or not a plain name (env 'f%%=…')."""
    return name in CODE_VARIABLES or name.startswith(CODE_VARIABLE_PREFIXES) or \
        name.endswith(CODE_VARIABLE_SUFFIXES) or not name.replace("_", "").isalnum() or not name.isascii()


#: programs that run a file given as an argument as code (bash <(…), source <(…))
SCRIPT_READERS = SHELLS | frozenset("""source . python python2 python3 pypy pypy3 perl ruby node php lua expect tclsh
    Rscript julia bun""".split())
#: interpreters and shells: a name made of one and a suffix (python3.12-dbg, bash-static) is that program
INTERPRETERS = SCRIPT_READERS - {"source", "."}
#: editors whose +CMD operands are ex commands
VIMS = frozenset("vim vi nvim".split())
AWKS = frozenset("awk gawk mawk nawk".split())
SEDS = frozenset("sed gsed".split())
#: sed's options that take the next word as their argument (-e and --expression: the script)
SED_ARG_OPTIONS = {"-f", "--file", "-l", "--line-length"}
#: find's tests and actions that take the next word as their value
FIND_ARGS = frozenset("""-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype
    -newer -anewer -cnewer -user -group -uid -gid -perm -size -mtime -mmin -atime -amin -ctime -cmin -maxdepth
    -mindepth -samefile -inum -links -used -printf -regextype -context -fstype -newermt -newerat -newerct""".split())
FIND_EXEC = frozenset("-exec -execdir -ok -okdir".split())
#: deepest nesting of $(…), `…`, (…) and {…} the checker follows; deeper commands are TD804
MAX_NESTING = 40
#: programs whose arguments (or some) are variable names or arithmetic in bash
#: builtins that run their arguments as a command or as code, so also an alias definition
ALIAS_WRAPPERS = frozenset("command builtin eval".split())
#: builtins that assign variables, also when a wrapper runs them (command export NAME=…)
DECLARERS = frozenset("export declare typeset local readonly".split())
NAME_PROGRAMS = {"unset": "name", "read": "name", "mapfile": "name", "readarray": "name", "let": "arithmetic"}
STRING_TEST_OPERATORS = frozenset({"=", "==", "!=", "<", ">", "=~"})
#: ssh -o / scp -o settings whose value is no command (anything else given with -o is held to be code)
SSH_DATA_SETTINGS = frozenset("""connecttimeout port user identityfile stricthostkeychecking userknownhostsfile
    batchmode serveraliveinterval serveralivecountmax loglevel compression hostname""".split())
#: git subcommands' options whose value is a command (git rebase -x CMD, git grep -O CMD)
GIT_SUBCOMMAND_CODE = {"rebase": frozenset({"-x", "--exec"}), "grep": frozenset({"-O", "--open-files-in-pager"}),
                       "difftool": frozenset({"-x", "--extcmd"}), "bisect": frozenset(), "submodule": frozenset(),
                       "clone": frozenset({"-u", "--upload-pack"}), "fetch": frozenset({"--upload-pack"}),
                       "pull": frozenset({"--upload-pack"}), "ls-remote": frozenset({"--upload-pack"}),
                       "push": frozenset({"--receive-pack", "--exec"}), "archive": frozenset({"--exec"})}
#: git subcommands' options known to take the next word as their value (a value after any other option is in
#: option position)
GIT_VALUE_OPTIONS = frozenset("""-m --message -F --file -b -B -C -c -t --template -e --author --date --since
    --until --after --before --grep --format --pretty -n --max-count --skip -S -G -u --upstream -o --origin
    --branch --depth --reference --separate-git-dir -X --strategy-option -s --strategy --onto --committer -U
    --unified --sort --points-at --contains --merged --no-merged -L --abbrev --decorate-refs""".split())
#: git -c settings whose value is no command (any other -c is held to be code: alias.x=!…, core.sshCommand, …)
GIT_DATA_SETTINGS = frozenset("""user.name user.email color.ui core.quotepath init.defaultbranch
    advice.detachedhead safe.directory core.autocrlf""".split())


@dataclass
class _Command:
    """A simple command's words, and for each word what the program there does with it."""
    words: list
    index: dict  # word id → its index in words
    verdicts: list  # per word: None | (kind, program, script index): kind reparse, option, option_exec, name, arithmetic
    stdin: bool  # the program runs its standard input as code
    program: str | None


def _command_info(tree, command_node) -> _Command | None:
    """What each word of command_node means to the program it runs (computed once per command)."""
    cache = tree.cache.setdefault("command", {})
    if command_node.id in cache:
        return cache[command_node.id]
    words = _words(command_node)
    info = None
    if words:
        literals = [_literal(tree, w) for w in words]
        prefixes = [_prefix(tree, w) for w in words]
        verdicts, stdin, program = _scan(literals, prefixes, [tree.source(w) for w in words])
        info = _Command(words, {w.id: i for i, w in enumerate(words)}, verdicts, stdin, program)
    cache[command_node.id] = info
    return info


def _prefix(tree, node) -> str:
    """The literal text a word starts with, up to its first expansion (quotes removed)."""
    if node.type == "concatenation":
        out = []
        for part in node.named_children:
            text = _literal(tree, part)
            if text is None:
                out.append(_prefix(tree, part))
                break
            out.append(text)
        return "".join(out)
    if node.type == "string":
        out = []
        for part in node.named_children:
            if part.type != "string_content" or tree.span(part)[0] != tree.span(node)[0] + 1 + len("".join(out)):
                break
            out.append(tree.source(part))
        return "".join(out)
    text = _literal(tree, node)
    if text is not None:
        return text
    if node.type == "word":
        source = tree.source(node)
        cut = min((i for i in (source.find("$"), source.find("`")) if i >= 0), default=len(source))
        return source[:cut].replace("\\", "")
    return ""


#: how many times one command's scan also reads a wrapper's command one word later (bounds the work)
WRAPPER_ALTERNATIVES = 4


def _scan(literals: list, prefixes: list, sources: list, alternatives: int = WRAPPER_ALTERNATIVES) -> \
        tuple[list, bool, str | None]:
    """For a simple command's words (literal text or None, the literal prefix, the source): per word, what the
    program does with it; whether the program runs its standard input as code; the program's name."""
    n = len(literals)
    verdicts = [None] * n
    if literals[0] is None or _globbed(literals[0]):  # named at run time ("$SHELL" -c …, /bin/[s]h): fail closed
        shown = "{{…}}" if SUB_PREFIX in sources[0] else sources[0]
        return [None] + [("reparse", shown, None)] * (n - 1), True, shown
    program = _program_name(literals[0])
    spec = PROGRAMS.get(program)
    option_kind = "option_exec" if (spec is not None and spec.exec_options) or program in SEDS else (
        "option" if program in OPTION_PROGRAMS else None)
    special = _special(program, literals, prefixes, verdicts, option_kind)
    if special is not None:
        return verdicts, special, program
    if spec is None:
        for i in range(1, n):
            if option_kind and literals[i] == "--":
                break
            if option_kind and literals[i] is None and (prefixes[i] == "" or prefixes[i].startswith("-")):
                verdicts[i] = (option_kind, program, None)
        return verdicts, False, program
    old_code = program == "tar" and n > 1 and bool(literals[1]) and literals[1].isalpha() and any(
        c in spec.code for c in literals[1])  # tar xIf PROGRAM ARCHIVE: the letters' values follow in order
    if program == "tar" and n > 1 and literals[1] and literals[1].isalpha():  # tar xzf …: old-style options
        literals, prefixes = [literals[0], "-" + literals[1], *literals[2:]], [prefixes[0], "-" + prefixes[1],
                                                                              *prefixes[2:]]
    i, operands, open_, code_flag, code_given, stdin_flag, first_operand = 1, 0, True, False, False, False, None
    code = ("reparse", program, None)
    script_files = []  # awk -f FILE, make -f FILE: where the program reads its code
    while i < n:
        lit, pre = literals[i], prefixes[i]
        if open_ and lit == "--":
            open_ = False
            i += 1
            continue
        option = open_ and (pre.startswith("-") or (spec.plus and pre.startswith("+"))) and (lit is None or len(lit) > 1)
        sub_code = GIT_SUBCOMMAND_CODE.get(first_operand, ()) if spec.subcommand and operands > 0 else ()
        if option and (pre.split("=", 1)[0] in sub_code or pre[:2] in sub_code):  # git rebase -x CMD
            attached = ("=" in pre if pre.startswith("--") else len(pre) > 2) or lit is None
            if attached:
                if lit is None:
                    verdicts[i] = code
            elif i + 1 < n:
                i += 1
                verdicts[i] = code
            i += 1
            continue
        if option:
            head = _long_option(pre.split("=", 1)[0], spec)
            attached = "=" in pre
            if head in spec.long_code or head in spec.long_args or pre.startswith("--") or \
                    (lit is not None and lit in spec.long_code | spec.long_args):
                is_code = head in spec.long_code
                if lit is None and not attached:  # the value is (in) the option's name
                    verdicts[i] = (option_kind or "option", program, None)
                elif attached:
                    if is_code and lit is None:
                        verdicts[i] = code
                    code_given |= is_code or head in spec.script_args
                    if head in spec.script_args:
                        script_files.append(lit.split("=", 1)[1] if lit is not None else None)
                elif head in spec.long_code | spec.long_args:
                    code_given |= is_code or head in spec.script_args
                    if head in spec.script_args:
                        script_files.append(literals[i + 1] if i + 1 < n else "")
                    if i + 1 < n and is_code:
                        verdicts[i + 1] = _setting(program, prefixes[i + 1], literals[i + 1]) or code
                    i += 1
                i += 1
                continue
            letters = pre[1:]
            for j, ch in enumerate(letters):
                rest = letters[j + 1:] or lit is None
                if ch in spec.code:
                    code_given = True
                    if rest:
                        if lit is None:
                            verdicts[i] = _setting(program, letters[j + 1:], None) or code
                        elif i + 1 < n and all(c in spec.code for c in letters[j + 1:]):
                            i += 1  # node -pe CODE: -p and -e, the code follows
                            verdicts[i] = code
                    elif i + 1 < n:
                        i += 1
                        verdicts[i] = _setting(program, prefixes[i], literals[i]) or code
                    if ch in spec.stops:
                        open_ = None
                    break
                if ch in spec.args:
                    code_given |= f"-{ch}" in spec.script_args
                    if f"-{ch}" in spec.script_args:
                        if letters[j + 1:]:
                            script_files.append(letters[j + 1:] if lit is not None else None)
                        else:
                            script_files.append(literals[i + 1] if i + 1 < n else "")
                    if not rest:
                        i += 1
                    if ch in spec.stops:
                        open_ = None
                        module = letters[j + 1:] or (literals[i] if i < n else None)
                        if ch == "m" and (module is None or module in CODE_MODULES):  # python -m timeit CODE
                            for k in range(i + 1, n):
                                verdicts[k] = ("reparse", f"{program} -m {module or '…'}", None)
                    break
                if ch in spec.flag_code:
                    code_flag = True
                if ch in spec.stdin_flags:
                    stdin_flag = True
            else:
                if lit is None:  # the value completes the option letters: sed -n{{x}} with x=e… is -n -e …
                    # (a value that is all of them and an option that runs commands stays the TD805 error)
                    glued = (spec.code or spec.flag_code) and (letters or option_kind != "option_exec")
                    verdicts[i] = code if glued else (option_kind or "option", program, None)
            i += 1
            if open_ is None:
                break
            continue
        # an operand
        if spec.assigns and spec.command_at is not None and operands == spec.command_at and "=" in pre and \
                pre.split("=", 1)[0]:  # env NAME=VALUE, whatever the name (env 'BASH_FUNC_f%%=…')
            if lit is None and _code_variable(pre.split("=", 1)[0]):
                verdicts[i] = ("reparse", f"what reads ${pre.split('=', 1)[0]}", None)
            i += 1  # env NAME=VALUE …
            continue
        if program in VIMS and lit is None and pre.startswith("+"):  # vim +{{x}} FILE: an ex command
            verdicts[i] = code
        if open_ and lit is None and pre == "" and option_kind:
            # git commit -m {{x}}: the argument of -m (only after an option known to take one: git grep -i {{x}}
            # is in option position)
            after_value = spec.subcommand and operands > 0 and literals[i - 1] in GIT_VALUE_OPTIONS
            if not after_value:
                verdicts[i] = (option_kind, program, None)
        if spec.command_at is not None and operands == spec.command_at:
            sub, stdin, inner = _scan(literals[i:], prefixes[i:], sources[i:], alternatives)
            for k, verdict in enumerate(sub[1:], i + 1):
                verdicts[k] = verdict if verdict is None or verdict[2] is None else (*verdict[:2], verdict[2] + i)
            previous = literals[i - 1] or prefixes[i - 1]
            if alternatives > 0 and i + 1 < n and previous.startswith("-") and previous != "--" and \
                    "=" not in previous and program != "xargs":
                # stdbuf --output L sh …: an option the table does not know may take the next word as its value;
                # read the command from the word after it too, and keep what either reading finds (fail closed)
                alt, alt_stdin, alt_inner = _scan(literals[i + 1:], prefixes[i + 1:], sources[i + 1:],
                                                  alternatives - 1)
                for k, verdict in enumerate(alt[1:], i + 2):
                    if verdict is not None and verdict[0] == "reparse" and (
                            verdicts[k] is None or verdicts[k][0] != "reparse"):
                        verdicts[k] = (*verdict[:2], None)
                if alt_stdin and not stdin:
                    stdin, inner = True, alt_inner
            if program == "xargs":
                stdin = _xargs_reads_code(literals, prefixes, sources, i)
            return verdicts, stdin, inner if stdin else program
        if code_flag and operands == 0:
            verdicts[i] = ("reparse", program, i if program in SHELLS else None)
            return verdicts, _script_reads_stdin(lit), program
        if (spec.first_code and operands == 0 and not code_given) or spec.all_code or (
                spec.code_from is not None and operands >= spec.code_from):
            verdicts[i] = code
        if operands == 0:
            # a script path named at run time may be /dev/stdin (fail closed); a {{…}} there is the value itself
            first_operand = lit if lit is not None else ("" if SUB_PREFIX in (sources[i] or "") else None)
        operands += 1
        if not spec.gnu:
            open_ = False
        i += 1
    if program == "xargs":  # no command: echo
        return verdicts, False, program
    if old_code:  # fail closed: any value after old-style letters that include a command option is code
        for k in range(2, n):
            if literals[k] is None:
                verdicts[k] = code
    if any(_names_stdin(f) for f in script_files):  # awk -f /dev/stdin, make -f -
        return verdicts, True, program
    stdin = spec.stdin and not code_flag and not code_given and (
        operands == 0 or _names_stdin(first_operand) or stdin_flag or spec.code_from is not None or spec.stdin_always)
    if not stdin and code_given and program in SHELL_CODE:  # su -c sh, script -c 'cat | sh': the code reads it
        stdin = any(_script_reads_stdin(literals[k]) for k in range(1, n)
                    if verdicts[k] is not None and verdicts[k][0] == "reparse")
    return verdicts, stdin, program


def _long_option(head: str, spec: Program) -> str:
    """The long option a GNU program reads for head: itself, or the option it abbreviates (--to-com is
    --to-command); an abbreviation of a code option is that option even when it is ambiguous (fail closed)."""
    if not head.startswith("--") or len(head) < 4 or head in spec.long_code or head in spec.long_args:
        return head
    for options in (spec.long_code, spec.long_args):
        found = sorted(o for o in options if o.startswith(head))
        if found:
            return found[0]
    return head


def _script_reads_stdin(script: str | None) -> bool:
    """A shell script given as code (sh -c SCRIPT, su -c SCRIPT) that runs its standard input as code (sh -c sh,
    sh -c 'cat | sh'); a script the checker cannot see (None) or cannot follow fails closed."""
    if script is None:
        return True
    try:
        inner = _Tree(script)
        return inner.root.has_error or _reader_in(inner, inner.root) is not None
    except RecursionError:
        return True


def _setting(program, prefix, literal) -> tuple | None:
    """ssh -o NAME=…, git -c NAME=…: None (no verdict: data) when the setting named before '=' takes no command."""
    text = literal if literal is not None else prefix
    if program in ("ssh", "scp", "sftp") and ("=" in text or " " in text):
        name = text.replace(" ", "=").split("=", 1)[0].lower()
        return ("data", program, None) if name in SSH_DATA_SETTINGS else None
    if program == "git" and "=" in text:
        return ("data", program, None) if text.split("=", 1)[0].lower() in GIT_DATA_SETTINGS else None
    return None


def _xargs_reads_code(literals, prefixes, sources, start) -> bool:
    """xargs runs its command with the items it reads appended (or put where -I's string stands): does an item
    land where that command reads code?"""
    replace = None
    for i in range(1, start):
        text = literals[i] or ""
        if text in ("-I", "--replace") and i + 1 < start:
            replace = literals[i + 1]
        elif text.startswith("-I") and len(text) > 2:
            replace = text[2:]
        elif text.startswith("--replace="):
            replace = text.split("=", 1)[1]
        elif text == "-i" or (text.startswith("-i") and len(text) > 2):
            replace = text[2:] or "{}"
    words, pres, srcs = list(literals[start:]), list(prefixes[start:]), list(sources[start:])
    if replace is None:
        words, pres, srcs = words + [None], pres + [""], srcs + ["ITEM"]
        marked = {len(words) - 1}
    else:
        if not replace:
            return True
        marked = {k for k, w in enumerate(words) if w is None or replace in w}
        for k in marked:
            text = words[k] or pres[k]
            pres[k] = text.split(replace, 1)[0] if replace in text else pres[k]
            words[k] = None
        if 0 in marked:
            return True  # the item is the command's name
    verdicts, _, _ = _scan(words, pres, srcs)
    return any(verdicts[k] is not None and verdicts[k][0] == "reparse" for k in marked)


def _special(program, literals, prefixes, verdicts, option_kind) -> bool | None:
    """Programs whose arguments follow no option table: fills verdicts and returns whether the program runs its
    standard input as code; None for the others."""
    n = len(literals)
    if program == "trap":  # trap [-lp] [--] ACTION SIGNAL…
        i = 1
        while i < n and literals[i] is not None and literals[i].startswith("-") and literals[i] != "-":
            i += 1
            if literals[i - 1] == "--":
                break
        if i < n:
            verdicts[i] = ("reparse", program, None)
        return False
    if program in ("test", "["):
        for i in range(2, n):
            if literals[i - 1] == "-v":
                verdicts[i] = ("name", program, None)
        return False
    if program in DECLARERS:  # command export BASH_ENV={{x}}: a declaration run as a command (through a wrapper)
        for i in range(1, n):
            pre = prefixes[i] or ""
            if literals[i] is None and (pre == "" or ("=" in pre and _code_variable(pre.split("=", 1)[0]))):
                verdicts[i] = ("reparse", f"what reads ${pre.split('=', 1)[0] or '…'}", None)
        return False
    if program in NAME_PROGRAMS:
        for i in range(1, n):
            verdicts[i] = (NAME_PROGRAMS[program], program, None)
        if program == "read" and any(lit is not None and lit.replace("_", "").isalnum() and _code_variable(lit)
                                     for lit in literals[1:]):
            return True  # read BASH_ENV <<EOF: what it reads becomes a variable read as code
        # mapfile -C CALLBACK runs the callback with each line it reads as an argument (mapfile -C eval)
        return program in ("mapfile", "readarray") and any((p or "").startswith("-C") for p in prefixes[1:])
    if program == "printf":
        if n > 2 and "-v" in literals[1:]:
            k = literals.index("-v")
            if k + 1 < n:
                verdicts[k + 1] = ("name", program, None)
        return False
    if program in SEDS:
        return _sed(literals, prefixes, verdicts, option_kind)
    if program == "find":
        i = 1
        while i < n:
            text = literals[i]
            if text in FIND_EXEC:
                end = next((j for j in range(i + 1, n) if literals[j] in (";", "+")), n)
                if i + 1 < end:
                    sub, _, _ = _scan(literals[i + 1:end], prefixes[i + 1:end], [p or "" for p in prefixes[i + 1:end]])
                    for k, verdict in enumerate(sub[1:], i + 2):
                        verdicts[k] = verdict if verdict is None or verdict[2] is None else (
                            *verdict[:2], verdict[2] + i + 1)
                i = end + 1
                continue
            if text in FIND_ARGS:
                i += 2
                continue
            if text is None and prefixes[i] == "":
                verdicts[i] = ("option_exec", program, None)
            i += 1
        return False
    return None


def _sed(literals, prefixes, verdicts, option_kind):
    """A value in sed's script (after -e/--expression, or its first operand when no -e or -f is given): GNU
    sed runs shell commands from a script (the e command, the e flag of s)."""
    code = ("reparse", "sed", None)
    scripts, operand, ended, reads_stdin = False, None, False, False
    i, n = 1, len(literals)
    while i < n:
        text, pre = literals[i], prefixes[i]
        if text is None:
            # sed -n{{x}}: getopt reads x=e… as -n -e …; any value glued to short options (or to a bare --,
            # an abbreviation of --expression) may be the script
            if not ended and (pre.startswith(("-e", "--expression", "--e")) or pre == "--" or
                              (pre.startswith("-") and not pre.startswith("--"))):
                verdicts[i] = code
                scripts = True
            elif not ended and pre.startswith("-"):
                pass
            else:
                if not ended and pre == "" and option_kind:
                    verdicts[i] = (option_kind, "sed", None)
                operand = i if operand is None else operand
            i += 1
            continue
        if ended:
            operand = i if operand is None else operand
            i += 1
            continue
        if text == "--":
            ended = True
            i += 1
            continue
        if text == "-e" or (text.startswith("--e") and "=" not in text) or (
                text.startswith("-") and not text.startswith("--") and text.endswith("e")):
            scripts = True
            if i + 1 < n:
                verdicts[i + 1] = code
            i += 2
            continue
        if text.startswith(("--e", "-e")) or (text.startswith("-") and not text.startswith("--") and "e" in text[1:]):
            scripts = True
        if text in ("-f", "--file") or text.startswith(("--file=", "-f")):
            scripts = True
            script = (literals[i + 1] if i + 1 < n else "") if text in ("-f", "--file") else (
                text.split("=", 1)[1] if text.startswith("--file=") else text[2:])
            reads_stdin |= _names_stdin(script)  # sed -f /dev/stdin: its script from its standard input
        if text in SED_ARG_OPTIONS:
            i += 2
            continue
        if not text.startswith("-") or text == "-":
            operand = i if operand is None else operand
        i += 1
    if not scripts and operand is not None:
        verdicts[operand] = code
    return reads_stdin


def _positional_fix(tree, words, script_index, command, placeholders, spans) -> tuple:
    """sh -c "… {{x}} …"  →  sh -c '… "$1" …' _ {{x}}: the script names the value, the value is an argument."""
    if script_index is None or script_index != len(words) - 1:
        return ()
    script = words[script_index]
    cache = tree.cache.setdefault("fix", {})
    if script.id not in cache:
        cache[script.id] = _script_fix(tree, script, command, placeholders, spans)
    return cache[script.id]


def _script_fix(tree, script, command, placeholders, spans) -> tuple:
    a, b = tree.span(script)
    start, end = _to_command(a, placeholders, spans, command), _to_command(b, placeholders, spans, command)
    written = command[start:end]
    inside = [ph for ph in placeholders if start <= ph.start and ph.end <= end]
    if not inside or not (written.startswith('"') and written.endswith('"')):
        return ()
    body, pos, names = [], 1, []
    for number, ph in enumerate(inside, 1):
        body.append(written[pos:ph.start - start])
        body.append(f'"${number}"' if number < 10 else f'"${{{number}}}"')
        names.append(command[ph.start:ph.end])
        pos = ph.end - start
    body.append(written[pos:-1])
    text = "".join(body)
    if any(c in text.replace('"$', "") for c in "$`\\'"):
        return ()
    return ((start, end, f"'{text}' _ " + " ".join(names)),)
