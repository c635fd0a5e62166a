"""A run on the picture: every step a run of an example reports lands on the node of the same kind
that drew it (graph.node_for_step), and the picture says each step's status and time."""

import asyncio

import pytest

from evaluator_helpers import write
from taskdsl.authoring.graph import dot, mermaid, node_for_step, plan_graph, run_statuses, with_run
from taskdsl.evaluator import runner
from taskdsl.evaluator.handler import HandlerConfig
from taskdsl.evaluator.results import TaskError
from taskdsl.features.run_result import StepRecorder
from tests.paths import REPO

EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.task.xml"))


def run_steps(path: str, task: str | None = None, fails_with: tuple[str, str] | None = None) -> tuple:
    """(prepared, the run's step records) of a run of the file with the offline echo model. The
    run must complete, or fail with `fails_with` (type, reason): a failed run still reports its
    steps, and the picture shows the failure."""
    prepared = runner.prepare_file(path, task)
    recorder = StepRecorder()
    run = runner.execute(prepared, model="taskdsl/echo", on_event=recorder.on_event,
                         config=HandlerConfig(model="taskdsl/echo"))
    if fails_with is None:
        assert asyncio.run(run).content is not None
    else:
        with pytest.raises(TaskError) as failed:
            asyncio.run(run)
        assert (failed.value.type, failed.value.reason) == fails_with
    return prepared, recorder.steps


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_step_of_a_run_of_an_example_lands_on_its_node(path):
    prepared, steps = run_steps(str(path))
    graph = plan_graph(prepared.node, prepared.library)
    kinds = {node_id: kind for node_id, _, kind in graph.nodes}
    assert steps, "the run reported no step"
    for step in steps:
        node = node_for_step(graph, step.path)
        assert node is not None, step.path
        assert kinds[node] == step.kind, step.path
    runs, unmapped = run_statuses(graph, [s.to_json() for s in steps])
    assert unmapped == []
    assert sum(r.count for r in runs.values()) == len(steps)


def test_a_reduce_counts_each_item_on_its_inner_and_reduction_node():
    prepared, steps = run_steps(str(REPO / "examples" / "word_count.task.xml"))
    graph = plan_graph(prepared.node, prepared.library)
    runs, _ = run_statuses(graph, [s.to_json() for s in steps])
    inner = graph.routes[(graph.root, "inner_task")]
    reduction = graph.routes[(graph.root, "reduction_task")]
    assert (runs[inner].count, runs[inner].status) == (3, "COMPLETE")
    assert (runs[reduction].count, runs[reduction].status) == (3, "COMPLETE")


FLOW = """<task type="sequential" name="flow">
  <steps>
    <task type="script" name="broken"><command>echo not json</command><output_format type="json"/></task>
    <task type="script" name="fine"><command>echo '{"ok": true}'</command><output_format type="json"/></task>
    <cond>
      <case test="1 == 2"><call template="shout"><arg>"a"</arg></call></case>
      <default><call template="shout"><arg>"b"</arg></call></default>
    </cond>
    <task type="script" name="fails"><command>exit 3</command></task>
    <task type="script" name="never"><command>echo never</command></task>
  </steps>
</task>
"""

FLOW_FAILS = ("TASK_FAILURE", "subtask_failure")  # its step 4 exits 3

LIB = """<library>
  <template name="shout" params="text">
    <task type="script"><command>printf '%s' {{text}} | tr a-z A-Z</command></task>
  </template>
</library>
"""


def test_the_picture_says_ok_degraded_error_and_not_run(tmp_path):
    write(tmp_path, "lib.task.xml", LIB)
    prepared, steps = run_steps(write(tmp_path, "flow.task.xml", FLOW), fails_with=FLOW_FAILS)
    graph = plan_graph(prepared.node, prepared.library)
    runs, unmapped = run_statuses(graph, [s.to_json() for s in steps])
    assert unmapped == []
    drawn, colours = with_run(graph, runs)
    labels = {node_id: label for node_id, label, _ in drawn.nodes}

    def line(name: str) -> str:
        return next(label.split("\n")[-1] for label in labels.values() if label.startswith(name + "\n"))

    assert line("fine").startswith("✓ ok ")
    assert line("broken").startswith("⚠ degraded ")
    assert line("fails").startswith("✗ error ")
    assert line("never") == "not run"
    assert line("flow").startswith("✗ error ")
    # the called template ran once (through the default): its body says so, the call node stays plain
    shout_body = node_for_step(graph, "flow/steps[3]/default/call:shout")
    assert labels[shout_body].split("\n")[-1].startswith("✓ ok ")
    assert all(not label.endswith(("not run", " s")) for label in labels.values() if label.startswith("call "))
    fails = next(n for n, label in labels.items() if label.startswith("fails\n"))
    assert f'style=filled, fillcolor="#ffcdd2"' in dot(drawn, colours).split(f"  {fails} [")[1].split("\n")[0]
    assert f"  style {fails} fill:#ffcdd2\n" in mermaid(drawn, colours)


def test_steps_the_picture_does_not_have_are_listed_not_guessed(tmp_path):
    write(tmp_path, "lib.task.xml", LIB)
    prepared, _ = run_steps(write(tmp_path, "flow.task.xml", FLOW), fails_with=FLOW_FAILS)
    graph = plan_graph(prepared.node, prepared.library)
    steps = [{"path": "flow/steps[9]", "status": "COMPLETE", "duration_s": 1},
             {"path": "flow/steps[1]", "status": "<script>", "duration_s": 1},
             {"path": 7, "status": "COMPLETE"},
             {"path": "flow/steps[2]/call:nowhere", "status": "COMPLETE"}]
    runs, unmapped = run_statuses(graph, steps)
    assert runs == {}
    assert unmapped == ["flow/steps[9]", "flow/steps[1]", "7", "flow/steps[2]/call:nowhere"]


def test_without_graphviz_the_editor_gets_the_dot_text_and_a_hint(tmp_path, monkeypatch):
    from taskdsl.lsp.graph import picture

    write(tmp_path, "lib.task.xml", LIB)
    prepared = runner.prepare_file(write(tmp_path, "flow.task.xml", FLOW))
    monkeypatch.setenv("PATH", "")
    fmt, text, hint = picture(plan_graph(prepared.node, prepared.library), "svg")
    assert fmt == "dot" and text.startswith("digraph taskdsl {")
    assert hint.startswith("This is the picture's Graphviz DOT text: install Graphviz")
