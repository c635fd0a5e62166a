"""The memory system through the real command line (a subprocess) and a real litellm model
(gpt-4o-mini) pointed at a loopback OpenAI-compatible server that answers from a script and records
every request (tests/test_evaluator_models.py's FakeOpenAI). Nothing here mocks litellm.

- `memory index --model` writes one summary per file, owner-only, and reads and writes nothing
  outside the project;
- a task with fresh_context about "quarterly revenue" gets reports/q3.md in its prompt with the
  local matcher, and `render` prints exactly what the server receives;
- with the model matcher the server receives the ADR's structured request (three headings) and
  the index (metadata only); the paths it answers are the files read, and a path it invents
  outside the project (or outside the index) is refused and said so in the notes.
"""

import json
import os
import stat

from evaluator_helpers import taskdsl_async
from test_evaluator_models import SECRET as KEY  # the API key the loopback server is reached with
from test_evaluator_models import openai_server  # noqa: F401 (the loopback OpenAI-compatible server)

MODEL = "gpt-4o-mini"
Q3 = "# Quarter three\n\nRevenue rose to 4.2M; costs fell to 3.1M.\n"
HR = "# Holidays\n\nEvery employee has 25 days.\n"
SECRET = "TOP SECRET: the outside file's contents"
TASK = """<task name="revenue">
  <description>Write two sentences about the quarterly revenue</description>
  <context_management>
    <inherit_context>none</inherit_context>
    <fresh_context>enabled</fresh_context>
  </context_management>
</task>
"""
INDEX = {"reports/hr.md": "Holiday policy", "reports/q3.md": "Q3 revenue and costs"}


def project(tmp_path, toml="", index=None):
    """A project with two reports, a link to a file outside it, and (optionally) an index."""
    root = tmp_path / "project"
    (root / "reports").mkdir(parents=True)
    (root / "taskdsl.toml").write_text(toml, encoding="utf-8")
    (root / "reports" / "q3.md").write_text(Q3, encoding="utf-8")
    (root / "reports" / "hr.md").write_text(HR, encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET, encoding="utf-8")
    os.symlink(outside / "secret.md", root / "reports" / "leak.md")
    (root / "revenue.task.xml").write_text(TASK, encoding="utf-8")
    if index is not None:
        (root / ".taskdsl").mkdir()
        (root / ".taskdsl" / "memory.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    return root


def prompts(fake):
    return [{m["role"]: m["content"] for m in request["body"]["messages"]} for request in fake.requests]


async def test_memory_index_with_a_model_writes_one_summary_per_file_and_nothing_outside(tmp_path, openai_server):
    fake = await openai_server(script=[{"contains": "Summarise the file reports/q3.md", "answer": "Q3 revenue and costs"},
                                       {"contains": "Summarise the file reports/hr.md",
                                        "answer": f"- Holiday policy (ask {KEY})\n"}])
    root = project(tmp_path)
    before = sorted(os.listdir(tmp_path / "outside"))
    code, out, err = await taskdsl_async(root, "memory", "index", "--model", MODEL, "--quiet")
    assert code == 0, err
    index_file = root / ".taskdsl" / "memory.json"
    assert json.loads(index_file.read_text(encoding="utf-8")) == {  # the key the answer repeats is masked
        **INDEX, "reports/hr.md": "Holiday policy (ask ***)"}  # taskdsl.toml is taskdsl's own: not memory
    assert stat.S_IMODE(os.stat(index_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(root / ".taskdsl").st_mode) == 0o700
    sent = prompts(fake)
    assert len(sent) == 2  # one call per file with text (hr.md, q3.md); the link leading out: none
    assert sum("Quarter three" in p["system"] for p in sent) == 1 and sum("25 days" in p["system"] for p in sent) == 1
    assert not any(SECRET in p["system"] + p["user"] for p in sent)
    assert sorted(os.listdir(tmp_path / "outside")) == before
    assert sorted(os.listdir(tmp_path)) == ["outside", "project"]


async def test_a_fresh_context_task_gets_the_matching_report_and_render_equals_what_is_sent(tmp_path, openai_server):
    fake = await openai_server(script=[{"contains": "quarterly revenue", "answer": "Revenue rose."}])
    root = project(tmp_path, index=INDEX)
    code, out, err = await taskdsl_async(root, "run", "revenue.task.xml", "--model", MODEL, "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    assert report["notes"]["dataUsage"]["memory"] == ["reports/q3.md"]
    assert report["notes"]["memory"] == {"matcher": "local", "index": ".taskdsl/memory.json",
                                         "matches": ["reports/q3.md"]}
    (sent,) = prompts(fake)
    assert f'<file path="reports/q3.md">\n{Q3}\n</file>' in sent["system"]
    assert "- reports/q3.md: Q3 revenue and costs" in sent["system"]
    assert "25 days" not in sent["system"] and "Holiday" not in sent["system"]

    code, out, err = await taskdsl_async(root, "render", "revenue.task.xml", "--model", MODEL, "--json")
    assert code == 0, err
    (preview,) = json.loads(out)
    assert (preview["system"], preview["user"]) == (sent["system"], sent["user"])


MATCHER_ANSWER = json.dumps(["reports/q3.md", "../outside/secret.md", "reports/invented.md"])


async def test_the_model_matcher_gets_the_structured_request_and_the_index(tmp_path, openai_server):
    fake = await openai_server(script=[{"contains": "<task_text>", "answer": MATCHER_ANSWER},
                                       {"contains": "quarterly revenue", "answer": "Revenue rose."}])
    root = project(tmp_path, toml='[memory]\nmatcher = "model"\n', index=INDEX)
    code, out, err = await taskdsl_async(root, "run", "revenue.task.xml", "--model", MODEL, "--json", "--quiet")
    assert code == 0, err
    matcher, task = prompts(fake)
    request = matcher["user"]
    assert ("<previous_outputs>\n(none)\n</previous_outputs>\n<inherited_context>\n(none)\n</inherited_context>\n"
            "<task_text>\nWrite two sentences about the quarterly revenue\n</task_text>") in request
    assert "reports/hr.md: Holiday policy\nreports/q3.md: Q3 revenue and costs" in request
    assert "Quarter three" not in matcher["system"] + request  # metadata only, never contents

    report = json.loads(out)
    assert report["notes"]["dataUsage"]["memory"] == ["reports/q3.md"]  # what it answered, read
    assert f'<file path="reports/q3.md">\n{Q3}\n</file>' in task["system"]
    assert SECRET not in task["system"] and "25 days" not in task["system"]
    refused = report["notes"]["memory"]["refused"]
    assert [r["path"] for r in refused] == ["../outside/secret.md", "reports/invented.md"]
    assert "is outside the project" in refused[0]["reason"] and refused[0]["reason"].endswith("refused")
    assert refused[1]["reason"] == "not in the memory index: refused"


async def test_memory_match_asks_the_model_matcher_when_the_project_says_so(tmp_path, openai_server):
    fake = await openai_server(script=[{"contains": "<task_text>\nquarterly revenue\n</task_text>",
                                        "answer": '["reports/q3.md"]'}])
    root = project(tmp_path, toml='[memory]\nmatcher = "model"\n', index=INDEX)
    code, out, err = await taskdsl_async(root, "memory", "match", "quarterly revenue", "--model", MODEL, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert (found["matcher"], found["matches"], found["refused"]) == (
        "model", [{"path": "reports/q3.md", "metadata": "Q3 revenue and costs"}], [])
    assert len(fake.requests) == 1
