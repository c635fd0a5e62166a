"""`taskdsl graph`: the run's task tree as Mermaid and DOT text, SVG only with Graphviz."""

import shutil

import pytest

from evaluator_helpers import write
from taskdsl.cli.main import main
from tests.paths import REPO, need

LIB = """<library>
  <template name="shout" params="text">
    <task type="script"><command>printf '%s' {{text}} | tr a-z A-Z</command></task>
  </template>
</library>
"""

FLOW = """<task type="sequential" name="flow">
  <inputs><input name="topic">rain</input></inputs>
  <steps>
    <task name="write"><instructions>Write about {{topic}}</instructions><output_format type="json"/></task>
    <cond>
      <case test="output.ok == true"><call template="shout"><arg>last_output</arg></call></case>
      <default><call template="shout"><arg>"no"</arg></call></default>
    </cond>
  </steps>
</task>
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def flow(tmp_path):
    write(tmp_path, "lib.task.xml", LIB)
    return write(tmp_path, "flow.task.xml", FLOW)


def test_mermaid_draws_steps_cases_and_each_called_template_once(flow, capsys):
    code, out, err = run(capsys, "graph", flow)
    assert code == 0, err
    assert out == """flowchart TD
  n1["flow<br/>sequential"]
  n2["write<br/>atomic"]
  n3{"cond"}
  n4(["call shout"])
  n5[["template shout(text)"]]
  n6["shout<br/>script: printf '%s' {{text}} #124; tr a-z A-Z"]
  n7(["call shout"])
  n1 -->|"1"| n2
  n5 --> n6
  n4 -.-> n5
  n3 -->|"output.ok == true"| n4
  n7 -.-> n5
  n3 -->|"default"| n7
  n1 -->|"2"| n3
"""


def test_dot_is_the_same_graph(flow, capsys):
    code, out, _ = run(capsys, "graph", flow, "--format", "dot")
    assert code == 0
    assert out.splitlines()[:4] == ["digraph taskdsl {", "  node [shape=box, fontname=Helvetica];",
                                    '  n1 [label="flow\\nsequential", shape=box];',
                                    '  n2 [label="write\\natomic", shape=box];']
    assert '  n3 [label="cond", shape=diamond];' in out
    assert '  n4 -> n5 [style=dashed];' in out and '  n3 -> n4 [label="output.ok == true"];' in out
    assert out.endswith("}\n")


def test_a_reduce_shows_its_inner_and_reduction_tasks(capsys):
    code, out, _ = run(capsys, "graph", str(REPO / "examples" / "word_count.task.xml"))
    assert code == 0
    assert "  n1 -->|\"inner_task\"| n2\n" in out and "  n1 -->|\"reduction_task\"| n3\n" in out


def test_svg_without_graphviz_says_what_to_install(flow, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "")
    code, out, err = run(capsys, "graph", flow, "--format", "svg")
    assert (code, out) == (2, "")
    assert "taskdsl graph: --format svg needs Graphviz's `dot` program on PATH: install Graphviz" in err


def test_svg_with_graphviz(flow, capsys):
    need(shutil.which("dot") is not None, "Graphviz's dot")
    code, out, _ = run(capsys, "graph", flow, "--format", "svg")
    assert code == 0 and "<svg" in out


def test_a_library_needs_a_task_and_a_broken_file_is_exit_2(tmp_path, capsys):
    path = write(tmp_path, "lib.task.xml", LIB)
    code, _, err = run(capsys, "graph", path)
    assert code == 2 and "a library file holds several tasks: choose one with --task (shout)" in err
    code, out, _ = run(capsys, "graph", path, "--task", "shout")
    assert code == 0 and out.startswith('flowchart TD\n  n1[["template shout(text)"]]')
    bad = write(tmp_path, "bad.task.xml", "<task><description>x</description><steps/></task>")
    code, _, err = run(capsys, "graph", bad)
    assert code == 2 and "does not check" in err


def test_a_run_from_run_json_is_drawn_on_the_picture(flow, tmp_path, capsys):
    code, printed, _ = run(capsys, "run", flow, "--json", "--model", "taskdsl/echo")
    (tmp_path / "run.json").write_text(printed, encoding="utf-8")
    code, out, err = run(capsys, "graph", flow, "--run", str(tmp_path / "run.json"))
    assert (code, err) == (0, "")
    # the echo model's answer is not the JSON the step's output_format asks for: degraded, and the
    # cond that reads it failed, so neither call of shout ran
    assert '  n2["write<br/>atomic<br/>⚠ degraded ' in out and "  style n2 fill:#ffe0b2\n" in out
    assert '  n3{"cond<br/>✗ error ' in out and '  n6["shout<br/>script: ' in out and 'not run"]' in out


@pytest.mark.parametrize(("content", "message"), [
    (None, "No such file or directory"),
    ("{not json", "not JSON (Expecting property name"),
    ('{"status": "COMPLETE"}', 'not the output of `taskdsl run --json` (no "steps" list)'),
    ('{"steps": [1, 2]}', 'not the output of `taskdsl run --json` (no "steps" list)'),
])
def test_a_run_file_that_is_not_a_run_is_exit_2(flow, tmp_path, capsys, content, message):
    target = tmp_path / "run.json"
    if content is not None:
        target.write_text(content, encoding="utf-8")
    code, out, err = run(capsys, "graph", flow, "--run", str(target))
    assert (code, out) == (2, "")
    assert err.startswith(f"taskdsl graph: --run {target}: {message}"), err


def test_steps_of_another_template_are_named_on_stderr(flow, tmp_path, capsys):
    (tmp_path / "run.json").write_text('{"steps": [{"path": "flow/steps[9]", "status": "COMPLETE"}]}', encoding="utf-8")
    code, _, err = run(capsys, "graph", flow, "--run", str(tmp_path / "run.json"))
    assert code == 0
    assert err == ("taskdsl graph: 1 step(s) of the run are not in the picture (the template changed since the run?): "
                   "flow/steps[9]\n")


def test_a_run_of_another_task_is_refused_naming_both(flow, tmp_path, capsys):
    """Colouring a picture with another task's run would show steps as done that never ran."""
    (tmp_path / "run.json").write_text('{"steps": [{"path": "triage", "status": "COMPLETE"}, '
                                       '{"path": "triage/steps[1]", "status": "COMPLETE"}]}', encoding="utf-8")
    code, out, err = run(capsys, "graph", flow, "--run", str(tmp_path / "run.json"))
    assert (code, out) == (2, "")
    assert err == (f"taskdsl graph: --run {tmp_path / 'run.json'} is a run of 'triage', not of 'flow': run this task "
                   "with --json, or draw the task that ran\n")
