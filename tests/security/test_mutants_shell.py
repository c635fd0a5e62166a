"""The shell grammar's decisions, in this process and fast: for a command, the codes the checker gives
(TD801, TD803, TD804, TD805) and their exact messages, through `check_text` (the checker's own entry point).
Mutation testing runs these against each mutant of taskdsl.language.shell (see docs/security.md "Mutation
testing"); the CLI tests hold the same decisions end to end but cost a process or a run each.

The cases of the CLI tests that only check a refusal (test_shell_programs.py, test_shell_review.py) are
re-run here with their `refused` made in-process; the construct grammar of test_security_shell.py is
checked here without running its commands."""

from __future__ import annotations

import re

import pytest

import test_security_shell as constructs
from security import test_shell_programs as programs
from security import test_shell_review as review
from taskdsl.language import shell
from taskdsl.rules.checker import check_text

SCRIPT = """<task type="script" name="s">
  <command>{command}</command>
  <inputs><input name="x">placeholder</input><input name="y">other</input></inputs>
</task>
"""


def diagnostics(command: str, *, escape: bool = True) -> list[tuple[str, str, str]]:
    """(severity, code, message) of every TD80x the checker gives for a script task running command."""
    text = command.replace("&", "&amp;").replace("<", "&lt;") if escape else command
    result = check_text(SCRIPT.format(command=text))
    return [(d.severity.value, d.code, d.message) for d in result.diagnostics if d.code.startswith("TD80")]


def errors(command: str) -> list[tuple[str, str]]:
    return [(code, message) for severity, code, message in diagnostics(command) if severity == "error"]


# ---------------------------------------------------------------- the CLI tests' refusals, in this process

def _refusal_cases():
    for module in (programs, review):
        for name, test in sorted(vars(module).items()):
            if not name.startswith("test_") or "refused" not in test.__code__.co_names:
                continue
            marks = [mark for mark in getattr(test, "pytestmark", []) if mark.name == "parametrize"]
            if not marks:
                yield pytest.param(module, name, {}, id=name)
                continue
            argnames, values = marks[0].args[:2]
            argnames = [a.strip() for a in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
            for k, value in enumerate(values):
                value = value.values if hasattr(value, "values") else value
                args = dict(zip(argnames, value if len(argnames) > 1 else (value,)))
                yield pytest.param(module, name, args, id=f"{name}-{k}")


@pytest.mark.parametrize("module, name, args", list(_refusal_cases()))
def test_each_refusal_of_the_cli_tests_is_the_checkers_decision(module, name, args, monkeypatch, tmp_path):
    """The CLI test's own body, with `refused` checking the command in this process: the code and the message."""
    seen = []

    def refused(tmp_path, capsys, monkeypatch_, command, value, code, message, *, escape=True):
        found = [(c, m) for s, c, m in diagnostics(command, escape=escape) if s == "error"]
        assert any(c == code and message in m for c, m in found), (command, code, message, found)
        seen.append(command)

    monkeypatch.setattr(module, "refused", refused)
    monkeypatch.chdir(tmp_path)  # a body that also runs a command writes in its own folder, never the checkout
    getattr(module, name)(tmp_path=tmp_path, capsys=None, monkeypatch=monkeypatch, **args)
    assert seen


# ---------------------------------------------------------------- the construct grammar, checked only

BASH_ONLY = re.compile(r"\[\[|(?<!\$)\(\(")

@pytest.mark.parametrize("sink", range(len(constructs.SINKS)))
def test_every_construct_is_refused_or_accepted_as_its_sink_says(sink):
    """A sink that parses the value again (or has no safe form) is refused in every construct; a safe sink is
    accepted in every construct but these: a here-document whose end line holds more than its delimiter (TD804), a
    line continuation in a command with an unquoted here-document (TD804), backticks (TD801)."""
    template, expected = constructs.SINKS[sink]
    for wrap in constructs.WRAPS:
        if wrap.startswith("f() ") and "> f;" in template:
            continue  # a file named like the function it writes: `f` is refused as the file (fail closed)
        command = wrap.format(S=template.rstrip("\n"))
        if "<<EOF" in template and not command.endswith("\n"):
            command += "\n"
        codes = sorted({code for code, _ in errors(command)})
        if expected is None:
            assert codes and set(codes) <= {"TD801", "TD803", "TD804", "TD805"}, command
        elif BASH_ONLY.search(command):  # [[ … ]] or (( … )) in a command with a value: /bin/sh reads them otherwise
            assert codes == ["TD804"], command
        elif "<<EOF" in command and ("EOF" not in command.split("\n") or "\\\n" in command):
            assert codes == ["TD804"], command
        elif wrap.startswith(": `"):
            assert codes == ["TD801"], command
        else:
            assert codes == [], command


def _cases(test):
    return [mark for mark in test.pytestmark if mark.name == "parametrize"][0].args[1]


@pytest.mark.parametrize("command", _cases(programs.test_values_that_are_an_options_argument_or_after_the_script_are_not_options)
                         + _cases(programs.test_third_review_harmless_commands_still_run)
                         + _cases(programs.test_bash_only_syntax_under_sh_never_runs_the_value)
                         + ["echo {{x}}; printf '%s' {{x}}", 'sed "s/hello/bye/" -- {{x}}',
                            "alias > /dev/null; printf '[%s]' {{x}} > out",
                            'while read -r l; do printf "[%s]" "$l"; done > out <<EOF\n{{x}}\nEOF',
                            "f() { cat; }\nf > out <<EOF\n[{{x}}]\nEOF",
                            "cat > out <<'EOF'\na \\\nEOF\nprintf '[%s]' {{x}} >> out"])
def test_commands_the_cli_tests_run_are_clean(command):
    assert diagnostics(command) == []


# ---------------------------------------------------------------- test_shell_attacks.py's cases (CLI in a process)

@pytest.mark.parametrize("command, program", [
    ('eval "echo {{x}}"', "eval"), ('sh -c "echo {{x}}"', "sh"), ('bash -c "echo {{x}}"', "bash"),
    ('find . -maxdepth 0 -exec sh -c "echo {{x}}" \\;', "sh"), ('echo . | xargs sh -c "echo {{x}}"', "sh"),
    ('printf "%s" {{x}} | sh', "sh"), ('python3 -c "print({{x}})"', "python3"), ('awk "BEGIN { print {{x}} }"', "awk"),
    ('ssh localhost echo {{x}}', "ssh"), ('sh <<EOF\n{{x}}\nEOF', "sh"), ('eval "$(echo {{x}})"', "eval"),
])
def test_values_a_program_parses_again_are_td803(command, program):
    assert [(code, message.split(":")[0]) for code, message in errors(command)] == [
        ("TD803", f"{{{{x}}}} is in text that `{program}` parses again as code")]


@pytest.mark.parametrize("command, fixed, severity", [
    ("tar -cf out.tar {{x}}", "tar -cf out.tar -- {{x}}", "error"),
    ("cp notes.txt {{x}}", "cp notes.txt -- {{x}}", "warning"),
])
def test_option_position_is_td805_and_the_fix_inserts_a_double_dash(command, fixed, severity):
    from taskdsl.language.diagnostics import apply_edits

    text = SCRIPT.format(command=command)
    [found] = [d for d in check_text(text).diagnostics if d.code == "TD805"]
    assert found.severity.value == severity
    assert apply_edits(text, found.fixes[0].edits) == SCRIPT.format(command=fixed)
    assert diagnostics(fixed) == []


@pytest.mark.parametrize("command", ["echo $(( {{x}} ))", "let n={{x}}", "declare -i n={{x}}"])
def test_arithmetic_in_any_form_is_td801(command):
    assert errors(command) == [("TD801", "{{x}} is in arithmetic ($((…)), ((…)), let, [[ … -eq … ]], declare -i, a "
                                "subscript), where bash evaluates a value as an expression: no value can be "
                                "substituted there safely; compare or compute in a program that reads the value as "
                                "data (e.g. test \"$TASKDSL_INPUT_X\" -gt 3 with [ ], or awk -v n=…)")]


def test_the_positional_quick_fix_makes_the_value_an_argument():
    from taskdsl.language.diagnostics import apply_edits

    text = SCRIPT.format(command='sh -c "echo {{x}} &gt; out"')
    [found] = [d for d in check_text(text).diagnostics if d.code == "TD803"]
    fixed = apply_edits(text, found.fixes[0].edits)
    assert fixed == SCRIPT.format(command="sh -c 'echo \"$1\" &gt; out' _ {{x}}")
    assert [d.code for d in check_text(fixed).diagnostics if d.code.startswith("TD80")] == []


# ---------------------------------------------------------------- where a placeholder sits (the first decisions)

ARITHMETIC = ("{{x}} is in arithmetic ($((…)), ((…)), let, [[ … -eq … ]], declare -i, a subscript), where bash "
              "evaluates a value as an expression: no value can be substituted there safely; compare or compute in a "
              "program that reads the value as data (e.g. test \"$TASKDSL_INPUT_X\" -gt 3 with [ ], or awk -v n=…)")
NAME = ("{{x}} is where the shell reads a variable name (let, unset, read, declare, printf -v, …): no value can be "
        "substituted there safely; use a fixed name and pass the value as data")


@pytest.mark.parametrize("command", [
    "[[ {{x}} -gt 3 ]]", "(( {{x}} > 1 ))", "for ((i={{x}}; i>0; i--)); do :; done",
    "[[ ( {{x}} == a ) ]] && echo y", "[[ ! {{x}} == a ]] && echo y", "[[ ! ( {{x}} != a ) ]] && echo y",
    "[[ ! -n {{x}} ]] && echo y", "[[ ( {{x}} -gt 3 ) ]]", "[[ ( -v {{x}} ) ]]", "[[ ! -v {{x}} ]]",
    "[[ ! {{x}} -eq 3 ]]", "[[ ! {{x}} -lt 3 ]] || echo y", "[[ 3 -eq ! {{x}} ]]",
    "for ((i=0; i<3; i++)); do echo {{x}}; done", "for ((i=0; i<3; i++)) { echo {{x}}; }", "(( 1 )) && echo {{x}}",
])
def test_bash_only_tests_and_arithmetic_commands_in_a_command_with_a_value_are_td804(command):
    """/bin/sh (dash) has no [[ … ]] or (( … )): it reads them as a command line of its own, so the whole command is
    refused, wherever in it the value is (these were TD801 or clean before the rule; the placement inside [[ … ]]
    they exercised is now behind it)."""
    assert [code for code, _ in errors(command)] == ["TD804"]


def test_substitute_needs_one_value_per_placeholder():
    with pytest.raises(ValueError) as info:
        shell.substitute("echo {{x}} {{y}}", ["one"])
    assert str(info.value) == "2 placeholder(s) but 1 value(s)"


def test_the_runner_refuses_what_the_checker_refuses_without_the_checker(tmp_path):
    """run_file(check=False) asks shell.unsafe_sites: the first unsafe placeholder's code and message."""
    import asyncio

    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import run_file

    path = tmp_path / "t.task.xml"
    path.write_text(SCRIPT.format(command="echo {{y}} '{{x}}'"), encoding="utf-8")
    with pytest.raises(TaskError) as info:
        asyncio.run(run_file(str(path), inputs={"x": "a", "y": "b"}, model="taskdsl/echo", check=False))
    assert (info.value.reason, info.value.message) == ("TD801", "task 's': " + errors("echo {{y}} '{{x}}'")[0][1])
    assert [(site.placeholder.expr_text, site.context) for site in shell.unsafe_sites("echo {{y}} '{{x}}'")] == [
        ("x", "single")]


@pytest.mark.parametrize("command", [
    "{{x}} --version\necho $",  # a placeholder at the very start: nothing is before it (the last character is not)
    "cat <<XEOF\n{{x}}\nXEOF\n",  # an unquoted delimiter, whatever letters it has
])
def test_words_next_to_arithmetic_or_here_documents_are_plain_words(command):
    assert diagnostics(command) == []


def test_a_script_file_named_by_a_relative_path_is_a_file_unless_the_command_changes_directory():
    """cd /dev && bash stdin reads the value as code; without a change of directory, tool.py is a file."""
    assert diagnostics("printf '%s' {{x}} | python3 tool.py") == []
    for change in ("cd /dev", "pushd /dev", "popd"):
        assert [code for code, _ in errors(f"{change} && printf '%s' {{{{x}}}} | bash stdin")] == ["TD803"], change



@pytest.mark.parametrize("command", ['env "$(printf %s {{x}})" true', 'tar -cf out.tar "$(printf %s {{x}})"',
                                     "env $(printf %s {{x}}) true"])
def test_a_word_a_command_substitution_begins_is_in_option_position_like_the_value(command):
    """Its output may begin with the value: env "$(printf %s {{x}})" true with x=-Ssh -c '…' ran a command
    (found while reading the mutants of _flow_up). env reads it as an assignment or its command: TD803."""
    assert [code for code, _ in errors(command)] == (["TD803"] if command.startswith("env") else ["TD805"])


# ---------------------------------------------------------------- TD804: why a command cannot be checked, and where

QUOTED_HEREDOC = ("{{x}} is inside a here-document whose delimiter is quoted, where nothing is expanded: no value can be "
                  "substituted there safely; unquote the delimiter (<<EOF), or read the value from $TASKDSL_INPUT_X in "
                  "the script")


def syntax(at: str) -> str:
    return (f"the shell cannot parse this command (at {at!r}): close the quote, bracket or here-document, or fix the "
            "syntax there")


@pytest.mark.parametrize("command, problem, expected", [
    # here-documents: the end line exactly the delimiter (<<- strips tabs, and only tabs, before it), a line of the
    # body that is the delimiter (a nested here-document inside $(…)), a continuation in a command with an unquoted one
    ("cat <<'EOF' > out\na\nEOF\nprintf '%s' {{x}} \\\n  >> out", None, []),
    ("cat <<XEOF > out\n{{x}}\nXEOF\nprintf '%s' {{x}} \\\n >> out", (46, 48, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ('cat <<EOF\n$(cat <<EOF\n{{x}}\nEOF\n)\nEOF\n', (4, 37, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('cat <<EOF\n$(cat <<EOF\nEOF\n)\n{{x}}\nEOF\n', (4, 37, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('cat <<-EOF\n$(cat <<-EOF\n\t{{x}}\n\tEOF\n)\nEOF\n', (4, 41, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('cat <<XEOF > out\n{{x}} \\\na\nXEOF\n', (23, 25, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ('cat <<-EOF > out\n\t{{x}}\n\tEOF\n', None, [("TD801", QUOTED_HEREDOC)]),
    ('cat <<-XEOF > out\n\t{{x}}\n\tXEOF\n', None, [("TD801", QUOTED_HEREDOC)]),
    ('cat <<EOF > out\n{{x}}\n\tEOF\nEOF\n', None, []),
    ('cat <<EOF > out\n\tEOF\n{{x}}\nEOF\n', (4, 20, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('cat <<-EOF > out\n EOF\n\t{{x}}\nEOF\n', (4, 21, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('echo {{x}} )', (11, 12, None), [("TD804", syntax(')'))]),
    ('echo {{x}}; if true; then echo a; fi fi', (37, 39, None), [("TD804", syntax('fi'))]),
    ('echo "$(echo {{x}} | )"', (21, 22, None), [("TD804", syntax(')"'))]),
    ('echo {{x}} && ( echo a', (22, 22, None), [("TD804", syntax('a'))]),
    ('echo {{x}} &&', (13, 13, None), [("TD804", syntax('&'))]),
    ("printf '%s' {{x}} a\\\\\necho b", None, []),
    ("printf '%s' {{x}} a\\\\\\\necho b", (21, 23, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ("printf '%s' {{x}} a\\\\\\\\\necho b", None, []),
    ("printf '%s' {{x}} ab\\\\\\\necho b", (22, 24, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ('cat > out <<EOF\n{{x}} EOF a\nEOF\n', None, []),
    ('cat <<-EOF > out\n{{x}}\nXEOF\nEOF\n', None, []),
    ("echo " + "$(" * 40 + "{{x}}" + ")" * 40, (85, 90, 'deep'), [("TD804", shell.PROBLEMS['deep'])]),
    ("echo " + "$(" * 41 + "{{x}}" + ")" * 41, (85, 93, 'deep'), [("TD804", shell.PROBLEMS['deep'])]),
    ("echo " + "$(" * 41 + "x" + ")" * 41, (85, 89, 'deep'), [("TD804", shell.PROBLEMS['deep'])]),
    ('echo coproc {{x}}', None, []),
    ('[[ -n a ]]; echo {{x}}', (0, 10, 'bash_test'), [("TD804", shell.PROBLEMS['bash_test'])]),
    ('echo [[ {{x}}', None, []),
    ('(( 1 )); echo {{x}}', (0, 7, 'bash_test'), [("TD804", shell.PROBLEMS['bash_test'])]),
    ('echo "((" {{x}}', None, []),
    ('\\\ncat <<EOF > out\n{{x}}\nEOF\n', (0, 2, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ("\\\nprintf '%s' a{{x}}\\\nb", (20, 22, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ("\\\\\nprintf '%s' {{x}}", None, []),
    ('# a\\\necho {{x}}', None, []),
    ('\\\nprintf %s {{x}} \\', (18, 19, None), [("TD804", syntax('\\'))]),
    ('cat <<-EOF > out\n{{x}}\n\tEOF\n', None, []),
    # <<- strips tabs and only tabs: a line that a no-break space indents is a line of the document, not its end
    ('cat <<-EOF > out\na\n\u00a0EOF\nb\nEOF\nprintf %s {{x}}', None, []),
    ('cat <<-EOF > out\n{{x}}\n EOF\n\tEOF\n', (4, 27, 'heredoc'), [("TD804", shell.PROBLEMS['heredoc'])]),
    ('cat <<-XEOF > out\n{{x}}\n\tXEOF\n', None, []),
    ('sh 0<&0 {{x}}', (3, 4, 'descriptor'), [("TD804", shell.PROBLEMS['descriptor'])]),
    ('sh 0>&1 {{x}}', (3, 4, 'descriptor'), [("TD804", shell.PROBLEMS['descriptor'])]),
    ('echo a\\\nb', None, []),  # a continuation in a command without a {{…}} is no problem
    # a continuation: in a quoted here-document's redirection, after one letter at offset 0, after an X, the second
    # of three, after an even run following a letter, at offset 0 in a command ending in a backslash
    ("cat <<'EOF' > o\\\nut\na\nEOF\nprintf %s {{x}}", (15, 17, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ("cat <<'EOF' \\\n> out\na\nEOF\nprintf %s {{x}}", (12, 14, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ('e\\\ncho {{x}}', (1, 3, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ('printf %s {{x}} X\\\nb', (17, 19, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ('printf %s {{x}} \\\n a\\\n b \\\nc', (20, 22, 'continuation'), [("TD804", shell.PROBLEMS['continuation'])]),
    ("printf '%s' {{x}} ab\\\\\necho b", None, []),
    ('\\\ncat <<EOF\n{{x}}\nEOF\n\\', (0, 2, 'heredoc_continuation'), [("TD804", shell.PROBLEMS['heredoc_continuation'])]),
    ('echo a )', (7, 8, None), [("TD804", syntax(')'))]),
    ("echo a '", (7, 8, None), [("TD804", syntax("'"))]),
    ('echo a "', (7, 8, None), [("TD804", syntax('"'))]),
    ('printf %s {{x}} \\', (16, 17, None), [("TD804", syntax('\\'))]),
    ('for x in {{x}}; do\n', (18, 19, None), [("TD804", syntax('\n'))]),
    ("echo {{x}} '", (11, 12, None), [("TD804", syntax("'"))]),
    ('echo {{x}};   )', (0, 15, None), [("TD804", syntax('echo {{x}};   )'))]),
    ('echo "{{x}}', (5, 11, None), [("TD804", syntax('"{{x}}'))]),
    # a syntax error that starts at a letter X is not moved past it; an empty one (a missing '}') is one character wide
    ('[ -n x X ] && echo {{x}}', (7, 8, None), [("TD804", syntax('X ] && echo {{x}}'))]),
    ('echo {{x}} "${a" b', (15, 16, None), [("TD804", syntax('" b'))]),
])
def test_td804_says_why_and_where_and_clean_commands_stay_clean(command, problem, expected):
    """The code and message the checker gives, and parse_problem's (start, end, reason) in the command as written
    (a syntax error's reason is None: the message names the text there); the runner refuses the same commands."""
    assert errors(command) == expected
    if expected == []:
        assert diagnostics(command) == []
    found = shell.parse_problem(command)
    assert (found if found is None else (found[0], found[1], next(
        (key for key, text in shell.PROBLEMS.items() if text == found[2]), found[2]))) == problem
    assert shell.parse_error(command) == (None if problem is None else problem[:2])  # the same place, without why
    if problem is not None and "{{" in command:  # the runner's refusal names the placeholder
        with pytest.raises(shell.UnsafeCommand) as info:
            shell.planned(command)
        assert str(info.value) == ("{{x}} is in a command the shell grammar cannot parse (TD804): no value can be "
                                   "substituted there safely; fix the command's syntax first")


# ---------------------------------------------------------------- the program table: sed, xargs, trap, settings, stdin

PARSES_AGAIN_X = '{{x}} is in text that `X` parses again as code: the value would become code; pass it as an argument after the code and read it there (sys.argv, ARGV, process.argv, awk -v), or from $TASKDSL_INPUT_X'
SH_CODE = '{{x}} is in text that `sh` parses again as code: the value would become code; pass it as a positional argument: sh -c \'… "$1"\' _ {{x}}'
CODE_VARIABLE_F = '{{x}} is the value of $f%%, which the shell or a program reads as code (expanded, run or loaded): the value would become code; pass it in a variable whose name has a lower-case letter, or read it from $TASKDSL_INPUT_X'
CODE_VARIABLE_A_B = '{{x}} is the value of $A-B, which the shell or a program reads as code (expanded, run or loaded): the value would become code; pass it in a variable whose name has a lower-case letter, or read it from $TASKDSL_INPUT_X'
SH_OPTION = "{{x}} is where `sh` reads a leading '-' as an option, and one of its options runs a command (e.g. -c …): put -- before it"
TRAP_CODE = '{{x}} is in text that `trap` parses again as code: the value would become code; pass it as an argument after the code and read it there (sys.argv, ARGV, process.argv, awk -v), or from $TASKDSL_INPUT_X'
SED_OPTION = "{{x}} is where `sed` reads a leading '-' as an option, and one of its options runs a command (e.g. --expression=…e): put -- before it"
SED_CODE = '{{x}} is in text that `sed` parses again as code: the value would become code; GNU sed runs shell commands from its script (the e command and flag); pass the value through a file, or use awk with ENVIRON["TASKDSL_INPUT_X"]'


@pytest.mark.parametrize("command, expected", [
    ('echo {{x}} | xargs -I X X', [('error', 'TD803', PARSES_AGAIN_X)]),
    ('read BASH_ENV <<EOF\n{{x}}\nEOF\n', [('error', 'TD803', PARSES_AGAIN_X.replace('`X`', '`read`'))]),  # a name read as code
    ('read A_B <<EOF\n{{x}}\nEOF\n', [('error', 'TD803', PARSES_AGAIN_X.replace('`X`', '`read`'))]),  # upper case: code
    ('read a_b <<EOF\n{{x}}\nEOF\n', []),
    ('printf %s {{x}} | sh /dev/fd', [('error', 'TD803', SH_CODE)]),
    ('printf %s {{x}} | sh /procx/fd', [('error', 'TD803', SH_CODE)]),
    ('printf %s {{x}} | sh /dev/stdin/', [('error', 'TD803', SH_CODE)]),
    ("env 'f%%'={{x}} true", [('error', 'TD803', CODE_VARIABLE_F)]),
    ('env A-B={{x}} true', [('error', 'TD803', CODE_VARIABLE_A_B)]),
    ('env GIT_AUTHOR_NAME={{x}} true', []),
    ('scp -o Port={{x}} a b', []),
    ('sftp -o Port={{x}} host', []),
    ('ssh -o "Port {{x}}" host true', []),
    ('ssh -o "User {{x}}" host', []),
    ('git -c user.name=a={{x}} status', []),
    ('echo {{x}} | xargs -n 1 sh -c', [('error', 'TD803', SH_CODE)]),
    ('echo {{x}} | xargs -I X sh -c X', [('error', 'TD803', SH_CODE)]),
    ('echo {{x}} | xargs -I X sh -c \'printf %s "$1"\' _ X', []),
    ("echo {{x}} | xargs -I X printf '%s' X", []),
    ("echo {{x}} | xargs -I {} printf '%s' {}", []),
    ("echo {{x}} | xargs --replace=X sh -c 'echo aX'", [('error', 'TD803', SH_CODE)]),
    ('echo a | xargs --replace=% sh -c % {{x}}', []),
    ("echo {{x}} | xargs -iX sh -c 'echo aX'", [('error', 'TD803', SH_CODE)]),
    ("echo {{x}} | xargs -i sh -c 'echo a{}'", [('error', 'TD803', SH_CODE)]),
    ("echo a | xargs -I '' sh {{x}}", [('error', 'TD805', SH_OPTION)]),
    ('echo a | xargs -I {} sh -c {} {{x}}', []),
    ('echo a | xargs -I{} sh -c {} {{x}}', []),
    ('echo a | xargs -I {} echo {} {{x}}', []),
    # xargs puts the value into env's NAME=VALUE: a name made at run time may be one read as code (fail closed)
    ('echo {{x}} | xargs -I X env X=1 printf a', [('error', 'TD803', PARSES_AGAIN_X.replace('`X`', '`xargs env`'))]),
    ('trap - {{x}}', []),
    ("printf %s {{x}} | (trap - 'sh' EXIT; :)", []),
    ('trap -p {{x}}', [('error', 'TD803', TRAP_CODE)]),
    ('trap -l {{x}}', [('error', 'TD803', TRAP_CODE)]),
    ('trap -- -- {{x}}', []),
    ("printf %s {{x}} | (trap 'echo a' EXIT; :)", []),
    ('sed -n -e p {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed -f prog.sed {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed --posix{{x}} f', []),
    ('sed --expr={{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed --e{{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed --{{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed p {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed -n p "$f" {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed "$s" {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed -n "$s" -- {{x}}', []),
    ('sed -- {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -- p {{x}}', []),
    ('sed -n -- p {{x}}', []),
    ('sed -e p -- f {{x}}', []),
    ('sed -n -- {{x}}', [('error', 'TD803', SED_CODE)]),
    ('sed --expression {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed --e {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -n -e p -- {{x}}', []),
    ('sed -e p -- {{x}}', []),
    ('sed -e p -e {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -n -e p "{{x}}"', [('error', 'TD805', SED_OPTION)]),
    ('sed -E {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -n {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -l 5 {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -ei {{x}} f', [('error', 'TD805', SED_OPTION)]),
    ('printf %s {{x}} | sed --file=/dev/stdin f', [('error', 'TD803', SED_CODE)]),
    ('printf %s {{x}} | sed -f/dev/stdin f', [('error', 'TD803', SED_CODE)]),
    ('sed --file prog.sed -- {{x}}', []),
    ('sed {{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed --file prog.sed {{x}}', [('error', 'TD805', SED_OPTION)]),
    ('sed -f prog.sed -- {{x}}', []),
    ('sed -n -e p -f prog.sed -- {{x}}', []),
    ('printf %s {{x}} | sed --file=prog.sed f', []),
    # options sed reads before its operands, wherever they stand: a value glued to a short option is the script; -E,
    # --posix, --debug, --expression=… and --file take no script from the next word; -nep is -n -e p
    ('sed {{x}} -E{{y}} f', [('error', 'TD805', SED_OPTION), ('error', 'TD803', SED_CODE.replace('{{x}}', '{{y}}').replace('INPUT_X', 'INPUT_Y'))]),
    ('sed -E --posix{{x}} f', []),
    ('sed --expression=p --posix{{x}} f', []),
    ('sed --file --file={{x}} f', []),  # the script file is named "--file=…"
    ('sed --e=p {{x}} f', [('error', 'TD805', SED_OPTION)]),
    ('sed --debug p{{x}} f', [('error', 'TD803', SED_CODE)]),
    ('sed -nep {{x}} f', [('error', 'TD805', SED_OPTION)]),
    ('sed - {{x}}', [('error', 'TD805', SED_OPTION)]),  # "-" is the script there, the value a file
    # -e or -f as the last word (sed refuses them; the value is its input)
    ('printf %s {{x}} | sed -ne', []),
    ('printf %s {{x}} | sed -f', []),
    # -f naming the standard input in any spelling, or a script file named by a value (fail closed)
    ('printf %s {{y}} | sed -f {{x}}', [('error', 'TD803', SED_CODE.replace('{{x}}', '{{y}}').replace('INPUT_X', 'INPUT_Y'))]),
    ('printf %s {{y}} | sed --file --posix{{x}} f', [('error', 'TD803', SED_CODE.replace('{{x}}', '{{y}}').replace('INPUT_X', 'INPUT_Y'))]),
    ('printf %s {{x}} | sed -f- f', [('error', 'TD803', SED_CODE)]),
    ('printf %s {{x}} | sed --file=- f', [('error', 'TD803', SED_CODE)]),
    ('printf %s {{x}} | sed -f/dev/stdin -fprog.sed f', [('error', 'TD803', SED_CODE)]),
    ('printf %s {{x}} | sed --file=a=/dev/stdin f', [('error', 'TD803', SED_CODE)]),
    ('printf %s {{x}} | sed --file=/proc/a=b f', [('error', 'TD803', SED_CODE)]),
    # script paths that may be the standard input: any */stdin, any path under /proc (however many slashes), a {}
    ('printf %s {{x}} | sh ./stdin', [('error', 'TD803', SH_CODE)]),
    ('printf %s {{x}} | sh //proc/x', [('error', 'TD803', SH_CODE)]),
    ('printf %s {{x}} | sh a{}b', [('error', 'TD803', SH_CODE)]),
    ('printf %s {{x}} | sh /dev/stdinX', []),  # a file whose name only begins like the standard input
    ('ssh -o "User=a={{x}}" host true', []),  # the setting's name ends at the first '='
    ('python3 -c user.name={{x}}', [('error', 'TD803', PARSES_AGAIN_X.replace('`X`', '`python3`'))]),  # git's data, not python's
])
def test_what_each_program_does_with_a_value_is_its_code_and_message(command, expected):
    """sed's script (first operand, -e/--expression and its abbreviations, a value glued to short options or to --,
    -f naming its standard input) and its file operands (TD805 without --); xargs's item where -I/-i/--replace put it;
    trap's action and signals; ssh/scp/sftp -o and git -c settings that are data; script paths that are the standard
    input in another spelling; variable names read as code."""
    assert diagnostics(command) == expected


def test_every_placeholder_after_an_unsafe_one_is_still_judged():
    """One placeholder in '…' (TD801) does not end the analysis: the next one, piped into sh, is TD803."""
    assert [code for code, _ in errors("echo '{{x}}'; printf %s {{y}} | sh")] == ["TD801", "TD803"]


NAMED_AT_RUN_TIME = ("{{%s}} is in a command that names a program at run time (`%s`), which may be alias, trap, eval or . and "
                     "make a later word of the command code: the value would become code; name every program of the "
                     "command in it")


@pytest.mark.parametrize("command, expected", [
    ("$f; echo {{x}}", [("TD803", NAMED_AT_RUN_TIME % ("x", "$f"))]),
    ("{{x}} --version; echo {{y}}", [("TD803", NAMED_AT_RUN_TIME % ("y", "{{…}}"))]),
    ("{{x}} --version", []),  # the value alone names the program: no other value is in the command
    # a placeholder in a comment is never run, whatever else the command holds
    ("alias s=sh # {{x}}", []), ("$f; echo a # {{x}}", []), ("echo a > >(sh) # {{x}}", []),
])
def test_a_program_named_at_run_time_makes_every_other_value_code_but_not_a_comment(command, expected):
    assert errors(command) == expected
    if not expected:
        assert diagnostics(command) == []
