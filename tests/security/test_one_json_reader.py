"""JSON taskdsl did not write itself is read by one function, taskdsl.support.jsontext.loads: nesting too deep for
Python's decoder (which raises RecursionError, not a ValueError) is invalid JSON there like any other. Before, a
model's answer of `[` 5,000 times ended `taskdsl run` and `taskdsl test` with a traceback (a test run reported no
test at all), and so did `--inputs` and a `--data` row of that shape. An AST scan holds every module to it."""

import ast
import json
import os
import subprocess
import sys

import pytest

from paths import REPO

PACKAGE = REPO / "server" / "taskdsl"
READER = PACKAGE / "support" / "jsontext.py"
#: "path" → why its json.loads reads only what taskdsl itself wrote
REVIEWED = {
    "features/run_result.py": "a copy of a value taskdsl built, made JSON-safe (json.loads(json.dumps(…)))",
    "language/templating.py": "one string literal of a placeholder, its escapes decoded (no nesting)",
    "language/grammar_tables.py": "the package's own grammar tables",
    "language/models.py": "the package's own copy of litellm's model table",
}
DEEP = "[" * 5_000 + "]" * 5_000


def loads_calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("loads", "load") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "json":
            yield node.lineno


def test_no_module_but_the_json_reader_decodes_json():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE))
        if path == READER or relative in REVIEWED:
            continue
        found += [f"{relative}:{line}" for line in loads_calls(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "decode with taskdsl.support.jsontext.loads instead:\n" + "\n".join(found)
    assert list(loads_calls(ast.parse("json.loads(t)\njson.load(f)\nx.loads(t)\n"))) == [1, 2]


def test_too_deep_is_invalid_json():
    from taskdsl.support import jsontext

    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        jsontext.loads(DEEP)
    assert jsontext.loads("[[1]]") == [[1]]


def cli(folder, *args, env=None):
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    done = subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          env={**environment, **(env or {})}, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done


TASK = """<task name="t">
  <description>Give JSON</description>
  <output_format type="json"/>
  <disable_reparsing>true</disable_reparsing>
</task>
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "t.task.xml").write_text(TASK)
    (tmp_path / "t.replay.json").write_text(json.dumps({"answers": [{"answer": DEEP}]}))
    return tmp_path


def test_a_model_answer_nested_too_deeply_fails_the_task_not_the_command(project):
    done = cli(project, "run", "t.task.xml", "--model", "taskdsl/replay", "--json",
               env={"TASKDSL_REPLAY_FILE": str(project / "t.replay.json")})
    # a JSON output without a schema that does not parse is kept as text, with a warning (as any invalid JSON)
    assert done.returncode == 0
    assert json.loads(done.stdout)["content"] == DEEP
    assert "output is not valid JSON: nested too deeply" in done.stderr


def test_taskdsl_test_reports_the_test_an_answer_nested_too_deeply_fails(project):
    (project / "t.test.xml").write_text('<tests><test name="deep" task="t" model="taskdsl/replay">'
                                        '<expect test="len(output) == 0"/></test></tests>')
    done = cli(project, "test")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "FAIL t.test.xml::deep"
    assert done.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_inputs_and_rows_nested_too_deeply_are_refused_with_a_message(project):
    (project / "deep.json").write_text('{"x": ' + DEEP + "}")
    done = cli(project, "run", "t.task.xml", "--inputs", "deep.json", "--model", "taskdsl/echo")
    assert done.returncode == 2 and "nested too deeply" in done.stderr
    (project / "rows.jsonl").write_text('{"x": ' + DEEP + "}\n")
    done = cli(project, "run", "t.task.xml", "--data", "rows.jsonl", "--model", "taskdsl/echo")
    assert done.returncode == 2 and "rows.jsonl:1: not valid JSON: nested too deeply" in done.stderr


def test_an_answer_nested_under_the_decoders_limit_but_past_ours_is_text_and_test_reports_it(project):
    """950 levels: Python's decoder takes it, but comparing it (`output == output`) recursed past the
    stack; past jsontext.MAX_DEPTH it is not JSON, so the test fails on a text, with no traceback."""
    from taskdsl.support.jsontext import MAX_DEPTH

    nested = "[" * 950 + "]" * 950
    (project / "t.replay.json").write_text(json.dumps({"answers": [{"answer": nested}]}))
    (project / "t.test.xml").write_text('<tests><test name="deep" task="t" model="taskdsl/replay">'
                                        '<expect test="output == output"/></test></tests>')
    done = cli(project, "test")
    assert done.stdout.splitlines()[-1] == "1 passed, 0 failed"  # a text equals itself
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    from taskdsl.support import jsontext

    assert jsontext.depth(jsontext.loads(at_limit)) == MAX_DEPTH
    with pytest.raises(json.JSONDecodeError, match=f"more than {MAX_DEPTH} levels"):
        jsontext.loads("[" + at_limit + "]")
    assert jsontext.loads("[" + "[]," * 300 + "[]]") == [[]] * 301  # wide, not deep
