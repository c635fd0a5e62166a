"""One meaning: each decision about what a template means, through both `check` and `run`.

Every test writes templates into a folder, checks the entry file as `taskdsl check` does (the
folder is its library) and runs it as `taskdsl run --model taskdsl/echo` does (run_file; with
check=False where the test shows that even without the gate the run refuses with the checker's code
and message).
"""

from __future__ import annotations

import os

import pytest

from evaluator_helpers import write
from taskdsl.rules.checker import check_text
from taskdsl.evaluator.runner import TemplateErrors, run_file
from taskdsl.library import Library
from taskdsl.cli.run import main


def check(path: str) -> list:
    """(code, severity, message) of the checker's findings for path, its folder as the library."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    library = Library.from_paths([os.path.dirname(path)])
    result = check_text(text, path=os.path.abspath(path), library=library)
    return [(d.code, d.severity.value, d.message) for d in result.diagnostics]


async def run(path: str, **kwargs):
    kwargs.setdefault("model", "taskdsl/echo")
    return await run_file(path, **kwargs)


async def refusal(path: str, **kwargs) -> tuple[str, str]:
    """(code, message) of the run's refusal with the checker's gate off: what the compiler cannot
    build is refused with the checker's diagnostics all the same (the first error)."""
    with pytest.raises(TemplateErrors) as info:
        await run(path, check=False, **kwargs)
    first = info.value.diagnostics[0]
    return first.code, first.message


async def agree_on_error(path: str, code: str, **kwargs) -> str:
    """The checker reports `code` as an error and the run refuses with the same code and message."""
    found, message = await refusal(path, **kwargs)
    assert found == code
    assert (code, "error", message) in check(path), check(path)
    with pytest.raises(TemplateErrors):  # and with the gate on, it is refused before running
        await run(path, **kwargs)
    return message


# ---------------------------------------------------------------- XSD whitespace collapsing

async def test_enumerations_and_booleans_are_read_after_whitespace_collapsing(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type=" sequential " name="t">
          <steps>
            <task type="script"><command fail_on_error=" false ">echo one; exit 3</command></task>
            <task type="
               script"><command>cat</command></task>
          </steps>
        </task>""")
    assert [c for c in check(path) if c[1] == "error"] == []
    result = await run(path)
    assert result.content == "one"


# ---------------------------------------------------------------- last_output

async def test_last_output_at_the_top_of_a_task_is_refused_by_both(tmp_path):
    path = write(tmp_path, "t.task.xml", "<task><description>Use {{last_output}}</description></task>")
    message = await agree_on_error(path, "TD402", inputs={"last_output": "x"})
    assert message.startswith("{{last_output}} names nothing here: last_output is the previous step's output")


async def test_last_output_inside_a_template_is_refused_by_both(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <template name="t" params="a"><task><description>{{a}} {{last_output}}</description></task></template>""")
    message = await agree_on_error(path, "TD402", inputs={"a": "1"})
    assert message.startswith("{{last_output}} names nothing here: last_output is the previous step's output")


async def test_last_output_in_later_steps_and_in_a_root_cond(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t">
          <steps>
            <task type="script"><command>echo first</command></task>
            <task type="sequential"><steps>
              <task type="script"><command>echo "got {{last_output}}"</command></task>
            </steps></task>
          </steps>
        </task>""")
    assert check(path) == []
    assert (await run(path)).content == "got first"
    cond = write(tmp_path, "c.task.xml", """
        <cond>
          <case test="output.ok == true"><task type="script"><command>echo yes {{last_output}}</command></task></case>
          <default><task type="script"><command>echo no</command></task></default>
        </cond>""")
    assert check(cond) == []
    assert (await run(cond, inputs={"last_output": '{"ok": true}'})).content == 'yes {"ok": true}'


async def test_a_cond_first_in_a_sequential_has_nothing_to_test(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t"><steps>
          <cond><case test="output.ok"><task type="script"><command>echo x</command></task></case></cond>
        </steps></task>""")
    message = await agree_on_error(path, "TD402")
    assert message.startswith("this cond has no output to test")


# ---------------------------------------------------------------- inherit_context

INHERIT = """
    <task type="sequential" name="t">
      <inputs><input name="a">A</input><input name="b">B</input></inputs>
      <steps><task type="script"><command>echo {{{{{var}}}}}</command>{inputs}
        <context_management><inherit_context>{mode}</inherit_context></context_management></task></steps>
    </task>"""


async def test_inherit_none_sees_nothing_of_its_parent_in_both(tmp_path):
    path = write(tmp_path, "t.task.xml", INHERIT.format(var="a", inputs="", mode="none"))
    message = await agree_on_error(path, "TD402")
    assert "does not inherit its caller's variables" in message


async def test_inherit_subset_sees_what_its_inputs_take_from_in_both(tmp_path):
    inputs = '<inputs><input name="x" from="a"/></inputs>'
    path = write(tmp_path, "t.task.xml", INHERIT.format(var="a", inputs=inputs, mode="subset"))
    assert [c for c in check(path) if c[1] == "error"] == []
    assert (await run(path)).content == "A"
    path = write(tmp_path, "t.task.xml", INHERIT.format(var="b", inputs=inputs, mode="subset"))
    await agree_on_error(path, "TD402")


# ---------------------------------------------------------------- template calls run isolated

async def test_a_template_call_runs_isolated(tmp_path):
    write(tmp_path, "lib.task.xml", """
        <library>
          <template name="peek" params="p">
            <task type="script"><command>printf 'stdin=[%s] p=%s' "$(cat)" {{p}}</command></task>
          </template>
        </library>""")
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t">
          <steps>
            <task type="script"><command>echo SECRET</command></task>
            <call template="peek"><arg>v</arg></call>
          </steps>
        </task>""")
    assert check(path) == []
    assert (await run(path)).content == "stdin=[] p=v"  # no caller output on stdin


async def test_a_template_does_not_receive_the_callers_history_or_files(tmp_path):
    (tmp_path / "notes.txt").write_text("FILE CONTENT")
    write(tmp_path, "lib.task.xml", """
        <library><template name="ask" params="q"><task><description>Q: {{q}}</description></task></template></library>""")
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t">
          <file_paths><path>notes.txt</path></file_paths>
          <steps>
            <task type="script"><command>echo HISTORY</command></task>
            <call template="ask"><arg>why</arg></call>
          </steps>
        </task>""")
    assert [c for c in check(path) if c[1] == "error"] == []
    prompt = (await run(path)).content  # taskdsl/echo answers with the prompt it received
    assert "Q: why" in prompt and "FILE CONTENT" not in prompt and "HISTORY" not in prompt


# ---------------------------------------------------------------- <arg> text

async def test_arg_text_is_literal_unless_it_is_exactly_a_visible_name(tmp_path):
    write(tmp_path, "lib.task.xml", """
        <library><template name="show" params="text">
          <task type="script"><command>printf '%s' {{text}}</command></task>
        </template></library>""")
    cases = {'"quoted"': '"quoted"', "  a &amp; b  ": "a & b", "who": "Ada", "word": "word",
             "{{who}}!": "Ada!", "who is": "who is"}
    for arg, expected in cases.items():
        path = write(tmp_path, "t.task.xml", f"""
            <task type="sequential" name="t">
              <inputs><input name="who">Ada</input></inputs>
              <steps><call template="show"><arg>{arg}</arg></call></steps>
            </task>""")
        assert [c for c in check(path) if c[1] == "error"] == [], arg
        assert (await run(path)).content == expected, arg


# ---------------------------------------------------------------- reduce names in inputs

async def test_reduce_names_are_visible_in_the_inputs_of_its_tasks(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="reduce" name="t">
          <inputs><input name="one">1</input><input name="two">2</input></inputs>
          <initial_value>0</initial_value>
          <inner_task type="script"><command>echo "item $TASKDSL_INPUT_ITEM"</command>
            <inputs><input name="item" from="current_data"/></inputs></inner_task>
          <reduction_task type="script"><command>printf '%s+%s' {{acc}} {{cur}}</command>
            <inputs><input name="acc" from="accumulator"/><input name="cur" from="current_result"/></inputs></reduction_task>
        </task>""")
    assert [c for c in check(path) if c[0] in ("TD402", "TD403")] == []
    assert (await run(path)).content == "0+item 1+item 2"


# ---------------------------------------------------------------- params and arguments

async def test_a_param_without_a_literal_default_must_be_bound(tmp_path):
    write(tmp_path, "lib.task.xml", """
        <library>
          <task name="greet" type="script"><command>echo "$TASKDSL_INPUT_WHO $TASKDSL_INPUT_HOW"</command>
            <inputs><input name="who" from="someone"/><input name="how">hi</input></inputs></task>
        </library>""")
    path = write(tmp_path, "t.task.xml", '<task type="sequential" name="t"><steps><task ref="greet"/></steps></task>')
    message = await agree_on_error(path, "TD503")
    assert message == ("ref to 'greet' does not bind its parameter 'who': add an <input name=…> for each "
                       "(they have no default)")
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t"><steps>
          <task ref="greet"><inputs><input name="who">Ada</input></inputs></task>
        </steps></task>""")
    assert check(path) == []
    assert (await run(path)).content == "Ada hi"  # `how` keeps its literal default


async def test_params_separated_by_spaces_or_commas_and_spaced_placeholders(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <library>
          <template name="pair" params="a b,c">
            <task type="script"><command>echo {{ a }}-{{b}}-{{ c}}</command></task>
          </template>
          <task name="main" type="sequential"><steps>
            <call template="pair"><arg>1</arg><arg>2</arg><arg>3</arg></call>
          </steps></task>
        </library>""")
    assert check(path) == []
    assert (await run(path, task="main")).content == "1-2-3"


async def test_a_key_shared_by_several_tasks_is_ambiguous_in_both(tmp_path):
    write(tmp_path, "lib.task.xml", """
        <library>
          <task name="one" subtype="standard"><description>one</description></task>
          <task name="two" subtype="standard"><description>two</description></task>
        </library>""")
    path = write(tmp_path, "t.task.xml", '<task type="sequential" name="t"><steps><task ref="atomic:standard"/></steps></task>')
    message = await agree_on_error(path, "TD501")
    assert message == "the key 'atomic:standard' matches 2 definitions (one, two): ref one of them by name"


async def test_did_you_mean_never_offers_the_enclosing_task(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <library>
          <template name="report" params="x"><task type="sequential"><steps>
            <call template="reportt"><arg>{{x}}</arg></call>
          </steps></task></template>
        </library>""")
    found = [c for c in check(path) if c[0] == "TD501"]
    assert found == [("TD501", "error", "'reportt' is not a task or template in the library")]
    assert await refusal(path, task="report", inputs={"x": "1"}) == ("TD501", found[0][2])


# ---------------------------------------------------------------- models

async def test_only_the_builtin_models_exist_under_taskdsl(tmp_path):
    path = write(tmp_path, "t.task.xml", "<task><description>d</description><model>taskdsl/echoo</model></task>")
    message = await agree_on_error(path, "TD601", model=None)
    assert message == "model 'taskdsl/echoo' is not one of taskdsl's offline models: did you mean 'taskdsl/echo'?"
    path = write(tmp_path, "t.task.xml", "<task><description>d</description><model/></task>")
    await agree_on_error(path, "TD105", model=None)


# ---------------------------------------------------------------- cond tests

@pytest.mark.parametrize("test", ["output.a = = 1", "output.a === 1", "(output.a == 1"])
async def test_a_test_that_does_not_parse_is_td701_in_both(tmp_path, test):
    path = write(tmp_path, "t.task.xml", f"""
        <task type="sequential" name="t"><steps>
          <task type="script"><command>echo '{{}}'</command><output_format type="json"/></task>
          <cond><case test="{test}"><task type="script"><command>echo x</command></task></case></cond>
        </steps></task>""")
    found, _ = await refusal(path)
    assert found == "TD701"
    assert [c[0] for c in check(path) if c[1] == "error"] == ["TD701"]


def test_a_test_that_parses_but_uses_what_the_language_lacks_is_td702(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t"><steps>
          <task type="script"><command>echo '{}'</command><output_format type="json"/></task>
          <cond><case test="foo == 1"><task type="script"><command>echo x</command></task></case></cond>
        </steps></task>""")
    assert [c[0] for c in check(path) if c[1] == "error"] == ["TD702"]


# ---------------------------------------------------------------- one diagnostic per mistake

def test_a_script_never_gets_td302(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="script"><command>date</command>
          <context_management><inherit_context>none</inherit_context></context_management></task>""")
    assert check(path) == []


def test_legacy_function_form_in_a_library_is_one_diagnostic(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <library>
          <task name="validate" parameters="data,rules"><description>Validate {{data}} with {{rules}}</description></task>
        </library>""")
    assert [c[0] for c in check(path)] == ["TD210"]


def test_a_typo_in_a_default_is_one_diagnostic(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t"><steps>
          <task type="script"><command>echo '{}'</command><output_format type="json"/></task>
          <cond>
            <case test="output.ok"><task type="script"><command>echo a</command></task></case>
            <default><tsk><description>c</description></tsk></default>
          </cond>
        </steps></task>""")
    assert [c[0] for c in check(path)] == ["TD101"]


def test_the_cli_run_refuses_what_check_reports(tmp_path, capsys):
    path = write(tmp_path, "t.task.xml", "<task><description>{{last_output}}</description></task>")
    assert main(["run", path, "--model", "taskdsl/echo"]) == 2
    err = capsys.readouterr().err
    assert "error TD402 {{last_output}} names nothing here" in err


async def test_an_empty_input_of_a_reduction_task_must_be_one_the_operator_binds(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="reduce" name="t">
          <inputs><input name="one">1</input></inputs>
          <inner_task type="script"><command>echo x</command></inner_task>
          <reduction_task type="script"><command>echo "$TASKDSL_INPUT_ACC"</command>
            <inputs><input name="acc"/></inputs></reduction_task>
        </task>""")
    message = await agree_on_error(path, "TD202")
    assert message.startswith("the empty input 'acc' of <reduction_task> is bound by nothing")


async def test_an_empty_input_of_a_nested_task_is_the_empty_text(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <task type="sequential" name="t"><steps>
          <task type="script"><command>printf '[%s]' "$TASKDSL_INPUT_NOTE"</command><inputs><input name="note"/></inputs></task>
        </steps></task>""")
    assert check(path) == []
    assert (await run(path)).content == "[]"


def test_formatting_writes_enumerations_collapsed():
    from taskdsl.language.document import parse
    from taskdsl.features.formatting import value_edits

    text = '<task type=" sequential "><steps><task type="script"><command fail_on_error="\n false">x</command></task></steps></task>'
    edits = value_edits(parse(text))
    assert [(text[s.start:s.end], new) for s, new in edits] == [(" sequential ", "sequential"), ("\n false", "false")]
    assert value_edits(parse('<task type="sequentail"><description>x</description></task>')) == []  # not a value: left alone


async def test_a_from_nothing_can_bind_is_refused_by_both(tmp_path):
    path = write(tmp_path, "t.task.xml", """
        <template name="t" params="text">
          <task type="script"><command>echo "$TASKDSL_INPUT_X"</command>
            <inputs><input name="x" from="txt"/></inputs></task>
        </template>""")
    message = await agree_on_error(path, "TD403", inputs={"text": "a"})
    assert message == "from=\"txt\" names nothing visible here (visible: text); did you mean 'text'?"
