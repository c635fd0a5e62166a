"""Running safely (TD801–TD805): what the runner would refuse, reported while editing.

TD801, TD803, TD804 and TD805 ask taskdsl.language.shell where each {{…}} of a <command> sits in the
shell's grammar (one meaning: the runner asks the same module); TD802 asks
taskdsl.project.confine whether a listed file may be read. The runner asks the same functions.
"""

from __future__ import annotations

import os
import re

from taskdsl.project import confine

from taskdsl.language import shell
from taskdsl.language.diagnostics import Fix, Severity, TextEdit
from taskdsl.language.document import Element, Span
from taskdsl.rules.registry import RuleContext, rule
from taskdsl.rules.util import make, raw_offsets, text_span


def _offsets(element: Element) -> list[tuple[int, int]]:
    """For each character of element.text: its (start, end) in the document."""
    spans: list[tuple[int, int]] = []
    for piece in element.text_pieces:
        if piece.cdata:  # only line ends are decoded: a CR LF is one LF
            raw = piece.raw
            spans.extend((piece.start + i, piece.start + i + (2 if raw[i:i + 2] == "\r\n" else 1))
                         for i in range(len(raw)) if not (raw[i] == "\n" and i and raw[i - 1] == "\r"))
        else:
            spans.extend((piece.start + a, piece.start + b) for a, b in raw_offsets(piece.raw))
    return spans


def _command_sites(ctx: RuleContext, code: str | None):
    """(command element, its offsets, site) for every placeholder whose code is code (None: the safe ones)."""
    for command in ctx.tagged("command"):
        text = command.text
        if "{{" not in text:
            continue
        chosen = [site for site in shell.sites(text) if site.code == code]
        if chosen:
            offsets = _offsets(command)
            for site in chosen:
                yield command, offsets, site


def _span(offsets, start: int, end: int) -> Span:
    return Span(offsets[start][0], offsets[max(start, end - 1)][1])


def _xml(command: Element, text: str) -> str | None:
    """text as it must be written in the command's element (None inside CDATA: no fix offered)."""
    if any(piece.cdata for piece in command.text_pieces):
        return None
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@rule("TD801", Severity.ERROR, "{{…}} where a shell command cannot take a value safely",
      what="A `{{…}}` of a `<command>` sits where the shell grammar (tree-sitter-bash) does not place it as one "
           "word or as literal text: inside '…' or $'…', in a here-document with a quoted delimiter or in its "
           "delimiter word, inside `…` (write $(…)), right after a backslash or '$', inside ${…}, the target of `>&`/`<&`, in arithmetic ($((…)), let, "
           "declare -i, an array subscript), where bash reads a variable name (unset, read, printf -v, wait -p, "
           "getopts, declare -n, test -v) or in the option position of bash's printf and wait (-vNAME), in a word "
           "with a brace expansion ({a,b}, {1..3}: bash splits it into several words), or anywhere the grammar "
           "does not model.",
      why="Values are never pasted into a command: each becomes a reference to an environment variable "
          "holding it, in the form its place needs, so no input, file or model answer can become shell "
          "syntax. A reference is used only where the syntax tree shows it expands exactly once to one word "
          "or to literal text; bash evaluates arithmetic and subscripts again (a value a[$(cmd)] runs cmd), "
          "so those places cannot take a value. The run refuses with the same message.",
      bad="<command>grep '{{pattern}}' notes.txt</command>",
      good="<command>grep -- {{pattern}} notes.txt</command>  (or: grep -- \"$TASKDSL_INPUT_PATTERN\" notes.txt)",
      fix="Read the value from its environment variable ($TASKDSL_INPUT_<NAME>) instead, write $(…) for "
          "backticks, unquote the here-document's delimiter, or compute in a program that reads the value as "
          "data (awk -v n=\"$TASKDSL_INPUT_N\"). No quick fix is offered: closing the quotes around the "
          "placeholder would put the value into an awk, sed or jq program as code.",
      tags=("command",))
def unsafe_substitution_rule(ctx: RuleContext):
    for command, offsets, site in _command_sites(ctx, shell.UNSAFE_CODE):
        ph = site.placeholder
        span = _span(offsets, ph.start, ph.end)
        # no quick fix: closing '…' around the value would put it into an awk, sed or jq program as code
        yield make("TD801", span, shell.unsafe_message(site))


@rule("TD803", Severity.ERROR, "{{…}} in text a program parses again as code",
      what="A `{{…}}` of a `<command>` reaches a program that parses it again as code: an argument of `eval`, "
           "`alias`, `trap` or `watch`, the script of a shell given -c (`sh`, `bash`, `dash`, `zsh`, `ksh`, … also "
           "combined: `bash -xc`, `sh -ec`), `su -c`, `script -c`, `flock FILE -c`, any word after `ssh HOST`, the "
           "code of `python -c` (also `-Ic`, `-c…`), `perl -e`, `node -e`, `ruby -e`, `php -r`, `lua -e`, `R -e`, `osascript -e`, `dc`, `m4`, `duckdb -c`, a `jq`/`yq` filter (its `--arg NAME VALUE` is data), `mlr`'s verbs, "
           "`env -S`, an `awk` program, a `sed` script, every operand of `make` (an assignment's $(shell …), a "
           "target pasted into a recipe), an option that loads a module the value names (`node --import`, "
           "`-r`, `python -m`, `perl -M`, `ruby -r`, …), an option value that is a command (`ssh -o`, `git -c`, "
           "`tar --to-command`/`-I`/`--checkpoint-action`, `rsync -e`, `sort --compress-program`, …), or the "
           "standard input of a shell, python, perl, ssh … given no script (a pipe, a here-document or a "
           "here-string, also `bash -e`, `python3 -u -`, `xargs sh -c`, `xargs -I{} sh -c {}`), through any "
           "chain of wrappers (env, sudo, nice, ionice, chrt, taskset, stdbuf, setsid, nohup, timeout, flock, "
           "command, exec, time, busybox, xargs, find -exec), `$(…)` and process substitution (`bash <(…)`, "
           "`source <(…)`, `… > >(sh)`). So is a script operand that is standard input (`bash /dev/stdin`), "
           "`compgen -W`, `mapfile -C`, and a value assigned to an environment variable read as code (`BASH_ENV`, "
           "`ENV`, `PS4`, `PROMPT_COMMAND`, `LD_PRELOAD`, `GIT_SSH_COMMAND`, `PAGER`, `EDITOR`, … the list is in "
           "docs/security.md). A program named at run time "
           "(`\"$SHELL\" -c`, `$CMD`, `{{prog}}`) fails closed: every value among its arguments is TD803. So is a "
           "value the command hands on and runs later: a variable or the positional parameters holding it, "
           "expanded where code is read (`r={{x}}; eval \"$r\"`, `set -- sh -c {{x}}; \"$@\"`, "
           "`sh -c 'eval \"$1\"' _ {{x}}`), or a file it was written to that the command runs "
           "(`printf '%s' {{x}} > f; sh f`). A value where a wrapper reads its options or assignments is TD803: "
           "`env` and `sudo` read `NAME=VALUE` before their command also after `--` (`env -- {{x}} prog`), an "
           "option a wrapper's allowlist does not hold may take the next word or change what runs (`env -P`, "
           "`--argv0`), and `xargs env` or `xargs -I{} env {}` makes the items a command line or an assignment. "
           "And every value of a command is TD803 when the command makes later words unknowable: it rebinds a "
           "program name (`hash -p`, `BASH_CMDS`, an alias, `enable -f`, `PATH`, a file it writes run as a "
           "program), does arithmetic on a name that may hold a value (`n={{x}}; declare -i m; m=n`), or runs "
           "literal code of another language with a value exported to it or a script it wrote.",
      why="The value reaches such a program byte for byte, and the program then reads it as code: a value "
          "`$(touch x)` runs touch. Passing the value as an argument after the code keeps it data.",
      bad="<command>sh -c \"echo {{name}} | tr a-z A-Z\"</command>",
      good="<command>sh -c 'echo \"$1\" | tr a-z A-Z' _ {{name}}</command>",
      fix="Pass the value as a positional argument and name it in the script: sh -c '… \"$1\"' _ {{x}} (the "
          "quick fix writes it for sh -c scripts in double quotes); for python, perl, node, ruby and awk read "
          "it from sys.argv, ARGV, process.argv, awk -v or the environment ($TASKDSL_INPUT_<NAME>).",
      tags=("command",))
def reparsed_value_rule(ctx: RuleContext):
    for command, offsets, site in _command_sites(ctx, shell.REPARSE_CODE):
        ph = site.placeholder
        fixes = []
        for start, end, text in site.fix[:1]:
            written = _xml(command, text)
            if written is not None:
                fixes.append(Fix("Pass the value as a positional argument ($1)",
                                 (TextEdit(_span(offsets, start, end), written),)))
        yield make("TD803", _span(offsets, ph.start, ph.end), shell.unsafe_message(site), fixes=fixes)


@rule("TD804", Severity.ERROR, "shell command that does not parse",
      what="A `<command>` that the shell grammar (tree-sitter-bash) cannot parse: an unterminated quote, "
           "`$(` or here-document, a stray `)` or `;;`, a keyword out of place; one that holds a control "
           "character other than TAB and LF (a CR is a blank to bash's grammar, part of a word to dash); "
           "`$'…'` in a command with a `{{…}}` (bash-only: /bin/sh may be dash); in such a command, a line "
           "continuation (\\ at the end of a line) after anything but a blank (the shell joins the two lines "
           "into one word, the grammar reads two) or a here-document whose end line is not exactly its "
           "delimiter; `coproc`, `[[ … ]]`, `(( … ))` and `for (( … ))` in a command with a `{{…}}` (bash-only: "
           "dash reads them as a command line of its own, where || && ; run a value as a program and < > << "
           "redirect); a command nested too deeply "
           "to check (also when a check of TD801–TD805 fails: the checker fails closed).",
      why="The command fails when the shell reads it, and no `{{…}}` in it can be placed safely.",
      bad="<command>echo 'unterminated</command>",
      good="<command>echo 'terminated'</command>",
      fix="Close the quote or bracket the error points at.",
      tags=("command",))
def unparsable_command_rule(ctx: RuleContext):
    for command in ctx.tagged("command"):
        text = command.text
        if not text.strip():
            continue
        problem = shell.parse_problem(text)
        if problem is None:
            continue
        offsets = _offsets(command)
        start = min(problem[0], len(offsets) - 1)
        yield make("TD804", _span(offsets, start, max(start + 1, min(problem[1], len(offsets)))),
                   problem[2] or f"the shell cannot parse this command (at {text[start:start + 20]!r}): close the "
                                 f"quote, bracket or here-document, or fix the syntax there")


@rule("TD805", Severity.WARNING, "{{…}} where a program reads a leading '-' as an option",
      what="A `{{…}}` starts an argument, or completes an option's name (`tar --{{x}}`), before any `--` of a "
           "program whose options can run commands or write files. It is an **error** (the run refuses) when one of the program's options runs a command: "
           "tar (--to-command, -I), find (-exec), xargs, git (--upload-pack, -c), rsync (-e), ssh and scp "
           "(-oProxyCommand), zip, sort, man, tcpdump, make, wget, sed, awk, shells and interpreters (-c, -e). "
           "It is a warning for the others whose options write files (curl, wget, cp, mv, tee, …). The lists "
           "follow GTFOBins, https://gtfobins.github.io, and SonarSource's argument injection vectors, "
           "https://sonarsource.github.io/argument-injection-vectors/. echo, printf '%s' and programs whose "
           "options cannot do harm are not reported. (env and sudo, which read NAME=VALUE operands after `--` "
           "too, report TD803 there instead, with no fix.)",
      why="The value reaches the program as one word, but a word starting with '-' is an option there: "
          "`tar {{x}} …` with `--checkpoint-action=exec=…` or `find {{x}}` with `-exec …` runs a command. Where an option runs a command the value would be "
          "code, so it is an error there, as TD803 is; elsewhere a warning.",
      bad="<command>tar -cf out.tar {{path}}</command>",
      good="<command>tar -cf out.tar -- {{path}}</command>",
      fix="Insert `--` before the value, so the program reads every later word as an operand (the quick fix).",
      tags=("command",))
def option_position_rule(ctx: RuleContext):
    for code in (None, shell.OPTION_CODE):
        for command, offsets, site in _command_sites(ctx, code):
            if site.option_at is None:
                continue
            ph = site.placeholder
            at = offsets[site.option_at][0]
            yield make("TD805", _span(offsets, ph.start, ph.end), shell.option_message(site),
                       severity=Severity.ERROR if code else None,
                       fixes=[Fix("Insert -- before the value", (TextEdit(Span(at, at), "-- "),))])


@rule("TD802", Severity.WARNING, "file outside the project",
      what="A `<path>` of `<file_paths>` names a file outside the project (the nearest folder upward with "
           "taskdsl.toml, pyproject.toml or .git), through `..`, an absolute path or a symbolic link, or a "
           "file under /proc, /sys or /dev.",
      why="File contents are sent to a model. A run reads only inside the project unless a folder is "
          "allowed on purpose, and never /proc, /sys or /dev (process environments, devices): the run "
          "refuses such a path.",
      bad="<file_paths><path>../../.ssh/id_rsa</path></file_paths>",
      good="<file_paths><path>docs/notes.md</path></file_paths>",
      fix="Copy the file into the project, or allow its folder: --allow-read FOLDER on `taskdsl run`, "
          "`allow_read` in the [run] table of taskdsl.toml, or the editor setting taskdsl.run.allowRead.",
      tags=("file_paths",))
def read_outside_rule(ctx: RuleContext):
    folder = os.path.dirname(os.path.abspath(ctx.path)) if ctx.path else None
    allowed = ctx.settings.run_allow_read
    for file_paths in ctx.tagged("file_paths"):
        for path in file_paths.children_named("path"):
            written = path.text.strip()
            if not written or "{{" in written or (folder is None and not os.path.isabs(written)):
                continue  # known only when the task runs: the runner asks then
            full = os.path.join(folder or "/", written)
            root = confine.project_root(ctx.path) if ctx.path else os.path.dirname(full)
            refusal = confine.read_refusal(full, root, allowed)
            if refusal:
                yield make("TD802", text_span(path) or path.name_span,
                           f"a run refuses to read this file: {refusal}")


# the name wherever it stands, not only after `$` or `${`: `${#NAME}`, `$((NAME + 1))`, `printenv NAME` and code of
# another language (os.environ["NAME"]) read it too
_ENVIRONMENT_READ = re.compile(r"(?<![A-Za-z0-9_])(" + re.escape(shell.INPUT_PREFIX) + r"([A-Za-z0-9_]+))")


@rule("TD806", Severity.WARNING, "$TASKDSL_INPUT_<NAME> a script task does not set",
      what="A script's `<command>` reads `$TASKDSL_INPUT_<NAME>`, and the task does not export that name: the "
           "environment has TASKDSL_INPUT_<NAME> only for the script task's own inputs and what its caller binds "
           "(a template's params when the script is the template's task, the reduce's names in an inner_task or "
           "reduction_task). A name the task only inherits from a task around it is not exported.",
      why="The variable is unset, so the command reads an empty value and runs on: the output is silently "
          "wrong. TD801's advice (read the value from $TASKDSL_INPUT_<NAME>) needs the name to be an input.",
      bad='<task type="sequential" name="page">\n  <inputs><input name="ticket"/></inputs>\n  <steps>\n'
          '    <task type="script"><command>echo "$TASKDSL_INPUT_TICKET"</command></task>\n  </steps>\n</task>',
      good='<task type="script"><inputs><input name="ticket" from="ticket"/></inputs>'
           '<command>echo "$TASKDSL_INPUT_TICKET"</command></task>',
      fix="Declare the name as an input of the script task (`<input name=\"ticket\" from=\"ticket\"/>`; quick fix "
          "when the name is visible there), or correct a misspelt name (did-you-mean quick fix).",
      tags=("command",))
def unexported_variable_rule(ctx: RuleContext):
    from taskdsl.language.names import nearest
    from taskdsl.meaning.facts import task_type
    from taskdsl.meaning.scope import exported_names
    from taskdsl.rules.util import append_child_edit

    for command in ctx.tagged("command"):
        task = command.parent
        if task is None or shell.INPUT_PREFIX not in command.text or task_type(task) != "script":
            continue
        exported = None
        offsets = _offsets(command)
        for match in _ENVIRONMENT_READ.finditer(command.text):
            if exported is None:
                bindings = ctx.model.scopes.visible(task)
                exported = exported_names(task, bindings)
            wanted = match.group(2).upper()
            if wanted in exported:
                continue
            variable = match.group(1)
            span = _span(offsets, match.start(1), match.end(1))
            visible = {name.upper(): name for name in bindings}
            if wanted in visible:
                name = visible[wanted]
                declaration = f'<input name="{name}" from="{name}"/>'
                block = task.child("inputs")
                edit = append_child_edit(ctx.document, block, declaration) if block is not None else \
                    _inputs_edit(ctx, task, declaration)
                fixes = [Fix(f"Declare '{name}' as an input of this script task", (edit,))] if edit else []
                yield make("TD806", span, f"${variable} is not set for this script: '{name}' is visible here but not "
                                          f"an input of the task, and only its inputs are in its environment; declare "
                                          f"it ({declaration}) or write {{{{{name}}}}}", fixes=fixes)
                continue
            close, _ = nearest(wanted, list(exported))
            hint = f"; did you mean ${shell.INPUT_PREFIX}{close}?" if close else \
                (f" (it sets {', '.join('$' + shell.INPUT_PREFIX + n for n in sorted(exported))})" if exported else "")
            fixes = [Fix(f"Change to {shell.INPUT_PREFIX}{close}", (TextEdit(span, shell.INPUT_PREFIX + close),),
                         safe=False)] if close else []
            yield make("TD806", span, f"${variable} is not set for this script: no input of the task is named "
                                      f"'{match.group(2).lower()}'{hint}", fixes=fixes)


def _inputs_edit(ctx: RuleContext, task: Element, declaration: str):
    "An edit that gives a script task with no <inputs> one holding declaration, just before its <command>."
    command = task.child("command")
    text = ctx.document.text
    line_start = text.rfind("\n", 0, command.start) + 1
    indent = text[line_start:command.start]
    if indent.strip():  # the command shares its line: keep it there
        return TextEdit(Span(command.start, command.start), f"<inputs>{declaration}</inputs>")
    return TextEdit(Span(command.start, command.start), f"<inputs>{declaration}</inputs>\n{indent}")
