"""The shell holes of the second security review, each through the real CLI: before the fix, `taskdsl check`
reported no error and `taskdsl run --input x=…` ran a command from the value (a marker file appeared)."""

import os

import pytest

from taskdsl.cli.main import main
from taskdsl.language import shell

SCRIPT = """<task type="script" name="s">
  <command>{command}</command>
  <inputs><input name="x">placeholder</input></inputs>
</task>
"""


def template(folder, command, *, escape=True):
    path = os.path.join(folder, "t.task.xml")
    if escape:
        command = command.replace("&", "&amp;").replace("<", "&lt;")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCRIPT.format(command=command))
    return path


def ran(tmp_path, capsys, monkeypatch, command, value) -> str:
    """check is clean, and run prints what the command printed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command)
    capsys.readouterr()
    assert main(["check", path]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["run", path, "--input", f"x={value}"]) == 0
    return capsys.readouterr().out


def codes(command):
    """The (code, program) of each placeholder the checker refuses in command."""
    return [(site.code, site.program) for site in shell.sites(command) if site.code is not None]


def refused(tmp_path, capsys, monkeypatch, command, value, code, message, *, escape=True):
    """check reports code with message; run refuses (exit 2) and the value runs nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command, escape=escape)
    capsys.readouterr()
    assert main(["check", path]) == 1
    out = capsys.readouterr()
    assert f"error {code} " in out.out + out.err
    assert message in out.out + out.err
    assert main(["run", path, "--input", f"x={value}"]) == 2
    out = capsys.readouterr()
    assert code in out.out + out.err
    assert not (tmp_path / "marker").exists()
    assert not (tmp_path / "pwned").exists()


BACKTICKS = "use $(…) instead of backticks"


@pytest.mark.parametrize("command, value", [
    ('echo "Found: `find . -name \\"{{x}}\\"`"', "x -o -exec touch marker ;"),
    ("cat <<EOF > notes.md\nRun `{{x}}` to upgrade.\nEOF", "touch marker"),
    ("echo `echo {{x}}`", "$(touch marker)"),
    ("cat <<EOF > notes.md\nRun `date`, then {{x}}.\nEOF", "`touch marker`"),
])
def test_a_placeholder_in_backticks_is_td801(tmp_path, capsys, monkeypatch, command, value):
    refused(tmp_path, capsys, monkeypatch, command, value, "TD801", BACKTICKS)


def test_a_carriage_return_in_a_command_is_td804(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "echo start&#13;# ; eval {{x}}", "touch marker", "TD804",
            "control character (\\r)", escape=False)


def test_a_control_character_is_td804_without_a_placeholder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, "echo start&#13;# ; touch marker", escape=False)
    assert main(["check", path]) == 1
    assert "error TD804 the command holds a control character (\\r)" in capsys.readouterr().out
    assert main(["run", path]) == 2
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("command", ['trap -- "{{x}}" EXIT', "trap -- {{x}} EXIT", "builtin eval {{x}}"])
def test_trap_after_options_and_builtin_are_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker", "TD803", "the value would become code")


def test_ansi_c_quotes_in_a_command_with_a_placeholder_are_td804(tmp_path, capsys, monkeypatch):
    refused(tmp_path, capsys, monkeypatch, "echo $'\\''\"';{{x}};'\"\\'", "touch marker", "TD804",
            "$'…' is bash-only syntax")


@pytest.mark.parametrize("command, value, code, message", [
    ("echo hi >&{{x}}", "marker", "TD801", "after >& or <&"),
    ("test -v {{x}} && echo set", "a[$(touch marker)]", "TD801", "where the shell reads a variable name"),
])
def test_descriptor_targets_and_test_v_are_td801(tmp_path, capsys, monkeypatch, command, value, code, message):
    refused(tmp_path, capsys, monkeypatch, command, value, code, message)


@pytest.mark.parametrize("command", [
    'echo hello | sed "s/hello/{{x}}/"',
    "echo hello | sed -n -e {{x}}",
    "echo hello | sed --expression={{x}}",
    "echo hello | sed -ne s/hello/{{x}}/p",
])
def test_a_placeholder_in_a_sed_script_is_td803(tmp_path, capsys, monkeypatch, command):
    refused(tmp_path, capsys, monkeypatch, command, "touch marker/e", "TD803",
            'pass the value through a file, or use awk with ENVIRON["TASKDSL_INPUT_X"]')


def test_a_sed_input_file_operand_stays_a_value(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("hello\n")
    path = template(tmp_path, 'sed "s/hello/bye/" -- {{x}}')
    assert main(["check", path]) == 0
    assert main(["run", path, "--input", "x=in.txt"]) == 0
    assert "bye" in capsys.readouterr().out


def test_no_quick_fix_closes_single_quotes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = template(tmp_path, "echo hi | sed 's/hi/{{x}}/'")
    before = open(path, encoding="utf-8").read()
    assert main(["check", "--fix", "--unsafe-fixes", path]) == 1
    out = capsys.readouterr().out
    assert "error TD801" in out and "$TASKDSL_INPUT_X" in out
    assert open(path, encoding="utf-8").read() == before
    assert main(["run", path, "--input", "x=/e touch marker #"]) == 2
    assert not (tmp_path / "marker").exists()


def test_a_command_nested_too_deeply_fails_closed(tmp_path, capsys, monkeypatch):
    command = "echo " + "$(echo " * 400 + "{{x}}" + ")" * 400
    refused(tmp_path, capsys, monkeypatch, command, "$(touch marker)", "TD804",
            "the command is too deeply nested to check: simplify it")


def test_a_security_rule_that_raises_fails_closed(monkeypatch):
    from taskdsl.rules.checker import check_text
    from taskdsl.language import shell

    def broken(command):
        raise ValueError("boom")
    monkeypatch.setattr(shell, "sites", broken)
    text = SCRIPT.format(command="echo {{x}}")
    found = [(d.code, d.message) for d in check_text(text).diagnostics if d.is_error]
    assert ("TD804", "the command is too deeply nested to check: simplify it") in found
