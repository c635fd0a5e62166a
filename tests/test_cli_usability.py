"""Small things a user of the command line hits, each through the real CLI (`main([...])`):
--version, a subcommand's own usage with the option meant, --inputs that is not there, an
unknown --task, one failure line, a typo's follow-on errors held back, the unsafe rename of a
misspelt argument, descriptions on the graph, and what --unsafe-fixes would add to --fix."""

import json
from pathlib import Path

import pytest

from paths import REPO
from taskdsl.cli.main import main

EXAMPLES = REPO / "examples"

LIBRARY = """<library>
  <template name="pair" params="a, b">
    <task><description>Pair {{a}} and {{b}}</description></task>
  </template>
  <template name="shout" params="text">
    <task type="script">
      <description>Upper-case a text</description>
      <command>printf '%s' {{text}} | tr a-z A-Z</command>
    </task>
  </template>
  <task name="greeting" type="script">
    <description>Greet someone by name</description>
    <command>echo hello</command>
  </task>
</library>
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "lib.task.xml").write_text(LIBRARY)
    return tmp_path


def test_version_prints_the_installed_version(capsys):
    from importlib import metadata

    code, out, err = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"taskdsl {metadata.version('taskdsl')}"


@pytest.mark.parametrize("argv, command, bad, meant", [
    (["check", "--fxi", "."], "check", "--fxi", "--fix"),
    (["run", "x.task.xml", "--modle", "m"], "run", "--modle m", "--model"),
    (["test", "--formt=json"], "test", "--formt=json", "--format"),
    (["render", "x.task.xml", "--inptu", "a=b"], "render", "--inptu a=b", "--input"),
])
def test_a_bad_flag_shows_the_subcommands_usage_and_the_option_meant(capsys, argv, command, bad, meant):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(f"usage: taskdsl {command} ")
    assert err.rstrip().endswith(f"taskdsl {command}: error: unrecognized arguments: {bad} (did you mean {meant}?)")


def test_a_flag_like_nothing_gets_no_guess(capsys):
    code, out, err = run(capsys, "check", ".", "--zzzzz")
    assert code == 2
    assert err.startswith("usage: taskdsl check ")
    assert err.rstrip().endswith("taskdsl check: error: unrecognized arguments: --zzzzz")


@pytest.mark.parametrize("command", ["run", "render"])
def test_inputs_file_missing_or_not_json_is_one_sentence(project, capsys, command):
    code, out, err = run(capsys, command, "lib.task.xml", "--task", "greeting", "--inputs", "nope.json")
    assert code == 2
    assert err == f"taskdsl {command}: --inputs nope.json: no such file\n"
    (project / "bad.json").write_text("{")
    code, out, err = run(capsys, command, "lib.task.xml", "--task", "greeting", "--inputs", "bad.json")
    assert code == 2
    assert err.startswith(f"taskdsl {command}: --inputs bad.json: not a JSON object of inputs (")
    assert "Errno" not in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "render", "graph"])
def test_an_unknown_task_exits_2_naming_what_the_file_defines(project, capsys, command):
    extra = ["--model", "taskdsl/echo"] if command == "run" else []
    code, out, err = run(capsys, command, "lib.task.xml", "--task", "shuot", *extra)
    assert code == 2
    assert out == ""
    assert ("no task 'shuot' in lib.task.xml; did you mean 'shout'? "
            "it defines pair, shout, greeting") in err
    assert err.count("\n") == 1


def test_an_unknown_task_without_a_near_name(project, capsys):
    code, out, err = run(capsys, "run", "lib.task.xml", "--task", "zzz", "--model", "taskdsl/echo")
    assert code == 2
    assert err == ("taskdsl run: VALIDATION_ERROR (unknown_entry): no task 'zzz' in lib.task.xml; "
                   "it defines pair, shout, greeting\n")


def test_a_failed_run_says_its_failure_once(project, capsys):
    (project / "fail.task.xml").write_text(
        '<task type="sequential" name="seq">\n  <description>Steps</description>\n  <steps>\n'
        '    <task type="script"><description>one</description><command>echo one</command></task>\n'
        '    <task type="script"><description>two</description><command>echo bad &gt;&amp;2; exit 4</command></task>\n'
        '  </steps>\n</task>\n')
    code, out, err = run(capsys, "run", "fail.task.xml")
    assert code == 1
    lines = err.splitlines()
    assert [line.split(" (")[0] for line in lines[:3]] == ["  ✓ seq/steps[1]", "  ✗ seq/steps[2]", "✗ seq"]
    assert lines[3] == ("taskdsl run: TASK_FAILURE (subtask_failure): task 'seq': step 2 of 2 failed: TASK_FAILURE "
                        "(script_error): task 'seq/steps[2]': script exited with code 4: bad")
    assert err.count("step 2 of 2 failed") == 1


REDUCE = """<task type="reduce" name="r">
  <description>Join</description>
  <inputs><input name="items">a</input></inputs>
  <initial_value>start</initial_value>
  <inner_task type="script"><description>item</description><command>echo {{current_data}}</command></inner_task>
  <{part}>
    <description>Join {{{{current_result}}}} with {{{{{name}}}}}</description>
  </{part}>
</task>
"""


def test_names_inside_a_misspelt_element_are_not_reported_until_the_tag_is_fixed(project, capsys):
    (project / "r.task.xml").write_text(REDUCE.format(part="reduce_task", name="original_input"))
    code, out, err = run(capsys, "check", "r.task.xml")
    assert code == 1
    codes = [line.split()[2] for line in out.splitlines()]
    assert "TD402" not in codes  # {{current_result}}, {{original_input}}: follow-ons of the typo
    assert "r.task.xml:1:2: error TD202 reduce task lacks <reduction_task>: a reduce needs <inputs>, <inner_task> and " \
           "<reduction_task> (the <reduce_task> on line 6 is likely the <reduction_task>: fix its name, TD101)" in out
    assert any("<reduce_task> is not allowed in <task> (did you mean <reduction_task>?)" in line for line in out.splitlines())
    # fixed, the same names are visible; a name that is not is reported as before
    (project / "r.task.xml").write_text(REDUCE.format(part="reduction_task", name="original_input"))
    assert run(capsys, "check", "r.task.xml")[0] == 0
    (project / "r.task.xml").write_text(REDUCE.format(part="reduction_task", name="orignal_input"))
    code, out, err = run(capsys, "check", "r.task.xml")
    assert code == 1 and "TD402 {{orignal_input}} names nothing visible" in out


def test_a_misspelt_short_argument_name_gets_an_unsafe_rename(project, capsys):
    main_xml = ('<task type="sequential" name="main">\n  <description>Call</description>\n  <steps>\n'
                '    <task ref="pair"><inputs><input name="a">x</input><input name="bb">y</input></inputs></task>\n'
                '  </steps>\n</task>\n')
    (project / "main.task.xml").write_text(main_xml)
    code, out, err = run(capsys, "check", "main.task.xml", "--format", "json")
    found = [d for d in json.loads(out) if d["message"] == "'pair' has no parameter 'bb' (its parameters: a, b)"]
    assert [f["title"] for f in found[0]["fixes"]] == ["Rename argument 'bb' to 'b'"]
    assert found[0]["fixes"][0]["safe"] is False
    # --fix leaves it and says so; --unsafe-fixes renames it, and the ref then checks
    code, out, err = run(capsys, "check", "--fix", "main.task.xml")
    assert code == 1 and (project / "main.task.xml").read_text() == main_xml
    # the file main reaches (where pair is defined) is checked too, as a run checks it
    assert err.strip().endswith("2 errors, 0 warnings in 2 files (1 reached by the templates named); 1 more fix with "
                                "--unsafe-fixes")
    code, out, err = run(capsys, "check", "--fix", "--unsafe-fixes", "main.task.xml")
    assert code == 0
    assert '<input name="b">y</input>' in (project / "main.task.xml").read_text()
    assert "more fix" not in err


def test_graph_nodes_carry_the_description(project, capsys):
    (project / "main.task.xml").write_text(
        '<task type="sequential" name="main">\n  <description>Greet, then shout</description>\n  <steps>\n'
        '    <task ref="greeting"/>\n    <call template="shout"><arg>hi</arg></call>\n  </steps>\n</task>\n')
    code, out, err = run(capsys, "graph", "main.task.xml")
    assert code == 0
    assert '["main<br/>Greet, then shout<br/>sequential"]' in out
    assert '["greeting<br/>Greet someone by name<br/>script: echo hello"]' in out
    assert "Upper-case a text" in out
    code, out, err = run(capsys, "graph", "main.task.xml", "--format", "dot")
    assert 'label="main\\nGreet, then shout\\nsequential"' in out


def test_a_misspelt_command_names_the_one_meant(capsys):
    code, out, err = run(capsys, "chek", ".")
    assert code == 2
    assert err.startswith("usage: taskdsl ")
    from taskdsl.cli.main import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command" or a.metavar == "COMMAND").choices
    assert err.rstrip().endswith("taskdsl: error: unknown command 'chek' (did you mean check?); the commands: "
                                 + ", ".join(commands))
    assert ", ".join(commands).startswith("check, rules, schema, run, match, ask, test, render, graph")
    code, out, err = run(capsys, "zzz")
    assert code == 2 and "unknown command 'zzz'; the commands: check," in err


def test_a_test_filter_that_matches_nothing_is_a_usage_error_naming_the_tests(capsys):
    """`taskdsl test -k typo` in CI must not pass with nothing run."""
    code, out, err = run(capsys, "test", str(EXAMPLES / "summarise.test.xml"), "-k", "no such test")
    assert code == 2
    assert "taskdsl test: no test's name contains 'no such test' (-k); the tests: " in err
    code, out, err = run(capsys, "test", str(EXAMPLES / "summarise.test.xml"), "-k", "")
    assert code == 0
