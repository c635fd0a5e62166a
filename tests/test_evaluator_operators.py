"""Every operator end to end with the offline echo model and real scripts."""

import json

import pytest

from evaluator_helpers import run, write
from taskdsl.evaluator.compiler import TaskDefinition, TaskLibrary
from taskdsl.evaluator.env import Env, UnboundVariable
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import TemplateErrors, run_file


async def test_atomic_echo_gets_rendered_instructions_and_input_blocks(tmp_path):
    result, _ = await run(tmp_path, """
        <task name="hello">
          <instructions>Greet {{who}} warmly.</instructions>
          <inputs>
            <input name="who">Ada</input>
            <input name="mood">cheerful</input>
          </inputs>
        </task>""")
    # echo answers with the user prompt: instructions, then the inputs it did not quote
    assert result.content == 'Greet Ada warmly.\n\n<input name="mood">\ncheerful\n</input>'
    assert result.status == "COMPLETE"
    assert result.notes["model"] == "taskdsl/echo"


async def test_cli_inputs_override_literal_defaults(tmp_path):
    result, _ = await run(tmp_path, """
        <task name="hello"><instructions>Hi {{who}}</instructions>
          <inputs><input name="who">Ada</input></inputs></task>""", inputs={"who": "Grace"})
    assert result.content == "Hi Grace"


async def test_sequential_passes_previous_output_on_stdin_and_as_last_output(tmp_path):
    result, events = await run(tmp_path, """
        <task type="sequential" name="pipe">
          <description>pipe</description>
          <steps>
            <task type="script"><command>echo one; echo two</command></task>
            <task type="script"><command>tr a-z A-Z</command></task>
            <task><instructions>Got: {{last_output}}</instructions></task>
          </steps>
        </task>""")
    assert result.content == "Got: ONE\nTWO"
    assert result.notes["steps"] == 3
    ends = [e["path"] for e in events if e["event"] == "end"]
    assert ends == ["pipe/steps[1]", "pipe/steps[2]", "pipe/steps[3]", "pipe"]


async def test_step_inputs_are_nested_tasks_evaluated_before_the_step(tmp_path):
    result, events = await run(tmp_path, """
        <task type="sequential" name="s">
          <description>s</description>
          <steps>
            <task type="script">
              <command>echo "$TASKDSL_INPUT_A+$TASKDSL_INPUT_B"</command>
              <inputs>
                <input name="a"><task type="script"><command>echo 1</command></task></input>
                <input name="b"><task type="script"><command>echo 2</command></task></input>
              </inputs>
            </task>
          </steps>
        </task>""")
    assert result.content == "1+2"
    begun = [e["path"] for e in events if e["event"] == "begin"]
    assert begun.index("s/steps[1]/inputs/a") < len(begun) and "s/steps[1]/inputs/b" in begun


async def test_failed_step_gives_subtask_failure_with_partial_results(tmp_path):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """
            <task type="sequential" name="s">
              <description>s</description>
              <steps>
                <task type="script"><command>echo first</command></task>
                <task type="script"><command>echo broken >&amp;2; exit 3</command></task>
                <task type="script"><command>echo never</command></task>
              </steps>
            </task>""")
    error = info.value
    assert (error.type, error.reason) == ("TASK_FAILURE", "subtask_failure")
    assert error.message.startswith("task 's': step 2 of 3 failed: TASK_FAILURE (script_error)")
    assert "script exited with code 3: broken" in error.message
    assert [(p["step"], p["content"]) for p in error.details["partial_results"]] == [(1, "first")]
    assert error.details["error"]["details"]["exit_code"] == 3


async def test_fail_on_error_false_hands_stdout_stderr_and_exit_code_on(tmp_path):
    result, _ = await run(tmp_path, """
        <task type="sequential" name="s">
          <description>s</description>
          <steps>
            <task type="script"><command fail_on_error="false">echo out; echo err >&amp;2; exit 4</command></task>
            <task type="script"><command>cat</command></task>
          </steps>
        </task>""")
    assert result.content == "out"


@pytest.mark.parametrize("fmt, sees_content", [("full_output", True), ("notes_only", False)])
async def test_accumulation_format_decides_what_later_steps_receive(tmp_path, fmt, sees_content):
    trace = tmp_path / "trace.jsonl"
    await run(tmp_path, f"""
        <task type="sequential" name="s">
          <description>s</description>
          <context_management>
            <accumulate_data>true</accumulate_data>
            <accumulation_format>{fmt}</accumulation_format>
          </context_management>
          <steps>
            <task type="script"><command>echo SECRET-CONTENT-1; echo note-1 >&amp;2</command></task>
            <task><instructions>second</instructions></task>
          </steps>
        </task>""", trace=str(trace))
    calls = [json.loads(line) for line in trace.read_text().splitlines()]
    system = next(c for c in calls if c["event"] == "model_call")["prompt"]["system"]
    assert "<previous_steps>" in system
    assert ("SECRET-CONTENT-1" in system.split("<previous_steps>")[1].replace('\\n', '\n').split('"stdout"')[0]) is sees_content
    assert "note-1" in system  # notes (stdout, stderr, exit_code of a script) pass in both formats


async def test_reduce_folds_inputs_from_initial_value(tmp_path):
    result, _ = await run(tmp_path, """
        <task type="reduce" name="sum">
          <description>sum</description>
          <initial_value>100</initial_value>
          <inputs>
            <input name="a">1 2 3</input>
            <input name="b">4 5</input>
          </inputs>
          <inner_task type="script">
            <description>count</description>
            <command>printf '%s' "$TASKDSL_INPUT_CURRENT_DATA" | wc -w</command>
            <inputs><input name="current_data"/></inputs>
          </inner_task>
          <reduction_task type="script">
            <description>add</description>
            <command>echo "$(( TASKDSL_INPUT_ACCUMULATOR + TASKDSL_INPUT_CURRENT_RESULT ))[$TASKDSL_INPUT_ORIGINAL_INPUT]" | sed 's/\\[.*//'</command>
          </reduction_task>
        </task>""")
    assert result.content == "105"
    assert result.notes["inputs"] == 2


async def test_reduce_failure_names_input_index_and_accumulator(tmp_path):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """
            <task type="reduce" name="r">
              <description>r</description>
              <initial_value>start</initial_value>
              <inputs><input name="x">ok</input><input name="y">bad</input></inputs>
              <inner_task type="script"><command>test "$TASKDSL_INPUT_CURRENT_DATA" != bad</command></inner_task>
              <reduction_task type="script"><command>echo "$TASKDSL_INPUT_ACCUMULATOR+"</command></reduction_task>
            </task>""")
    error = info.value
    assert error.reason == "subtask_failure"
    assert error.message.startswith("task 'r': inner_task failed on input 2 ('y')")
    assert (error.details["input_index"], error.details["accumulator"]) == (2, "start+")


COND_SEQ = """
    <task type="sequential" name="s">
      <description>s</description>
      <steps>
        <task type="script"><command>echo '{output}'</command><output_format type="json"/></task>
        <cond>
          <case test="output.errors > 0"><task type="script"><command>echo errors</command></task></case>
          <case test="output.valid == true"><task type="script"><command>echo valid</command></task></case>
          {default}
        </cond>
      </steps>
    </task>"""


@pytest.mark.parametrize("output, default, expected", [
    ('{"errors": 2, "valid": true}', "", "errors"),
    ('{"errors": 0, "valid": true}', "", "valid"),
    ('{"errors": 0, "valid": false}', '<default><task type="script"><command>echo fallback</command></task></default>', "fallback"),
    ('{"errors": 0, "valid": false}', "", ""),
])
async def test_cond_picks_the_first_case_that_holds(tmp_path, output, default, expected):
    result, _ = await run(tmp_path, COND_SEQ.format(output=output, default=default))
    assert result.content == expected


async def test_cond_on_text_output_fails_with_a_clear_message(tmp_path):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, COND_SEQ.format(output="not json", default=""))
    inner = info.value.details["error"]
    assert inner["reason"] == "invalid_json"
    assert inner["message"] == "output must be valid JSON for conditionals; got 'not json'"


async def test_cond_case_receives_the_tested_output_on_stdin(tmp_path):
    result, _ = await run(tmp_path, COND_SEQ.format(
        output='{"valid": true, "errors": 0}', default="").replace("echo valid", "cat"))
    assert json.loads(result.content) == {"valid": True, "errors": 0}


async def test_top_level_cond_tests_last_output(tmp_path):
    xml = """
        <cond>
          <case test="output.n >= 10"><task type="script"><command>echo big</command></task></case>
          <default><task type="script"><command>echo small</command></task></default>
        </cond>"""
    big, _ = await run(tmp_path, xml, inputs={"last_output": '{"n": 12}'})
    small, _ = await run(tmp_path, xml, inputs={"last_output": '{"n": 1}'})
    assert (big.content, small.content) == ("big", "small")


PEEK = """      <template name="peek" params="text">
        <task><instructions>{{text}} / {{outside}}</instructions></task>
      </template>
"""
LIBRARY = """
    <library>
      <template name="wrap" params="text, left">
        <task type="script"><command>printf '%s%s%s' {{left}} {{text}} {{left}}</command></task>
      </template>
      <template name="peek" params="text">
        <task><instructions>{{text}} / {{outside}}</instructions></task>
      </template>
      <task name="greet" type="script">
        <description>greet</description>
        <command>echo "Hello, $TASKDSL_INPUT_WHO"</command>
        <inputs><input name="who">world</input></inputs>
      </task>
    </library>"""
#: the library without peek's TD402 error: a run that checks reaches every file it calls (§17)
CLEAN_LIBRARY = LIBRARY.replace(PEEK, "")


async def test_ref_binds_params_by_name_and_keeps_defaults(tmp_path):
    write(tmp_path, "lib/text.task.xml", CLEAN_LIBRARY)
    result, events = await run(tmp_path, """
        <task type="sequential" name="main">
          <description>m</description>
          <inputs><input name="user">Ada</input></inputs>
          <steps>
            <task ref="greet"/>
            <task ref="greet"><inputs><input name="who" from="user"/></inputs></task>
          </steps>
        </task>""")
    assert result.content == "Hello, Ada"
    assert "main/steps[1]/ref:greet" in [e["path"] for e in events]


async def test_call_binds_positional_and_named_args(tmp_path):
    write(tmp_path, "lib/text.task.xml", CLEAN_LIBRARY)
    result, _ = await run(tmp_path, """
        <task type="sequential" name="main">
          <description>m</description>
          <steps>
            <task type="script"><command>echo inner</command></task>
            <call template="wrap"><arg>last_output</arg><arg name="left">*</arg></call>
          </steps>
        </task>""")
    assert result.content == "*inner*"


async def test_call_as_a_whole_document_with_a_nested_task_argument(tmp_path):
    write(tmp_path, "lib/text.task.xml", CLEAN_LIBRARY)
    result, _ = await run(tmp_path, """
        <call template="wrap">
          <arg name="text"><task type="script"><command>echo nested</command></task></arg>
          <arg name="left">~</arg>
        </call>""", name="entry.task.xml")
    assert result.content == "~nested~"


async def test_inline_template_call_in_text(tmp_path):
    write(tmp_path, "lib/text.task.xml", CLEAN_LIBRARY)
    result, _ = await run(tmp_path, """
        <task name="t"><instructions>Say {{wrap(who, "!")}} and {{wrap("x", 'y')}}</instructions>
          <inputs><input name="who">Ada</input></inputs></task>""")
    assert result.content.startswith("Say !Ada! and yxy")


async def test_a_template_sees_only_its_params(tmp_path):
    write(tmp_path, "lib/text.task.xml", LIBRARY)
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """
            <task type="sequential" name="main">
              <description>m</description>
              <inputs><input name="outside">visible in main only</input></inputs>
              <steps><call template="peek"><arg>outside</arg></call></steps>
            </task>""", check=False)
    inner = info.value.details["error"]
    assert inner["message"] == "task 'peek': variable 'outside' is not defined (in {{outside}}); visible here: text"


def first(info) -> tuple[str, str]:
    "(code, message) of the checker's first error a run was refused with"
    found = info.value.diagnostics[0]
    return found.code, found.message


async def test_unknown_ref_suggests_the_nearest_name(tmp_path):
    write(tmp_path, "lib/text.task.xml", LIBRARY)
    with pytest.raises(TemplateErrors) as info:  # refused before anything runs with the checker's TD501
        await run(tmp_path, """<task type="sequential" name="m"><description>m</description>
            <steps><task ref="gret"/></steps></task>""", check=False)
    assert first(info) == (
        "TD501", "'gret' is not a task or template in the library; did you mean 'greet'?")


async def test_call_with_too_many_or_unknown_args(tmp_path):
    write(tmp_path, "lib/text.task.xml", LIBRARY)
    # refused before running, with the checker's TD503 messages
    with pytest.raises(TemplateErrors) as info:
        await run(tmp_path, """<call template="wrap"><arg name="right">x</arg></call>""", check=False)
    said = [(d.code, d.message) for d in info.value.diagnostics]
    assert ("TD503", "'wrap' has no parameter 'right' (its parameters: text, left)") in said, said
    with pytest.raises(TemplateErrors) as info:
        await run(tmp_path, """<call template="wrap"><arg>x</arg></call>""", check=False)
    assert first(info)[1].startswith("'wrap' takes 2 arguments (text, left); this call passes 1")


async def test_missing_variable_names_the_variable_and_the_task(tmp_path):
    # a name nothing declares is TD402, an error (§17): refused before the run, even with the gate off
    with pytest.raises(TemplateErrors) as info:
        await run(tmp_path, """<task name="lonely"><instructions>Hi {{nobody}}</instructions></task>""", check=False)
    assert first(info) == (
        "TD402", "{{nobody}} names nothing visible: nothing here declares it (visible: nothing)")


async def test_dotted_and_indexed_access_on_json_values(tmp_path):
    result, _ = await run(tmp_path, """
        <task name="t"><instructions>{{data.user.name}} {{data.tags[1]}} {{data["odd key"]}}</instructions>
          <inputs><input name="data">{"user": {"name": "Ada"}, "tags": ["a", "b"], "odd key": 7}</input></inputs>
        </task>""")
    assert result.content.startswith("Ada b 7")
    with pytest.raises(TaskError, match=r"task 't': 'data' has no member 'nope' \(it has a\) \(in \{\{data.nope\}\}\)"):
        await run(tmp_path, """<task name="t"><instructions>{{data.nope}}</instructions>
            <inputs><input name="data">{"a": 1}</input></inputs></task>""", check=False)


INHERIT = """
    <task type="sequential" name="outer">
      <description>o</description>
      <inputs><input name="a">A</input><input name="b">B</input></inputs>
      <steps>
        <task type="script">
          <context_management><inherit_context>{mode}</inherit_context></context_management>
          <command>echo {{{{{var}}}}}</command>
          {inputs}
        </task>
      </steps>
    </task>"""


async def test_inherit_full_sees_the_parent(tmp_path):
    result, _ = await run(tmp_path, INHERIT.format(mode="full", var="b", inputs=""))
    assert result.content == "B"


async def test_inherit_none_sees_only_globals(tmp_path):
    with pytest.raises(TemplateErrors) as info:  # the checker's TD402 (an error: nothing can bind it)
        await run(tmp_path, INHERIT.format(mode="none", var="b", inputs=""), check=False)
    assert first(info)[0] == "TD402" and first(info)[1].startswith("{{b}} names nothing visible")


async def test_inherit_subset_sees_only_the_names_its_inputs_take_from(tmp_path):
    ok, _ = await run(tmp_path, INHERIT.format(mode="subset", var="a", inputs='<inputs><input name="x" from="a"/></inputs>'))
    assert ok.content == "A"
    with pytest.raises(TemplateErrors) as info:
        await run(tmp_path, INHERIT.format(mode="subset", var="b", inputs='<inputs><input name="x" from="a"/></inputs>'),
                  check=False)
    assert first(info)[0] == "TD402"


async def test_library_file_needs_task_and_task_picks_an_entry(tmp_path):
    path = write(tmp_path, "lib.task.xml", LIBRARY)
    with pytest.raises(TaskError, match=r"choose one with --task \(wrap, peek, greet\)"):
        await run_file(path, model="taskdsl/echo", check=False)
    with pytest.raises(TemplateErrors) as info:  # peek's {{outside}} is the checker's TD402 error: refused
        await run_file(path, task="greet", inputs={"who": "Lin"}, check=False)
    assert first(info)[0] == "TD402" and "{{outside}}" in first(info)[1]
    path = write(tmp_path, "lib.task.xml", LIBRARY.replace("{{outside}}", "{{text}}"))
    result = await run_file(path, task="greet", inputs={"who": "Lin"}, check=False)
    assert result.content == "Hello, Lin"
    result = await run_file(path, task="wrap", inputs={"text": "t", "left": "|"}, check=False)
    assert result.content == "|t|"


async def test_a_template_that_does_not_check_is_refused_before_running(tmp_path):
    marker = tmp_path / "ran"
    path = write(tmp_path, "bad.task.xml", f"""
        <task type="script"><command>touch {marker}</command><steps/></task>""")
    with pytest.raises(TemplateErrors) as info:
        await run_file(path)
    assert info.value.diagnostics and all(d.is_error for d in info.value.diagnostics)
    assert not marker.exists()


def test_env_find_is_lexical_and_names_the_missing_variable():
    outer = Env({"a": 1, "taskLibrary": "lib"})
    inner = Env({"b": 2}, outer=Env(outer=outer))
    assert inner.find("a") is outer and inner.lookup("b") == 2 and inner.find("taskLibrary")["taskLibrary"] == "lib"
    with pytest.raises(UnboundVariable, match="variable 'zzz' is not defined"):
        inner.find("zzz")


def test_task_library_rejects_duplicates_and_resolves_type_subtype_keys():
    library = TaskLibrary()
    library.register_task(TaskDefinition("judge", "atomic", "evaluator", {"path": "a.task.xml"}))
    with pytest.raises(TaskError, match=r"task 'judge' is already registered \(from a.task.xml\)"):
        library.register_task(TaskDefinition("judge", "atomic", None))
    assert library.get_task("atomic:evaluator").name == "judge"
    with pytest.raises(TaskError, match="task 'judg3' is not in the library; did you mean 'judge'"):
        library.get_task("judg3")


async def test_a_deep_chain_without_a_cycle_is_not_called_one(tmp_path):
    templates = "".join(f'<template name="t{i}" params=""><task><description>{{{{t{i + 1}()}}}}</description></task>'
                        f'</template>' for i in range(60))
    xml = f'<library>{templates}<template name="t60" params=""><task><description>end</description></task>' \
          f'</template><task name="go" ref="t0"/></library>'
    with pytest.raises(TaskError) as caught:
        await run(tmp_path, xml, task="go", check=False)
    error = caught.value
    assert (error.type, error.reason, error.details["cycle"]) == ("RESOURCE_EXHAUSTION", "call_depth", [])
    assert error.message == ("more than 50 nested calls in a chain that calls no template twice (go → t0 → … → t49 → t50): "
                             "call fewer templates inside each other (the limit bounds any chain, not only a recursion)")


@pytest.mark.parametrize("xml, task, cycle", [
    ('<library><task name="a" ref="a"/></library>', "a", "a → a"),
    ('<library><template name="t" params="x"><task><description>{{t(x)}}</description></task></template>'
     '<task name="go" type="sequential"><steps><call template="t"><arg>1</arg></call></steps></task></library>', "go",
     "t → t"),
])
async def test_unbounded_recursion_is_a_clear_error_not_a_recursion_error(tmp_path, xml, task, cycle):
    with pytest.raises(TemplateErrors) as refused:  # an unguarded cycle is TD504, an error: refused at once
        await run(tmp_path, xml, task=task)
    assert {d.code for d in refused.value.diagnostics} == {"TD504"}
    with pytest.raises(TaskError) as caught:  # the runtime's own limit, with the gate off
        await run(tmp_path, xml, task=task, check=False)
    error = caught.value  # not wrapped by the sequential: the cycle, once
    assert (error.type, error.reason, error.message, error.details["cycle"]) == (
        "RESOURCE_EXHAUSTION", "call_depth", f"more than 50 nested calls through the cycle {cycle}: guard the "
        "recursive step with a <cond>, or break the cycle", cycle.split(" → "))
