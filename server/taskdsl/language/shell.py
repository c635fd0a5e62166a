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
would turn the value back into code: TD803. A value in option position of a program whose options
run commands or write files (OPTION_PROGRAMS) is TD805, a warning with a fix inserting `--`.
"""

from __future__ import annotations

import os
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

#: TD801 contexts that have a code of their own
CODES = {"reparse": REPARSE_CODE, "parse_error": PARSE_ERROR_CODE}

#: Programs whose options can run commands or write files (TD805). Sources: GTFOBins
#: (https://gtfobins.github.io, "Command", "Shell", "File write") and SonarSource's argument
#: injection vectors (https://sonarsource.github.io/argument-injection-vectors/).
OPTION_PROGRAMS = frozenset("""
    env tar find xargs git rsync ssh scp sftp curl wget zip unzip 7z 7za sed sort awk gawk mawk nawk
    cp mv ln install tee man less vim vi nvim emacs psql mysql sqlite3 docker kubectl npm npx pip pip3
    gzip bzip2 xz split tcpdump openssl gpg ffmpeg nmap chown chmod sudo nice timeout nohup stdbuf
    sh bash dash zsh ksh python python3 perl ruby node php lua busybox hg svn make ssh-keygen
""".split())

SHELLS = frozenset("sh bash dash zsh ksh ash mksh yash".split())
#: programs that run what they read on standard input as code when given no script
STDIN_INTERPRETERS = SHELLS | frozenset("python python2 python3 perl ruby node php lua ssh su".split())
#: programs that run what they are given after wrapping options: (options taking an argument)
WRAPPERS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "command": set(), "exec": {"-a"}, "nohup": set(), "nice": {"-n", "--adjustment"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}, "doas": {"-u", "-C"},
    "time": {"-f", "-o"}, "stdbuf": {"-i", "-o", "-e"}, "setsid": set(), "busybox": set(),
    "xargs": {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter",
              "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
    "timeout": {"-k", "-s", "--kill-after", "--signal"},
    "builtin": set(),
}
#: program → the options whose next argument is code it runs
CODE_OPTIONS = {
    "python": {"-c"}, "python2": {"-c"}, "python3": {"-c"}, "node": {"-e", "--eval", "-p", "--print"},
    "ruby": {"-e"}, "php": {"-r"}, "su": {"-c", "--command", "--session-command"},
}
AWKS = frozenset("awk gawk mawk nawk".split())
SEDS = frozenset("sed gsed".split())
#: sed's options that take the next word as their argument (-e and --expression: the script)
SED_ARG_OPTIONS = {"-f", "--file", "-l", "--line-length"}
#: deepest nesting of $(…), `…`, (…) and {…} the checker follows; deeper commands are TD804
MAX_NESTING = 40
#: programs whose arguments (or some) are variable names or arithmetic in bash
NAME_PROGRAMS = {"unset": "name", "read": "name", "mapfile": "name", "readarray": "name", "let": "arithmetic"}
STRING_TEST_OPERATORS = frozenset({"=", "==", "!=", "<", ">", "=~"})
SSH_ARG_OPTIONS = set("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w".split())


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
    shown = f"{{{{{site.placeholder.expr_text}}}}}"
    where, how = WHERE[site.context]
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


def option_message(site: Site) -> str:
    shown = f"{{{{{site.placeholder.expr_text}}}}}"
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
    return "".join(out), spans


class _Tree:
    """A parsed text with character offsets (tree-sitter counts UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
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
        stack.extend((child, depth) for child in reversed(node.children))
    return None


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
    """An offset in a rendered text → the offset in the command as written (inside a reference: its placeholder)."""
    shift = 0
    for ph, (_, _, form_start, form_end) in zip(placeholders, spans):
        if offset < form_start:
            return offset - shift
        if offset < form_end:
            return ph.start
        shift = form_end - ph.end
    return max(0, min(len(command), offset - shift))


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
        for part in redirect.named_children:  # cat <<EOF | sh: the grammar hangs the pipe on the redirect
            if part.type == "pipeline":
                for body in part.named_children:
                    program = _stdin_program(tree, _words(body)) if body.type == "command" else None
                    if program:
                        return Site(ph, "reparse", program)
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
        declaration = holder.parent
        if declaration is not None and declaration.type == "declaration_command":
            flags = [tree.source(c) for c in declaration.named_children if c.type == "word"]
            if any(f.startswith(("-", "+")) for f in flags):
                return Site(ph, "arithmetic" if any("i" in f for f in flags) else "name")
        return _flow_up(tree, site, holder, command, placeholders, spans)
    if kind in ("for_statement", "case_statement", "array"):
        return _flow_up(tree, site, holder, command, placeholders, spans)
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
    words = _words(command_node)
    if target is None:
        if stdin and words:
            program = _stdin_program(tree, words)
            if program:
                return Site(site.placeholder, "reparse", program)
        piped = _pipe(tree, site, command_node, command, placeholders, spans)
        return piped if piped.context == "reparse" else _flow_up(tree, site, command_node, command, placeholders, spans)
    word, leading = target
    index = next((i for i, w in enumerate(words) if w.id == word.id), None)
    if index is None:
        return site
    verdict = _classify(tree, words, index)
    if verdict is not None:
        kind, program, *rest = verdict
        if kind == "reparse":
            return Site(site.placeholder, "reparse", program,
                        fix=_positional_fix(tree, words, rest[0] if rest else None, command, placeholders, spans))
        if kind in ("name", "arithmetic"):
            return Site(site.placeholder, kind, program)
        if kind == "option" and leading:
            site = Site(site.placeholder, site.context, program,
                        option_at=_to_command(tree.span(word)[0], placeholders, spans, command))
    piped = _pipe(tree, site, command_node, command, placeholders, spans)
    return piped if piped.context == "reparse" else _flow_up(tree, site, command_node, command, placeholders, spans)


def _pipe(tree, site, command_node, command, placeholders, spans) -> Site:
    """Output piped (at any level: `! …`, `( … )`, `{ …; }`, `$(…)`) into a program that runs what it reads
    as code: the value becomes code there."""
    child = command_node
    for ancestor in _ancestors(command_node):
        if ancestor.type == "pipeline":
            after = False
            for part in ancestor.named_children:
                if part.id == child.id:
                    after = True
                elif after:
                    program = _reader_in(tree, part)
                    if program:
                        return Site(site.placeholder, "reparse", program)
        child = ancestor
    return site


def _reader_in(tree, node) -> str | None:
    """A program in node (at any depth) that runs its standard input as code."""
    stack = [node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            program = _stdin_program(tree, _words(node))
            if program:
                return program
        stack.extend(node.named_children)
    return None


def _flow_up(tree, site, node, command, placeholders, spans) -> Site:
    """Through an enclosing $(…) or `…`: its output is a word again, held to the same places."""
    for ancestor in _ancestors(node):
        if ancestor.type == "command_substitution":
            part = ancestor.parent if ancestor.parent.type == "string" else ancestor
            return _place(tree, site, part, False, command, placeholders, spans)
    return site


def _stdin_program(tree, words) -> str | None:
    """The program of words when it runs its standard input as code (a shell, python, ssh … with no script)."""
    frame = _unwrap(tree, words)
    if frame is None:
        return None
    words, _ = frame
    name = _literal(tree, words[0])
    program = os.path.basename(name) if name else None
    if program not in STDIN_INTERPRETERS:
        return None
    rest = [_literal(tree, w) for w in words[1:]]
    if program == "ssh":
        return program
    if program in SHELLS:
        options = [r for r in rest if r and r.startswith("-")]
        others = [r for r in rest if not (r and r.startswith("-"))]
        if any("c" in o[1:] for o in options if not o.startswith("--")):
            return None
        return program if not others or "-s" in options else None
    return program if all(r is not None and r.startswith("-") and r not in ("-c", "-e", "-r") for r in rest) or \
        (rest and rest[0] == "-") else None


def _unwrap(tree, words):
    """(words of the program that really runs, index of its name in the given words), past env, xargs, sudo, …"""
    offset = 0
    while words:
        name = _literal(tree, words[0])
        program = os.path.basename(name) if name else None
        if program not in WRAPPERS:
            return words, offset
        k = _wrapped_index(tree, words, program)
        if k is None or k >= len(words):
            return None
        words, offset = words[k:], offset + k
    return None


def _wrapped_index(tree, words, program) -> int | None:
    """Where the command a wrapper runs starts in words (None when it cannot be told)."""
    takes = WRAPPERS[program]
    i = 1
    while i < len(words):
        text = _literal(tree, words[i])
        if text is None:
            return i
        if text == "--":
            return i + 1
        if program == "env" and "=" in text and not text.startswith("-"):
            i += 1
            continue
        if text.startswith("-") and len(text) > 1:
            i += 2 if text in takes else 1
            continue
        if program == "timeout":  # the duration
            return i + 1
        return i
    return None


def _classify(tree, words, t):
    """For the word at index t of a simple command: ('reparse', program, script index) | ('option', program) |
    ('name'|'arithmetic', program) | None."""
    if t <= 0:
        return None
    name = _literal(tree, words[0])
    if name is None:
        return None
    program = os.path.basename(name)
    literals = [_literal(tree, w) for w in words]
    if program in WRAPPERS:
        k = _wrapped_index(tree, words, program)
        if k is None or t < k or (t == k and literals[k] is None):
            return _option(program, literals, t)
        return _shift(_classify(tree, words[k:], t - k), k)
    if program == "find":
        i = 1
        while i < len(words):
            if literals[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(words)) if literals[j] in (";", "+")), len(words))
                if i < t < end:
                    return _shift(_classify(tree, words[i + 1:end], t - i - 1), i + 1)
                i = end
            i += 1
        return _option(program, literals, t)
    if program == "eval" or program == "alias":
        return ("reparse", program, None)
    if program == "trap":  # trap [-lp] [--] ACTION SIGNAL…
        i = 1
        while i < len(words) and literals[i] is not None and literals[i].startswith("-") and literals[i] != "-":
            i += 1
            if literals[i - 1] == "--":
                break
        return ("reparse", program, None) if t == i else None
    if program in ("test", "[") and literals[t - 1] == "-v":
        return ("name", program)
    if program in SEDS:
        return _sed(tree, words, literals, t)
    if program in NAME_PROGRAMS:
        return (NAME_PROGRAMS[program], program)
    if program == "printf" and "-v" in literals[1:t] and literals.index("-v") == t - 1:
        return ("name", program)
    if program in SHELLS:
        i, command_flag = 1, False
        while i < len(words):
            text = literals[i]
            if text is None or not text.startswith(("-", "+")) or text in ("-", "--"):
                if text == "--":
                    i += 1
                break
            if not text.startswith("--") and "c" in text[1:]:
                command_flag = True
            i += 2 if text in ("-o", "+o", "-O", "+O") else 1
        if command_flag and t == i:
            return ("reparse", program, i)
        if t <= i and not command_flag:
            return _option(program, literals, t)
        return None
    if program in CODE_OPTIONS or program == "perl":
        for i in range(1, t):
            text = literals[i]
            if text is None:
                continue
            code = text in CODE_OPTIONS.get(program, ()) or (
                program == "perl" and text.startswith("-") and not text.startswith("--") and text[-1] in "eE")
            if code:
                return ("reparse", program, None) if t == i + 1 else None  # after the code: its arguments
            if any(text.startswith(o + "=") for o in CODE_OPTIONS.get(program, ()) if o.startswith("--")):
                return None
        return _option(program, literals, t)
    if program in AWKS:
        i = 1
        if any(text in ("-f", "--file") or (text or "").startswith("-f") for text in literals[1:]):
            return _option(program, literals, t)
        while i < len(words):
            text = literals[i]
            if text is None or not text.startswith("-") or text == "-":
                break
            if text == "--":
                i += 1
                break
            i += 2 if text in ("-F", "-v", "--assign", "--field-separator") else 1
        if t == i:
            return ("reparse", program, None)
        return _option(program, literals, t) if t < i else None
    if program == "ssh":
        i = 1
        while i < len(words):
            text = literals[i]
            if text is None or not text.startswith("-"):
                break
            if text == "--":
                i += 1
                break
            i += 2 if text in SSH_ARG_OPTIONS else 1
        if t > i:
            return ("reparse", program, None)
        return _option(program, literals, t)
    return _option(program, literals, t)


def _sed(tree, words, literals, t):
    """A value in sed's script (after -e/--expression, or its first operand when no -e or -f is given): GNU
    sed runs shell commands from a script (the e command, the e flag of s)."""
    scripts = False
    i, operand = 1, None
    while i < len(words):
        text = literals[i]
        if text is None:
            source = tree.source(words[i])
            if i == t and (source.startswith(("-e", "--expression", "--e")) or
                           (source.startswith("-") and not source.startswith("--") and "e" in source.split("{{")[0])):
                return ("reparse", "sed", None)
            operand = i if operand is None else operand
            i += 1
            continue
        if text == "--":
            operand = i + 1 if operand is None and i + 1 < len(words) else operand
            break
        if text == "-e" or (text.startswith("--e") and "=" not in text) or (
                text.startswith("-") and not text.startswith("--") and text.endswith("e")):
            scripts = True
            if t == i + 1:
                return ("reparse", "sed", None)
            i += 2
            continue
        if text.startswith(("--e", "-e")) or (text.startswith("-") and not text.startswith("--")
                                                         and "e" in text[1:]):
            scripts = True
        if text in ("-f", "--file") or text.startswith(("--file=", "-f")):
            scripts = True
        if text in SED_ARG_OPTIONS:
            i += 2
            continue
        if not text.startswith("-") or text == "-":
            operand = i if operand is None else operand
        i += 1
    if not scripts and operand == t:
        return ("reparse", "sed", None)
    return _option("sed", literals, t)


def _shift(verdict, k):
    if verdict is not None and verdict[0] == "reparse" and len(verdict) > 2 and verdict[2] is not None:
        return verdict[:2] + (verdict[2] + k,)
    return verdict


def _option(program, literals, t):
    if program in OPTION_PROGRAMS and "--" not in literals[1:t]:
        return ("option", program)
    return None


def _positional_fix(tree, words, script_index, command, placeholders, spans) -> tuple:
    """sh -c "… {{x}} …"  →  sh -c '… "$1" …' _ {{x}}: the script names the value, the value is an argument."""
    if script_index is None or script_index != len(words) - 1:
        return ()
    script = words[script_index]
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
