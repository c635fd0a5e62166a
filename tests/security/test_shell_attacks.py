"""The shell attacks of issue 25, each through the real CLI: before the shell grammar, every one of
these ran a command from a value (or split and globbed it) while `taskdsl check` was clean."""

import os
import subprocess
import sys

import pytest

SCRIPT = """<task type="script" name="s">
  <command>{command}</command>
  <inputs><input name="x">placeholder</input></inputs>
</task>
"""


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "TASKDSL_MODEL": "taskdsl/echo"})


def template(folder, command):
    path = os.path.join(folder, "t.task.xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(SCRIPT.format(command=command.replace("&", "&amp;").replace("<", "&lt;")))
    return path


@pytest.mark.parametrize("command", [
    "echo \"$(case a in a) printf '[%s]' {{x}};; esac)\" > out",
    "echo ${q:-\"}\"} {{x}} > out",
    "r=\"$(case a in a) printf '[%s]' {{x}};; esac)\"; echo \"$r\" > out",
])
def test_case_arms_and_parameter_operands_keep_the_value_one_word(tmp_path, command):
    (tmp_path / "victim").write_text("keep")
    value = "* victim $(touch marker)"
    path = template(tmp_path, command)
    assert cli("check", path, cwd=tmp_path).returncode == 0
    done = cli("run", path, "--input", f"x={value}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert value in (tmp_path / "out").read_text()  # not split, not globbed
    assert not (tmp_path / "marker").exists() and (tmp_path / "victim").read_text() == "keep"


def test_rm_in_a_case_arm_removes_only_the_named_file(tmp_path):
    (tmp_path / "victim").write_text("keep")
    path = template(tmp_path, 'r="$(case a in a) rm -f {{x}};; esac)"')
    done = cli("run", path, "--input", "x=nothing victim", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "victim").read_text() == "keep"


@pytest.mark.parametrize("command, program", [
    ('eval "echo {{x}}"', "eval"), ('sh -c "echo {{x}}"', "sh"), ('bash -c "echo {{x}}"', "bash"),
    ('find . -maxdepth 0 -exec sh -c "echo {{x}}" \\;', "sh"), ('echo . | xargs sh -c "echo {{x}}"', "sh"),
    ('printf "%s" {{x}} | sh', "sh"), ('python3 -c "print({{x}})"', "python3"), ('awk "BEGIN { print {{x}} }"', "awk"),
    ('ssh localhost echo {{x}}', "ssh"), ('sh &lt;&lt;EOF\n{{x}}\nEOF', "sh"), ('eval "$(echo {{x}})"', "eval"),
])
def test_values_a_program_parses_again_are_td803_and_the_run_refuses(tmp_path, command, program):
    path = template(tmp_path, command.replace("&lt;", "<"))
    checked = cli("check", path, cwd=tmp_path)
    assert checked.returncode == 1
    assert f"error TD803 {{{{x}}}} is in text that `{program}` parses again as code" in checked.stdout + checked.stderr
    done = cli("run", path, "--input", "x=$(touch marker)`touch marker`", cwd=tmp_path)
    assert done.returncode == 2 and "TD803" in done.stderr
    assert not (tmp_path / "marker").exists()


def test_the_positional_quick_fix_runs_the_value_as_data(tmp_path):
    path = template(tmp_path, 'sh -c "echo {{x}} > out"')
    fixed = cli("check", "--fix", path, cwd=tmp_path)
    text = open(path, encoding="utf-8").read()
    assert "<command>sh -c 'echo \"$1\" &gt; out' _ {{x}}</command>" in text, (fixed.stdout, fixed.stderr, text)
    assert cli("check", path, cwd=tmp_path).returncode == 0
    value = "$(touch marker); `touch marker` *"
    assert cli("run", path, "--input", f"x={value}", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out").read_text() == value + "\n"
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("command, fixed, severity", [
    ("tar -cf out.tar {{x}}", "tar -cf out.tar -- {{x}}", "error"),
    ("cp notes.txt {{x}}", "cp notes.txt -- {{x}}", "warning"),
])
def test_option_position_is_td805_and_the_fix_inserts_a_double_dash(tmp_path, command, fixed, severity):
    path = template(tmp_path, command)
    checked = cli("check", path, cwd=tmp_path)
    assert f"{severity} TD805 {{{{x}}}} is where" in checked.stdout + checked.stderr
    cli("check", "--fix", path, cwd=tmp_path)
    assert f"<command>{fixed}</command>" in open(path, encoding="utf-8").read()
    assert "TD805" not in cli("check", path, cwd=tmp_path).stdout


def test_echo_is_not_reported(tmp_path):
    path = template(tmp_path, "echo {{x}}; printf '%s' {{x}}")
    checked = cli("check", path, cwd=tmp_path)
    assert checked.returncode == 0 and "TD80" not in checked.stdout + checked.stderr


@pytest.mark.parametrize("command", ["echo $(( {{x}} ))", "let n={{x}}", "declare -i n={{x}}",
                                     "a[{{x}}]=1"])
def test_arithmetic_in_any_form_is_td801(tmp_path, command):
    path = template(tmp_path, command)
    checked = cli("check", path, cwd=tmp_path)
    assert checked.returncode == 1 and "error TD801 {{x}} is in arithmetic" in checked.stdout + checked.stderr


def test_a_command_that_does_not_parse_is_td804(tmp_path):
    path = template(tmp_path, "echo 'unterminated {{x}}")
    checked = cli("check", path, cwd=tmp_path)
    assert checked.returncode == 1 and "t.task.xml:2:17: error TD804 the shell cannot parse this command" in checked.stdout
    assert "TD801" not in checked.stdout


def test_no_doc_puts_an_input_variable_into_arithmetic():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    found = []
    for folder in ("docs", "examples"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                text = open(os.path.join(dirpath, name), encoding="utf-8", errors="replace").read()
                for arith in ("$((", "(( ", "let "):
                    at = text.find(arith)
                    while at != -1:
                        if "TASKDSL_INPUT_" in text[at:at + 120].split(")")[0]:
                            found.append((name, text[at:at + 60]))
                        at = text.find(arith, at + 1)
    assert found == []
