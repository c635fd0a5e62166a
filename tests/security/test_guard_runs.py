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


async def test_a_fallback_the_agreed_plan_did_not_show_is_never_called(tmp_path, loopback):
    import pytest

    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.consent import plan_view
    from taskdsl.evaluator.handler import HandlerConfig
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import execute, prepare_file
    from taskdsl.project.config import settings_for

    fake = await loopback(always={"primary": 500})
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    path = tmp_path / "say.task.xml"
    path.write_text('<task name="say"><instructions>Say hi</instructions></task>\n', encoding="utf-8")
    agreed = prepare_file(str(path), settings=settings_for(path)[0])
    assert [name for name, _ in plan_view(agreed, "openai/primary", None).models] == ["openai/primary"]
    # the configuration the run is then made with names a fallback the plan never showed
    (tmp_path / "taskdsl.toml").write_text('[models."openai/primary"]\nfallbacks = ["openai/other"]\n', encoding="utf-8")
    later = settings_for(path)[0]
    config = configure(HandlerConfig(model="openai/primary"), later, retries=0)
    with pytest.raises(TaskError) as refused:
        await execute(agreed, config=config)
    assert "the fallback openai/other is not in the run's plan: its consent did not cover it" in refused.value.message
    assert (fake.count("primary"), fake.count("other")) == (1, 0)
    # planned with the fallback (the plan shows it), the same run falls back to it
    planned = prepare_file(str(path), settings=later)
    assert [name for name, _ in plan_view(planned, "openai/primary", None).models] == ["openai/primary", "openai/other"]
    result = await execute(planned, config=config)
    assert result.content.startswith("other says:") and fake.count("other") == 1
