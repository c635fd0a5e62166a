"""Guards of a run that no other test held (each fails with its guard removed): `--max-cost` stops a run
before the call that would take it past the budget, against the loopback OpenAI-compatible server that
counts requests; the API key the provider is configured with never reaches the output."""

import json

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)

TWO_STEPS = """<task type="sequential" name="two">
  <description>Write, then summarise</description>
  <steps>
    <task name="write"><instructions>Write a long essay</instructions></task>
    <task name="summarise">
      <instructions>Summarise: {{last_output}}</instructions>
    </task>
  </steps>
</task>
"""
ESSAY = "word " * 40_000  # ~40,000 tokens: $0.10 as gpt-4o's prompt ($2.50 a million)


async def test_max_cost_stops_the_run_before_the_call_that_would_exceed_it(tmp_path, loopback):
    fake = await loopback(answer=lambda model, prompt: ESSAY if "essay" in prompt else "short")
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "two.task.xml").write_text(TWO_STEPS, encoding="utf-8")
    # the estimate (two short prompts) fits in $0.05; the second prompt holds the essay and does not
    code, out, err = await taskdsl_async(tmp_path, "run", "two.task.xml", "--model", "openai/gpt-4o",
                                         "--max-cost", "0.05", "--json", "-q")
    assert code == 1, err
    error = json.loads(out)["error"]
    while error.get("details", {}).get("error"):  # the innermost: the step that stopped
        error = error["details"]["error"]
    assert (error["type"], error["reason"]) == ("RESOURCE_EXHAUSTION", "cost")
    assert "a call to 'openai/gpt-4o' would take the run's cost past $0.05" in error["message"]
    assert fake.count() == 1  # the first step's call only: the second was never sent
    code, out, err = await taskdsl_async(tmp_path, "run", "two.task.xml", "--model", "openai/gpt-4o",
                                         "--max-cost", "1", "--json", "-q")
    assert code == 0, err
    assert fake.count() == 3  # with room for it, the same run makes both calls


async def test_the_configured_api_key_never_reaches_the_output(tmp_path, loopback, monkeypatch):
    import os

    # a model that quotes its prompt, and a prompt that holds the key the provider is configured with
    fake = await loopback(answer=lambda model, prompt: f"you said: {prompt}")
    key = os.environ["OPENAI_API_KEY"]  # set by the loopback fixture: what litellm sends as the bearer token
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "echo.task.xml").write_text(
        '<task name="echo"><instructions>Repeat {{text}}</instructions>'
        '<inputs><input name="text"/></inputs></task>\n', encoding="utf-8")
    for extra in ((), ("--json",), ("--trace", "t.jsonl")):
        code, out, err = await taskdsl_async(tmp_path, "run", "echo.task.xml", "--model", "openai/local-model",
                                             "--input", f"text=the key is {key}", *extra)
        assert code == 0, err
        assert key not in out and key not in err
        assert "the key is ***" in out
    assert fake.requests[-1]["auth"] == f"Bearer {key}"  # the key did reach the model server: it was used
    trace = (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    assert key not in trace and "***" in trace
