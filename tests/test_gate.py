"""The run's only gate is the checker (SPEC §17): `taskdsl run` refuses, before any step, with the
checker's own diagnostics over every file the entry reaches and the project's config; what the
checker passes the run does not refuse. Preflight: every model the plan calls is usable first.
Each test goes through the real command line (taskdsl.cli.main.main)."""

import os

import pytest

from evaluator_helpers import write
from taskdsl.cli.main import main

MARKER_STEP = '<task type="script"><description>mark</description><command>touch ran.marker</command></task>'


def project(tmp_path, files: dict[str, str], config: str = "") -> str:
    (tmp_path / "taskdsl.toml").write_text(config)
    for name, xml in files.items():
        write(tmp_path, name, xml)
    return str(tmp_path)


def check_lines(capsys, *paths) -> list[str]:
    main(["check", *paths])
    return [line for line in capsys.readouterr().out.splitlines() if " error TD" in line]


def run_refusal(capsys, *args) -> tuple[int, list[str], str]:
    code = main(["run", *args, "--model", "taskdsl/echo", "-q"])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if " error TD" in line], err


def test_an_error_in_a_called_library_file_refuses_the_run_before_any_step(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {
        "main.task.xml": f"""
            <task type="sequential" name="main"><description>main</description>
              <steps>{MARKER_STEP}<call template="greet"><arg name="who">you</arg></call></steps></task>""",
        "lib/greet.task.xml": """
            <template name="greet" params="who">
              <task><description>Greet {{who}} in {{language}}</description></task>
            </template>""",
    })
    expected = check_lines(capsys, ".")
    assert [line.split(": error ")[1].split(" ")[0] for line in expected] == ["TD402"]
    code, refused, err = run_refusal(capsys, "main.task.xml")
    assert code == 2
    assert refused == expected  # the checker's own lines: same file, place, code and message
    assert refused[0].startswith(os.path.join("lib", "greet.task.xml") + ":2:")
    assert "main.task.xml or a file it reaches does not check (1 error(s))" in err
    assert not (tmp_path / "ran.marker").exists()


def test_two_files_defining_a_called_name_refuse_the_run_with_td502(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    greet = """<template name="greet" params="who"><task><description>Hi {{who}}</description></task></template>"""
    project(tmp_path, {
        "main.task.xml": f"""
            <task type="sequential" name="main"><description>main</description>
              <steps>{MARKER_STEP}<call template="greet"><arg name="who">you</arg></call></steps></task>""",
        "a.task.xml": greet, "b.task.xml": greet,
    })
    expected = check_lines(capsys, ".")
    assert sorted(line.split(": error ")[1][:5] for line in expected) == ["TD502", "TD502"]
    code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert code == 2 and sorted(refused) == sorted(expected)
    assert not (tmp_path / "ran.marker").exists()


def test_an_error_in_the_config_refuses_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}</steps></task>"""},
            config='[run]\ntimeout = "soon"\n')
    code, refused, err = run_refusal(capsys, "main.task.xml")
    assert code == 2
    assert refused and refused[0].startswith("taskdsl.toml:2:") and " error TD902 " in refused[0]
    assert not (tmp_path / "ran.marker").exists()


def place(path, needle: str) -> str:
    "line:col (1-based) of the name of the last element opened with `needle` in the file."
    text = path.read_text()
    offset = text.rindex(needle) + 1
    return f"{text.count(chr(10), 0, offset) + 1}:{offset - text.rfind(chr(10), 0, offset)}"


@pytest.mark.parametrize("body, code", [
    ("<description>   </description>", "TD204"),
    ("<description/>", "TD204"),
    ("<description/><instructions>\n</instructions>", "TD204"),
])
def test_a_blank_prompt_is_td204_for_check_and_run_alike(tmp_path, capsys, monkeypatch, body, code):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}
          <task>
            {body}
          </task></steps></task>"""})
    expected = check_lines(capsys, "main.task.xml")
    where = place(tmp_path / "main.task.xml", "<description")
    assert len(expected) == 1 and expected[0].startswith(f"main.task.xml:{where}: error {code} ")
    exit_code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert exit_code == 2 and refused == expected
    assert not (tmp_path / "ran.marker").exists()


@pytest.mark.parametrize("command", ["<command/>", "<command>  \n </command>", "<command><!-- later --></command>"])
def test_a_blank_or_comment_only_command_is_td203_for_check_and_run_alike(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}
          <task type="script"><description>nothing</description>
            {command}
          </task></steps></task>"""})
    expected = check_lines(capsys, "main.task.xml")
    where = place(tmp_path / "main.task.xml", "<command")
    assert len(expected) == 1 and expected[0].startswith(f"main.task.xml:{where}: error TD203 <command> is empty")
    exit_code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert exit_code == 2 and refused == expected
    assert not (tmp_path / "ran.marker").exists()


def test_a_reduce_whose_inner_task_is_a_ref_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {
        "count.task.xml": """
            <task type="reduce" name="count">
              <description>Join the words</description>
              <initial_value>:</initial_value>
              <inputs><input name="a">one</input><input name="b">two</input></inputs>
              <inner_task ref="shout"><inputs><input name="word" from="current_data"/></inputs></inner_task>
              <reduction_task type="script"><description>append</description>
                <command>printf '%s+%s' "$TASKDSL_INPUT_ACCUMULATOR" "$TASKDSL_INPUT_CURRENT_RESULT"</command>
                <inputs><input name="current_result"/><input name="accumulator"/></inputs>
              </reduction_task>
            </task>""",
        "lib/shout.task.xml": """
            <template name="shout" params="word">
              <task type="script"><description>shout</description>
                <command>printf '%s' "$TASKDSL_INPUT_WORD" | tr a-z A-Z</command></task>
            </template>""",
    })
    assert check_lines(capsys, ".") == []
    assert main(["run", "count.task.xml", "-q"]) == 0
    assert capsys.readouterr().out == ":+ONE+TWO\n"


# ------------------------------------------------------------------------------ preflight

def two_steps(model_xml: str) -> str:
    return f"""
        <task type="sequential" name="main"><description>main</description>
          <steps>{MARKER_STEP}<task><description>Say hi</description>{model_xml}</task></steps></task>"""


def test_a_missing_api_key_is_refused_before_any_step(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    project(tmp_path, {"main.task.xml": two_steps("<model>gpt-4o-mini</model>")})
    assert main(["run", "main.task.xml", "-q"]) == 2
    err = capsys.readouterr().err
    assert "model 'gpt-4o-mini' needs credentials and none are set: export OPENAI_API_KEY=…" in err
    assert "--model taskdsl/replay" in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    assert not (tmp_path / "ran.marker").exists()


def test_a_missing_replay_fixture_is_refused_before_any_step(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", str(tmp_path / "answers.json"))
    project(tmp_path, {"main.task.xml": two_steps("<model>taskdsl/replay</model>")})
    assert main(["run", "main.task.xml", "-q"]) == 2
    err = capsys.readouterr().err
    assert "model 'taskdsl/replay': replay fixture" in err and "does not exist" in err
    assert "point TASKDSL_REPLAY_FILE at a fixture" in err
    assert not (tmp_path / "ran.marker").exists()


def test_no_replay_fixture_at_all_is_refused_naming_the_variable(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_REPLAY_FILE", raising=False)
    project(tmp_path, {"main.task.xml": two_steps("")})
    assert main(["run", "main.task.xml", "-q", "--model", "taskdsl/replay"]) == 2
    err = capsys.readouterr().err
    assert "export TASKDSL_REPLAY_FILE=answers.json" in err
    assert not (tmp_path / "ran.marker").exists()


def test_a_model_litellm_does_not_know_is_refused_before_any_step(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": two_steps("<model>no-such-provider-model-xyz</model>")})
    assert main(["run", "main.task.xml", "-q"]) == 2
    err = capsys.readouterr().err
    assert "model 'no-such-provider-model-xyz' is not known to litellm" in err
    assert not (tmp_path / "ran.marker").exists()


# ------------------------------------------------------------------------------ line ends

LINE_ENDS = ('<task type="sequential" name="main"><description>main</description>\n<steps>\n'
             '<task type="script"><description>s</description>'
             '<command>cat &lt;&lt;EOF\none\ntwo\nEOF\nprintf "%s|" "$TASKDSL_INPUT_WORD"</command>'
             '<inputs><input name="word">a\nb</input></inputs></task>\n'
             '<task><instructions>Say\n{{last_output}}\nnow</instructions></task>\n</steps></task>\n')


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_a_crlf_or_cr_file_runs_exactly_as_its_lf_twin(tmp_path, capsys, monkeypatch, newline):
    monkeypatch.chdir(tmp_path)
    for folder, text in (("lf", LINE_ENDS), ("crlf", LINE_ENDS.replace("\n", newline))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "taskdsl.toml").write_text("")
        (tmp_path / folder / "main.task.xml").write_bytes(text.encode())
    assert main(["check", "crlf/main.task.xml"]) == 0
    capsys.readouterr()
    assert main(["run", "lf/main.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    twin = capsys.readouterr().out
    assert main(["run", "crlf/main.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    out = capsys.readouterr().out
    assert "one\ntwo\na\nb|" in twin  # the here-document ended and the value kept its line end
    assert out == twin and "\r" not in out


# ------------------------------------------------------------------------------ nested projects

@pytest.mark.parametrize("marker, text", [("taskdsl.toml", ""), ("pyproject.toml", "[tool.taskdsl]\n")])
def test_a_sub_folder_with_its_own_config_is_a_project_of_its_own(tmp_path, capsys, monkeypatch, marker, text):
    monkeypatch.chdir(tmp_path)
    greet = '<template name="greet" params="who"><task><description>Hi {{who}}</description></task></template>'
    project(tmp_path, {"greet.task.xml": greet, "sub/greet.task.xml": greet,
                       "main.task.xml": '<call template="greet"><arg name="who">Ada</arg></call>'})
    (tmp_path / "sub" / marker).write_text(text)
    assert main(["check", "."]) == 0  # sub/ is not indexed into the parent: no TD502 across projects
    out, err = capsys.readouterr()
    assert "TD502" not in out and "in 2 files" in err
    assert main(["check", "sub"]) == 0  # and it checks as its own project
    capsys.readouterr()
    assert main(["run", "main.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    assert capsys.readouterr().out == "Hi Ada\n"
    (tmp_path / "sub" / marker).unlink()  # without its config it is a folder of the parent again
    assert main(["check", "."]) == 1
    assert "TD502" in capsys.readouterr().out


# ------------------------------------------------------------------------------ severities (§17)

def test_a_name_declared_nowhere_is_a_td402_error_and_the_run_refuses(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}
          <task><description>Tell {{{{x}}}}</description></task></steps></task>"""})
    expected = check_lines(capsys, "main.task.xml")
    assert [line.split(": ", 1)[1][:12] for line in expected] == ["error TD402 "]
    assert "{{x}} names nothing visible: nothing here declares it" in expected[0]
    code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert code == 2 and refused == expected
    code, refused, _ = run_refusal(capsys, "main.task.xml", "--input", "x=1")  # an undeclared --input supplies nothing
    assert code == 2 and refused == expected
    assert not (tmp_path / "ran.marker").exists()


def test_a_declared_global_supplies_the_name_and_an_undeclared_global_flag_is_a_usage_error(tmp_path, capsys,
                                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": "<task><description>Tell {{region}}</description></task>"},
            config='[globals]\nregion = "north"\n')
    assert check_lines(capsys, "main.task.xml") == []
    assert main(["run", "main.task.xml", "-q", "--model", "taskdsl/echo", "--global", "region=south"]) == 0
    assert capsys.readouterr().out == "Tell south\n"
    assert main(["run", "main.task.xml", "-q", "--model", "taskdsl/echo", "--global", "regoin=south"]) == 2
    assert capsys.readouterr().err == (
        "taskdsl run: --global regoin: not a declared global (the declared ones are region); declare it in the "
        "[globals] table of taskdsl.toml (regoin = \"default\"), or pass a task input with --input\n")


def test_an_unguarded_cycle_is_a_td504_error_and_the_run_refuses_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{MARKER_STEP}
          <task ref="loop"/></steps></task>""",
                       "lib.task.xml": '<template name="loop" params=""><task ref="loop"/></template>'})
    expected = check_lines(capsys, ".")
    assert len(expected) == 1 and " error TD504 reference cycle: loop → loop, with no <cond> on its path" in expected[0]
    code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert code == 2 and refused == expected
    assert not (tmp_path / "ran.marker").exists()


def test_a_guarded_cycle_stays_a_warning_and_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": """
        <template name="countdown" params="n">
          <task type="sequential"><description>count</description>
            <steps>
              <task type="script"><description>next</description>
                <command>n="$TASKDSL_INPUT_N"; if [ "$n" -gt 0 ]; then echo "{\\"n\\": $((n - 1))}"; else echo '{"n": 0}'; fi</command>
                <inputs><input name="n" from="n"/></inputs></task>
              <cond>
                <case test="output.n > 0"><call template="countdown"><arg>{{last_output.n}}</arg></call></case>
                <default><task type="script"><description>done</description><command>echo done</command></task></default>
              </cond>
            </steps>
          </task>
        </template>"""})
    main(["check", "main.task.xml"])
    out = capsys.readouterr().out
    assert " warning TD504 reference cycle: countdown → countdown (guarded by a <cond>)" in out and " error " not in out
    assert main(["run", "main.task.xml", "-q", "--input", "n=3"]) == 0
    assert capsys.readouterr().out == "done\n"


# ------------------------------------------------------------------------------ <input name="p"/> on a ref

SUMMARISE = """<template name="summarise" params="text">
  <task type="script"><description>sum</description><command>printf 'S:%s' {{text}}</command></task>
</template>"""


def test_an_empty_input_of_a_ref_takes_the_callers_variable_of_that_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"lib.task.xml": SUMMARISE, "main.task.xml": """
        <task type="sequential" name="main"><description>main</description>
          <inputs><input name="text">notes</input></inputs>
          <steps><task ref="summarise"><inputs><input name="text"/></inputs></task></steps></task>"""})
    assert check_lines(capsys, ".") == []
    assert main(["run", "main.task.xml", "-q"]) == 0
    assert capsys.readouterr().out == "S:notes\n"
    assert main(["render", "main.task.xml"]) == 0  # render takes the same form (it used to refuse TD503)
    capsys.readouterr()


def test_the_short_form_is_td403_when_the_caller_sees_no_such_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"lib.task.xml": SUMMARISE, "main.task.xml": """
        <task type="sequential" name="main"><description>main</description>
          <inputs><input name="txt">notes</input></inputs>
          <steps><task ref="summarise"><inputs><input name="text"/></inputs></task></steps></task>"""})
    expected = check_lines(capsys, ".")
    assert expected == ['main.task.xml:3:53: error TD403 <input name="text"/> (short for from="text") names nothing '
                        "visible here (visible: txt); did you mean 'txt'?"]
    code, refused, _ = run_refusal(capsys, "main.task.xml")
    assert code == 2 and refused == expected
    assert main(["check", "--fix", "--unsafe-fixes", "main.task.xml"]) == 0
    capsys.readouterr()
    assert '<input name="text" from="txt"/>' in (tmp_path / "main.task.xml").read_text()


# ------------------------------------------------------------------------------ defaults of called templates

JOIN = """<template name="join" params="a, sep">
  <task type="script"><description>join</description><command>printf '%s%s%s' {{a}} {{sep}} {{a}}</command>
    <inputs><input name="sep">-</input></inputs></task>
</template>"""


@pytest.mark.parametrize("step", [
    '<call template="join"><arg>x</arg></call>',  # a trailing positional left out
    '<call template="join"><arg name="a">x</arg></call>',  # named
    '<task ref="join"><inputs><input name="a">x</input></inputs></task>',  # a ref
    '<task><description>{{join("x")}}</description><model>taskdsl/echo</model></task>',  # an inline call
])
def test_a_template_param_with_a_literal_default_may_be_left_out(tmp_path, capsys, monkeypatch, step):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"lib.task.xml": JOIN, "main.task.xml": f"""
        <task type="sequential" name="main"><description>main</description><steps>{step}</steps></task>"""})
    assert check_lines(capsys, ".") == []
    assert main(["run", "main.task.xml", "-q", "--model", "taskdsl/echo"]) == 0
    assert capsys.readouterr().out.startswith("x-x")


def test_an_inputs_nested_task_never_sees_a_sibling_input_whatever_supplies_it(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"main.task.xml": """
        <task type="script" name="m"><description>m</description>
          <command>echo {{b}}</command>
          <inputs>
            <input name="a">one</input>
            <input name="b"><task type="script"><description>n</description><command>echo {{a}}</command></task></input>
          </inputs>
        </task>"""})
    expected = check_lines(capsys, "main.task.xml")
    assert [line.split(": ", 1)[1][:12] for line in expected] == ["error TD402 "]
    for given in ([], ["--input", "a=two"]):  # its literal default or an --input: the same answer
        code, refused, _ = run_refusal(capsys, "main.task.xml", *given)
        assert code == 2 and refused == expected


# ------------------------------------------------------------------------------ echo cannot write tasks

@pytest.mark.parametrize("extra", [[], ["--dry-run"]])
def test_ask_with_the_echo_model_is_refused_at_once_in_one_sentence(tmp_path, capsys, monkeypatch, extra):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    project(tmp_path, {"main.task.xml": "<task><description>Say hi</description></task>"})
    assert main(["ask", "write a haiku about autumn leaves", *extra]) == 2  # the default model is taskdsl/echo
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("taskdsl ask: the model taskdsl/echo repeats its prompt and cannot write a task: ask with a model "
                   "(--model gpt-4o-mini, say) or write the template yourself\n")


def test_the_binding_fix_writes_the_short_form_only_for_a_name_the_caller_sees_and_the_result_runs(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    caller = """
        <task type="sequential" name="main"><description>main</description>
          <inputs><input name="{name}">notes</input></inputs>
          <steps><task ref="summarise"/></steps></task>"""
    project(tmp_path, {"lib.task.xml": SUMMARISE, "main.task.xml": caller.format(name="text")})
    assert main(["check", "--fix", "--unsafe-fixes", "main.task.xml"]) == 0
    capsys.readouterr()
    assert '<task ref="summarise"><inputs><input name="text"/></inputs></task>' in (tmp_path / "main.task.xml").read_text()
    assert main(["run", "main.task.xml", "-q"]) == 0
    assert capsys.readouterr().out == "S:notes\n"
    (tmp_path / "main.task.xml").write_text(caller.format(name="other"))
    assert main(["check", "--fix", "--unsafe-fixes", "main.task.xml"]) == 1  # no fix that would not check
    out = capsys.readouterr().out
    assert "error TD503 ref to 'summarise' does not bind its parameter 'text'" in out and "fixed" not in out
