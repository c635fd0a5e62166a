"""What `taskdsl run` shows about a run: every step and the whole run's totals in --json, a step
whose output does not parse marked as degraded, unknown --input names refused, step paths."""

import json

from evaluator_helpers import write
from taskdsl.cli.run import main

TWO_PROMPTS = """
    <task type="sequential" name="pipe">
      <description>two model calls</description>
      <inputs><input name="topic">tides</input></inputs>
      <steps>
        <task type="atomic"><instructions>Write a long paragraph about {{topic}} and the moon and the sea</instructions></task>
        <task type="atomic"><instructions>Shorten: {{last_output}}</instructions></task>
      </steps>
    </task>"""


def run_json(path, capsys, *extra):
    code = main(["run", path, "--model", "taskdsl/echo", "--json", "-q", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_json_lists_every_step_and_sums_the_totals(tmp_path, capsys):
    code, data, _ = run_json(write(tmp_path, "pipe.task.xml", TWO_PROMPTS), capsys)
    assert code == 0
    assert [(s["path"], s["type"], s["status"]) for s in data["steps"]] == [
        ("pipe", "sequential", "COMPLETE"),
        ("pipe/steps[1]", "atomic", "COMPLETE"),
        ("pipe/steps[2]", "atomic", "COMPLETE")]
    assert all(isinstance(s["duration_s"], float) for s in data["steps"])
    first, second = data["steps"][1]["tokens"], data["steps"][2]["tokens"]
    assert "tokens" not in data["steps"][0]  # the sequential's own result repeats its last step's notes
    totals = data["totals"]
    assert (totals["prompt_tokens"], totals["completion_tokens"], totals["steps"]) == (
        first["prompt"] + second["prompt"], first["completion"] + second["completion"], 3)
    assert totals["prompt_tokens"] > data["notes"]["prompt_tokens"]  # not the last step's
    assert totals["duration_s"] == data["steps"][0]["duration_s"]


def test_json_of_a_failed_run_lists_the_steps_too(tmp_path, capsys):
    path = write(tmp_path, "f.task.xml", """
        <task type="sequential" name="f"><description>f</description>
          <steps><task type="script"><command>echo ok</command></task>
                 <task type="script"><command>echo nope >&amp;2; exit 7</command></task></steps></task>""")
    code, data, _ = run_json(path, capsys)
    assert code == 1 and data["error"]["reason"] == "subtask_failure"
    assert [(s["path"], s["status"]) for s in data["steps"]] == [
        ("f", "FAILED"), ("f/steps[1]", "COMPLETE"), ("f/steps[2]", "FAILED")]
    assert data["steps"][2]["problem"] == "task 'f/steps[2]': script exited with code 7: nope"


JSON_STEP = """
    <task type="sequential" name="scores">
      <description>a step that must answer JSON</description>
      <steps>
        <task type="atomic"><instructions>Score it</instructions><output_format type="json"/></task>
        <task type="script"><command>cat</command></task>
      </steps>
    </task>"""


def test_a_step_whose_json_does_not_parse_is_shown_degraded(tmp_path, capsys):
    path = write(tmp_path, "scores.task.xml", JSON_STEP)
    assert main(["run", path, "--model", "taskdsl/echo"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("  ⚠ scores/steps[1] (atomic, ")
    assert err[0].endswith("s) — output is not valid JSON: Expecting value at line 1 column 1")
    assert err[1].startswith("  ✓ scores/steps[2] (script, ")
    code, data, _ = run_json(path, capsys)
    assert code == 0
    assert (data["steps"][1]["status"], data["steps"][1]["problem"]) == (
        "DEGRADED", "output is not valid JSON: Expecting value at line 1 column 1")


def test_step_paths_count_from_one_and_name_an_inline_call_once(tmp_path, capsys):
    path = write(tmp_path, "paths.task.xml", """
        <library>
          <template name="shout" params="text">
            <task type="script"><command>echo {{text}} | tr a-z A-Z</command></task>
          </template>
          <task type="sequential" name="main">
            <description>an inline call, then a reduce</description>
            <steps>
              <task type="script"><command>echo {{shout("hi")}}</command></task>
              <task type="reduce">
                <description>join</description>
                <initial_value>start</initial_value>
                <inputs><input name="a">x</input><input name="b">y</input></inputs>
                <inner_task type="script"><command>echo {{current_data}}</command></inner_task>
                <reduction_task type="script"><command>echo {{accumulator}}{{current_result}}</command></reduction_task>
              </task>
            </steps>
          </task>
        </library>""")
    code, data, _ = run_json(path, capsys, "--task", "main")
    assert code == 0 and data["content"] == "startxy"
    assert [s["path"] for s in data["steps"]] == [
        "main", "main/steps[1]", "main/steps[1]/call:shout",
        "main/steps[2]", "main/steps[2]/inner_task[1]", "main/steps[2]/reduction_task[1]",
        "main/steps[2]/inner_task[2]", "main/steps[2]/reduction_task[2]"]


SUMMARISE = """
    <task type="atomic" name="summarise">
      <description>Summarise</description>
      <instructions>Summarise {{text}} for {{audience}}</instructions>
      <inputs><input name="text">a text</input><input name="audience"/></inputs>
    </task>"""


def run_plain(path, capsys, *extra):
    code = main(["run", path, "--model", "taskdsl/echo", "-q", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_unknown_input_is_refused_naming_what_the_entry_takes(tmp_path, capsys):
    path = write(tmp_path, "summarise.task.xml", SUMMARISE)
    assert run_plain(path, capsys, "--input", "bogus=1") == (
        2, "", "taskdsl run: VALIDATION_ERROR (unknown_input): cannot run 'summarise': unknown input 'bogus'; "
               "it takes 'text', 'audience'\n")
    code, _, err = run_plain(path, capsys, "--input", "txt=1", "--input", "audince=2")
    assert code == 2
    assert err == ("taskdsl run: VALIDATION_ERROR (unknown_input): cannot run 'summarise': unknown inputs 'txt', "
                   "'audince'; it takes 'text', 'audience'; did you mean 'text'?\n")


def test_declared_caller_bound_and_global_names_are_inputs(tmp_path, capsys):
    (tmp_path / "taskdsl.toml").write_text('[globals]\ntone = "dry"\n')
    path = write(tmp_path, "summarise.task.xml", SUMMARISE.replace("for {{audience}}", "for {{audience}} ({{tone}})"))
    assert run_plain(path, capsys, "--input", "text=tides", "--input", "audience=kids", "--input", "tone=warm") == (
        0, "Summarise tides for kids (warm)\n", "")


def test_a_template_entry_takes_its_params_only(tmp_path, capsys):
    path = write(tmp_path, "shout.task.xml", """
        <template name="shout" params="text">
          <task type="script"><command>echo {{text}}</command></task>
        </template>""")
    assert run_plain(path, capsys, "--input", "text=hi") == (0, "hi\n", "")
    code, _, err = run_plain(path, capsys, "--input", "text=hi", "--input", "texts=x")
    assert (code, err) == (2, "taskdsl run: VALIDATION_ERROR (unknown_input): cannot run 'shout': unknown input "
                              "'texts'; it takes 'text'; did you mean 'text'?\n")


def test_the_editor_run_path_refuses_unknown_inputs_with_the_same_message(tmp_path):
    import pytest

    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import prepare_file

    path = write(tmp_path, "summarise.task.xml", SUMMARISE)
    with pytest.raises(TaskError) as info:
        prepare_file(path, inputs={"bogus": "1"})
    assert (info.value.reason, info.value.message) == (
        "unknown_input", "cannot run 'summarise': unknown input 'bogus'; it takes 'text', 'audience'")


def test_a_nested_cycle_fails_with_the_cycle_named_once(tmp_path, capsys):
    path = write(tmp_path, "cyc.task.xml", """
        <library>
          <template name="ping" params="x">
            <task type="sequential"><description>p</description>
              <steps><call template="pong"><arg>x</arg></call></steps></task>
          </template>
          <template name="pong" params="x">
            <task type="sequential"><description>q</description>
              <steps><call template="ping"><arg>x</arg></call></steps></task>
          </template>
        </library>""")
    # a cycle with no <cond> on its path cannot end: TD504 is an error, and the run refuses before any step
    code, out, err = run_plain(path, capsys, "--task", "ping", "--input", "x=1")
    assert (code, out) == (2, "")
    assert " error TD504 " in err and "ping" in err and "pong" in err and err.endswith("fix them first\n")
