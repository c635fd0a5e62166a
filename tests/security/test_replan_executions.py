"""A re-planned structure may start a command of the plan only as the plan started it: the same
script after substitution, the same variables (TASKDSL_SUB_<n> and TASKDSL_INPUT_<NAME>), the same
standard input and the same folder. Through the real command line with the offline replay model,
whose recorded answers play the model: a step fails, and the "model" proposes a planned command
with something of its own in one of those channels."""

import json
import os
import subprocess
import sys

import pytest

FAILING = '''    <task name="sum">
      <description>Summarise a text</description>
      <instructions>Summarise this: hello</instructions>
      <output_format type="json" schema="object"/>
    </task>'''
# the failing step answers twice with no JSON (the retry, then the re-planning); the reparse
# model's answer is the structure
REPARSE = "This task failed when it ran"


def answers(structure, *extra):
    return [{"contains": ["Your answer cannot be used"], "answer": "still not json"},
            {"contains": [REPARSE], "answer": structure},
            *extra,
            {"contains": ["Summarise this"], "answer": "not json at all"}]


def run(folder, task, answers_):
    (folder / "taskdsl.toml").write_text("", encoding="utf-8")
    (folder / "main.task.xml").write_text(task, encoding="utf-8")
    (folder / "main.replay.json").write_text(json.dumps({"context_window": 5000, "answers": answers_}),
                                             encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    env["TASKDSL_REPLAY_FILE"] = str(folder / "main.replay.json")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "main.task.xml", "--model", "taskdsl/replay",
                           "--json"], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return done, json.loads(done.stdout)


def refused(done, report):
    """The run failed, and the re-planning was refused for the execution it would have started."""
    assert done.returncode == 1, done.stderr
    assert "the re-planned structure runs" in done.stdout
    assert "values, standard input or folder the run's plan did not run it with" in done.stdout


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_the_attackers_case_an_input_variable_of_the_model_s_choosing(project):
    outside = project.parent / "ESCAPED"
    task = f'''<task type="sequential" name="main">
  <description>Make a scratch file, then summarise</description>
  <steps>
    <task type="script" name="mk">
      <description>make the scratch file</description>
      <inputs><input name="target">scratch.txt</input></inputs>
      <command>touch "$TASKDSL_INPUT_TARGET"</command>
    </task>
{FAILING}
  </steps>
</task>
'''
    structure = ('<task type="script"><description>make the scratch file</description>'
                 f'<inputs><input name="target">{outside}</input></inputs>'
                 '<command>touch "$TASKDSL_INPUT_TARGET"</command></task>')
    done, report = run(project, task, answers(structure))
    assert (project / "scratch.txt").exists()  # the plan's own run of the command
    assert not outside.exists()
    refused(done, report)


def test_the_same_input_variable_is_run_again(project):
    """What the plan ran, the structure may run again: the same script, variables, input and folder."""
    task = '''<task type="sequential" name="main">
  <description>Make a scratch file, then summarise</description>
  <steps>
    <task type="script" name="mk">
      <description>make the scratch file</description>
      <inputs><input name="target">scratch.txt</input></inputs>
      <command>echo made >> "$TASKDSL_INPUT_TARGET"</command>
    </task>
''' + FAILING + '''
  </steps>
</task>
'''
    structure = ('<task type="script"><description>make the scratch file</description>'
                 '<inputs><input name="target">scratch.txt</input></inputs>'
                 '<command>echo made >> "$TASKDSL_INPUT_TARGET"</command></task>')
    done, report = run(project, task, answers(structure))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "scratch.txt").read_text(encoding="utf-8") == "made\nmade\n"


def test_a_substituted_value_of_the_model_s_choosing(project):
    outside = project.parent / "ESCAPED"
    task = '''<task type="sequential" name="main">
  <description>Make a scratch file, then summarise</description>
  <inputs><input name="target">scratch.txt</input></inputs>
  <steps>
    <task type="script"><command>touch {{target}}</command></task>
''' + FAILING + '''
  </steps>
</task>
'''
    structure = (f'<task type="script"><inputs><input name="target">{outside}</input></inputs>'
                 '<command>touch {{target}}</command></task>')
    done, report = run(project, task, answers(structure))
    assert (project / "scratch.txt").exists()
    assert not outside.exists()
    refused(done, report)


def test_a_standard_input_of_the_model_s_choosing(project):
    """The plan fed `cat >> log.txt` the text "planned"; the structure feeds it an answer of its own."""
    task = '''<task type="sequential" name="main">
  <description>Log a line, then summarise</description>
  <steps>
    <task type="script"><command>printf planned</command></task>
    <task type="script"><command>cat >> log.txt</command></task>
''' + FAILING + '''
  </steps>
</task>
'''
    structure = ('<task type="sequential"><description>Log a word</description><steps>'
                 '<task name="word"><instructions>Say a word</instructions></task>'
                 '<task type="script"><command>cat >> log.txt</command></task>'
                 '</steps></task>')
    done, report = run(project, task, answers(structure, {"contains": ["Say a word"], "answer": "chosen by the model"}))
    assert (project / "log.txt").read_text(encoding="utf-8") == "planned"
    refused(done, report)


def test_a_folder_of_the_model_s_choosing(project):
    """The plan ran `touch made.txt` in the project's folder; the structure names a library template
    with the same command in another folder."""
    (project / "elsewhere").mkdir()
    (project / "elsewhere" / "lib.task.xml").write_text(
        '<library><template name="maker"><task type="script"><description>make it</description>'
        '<command>touch made.txt</command></task></template></library>\n', encoding="utf-8")
    task = '''<task type="sequential" name="main">
  <description>Make a file, then summarise</description>
  <steps>
    <task type="script"><command>touch made.txt</command></task>
''' + FAILING + '''
  </steps>
</task>
'''
    done, report = run(project, task, answers('<task ref="maker"/>'))
    assert (project / "made.txt").exists()
    assert not (project / "elsewhere" / "made.txt").exists()
    refused(done, report)
