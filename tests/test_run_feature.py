"""Pure helpers of the editor's run (evaluator/plan.py, features/run.py, features/run_result.py): what is runnable, where the lens and actions go, which
inputs are missing, which shell commands a run may execute, the result document."""

import textwrap

import pytest
from lsprotocol import types

from taskdsl.language.document import parse
from taskdsl.evaluator import runner
from taskdsl.evaluator.results import TaskResult
from taskdsl.evaluator import plan
from taskdsl.features import run_result
from taskdsl.lsp import run
from taskdsl.features.util import Positions

LIBRARY = textwrap.dedent("""\
    <library>
      <template name="shout" params="text">
        <task type="script">
          <description>Upper-case</description>
          <command>printf '%s' {{text}} | tr a-z A-Z</command>
        </task>
      </template>
      <template name="greet" params="who, greeting">
        <task>
          <description>{{greeting}}, {{who}}</description>
          <inputs>
            <input name="greeting">Hello</input>
          </inputs>
        </task>
      </template>
      <task name="listing" type="atomic">
        <description>Summarise the files</description>
        <file_paths source="command"><command>ls *.txt</command></file_paths>
      </task>
      <task type="atomic"><description>unnamed: not runnable alone</description></task>
    </library>
""")


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def commands_of(path, task=None):
    return runner.prepare_file(path, task, check=False).commands


# -- targets, lenses, actions ---------------------------------------------------------------


def test_targets_of_a_task_file_and_a_library():
    task = parse('<task name="hello"><description>hi</description></task>')
    assert [(t.name, t.label) for t in plan.runnable_targets(task, "/w/x.task.xml")] == [(None, "hello")]
    unnamed = parse('<task><description>hi</description></task>')
    assert [(t.name, t.label) for t in plan.runnable_targets(unnamed, "/w/x.task.xml")] == [(None, "x")]
    library = parse(LIBRARY)
    assert [(t.name, t.label) for t in plan.runnable_targets(library, "/w/lib.task.xml")] == [
        ("shout", "shout"), ("greet", "greet"), ("listing", "listing")]
    assert plan.runnable_targets(parse("<other/>"), None) == []
    assert plan.runnable_targets(parse(""), None) == []


def test_code_lenses_sit_on_each_start_tag_name():
    document = parse(LIBRARY)
    lenses = run.run_code_lenses(document, "file:///w/lib.task.xml", Positions(document), "/w/lib.task.xml")
    assert [(lens.range.start.line, lens.range.start.character, lens.range.end.character) for lens in lenses] == [
        (1, 3, 11), (7, 3, 11), (15, 3, 7)]
    assert [lens.command.title for lens in lenses] == ["▶ Run task 'shout'", "▶ Run task 'greet'",
                                                       "▶ Run task 'listing'"]
    assert [lens.command.arguments for lens in lenses] == [
        ["file:///w/lib.task.xml", "shout"], ["file:///w/lib.task.xml", "greet"], ["file:///w/lib.task.xml", "listing"]]
    assert {lens.command.command for lens in lenses} == {"taskdsl.runTask"}


def test_root_lens_runs_the_file_without_a_task_name():
    document = parse('<task name="hello">\n  <description>hi</description>\n</task>\n')
    [lens] = run.run_code_lenses(document, "file:///w/h.task.xml", Positions(document))
    assert lens.command == types.Command(title="▶ Run task", command="taskdsl.runTask",
                                         arguments=["file:///w/h.task.xml"])
    assert lens.range == types.Range(types.Position(0, 1), types.Position(0, 5))


def test_code_actions_everywhere_and_by_entry_in_a_library():
    document = parse('<task name="hello">\n  <description>hi</description>\n</task>\n')
    anywhere = types.Range(types.Position(1, 4), types.Position(1, 4))
    [action] = run.run_code_actions(document, "file:///w/h.task.xml", anywhere)
    assert action.title == "Run task"
    assert action.kind is None
    assert action.command == types.Command(title="Run task", command="taskdsl.runTask", arguments=["file:///w/h.task.xml"])

    library = parse(LIBRARY)
    inside_greet = types.Range(types.Position(9, 10), types.Position(9, 10))
    assert [a.title for a in run.run_code_actions(library, "file:///w/l.task.xml", inside_greet)] == ["Run task 'greet'"]
    outside = types.Range(types.Position(0, 0), types.Position(0, 0))
    assert [a.command.arguments for a in run.run_code_actions(library, "file:///w/l.task.xml", outside)] == [
        ["file:///w/l.task.xml", "shout"], ["file:///w/l.task.xml", "greet"], ["file:///w/l.task.xml", "listing"]]
    assert run.run_code_actions(library, "file:///w/l.task.xml", outside, only=["quickfix"]) == []
    assert run.run_code_actions(parse("<oops"), "file:///w/x.xml", outside) == []


# -- inputs ---------------------------------------------------------------------------------


def test_task_inputs_placeholders_are_required_literals_and_from_are_not():
    document = parse("""<task name="t"><description>d</description><inputs>
        <input name="text"/><input name="lang">French</input><input name="x" from="lang"/>
        <input name="sub"><task><description>nested</description></task></input>
        <input name="other"></input></inputs></task>""")
    target = plan.find_target(document, None)
    inputs = plan.plan_inputs(target, {}, "t")
    # x's from="lang" names the caller's lang, not the sibling input (SPEC §17: an input never sees its
    # siblings): at the root the caller is the run, which must be given lang
    assert inputs == plan.InputPlan({}, ["text", "other", "lang"], "t")
    assert plan.plan_inputs(target, {"text": "a", "other": 2, "lang": "de"}, "t") == plan.InputPlan(
        {"text": "a", "other": 2, "lang": "de"}, [], "t")
    assert plan.missing_inputs_message(inputs) == (
        "cannot run 't': inputs 'text', 'other', 'lang' have no value; pass them in the command's inputs argument "
        '({"text": "…", "other": "…", "lang": "…"})')
    one = plan.InputPlan({}, ["text"], "t")
    assert plan.missing_inputs_message(one) == (
        "cannot run 't': input 'text' has no value; pass it in the command's inputs argument ({\"text\": \"…\"})")


def test_template_params_come_from_arguments_then_literal_inputs():
    document = parse(LIBRARY)
    greet = plan.find_target(document, "greet")
    assert greet.get("name") == "greet"
    assert plan.plan_inputs(greet, {}, "greet") == plan.InputPlan({"greeting": "Hello"}, ["who"], "greet")
    assert plan.plan_inputs(greet, {"who": "Ada", "greeting": "Hi"}, "greet") == plan.InputPlan(
        {"who": "Ada", "greeting": "Hi"}, [], "greet")
    assert plan.find_target(document, "nothing") is None
    assert plan.plan_inputs(None, {"a": 1}, "x") == plan.InputPlan({"a": 1}, [], "x")


# -- shell commands for consent -------------------------------------------------------------


def test_script_commands_through_steps_refs_calls_inline_calls_and_file_paths(tmp_path):
    write(tmp_path, "lib.task.xml", LIBRARY)
    main = write(tmp_path, "main.task.xml", """\
        <task type="sequential" name="main">
          <description>d</description>
          <steps>
            <task type="script"><command>echo one</command></task>
            <task ref="listing"/>
            <task><description>say {{shout("x")}}</description></task>
            <cond>
              <case test="output.ok == true"><task type="script"><command>echo two</command></task></case>
              <default><call template="shout"><arg>hi</arg></call></default>
            </cond>
            <task type="script"><command>echo one</command></task>
          </steps>
        </task>
    """)
    assert commands_of(main) == ["echo one", "ls *.txt", "printf '%s' {{text}} | tr a-z A-Z", "echo two"]


def test_no_commands_for_a_model_only_run_and_unknown_refs_are_skipped(tmp_path):
    path = write(tmp_path, "a.task.xml", '<task name="a"><description>hello</description></task>\n')
    assert commands_of(path) == []
    lib = write(tmp_path, "lib.task.xml", LIBRARY)
    assert commands_of(lib, "greet") == []
    assert commands_of(lib, "shout") == ["printf '%s' {{text}} | tr a-z A-Z"]


# -- events, result document ----------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 0.5
        return self.now


def test_recorder_pairs_begin_and_end_by_path():
    recorder = run_result.StepRecorder(clock=Clock())
    recorder.on_event({"event": "begin", "path": "main", "kind": "sequential", "name": "main"})
    recorder.on_event({"event": "begin", "path": "main/steps[1]", "kind": "atomic", "name": "main/steps[1]"})
    end = recorder.on_event({"event": "end", "path": "main/steps[1]", "kind": "atomic", "name": "main/steps[1]",
                             "result": TaskResult("hi", notes={"prompt_tokens": 7, "completion_tokens": 2})})
    assert end.to_json() == {"path": "main/steps[1]", "kind": "atomic", "name": "main/steps[1]", "status": "COMPLETE",
                             "content": "hi", "duration_s": 0.5, "tokens": {"prompt": 7, "completion": 2},
                             "error": None}
    recorder.on_event({"event": "begin", "path": "main/steps[2]", "kind": "script", "name": "s"})
    failed = recorder.on_event({"event": "error", "path": "main/steps[2]", "kind": "script", "name": "s",
                                "error": {"type": "TASK_FAILURE", "reason": "script_error", "message": "boom",
                                          "details": {}}})
    assert failed.status == "FAILED" and failed.error["message"] == "boom"
    assert recorder.on_event({"event": "end", "path": "nowhere"}) is None
    recorder.cancel_open()
    assert [s.status for s in recorder.steps] == ["CANCELLED", "COMPLETE", "FAILED"]
    assert recorder.total_tokens() == {"prompt": 7, "completion": 2}
    assert run_result.step_log_line(end) == "✓ main/steps[1] (atomic, 0.50 s, 7 prompt + 2 completion tokens): hi"
    assert run_result.step_log_line(failed) == "✗ main/steps[2] (script, 0.50 s): boom"


def test_result_document_exact():
    steps = [run_result.StepRecord("main", "sequential", "main", "COMPLETE", "DONE", 1.25),
             run_result.StepRecord("main/steps[1]", "atomic", "s1", "COMPLETE", "text with ``` fence", 0.5,
                            {"prompt": 10, "completion": 3}),
             run_result.StepRecord("main/steps[2]", "script", "s2", "COMPLETE", "", 0.01)]
    report = run_result.RunReport(file="/w/main.task.xml", label="main", task=None, model="taskdsl/echo",
                           status="COMPLETE", content="DONE", steps=steps, duration_s=1.3,
                           tokens={"prompt": 10, "completion": 3}, inputs={"who": "Ada"},
                           trace_uri="file:///t/main.trace.jsonl")
    assert run_result.render_result(report) == textwrap.dedent("""\
        # main: COMPLETE

        - File: `/w/main.task.xml`
        - Model: `taskdsl/echo`
        - Duration: 1.30 s
        - Tokens: 10 prompt + 3 completion
        - Inputs: `who`
        - Trace: file:///t/main.trace.jsonl

        ## Output

        ```text
        DONE
        ```

        ## Steps

        ### 1. `main`

        sequential · COMPLETE · 1.25 s

        ```text
        DONE
        ```

        ### 2. `main/steps[1]`

        atomic · COMPLETE · 0.50 s · tokens 10 prompt + 3 completion

        ````text
        text with ``` fence
        ````

        ### 3. `main/steps[2]`

        script · COMPLETE · 0.01 s

        _(empty output)_
        """)


def test_result_document_of_a_failure():
    error = {"type": "TASK_FAILURE", "reason": "subtask_failure", "message": "step 1 of 1 failed",
             "details": {"step_path": "main/steps[1]"}}
    steps = [run_result.StepRecord("main/steps[1]", "script", "s", "FAILED", "", 0.1, None, {"type": "TASK_FAILURE",
                                                                                     "message": "exit 3"})]
    report = run_result.RunReport(file="/w/m.task.xml", label="main", task="main", model="m", status="FAILED",
                           steps=steps, error=error, duration_s=0.2)
    text = run_result.render_result(report)
    assert text.startswith("# main: FAILED\n\n- File: `/w/m.task.xml`\n- Task: `main`\n")
    assert ("## Error\n\n**TASK_FAILURE** (subtask_failure): step 1 of 1 failed\n\nFailed step: `main/steps[1]`\n\n"
            "## Output\n\n_(empty)_\n") in text
    assert text.endswith("script · FAILED · 0.10 s\n\n**TASK_FAILURE**: exit 3\n")
    assert report.to_json()["error"] == error


# -- arguments ------------------------------------------------------------------------------


def test_arguments_positional_and_object():
    assert run.parse_arguments(["file:///a.task.xml"]) == {
        "uri": "file:///a.task.xml", "task": None, "inputs": {}, "model": None, "wait": None}
    assert run.parse_arguments(["file:///a", "t", {"x": 1}, "taskdsl/echo", {"wait": False}]) == {
        "uri": "file:///a", "task": "t", "inputs": {"x": 1}, "model": "taskdsl/echo", "wait": False}
    assert run.parse_arguments([{"uri": "file:///a", "inputs": {"x": "y"}}])["inputs"] == {"x": "y"}
    assert run.parse_arguments(["file:///a", None, None, None])["task"] is None


@pytest.mark.parametrize("args, message", [
    ([], "taskdsl.runTask needs the document's uri as its first argument"),
    ([3], "taskdsl.runTask needs the document's uri as its first argument"),
    (["file:///a", 5], "taskdsl.runTask: task must be a task or template name (or null for the root task)"),
    (["file:///a", None, ["x"]], "taskdsl.runTask: inputs must be an object of input names to values"),
    (["file:///a", None, {}, 3], "taskdsl.runTask: model must be a model identifier such as taskdsl/echo"),
    (["file:///a", None, {}, None, {"wait": "no"}], "taskdsl.runTask: wait must be true or false"),
    (["a", "b", "c", "d", "e", "f"], "taskdsl.runTask takes at most 5 arguments (uri, task, inputs, model, options), got 6"),
])
def test_bad_arguments_are_named(args, message):
    with pytest.raises(ValueError) as info:
        run.parse_arguments(args)
    assert str(info.value) == message


def test_fence_and_errors():
    assert run_result.fence("a") == "```text\na\n```"
    assert run_result.fence("x ```` y") == "`````text\nx ```` y\n`````"
    assert run_result.error_json(ValueError("bad")) == {"type": "TASK_FAILURE", "reason": "internal_error",
                                                 "message": "ValueError: bad", "details": {}}
    from taskdsl.evaluator.results import failure
    assert run_result.error_json(failure("oops", "r", step=1)) == {"type": "TASK_FAILURE", "reason": "r", "message": "oops",
                                                            "details": {"step": 1}}
