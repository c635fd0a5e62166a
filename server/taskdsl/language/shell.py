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
Anywhere else (the parser's error nodes, '…', ${…} operands, arithmetic, subscripts, names given to `let`,
`unset`, `read`, `wait -p`, …, a word with a brace expansion) it is TD801, and the runner refuses. A command the
grammar cannot parse is TD804, and so is one with a {{…}} and bash-only syntax that /bin/sh (dash) reads as
another command line (`[[ … ]]`, `(( … ))`, `$'…'`, coproc).

The shell expands such a reference exactly once and never parses the result again, so the value
reaches the program byte for byte, as one word. Programs that parse their arguments again (`eval`,
`sh -c`, `ssh HOST`, `python -c`, `awk` programs, a shell reading a pipe or a here-document, …)
would turn the value back into code: TD803. What each program does with its words is one table,
PROGRAMS (which options take a value, which values and operands are code, where a wrapped command
starts, whether it runs its standard input), read by one scanner (_scan) once per simple command;
wrappers are peeled by the same scanner, and a program named at run time fails closed (given arguments, for every
value of the command: it may be alias, trap, eval or .). A word's text is read as the shell hands it over
(_unquoted: sh -c "\\$1" runs $1), and literal code in any code position or variable read as code is read as shell
code for the variables it expands and the files it runs (_embedded_code). A value in
option position of a program whose options run commands (Program.exec_options) is TD805 as an
error; of one whose options write files (OPTION_PROGRAMS), TD805 as a warning; both with a fix
inserting `--`. A command that writes a value to a file (or exports one) never runs a file it writes: every file it
names as written is held to hold the value (_every_written: the value is not followed through each copy), and such
a file is code where a program runs it as a script, a program or a module, or is given it while not known to read
files only as data (DATA_READERS; _own_code_files, _file_hand_off). Each analysis is linear in the command's length
and its placeholders, but for a wrapper
option the table does not know, whose command is read from two places (at most WRAPPER_ALTERNATIVES deep). What
a placeholder needs from the nodes above it (quoting, arithmetic, the pipe or $(…) around it) is computed once per
node (_Tree.inherited) from a parent map built in one pass: the grammar nests `a && b && …` as deep as it is long,
and tree-sitter's Node.parent searches down from the root, so walking up from every placeholder would be cubic.
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
    "brace": ("in a word with a brace expansion ({a,b} or {1..3}), which bash (also as /bin/sh, in its POSIX mode) "
              "splits into several words: the value becomes a word of its own or part of several",
              "write the words out, or quote the braces: \"{a,b}\""),
    "name_option": ("where bash's printf or wait reads a leading '-' as an option, and -vNAME or -pNAME names a "
                    "variable whose subscript bash evaluates as arithmetic (a value -va[$(cmd)] runs cmd)",
                    "put -- before it, or give printf a fixed format before the value"),
    "name": ("where the shell reads a variable name (let, unset, read, declare, printf -v, wait -p, …)",
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
    "bash_test": "[[ … ]] and (( … )) are bash-only syntax that /bin/sh (dash on Debian and Ubuntu, which the runner "
                 "runs) reads as a command line of its own: || && & ; end the command there (a value after them runs "
                 "as a program), < > << redirect (a value after them names a file that is read or emptied; << "
                 "swallows the lines after it): in a command with a {{…}}, write the test as [ … ] (POSIX: "
                 "[ \"$a\" = b ]) and compute in a program that reads values as data",
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
    if site.context == "reparse" and site.program.startswith(HANDED):
        return (f"{shown} is handed on (in a variable, the positional parameters or a file the command writes) to "
                f"`{site.program[len(HANDED):]}`, which parses it again as code: the value would become code; keep "
                f"it out of code (pass it to a program as an argument it reads as data, and run no variable or file "
                f"that holds it)")
    if site.context == "reparse" and site.program.startswith("what reads $"):
        name = site.program[len("what reads $"):]
        return (f"{shown} is the value of ${name}, which the shell or a program reads as code (expanded, run or "
                f"loaded): the value would become code; pass it in a variable whose name has a lower-case letter, "
                f"or read it from ${env_name(site.placeholder) or INPUT_PREFIX + '<NAME>'}")
    if site.context == "reparse" and site.program.startswith(RUNS):
        return (f"{shown} is an argument of `{site.program[len(RUNS):]}`, which runs a command given after its own options and "
                f"operands: the checker cannot tell which word starts that command, and the value may become the "
                f"command, an option that names one, or code; the value would become code; write the command after "
                f"`--` or after the operands with no option before them (uv run -- python3 script.py \"$"
                f"{env_name(site.placeholder) or INPUT_PREFIX + '<NAME>'}\"), and pass the value as an argument the "
                f"command reads as data")
    if site.context == "reparse" and site.program.startswith(NAMED):
        return (f"{shown} is in a command that names a program at run time (`{site.program[len(NAMED):]}`), which may "
                f"be alias, trap, eval or . and make a later word of the command code: the value would become code; "
                f"name every program of the command in it")
    if site.context == "reparse" and site.program.startswith(REBOUND):
        return (f"{shown} is in a command that rebinds what a program name runs (`{site.program[len(REBOUND):]}`: "
                f"hash -p, BASH_CMDS, alias, enable -f, PATH or a variable that loads code, a file the command "
                f"writes run as a program, PS4 or PROMPT_COMMAND, history or fc): a later command may be a shell "
                f"that runs the value; the value would become code; name each program by its usual name and leave "
                f"PATH, the prompts, the history and the table alone")
    if site.context == "reparse" and site.program.startswith(ARITHMETIC_NAME):
        return (f"{shown} is in a command whose arithmetic names `{site.program[len(ARITHMETIC_NAME):]}`, whose value "
                f"the checker cannot show is a number: bash evaluates a name's value as an expression (a[$(cmd)] "
                f"runs cmd), and it may hold the value; the value would become code; compute in a program that reads "
                f"values as data (awk -v n=…, test \"$n\" -gt 3)")
    if site.context == "reparse" and site.program.startswith(OPAQUE_CODE):
        return (f"{shown} is in a command that runs literal code the checker cannot read as shell code "
                f"(`{site.program[len(OPAQUE_CODE):]}`) while it exports a value or writes the script it runs: that "
                f"code may run the value; the value would become code; pass the value as an argument the code "
                f"reads as data, and export no variable holding it")
    if site.context == "reparse" and site.program.startswith(ENV_SPLIT):
        return (f"{shown} is in a command that gives env -S a string with a backslash or $ "
                f"(`{site.program[len(ENV_SPLIT):]}`): env reads escapes of its own there (\\_ is a space, \\c ends "
                f"the string, ${{NAME}} expands), so the checker cannot tell what runs; the value would become code; "
                f"write the env -S string without \\ and $, or the command without env -S")
    if site.context == "reparse" and site.program.startswith(PRINTED_INTO):
        return (f"{shown} is in a command that exports a value (export, set -a, NAME=… before a program) and pipes "
                f"a program's output (or a here-document) into `{site.program[len(PRINTED_INTO):]}`, which runs its "
                f"standard input as code: "
                f"any program may print its environment (printenv NAME | sh); the value would become code; pass the "
                f"value as an argument the code reads as data, and export no variable holding it")
    if site.context == "reparse" and site.program.startswith(ASSIGNED):
        name = site.program[len(ASSIGNED):]
        return (f"{shown} stands where `{name}` reads NAME=VALUE assignments before its command (after -- too) or "
                f"the command itself: the value may set any variable (BASH_ENV, LD_PRELOAD) or name the program; the "
                f"value would become code; give the variable a fixed name ({name} NAME=\"${env_name(site.placeholder) or INPUT_PREFIX + '<NAME>'}\" …) "
                f"or pass the value as an argument of the command")
    if site.context == "reparse" and site.program.startswith(UNKNOWN_OPTION):
        shown_option = site.program[len(UNKNOWN_OPTION):]
        return (f"{shown} comes after `{shown_option}`, an option the checker does not know for this program, which "
                f"runs a command given after its own options: the option may take the next word or change what runs, "
                f"so the checker cannot tell which word is the command; the value would become code; use the options "
                f"docs/security.md lists for it, or write the command without the wrapper")
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
        if site.program == "make":
            how = (f"make expands $(…) in a variable assignment (NAME=…, NAME:=…; NAME!=… runs a command) and pastes a "
                   f"target's name into the recipes that build it ($@), which the shell runs; read the value in the "
                   f"Makefile's recipe from the environment, as \"$${variable}\"")
            return f"{shown} is {where}: the value would become code; {how}"
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


#: how a TD803 site's program says the value reached it handed on, not as written
HANDED = "handed on to "
#: how a TD803 site's program says the command around the value names a program at run time ($f …, "$@")
NAMED = "a command named at run time: "
#: how a TD803 site's program says the value is an argument of a wrapper of RUN_SUBCOMMANDS before its command
RUNS = "a wrapper: "


def _named_at_run_time(program: str) -> bool:
    """program is shown as written because the command names it with an expansion ("$SHELL", {{…}}) or a
    pattern (/bin/[s]h)."""
    return any(c in program for c in "$`\"'{") or _globbed(program)


def _globbed(word: str) -> bool:
    """A command word holding pattern characters: the shell names the program by matching files (fail closed)."""
    return word not in ("[", "[[") and any(c in word for c in "[?*")


#: other names of a program in the table
ALIASES = {"nodejs": "node", "gmake": "make", "ex": "vim", "view": "vim", "rvim": "vim", "vimdiff": "vim", "gvim": "vim"}


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
    # version, an architecture triple or a known build variant is that interpreter; another program whose name
    # merely starts with one (node-gyp, sh-keygen) is not
    found = max((reader for reader in INTERPRETERS if name.startswith(reader) and len(name) > len(reader) and
                 _BUILD_SUFFIX.fullmatch(name[len(reader):])), key=len, default=None)
    return found or name


#: what may follow an interpreter's name in the name of a build of it: versions (3.12, 5.36.0, -5.4, 3.7m, and the
#: free-threaded 3.13t, 3.13td),
#: architecture triples (-x86_64-linux-gnu, -aarch64-pc-linux-musl), build variants (-static, -dbg, .distrib)
BUILD_VARIANTS = "static dbg debug distrib minimal dyn shared real orig nox"
_BUILD_SUFFIX = re.compile(
    r"(?:[-_.]?[0-9][0-9.]*[dmut]*"
    r"|-(?:x86_64|x86-64|amd64|i[3-6]86|aarch64|arm64|arm[a-z0-9]*|riscv64|ppc64(?:le)?|s390x|mips[a-z0-9]*|"
    r"loongarch64)(?:-[a-z0-9_]+)*"
    r"|[-_.](?:" + BUILD_VARIANTS.replace(" ", "|") + "))+")


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
        """The smallest node holding start..end (tree-sitter's descendant_for_byte_range, which descends from the
        root at each call: a node of the exact range, or a token holding it, comes from maps built in one pass)."""
        a, b = self.byte(start), self.byte(end)
        exact = self.cache.get("ranges")
        if exact is None:
            exact, tokens, stack = {}, [], [self.root]
            while stack:
                node = stack.pop()
                if node.end_byte > node.start_byte:
                    exact[node.start_byte, node.end_byte] = node  # a child of the same range comes later: deeper
                    if node.child_count == 0:
                        tokens.append((node.start_byte, node.end_byte, node))
                stack.extend(reversed(node.children))
            tokens.sort(key=lambda token: token[0])
            self.cache["ranges"], self.cache["tokens"] = exact, (tokens, [token[0] for token in tokens])
        found = exact.get((a, b))
        if found is not None:
            return found
        tokens, starts = self.cache["tokens"]
        k = bisect.bisect_right(starts, a) - 1
        if k >= 0 and tokens[k][1] >= b and b > a:
            return tokens[k][2]
        return self.root.descendant_for_byte_range(a, b)

    def span(self, node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def source(self, node) -> str:
        a, b = self.span(node)
        return self.text[a:b]

    def starts(self, node, prefix: str) -> bool:
        """node's text starts with prefix (without copying the node's text)."""
        return self.text.startswith(prefix, self.char(node.start_byte))

    def parent(self, node):
        """node's parent, from a map built in one pass over the tree. tree-sitter's own Node.parent searches down
        from the root each time, so a walk up a deep tree (a long `a && b && …` list nests as deep as it is long)
        would cost its depth at every step."""
        parents = self.cache.get("parents")
        if parents is None:
            parents, stack = {}, [self.root]
            while stack:
                node_ = stack.pop()
                for child in node_.children:
                    parents[child.id] = node_
                    stack.append(child)
            self.cache["parents"] = parents
        return parents.get(node.id)

    def inherited(self, node, name: str, own):
        """A property node takes from its ancestors, computed once per node of the tree: own(tree, node, value of
        its parent) (None above the root). Every walk up the tree asks this instead of climbing from each
        placeholder, so the analysis stays linear in the command however deep the tree is."""
        memo = self.cache.setdefault(name, {})
        path = []
        while node is not None and node.id not in memo:
            path.append(node)
            node = self.parent(node)
        value = memo[node.id] if node is not None else None
        for part in reversed(path):
            value = own(self, part, value)
            memo[part.id] = value
        return value


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
        if placeholders and node.type == "command":  # bash -c 'coproc sh; …': in literal shell code too
            info = _command_info(tree, node)
            for word, verdict in zip(info.words, info.verdicts) if info is not None else ():
                code = _shell_code(tree, word, verdict)
                if code is not None and _coproc_in(code[1], 0):
                    return (*tree.span(word), "coproc")
        if placeholders and ((node.type == "test_command" and tree.starts(node, "[[")) or node.type ==
                             "c_style_for_statement" or (node.type == "compound_statement" and tree.starts(node, "(("))):
            return (*tree.span(node), "bash_test")
        if placeholders and node.type in ("number", "word") and tree.parent(node) is not None and \
                tree.parent(node).type == "command" and tree.source(node).isdigit() and \
                tree.text[tree.span(node)[1]:tree.span(node)[1] + 1] in ("<", ">"):
            return (*tree.span(node), "descriptor")
        if placeholders and node.type == "heredoc_redirect" and _heredoc_disagrees(tree, node):
            return (*tree.span(node), "heredoc")
        stack.extend((child, depth) for child in reversed(node.children))
    return _joins(tree) if placeholders else None


def _coproc_in(script: str, depth: int) -> bool:
    """Literal shell code (sh -c '…', eval '…', at any depth) that starts a coprocess; code nested too deep does
    (fail closed). Each text is parsed once per level it is written at."""
    if depth > MAX_NESTING:
        return True
    if "coproc" not in script:
        return False
    try:
        inner = _Tree(script)
    except RecursionError:
        return True
    stack = [inner.root]
    while stack:
        node = stack.pop()
        if node.type == "command_name" and inner.source(node) == "coproc":
            return True
        if node.type == "command":
            info = _command_info(inner, node)
            for word, verdict in zip(info.words, info.verdicts) if info is not None else ():
                code = _shell_code(inner, word, verdict)
                if code is not None and _coproc_in(code[1], depth + 1):
                    return True
        stack.extend(node.named_children)
    return False


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
            quoted, heredoc = tree.inherited(node, "joins", _quoting) if node is not None else (False, False)
            heredoc |= unquoted_heredoc
            # in an unquoted here-document the shell joins the lines before it looks for the end line: any
            # continuation there may move where the document ends (fail closed)
            if not quoted and (heredoc or (run > 0 and text[run - 1] not in " \t\n")):
                return at, at + 2, "heredoc_continuation" if heredoc else "continuation"
        at = text.find("\\\n", at + 1)
    return None


def _quoting(tree: _Tree, node, above) -> tuple[bool, bool]:
    """(inside '…', a comment or a quoted here-document; inside a here-document) for node and its ancestors."""
    quoted, heredoc = above or (False, False)
    quoted = quoted or node.type in ("raw_string", "comment") or (
        node.type == "heredoc_body" and _landing_quoted(tree, node))
    return quoted, heredoc or node.type in ("heredoc_body", "heredoc_redirect")


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
    redirect = tree.parent(body)
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
    handed = None
    for number, (ph, context, (start, end, _, _)) in enumerate(zip(placeholders, contexts, final_spans), 1):
        if context not in FORMS:
            result.append(Site(ph, context))
            continue
        site = _judge(final, ph, context, start, end, command, placeholders, final_spans)
        hidden = _hidden_reader(final) if site.safe and site.context != "comment" else None
        if hidden and not hidden.startswith(NAMED):
            site = Site(ph, "reparse", hidden)
        if site.safe and site.context != "comment":
            if handed is None:
                handed = _handed_on(final, command, placeholders, final_spans)
            later = handed.get(f"{SUB_PREFIX}{number}")
            if later is not None:
                program = later.program
                if later.context == "reparse" and not program.startswith(("what reads $", HANDED, ASSIGNED, UNKNOWN_OPTION)):
                    program = HANDED + program
                site = Site(ph, later.context, program, later.option_at)
        if hidden and site.safe and not (len(final.cache.get("own", ())) == 1 and final.cache["own"][0][0] < start
                                         and end < final.cache["own"][0][1]):
            # $say greet=eval: where no more precise finding holds (r={{x}}; $r: handed on); {{x}} --version alone
            # is the value naming the program
            site = Site(ph, "reparse", hidden)
        if site.safe and site.context != "comment":
            unknowable = _unknowable(final)
            if unknowable is not None:
                site = Site(ph, "reparse", unknowable)
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
    exact = node.type == "expansion" and _spans(tree, node, start, end) and node.named_child_count == 1 \
        and node.named_children[0].type == "variable_name"
    if not exact:
        kinds = tree.inherited(node, "kinds", _kinds)
        if "comment" in kinds:
            return "comment"
        if "heredoc_start" in kinds or "heredoc_end" in kinds:
            return "heredoc_word"
        if "heredoc_body" in kinds:
            return "quoted_heredoc"
        if "raw_string" in kinds or "ansi_c_string" in kinds:
            return "single"
        if "expansion" in kinds:
            return "parameter"
        return "unparsed"
    parent = tree.parent(node)
    if parent.type == "string":
        return "double"
    if parent.type == "heredoc_body":
        redirect = tree.parent(parent)
        start_node = next((c for c in redirect.children if c.type == "heredoc_start"), None) if redirect else None
        word = tree.source(start_node) if start_node is not None else "'"
        if any(q in word for q in "'\"\\"):
            return "quoted_heredoc"
        backticks = tree.cache.setdefault("backtick_bodies", {})
        if parent.id not in backticks:  # once per body: a document may hold many placeholders
            backticks[parent.id] = "`" in tree.source(parent)
        return "backtick" if backticks[parent.id] else "heredoc"
    return "bare"


#: the ancestors' types _landing asks about
_KIND_MARKS = frozenset("comment heredoc_start heredoc_end heredoc_body raw_string ansi_c_string expansion".split())


def _kinds(tree: _Tree, node, above) -> frozenset:
    """The types of _KIND_MARKS among node and its ancestors."""
    above = above or frozenset()
    return above | {node.type} if node.type in _KIND_MARKS and node.type not in above else above


def _spans(tree: _Tree, node, start: int, end: int) -> bool:
    """node is exactly the reference at start..end. tree-sitter-bash gives the second of two expansions in "…"
    that only blanks separate ("${A} ${B}") a range that starts at the blanks; they are the string's text."""
    a, b = tree.span(node)
    return b == end and a <= start and (a == start or (
        tree.parent(node) is not None and tree.parent(node).type == "string" and tree.text[a:start].strip(" \t") == ""))


def _in_backticks(tree: _Tree, node) -> bool:
    """node sits inside `…` (at any depth): the shell removes backslashes there before parsing, which the
    grammar does not model."""
    return tree.inherited(node, "backticks", lambda tree, part, above: bool(above) or (
        part.type == "command_substitution" and tree.starts(part, "`")))


def _judge(tree: _Tree, ph, context, start, end, command, placeholders, spans) -> Site:
    """Hold a reference of the text that runs to the positive list of safe places."""
    node = tree.at(start, end)
    if node is not None and _in_backticks(tree, node):
        return Site(ph, "backtick")
    if node is None or node.type != "expansion" or not _spans(tree, node, start, end):
        return Site(ph, "comment" if context == "comment" and _in_comment(tree, node) else "unparsed")
    evaluated = _evaluated(tree, node)
    if evaluated:
        return Site(ph, evaluated)
    parent = tree.parent(node)
    if parent.type == "heredoc_body":
        redirect = tree.parent(parent)
        runner = _fed_runner(tree, redirect)
        if runner:
            return Site(ph, "reparse", runner)
        return _flow(tree, Site(ph, "heredoc"), tree.parent(redirect), None, command, placeholders, spans)
    if parent.type != "string" or tree.text[tree.span(parent)[0]] != '"':
        return Site(ph, "unparsed")
    if tree.span(parent)[0] > 0 and tree.text[tree.span(parent)[0] - 1] == "$":
        return Site(ph, "unparsed")  # $"…": bash translates it first
    leading = parent.named_child(0).id == node.id and tree.span(node)[0] == tree.span(parent)[0] + 1
    return _place(tree, Site(ph, context), parent, leading, command, placeholders, spans)


def _evaluated(tree: _Tree, node) -> str | None:
    """'arithmetic' or 'parameter' when node sits (at any depth, through $(…) too) where bash evaluates
    text again: arithmetic, a subscript, a c-style for header, an operand of ${…}."""
    return tree.inherited(node, "evaluated", _evaluates)


def _evaluates(tree, node, above) -> str | None:
    parent = tree.parent(node)
    kind = parent.type if parent is not None else None
    if kind in ("arithmetic_expansion", "subscript"):
        return "arithmetic"
    if kind == "compound_statement" and tree.starts(parent, "(("):
        return "arithmetic"
    if kind == "c_style_for_statement" and node.type not in ("do_group", "compound_statement"):
        return "arithmetic"
    if kind == "expansion":
        return "parameter"
    return above


def _place(tree, site, part, leading, command, placeholders, spans) -> Site:
    """part (a "…" string, or a $(…)) carries the value into a word: is that word in a place where it is
    one word or literal text, and what does the program there do with it?"""
    ph = site.placeholder
    word = tree.parent(part) if tree.parent(part).type == "concatenation" else part
    leading = leading and tree.span(word)[0] == tree.span(part)[0]
    holder = tree.parent(word)
    kind = holder.type
    if _braced(tree, word) and not (kind == "variable_assignment" and tree.parent(holder) is not None and
                                    tree.parent(holder).type != "declaration_command"):
        return Site(ph, "brace")  # env {sh,-c,{{x}}}: bash makes the value a word of its own (a = {…} is not expanded)
    if kind == "command" and word.id != (holder.child_by_field_name("name") or word).id:
        return _flow(tree, site, holder, (word, leading), command, placeholders, spans)
    if kind == "command_name":
        return _flow(tree, site, tree.parent(holder), None, command, placeholders, spans)
    if kind == "herestring_redirect":
        runner = _fed_runner(tree, holder)
        if runner:
            return Site(ph, "reparse", runner)
        statement = tree.parent(holder)
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
        if name in _integer_names(tree):  # declare -i n; n={{x}}: bash evaluates the value as arithmetic
            return Site(ph, "arithmetic")
        declaration = tree.parent(holder)
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
    if kind == "unary_expression" and tree.source(holder.children[0]) == "!" and tree.parent(holder) is not None and \
            tree.parent(holder).type == "binary_expression":
        # [[ ! {{x}} -eq 3 ]]: the grammar reads `! {{x}}` as the left operand, bash negates the comparison, whose
        # operand the value is (an arithmetic one here)
        holder, kind = tree.parent(holder), "binary_expression"
    if kind == "binary_expression" and _in_test(tree, holder):
        operator = holder.child_by_field_name("operator")
        if operator is not None and tree.source(operator) in STRING_TEST_OPERATORS:
            return _flow_up(tree, site, holder, command, placeholders, spans)
        return Site(ph, "arithmetic")
    if kind == "unary_expression" and _in_test(tree, holder):
        if tree.source(holder.children[0]) == "-v":
            return Site(ph, "name")
        return _flow_up(tree, site, holder, command, placeholders, spans)
    if kind in ("declaration_command", "unset_command"):
        return Site(ph, "name")
    return Site(ph, "unparsed")


def _integer_names(tree) -> frozenset:
    """Variables the command gives the integer attribute (declare -i n, local -i n, typeset -i n): an assignment
    to one anywhere is arithmetic."""
    if "integer" not in tree.cache:
        found, stack = set(), [tree.root]
        while stack:
            node = stack.pop()
            if node.type == "declaration_command" and any(
                    tree.source(c).startswith("-") and "i" in tree.source(c) for c in node.named_children
                    if c.type == "word"):
                for c in node.named_children:
                    target = c.child_by_field_name("name") if c.type == "variable_assignment" else c
                    if target is not None and target.type in ("variable_name", "word") and \
                            not tree.source(target).startswith(("-", "+")):
                        found.add(tree.source(target))
            stack.extend(node.named_children)
        tree.cache["integer"] = frozenset(found)
    return tree.cache["integer"]


def _braced(tree, word) -> bool:
    """A word bash may brace-expand: an unquoted `{` before an unquoted `}` in its literal parts, or a {a..b}. It
    becomes several words there (env {sh,-c,{{x}}} runs sh -c VALUE; sh {-c,}{{x}} makes the value the script), in
    bash and in its POSIX mode, /bin/sh on systems where that is bash (fail closed: commas are not counted)."""
    parts = word.named_children if word.type == "concatenation" else [word]
    text = []
    for part in parts:
        if part.type == "brace_expression":
            return True
        text.append(re.sub(r"\\.", "", tree.source(part)) if part.type == "word" else "\0")
    joined = "".join(text)
    opened = joined.find("{")
    return opened >= 0 and "}" in joined[opened + 1:]


def _in_comment(tree, node) -> bool:
    return node is not None and "comment" in tree.inherited(node, "kinds", _kinds)


def _in_test(tree, node) -> bool:
    while node is not None and node.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
        node = tree.parent(node)
    return node is not None and node.type == "test_command"


_BARE_ESCAPE = re.compile(r"\\(\n|.?)", re.S)
_DOUBLE_ESCAPE = re.compile(r'\\([$`"\\\n])')


def _unquoted(text: str, double: bool) -> str:
    """The text the shell makes of a word's source after it removed the quoting: outside quotes a backslash keeps the
    next character (and joins lines); inside "…" only before $ ` " \\ and a newline. Every reading of a word's text
    (as a name, an option, or code: sh -c "\\$1") goes through here, by way of _literal and _prefix."""
    return (_DOUBLE_ESCAPE if double else _BARE_ESCAPE).sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _literal(tree: _Tree, node) -> str | None:
    """The text a word stands for when it holds no expansion (quoting removed: _unquoted), else None."""
    if node.type == "word":
        text = tree.source(node)
        return _unquoted(text, False) if "$" not in text and "`" not in text else None
    if node.type == "raw_string":
        return tree.source(node)[1:-1]
    if node.type == "string":
        if all(c.type == "string_content" for c in node.named_children):
            return _unquoted(tree.source(node)[1:-1], True)
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
        if kind in ("name", "arithmetic", "name_option"):
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
    program = tree.inherited(command_node, "piped", _piped)
    return Site(site.placeholder, "reparse", program) if program else site


def _piped(tree, node, above) -> str | None:
    """The first program after node in the innermost pipeline holding it that runs its standard input as code,
    else what node's parent is piped into."""
    parent = tree.parent(node)
    if parent is not None and parent.type == "pipeline":
        return _readers_after(tree, parent).get(node.id) or above
    return above


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
    top = tree.inherited(redirect, "statement", _statement)
    runner = _runner_in(tree, top)
    if runner is None and _exec_redirect(tree, redirect):
        runner = _runner_in(tree, tree.root)
    return runner


def _statement(tree, node, above):
    """The statement of the whole command (a child of the program node) that holds node."""
    parent = tree.parent(node)
    return node if parent is None or parent.type == "program" else above


def _exec_redirect(tree, redirect) -> bool:
    statement = tree.parent(redirect)
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
    # the name after unquoting ("f", \f); behind eval (also command eval, builtin eval), any word whose first
    # token names a function may call it (fail closed). command, builtin and exec never run a function: bash looks
    # the name up as a program (or a builtin) there
    words = [_literal(tree, w) for w in info.words]
    k = 0
    while k < len(words) and (words[k] in ("command", "builtin", "exec") or (k and (words[k] or "").startswith("-"))):
        k += 1
    named = [tree.source(info.words[0]), words[0] or ""] if k == 0 else []
    if k < len(words) and words[k] == "eval":
        named += [token for text in words[k + 1:] if text for token in text.split()[:1]]
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
                found = _reads_through_substitution(tree, info) or _relative_script_after_cd(tree, info) or \
                    _command_code_reader([_literal(tree, w) for w in info.words], info.verdicts)
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
    """cd /dev && bash stdin: after a change of directory a relative script path may name standard input. Fail
    closed for a program that runs a script file, given a relative path, in a command that changes directory to a
    place not written in the command or under /dev, /proc or /sys, or when the relative path is a name standard
    input has in such a folder (stdin, 0, fd/0, a pattern)."""
    literals = [_literal(tree, w) for w in info.words]
    for k, text in enumerate(literals):  # the program, or the one a wrapper runs (env -C /dev sh stdin)
        program = _program_name(text or "")
        if program in SCRIPT_READERS or program in FILE_CODE_READERS:
            break
        spec = PROGRAMS.get(program)
        if k == 0 and (spec is None or spec.command_at is None) and program != "find":
            return None
    else:
        return None
    state = _changes_directory(tree)
    if state is None:
        return None
    operands = literals[k + 1:]
    if program not in SCRIPT_READERS:  # awk -f stdin, sed -f stdin, make -f stdin
        operands = [text for k, text in enumerate(operands) if k and operands[k - 1] in ("-f", "--file", "-x")] + [
            text[2:] for text in operands if text and text.startswith(("-f", "-x")) and len(text) > 2]
    if state == "linked" and any(text is None or (text and not text.startswith("-")) for text in operands):
        return program  # ln -s /dev/stdin s; … | sh s: any script path may be the link
    relative = [text for text in operands if text is not None and text and not text.startswith(("-", "/"))]
    if relative and (state == "unknown" or any(_stdin_name(text) for text in relative)):
        return program
    return None


def _stdin_name(path: str) -> bool:
    """A relative path that names standard input in some folder (/dev: stdin, /dev/fd: 0, /proc/self: fd/0)."""
    parts = [part for part in path.split("/") if part and part != "."]
    return _globbed(path) or not parts or parts[-1] == "stdin" or parts[-1].isdigit() or "fd" in parts[:-1]


#: folders where a relative name may be standard input (cd /dev && bash stdin)
DEVICE_FOLDERS = frozenset({"dev", "proc", "sys"})


def _under_device_folder(path: str) -> bool:
    parts = os.path.normpath(re.sub(r"/+", "/", path)).split("/")
    return path.startswith("/") and len(parts) > 1 and parts[1] in DEVICE_FOLDERS


#: options that make a program (and the command it runs) work in another folder: a cd for the script it reads
CHDIR_OPTIONS = {"env": ("-C", "--chdir"), "make": ("-C", "--directory"), "git": ("-C",), "sudo": ("-D", "--chdir"),
                 "tar": ("-C", "--directory"), "unshare": ("--wd",), "nsenter": ("--wd",)}
#: programs that make a link (ln -s /dev/stdin s: s is then standard input)
LINKERS = frozenset("ln link cp".split())


def _chdir_targets(tree, words) -> list | None:
    """The folders a folder-changing option names in words (env -C DIR, make --directory=DIR, git -C DIR; None
    for a folder named at run time), or None when there is none."""
    targets = None
    for k, word in enumerate(words):
        text = _literal(tree, word)
        options = CHDIR_OPTIONS.get(_program_name(text)) if text else None
        if not options:
            continue
        for j in range(k + 1, len(words)):
            option = _literal(tree, words[j])
            if option is None:
                continue
            head, equals, value = option.partition("=")
            if head in options and equals and head.startswith("--"):
                targets = (targets or []) + [value]
            elif option in options:
                targets = (targets or []) + [_literal(tree, words[j + 1]) if j + 1 < len(words) else None]
            elif any(option.startswith(o) and not o.startswith("--") and len(option) > len(o) for o in options):
                targets = (targets or []) + [option[2:]]  # make -C/dev
    return targets


def _links_device(tree, words) -> bool:
    """ln -s /dev/stdin s, cp -s /dev/fd/0 s: a link (or a copy of a device) the command makes, whose target is
    a device file or named at run time."""
    name = os.path.basename(_literal(tree, words[0]) or "") if words else ""
    if name not in LINKERS:
        return False
    texts = [_literal(tree, w) for w in words[1:]]
    if name == "cp" and not any(t and t.startswith("-") and not t.startswith("--") and "s" in t or
                                t in ("--symbolic-link",) for t in texts):
        return False  # cp /dev/stdin f copies the content: a file written, followed as such
    return any(t is None or _under_device_folder(t) or (not t.startswith("/") and _stdin_name(t)
                                                      and not t.startswith("-"))
               for t in texts if t is None or not t.startswith("-"))


def _find_roots_state(texts) -> str:
    """What find -execdir's folders are (_changes_directory): "known" when every root find searches is written in
    the command and no folder under it may be /dev, /proc or /sys; else "unknown" (/, .., a root named at run
    time)."""
    roots = []
    for text in texts:
        if text is not None and (text.startswith("-") or text in ("(", "!", "\\(")):
            break
        roots.append(text)
    return "unknown" if any(
        t is None or t.startswith("~") or _globbed(t) or _under_device_folder(t) or ".." in t.split("/") or
        (t.startswith("/") and os.path.normpath(t) == "/") for t in roots or ["."]) else "known"


def _changes_directory(tree) -> str | None:
    """None when the command changes no directory; "known" when every cd/pushd (or folder-changing option: env
    -C, make -C, git -C) names a folder written in the command outside /dev, /proc and /sys; "linked" when it
    makes a link to a device file or to a path named at run time (ln -s /dev/stdin s); else "unknown" (a target
    named at run time, cd alone, cd -, ~, popd)."""
    if "cd" not in tree.cache:
        rank = {None: 0, "known": 1, "unknown": 2, "linked": 3}
        found, stack = None, [tree.root]
        while stack and found != "linked":
            node = stack.pop()
            if node.type == "command":
                words = _words(node)
                name = os.path.basename(_literal(tree, words[0]) or "") if words else ""
                states = []
                targets = _chdir_targets(tree, words)
                if targets is not None:
                    states.append("unknown" if any(t is None or t.startswith("~") or _globbed(t) or
                                                   _under_device_folder(t) for t in targets) else "known")
                if _links_device(tree, words):
                    states.append("linked")
                if name == "find" and any(_literal(tree, w) in ("-execdir", "-okdir") for w in words[1:]):
                    # find -execdir: the command runs in the folder of each file found, anywhere under its roots
                    states.append(_find_roots_state([_literal(tree, w) for w in words[1:]]))
                if name in ("cd", "pushd", "popd"):
                    targets = [w for w in words[1:] if (_literal(tree, w) or "x")[:1] != "-" or
                               _literal(tree, w) == "-"]
                    texts = [_literal(tree, w) for w in targets]
                    states.append("unknown" if name == "popd" or not texts or any(
                        t is None or t == "-" or t.startswith("~") or _globbed(t) or _under_device_folder(t)
                        for t in texts) else "known")
                found = max([found, *states], key=rank.__getitem__)
            stack.extend(node.named_children)
        tree.cache["cd"] = found
    return tree.cache["cd"]


def _flow_up(tree, site, node, command, placeholders, spans) -> Site:
    """Through an enclosing $(…) or `…`: its output is a word again, held to the same places. Through an
    enclosing <(…): its output is a file the command around it reads (as a script: TD803), or its standard
    input (`sh < <(…)`); the value then flows on as that command's output would."""
    ancestor = tree.inherited(node, "substitution", _substitution)
    if ancestor is None:
        return site
    if ancestor.type == "command_substitution":
        part = tree.parent(ancestor) if tree.parent(ancestor).type == "string" else ancestor
        # its output may begin with the value: a word it begins is in option position like the value itself
        # (env "$(printf %s {{x}})" true with x=-Ssh… ran a command)
        return _place(tree, site, part, True, command, placeholders, spans)
    above = tree.parent(ancestor)
    holder = tree.parent(above) if above.type == "concatenation" else above
    if holder.type == "file_redirect":
        statement = tree.parent(holder)
        body = statement.child_by_field_name("body") if statement.type == "redirected_statement" else None
        info = _command_info(tree, body) if body is not None and body.type == "command" else None
    else:
        body = holder if holder.type == "command" else None
        info = _command_info(tree, body) if body is not None else None
        at = next((k for k, w in enumerate(info.words) if w.id == ancestor.id or w.id == above.id),
                  None) if info is not None else None
        after_f = at is not None and at > 0 and _literal(tree, info.words[at - 1]) in ("-f", "--file")
        if info is not None and info.program is not None and (after_f or  # awk -f <(…), sed -f, make -f
                _named_at_run_time(info.program) or os.path.basename(info.program) in SCRIPT_READERS):
            return Site(site.placeholder, "reparse", info.program)
        reader = _substitution_reader(tree, info, at)
        if reader is not None:  # crontab <(…), jq --from-file <(…), fish <(…): a file given to a program as code
            return Site(site.placeholder, "reparse", reader)
    if info is not None and info.stdin and holder.type == "file_redirect":
        return Site(site.placeholder, "reparse", info.program)
    if body is None:
        return site
    piped = _pipe(tree, site, body, command, placeholders, spans)
    return piped if piped.context == "reparse" else _flow_up(tree, site, body, command, placeholders, spans)


def _substitution_reader(tree, info, at) -> str | None:
    """The program that may read the file a <(…) holding a value stands for as code: the word is in a code position
    of the table (crontab FILE), or the program (behind its wrappers) is not known to read its files only as data
    (DATA_READERS) and does not place its code exactly (EXACT_READERS: jq's -f/--from-file is code, its data files
    are not). It is a file the command writes, judged as every written file is (_own_code_files)."""
    if info is None or at is None:
        return None
    verdict = info.verdicts[at]
    if verdict is not None and verdict[0] == "reparse":
        return verdict[1]
    cache = tree.cache.setdefault("substitution_readers", {})
    key = info.words[0].id
    if key not in cache:  # once per command: which of its words (written at run time) it may read as code
        literals = [_literal(tree, w) for w in info.words]
        literals = [text if text is not None or k == 0 else "\0word%d" % k for k, text in enumerate(literals)]
        start = _wrapped_at(literals) or 0
        name = _program_name(literals[start] or "")
        found = {int(path[len(GIVEN) + 5:]) for _, path in _own_code_files(name, literals[start:])
                 if path is not None and path.startswith(GIVEN + "\0word")}
        if start > 0 and literals[start].startswith("\0word"):
            found.add(start)
        cache[key] = (name, found)
    name, found = cache[key]
    return (name or None) if at in found else None


def _substitution(tree, node, above):
    """The innermost $(…), `…` or <(…) around node (not node itself), or None."""
    parent = tree.parent(node)
    if parent is not None and (parent.type == "command_substitution" or (
            parent.type == "process_substitution" and tree.starts(parent, "<("))):
        return parent
    return above


#: a word that expands to exactly one word: one quoted variable ("$f", "${TASKDSL_SUB_1}"), no "$@" or "${a[@]}"
_ONE_WORD = re.compile(r'"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})"\Z')


def _hidden_reader(tree) -> str | None:
    """A program anywhere in the command that runs as code what other commands write where it cannot be followed:
    inside >(…) (`exec > >(sh)`, `echo … > >(sh)`); or an alias definition (any command name may then be another
    program); or a program named at run time (NAMED: it may be alias, trap, eval or .). Every value of such a command is held to be code (fail closed)."""
    if "hidden" in tree.cache:
        return tree.cache["hidden"]
    found, stack, own = None, [tree.root], []
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
        if node.type == "declaration_command" and found is None and any(
                c.type == "word" and tree.source(c).startswith("-") and "n" in tree.source(c)
                for c in node.named_children):
            # declare -n p=GIT_SSH_COMMAND: p={{x}} assigns the variable read as code (fail closed: any target that
            # is one, or one named at run time)
            for c in node.named_children:
                value = c.child_by_field_name("value") if c.type == "variable_assignment" else None
                target = _literal(tree, value) if value is not None else None
                if value is not None and (target is None or _code_variable(target.split("[", 1)[0])):
                    found = f"what reads ${target or '…'}"
        if node.type == "command":  # alias s=sh: dash expands aliases in scripts, s -c … runs sh (fail closed)
            info = _command_info(tree, node)
            if info is not None and info.program == "alias" and any(
                    "=" in _prefix(tree, w) or _literal(tree, w) is None for w in info.words[1:]):
                found = "alias"
            # $say greet=eval, "$@", $c for c in trap …: a program named at run time may be alias, trap, eval or .,
            # whose literal arguments make a later word code (fail closed)
            first = _literal(tree, info.words[0]) if info is not None else None
            wrapped = first is not None and info.program is not None and info.program != _program_name(first) and \
                _named_at_run_time(info.program)  # command $say greet=eval: a wrapper's program
            if info is not None and found is None and (wrapped or _literal(tree, info.words[0]) is None and not (
                    len(info.words) == 1 and _ONE_WORD.match(tree.source(info.words[0])))):  # "$f" alone: no argument
                name = info.words[0] if not wrapped else next(
                    (w for w in info.words[1:] if _literal(tree, w) is None), info.words[0])
                source = tree.source(name)
                if re.fullmatch(r'"\$\{%s[0-9]+\}"' % SUB_PREFIX, source):
                    own.append(tree.span(name))  # {{x}} --version, nice {{x}}: the value names the program (below)
                elif wrapped:
                    found = NAMED + info.program
                else:
                    found = NAMED + ("{{…}}" if SUB_PREFIX in source else source)
            # command alias s=sh, builtin alias …, eval "alias s=sh": a wrapped alias definition (fail closed)
            if info is not None and found is None and _literal(tree, info.words[0]) in ALIAS_WRAPPERS and any(
                    (_literal(tree, w) or _prefix(tree, w)).split()[:1] == ["alias"] for w in info.words[1:]):
                found = "alias"
        stack.extend(node.named_children)
    if found is None and own:
        # commands named by a value alone ({{x}} --version): the value picks the program (any program, as {{x}}
        # alone), and its literal arguments hold no value; every OTHER value of the command is TD803
        found = NAMED + "{{…}}"
        tree.cache["own"] = own
    tree.cache["hidden"] = found
    return found


# ---------------------------------------------------------------- values handed on

#: node types that expand a variable
_EXPANSIONS = frozenset({"simple_expansion", "expansion"})
#: programs that copy, move or link a file (a value written to one file reaches the others)
COPIERS = frozenset("cp mv ln install rsync tee dd sponge cat".split())
#: output redirections that write a file
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})
#: where writing is no file a later command can read back
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: ${NAME:OFFSET} and ${NAME:OFFSET:LENGTH}, whose offset and length bash evaluates as arithmetic
_SUBSTRING = re.compile(r"\$\{[!#]?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*])(?:\[[^]]*\])?:(?![-=?+])")
#: the name taint is kept under for the positional parameters ($1, $@, $*, …)
POSITIONAL = "@"


def _expanded_name(tree, node) -> str | None:
    """The variable a $NAME or ${…} expands (positional parameters as POSITIONAL)."""
    for child in node.named_children:
        if child.type == "subscript":
            child = child.child_by_field_name("name") or child
        if child.type in ("variable_name", "special_variable_name"):
            name = tree.source(child)
            return POSITIONAL if name.isdigit() or name in ("@", "*") else name
        return None
    return None


_ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: ${NAME:=WORD} and ${NAME=WORD}, which assign WORD to NAME (when it is unset, or also when empty)
_DEFAULT_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")


def _wrapper_assignments(tree, words) -> list:
    """(name, word) for each NAME=VALUE a program that sets its command's environment (env, sudo) is given before
    the command (env r={{x}} sh -c 'eval "$r"', nice env -i r={{x}} …): the command it runs has the variable, as
    after the prefix r={{x}} sh …"""
    found = []
    k = 0
    while k < len(words):
        text = _literal(tree, words[k])
        spec = PROGRAMS.get(_program_name(text)) if text else None
        k += 1
        if spec is None or not spec.assigns:
            continue
        while k < len(words):
            source = tree.source(words[k])
            if source.startswith("-"):  # env -i, env -, env -u NAME, sudo -u USER
                k += 2 if len(source) == 2 and source[1:] in spec.args else 1
            elif _ASSIGNMENT_WORD.match(source):
                found.append((source.split("=", 1)[0], words[k]))
                k += 1
            else:
                break
    return found


def _handed_on(tree, command, placeholders, spans, initial: dict | None = None) -> dict:
    """Values the command hands on and runs later where the syntax still shows it: a variable assigned a value
    (r={{x}}, read, for r in, printf -v, export, a function's or set's positional parameters, transitively) and
    expanded later where code is read (eval "$r", "$@" as a command, $(( r ))), or a value written to a file that a
    program of the command then runs as a script or reads as code (… > f; sh f, . ./f, sh < f). Returns, per origin
    (TASKDSL_SUB_<n>, or a name of initial), the Site (context, program, option_at) it reaches."""
    expansions, assignments, arithmetic, calls, readers, functions, commands = [], [], [], [], [], set(), []
    printers = []  # pwd and dirs commands: what they print is $PWD or $DIRSTACK
    code_assignments = []  # variable assignments, whose literal value may be code (_embedded_code)
    stack = [tree.root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _EXPANSIONS:
            name = _expanded_name(tree, node)
            if name is not None:
                expansions.append((node, name))
        elif kind == "variable_assignment":
            code_assignments.append(node)
            target = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if target is not None and target.type == "subscript":
                target = target.child_by_field_name("name")
            if target is not None and value is not None:
                assignments.append((tree.source(target), value))
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None:
                for value in node.children_by_field_name("value"):
                    assignments.append((tree.source(variable), value))
                if not any(child.type == "in" for child in node.children):  # for a; do: over "$@"
                    assignments.append((tree.source(variable), frozenset({POSITIONAL})))
        elif kind == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                functions.add(tree.source(name))
        elif kind == "command":
            commands.append(node)
            words = _words(node)
            first = _literal(tree, words[0]) if words else None
            if first == "getopts":  # getopts SPEC NAME: NAME and OPTARG hold the positional parameters
                readers.extend(["OPTARG", *(text for text in (_literal(tree, w) for w in words[2:3]) if text)])
            if first == "set" and len(words) > 1:
                assignments.append((POSITIONAL, node))
            elif first in ("read", "mapfile", "readarray"):
                readers.extend(text for text in (_literal(tree, w) for w in words[1:]) if text and
                               text.replace("_", "").isalnum())
            elif first == "printf" and len(words) > 2 and _literal(tree, words[1]) == "-v":
                name = _literal(tree, words[2])
                if name:
                    assignments.append((name, node))
            elif first == "let":
                arithmetic.append(node)
            if _prints_folder(tree, words):  # pwd, dirs: print $PWD and $DIRSTACK (below)
                printers.append(node)
            elif first in ("cd", "pushd") and len(words) > 1:
                # cd {{x}}: $PWD, $OLDPWD (after the next cd), $DIRSTACK, pwd and dirs then hold the value
                for word in words[1:]:
                    assignments.extend((name, word) for name in FOLDER_VARIABLES)
            assignments.extend(_wrapper_assignments(tree, words))
            if first is not None and len(words) > 1:
                calls.append((first, node))
        elif kind in ("arithmetic_expansion", "subscript", "c_style_for_statement") or (
                kind == "compound_statement" and tree.source(node).startswith("((")):
            arithmetic.append(node)
        if kind == "expansion" and _SUBSTRING.match(tree.source(node)):  # ${s:r:1}: offset and length
            arithmetic.append(node)
        if kind == "expansion":
            assigned = _DEFAULT_ASSIGNMENT.match(tree.source(node))
            if assigned:  # ${s:=$r}, ${t=$r}: s and t are assigned the word when unset
                assignments.append((assigned.group(1), node))
        elif kind == "binary_expression" and _in_test(tree, node):
            operator = node.child_by_field_name("operator")
            if operator is not None and tree.source(operator) not in STRING_TEST_OPERATORS:
                arithmetic.append(node)
        elif kind == "declaration_command" and any(
                tree.source(c).startswith(("-", "+")) and "i" in tree.source(c) for c in node.named_children
                if c.type == "word"):
            arithmetic.append(node)
        if kind == "declaration_command" and any(tree.source(c).startswith("-") and "n" in tree.source(c)
                                                 for c in node.named_children if c.type == "word"):
            # declare -n ref=r: ref names another variable, which may hold a value (fail closed)
            for c in node.named_children:
                target = c.child_by_field_name("name") if c.type == "variable_assignment" else c
                if target is not None and target.type in ("variable_name", "word"):
                    readers.append(tree.source(target))
        stack.extend(node.named_children)
    assignments.extend((POSITIONAL, node) for name, node in calls if name in functions)  # f {{x}}: $1 in f
    readers.append("_")  # $_: the last word of the command before, which may be a value
    for node in commands:  # eval 'r2=$r' and trap '…' run in this shell: what their code assigns is assigned here
        info = _command_info(tree, node)
        for word, verdict in zip(info.words if info else (), info.verdicts if info else ()):
            code = _shell_code(tree, word, verdict)
            if code is not None and code[0] not in SHELLS:
                assigned, expanded = _code_assigns(code[1])
                assignments.extend((name, expanded) for name in assigned)

    # which names hold a value: references, what the command reads (fail closed), and what is assigned from them
    taint: dict = {}  # name → the origins whose values it may hold (a frozenset, or _ALL)
    for node, name in expansions:
        if name.startswith(SUB_PREFIX):
            taint.setdefault(name, frozenset({name}))
    for name in initial or ():
        taint.setdefault(name, frozenset({name}))
    if not taint:
        return {}
    every = list(taint)
    for name in readers:
        taint[name] = _ALL
    reads = []  # per assignment: the names its value expands
    readers_of: dict = {}
    for k, (name, value) in enumerate(assignments):
        inner, pending = set(), [value] if not isinstance(value, frozenset) else []
        inner.update(value if isinstance(value, frozenset) else ())
        while pending:
            part = pending.pop()
            if part.type in _EXPANSIONS:
                found = _expanded_name(tree, part)
                if found is not None:
                    inner.add(found)
            pending.extend(part.named_children)
        reads.append(inner)
        for found in inner:
            readers_of.setdefault(found, []).append(k)
    work = [k for k, inner in enumerate(reads) if inner & taint.keys()]
    while work:  # each name changes at most ORIGINS_KEPT + 1 times: linear
        k = work.pop()
        name, _ = assignments[k]
        origins = frozenset()
        for source in reads[k]:
            origins = _join(origins, taint.get(source, frozenset()))
            if origins is _ALL:
                break
        have = taint.get(name, frozenset())
        if have is _ALL or (origins is not _ALL and origins <= have):
            continue
        taint[name] = _join(have, origins)
        work.extend(readers_of.get(name, ()))

    found: dict = {}
    to_all: list = []

    def reach(origins, site):
        if origins is _ALL:
            to_all.append(site)
            return
        for origin in origins:
            found.setdefault(origin, site)

    for name, value in assignments:  # : "${GIT_SSH_COMMAND:=$s}", eval 'GIT_SSH_COMMAND=$s': a variable read as code
        if name in taint and (isinstance(value, frozenset) or value.type == "expansion") and \
                name not in _NOT_CODE_ASSIGNED and _code_variable(name):
            reach(taint[name], Site(placeholders[0] if placeholders else None, "reparse", f"what reads ${name}"))

    dummy = Site(placeholders[0] if placeholders else None, "bare")
    written = {span[1] for span in spans}  # where the references the command's placeholders became end
    for node, name in expansions:
        if name.startswith(SUB_PREFIX) and (tree.span(node)[1] in written or name not in taint):
            continue  # a reference is judged where it stands; $TASKDSL_SUB_1 written in the command is not one
        if name in taint:
            site = _sink(tree, node, name, dummy, command, placeholders, spans)
            if site is not None:
                reach(taint[name], site)
        elif node.type == "expansion" and tree.source(node).startswith("${!"):
            # ${!n}: the value of the variable n names, which may hold a value (fail closed)
            site = _sink(tree, node, name, dummy, command, placeholders, spans, indirect=False)
            if site is not None:
                reach(_ALL, site)
    names = frozenset(name for name in taint if not name.startswith(SUB_PREFIX))
    if names:  # eval 'eval "$r"', sh -c 'sh -c "$r"', trap '…' EXIT: code written in the command reads them
        for node in commands:
            info = _command_info(tree, node)
            for word, verdict in zip(info.words if info else (), info.verdicts if info else ()):
                code = _shell_code(tree, word, verdict)
                if code is not None:
                    program, text = code
                    for name in _code_uses_of(text, names, program in SHELLS):
                        reach(taint[name], Site(dummy.placeholder, "reparse", program))
        for node in commands + code_assignments:  # GIT_SSH_COMMAND='eval "$r"', ssh -o ProxyCommand='sh -c "$r"'
            for program, text in _embedded_code(tree, node):
                for name in _embedded_uses(text, names):
                    reach(taint[name], Site(dummy.placeholder, "reparse", program))
    for node in commands:  # eval "$c", eval "t=\\$$n", eval 'f() { sh; }': fail closed (below)
        info = _command_info(tree, node)
        for word, verdict in zip(info.words if info else (), info.verdicts if info else ()):
            if verdict is not None and verdict[0] == "reparse" and verdict[1] in IN_SHELL_CODE and (
                    _FUNCTION_DEFINITION.search(tree.source(word)) or _untracked_expansion(tree, word, taint)):
                reach(_ALL, Site(dummy.placeholder, "reparse", HANDED + verdict[1]))
    folder = frozenset()
    for name in FOLDER_VARIABLES:
        folder = _join(folder, taint.get(name, frozenset()))
    if folder:  # cd {{x}}; pwd | sh, sh -c "$(/bin/pwd)", sh -c "$(cd .; pwd)": what pwd prints flows on as printed
        for node in printers:
            site = _flow(tree, dummy, node, None, command, placeholders, spans)
            if site.context in _HANDED_CONTEXTS:
                reach(folder, site)
    for node in arithmetic:  # $(( r )), let r+1, [[ r -gt 1 ]]: bash evaluates the value of r as an expression
        text = tree.source(node)
        if node.type == "c_style_for_statement":  # its header only
            body = node.child_by_field_name("body")
            text = tree.text[tree.span(node)[0]:tree.span(body)[0]] if body is not None else text
        elif node.type == "subscript":  # a[i]: the index
            index = node.child_by_field_name("index")
            text = tree.source(index) if index is not None else ""
        elif node.type == "expansion":  # ${s:r:1}: after the name
            text = text[_SUBSTRING.match(text).end():]
        names = {n for n in _IDENTIFIER.findall(text) if n in taint and not n.startswith(SUB_PREFIX)}
        for name in names:
            reach(taint[name], Site(dummy.placeholder, "arithmetic"))
    if placeholders or initial:
        program = _file_hand_off(tree, taint)
        if program is not None:
            reach(_ALL, Site(dummy.placeholder, "reparse", program))
    if to_all:
        for origin in every:
            found.setdefault(origin, to_all[0])
    return found


#: names an assignment the analysis follows sets that no program reads as code (the positional parameters, getopts'
#: OPTARG, cd's folder variables: where they go on is followed on its own)
_NOT_CODE_ASSIGNED = frozenset({POSITIONAL, "OPTARG", "PWD", "OLDPWD", "DIRSTACK"})
#: the variables cd and pushd set from their folder (and pwd and dirs print: _prints_folder)
FOLDER_VARIABLES = ("PWD", "OLDPWD", "DIRSTACK")
#: eval code that may define a function (f() …, function f …): a call outside the code runs what it defines
_FUNCTION_DEFINITION = re.compile(r"\(\s*\)|\bfunction\b")
#: the eval rule (in a command that holds a value anywhere, eval code with an expansion, which may build a name or
#: print a value for another eval, or that defines a function, is held to run the value: fail closed) is applied in
#: _handed_on, where "holds a value" is known


def _untracked_expansion(tree, word, taint) -> bool:
    """word holds an expansion whose value the analysis does not follow: a variable that holds no value it knows of
    (it may have been built by eval code: eval "t=\\$$n"), a command's output ($(eval 'echo "$r"')), arithmetic.
    A placeholder's reference and a variable known to hold values are followed where they stand."""
    stack = [word]
    while stack:
        node = stack.pop()
        if node.type in _EXPANSIONS:
            name = _expanded_name(tree, node)
            if name is None or not (name.startswith(SUB_PREFIX) or name in taint):
                return True
        elif node.type in ("command_substitution", "process_substitution", "arithmetic_expansion"):
            return True
        stack.extend(node.named_children)
    return False


def _prints_folder(tree, words) -> bool:
    """A command (its words) that prints the current folder or the folder stack: pwd, /bin/pwd, dirs."""
    first = _literal(tree, words[0]) if words else None
    return first is not None and _program_name(first) in ("pwd", "dirs")


#: a name that may hold any value of the command (more origins than ORIGINS_KEPT, or read from input)
_ALL = frozenset({"\0all"})
#: how many origins a name keeps apart before it is held to hold them all
ORIGINS_KEPT = 16


def _join(a: frozenset, b: frozenset) -> frozenset:
    if a is _ALL or b is _ALL:
        return _ALL
    if a >= b:
        return a
    joined = a | b
    return _ALL if len(joined) > ORIGINS_KEPT else joined


def _ancestors(tree, node):
    node = tree.parent(node)
    while node is not None:
        yield node
        node = tree.parent(node)


def _sink(tree, node, name, site, command, placeholders, spans, indirect=True) -> Site | None:
    """Where an expansion of a variable holding a value puts it: a Site when that is code, an option or
    arithmetic; None when it stays data."""
    for ancestor in _ancestors(tree, node):  # ${y:-$r}: the value is (part of) the enclosing expansion's word
        if ancestor.type == "expansion":
            node = ancestor
        elif ancestor.type not in ("concatenation", "string", "word", "array"):
            break
    text = tree.source(node)
    if node.type == "expansion" and (indirect and text.startswith("${!") or "@P" in text or "@A" in text):
        return Site(site.placeholder, "reparse", text)  # ${!r}, ${r@P}: bash evaluates the value again
    evaluated = _evaluated(tree, node)
    if evaluated == "arithmetic":
        return Site(site.placeholder, "arithmetic")
    parent = tree.parent(node)
    if parent is None:
        return None
    if parent.type == "heredoc_body":
        redirect = tree.parent(parent)
        runner = _fed_runner(tree, redirect)
        if runner:
            return Site(site.placeholder, "reparse", runner)
        verdict = _flow(tree, site, tree.parent(redirect), None, command, placeholders, spans)
        return verdict if verdict.context in _HANDED_CONTEXTS else None
    quoted = parent.type == "string"
    part = parent if quoted else node
    word = tree.parent(part) if tree.parent(part) is not None and tree.parent(part).type == "concatenation" else part
    holder = tree.parent(word)
    if holder is None:
        return None
    several = not quoted or name == POSITIONAL and ("@" in text or "*" in text) or "[@]" in text or "[*]" in text
    if holder.type == "command_name" and several:
        # "$@" or an unquoted $r as the command: the value may be a whole command (set -- sh -c {{x}}; "$@")
        return Site(site.placeholder, "reparse", text if not quoted else tree.source(parent))
    if holder.type == "command" and several and holder.child_by_field_name("name") is not None:
        program = _literal(tree, _words(holder)[0])
        spec = PROGRAMS.get(_program_name(program)) if program else None
        if program is None or (spec is not None and spec.command_at is not None) or program in ("find",):
            # nice $r: the split value may be the command a wrapper runs
            return Site(site.placeholder, "reparse", program or tree.source(_words(holder)[0]))
    leading = not quoted or (parent.named_child(0).id == node.id and tree.span(node)[0] == tree.span(parent)[0] + 1)
    verdict = _place(tree, site, part, leading, command, placeholders, spans)
    return verdict if verdict.context in _HANDED_CONTEXTS else None


#: programs whose code is a shell script (eval CODE, sh -c CODE, trap CODE SIGNAL, su -c CODE, …)
#: POSIX-style shells (their restricted forms rbash and rzsh still run any program on PATH; hush and ash are also
#: busybox's, sh toybox's)
SHELL_NAMES = "sh bash dash zsh ksh ash mksh yash rbash rzsh rksh hush posh lksh oksh pdksh".split()
SHELL_CODE_RUNNERS = frozenset(SHELL_NAMES + "eval trap su runuser sg script flock watch".split())


def _shell_code(tree, word, verdict) -> tuple[str, str] | None:
    """(program, text) when word is shell code written in the command (eval 'eval "$r"', sh -c 'sh f')."""
    if verdict is None or verdict[0] != "reparse" or verdict[1] not in SHELL_CODE_RUNNERS:
        return None
    text = _literal(tree, word)  # what the shell hands over: "\$r" is $r
    return None if text is None else (verdict[1], text)


#: a name no script can write: it stands for the names a script does not mention, which it reaches only where the
#: analysis fails closed for every name (${!n}, a file it runs)
_UNNAMED = "\0unnamed"


def _code_uses_of(script: str, names: frozenset, child: bool) -> frozenset:
    """_code_uses for the names the script mentions (and the positional parameters, unless the script runs in a
    child shell: sh -c), so each script is analysed in time linear in its own length, not in the number of names
    of the command around it (r={{x}}; eval 's0=$r'; eval 's1=$r'; …). Where the script reaches every name (fail
    closed), every name is used."""
    mentioned = {name for name in _IDENTIFIER.findall(script.replace("\\\n", "")) if name in names}
    if not child and POSITIONAL in names:
        mentioned.add(POSITIONAL)
    if _UNNAMED in names:
        mentioned.add(_UNNAMED)
    used = _code_uses(script, frozenset(mentioned | {_UNNAMED}))
    if _UNNAMED in used:
        return names if not child else names - {POSITIONAL}
    return used


@lru_cache(maxsize=256)
def _code_uses(script: str, names: frozenset) -> frozenset:
    """Of names (variables of the command around it that hold a value), those a shell script written in the
    command hands to code (eval 'eval "$r"'); a script the grammar cannot parse uses them all (fail closed)."""
    try:
        inner = _Tree(script)
        if inner.root.has_error or _joins(inner) is not None:  # eval 'eval "$r\⏎s"': the shell joins $rs
            return names
        return frozenset(_handed_on(inner, script, [], _Starts([]), initial=names)) & names
    except RecursionError:
        return names


@lru_cache(maxsize=256)
def _code_assigns(script: str) -> tuple[frozenset, frozenset]:
    """The variables shell code written in the command assigns (eval 'r2=$r': r2, also the positional parameters
    through set or a function call, fail closed), and every variable it expands; unparsable code assigns every
    name it mentions."""
    try:
        inner = _Tree(script)
    except RecursionError:
        inner = None
    names = frozenset(_IDENTIFIER.findall(script)) | {POSITIONAL}
    if inner is None or inner.root.has_error or _joins(inner) is not None:
        return names, names
    assigned, expanded, stack = set(), set(), [inner.root]
    while stack:
        node = stack.pop()
        if node.type in _EXPANSIONS:
            name = _expanded_name(inner, node)
            if name is not None:
                expanded.add(name)
            default = _DEFAULT_ASSIGNMENT.match(inner.source(node)) if node.type == "expansion" else None
            if default:  # eval ': ${s:=$r}'
                assigned.add(default.group(1))
        elif node.type in ("variable_assignment", "for_statement"):
            target = node.child_by_field_name("name" if node.type == "variable_assignment" else "variable")
            if target is not None and target.type == "subscript":
                target = target.child_by_field_name("name")
            if target is not None:
                assigned.add(inner.source(target))
            if node.type == "for_statement" and not any(child.type == "in" for child in node.children):
                expanded.add(POSITIONAL)  # eval 'for a; do …': a holds the positional parameters
        elif node.type == "command":
            words = [_literal(inner, w) for w in _words(node)]
            if words and words[0] in ("read", "mapfile", "readarray", "getopts", "declare", "typeset", "local",
                                      "export", "readonly", "printf"):
                assigned.update(w for w in words[1:] if w and w.replace("_", "").isalnum())
                assigned.add("OPTARG")
            elif words and words[0] in ("eval", "source", ".", "alias") or (words and words[0] is None):
                assigned.update(names)  # code again, or a command named at run time: anything (fail closed)
            elif words:
                assigned.add(POSITIONAL)  # set, or a call of a function: the positional parameters
        stack.extend(node.named_children)
    return frozenset(assigned), frozenset(expanded)


@lru_cache(maxsize=256)
def _code_files(script: str) -> tuple:
    """The files a shell script written in the command runs as code (sh -c 'sh f'): ((program, path), …), with
    (program, None) when it runs its standard input or a word the checker cannot see."""
    try:
        inner = _Tree(script)
        if inner.root.has_error:
            return (("sh", None),)
    except RecursionError:
        return (("sh", None),)
    code, stack = [], [inner.root]
    runner = _runner_in(inner, inner.root)
    if runner is not None:
        code.append((runner, None))
    while stack:
        node = stack.pop()
        if node.type == "command":
            info = _command_info(inner, node)
            if info is not None and info.words:
                _file_uses(inner, node, info, [], [], code)
                for word, verdict in zip(info.words, info.verdicts):
                    found = _shell_code(inner, word, verdict)
                    if found is not None:
                        code.extend(_code_files(found[1]))
        stack.extend(node.named_children)
    return tuple(code)


#: a long option's name before its code (--to-command=, --eval=) and an option letter with a setting (-oNAME=)
_CODE_OPTION = re.compile(r"--[A-Za-z][\w-]*=|-[A-Za-z](?=[A-Za-z_][\w.-]*=)")
#: a setting's name before its code (alias.x=, core.sshCommand=, ProxyCommand=, exec=)
_CODE_SETTING = re.compile(r"\A[A-Za-z_][\w.-]*=")


def _embedded_code(tree, node) -> list:
    """(program, text) for the literal code a command gives a code position that is not a shell's own -c, eval or trap
    (those: _shell_code), nor an interpreter's or awk's (their own language: _file_uses) – git -c alias.x='!sh f',
    tar --checkpoint-action=exec='sh f', ssh -o ProxyCommand='sh f', env -S 'sh f', make --eval=…, zip -TT 'sh f' –
    and the literal value of a variable read as code (GIT_SSH_COMMAND='sh f', env PAGER='sh f' …). Each text is read
    as shell code, like sh -c code, for the files it runs and the variables it expands; text the grammar cannot
    parse runs any file and reads any variable (fail closed)."""
    found = []
    if node.type == "variable_assignment":
        target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        text = _literal(tree, value) if target is not None and value is not None and \
            target.type == "variable_name" else None
        if text is not None and _code_variable(tree.source(target)):
            found.append((f"${tree.source(target)}", text))
        return found
    if node.type != "command":
        return found
    info = _command_info(tree, node)
    if info is None:
        return found
    for name, word in _wrapper_assignments(tree, info.words):  # env GIT_SSH_COMMAND='sh f' git fetch
        text = _literal(tree, word)
        if text is not None and _code_variable(name):
            found.append((f"${name}", text.split("=", 1)[1]))
    for k, (word, verdict) in enumerate(zip(info.words, info.verdicts)):
        text = _literal(tree, word)
        if text is not None and verdict is not None and verdict[1] == "git" and k > 1 and \
                _git_config_env(_literal(tree, info.words[k - 1])):
            text = "--config-env=" + text  # git --config-env NAME=VAR: the two-word form
        if text is None or verdict is None or verdict[0] != "reparse" or verdict[1] in SHELL_CODE_RUNNERS or \
                _program_name(verdict[1].split()[0]) in SCRIPT_READERS | FILE_CODE_READERS - {"make"} or \
                verdict[1].startswith(("what reads $", HANDED, RUNS)):
            continue
        if verdict[1] == "git" and text.startswith("--config-env="):  # NAME=VAR: git reads $VAR as the setting
            setting, _, variable = text[len("--config-env="):].partition("=")
            if setting.lower() not in GIT_DATA_SETTINGS:
                found.append(("git", f'eval "${{{variable}}}"' if _IDENTIFIER.fullmatch(variable) else "eval \"$@\""))
            continue
        if text.startswith("-"):  # --to-command=sh f, env -S'sh f': after the option
            option = _CODE_OPTION.match(text)
            text = text[option.end():] if option else text[2:]
        setting = _CODE_SETTING.match(text)
        if setting and (verdict[1] in ("ssh", "scp", "sftp") or (verdict[1] == "git" and "." in setting.group()) or
                        (verdict[1] == "tar" and setting.group() == "exec=")):
            text = text[setting.end():]  # ssh -o ProxyCommand=sh f, git -c alias.x=!sh f, tar … exec=sh f
        if verdict[1] == "make":  # make --eval: $$ is the shell's $
            text = text.replace("$$", "$")
        if verdict[1] in ("ssh", "scp", "sftp"):  # -o 'ProxyCommand sh f'
            text = re.sub(r"\A\s*(?:ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s+", "", text, flags=re.I)
        found.append((verdict[1], text.lstrip("!")))  # git's alias.x=!CMD
    return found


@lru_cache(maxsize=256)
def _unparsable(text: str) -> bool:
    try:
        inner = _Tree(text)
        return inner.root.has_error or _joins(inner) is not None
    except RecursionError:
        return True


def _embedded_files(program, text) -> list:
    """The files literal code of _embedded_code runs: read as shell code (_code_files); text the grammar cannot
    parse (JSON='{"a": 1}', LESSOPEN='|sh f') runs a written file whose name or stem it mentions, as interpreter code
    does (fail closed for the names it holds, not for every file)."""
    return [(program, "\0code" + text)] if _unparsable(text) else list(_code_files(text))


def _embedded_uses(text, names) -> frozenset:
    """Of names (variables holding a value), those literal code of _embedded_code hands to code: read as shell code
    run in a child process; text the grammar cannot parse uses every name it mentions (fail closed for them)."""
    if _unparsable(text):
        return frozenset(name for name in _IDENTIFIER.findall(text) if name in names)
    return _code_uses_of(text, names, True)


#: what a value handed on through a variable may become that the checker refuses
_HANDED_CONTEXTS = frozenset({"reparse", "option", "arithmetic", "name", "name_option"})


def _code_variable_file(name: str, path: str | None) -> list:
    """[(program, path)] when a variable read as code names a file (BASH_ENV=f, MAKEFILES=m.mk, PAGER=./p): the
    file is code; a path named at run time matches any written file for the listed variables (fail closed)."""
    if not _code_variable(name) or (path is None and name not in CODE_VARIABLES):
        return []
    return [(f"what reads the file ${name}", path)]


def _file_hand_off(tree, taint) -> str | None:
    """A value written to a file (> f, >> f, tee f, and on through cp, mv, cat … > g) that a program of the same
    command runs as a script or reads as code (sh f, . ./f, ./f, awk -f f, sh < f, cat f | sh, eval "$(cat f)"):
    the program, or None. Fail closed: a file named at run time matches any, and names match by their last part
    (a cd may come between)."""
    valued = set()
    stack = [tree.root]
    marks = []
    folder = any(name in taint for name in FOLDER_VARIABLES)
    while stack:
        node = stack.pop()
        if node.type in _EXPANSIONS and (_expanded_name(tree, node) or "") in taint:
            marks.append(node)
        elif folder and node.type == "command" and _prints_folder(tree, _words(node)):  # cd {{x}}; pwd > f
            marks.append(node)
        elif node.type == "heredoc_body" and any(c.type in _EXPANSIONS and (_expanded_name(tree, c) or "") in taint
                                                 for c in node.named_children):
            marks.append(node)
        stack.extend(node.named_children)
    if not marks:
        return None
    for node in marks:
        while node is not None and node.id not in valued:
            valued.add(node.id)
            node = tree.parent(node)
    valued.add(tree.root.id)
    outputs = []  # (scope node, written path or None) for every file written
    inputs = []  # (scope node, read path or None)
    code = []  # (program, path or None) a script or a file read as code
    owners = []  # per entry of code: the node of the command it came from
    stack = [(tree.root, False)]
    while stack:
        node, piped = stack.pop()
        owner = tree.parent(node).id if node.type == "variable_assignment" and tree.parent(node) is not None else \
            node.id
        # inside a pipeline, subshell or group that holds a value (printf %s {{x}} | ( cat > g )): every write there
        # may hold it (fail closed), whichever statement of it the write belongs to
        piped = piped or (node.type in _VALUE_SCOPES and node.id in valued)
        if node.type == "file_redirect":
            operator = next((tree.source(c) for c in node.children if not c.is_named), "")
            target = node.child_by_field_name("destination") or (node.named_children[-1] if node.named_children
                                                                   else None)
            path = _literal(tree, target) if target is not None else None
            scope = _scope(tree, node) if not piped else tree.root
            if operator in _WRITES and path not in _NOT_FILES:
                # exec > f: what every later command prints goes to f (fail closed: a value may be among it)
                outputs.append((tree.root if _exec_redirect(tree, node) else scope, path))
            elif operator == "<":
                inputs.append((scope, path))
                statement = tree.parent(node)
                body = statement.child_by_field_name("body") if statement is not None and \
                    statement.type == "redirected_statement" else None
                info = _command_info(tree, body) if body is not None and body.type == "command" else None
                if info is not None and info.stdin:  # sh < f: f is the script
                    code.append((info.program, path))
                elif info is not None and info.words:  # deno run - < f, lldb < f: read as any file it is given
                    code.extend(_stdin_code_file(tree, info, path))
        elif node.type == "variable_assignment":  # BASH_ENV=f bash -c …, export ENV=f: f is read as code
            target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if target is not None and value is not None:
                code.extend(_code_variable_file(tree.source(target), _literal(tree, value)))
            for program, text in _embedded_code(tree, node):  # GIT_SSH_COMMAND='sh f'
                code.extend(_embedded_files(program, text))
        elif node.type == "command":
            info = _command_info(tree, node)
            for name, word in _wrapper_assignments(tree, _words(node)):  # env BASH_ENV=f bash -c …
                text = _literal(tree, word)
                code.extend(_code_variable_file(name, text.split("=", 1)[1] if text is not None else None))
            if info is not None and info.words:
                for word, verdict in zip(info.words, info.verdicts):  # sh -c "$(cat f)": code the checker cannot see
                    if verdict is not None and verdict[0] == "reparse" and _literal(tree, word) is None:
                        code.append((verdict[1], None))
                        break
                _file_uses(tree, node, info, outputs, inputs, code, piped)
                for program, text in _embedded_code(tree, node):  # git -c alias.x='!sh f', env PAGER='sh f' …
                    code.extend(_embedded_files(program, text))
                for word, verdict in zip(info.words, info.verdicts):
                    found = _shell_code(tree, word, verdict)
                    if found is not None:  # sh -c 'sh f'
                        code.extend(_code_files(found[1]))
                        # sh -c 'printf %s "$1" > g' _ {{x}}: what the code writes, in the command's place
                        scope = _scope(tree, node) if not piped else tree.root
                        outputs.extend((scope, ANY_FILE + str(node.id) if path is not None and path.startswith(
                            ANY_FILE) else path) for path in _code_writes(found[1]))  # the command's own writer
        owners.extend([owner] * (len(code) - len(owners)))
        stack.extend((child, piped) for child in node.named_children)
    runner = _runner_in(tree, tree.root)
    read_by: dict = {}  # scope → the files it reads
    for scope, path in inputs:
        read_by.setdefault(scope.id, []).append(_file_key(path))
    written, changed, rounds = set(), True, 0
    while changed and rounds < 3:  # a file written from a written file is written too (cat a > b)
        changed, rounds = False, rounds + 1
        for scope, path in outputs:
            key = _file_key(path)
            if key in written:
                continue
            if scope.id in valued or (written and any(k == "*" or k in written for k in read_by.get(scope.id, ()))):
                written.add(key)
                changed = True
    if changed:
        written.add("*")
    if not written and outputs and _exports_value(tree, taint):
        # export r={{x}}; printenv r > g: every program the command runs is given the value in its environment
        written = {_file_key(path) for _, path in outputs}
    if not written:
        return None
    every = _every_written(outputs)
    if runner is not None and any(not key.startswith(ANY_FILE) for key in written):
        return runner  # sh < f, cat f | sh, eval "$(cat f)": fail closed once a value is written to a file
    stems = suffixes = None
    anys = {key[len(ANY_FILE):] for key in written if key.startswith(ANY_FILE)}
    held = written | every  # once a value is in a file, every file the command writes holds it (_every_written)
    held_anys = {key[len(ANY_FILE):] for key in held if key.startswith(ANY_FILE)}
    for (program, path), owner in zip(code, owners):
        if anys and not written - {ANY_FILE + str(owner)}:
            continue  # NODE_ENV={{x}} node app.js, awk -f p {{x}}: what the only writer runs, it read before writing
        if held_anys - {str(owner)} and not (path is not None and path.startswith("\0") and not path.startswith("\0code")):
            return program  # python3 gen.py {{x}}; sh f.sh: a file a program may have written, run
        if path is not None and path.startswith("\0code"):  # the code of python3 -c: it names a written file's stem
            if stems is None:
                stems = {key.split(".", 1)[0] for key in held if key != "*"}
            if "*" in held or stems & set(_IDENTIFIER.findall(path[5:])):
                return program
            continue
        if path is not None and path.startswith(GIVEN):  # fish g, R -f g: a written file given to the program
            key = _file_key(path[len(GIVEN):])
            if key in held or "*" in held:
                return program
            continue
        if path is not None and path.startswith(MODULE):  # a module an interpreter may load: by its suffix
            if suffixes is None:
                suffixes = {key[key.rfind("."):] for key in held if "." in key}
            if path[len(MODULE):] in suffixes:
                return program
            continue
        if path is not None and path.startswith("\0"):  # a bare command name
            if path[1:] in held:
                return program
            continue
        key = _file_key(path)
        if key == "*" or "*" in held or key in held:
            return program
    return None


def _exports_value(tree, taint) -> bool:
    """Whether the command hands a value to the environment of the programs it runs, where any of them may print it
    into a file (printenv r > g, env > g, sh -c 'printf %s "$r"' > g): a name holding a value exported (export r,
    declare -x, typeset -x, local -x, command export r), every assignment exported (set -a, set -o allexport), or a
    folder cd was given (PWD and OLDPWD are exported). A value assigned before a command (r={{x}} printenv r > g)
    is in that command's own statement, which holds the value already."""
    names = {name for name in taint if not name.startswith(SUB_PREFIX) and name not in (POSITIONAL, "_")}
    if not names:
        return False
    if "exports" in tree.cache:
        return tree.cache["exports"]
    found, stack = bool(names & {"PWD", "OLDPWD"}), [tree.root]
    while stack and not found:
        node = stack.pop()
        if node.type == "declaration_command" and node.children:
            flags = [tree.source(c) for c in node.named_children if c.type == "word"]
            if tree.source(node.children[0]) == "export" or any(f.startswith("-") and "x" in f for f in flags):
                for c in node.named_children:
                    target = c.child_by_field_name("name") if c.type == "variable_assignment" else c
                    found = found or (target is not None and target.type == "variable_name" and
                                      tree.source(target) in names)
        elif node.type == "command":
            literals = [_literal(tree, w) for w in _words(node)]
            if literals and literals[0] == "set":
                found = "allexport" in literals or any(
                    text is not None and text.startswith("-") and not text.startswith("--") and "a" in text
                    for text in literals[1:])
            elif literals and literals[0] in ("command", "builtin") and literals[1:2] == ["export"]:
                found = any(text is None or text.split("=", 1)[0] in names for text in literals[2:])
        stack.extend(node.named_children)
    tree.cache["exports"] = found
    return found


def _every_written(outputs) -> set:
    """Once a command writes a value (or anything made from one) to a file, every file it writes is held to hold the
    value, whatever it is written from: a copy through a pipe (cat f | cat > g, base64 f | base64 -d > g), dd if=f
    of=g, a function whose output is redirected (g() { cat f; }; g > h). Following the value through each copy is
    what lost it; this does not (fail closed). Every file the command names as written counts (a redirection, tee,
    dd of=, cp/mv/ln/install targets, xxd's output, what shell code in the command writes); a program that may write
    files under names of its own counts where it is given a value or a written file (ANY_FILE, above), not for
    every program that may write files (break, git, make: what a program reads by its own logic is beyond the
    syntax, docs/security.md "Not guaranteed"; counting them all refused FOO=bar beside any of them)."""
    return {key for key in (_file_key(path) for _, path in outputs) if not key.startswith(ANY_FILE)}


def _file_key(path: str | None) -> str:
    """How written and read files are matched: the last part of a path written in the command, "*" for one named
    at run time."""
    if path is None or _globbed(path):
        return "*"
    return os.path.basename(path.rstrip("/")) or path


def _scope(tree, node):
    """The statement a redirection or a command belongs to, with the pipeline it is part of."""
    while tree.parent(node) is not None and tree.parent(node).type not in (
            "program", "list", "compound_statement", "subshell", "do_group", "if_statement", "else_clause",
            "elif_clause", "case_item", "pipeline"):
        node = tree.parent(node)
    above = tree.parent(node)
    return above if above is not None and above.type == "pipeline" else node


def _file_uses(tree, node, info, outputs, inputs, code, piped=False):
    """What a command writes (tee f, cp a b), reads (cat f) and runs as code (sh f, ./f, . f, awk -f f, f)."""
    literals = [_literal(tree, w) for w in info.words]
    scope = _scope(tree, node) if not piped else tree.root
    first = literals[0]
    if first is None:
        return
    # ./f, or f found through $PATH: a file run as a program (a bare name matches only a file written under it)
    code.append((first, first if "/" in first else "\0" + first))
    name = _program_name(first)
    spec = PROGRAMS.get(name)
    inline = name in SHELL_CODE_RUNNERS and any(v is not None and v[0] == "reparse" and v[1] == name
                                                for v in info.verdicts)
    if not inline and _may_write_files(name, spec, literals) and not _called_functions(tree, info):
        # (a call of a function the command defines writes what its body writes, which is read where it stands)
        # (sh -c CODE, eval CODE: what the code writes is read from it, _code_writes; code the checker cannot see
        # is refused where it stands)
        # python3 gen.py {{x}}, curl -o g {{x}}, awk '{print > "g"}', split g part: a program may write files by its
        # own logic under names the checker does not see, from what it is given (fail closed: every name but what
        # the program itself runs, which it has read before it writes: NODE_ENV={{x}} node app.js)
        outputs.append((scope, ANY_FILE + str(node.id)))
    if spec is not None and (spec.load or spec.long_load):
        # node -r ./g.js, perl -I. -Mg, ruby -r ./g, gawk -i ./g.awk: a module may be a file the command wrote, under
        # a name the option does not spell out (fail closed: it matches any written file)
        for k, text in enumerate(literals[1:], 1):
            if text is None or not text.startswith("-") or text == "--":
                continue
            head = text.split("=", 1)[0]
            if (not head.startswith("--") and any(c in spec.load for c in head[1:])) or \
                    _long_option(head, spec) in spec.long_load:
                code.append((f"{name} {head}", None))
                break
    if name in COPIERS:
        operands = [text for text in literals[1:] if text is None or not text.startswith("-")]
        reader = tree.inherited(node, "piped", _piped) if name == "cat" else None
        for text in operands:
            inputs.append((scope, text))
            if reader:  # cat f | sh: f is the script
                code.append((reader, text))
            if name != "cat":
                outputs.append((scope, text))
        for text in literals[1:]:
            if text is not None and text.startswith("of="):
                outputs.append((scope, text[3:]))
        return
    if name in SCRIPT_READERS or name in FILE_CODE_READERS:
        # python3 p.py f: the files it is given it may read (and then write any file: _may_write_files)
        inputs.extend((scope, text) for text in literals[1:] if text is None or not text.startswith("-"))
        _script_operand(name, spec, literals, code)
        code.extend(_own_code_files(name, literals))
        if name not in SHELLS:  # python3 -c 'import g', perl -e 'use g': code that may load a written file
            for k, verdict in enumerate(info.verdicts):
                if verdict is not None and verdict[0] == "reparse" and verdict[1] == name:
                    code.append((name, "\0code" + (literals[k] or "")) if literals[k] is not None else (name, None))
        return
    if spec is not None and spec.command_at is not None or name in ("find", "xargs"):
        # a wrapper (timeout 5 sh f, env A=1 . ./f, find … -exec sh {} ;, xargs sh): fail closed, from every word
        # that names a program reading a script, and every path the wrapped command may be
        readers = 0
        start = 1 if name != "find" else next((k + 1 for k, text in enumerate(literals) if text in FIND_EXEC),
                                               len(literals))
        if name == "find" and any(literals[k - 1] in FIND_EXEC and (literals[k] is None or "{}" in literals[k])
                                  for k in range(2, len(literals))) or name == "xargs" and "{}" in literals:
            code.append((f"{name} -exec {{}}" if name == "find" else "xargs", None))  # find … -exec {} ;: the file found
        for k in range(start, len(literals)):
            text = literals[k]
            wrapped = _program_name(text) if text is not None else None
            if text is not None and "/" in text and not text.startswith("-"):
                code.append((text, text))
            if wrapped in SCRIPT_READERS or wrapped in FILE_CODE_READERS:
                inline = _script_operand(wrapped, PROGRAMS.get(wrapped), literals[k:], code)
                if name == "xargs" and not inline:  # xargs sh: the items it reads are its script's name
                    code.append((wrapped, None))
                readers += 1
                if readers > WRAPPER_ALTERNATIVES:  # env -C . sh g: "." may be an option's value, read on (bounded)
                    break
        starts = [k + 1 for k in range(1, len(literals) - 1) if literals[k] in FIND_EXEC] if name == "find" else \
            [_wrapped_at(literals)]
        for at in starts:  # timeout 5 fish f, sudo R -f f, find … -exec fish f ;: the command a wrapper runs
            if at is not None and literals[at] is not None:
                end = next((k for k in range(at + 1, len(literals)) if literals[k] in (";", "+")), len(literals)) \
                    if name == "find" else len(literals)
                code.extend(_own_code_files(_program_name(literals[at]), literals[at:end]))
        return
    inputs.extend((scope, text) for text in literals[1:] if text is None or not text.startswith("-"))
    outputs.extend((scope, text) for text in _written_operands(name, literals))
    code.extend(_own_code_files(name, literals))


#: programs known to read the files they are given only as data (never as code, by no option): a written file given
#: to any other program may be read as its code (fish f, csh f, pwsh -File f, R -f f, R CMD BATCH f, deno run f,
#: lldb -s f, mlr put -f f, gcc f.c …: fail closed). The programs whose code the table places exactly (the shells and
#: interpreters: their script; awk, sed, make: the file -f names; jq: -f/--from-file) read their other files as data
DATA_READERS = frozenset("""cat tac rev head tail wc grep egrep fgrep rg sort uniq cut tr paste join comm diff cmp
    sdiff sha1sum sha224sum sha256sum sha384sum sha512sum md5sum cksum b2sum sum base32 base64 basenc xxd od hexdump
    strings nl fold fmt column expand unexpand shuf tsort iconv file stat ls du test [ echo printf true false : touch
    mkdir rmdir rm chmod chown chgrp truncate cp mv ln link install rsync tee dd sponge less more realpath readlink
    basename dirname gzip gunzip zcat bzip2 bunzip2 bzcat xz unxz xzcat zstd unzstd tar zip unzip 7z 7za cpio ar split
    csplit patch git cd pushd popd dirs pwd wait kill sleep exit return shift set unset export local declare typeset
    readonly read mapfile readarray getopts printenv date seq expr id whoami hostname uname type which trap umask
    ulimit times jobs fg bg disown let""".split())
#: programs whose code file the table places exactly (_own_code_files): their other files are data
EXACT_READERS = frozenset("awk gawk mawk nawk sed gsed make jq gojq jaq yq".split())  # and SCRIPT_READERS
#: what an interpreter may load by its own logic from the folder it runs in (its script's folder is searched first
#: for python's imports, require('./…') for node): a written file with such a suffix is held to be code it runs
MODULE_FILES = {**{name: (".py", ".pyc", ".pth") for name in "python python2 python3 pypy pypy3".split()},
                **{name: (".pm", ".pl") for name in ("perl", "perl5")}, "ruby": (".rb",), "node": (".js", ".mjs", ".cjs", ".node"),
                "bun": (".js", ".mjs", ".cjs", ".ts"), "php": (".php", ".inc"), "lua": (".lua",), "Rscript": (".R",
                ".r"), "julia": (".jl",), "tclsh": (".tcl",), "expect": (".tcl", ".exp")}
#: how a file given to a program that may read it as code is written among the paths it reads as code: it matches a
#: file the command writes by name (or one named at run time), not every file a program may have written by its own
#: logic, which a program's own file operands are not (gcc -o app main.c; ./app {{x}})
GIVEN = "\0given"
#: how a module suffix is written among the paths a program reads as code
MODULE = "\0module"
#: the files make reads as its makefile when no -f names one
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


def _file_words(literals) -> list:
    """The words of a command that may name a file: operands, and the values of options written with `=`."""
    found = []
    for text in literals:
        if text is None or text == "--":
            continue
        if text.startswith("-"):
            if "=" in text:
                found.append(text.split("=", 1)[1])
            continue
        found.append(text)
    return found


def _own_code_files(name, literals) -> list:
    """[(program, path)] the files a command's program may read as code beyond its script (_script_operand): make's
    makefile when -f names none, jq's -f/--from-file; for a program not known to read files only as data
    (DATA_READERS) nor placed exactly (EXACT_READERS), every file it is given (fail closed)."""
    if name == "make":
        if any(text is not None and (text in ("-f", "--file", "--makefile") or text.startswith(
                ("-f", "--file=", "--makefile="))) for text in literals[1:]):
            return []
        return [(name, path) for path in MAKEFILES]
    if name in MODULE_FILES:  # python3 p.py after writing json.py: the script's folder comes first where it imports
        found = [(name, MODULE + suffix) for suffix in MODULE_FILES[name]]
        return found
    if name in FILTER_PROGRAMS:
        found = []
        for k, text in enumerate(literals[1:], 1):
            if text in _FILTER_FILE and k + 1 < len(literals):
                found.append((name, literals[k + 1]))
            elif text is not None and text.startswith("--from-file="):
                found.append((name, text.split("=", 1)[1]))
        return found
    if name in DATA_READERS or name in EXACT_READERS or name in SCRIPT_READERS or not name:
        return []
    return [(name, GIVEN + path) for path in _file_words(literals[1:])]


def _stdin_code_file(tree, info, path) -> list:
    """[(program, path)] when a file redirected to a command's standard input (< f) may be read as code: its program
    (or the one its wrappers run) is not known to read its input only as data (DATA_READERS, EXACT_READERS)."""
    literals = [_literal(tree, w) for w in info.words]
    at = _wrapped_at(literals) or 0
    name = _program_name(literals[at] or "")
    if name in DATA_READERS or name in EXACT_READERS or name in SCRIPT_READERS or not name:
        return []
    return [(name, GIVEN + path if path is not None else GIVEN + "*")]


def _written_operands(name, literals) -> list:
    """Files a program known to write nothing by its own logic writes because an operand names them: xxd IN OUT."""
    if name == "xxd":
        operands = [text for text in literals[1:] if text is None or not text.startswith("-")]
        return operands[1:2]
    return []


def _wrapped_at(literals) -> int | None:
    """Where the command a wrapper runs starts, read past the wrapper's options (and the values the table says they
    take), NAME=VALUE where it reads assignments, and the operands before its command (timeout 5 R -f f); a wrapped
    wrapper is read on (sudo nice R -f f). None when no word is known to start it."""
    at = 0
    for _ in range(MAX_NESTING):
        spec = PROGRAMS.get(_program_name(literals[at] or ""))
        if spec is None or spec.command_at is None:
            return at or None
        i, operands, n = at + 1, 0, len(literals)
        while i < n:
            text = literals[i]
            if text is None:
                return None
            if text.startswith("-") and len(text) > 1 and text != "--":
                i += 2 if (len(text) == 2 and text[1] in spec.args) or text in spec.long_args else 1
                continue
            if text == "--" or (spec.assigns and "=" in text):
                i += 1
                continue
            if operands == spec.command_at:
                break
            operands += 1
            i += 1
        if i >= n:
            return None
        at = i
    return None


#: programs that write files under names they choose (split's xaa, csplit's xx00, an archive's members, a patch's
#: files, a decompressed file's name): what they read may reach any file
NAMING_WRITERS = frozenset("""split csplit tar unzip 7z 7za cpio ar patch gunzip gzip bzip2 bunzip2 xz unxz zstd
    unzstd uudecode""".split())
#: programs known to write no file by their own logic (only to standard output, or files the command names in a
#: way the checker reads: cp, tee, > f); every other program given a value, or reading a written file, may write
#: any file (fail closed)
WRITES_NOTHING = frozenset("""echo printf cat true false test [ : ls grep egrep fgrep rg head tail wc cut tr jq yq
    basename dirname realpath readlink stat date sleep seq expr printenv pwd dirs cd pushd popd shift set unset
    export local declare typeset readonly read mapfile readarray getopts return exit wait kill mkdir rmdir rm
    touch chmod chown ln cp mv install tee dd sponge rsync column fold fmt nl od xxd hexdump base64 sha256sum
    sha1sum md5sum cksum b2sum diff cmp comm paste join rev tac file id whoami hostname uname command type
    hash which""".split())


def _may_write_files(name, spec, literals) -> bool:
    """Whether the program may write a file by its own logic: any but those of WRITES_NOTHING; a wrapper (timeout 5
    grep …) is judged by the command it runs (the word where the table says it starts, reading past options)."""
    if name in NAMING_WRITERS:
        return True
    if spec is not None and spec.command_at is not None and name not in ("xargs",):
        operands = [text for text in literals[1:] if text is not None and not text.startswith("-") and "=" not in text]
        wrapped = operands[spec.command_at] if len(operands) > spec.command_at else None
        if wrapped is None or None in literals[1:literals.index(wrapped) if wrapped in literals else None]:
            return True  # a word named at run time before the command may be it
        return _program_name(wrapped) not in WRITES_NOTHING
    return name not in WRITES_NOTHING


#: a written path that stands for every file but those its writer runs itself (ANY_FILE + the writer's node id)
ANY_FILE = "\0any"


#: where a value flows into every statement inside: a pipeline, a subshell, a group
_VALUE_SCOPES = frozenset("pipeline subshell compound_statement".split())


@lru_cache(maxsize=256)
def _code_writes(script: str) -> tuple:
    """The files shell code written in the command writes (sh -c 'cat > g', sh -c 'cp a g'): (path or None, …); code
    the grammar cannot parse writes a file named at run time (None)."""
    try:
        inner = _Tree(script)
        if inner.root.has_error:
            return (None,)
    except RecursionError:
        return (None,)
    outputs, stack = [], [inner.root]
    while stack:
        node = stack.pop()
        if node.type == "file_redirect":
            operator = next((inner.source(c) for c in node.children if not c.is_named), "")
            target = node.child_by_field_name("destination") or (node.named_children[-1] if node.named_children
                                                                   else None)
            path = _literal(inner, target) if target is not None else None
            if operator in _WRITES and path not in _NOT_FILES:
                outputs.append((None, path))
        elif node.type == "command":
            info = _command_info(inner, node)
            if info is not None and info.words:
                _file_uses(inner, node, info, outputs, [], [])
                for word, verdict in zip(info.words, info.verdicts):
                    found = _shell_code(inner, word, verdict)
                    if found is not None:
                        outputs.extend((None, path) for path in _code_writes(found[1]))
        stack.extend(node.named_children)
    return tuple(path for _, path in outputs)


#: programs that read code from a file an option names (awk -f, sed -f, make -f, gdb -x, vim -S)
FILE_CODE_READERS = frozenset("awk gawk mawk nawk sed gsed make gdb vim vi nvim".split())


#: options that name a script file for every program that reads one (sh -x f: the file after them is the script)
SCRIPT_FILE_OPTIONS = frozenset("-f --file -x --command -command".split())
#: vim -S FILE and -u FILE (the vimrc) source a script of ex commands; vim still reads its standard input as
#: commands after them (so they are not the table's script_args, which say where the code comes from instead)
VIM_SCRIPT_OPTIONS = frozenset("-S -u".split())


def _script_operand(name, spec, literals, code):
    """The script a program reads: its first operand (sh f, python3 f.py, . ./f), or what -f/-x names; True when the
    code is a word instead (sh -c …). Read past every option the program takes, + options of a shell included (sh +e
    f, bash +o posix f): a value that the table says an option takes is skipped with it; a shell's start file
    (--rcfile F, --init-file F) is code too; after a long option the program is not known to take without a value
    (bash --norc f is known; python3 --check-hash-based-pycs always f is not), every later word may be the script
    (fail closed)."""
    i, n, unknown = 1, len(literals), False
    options = SCRIPT_FILE_OPTIONS | (spec.script_args if spec is not None else frozenset()) | (
        VIM_SCRIPT_OPTIONS if name in VIMS else frozenset())
    plus = spec is not None and spec.plus
    while i < n:
        text = literals[i]
        if text is None or text == "{}":  # named at run time, or by find -exec
            code.append((name, None))
            return
        if unknown:  # after an option the table does not know: any later word may be the script
            code.append((name, text))
            i += 1
            continue
        if text == "--":
            if i + 1 < n and name in SCRIPT_READERS:
                code.append((name, literals[i + 1]))
            return
        head, equals, value = text.partition("=")
        if spec is not None and spec.long_only and head[:1] == "-" and head[:2] != "--" and len(head) > 2:
            head = "-" + head  # gdb -ix=f is --ix=f
        elif head[:2] in options and len(head) > 2 and head[:2] != "--" and not equals:  # awk -ff, gawk -Ef
            code.append((name, text[2:]))
            i += 1
            continue
        if head in options and equals:  # awk --exec=f, gdb -command=f
            code.append((name, value))
            i += 1
            continue
        if head in options and not equals and i + 1 < n:
            code.append((name, literals[i + 1]))
            i += 2
            continue
        if text.startswith("--") and spec is not None:
            i += _long_script_option(name, spec, head, bool(equals), value, literals[i + 1] if i + 1 < n else "",
                                     code)
            if i < 0:
                return True  # a long option whose value is code: the code is a word
            if not _known_long_flag(name, spec, head, bool(equals)):
                unknown = True
            continue
        if (text.startswith("-") and text != "-") or (plus and text.startswith("+") and len(text) > 1):
            letters = text[1:]
            cut = next((k for k, c in enumerate(letters) if spec is not None and c in spec.args), len(letters))
            if spec is not None and text[0] == "-" and (any(c in spec.code for c in letters[:cut + 1]) or
                                                        spec.flag_code and spec.flag_code in letters[:cut]):
                return True  # sh -c …, python3 -Ic …: the code is a word, not a file
            i += 2 if cut == len(letters) - 1 else 1  # an option's value: attached, or the next word
            continue
        if name in SCRIPT_READERS:
            code.append((name, text))
        return


#: long options of the shells known to take no value (any other long option may take the next word: fail closed)
SHELL_LONG_FLAGS = frozenset("""--norc --noprofile --login --posix --restricted --verbose --version --help
    --noediting --debugger --dump-strings --dump-po-strings --pretty-print --protected --rcs --emulate""".split())


def _long_script_option(name, spec, head, equals, value, following, code) -> int:
    """How many words a long option before the script takes (-1: its value is code, which is a word); a value that
    names a shell's start file (bash --rcfile F, --init-file F) is code too."""
    long = _long_option(head, spec)
    if long in spec.long_code:
        return -1
    if long in spec.long_args or long in spec.long_load:
        if name in SHELLS:  # bash --rcfile F f: F is read as code (interactive), f is the script
            code.append((name, value if equals else following))
        return 1 if equals else 2
    return 1


def _known_long_flag(name, spec, head, equals) -> bool:
    long = _long_option(head, spec)
    return equals or long in spec.long_args or long in spec.long_load or (name in SHELLS and long in SHELL_LONG_FLAGS)


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
    load: str = ""  # short options whose value names a module the program loads and runs (code, not the script)
    long_load: frozenset = frozenset()  # long options whose value names a module it loads (node --import=data:…)
    long_only: bool = False  # -NAME of more than one letter is the long option --NAME (getopt_long_only: gdb)
    aliases: tuple = ()  # (short letter, long option) pairs: two spellings of one option
    # a wrapper judged by an allowlist of its options (_wrapper_option): every other option fails closed
    flags: str | None = None  # short options that take no value (None: the wrapper's options are not judged)
    long_flags: frozenset = frozenset()  # long options that take no value (or only an attached =VALUE)
    optional: str = ""  # short options whose value, if any, is glued to them (xargs -i{}, -e, -l)
    shell_flags: str = ""  # short options that make it run its command through a shell (sudo -s, -i)
    long_shell_flags: frozenset = frozenset()


#: which fields say the same of a short option and a long one, strongest first: an option spelt both ways is
#: what the stronger spelling says (wget -e is --execute)
_SPELLINGS = (("code", "long_code"), ("load", "long_load"), ("args", "long_args"))


def _p(**kw) -> Program:
    """A table entry. aliases ("e=--execute O=--output-document") names the two spellings of an option once: both
    get what either is listed as, so a short option and its long form cannot disagree. A module option's long
    form also takes a value."""
    for key in ("long_args", "long_code", "script_args", "long_load", "long_flags", "long_shell_flags"):
        kw[key] = frozenset(kw.get(key, "").split())
    pairs = tuple(tuple(pair.split("=", 1)) for pair in kw.pop("aliases", "").split())
    for short, long in pairs:
        for short_key, long_key in _SPELLINGS:
            if short in kw.get(short_key, "") or long in kw[long_key]:
                kw[short_key] = kw.get(short_key, "") + (short if short not in kw.get(short_key, "") else "")
                kw[long_key] = kw[long_key] | {long}
                break
        else:
            kw["args"] = kw.get("args", "") + short  # listed only as a pair: an option that takes a value
            kw["long_args"] = kw["long_args"] | {long}
    kw["args"] = kw.get("args", "") + "".join(c for c in kw.get("load", "") if c not in kw.get("args", ""))
    kw["long_args"] = kw["long_args"] | kw["long_load"]
    return Program(aliases=pairs, **kw)


_SHELL = _p(args="oO", long_args="--rcfile --init-file", flag_code="c", stdin=True, stdin_flags="s", gnu=False,
            exec_options=True, plus=True)
#: python -W ACTION:MESSAGE:module.Category imports the category's module (any module the value names runs)
_PYTHON = _p(args="XQm", code="c", load="W", stops="cm", stdin=True, gnu=False, exec_options=True)
_AWK = _p(args="vFfE", code="e", load="il", first_code=True, exec_options=True, gnu=False,
          script_args="-f --file -E --exec",
          aliases="f=--file E=--exec v=--assign F=--field-separator e=--source i=--include l=--load")
#: Sources: GTFOBins (https://gtfobins.github.io, "Command", "Shell", "Sudo") and SonarSource's argument
#: injection vectors (https://sonarsource.github.io/argument-injection-vectors/).
PROGRAMS = {
    **{name: _SHELL for name in SHELL_NAMES},
    **{name: _PYTHON for name in "python python2 python3 pypy pypy3".split()},
    **{name: _AWK for name in "awk gawk mawk nawk".split()},
    # a module option names code the program loads and runs: perl -M, ruby -r, lua -l, node --import (a data: URL
    # is code itself), php -d (auto_prepend_file=…, extension=…)
    "perl": _p(args="I", code="eE", load="Mm", stdin=True, exec_options=True),
    "ruby": _p(args="ICFEKx", code="e", load="r", stdin=True, exec_options=True),
    "node": _p(code="ep", load="r", long_load="--import --loader --experimental-loader", stdin=True, gnu=False,
               exec_options=True, aliases="e=--eval p=--print r=--require C=--conditions",
               # options known to take no value: after any other long option the next word may be its value
               long_flags="--no-warnings --no-deprecation --trace-warnings --trace-deprecation --throw-deprecation "
               "--enable-source-maps --expose-gc --preserve-symlinks --preserve-symlinks-main --abort-on-uncaught-"
               "exception --use-strict --frozen-intrinsics --trace-uncaught --no-experimental-fetch "
               "--experimental-vm-modules --experimental-modules --inspect --inspect-brk --check"),
    "php": _p(args="cfFtz", code="rBRE", load="d", stdin=True, exec_options=True,
              aliases="r=--run B=--process-begin R=--process-code E=--process-end F=--process-file d=--define "
                      "c=--php-ini f=--file z=--zend-extension t=--docroot"),
    "lua": _p(code="e", load="l", stdin=True, exec_options=True),
    # dc runs `!command`; m4 runs syscmd(…); R and osascript run code given with -e; mlr's verbs take DSL code
    # (put, filter: system(…)) anywhere among their operands; duckdb runs SQL (and .shell) like sqlite3
    "dc": _p(code="e", long_code="--expression", script_args="f --file", first_code=True, stdin=True,
             exec_options=True, aliases="e=--expression f=--file"),
    "m4": _p(args="DUIo", first_code=True, stdin=True, exec_options=True),
    "R": _p(code="e", stdin=True, exec_options=True),
    "osascript": _p(code="e", first_code=True, stdin=True, exec_options=True),
    # programs that run a command or code given to an option (GTFOBins): nc -e CMD, socat's EXEC:/SYSTEM: addresses
    # (every address is code: fail closed), gnuplot -e (its `system`), guile -c, erl -eval, elixir -e, lldb -o,
    # parallel's command template (every operand: it runs them through a shell)
    **{name: _p(args="pswiqWIOx", code="ec", long_code="--sh-exec --exec --lua-exec", exec_options=True, gnu=False)
       for name in "nc ncat netcat".split()},
    "socat": _p(all_code=True, gnu=False, exec_options=True),
    "gnuplot": _p(code="e", stdin=True, exec_options=True, gnu=False),
    "guile": _p(args="lLx", code="ce", stdin=True, exec_options=True),
    "erl": _p(long_code="-eval -s -run", gnu=False, exec_options=True),
    "elixir": _p(code="e", long_code="--eval", exec_options=True, gnu=False),
    "lldb": _p(code="oOsS", long_code="--one-line --one-line-before-file", exec_options=True),
    "parallel": _p(all_code=True, gnu=False, exec_options=True),
    "mlr": _p(all_code=True, gnu=False),
    "duckdb": _p(long_args="-c -cmd -s", long_code="-c -cmd -s", code_from=1, stdin=True, gnu=False),
    "eval": _p(all_code=True, gnu=False), "alias": _p(all_code=True, gnu=False),
    "watch": _p(args="nqd", long_args="--interval --differences", all_code=True, gnu=False),
    "su": _p(args="sgGw", code="c", long_code="--session-command", stdin=True, code_from=1,  # su USER ARG…: its shell's arguments
             aliases="c=--command s=--shell g=--group G=--supp-group w=--whitelist-environment"),
    # runuser -u USER CMD…: a wrapper (_wrapper_spec); runuser USER ARG…: its shell's arguments, as su
    "runuser": _p(args="sgGwu", code="c", long_code="--session-command", code_from=1, gnu=False, stdin=True,
                  stdin_always=True, flags="lmpfP", long_flags="--login --preserve-environment --fast --pty",
                  aliases="c=--command s=--shell g=--group G=--supp-group w=--whitelist-environment u=--user"),
    "sg": _p(code="c", code_from=1, gnu=False),
    # script without -c runs an interactive shell that reads its standard input as commands
    "script": _p(args="EIOTBmt", code="c", stdin=True, stdin_always=True, aliases="c=--command E=--echo I=--log-in O=--log-out "
                 "T=--log-timing B=--log-io m=--logging-format"),
    "crontab": _p(args="ucs", first_code=True, stdin=True, stdin_always=True),  # a schedule runs its command lines
    "ssh": _p(args="bcDEeFIiJLlmOopQRSWw", code="o", code_from=1, stdin=True, gnu=False, exec_options=True),
    "scp": _p(args="cDFiJlPS", code="oS", exec_options=True),
    "sftp": _p(args="BbcDFiJlPRs", code="oS", exec_options=True, script_args="-b"),  # sftp -b - : !cmd runs
    "git": _p(args="C", long_args="--git-dir --work-tree --namespace --exec-path", code="c",
              long_code="--config-env --upload-pack --receive-pack --exec", exec_options=True, subcommand=True),
    "tar": _p(args="bCfgHKLNTVX", code="IF", long_code="--use-compress-program --to-command --checkpoint-action "
              "--info-script --new-volume-script --rsh-command --rmt-command", exec_options=True,
              aliases="I=--use-compress-program F=--info-script F=--new-volume-script C=--directory f=--file "
                      "T=--files-from X=--exclude-from b=--blocking-factor g=--listed-incremental H=--format "
                      "K=--starting-file L=--tape-length N=--newer N=--after-date V=--label"),
    "rg": _p(args="ABCefgjmMrtTEd", long_args="--iglob --type-add --sort --sortr", long_code="--pre",
             exec_options=True, aliases="A=--after-context B=--before-context C=--context e=--regexp f=--file "
             "g=--glob j=--threads m=--max-count M=--max-columns r=--replace t=--type T=--type-not E=--encoding "
             "d=--max-depth"),
    "rsync": _p(args="BfMT", code="e", long_code="--rsync-path", exec_options=True,
                aliases="e=--rsh B=--block-size f=--filter M=--remote-option T=--temp-dir"),
    "zip": _p(args="bnt", long_code="-TT --unzip-command", exec_options=True),
    "sort": _p(args="kotST", long_code="--compress-program", exec_options=True,
               aliases="k=--key o=--output t=--field-separator S=--buffer-size T=--temporary-directory"),
    "man": _p(args="CMS", code="PpH", exec_options=True,
              aliases="P=--pager p=--preprocessor H=--html C=--config-file M=--manpath S=--sections"),
    "tcpdump": _p(args="BcCEFGiMmrsTVwWyZ", code="z", exec_options=True),
    # make: every operand is code, a target's name as much as an assignment. make expands $(shell …) in NAME=…,
    # NAME:=… (at once), NAME!=… runs a command, and a target's name is pasted into the recipes that build it ($@,
    # $*, $(MAKECMDGOALS)), which the shell runs. -j and -l take their number only when one follows: the word
    # after them may be an operand
    "make": _p(args="CfIoW", code="E", all_code=True, exec_options=True, script_args="-f --file --makefile",
               aliases="E=--eval C=--directory f=--file f=--makefile I=--include-dir o=--old-file o=--assume-old "
                       "W=--what-if W=--new-file W=--assume-new"),
    "wget": _p(args="OoaPUiBtTwQlARDXI", long_code="--use-askpass --execute", exec_options=True,
               aliases="e=--execute O=--output-document o=--output-file a=--append-output P=--directory-prefix "
                       "U=--user-agent i=--input-file B=--base t=--tries T=--timeout w=--wait Q=--quota l=--level "
                       "A=--accept R=--reject D=--domains X=--exclude-directories I=--include-directories"),
    "emacs": _p(long_code="--eval", exec_options=True, script_args="--script -l --load", args="l",
                aliases="l=--load"),
    # a wrapper's options are judged by an allowlist (flags=…): an option it does not list fails closed (env -P,
    # --argv0, sudo's options of another version), since it may take the next word or change what runs
    "env": _p(args="uC", code="S", command_at=0, gnu=False, exec_options=True, assigns=True, flags="i0v",
              long_flags="--ignore-environment --null --debug --help --version --default-signal --ignore-signal "
              "--block-signal --list-signal-handling", aliases="S=--split-string u=--unset C=--chdir"),
    # GNU xargs's --eof[=E], --replace[=R], --max-lines[=N] take their argument only after =: the next word is the
    # command (xargs --replace env sh -c '{}')
    "xargs": _p(args="adEILnPs", long_args="--arg-file --delimiter --max-args --max-procs --max-chars "
                "--process-slot-var", command_at=0, gnu=False, exec_options=True,
                flags="0rtpx", optional="iel", long_flags="--null --no-run-if-empty --verbose --interactive --exit "
                "--open-tty --show-limits --help --version --eof --replace --max-lines"),
    # sudo -s/-i and doas -s run the command through a shell, which parses its words again (and read their input)
    "sudo": _p(args="ugCDhprtUTc", command_at=0, gnu=False, assigns=True, stdin=True, flags="AbEHnPSkKlvBeNV",
               shell_flags="si", long_shell_flags="--shell --login",
               long_flags="--askpass --background --preserve-env --set-home --non-interactive --preserve-groups "
               "--stdin --reset-timestamp --remove-timestamp --list --validate --bell --edit --help --version",
               aliases="u=--user g=--group C=--close-from D=--chdir h=--host p=--prompt r=--role t=--type "
                       "U=--other-user T=--command-timeout R=--chroot"),
    "doas": _p(args="uC", command_at=0, gnu=False, stdin=True, flags="nL", shell_flags="s"),
    "command": _p(command_at=0, gnu=False, flags="pvV"), "exec": _p(args="a", command_at=0, gnu=False, flags="cl"),
    "builtin": _p(command_at=0, gnu=False, flags=""), "nohup": _p(command_at=0, gnu=False, flags=""),
    "setsid": _p(command_at=0, gnu=False, flags="cfw", long_flags="--ctty --fork --wait"),
    "time": _p(args="fo", command_at=0, gnu=False, flags="pvaq",
               long_flags="--portability --verbose --append --quiet", aliases="f=--format o=--output"),
    "nice": _p(args="n", long_args="--adjustment", command_at=0, gnu=False, flags="0123456789"),
    "stdbuf": _p(args="ioe", long_args="--input --output --error", command_at=0, gnu=False, flags=""),
    "ionice": _p(args="cnpPu", long_args="--class --classdata --pid --pgid --uid", command_at=0, gnu=False,
                 flags="t", long_flags="--ignore"),
    "taskset": _p(command_at=1, gnu=False, flags="acp", long_flags="--all-tasks --cpu-list --pid"),
    "chrt": _p(args="TPD", command_at=1, gnu=False, flags="abdfiormRpv", long_flags="--all-tasks --batch "
               "--deadline --fifo --idle --other --rr --reset-on-fork --max --pid --verbose",
               aliases="T=--sched-runtime P=--sched-period D=--sched-deadline"),
    "chroot": _p(long_args="--userspec --groups", command_at=1, gnu=False, flags="", long_flags="--skip-chdir"),
    "flock": _p(args="wE", code="c", command_at=1, flags="sxeunoF", long_flags="--shared --exclusive --unlock "
                "--nonblock --nb --close --no-fork --verbose",
                aliases="c=--command w=--timeout w=--wait E=--conflict-exit-code"),
    "timeout": _p(args="ks", long_args="--kill-after --signal", command_at=1, gnu=False, flags="v",
                  long_flags="--preserve-status --foreground --verbose"),
    "unbuffer": _p(command_at=0, gnu=False, flags="p"), "strace": _p(args="abeEOpPsSuUX", code="o", command_at=0, gnu=False, exec_options=True, aliases="o=--output"),  # -o '|cmd' runs cmd
    "ltrace": _p(args="aAeEfFlnoPsu", command_at=0, gnu=False, exec_options=True), "busybox": _p(command_at=0, gnu=False),
    "toybox": _p(command_at=0, gnu=False),
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
    "fish": _p(flag_code="c", code="C", long_code="--command --init-command", stdin=True, gnu=False,
               exec_options=True),
    **{name: _p(flag_code="c", stdin=True, gnu=False, exec_options=True) for name in "csh tcsh".split()},
    "expect": _p(args="fD", code="c", stdin=True, exec_options=True), "tclsh": _p(stdin=True),
    # interpreters and consoles that run their standard input as code when given no script (… | ipython --quick,
    # … | swipl -, … | lftp: !cmd); an option they take is not known, so a last word after one may be its value
    **{name: _p(stdin=True, gnu=False) for name in """ipython ipython3 irb pry php-cgi raku rakudo perl6 wish luajit
        micropython jython ocaml sbcl swipl racket ghci octave jshell groovy groovysh lftp ftp mongosh mariadb
        cgdb escript clisp ecl guile3 bb nbb""".split()},
    "Rscript": _p(code="e", long_load="--default-packages", exec_options=True, stdin=True),  # Rscript -
    "julia": _p(code="eE", stdin=True, exec_options=True, aliases="e=--eval E=--print"),
    "pwsh": _p(code="c", long_code="-Command -command -c -EncodedCommand -encodedcommand -ec -e", stdin=True,
               gnu=False, exec_options=True),
    "bun": _p(code="ep", load="r", long_load="--import", exec_options=True, gnu=False,
              aliases="e=--eval p=--print r=--preload r=--require"),
    "sqlite3": _p(long_args="-cmd", long_code="-cmd", code_from=1, stdin=True, gnu=False),
    # psql -o '|CMD' pipes the output into a shell command (as \o does)
    "psql": _p(args="dfhLPpUvT", code="co", stdin=True, exec_options=True,
               aliases="c=--command o=--output d=--dbname f=--file h=--host L=--log-file P=--pset p=--port "
                       "U=--username v=--set v=--variable T=--table-attr"),
    # curl -K FILE (--config) reads options from FILE: from standard input with -K - (output = …, upload-file = …)
    "curl": _p(args="KodHuAeXTFwrxybcE", script_args="-K --config",
               aliases="K=--config o=--output d=--data H=--header u=--user A=--user-agent e=--referer X=--request "
                       "T=--upload-file F=--form w=--write-out r=--range x=--proxy y=--speed-time b=--cookie "
                       "c=--cookie-jar E=--cert"),
    "mysql": _p(args="DhPpuS", code="e", long_code="--init-command --pager", stdin=True,
                aliases="e=--execute D=--database h=--host P=--port u=--user S=--socket"),
    # gdb reads -NAME as --NAME (getopt_long_only, abbreviations too): -ex is --ex, -eval-command=… --eval-command
    "gdb": _p(args="xecspdbD", long_args="--command --init-command --ix --x --cd --directory --data-directory --pid "
              "--core --exec --symbols --se --tty --interpreter --baud --ui", long_code="--ex --eval-command --iex "
              "--init-eval-command", exec_options=True, long_only=True, stdin=True, stdin_always=True,  # shell CMD from stdin
              script_args="-x --command --x --init-command --ix"),
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
    (fail closed); a path given at run time (None) too, and one holding {} (find -exec sh {} ;, xargs -I{} sh {}:
    the file found or the item read)."""
    if path is None or path == "-" or _globbed(path) or "{}" in path:
        return True
    norm = re.sub(r"/+", "/", path)
    return norm.rstrip("/").endswith(("/stdin", "dev/stdin")) or "/fd/" in norm or norm.endswith("/fd") or \
        norm.startswith("/proc/")
#: environment variables a shell or a program reads as code (expanded, run or loaded): a value assigned to one is
#: TD803 (NAME={{x}} cmd, export NAME={{x}}, env NAME={{x}} cmd, declare -x, read NAME, for NAME in …)
CODE_VARIABLES = frozenset("""BASH_ENV ENV PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND BASH_LOADABLES_PATH SHELLOPTS BASHOPTS
    LD_PRELOAD LD_AUDIT LD_LIBRARY_PATH GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_ASKPASS
    GIT_PROXY_COMMAND GIT_CONFIG_PARAMETERS PAGER MANPAGER EDITOR VISUAL LESSOPEN LESSCLOSE SSH_ASKPASS SUDO_ASKPASS
    PYTHONSTARTUP PYTHONPATH PYTHONHOME PERL5OPT PERL5LIB PERLLIB NODE_OPTIONS RUBYOPT RUBYLIB BROWSER
    RSYNC_RSH RSYNC_CONNECT_PROG CVS_RSH PERL5DB PYTHONBREAKPOINT GIT_EXEC_PATH ZDOTDIR
    CC CXX CPP CXXCPP LD AR AS NM FC F77 RANLIB STRIP OBJCOPY OBJDUMP MAKE YACC LEX M4 PKG_CONFIG INSTALL
    RSH SSH DIFF MERGE HGMERGE TERMINAL VIMINIT EXINIT GVIMINIT MYVIMRC SCREENRC WGETRC KUBECONFIG
    MAILCAPS MAILCAP FCEDIT R_PROFILE R_PROFILE_USER IRBRC PSQLRC MAKEFILES""".split())
#: families of variables read as code, by the name's start: GIT_CONFIG_KEY_0/VALUE_0 (any git setting) and every
#: other GIT_* but the identity and dates a commit records (GIT_DIR, GIT_TEMPLATE_DIR: a repository's hooks and
#: configuration), BASH_FUNC_f%% (a function bash imports), the dynamic loader's LD_* and DYLD_*, npm's
#: npm_config_* (script-shell, in either case), lua's LUA_INIT and LUA_PATH, XDG_* (where programs find their
#: configuration), the interpreters' own PYTHON*, PERL* and RUBY* (startup code, module paths, warnings filters)
CODE_VARIABLE_PREFIXES = ("GIT_", "BASH_FUNC_", "LD_", "DYLD_", "NPM_CONFIG_", "npm_config_", "LUA_", "XDG_", "PYTHON",
                          "PERL", "RUBY")
#: … and by the name's end: a program to run (*EDITOR, *PAGER, *_COMMAND, *_CMD, *_PROGRAM, *_PROG, *_EXEC, *SHELL,
#: *RSH, *_SSH, *ASKPASS, *DIFF, *MERGE, *_HOOK, *_HOOKS, *BROWSER), options that may name one (*_OPTIONS, *_OPTS,
#: *FLAGS, *OPT, *_ARGS), code run at start (*INIT, *STARTUP), and a place code or configuration is loaded from
#: (*PATH, *HOME, *CONFIG): TAR_OPTIONS, MAKEFLAGS, GIT_SEQUENCE_EDITOR, CONFIG_SHELL, JAVA_OPTS, NODE_PATH,
#: GEM_HOME, KUBECONFIG. Names are matched as written: the environment's names are capitals by convention
CODE_VARIABLE_SUFFIXES = ("EDITOR", "PAGER", "_COMMAND", "_CMD", "_PROGRAM", "_PROG", "_EXEC", "SHELL", "RSH", "_SSH",
                          "ASKPASS", "DIFF", "MERGE", "_HOOK", "_HOOKS", "BROWSER", "_OPTIONS", "_OPTS", "FLAGS",
                          "OPT", "_ARGS", "INIT", "STARTUP", "PATH", "HOME", "CONFIG")
#: GIT_* variables that are data: who and when a commit records
GIT_DATA_VARIABLES = frozenset("""GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_NAME
    GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE""".split())


#: environment variables no program reads as code: the locale, the time zone, the terminal's kind and size, the
#: proxies, node's mode, and the runner's own (TASKDSL_*)
DATA_VARIABLES = frozenset("""LANG LANGUAGE LC_ALL TZ TERM COLUMNS LINES NO_COLOR HTTP_PROXY HTTPS_PROXY NO_PROXY
    ALL_PROXY NODE_ENV""".split())
DATA_VARIABLE_PREFIXES = ("TASKDSL_", "LC_")


def _code_variable(name: str) -> bool:
    """A variable a shell or a program may read as code. Fail closed: every name is, but a name with a lower-case
    letter that is not of a listed family (npm_config_*: the environment's names are capitals by convention, so
    a program reads only those of its own family), the data names (DATA_VARIABLES, GIT_AUTHOR_NAME, …) and the
    runner's own TASKDSL_*. A name that is not a plain name is code (env 'f%%=…'). The list and the families say
    why the commonest names are code (ZIP, GZIP, LESSOPEN, … are by the same rule)."""
    if not name.replace("_", "").isalnum() or not name.isascii():
        return True
    if name in GIT_DATA_VARIABLES or name in DATA_VARIABLES or name.startswith(DATA_VARIABLE_PREFIXES):
        return False
    if name in CODE_VARIABLES or name.startswith(CODE_VARIABLE_PREFIXES) or name.endswith(CODE_VARIABLE_SUFFIXES):
        return True
    return name == name.upper()  # ZIP, GZIP, BZIP2, MAKEFILES, OPENSSL_CONF, RUSTC_WRAPPER: fail closed


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
#: bash builtins' options whose value names a variable (NAME_PROGRAMS: builtins whose operands all do)
NAME_OPTIONS = {"printf": "v", "wait": "p"}
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
                       "push": frozenset({"--receive-pack", "--exec"}), "archive": frozenset({"--exec"}),
                       "send-email": frozenset({"--sendmail-cmd", "--smtp-server", "--to-cmd", "--cc-cmd",
                                                "--header-cmd"}),
                       "daemon": frozenset({"--access-hook"}), "instaweb": frozenset({"-d", "--httpd", "-b",
                                                                                      "--browser"})}
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
        reader = None if stdin else _input_code_reader(literals) or _loads_stdin(tree, command_node, literals, verdicts)
        if reader is not None:  # … | parallel, … | lldb, mlr put -f /dev/stdin, BASH_ENV=/dev/stdin bash -c :
            stdin, program = True, reader
        info = _Command(words, {w.id: i for i, w in enumerate(words)}, verdicts, stdin, program)
    cache[command_node.id] = info
    return info


#: programs whose literal code is in a language of their own that reads its input as data unless the code says
#: otherwise (awk, sed, jq, python -c: the code is judged where it stands)
_DATA_CODE_LANGUAGES = SCRIPT_READERS | SEDS | frozenset("awk gawk mawk nawk jq gojq jaq yq".split())


def _command_code_reader(literals, verdicts) -> str | None:
    """Literal code in a code position of a program whose code is commands (git -c alias.x='!sh', make --eval, gdb
    -ex 'shell sh', vim -c '!sh', tar --checkpoint-action=exec=sh): a command there may run a program that reads
    the standard input, which the checker does not follow into that language (fail closed)."""
    for text, verdict in zip(literals, verdicts):
        if text is None or verdict is None or verdict[0] != "reparse":
            continue
        name = verdict[1]
        if (name in PROGRAMS or name in VIMS) and name not in _DATA_CODE_LANGUAGES and \
                name not in SHELL_CODE_RUNNERS and name != "alias" and not _is_wrapper(name):
            return name
    return None


#: options that name a file a program loads as code, beyond the table's load and script options (wget --config)
LOAD_FILE_OPTIONS = {"wget": frozenset({"--config"})}


def _stdin_path(text) -> bool:
    """A literal path that names standard input (/dev/stdin, /dev/fd/0, /proc/self/fd/0 and their spellings)."""
    return text is not None and text not in ("-", "") and "{}" not in text and _names_stdin(text)


def _loads_stdin(tree, command_node, literals, verdicts) -> str | None:
    """A standard-input name given where a program loads a file as code: a variable read as code (BASH_ENV=/dev/stdin
    bash -c :, env ENV=/dev/stdin sh, make MAKEFILES=/dev/stdin), a module or start file option (vim -S /dev/stdin,
    ruby -r/dev/stdin, node -r /dev/stdin, wget --config=/dev/stdin): the program runs its standard input."""
    names = [(tree.source(a.child_by_field_name("name")), _literal(tree, a.child_by_field_name("value")))
             for a in command_node.named_children if a.type == "variable_assignment" and
             a.child_by_field_name("name") is not None and a.child_by_field_name("value") is not None]
    names += [tuple(text.split("=", 1)) for text, verdict in zip(literals[1:], verdicts[1:]) if text is not None and
              re.match(r"[A-Za-z_][A-Za-z0-9_]*=", text) and (verdict is None or verdict[0] != "reparse")]
    for name, value in names:
        if _code_variable(name) and _stdin_path(value):
            return f"what loads {name}={value}"
    program, spec = None, None
    for k, text in enumerate(literals):
        if text is None:
            continue
        base = _program_name(text) if not text.startswith("-") else None
        if base in PROGRAMS or base in VIMS:
            program, spec = base, PROGRAMS.get(base)
            continue
        if program is None or not text.startswith(("-", "+")) or text in ("-", "--"):
            continue
        longs = LOAD_FILE_OPTIONS.get(program, frozenset()) | (
            spec.long_load | spec.script_args if spec is not None else frozenset()) | (
            VIM_SCRIPT_OPTIONS if program in VIMS else frozenset())
        shorts = (spec.load if spec is not None else "") + "".join(
            o[1:] for o in longs if len(o) == 2)
        head, _, attached = text.partition("=")
        nxt = literals[k + 1] if k + 1 < len(literals) else None
        if text.startswith("--"):
            head = _long_option(head, spec) if spec is not None else head
            if head in longs and _stdin_path(attached or nxt):
                return f"{program} {head}"
        elif len(text) > 1 and text[1] in shorts and _stdin_path(text[2:] or nxt):
            return f"{program} -{text[1]}"
    return None


#: programs that run what they read on standard input whatever their arguments: GNU parallel (input lines are
#: commands, or the arguments of its command template, which it runs through a shell), lldb (its commands: `platform
#: shell …`)
INPUT_CODE_READERS = frozenset("parallel lldb".split())
#: programs that read their code from a file an option names anywhere among their words (mlr put -f F, mlr -s F)
OPTION_SCRIPT_READERS = {"mlr": frozenset("-f -s".split())}


def _input_code_reader(literals) -> str | None:
    """The program (behind its wrappers) of a command that runs its standard input as code where the table's scan
    does not say so: parallel and lldb whatever they are given, mlr with -f or -s naming standard input."""
    if literals[0] is None:
        return None
    at = _wrapped_at(literals) or 0
    name = _program_name(literals[at] or "")
    if name in INPUT_CODE_READERS:
        return name
    if name in ("deno", "bun") and any(_stdin_path(t) or t == "-" for t in literals[at + 2:] if t is not None) and \
            "run" in literals[at + 1:]:  # deno run -, bun run /dev/stdin: the script is the standard input
        return name
    options = OPTION_SCRIPT_READERS.get(name)
    if options:
        for k in range(at + 1, len(literals)):
            text = literals[k]
            if text in options and (k + 1 >= len(literals) or _names_stdin(literals[k + 1])):
                return name
            if text is not None and text[:2] in options and len(text) > 2 and _names_stdin(text[2:]):
                return name
    return None


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
        return _unquoted("".join(out), True)
    text = _literal(tree, node)
    if text is not None:
        return text
    if node.type == "word":
        source = tree.source(node)
        cut = min((i for i in (source.find("$"), source.find("`")) if i >= 0), default=len(source))
        return _unquoted(source[:cut], False)
    return ""


#: how many times one command's scan also reads a wrapper's command one word later (bounds the work)
WRAPPER_ALTERNATIVES = 4


def _scan(literals: list, prefixes: list, sources: list, alternatives: int = WRAPPER_ALTERNATIVES,
          peel: bool = True) -> tuple[list, bool, str | None]:
    """For a simple command's words (literal text or None, the literal prefix, the source): per word, what the
    program does with it; whether the program runs its standard input as code; the program's name."""
    n = len(literals)
    verdicts = [None] * n
    if literals[0] is None or _globbed(literals[0]):  # named at run time ("$SHELL" -c …, /bin/[s]h): fail closed
        shown = "{{…}}" if SUB_PREFIX in sources[0] else sources[0]
        return [None] + [("reparse", shown, None)] * (n - 1), True, shown
    program = _program_name(literals[0])
    if program in RUN_SUBCOMMANDS and peel:
        verdicts, stdin, inner = _run_subcommand(program, literals, prefixes, sources, alternatives)
        if program in PROGRAMS:  # npx -c CMD, npm exec --call=CMD: what the table says of its own options first
            own, own_stdin, own_inner = _scan(literals, prefixes, sources, alternatives, peel=False)
            verdicts = [a if a is not None and (a[0] == "reparse" or b is None) else b for a, b in zip(own, verdicts)]
            stdin, inner = (stdin, inner) if stdin else (own_stdin, own_inner)
        return verdicts, stdin, inner
    spec = _wrapper_spec(program, PROGRAMS.get(program), literals)
    option_kind = "option_exec" if (spec is not None and spec.exec_options) or program in SEDS else (
        "option" if program in OPTION_PROGRAMS else None)
    special = _special(program, literals, prefixes, verdicts, option_kind)
    if special is not None:  # (find … -exec sh {} ;: the program that runs the standard input, a true value)
        return verdicts, bool(special), special if isinstance(special, str) else program
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
    unknown_long = None  # where a long option the table does not know ended (node --title x: x may be its value)
    code = ("reparse", program, None)
    script_files = []  # awk -f FILE, make -f FILE: where the program reads its code
    shell_run = None  # sudo -s: the option that makes the wrapper run its command through a shell
    while i < n:
        lit, pre = literals[i], prefixes[i]
        if open_ and lit == "--":
            open_ = False
            i += 1
            continue
        if program in ("env", "runuser") and open_ and lit == "-" and operands == 0:
            # env - sh -c …: - is -i, not a command; runuser - root: - is -l (a login shell reading its input)
            i += 1
            continue
        option = open_ and (pre.startswith("-") or (spec.plus and pre.startswith("+"))) and (lit is None or len(lit) > 1)
        if option and spec.long_only and not pre.startswith("--") and len(pre.split("=", 1)[0]) > 2:
            pre, lit = "-" + pre, None if lit is None else "-" + lit  # gdb -eval-command=… is --eval-command=…
        if option and spec.flags is not None:  # a wrapper judged by an allowlist of its options
            judged = _wrapper_option(spec, pre, lit)
            if judged == "unknown":
                unknown, shown = _unknown_option(program, pre, literals, i)
                return unknown, True, shown
            if judged == "value" and spec.assigns:  # env -{{x}}: an option or an assignment
                verdicts[i] = ("reparse", ASSIGNED + program, None)
                i += 1
                continue
            shell_run = shell_run or (judged if judged.startswith("-") else None)
        sub_code = GIT_SUBCOMMAND_CODE.get(first_operand, ()) if spec.subcommand and operands > 0 else ()
        if option and (pre.split("=", 1)[0] in sub_code or pre[:2] in sub_code):  # git rebase -x CMD
            attached = ("=" in pre if pre.startswith("--") else len(pre) > 2) or lit is None
            if attached:  # literal code too (git send-email --sendmail-cmd='sh f'): _embedded_code reads it
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
                is_code = head in spec.long_code or head in spec.long_load  # a module it loads is code too
                if lit is None and not attached:  # the value is (in) the option's name
                    verdicts[i] = (option_kind or "option", program, None)
                elif attached:
                    if is_code:  # literal code too (tar --checkpoint-action=exec='sh f'): _embedded_code reads it
                        verdicts[i] = code
                    code_given |= head in spec.long_code or head in spec.script_args
                    if head in spec.script_args:
                        script_files.append(lit.split("=", 1)[1] if lit is not None else None)
                elif head in spec.long_code | spec.long_args:
                    code_given |= head in spec.long_code or head in spec.script_args
                    if head in spec.script_args:
                        script_files.append(literals[i + 1] if i + 1 < n else "")
                    if i + 1 < n and is_code:
                        verdicts[i + 1] = _setting(program, prefixes[i + 1], literals[i + 1]) or code
                    i += 1
                elif head not in spec.long_flags and lit is not None and lit != "--":
                    unknown_long = i + 1
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
                        else:  # ssh -oProxyCommand='sh f': literal code, which _embedded_code reads
                            verdicts[i] = _setting(program, letters[j + 1:], lit) or code
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
                    if ch in spec.load and i < n and literals[i] is None:  # perl -M{{x}}, node -r {{x}}: the
                        verdicts[i] = code  # module it loads is code (a value glued to the letters too)
                    if ch in spec.stops:
                        open_ = None
                        module = letters[j + 1:] or (literals[i] if i < n else None)
                        if ch == "m" and module is None and i < n:  # python -m {{x}}: the value names the code
                            verdicts[i] = ("reparse", f"{program} -m", None)
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
        if program in VIMS and pre.startswith("+"):  # vim +{{x}} FILE, vim +'!cmd': an ex command
            verdicts[i] = code
        if open_ and lit is None and pre == "" and option_kind:
            # git commit -m {{x}}: the argument of -m (only after an option known to take one: git grep -i {{x}}
            # is in option position)
            after_value = spec.subcommand and operands > 0 and literals[i - 1] in GIT_VALUE_OPTIONS
            if not after_value:
                verdicts[i] = (option_kind, program, None)
        if spec.assigns and spec.command_at is not None and operands == spec.command_at and lit is None and \
                "=" in (sources[i] or ""):  # env "$(echo NAME)=$r" …: a name computed at run time (fail closed)
            verdicts[i] = ("reparse", "what reads $…", None)
        if spec.assigns and spec.command_at is not None and operands == spec.command_at and lit is None and \
                "=" not in pre and (verdicts[i] is None or verdicts[i][0] != "reparse"):
            # env -- {{x}} prog, env {{x}} prog: env reads a NAME=VALUE operand as an assignment, after -- too (the
            # value may set BASH_ENV), else as its command: no -- makes it data
            verdicts[i] = ("reparse", ASSIGNED + program, None)  # (and read as the command below: env $f a)
        if spec.command_at is not None and operands <= spec.command_at and lit is None and verdicts[i] is None:
            verdicts[i] = ("wrapped", program, None)  # where the wrapper reads its operands or its command's name
        if spec.command_at is not None and operands == spec.command_at and shell_run:
            for k in range(i, n):  # sudo -s CMD ARG…: the shell parses the words joined again
                if literals[k] is None:
                    verdicts[k] = ("reparse", f"{program} {shell_run}", None)
            return verdicts, True, f"{program} {shell_run}"
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
                # xargs -a FILE CMD: the items come from FILE and CMD reads the pipe (xargs -a /dev/null sh)
                stdin = (stdin and _xargs_arg_file(literals, i)) or _xargs_reads_code(literals, prefixes, sources, i)
                if stdin and _is_wrapper(inner):  # xargs env: the items become env's assignments or command line
                    inner = f"xargs {inner}"
            if program == "env" and not stdin:  # env -S 'sh -x' FILE: the split string's program reads it
                stdin = _env_split_reads_stdin(literals, i)
            return verdicts, stdin, inner if stdin else program
        if code_flag and operands == 0:
            verdicts[i] = ("reparse", program, i if program in SHELLS else None)
            if lit is None or _script_runs_arguments(lit):  # sh -c 'eval "$1"' _ {{x}}: its arguments become code
                for k in range(i + 1, n):
                    if literals[k] is None:
                        verdicts[k] = ("reparse", HANDED + program, None)
            return verdicts, _script_reads_stdin(lit), program
        if (spec.first_code and operands == 0 and not code_given) or spec.all_code or (
                spec.code_from is not None and operands >= spec.code_from):
            verdicts[i] = code
        if operands == 0:
            # a script path named at run time may be /dev/stdin (fail closed); a {{…}} there is the value itself
            first_operand = lit if lit is not None else ("" if SUB_PREFIX in (sources[i] or "") else None)
            if unknown_long == i and spec.stdin:  # node --title x: x may be the option's value, not the script
                first_operand = None if i + 1 >= n else first_operand
        operands += 1
        if not spec.gnu:
            open_ = False
        i += 1
    if program == "xargs":  # no command: echo
        return verdicts, False, program
    if shell_run:  # sudo -s with no command: a shell reading its standard input
        return verdicts, True, f"{program} {shell_run}"
    if program == "env" and _env_split_reads_stdin(literals, n):  # … | env -S sh
        return verdicts, True, "env -S"
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
    if not stdin and program in IN_SHELL_CODE:  # … | eval sh, … | (trap 'sh' EXIT; :): the code has its input
        words = [literals[k] for k in range(1, n) if verdicts[k] is not None and verdicts[k][0] == "reparse"]
        stdin = bool(words) and _script_reads_stdin(None if None in words else " ".join(words))
    if program in PERLS and _perl_loops_over_files(literals):
        # perl -n/-p reads its operands with <>, the two-argument open: a name ending in | runs a command
        for k in range(1, n):  # an option position too: its -- fix (TD805) would leave the value to <>
            if literals[k] is None and (verdicts[k] is None or verdicts[k][0].startswith("option")):
                verdicts[k] = code
    return verdicts, stdin, program


PERLS = frozenset("perl perl5".split())


def _perl_loops_over_files(literals) -> bool:
    """Whether perl is given -n or -p (also bundled: -lne, -pi.bak), so its operands are opened by <>."""
    for word in literals[1:]:
        if word is None or not word.startswith("-") or word.startswith("--") or len(word) < 2:
            continue
        letters = word[1:]
        for cut in "eEiIMmxC0l":  # the letters after one of these are its value, not more flags
            if cut in letters and cut != "l":
                letters = letters[:letters.index(cut)]
        if "n" in letters or "p" in letters:
            return True
    return False


#: programs that run a command given after a subcommand and its options: program → subcommand → how many operands
#: come between them and the command (docker exec CONTAINER CMD: 1), or the option after which the command starts
#: (nix shell PKG -c CMD); "" stands for the program itself (npx CMD). A subcommand the table does not know, given a
#: value, fails closed (npm install {{x}} runs the package's install scripts; docker --context c exec …)
RUN_SUBCOMMANDS = {
    **{name: {"run": 0} for name in "poetry pipx pdm hatch conda mamba micromamba".split()},
    "uv": {"run": 0}, "pixi": {"run": 0, "exec": 0}, "pipenv": {"run": 0}, "rye": {"run": 0},
    **{name: {"": 0} for name in "uvx npx pnpx bunx pkexec".split()},
    **{name: {"exec": 1, "run": 1, "create": 1} for name in "docker podman nerdctl".split()},
    **{name: {"exec": 1, "run": 1, "debug": 1} for name in "kubectl oc".split()},
    "npm": {"exec": 0, "x": 0}, "pnpm": {"exec": 0, "dlx": 0}, "yarn": {"exec": 0, "dlx": 0},
    "nix": {"shell": "-c --command", "develop": "-c --command"},
    "direnv": {"exec": 1}, "mise": {"exec": 0, "x": 0}, "asdf": {"exec": 0},
    **{name: {"exec": 0} for name in "pyenv rbenv nodenv goenv jenv".split()},
    "bundle": {"exec": 0}, **{name: {"exec": 0} for name in "stack cabal opam".split()},
    **{name: {"run": 0} for name in "toolbox devbox heroku".split()},
    **{name: {"exec": 1} for name in "lxc incus".split()},
    "guix": {"shell": "--"}, "distrobox": {"enter": "--"}, "vagrant": {"ssh": "-c --command"},
}


def _run_subcommand(program, literals, prefixes, sources, alternatives) -> tuple[list, bool, str | None]:
    """_scan for a program of RUN_SUBCOMMANDS. Its options are not in the table, so which word is an option's value
    and which the command is not known: a value before the first word that is surely the command (an operand after
    no option, or after --) is code (it may be the command, or an option that names one), and the words after are
    read as a command from that word and from every earlier word that may be one (fail closed)."""
    n = len(literals)
    verdicts = [None] * n
    table = RUN_SUBCOMMANDS[program]
    at = 0
    if "" not in table:
        at = next((k for k in range(1, n) if literals[k] is None or not literals[k].startswith("-")), n)
        if at < n:  # a value as the subcommand (docker {{x}}) is one the table does not know: fail closed
            at = at if literals[at] is not None and literals[at] in table else -at
    sub = "" if at == 0 else literals[abs(at)] if abs(at) < n else None
    code = ("reparse", RUNS + (f"{program} {sub}".strip() if sub else program), None)
    if at <= 0 and "" not in table or at >= n:  # no subcommand, or one the table does not know: fail closed
        return [None] + [code if lit is None else None for lit in literals[1:]], False, program
    if alternatives < 0:  # a wrapper read inside another's alternative readings: fail closed (bounds the work)
        return [None] + [code if lit is None else None for lit in literals[1:]], True, program
    skip = table[sub]
    start, candidates, operands, option_before, ended = None, [], 0, False, False
    for k in range(at + 1, n):
        lit = literals[k]
        if lit is None:
            break  # a value before the command surely starts: the command, an option or an option's value
        if isinstance(skip, str):  # nix shell PKG -c CMD
            if lit in skip.split():
                start = k + 1
                break
            continue
        if lit == "--" and not ended:
            ended, option_before = True, False
            continue
        if lit.startswith("-") and not ended:
            option_before = "=" not in lit
            continue
        candidates.append(k)
        if ended or not option_before:
            operands += 1
            if operands > skip:
                start = k
                break
        option_before = False
    for k in range(1, start + 1 if start is not None and start < n else n):  # nix shell PKG -c {{x}}: the command
        if literals[k] is None:
            verdicts[k] = code
    if start is not None and start < n and literals[start] is None:
        return verdicts, True, program
    if start is not None and start < n and len(candidates) > alternatives + 1:
        # more readings than the bound: every value after is code
        for k in range(start, n):
            if literals[k] is None:
                verdicts[k] = code
        return verdicts, True, program
    firsts = ([start] if start is not None and start < n else []) + [k for k in candidates if k != start]
    stdin, inner = False, program
    # docker exec -i c sh: c may be an option's value, or the container; a wrapper read from one of several words
    # gets no readings of its own (-1), one read from the one word that starts the command one fewer
    deeper = alternatives - 1 if len(firsts) == 1 else -1
    for first in firsts[:alternatives + 2]:
        sub_verdicts, sub_stdin, sub_inner = _scan(literals[first:], prefixes[first:], sources[first:], deeper)
        for k, verdict in enumerate(sub_verdicts[1:], first + 1):
            if verdict is None or (verdicts[k] is not None and (verdicts[k][0] == "reparse" or verdict[0] != "reparse")):
                continue
            index = verdict[2] + first if verdict[2] is not None and first == start else None
            verdicts[k] = (*verdict[:2], index)
        if sub_stdin and not stdin:
            stdin, inner = True, sub_inner
    if len(firsts) > alternatives + 2:
        stdin = True
    return verdicts, stdin, inner if stdin else program


#: builtins whose operands are shell code this shell runs, with the standard input the command has there (trap's
#: action too: _special)
IN_SHELL_CODE = frozenset("eval".split())


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


@lru_cache(maxsize=256)
def _script_runs_arguments(script: str) -> bool:
    """A shell script given as code (sh -c SCRIPT _ ARG…) that runs its positional parameters as code, puts them in
    arithmetic or option position, or hands them on to code through a variable or a file (eval "$1", "$@",
    $(( $1 ))); a script the checker cannot parse or follow fails closed."""
    try:
        inner = _Tree(script)
        if inner.root.has_error:
            return True
        return bool(_handed_on(inner, script, [], _Starts([]), initial={POSITIONAL}))
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


def _xargs_arg_file(literals, start) -> bool:
    """Does xargs read its items from a file (-a FILE, --arg-file=FILE, -0aFILE), leaving its standard input to the
    command it runs? An option word given at run time may be one (fail closed)."""
    spec = PROGRAMS["xargs"]
    i = 1
    while i < start:
        text = literals[i]
        if text is None:
            return True
        if text.startswith("--"):
            head = _long_option(text.split("=", 1)[0], spec)
            if head == "--arg-file":
                return True
            i += 2 if head in spec.long_args and "=" not in text else 1
            continue
        for j, ch in enumerate(text[1:]):
            if ch == "a":
                return True
            if ch in spec.args:
                i += 0 if text[j + 2:] else 1  # the value is the rest of the word or the next word
                break
            if ch in spec.optional:
                break
        i += 1
    return False


def _xargs_reads_code(literals, prefixes, sources, start) -> bool:
    """xargs runs its command with the items it reads appended (or put where -I's string stands): does an item
    land where that command reads code?"""
    replace = None
    for i in range(1, start):
        text = literals[i] or ""
        if text == "-I" and i + 1 < start:
            replace = literals[i + 1]
        elif text.startswith("-I") and len(text) > 2:
            replace = text[2:]
        elif text.startswith("--replace="):
            replace = text.split("=", 1)[1]
        elif text == "--replace":  # its argument only after = (--replace alone is {})
            replace = "{}"
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
    # an item where a wrapper reads its options, assignments or its command's name (xargs env, xargs nice, xargs
    # -I{} sudo {} …): several words of the item become a command line, or set BASH_ENV (fail closed)
    return any(verdicts[k] is not None and (verdicts[k][0] in ("reparse", "wrapped") or (
        verdicts[k][0].startswith("option") and _is_wrapper(verdicts[k][1]))) for k in marked)


#: programs whose first operand is a program in their own language (a filter): jq and its kin. Options that take
#: one value, two values (--arg NAME VALUE: data, the safe way to hand a value in), or give the filter from a file
FILTER_PROGRAMS = frozenset("jq gojq jaq yq".split())
_FILTER_ONE = frozenset("-L --indent".split())
_FILTER_TWO = frozenset("--arg --argjson --slurpfile --rawfile".split())
_FILTER_FILE = frozenset("-f --from-file".split())


def _filter_program(program, literals, prefixes, verdicts) -> bool:
    """jq [OPTIONS] FILTER [FILE…]: a value where the filter is (or where an option it does not know may take the
    next word) is code; after --arg NAME, a value is data (jq's own way to take one). Never reads stdin as code."""
    code = ("reparse", program, None)
    n, i, filter_seen, from_file, reads_stdin = len(literals), 1, False, False, False
    while i < n:
        lit, pre = literals[i], prefixes[i] or ""
        if lit == "--":
            i += 1
            break
        if pre.startswith("-") and len(pre) > 1:
            head = pre.split("=", 1)[0]
            if lit is None and head not in _FILTER_TWO | _FILTER_ONE | _FILTER_FILE:
                verdicts[i] = code  # an option spelt by the value may be one that takes the filter next
            if head in _FILTER_TWO:
                i += 3
                continue
            if head in _FILTER_FILE:
                from_file = True
                path = (lit.split("=", 1)[1] if lit is not None else None) if "=" in pre else \
                    (literals[i + 1] if i + 1 < n else None)
                if path is None:
                    if "=" not in pre and i + 1 < n:
                        verdicts[i + 1] = code  # the filter's file named by a value
                elif _stdin_name(path):
                    reads_stdin = True  # jq -f /dev/stdin: the input is the filter
                i += 1 if "=" in pre else 2
                continue
            if head in _FILTER_ONE:
                i += 1 if "=" in pre else 2
                continue
            if head in ("--args", "--jsonargs"):  # the operands after the filter are data ($ARGS)
                i += 1
                continue
            i += 1
            continue
        if not filter_seen and not from_file:
            filter_seen = True
            if lit is None:
                verdicts[i] = code
        i += 1
    if not filter_seen and not from_file and i < n and literals[i] is None:
        verdicts[i] = code  # jq -- FILTER
    return reads_stdin


def _special(program, literals, prefixes, verdicts, option_kind) -> bool | None:
    """Programs whose arguments follow no option table: fills verdicts and returns whether the program runs its
    standard input as code; None for the others."""
    n = len(literals)
    if program in FILTER_PROGRAMS:  # jq FILTER [FILE…]: the first operand is a program (it reads $ENV, files)
        return _filter_program(program, literals, prefixes, verdicts)
    if program == "trap":  # trap [-lp] [--] ACTION SIGNAL…
        i = 1
        while i < n and literals[i] is not None and literals[i].startswith("-") and literals[i] != "-":
            i += 1
            if literals[i - 1] == "--":
                break
        if i < n:
            verdicts[i] = ("reparse", program, None)
            return _script_reads_stdin(literals[i])  # … | (trap 'sh' EXIT; :): the action has the input
        return False
    if program in ("test", "["):
        for i in range(2, n):
            # test -v NAME; after a word known only at run time ([ "$a" {{x}} ]) that may be -v itself
            if literals[i - 1] == "-v" or (literals[i - 1] is None and literals[i] is None):
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
        if program in ("read", "mapfile", "readarray") and any(
                lit is not None and lit.replace("_", "").isalnum() and _code_variable(lit) for lit in literals[1:]):
            return True  # read BASH_ENV <<EOF: what it reads becomes a variable read as code
        # mapfile -C CALLBACK runs the callback with each line it reads as an argument (mapfile -C eval)
        return program in ("mapfile", "readarray") and any((p or "").startswith("-C") for p in prefixes[1:])
    if program in NAME_OPTIONS:  # printf -v NAME, wait -p NAME: bash evaluates a subscript of NAME as arithmetic
        for i in range(1, n):
            text, pre = literals[i], prefixes[i] or ""
            if text == "--" or (pre and not pre.startswith("-")):
                break  # the options end: printf's format, wait's first id
            if text is None and verdicts[i] is None:  # a value in option position may be -vNAME itself
                verdicts[i] = ("name_option", program, None)
            elif text is not None and text.startswith("-") and text[-1] in NAME_OPTIONS[program] and i + 1 < n and literals[i + 1] is None:
                verdicts[i + 1] = ("name", program, None)
        if program == "wait":
            return False
    if program == "getopts" and n > 2 and literals[2] is None:  # getopts OPTSTRING NAME
        verdicts[2] = ("name", program, None)
        return False
    if program == "printf":
        if n > 2 and "-v" in literals[1:]:
            k = literals.index("-v")
            if k + 1 < n:
                verdicts[k + 1] = ("name", program, None)
                name = literals[k + 1]
                if name is not None and _code_variable(name):  # printf -v GIT_SSH %s {{x}}: an assignment
                    for j in range(k + 2, n):
                        if literals[j] is None:
                            verdicts[j] = ("reparse", f"what reads ${name}", None)
        return False
    if program in SEDS:
        return _sed(literals, prefixes, verdicts, option_kind)
    if program == "find":
        i, stdin = 1, False
        while i < n:
            text = literals[i]
            if text in FIND_EXEC:
                end = next((j for j in range(i + 1, n) if literals[j] in (";", "+")), n)
                if i + 1 < end:
                    # the command has find's standard input: … | find /dev -name stdin -exec sh {} ; runs it
                    sub, sub_stdin, inner = _scan(literals[i + 1:end], prefixes[i + 1:end],
                                                  [p or "" for p in prefixes[i + 1:end]])
                    stdin = stdin or (sub_stdin and inner)  # the program that runs it (a true value)
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
        return stdin
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
            verdicts[i] = code  # --expression='1e …', -e'1e …': the script is in the word
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


# ---------------------------------------------------------------- what a command makes unknowable (fail closed)
#
# Three classes of shapes leave the checker unable to know what a later word of the command does, whatever the
# words are: a program name rebound (hash -p, BASH_CMDS, alias, enable -f, PATH and the variables that load code, a
# file the command writes run as a program or a script), arithmetic on a name whose value the analysis cannot show
# is a number (bash evaluates a name's value as an expression, a[$(cmd)] included), and literal code in a language
# the analysis does not read while the command exports a value to it. In a command that holds a value, each makes
# every value of the command TD803. Literal shell code the command gives sh -c, eval, trap, su -c … is searched too.

REBOUND = "a command that rebinds program names: "
ARITHMETIC_NAME = "arithmetic on a name: "
OPAQUE_CODE = "literal code the checker cannot read: "
PRINTED_INTO = "an exported value piped into: "
ENV_SPLIT = "env -S escapes: "

#: variables whose value changes which program (or library, or loadable builtin) a name runs, whatever the value:
#: a folder searched first, bash's own tables. (Variables that name one file to load, BASH_ENV, ENV, LD_PRELOAD,
#: are code variables: a value there, or a file the command writes named there, is refused where it stands.)
PROGRAM_VARIABLES = frozenset("PATH LD_LIBRARY_PATH BASH_CMDS BASH_ALIASES BASH_LOADABLES_PATH".split())
#: variables bash expands as code of their own at a moment of its own (set -x's PS4="$(sh)", PROMPT_COMMAND), and
#: the builtins that run or load command history (fc -s re-runs a line history -r read from a file)
PROMPT_VARIABLES = frozenset("PS0 PS1 PS2 PS3 PS4 PROMPT_COMMAND".split())
HISTORY_BUILTINS = frozenset("history fc".split())
#: variables bash itself keeps numeric, and the special parameters: an arithmetic name that is one is a number
NUMERIC_NAMES = frozenset("RANDOM SRANDOM SECONDS LINENO BASHPID PPID UID EUID OPTIND HISTCMD EPOCHSECONDS".split())
#: programs that make a file under a name the command may then run (ln -sf /bin/sh ./cat)
FILE_MAKERS = frozenset("ln link cp install mv rsync tee dd".split())
#: builtins that set variables named by their operands
_NAME_SETTERS = frozenset("read mapfile readarray getopts".split())
#: programs whose literal code is in a language of its own (the other code _embedded_code reads as shell code)
OPAQUE_READERS = (SCRIPT_READERS | FILE_CODE_READERS) - SHELLS - {"make", "source", "."}
#: arithmetic identifiers: a name not glued to a number's digits (0x1f, 2#101)
_ARITH_NAME = re.compile(r"(?<![\w#@])[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"\A[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:#[0-9A-Za-z@_]+)?)\Z")
#: an exporting declaration or set -a
_EXPORTING = re.compile(r"\A-[a-zA-Z]*x")


def _unknowable(tree) -> str | None:
    """Why no later word of the command can be judged (REBOUND…, ARITHMETIC_NAME…, OPAQUE_CODE…, or "alias"), or
    None. One pass over the command and over each literal shell code text it holds (parsed once per text)."""
    if "unknowable" not in tree.cache:
        facts = _Facts()
        _gather(tree, facts, 0)
        tree.cache["unknowable"] = facts.verdict()
    return tree.cache["unknowable"]


class _Facts:
    """What _gather finds in a command and the shell code it holds."""

    def __init__(self):
        self.rebound = None  # the first rebinding found
        self.written = set()  # base names of files the command writes, links or copies
        self.run_paths = []  # (base name, shown) of programs run by a path (./cat)
        self.scripts = []  # (base name, shown) of script operands of interpreters given values
        self.integer = set()  # names declared -i
        self.unknown = set()  # names assigned something that may not be a number
        self.assigned_to = []  # (name, value text): assignments, for the integer names
        self.arithmetic = []  # texts bash evaluates as arithmetic
        self.exported = False  # the command exports an expansion's value to the programs it runs
        self.opaque = None  # literal code in a language the analysis does not read
        self.piped = None  # a program after a pipe that runs its standard input as code (… | sh)
        self.env_split = None  # an env -S string with env's own escapes or expansions (\_, \c, ${NAME})

    def verdict(self):
        if self.rebound:
            return self.rebound
        for base, shown in self.run_paths:  # "*": a file made under a name given at run time (any relative one)
            if base in self.written or ("*" in self.written and not shown.startswith("/")):
                return REBOUND + shown
        for base, shown in self.scripts:
            if base in self.written:
                return OPAQUE_CODE + shown
        for name, value in self.assigned_to:
            if name in self.integer:
                self.arithmetic.append(value)
        for text in self.arithmetic:
            for name in _ARITH_NAME.findall(text):
                if name in self.unknown or name.startswith(INPUT_PREFIX) or name.startswith(SUB_PREFIX):
                    return ARITHMETIC_NAME + name
            if re.search(r"\$(?:[0-9@*]|\{[0-9@*])", text):  # $1, "$@": the positional parameters
                return ARITHMETIC_NAME + "$1"
            if "$(" in text.replace("$((", "") or "`" in text:  # $(( $(cat) )): a command's output
                return ARITHMETIC_NAME + "$(…)"
        if self.env_split:
            return ENV_SPLIT + self.env_split
        if self.exported and self.opaque:
            return OPAQUE_CODE + self.opaque
        if self.exported and self.piped:  # r={{x}} printenv r | sh: any program may print its environment
            return PRINTED_INTO + self.piped
        return None


def _gather(tree, facts: _Facts, depth: int) -> None:
    if depth > MAX_NESTING:
        facts.rebound = facts.rebound or REBOUND + "code nested too deep"
        return
    stack = [(tree.root, False)]  # (node, inside a text already kept as arithmetic: kept once, so linear)
    while stack:
        node, inside = stack.pop()
        kind = node.type
        arithmetic = len(facts.arithmetic)
        if kind == "variable_assignment":
            target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if target is not None and target.type == "subscript":
                index = target.child_by_field_name("index")
                if index is not None:
                    facts.arithmetic.append(tree.source(index))
                target = target.child_by_field_name("name")
            name = tree.source(target) if target is not None else ""
            if name in PROGRAM_VARIABLES or name in PROMPT_VARIABLES:
                facts.rebound = facts.rebound or REBOUND + name
            text = tree.source(value) if value is not None else ""
            if not _NUMBER.match(text) and not (value is not None and value.type == "arithmetic_expansion") and \
                    not _arithmetic_statement(tree, node):
                facts.unknown.add(name)
            facts.assigned_to.append((name, text))
            parent = tree.parent(node)
            if parent is not None and parent.type == "command" and value is not None and _has_expansion(value):
                facts.exported = True  # x=$r prog: exported to prog
        elif kind == "array":  # a=([$i]=1), a+=([k]=v): each element's subscript is arithmetic
            for element in node.named_children:
                text = tree.source(element)
                if element.type == "concatenation" and text.startswith("[") and "]=" in text:
                    facts.arithmetic.append(text[1:text.rindex("]=")])
        elif kind == "for_statement":
            variable = node.child_by_field_name("variable")
            if variable is not None:
                name = tree.source(variable)
                if name in PROGRAM_VARIABLES:
                    facts.rebound = facts.rebound or REBOUND + name
                values = node.children_by_field_name("value")
                if not values or any(not _NUMBER.match(tree.source(v)) for v in values):
                    facts.unknown.add(name)
                facts.assigned_to.extend((name, tree.source(v)) for v in values)
        elif kind == "c_style_for_statement":  # its header only
            body = node.child_by_field_name("body")
            facts.arithmetic.append(tree.text[tree.span(node)[0]:tree.span(body)[0]] if body is not None else "")
        elif kind == "arithmetic_expansion" or (
                kind in ("compound_statement", "command_substitution") and tree.source(node).startswith(("((", "$(("))):
            facts.arithmetic.append(tree.source(node))  # $((…)) inside ${u:-…} reads as $( (…) ) to the grammar
        elif kind == "subscript":
            index = node.child_by_field_name("index")
            if index is not None:
                facts.arithmetic.append(tree.source(index))
        elif kind == "expansion" and _SUBSTRING.match(tree.source(node)):
            facts.arithmetic.append(tree.source(node)[_SUBSTRING.match(tree.source(node)).end():])
        elif kind == "binary_expression" and _in_test(tree, node):
            operator = node.child_by_field_name("operator")
            if operator is not None and tree.source(operator) not in STRING_TEST_OPERATORS:
                facts.arithmetic.extend(tree.source(side) for side in (node.child_by_field_name("left"),
                                                                      node.child_by_field_name("right")) if side)
        elif kind == "declaration_command":
            flags = [tree.source(c) for c in node.named_children if c.type == "word" and tree.source(c)[:1] in "-+"]
            first = tree.source(node).split(None, 1)[0]
            integer = any(f.startswith("-") and "i" in f for f in flags)
            if first == "export" or any(_EXPORTING.match(f) for f in flags):
                facts.exported = True  # export r (fail closed: any variable)
            for c in node.named_children:
                target = c.child_by_field_name("name") if c.type == "variable_assignment" else c
                if target is not None and target.type == "subscript":
                    target = target.child_by_field_name("name")
                if target is None or target.type not in ("variable_name", "word"):
                    continue
                name = tree.source(target)
                if name in PROGRAM_VARIABLES:
                    facts.rebound = facts.rebound or REBOUND + name
                if integer and not name.startswith(("-", "+")):
                    facts.integer.add(name)
        elif kind == "file_redirect" and any(tree.source(c) in _WRITES for c in node.children if not c.is_named):
            target = node.child_by_field_name("destination")
            text = _literal(tree, target) if target is not None else None
            if text is not None:
                facts.written.add(os.path.basename(text.rstrip("/")) or text)
        elif kind == "command":
            _gather_command(tree, node, facts, depth)
        elif kind in ("heredoc_redirect", "herestring_redirect") and facts.piped is None:
            facts.piped = _fed_runner(tree, node)  # python3 - <<'E' …: code on its standard input
        elif kind == "pipeline" and facts.piped is None:  # (cmd <<E | sh: the grammar puts `| sh` in the redirect)
            after = node.named_children[0 if getattr(tree.parent(node), "type", None) == "heredoc_redirect" else 1:]
            facts.piped = next(filter(None, (_reader_in(tree, part) for part in after)), None)
        kept = len(facts.arithmetic) > arithmetic
        if inside and kept and kind != "command":  # already read as part of the text around it
            del facts.arithmetic[arithmetic:]
        stack.extend((child, inside or kept) for child in node.named_children)


def _arithmetic_statement(tree, node) -> bool:
    """An assignment bash reads inside arithmetic (for ((i=0; …)), its value an arithmetic text checked itself."""
    parent = tree.parent(node)
    return parent is not None and parent.type in ("c_style_for_statement", "arithmetic_expansion", "binary_expression")


def _has_expansion(node) -> bool:
    stack = [node]
    while stack:
        part = stack.pop()
        if part.type in _EXPANSIONS or part.type in ("command_substitution", "arithmetic_expansion"):
            return True
        stack.extend(part.named_children)
    return False


def _gather_command(tree, node, facts: _Facts, depth: int) -> None:
    info = _command_info(tree, node)
    if info is None:
        return
    literals = [_literal(tree, w) for w in info.words]
    while len(literals) > 1 and literals[0] is not None and _program_name(literals[0]) in ("command", "builtin"):
        literals = literals[1:]  # command hash -p …, builtin enable -f …: the builtin itself
        while len(literals) > 1 and literals[0] is not None and literals[0].startswith("-"):
            literals = literals[1:]
    first = literals[0]
    name = _program_name(first) if first is not None else None
    flags = "".join(w[1:] for w in literals[1:] if w is not None and w.startswith("-") and not w.startswith("--"))
    if name in HISTORY_BUILTINS:
        facts.rebound = facts.rebound or REBOUND + name
    if facts.env_split is None and any(w is not None and _program_name(w) == "env" for w in literals):
        facts.env_split = next((text for text in _env_split_strings(literals)
                                if text is not None and ("\\" in text or "$" in text)), None)
    if name == "hash" and ("p" in flags or None in literals[1:]):
        facts.rebound = facts.rebound or REBOUND + "hash -p"
    if name == "enable" and ("f" in flags or None in literals[1:]):
        facts.rebound = facts.rebound or REBOUND + "enable -f"
    if info.program == "alias" and any("=" in _prefix(tree, w) or _literal(tree, w) is None for w in info.words[1:]):
        facts.rebound = facts.rebound or "alias"
    if name == "set" and ("a" in flags or "allexport" in literals):
        facts.exported = True
    if name == "export" or (name in DECLARERS and "x" in flags):  # command export r, builtin declare -x r
        facts.exported = True
    if name == "read":  # read with no name sets REPLY, mapfile with none MAPFILE (fail closed: always)
        facts.unknown.add("REPLY")
    if name in ("mapfile", "readarray"):
        facts.unknown.add("MAPFILE")
    if name in _NAME_SETTERS or (name == "printf" and "-v" in literals):
        for word in literals[1:]:
            if word is not None and not word.startswith("-"):
                facts.unknown.add(word)
                if word in PROGRAM_VARIABLES:
                    facts.rebound = facts.rebound or REBOUND + word
    if name == "let":
        facts.arithmetic.extend(w if w is not None else "$1" for w in literals[1:])
    for k, word in enumerate(info.words[1:], 1):  # env PATH=… cat, sudo LD_PRELOAD=… cat
        prefix = _prefix(tree, word)
        if "=" in prefix and prefix.split("=", 1)[0] in PROGRAM_VARIABLES | PROMPT_VARIABLES and any(
                w is not None and _program_name(w) in ("env", "sudo") for w in literals[:k]):
            facts.rebound = facts.rebound or REBOUND + prefix.split("=", 1)[0]
        if "=" in prefix and any(w is not None and _program_name(w) in ("env", "sudo") for w in literals[:k]) and \
                _has_expansion(word):
            facts.exported = True
    if first is not None and "/" in first:
        facts.run_paths.append((os.path.basename(first.rstrip("/")), first))
    if name is not None and _is_wrapper(name):  # env ./cat, timeout 5 ./cat, nice env ./cat: the path it runs
        for word in literals[1:]:
            if word is None or word.startswith("-") or _ASSIGNMENT_WORD.match(word) or \
                    re.fullmatch(r"[0-9.]+[smhd]?", word):
                continue
            if "/" in word:
                facts.run_paths.append((os.path.basename(word.rstrip("/")), word))
            if not _is_wrapper(_program_name(word)):
                break
    maker = next((k for k, w in enumerate(literals) if w is not None and _program_name(w) in FILE_MAKERS), None)
    if maker is not None and (maker > 0 or any(w is None or "{}" in w for w in literals[1:])):
        # ln -s /bin/sh "$(printf cat)", xargs -I{} ln -s {} cat: a name made at run time may be any
        if any(w is None or "{}" in w for w in literals[maker + 1:]):
            facts.written.add("*")
    if name in ("curl", "wget") or (name in INTERPRETERS and any(
            v is not None and v[0] == "reparse" for v in info.verdicts)):
        # curl -so cat URL, python3 -c 'shutil.copy(…, "cat")': a program that writes files by names of its own
        # (fail closed for every relative program path of the command)
        facts.written.add("*")
    if name in FILE_MAKERS:
        for word in literals[1:]:
            if word is not None and not word.startswith("-"):
                word = word[3:] if name == "dd" and word.startswith("of=") else word
                facts.written.add(os.path.basename(word.rstrip("/")) or word)
                if word in (".", "./") or word.endswith("/"):  # ln -s /bin/sh . : every name it copies
                    facts.written.update(os.path.basename(w.rstrip("/")) for w in literals[1:] if w)
    if name in SCRIPT_READERS and None in literals[1:]:
        for word in literals[1:]:
            if word is not None and not word.startswith("-"):
                facts.scripts.append((os.path.basename(word.rstrip("/")) or word, f"{first} {word}"))
    for word, verdict in zip(info.words, info.verdicts):
        code = _shell_code(tree, word, verdict)
        if code is not None:
            _gather_code(code[1], facts, depth + 1)
        elif verdict is not None and verdict[0] == "reparse" and _literal(tree, word) is not None and \
                facts.opaque is None and _program_name(verdict[1].split()[0]) in OPAQUE_READERS | {"sqlite3"}:
            # (sed --expression=…, vim +CMD, sqlite3's .shell)
            facts.opaque = f"{verdict[1]} {_literal(tree, word)[:40]}"


def _gather_code(script: str, facts: _Facts, depth: int) -> None:
    """_gather over literal shell code of the command (sh -c '…', eval '…'); code it cannot parse rebinds anything."""
    try:
        inner = _Tree(script)
    except RecursionError:
        inner = None
    if inner is None or inner.root.has_error:
        return  # judged where it stands (_script_reads_stdin, _code_uses fail closed)
    _gather(inner, facts, depth)


# ---------------------------------------------------------------- wrappers judged by an allowlist of their options

ASSIGNED = "where a wrapper reads assignments: "
UNKNOWN_OPTION = "after an option the checker does not know: "


def _is_wrapper(program) -> bool:
    spec = PROGRAMS.get(program)
    return (spec is not None and spec.command_at is not None) or program in RUN_SUBCOMMANDS


def _wrapper_spec(program, spec, literals):
    """The table entry for this use of program: runuser -u USER CMD… (or --user) is a wrapper whose command is its
    first operand; runuser USER ARG… hands its operands to the user's shell (as su does)."""
    if program == "runuser" and spec is not None and any(
            w is not None and (w in ("-u", "--user") or w.startswith("--user=") or
                               (w.startswith("-u") and not w.startswith("--"))) for w in literals[1:]):
        from dataclasses import replace
        return replace(spec, command_at=0, code_from=None, stdin=False, stdin_always=False)
    return spec


def _wrapper_option(spec, pre, lit) -> str:
    """What a wrapper judged by its allowlist reads in an option word: "known", "unknown", "value" (a value in the
    option's word, whose letters are not known) or the shell option (-s: the command runs through a shell)."""
    if lit is None and pre in ("-", "--"):
        return "value"
    head = pre.split("=", 1)[0]
    if pre.startswith("--"):
        head = _long_option(head, spec) if head not in spec.long_flags | spec.long_shell_flags else head
        if head in spec.long_shell_flags:
            return head
        known = spec.long_args | spec.long_code | spec.long_load | spec.long_flags
        return "known" if head in known else "unknown"
    shell = None
    for j, ch in enumerate(pre[1:]):
        if ch in spec.args or ch in spec.code or ch in spec.optional:
            break  # the rest of the word is its value
        if ch in spec.shell_flags:
            shell = shell or f"-{ch}"
            continue
        if ch not in spec.flags:
            return "unknown"
    return shell or "known"


def _unknown_option(program, pre, literals, i) -> tuple[list, str]:
    """Verdicts for a wrapper given an option its allowlist does not hold: every value from there on is code (the
    option may take the next word, so which word is the command is not known, or change what runs: env -P, --argv0)."""
    shown = UNKNOWN_OPTION + f"{program} {pre.split('=', 1)[0] or '-…'}"
    return [None] * i + [("reparse", shown, None) if lit is None else None for lit in literals[i:]], shown


def _env_split_strings(literals):
    """The strings env -S (--split-string, -vS, -S…) is given among a command's words, after an env."""
    after = False
    for k, word in enumerate(literals):
        if word is None:
            continue
        if not after:
            after = _program_name(word) == "env"
            continue
        nxt = literals[k + 1] if k + 1 < len(literals) else ""
        if word == "--split-string" or (len(word) > 3 and "--split-string".startswith(word)):
            yield nxt
        elif word.startswith("--split-string=") or (word.startswith("--sp") and "=" in word):
            yield word.split("=", 1)[1]
        elif word.startswith("-") and not word.startswith("--") and "S" in word[1:]:
            letters = word[1:]
            yield letters[letters.index("S") + 1:] or nxt


def _env_split_reads_stdin(literals, end) -> bool:
    """env -S STRING [ARG…]: env splits STRING into a program and its arguments; does that command (with the operands
    after it) run its standard input as code (env -S sh, env -S 'bash -x')? A string given at run time does (fail closed)."""
    for k in range(1, end):
        word = literals[k]
        if word is None:
            continue
        text = None
        if word in ("-S", "--split-string") and k + 1 < end:
            text = literals[k + 1]
            rest = k + 2
        elif word.startswith("--split-string="):
            text, rest = word.split("=", 1)[1], k + 1
        elif word.startswith("-S") and not word.startswith("--"):
            text, rest = word[2:], k + 1
        elif word.startswith("-") and not word.startswith("--") and "S" in word[1:]:
            letters = word[1:]
            text = letters[letters.index("S") + 1:] or (literals[k + 1] if k + 1 < end else "")
            rest = k + 1 if letters[letters.index("S") + 1:] else k + 2
        else:
            continue
        if text is None:
            return True
        try:
            words = shlex.split(text)
        except ValueError:
            return True
        words = words + [w for w in literals[rest:]]
        if not words:
            return False
        if words[0] is None:
            return True
        _, stdin, _ = _scan(words, [w or "" for w in words], [w or "\0" for w in words])
        return stdin
    return False


def _git_config_env(word) -> bool:
    """git's --config-env given its NAME=VAR as the next word (also an abbreviation git accepts: --config-e)."""
    return word is not None and len(word) >= len("--config-e") and "--config-env".startswith(word)
