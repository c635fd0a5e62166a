"""`taskdsl graph` output parses for real: DOT with Graphviz's `dot -Tsvg`, Mermaid with Mermaid's
own parser (the `mermaid` npm package in node, tests/mermaid/parse.mjs), for every example and
every corpus template that graphs, and for a template whose labels hold every character the two
languages treat specially. Outside CI a missing `dot` or node package skips; under CI it fails
(scripts/install-e2e.sh installs both: the apt and mermaid steps)."""

import json
import shutil
import subprocess

import pytest

from tests.e2e.conftest import missing
from tests.paths import CORPUS, REPO

from taskdsl.authoring.graph import draw, plan_graph
from taskdsl.evaluator.compiler import CompileError
from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import prepare_file

MERMAID = REPO / "tests" / "mermaid"

HOSTILE = """<task type="sequential" name="odd">
  <steps>
    <task type="script"><output_format type="json"/><command>echo "#quot; &lt;i&gt; `t` \\\\ {y}" | tr a b</command></task>
    <cond>
      <case test='output.a == "-->" or output.b == "|x|" or "(" in output'>
        <task type="script"><command>echo '"quoted" #35; ;;'</command></task>
      </case>
      <default><task type="script"><command>echo "default"</command></task></default>
    </cond>
  </steps>
</task>
"""


def templates_that_graph() -> list:
    files = sorted((REPO / "examples").rglob("*.task.xml"))
    files += sorted(CORPUS.glob("*.xml")) if CORPUS.is_dir() else []
    drawn = []
    for path in files:
        try:
            prepared = prepare_file(str(path), None)
        except (OSError, UnreadableTemplate, TemplateErrors, CompileError, TaskError):
            continue  # does not check, or a library without a root task: `graph` refuses it with exit 2
        drawn.append((path, plan_graph(prepared.node, prepared.library)))
    return drawn


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "hostile.task.xml").write_text(HOSTILE, encoding="utf-8")
    drawn = templates_that_graph()
    hostile = prepare_file(str(folder / "hostile.task.xml"), None)
    return drawn + [(folder / "hostile.task.xml", plan_graph(hostile.node, hostile.library))]


def test_the_examples_and_the_corpus_give_graphs_to_parse(graphs):
    names = {path.name for path, _ in graphs}
    assert {"greet_pipeline.task.xml", "release_check.task.xml", "hostile.task.xml"} <= names
    if CORPUS.is_dir():
        assert sum(path.parent == CORPUS for path, _ in graphs) >= 30


def test_dot_output_parses_with_graphviz(graphs):
    program = shutil.which("dot")
    if program is None:
        missing("Graphviz's dot")
    failures = []
    for path, graph in graphs:
        done = subprocess.run([program, "-Tsvg"], input=draw(graph, "dot"), capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0 or "<svg" not in done.stdout:
            failures.append(f"{path.name}: {done.stderr.strip()}")
    assert failures == []


def test_mermaid_output_parses_with_mermaids_parser(graphs, tmp_path):
    node = shutil.which("node")
    if node is None or not (MERMAID / "node_modules" / "mermaid").is_dir():
        missing("node with the mermaid package (scripts/install-e2e.sh mermaid)")
    files = []
    for number, (path, graph) in enumerate(graphs):
        target = tmp_path / f"{number}-{path.stem}.mmd"
        target.write_text(draw(graph, "mermaid"), encoding="utf-8")
        files.append(str(target))
    done = subprocess.run([node, str(MERMAID / "parse.mjs"), *files], capture_output=True, text=True,
                          timeout=300, cwd=MERMAID)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(files), done.stderr
    assert [r for r in results if not r["ok"]] == []


def test_mermaid_parser_rejects_what_is_broken(tmp_path):
    """The parser check can fail: the unquoted edge label the graph code once wrote is refused."""
    node = shutil.which("node")
    if node is None or not (MERMAID / "node_modules" / "mermaid").is_dir():
        missing("node with the mermaid package (scripts/install-e2e.sh mermaid)")
    broken = tmp_path / "broken.mmd"
    broken.write_text('flowchart TD\n  n1["a"]\n  n2["b"]\n  n1 -->|len(x) > 1| n2\n', encoding="utf-8")
    done = subprocess.run([node, str(MERMAID / "parse.mjs"), str(broken)], capture_output=True, text=True,
                          timeout=120, cwd=MERMAID)
    assert json.loads(done.stdout.splitlines()[-1])["ok"] is False


def test_hostile_labels_keep_their_text(graphs):
    _, graph = graphs[-1]
    text = draw(graph, "mermaid")
    assert '  n3 -->|"output.a == #quot;--#gt;#quot; or output.b == #quot;#124;x#124;#quot; …"| n4\n' in text
    assert '  n2["steps[1]<br/>script: echo #quot;#35;quot; #lt;i#gt; #96;t#96; \\\\ {y}#quot; #124; tr a b"]\n' in text
