"""The plan a run asks consent for: what it shows, when it is asked, the digest that pins it, and
`taskdsl run --plan` printing the same text without running anything."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from taskdsl.evaluator import cost
from taskdsl.evaluator import consent
from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT
from taskdsl.evaluator.plan import prepare
from taskdsl.evaluator.runner import prepare_file
from taskdsl.language.models import prices

PIPELINE = """\
<task type="sequential" name="pipeline">
  <description>Write and shout</description>
  <inputs>
    <input name="topic"/>
    <input name="api_key"/>
  </inputs>
  <steps>
    <task>
      <description>Write a haiku about {{topic}}</description>
      <model>gpt-4o</model>
      <file_paths><path>notes.md</path><path>../shared.md</path></file_paths>
    </task>
    <task type="script">
      <description>Shout it</description>
      <command>echo {{topic}} | tr a-z A-Z &gt; shout.marker</command>
    </task>
  </steps>
</task>
"""

ECHO_ONLY = """\
<task name="hello">
  <description>Say hello to {{who}}</description>
  <inputs>
    <input name="who">Ada</input>
  </inputs>
  <file_paths><path>notes.md</path></file_paths>
</task>
"""


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def view_of(path, inputs=None, model=None, default="taskdsl/echo", task=None):
    return consent.plan_view(prepare(None, path, task, inputs), default, model)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "shared.md").write_text("shared")
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "notes.md").write_text("notes")
    return folder


def test_the_plan_shows_commands_as_they_run_models_cost_files_and_masked_inputs(project, monkeypatch):
    monkeypatch.setenv("SOME_TOKEN", "s3cr3t-value-1234")
    path = write(project, "p.task.xml", PIPELINE)
    view = view_of(path, {"topic": "rain s3cr3t-value-1234", "api_key": "sk-not-shown-at-all"})
    cost_in, cost_out = prices("gpt-4o")
    prompt = BASE_SYSTEM_PROMPT + "Write a haiku about {{topic}}"
    expected = cost.prompt_tokens(prompt) * cost_in + cost.ANSWER_TOKENS * cost_out
    assert view.estimate == pytest.approx(expected)
    assert consent.render_plan(view, consent.reasons(view)) == "\n".join([
        "Running 'pipeline' (p.task.xml) will:",
        f"  run this shell command in {os.path.realpath(project)}:",
        '    $ echo "${TASKDSL_SUB_1}" | tr a-z A-Z > shout.marker',
        "        TASKDSL_SUB_1 = the value of {{topic}}",
        "  call gpt-4o (priced)",
        f"    estimated cost: about ${expected:.4f} or more",
        "  read these files:",
        "    notes.md",
        f"    {os.path.realpath(project.parent / 'shared.md')} (refused when it runs: outside the project; --allow-read "
        "lets it)",
        "    (at most 1,000 files and 50,000,000 bytes in all)",
        "  with the inputs:",
        "    api_key = ***",
        "    topic = rain ***",
        "Asked because it executes shell commands, it calls a model that may cost money and it reads files "
        "outside the template's folder.",
        f"Plan {view.digest[:consent.PLAN_DIGITS]}",
    ])


def test_an_unpriced_model_and_files_known_only_at_run_time_are_said_so(project):
    path = write(project, "u.task.xml", """\
        <task name="u">
          <description>Summarise</description>
          <model>openai/my-local-model</model>
          <file_paths><path>{{which}}.md</path></file_paths>
        </task>
        """)
    view = view_of(path)
    text = consent.render_plan(view, consent.reasons(view))
    assert "  call openai/my-local-model (price unknown)\n" in text
    assert "    estimated cost: about $0.0000 or more, plus what openai/my-local-model costs\n" in text
    assert "    {{which}}.md (known when it runs)\n" in text
    assert consent.reasons(view) == ["cost", "files"]


def test_offline_models_and_files_in_the_template_folder_need_no_question(project):
    path = write(project, "hello.task.xml", ECHO_ONLY)
    view = view_of(path)
    assert consent.reasons(view) == []
    assert consent.render_plan(view).splitlines()[1:4] == ["  call taskdsl/echo (free)", "  read these files:",
                                                           "    notes.md"]
    # the same template with a priced model (the run's override) asks
    assert consent.reasons(view_of(path, model="gpt-4o")) == ["cost"]


def test_scripts_ask_unless_the_user_allows_scripts(project):
    path = write(project, "s.task.xml", """\
        <task type="script" name="s">
          <description>Mark</description>
          <command>touch s.marker</command>
        </task>
        """)
    view = view_of(path)
    assert consent.reasons(view) == ["scripts"]
    assert consent.reasons(view, allow_scripts=True) == []


def test_the_digest_pins_the_entry_the_files_it_reaches_the_inputs_and_the_models(project):
    lib = write(project, "lib.task.xml", """\
        <library>
          <template name="mark" params="x">
            <task type="script"><description>Mark</description><command>touch {{x}}.marker</command></task>
          </template>
        </library>
        """)
    entry = write(project, "main.task.xml", """\
        <call template="mark"><arg>a</arg></call>
        """)
    def digest(inputs=None, model=None, text=None):
        return consent.plan_view(prepare_file(entry, None, inputs, text=text), "taskdsl/echo", model).digest

    first = digest()
    assert digest() == first  # the same plan, the same digest
    assert len(first) == 64
    assert digest(text='<call template="mark"><arg>b</arg></call>\n') != first
    assert digest(inputs={"extra": "1"}) != first
    original = open(lib).read()
    with open(lib, "w") as f:  # a library file the entry reaches changes on disk
        f.write(original.replace("<description>Mark</description>", "<description>Mark it</description>"))
    assert digest() != first
    with open(lib, "w") as f:
        f.write(original)
    assert digest() == first


def test_run_plan_prints_the_plan_and_runs_nothing(project):
    path = write(project, "p.task.xml", PIPELINE)
    inputs = {"topic": "rain", "api_key": "sk-not-shown-at-all"}
    expected = consent.render_plan(consent.plan_view(prepare_file(path, None, inputs), "taskdsl/echo", None))
    args = ["--input", "topic=rain", "--input", "api_key=sk-not-shown-at-all"]
    for flag in ("--plan", "--dry-run"):
        done = subprocess.run([sys.executable, "-m", "taskdsl", "run", flag, path, *args], capture_output=True,
                              text=True, cwd=project, env={**os.environ, "TASKDSL_MODEL": "taskdsl/echo"})
        assert (done.returncode, done.stdout, done.stderr) == (0, expected + "\n", "")
    assert not (project / "shout.marker").exists()
    assert "sk-not-shown" not in expected


def test_run_plan_names_the_inputs_still_missing(project):
    path = write(project, "p.task.xml", PIPELINE)
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "--plan", path], capture_output=True, text=True,
                          cwd=project)
    assert done.returncode == 0
    assert "  once given the inputs: topic, api_key\n" in done.stdout


def test_the_plan_shows_control_characters_as_escapes(project, capsys, monkeypatch):
    # a CR or an ESC in what the plan shows would let a value overprint or redraw what really runs
    from taskdsl.cli.main import main
    view = consent.PlanView("cr", str(project / "cr.task.xml"), str(project),
                            (consent.PlannedCommand("touch gone\recho safe"),), (), 0.0, consent.ReadFiles(),
                            (("x", "a\x1b[2Jb\rc"),), ())
    text = consent.render_plan(view)
    assert "    $ touch gone\\recho safe\n" in text and "    x = a\\x1b[2Jb\\rc" in text
    path = write(project, "v.task.xml", """\
        <task type="script" name="v">
          <command>echo {{x}}</command>
          <inputs><input name="x">p</input></inputs>
        </task>
        """)
    monkeypatch.chdir(project)
    capsys.readouterr()
    main(["run", "--plan", path, "--input", "x=ok\x1b[2J\rhidden"])
    out = capsys.readouterr().out
    assert "    x = ok\\x1b[2J" in out and "\x1b" not in out and "\r" not in out
