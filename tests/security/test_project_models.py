"""The models a repository's taskdsl.toml names (`model`, `[models."NAME"] fallbacks`) are called only
where the run's plan lists them: a re-plan of a reduce whose tasks name their own model must not call
the project's default model, which the plan never showed (nor its consent covered)."""

from __future__ import annotations

import json
import textwrap

import pytest

from evaluator_helpers import taskdsl_async
from test_evaluator_models import FakeOpenAI, serve_chat_completions

TALLY = textwrap.dedent("""\
    <task name="tally" type="reduce">
      <description>Tally the votes</description>
      <inputs>
        <input name="a">yes</input>
        <input name="b">no</input>
        <input name="c">yes</input>
      </inputs>
      <initial_value>nothing yet</initial_value>
      <inner_task>
        <description>Read one vote</description>
        <instructions>Read this vote: {{current_data}}</instructions>
        <model>taskdsl/replay</model>
      </inner_task>
      <reduction_task>
        <description>Add the vote</description>
        <instructions>Add {{current_result}} to the tally {{accumulator}}</instructions>
        <model>taskdsl/replay</model>
      </reduction_task>
    </task>
    """)


@pytest.mark.asyncio
async def test_a_replan_never_calls_the_projects_model_the_plan_did_not_list(tmp_path, monkeypatch):
    (tmp_path / "taskdsl.toml").write_text('model = "openai/gpt-4o"\n', encoding="utf-8")
    (tmp_path / "tally.task.xml").write_text(TALLY, encoding="utf-8")
    (tmp_path / "replay.json").write_text(json.dumps({"answers": [
        {"contains": "Read this vote", "answer": "a vote"},
        {"contains": "Add a vote to the tally", "answer": "nothing yet"}]}), encoding="utf-8")  # no progress
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", str(tmp_path / "replay.json"))
    fake = FakeOpenAI(answers=['<task><description>Count</description><instructions>Count.</instructions></task>'])
    server = await serve_chat_completions(fake.handle, monkeypatch)
    try:
        code, out, _ = await taskdsl_async(tmp_path, "run", "tally.task.xml", "--plan")
        assert code == 0
        assert "openai/gpt-4o" not in out  # the plan calls taskdsl/replay only
        code, out, err = await taskdsl_async(tmp_path, "run", "tally.task.xml", "--json")
    finally:
        await server.cleanup()
    assert fake.requests == []  # the project's model was never asked
    assert code == 1, err
    error = json.loads(out)["error"]
    assert (error["type"], error["reason"]) == ("NO_PROGRESS", "unchanged_accumulator")
    assert error["details"]["not_replanned"] == (
        "no structure: VALIDATION_ERROR (model_not_agreed): the model openai/gpt-4o, which would write the structure, is not one the run's plan "
        "calls: it may cost money and the run's consent did not cover it")


def test_a_projects_configuration_cannot_say_where_a_models_requests_go(tmp_path, capsys, monkeypatch):
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text('[models."gpt-4o"]\napi_base = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    (tmp_path / "t.task.xml").write_text('<task name="t"><description>Say hi</description></task>\n', encoding="utf-8")
    assert main(["check", "."]) == 1
    assert ("taskdsl.toml:2:1: error TD901 unknown key 'api_base' in [models.\"gpt-4o\"]; known keys here: fallbacks, "
            "max_concurrency, rpm, tpm") in capsys.readouterr().out
    assert main(["run", "t.task.xml", "--model", "taskdsl/echo"]) == 2  # a config that does not check runs nothing
