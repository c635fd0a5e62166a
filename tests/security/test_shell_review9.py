"""The shell shapes the ninth review found open, each through the real CLI: before the change, `taskdsl check` reported
no error and `taskdsl run --input x=…` ran a command from the value. Each is closed by a rule that fails closed
(docs/security.md):

1. GNU xargs's `--replace`, `--eof` and `--max-lines` take their argument only after `=`: the next word is the
   command xargs runs (`xargs --replace env sh -c '{}'` hands the items to env); `xargs -a FILE` / `--arg-file`
   reads its items from FILE and leaves its standard input (the pipe) to the command it runs (`xargs -a /dev/null
   sh` runs the value).

The variants that carry data still check clean and run."""

import pytest

from taskdsl.cli.main import main
from taskdsl.language import shell

from tests.security.test_shell_review import template

REPARSE = "is in text that `{}` parses again as code: the value would become code; pass it as an argument after the " \
          "code and read it there (sys.argv, ARGV, process.argv, awk -v), or from $TASKDSL_INPUT_X"
SH_REPARSE = "is in text that `sh` parses again as code: the value would become code; pass it as a positional " \
             "argument: sh -c '… \"$1\"' _ {{x}}"
UNKNOWN = "comes after `{}`, an option the checker does not know for this program, which runs a command given after " \
          "its own options"


def refused(tmp_path, capsys, monkeypatch, command, value, message):
    """check reports TD803 with message; run refuses (exit 2) with TD803; the value runs nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_MODEL", "taskdsl/echo")
    path = template(tmp_path, command)
    capsys.readouterr()
    assert main(["check", path]) == 1
    out = capsys.readouterr()
    assert "error TD803 " in out.out
    assert message in out.out, out.out
    assert main(["run", path, "--input", f"x={value}"]) == 2
    out = capsys.readouterr()
    assert "TD803" in out.out + out.err
    assert not (tmp_path / "marker").exists()


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
    return [(site.code, site.program) for site in shell.sites(command) if site.code is not None]


SH = "touch marker"


# ---------------------------------------------------------------- 1. xargs's optional arguments and -a FILE

@pytest.mark.parametrize("command, value, message", [
    ("printf '%s\\n' {{x}} | xargs --replace env sh -c '{}'", SH, REPARSE.format("xargs env")),
    ("printf '%s\\n' {{x}} | xargs --replace nice sh -c '{}'", SH, REPARSE.format("xargs nice")),
    ("printf '%s\\n' {{x}} | xargs --eof env", 'sh -c "touch marker"', REPARSE.format("xargs env")),
    ("printf '%s\\n' {{x}} | xargs --max-lines nice", 'sh -c "touch marker"', REPARSE.format("xargs nice")),
    ("printf '%s\\n' {{x}} | xargs --repl timeout 5 sh -c '{}'", SH, UNKNOWN.format("xargs --repl")),
])
def test_xargs_long_options_with_an_optional_argument_leave_the_next_word_to_the_command(
        tmp_path, capsys, monkeypatch, command, value, message):
    refused(tmp_path, capsys, monkeypatch, command, value, message)


@pytest.mark.parametrize("command, value, message", [
    ("printf '%s\\n' {{x}} | xargs -a /dev/null sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs --arg-file=/dev/null sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs -a /dev/null env sh", SH, SH_REPARSE),
    ("printf '%s\\n' {{x}} | xargs -a /dev/null python3", "open('marker', 'w')", REPARSE.format("python3")),
])
def test_xargs_a_file_leaves_the_pipe_to_the_command(tmp_path, capsys, monkeypatch, command, value, message):
    refused(tmp_path, capsys, monkeypatch, command, value, message)


@pytest.mark.parametrize("command, program", [
    ("printf '%s\\n' {{x}} | xargs --replace timeout 5 sh -c '{}'", "xargs timeout"),
    ("printf '%s\\n' {{x}} | xargs --replace=@ sh -c '@'", "sh"),
    ("printf '%s\\n' {{x}} | xargs --eof -0 env", "xargs env"),
    ("printf '%s\\n' {{x}} | xargs -0a /dev/null bash -s", "bash"),
    ("printf '%s\\n' {{x}} | xargs -aempty.txt perl", "perl"),
    ("printf '%s\\n' {{x}} | xargs --arg=/dev/null perl", "perl"),  # an abbreviation of --arg-file
    ("printf '%s\\n' {{x}} | xargs -r --arg-file /dev/null sh -s", "sh"),
])
def test_xargs_variants_are_td803(command, program):
    assert codes(command) == [("TD803", program)]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {{x}} | xargs --replace echo '{}'",
    "printf '%s\\n' {{x}} | xargs --replace grep -- {} f",
    "printf '%s\\n' {{x}} | xargs --eof=E printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs --max-lines=1 printf '%s\\n'",
    "printf '%s\\n' {{x}} | xargs -a /dev/null cat",  # cat prints its standard input: data
    "printf '%s\\n' {{x}} | xargs -d a sort",
    "printf '%s\\n' {{x}} | xargs printf '%s\\n'",
])
def test_xargs_data_forms_stay_data(command):
    assert codes(command) == []


def test_xargs_replace_alone_puts_the_item_where_braces_stand(tmp_path, capsys, monkeypatch):
    value = "$(touch marker); touch marker"
    out = ran(tmp_path, capsys, monkeypatch, "printf '%s\\n' {{x}} | xargs --replace printf '[%s]\\n' '{}'", value)
    assert out.strip() == f"[{value}]"
    assert not (tmp_path / "marker").exists()
