"""Atomic tasks through litellm: the offline models, and a real OpenAI-compatible HTTP server on
127.0.0.1 started by the test. Nothing here mocks litellm."""

import json
import os

import pytest
from aiohttp import web

from evaluator_helpers import run
from loopback_openai import SECRET, LoopbackOpenAI, serve_chat_completions  # noqa: F401 (imported from here by others)
from taskdsl.evaluator.handler import strip_code_fences
from taskdsl.evaluator.providers import load_litellm, replay_answer
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import run_file

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "evaluator")


class FakeOpenAI(LoopbackOpenAI):
    """The loopback server (loopback_openai.py) answering from a list in turn (the last one
    repeated), or from a `script` of replay entries ({"contains": …, "answer": …}, matched against
    the user prompt as taskdsl/replay matches them; a prompt the script lacks is a 400 saying so);
    a `status` other than 200 answers every request with it."""

    def __init__(self, answers=("ok",), status=200, script=None):
        super().__init__(answer=self.scripted, status=status,
                         error="Incorrect API key provided" if status == 401 else None)
        self.answers, self.script = list(answers), script

    def scripted(self, model, prompt):
        if self.script is not None:
            return replay_answer(self.script, prompt)
        return self.answers[min(len(self.requests), len(self.answers)) - 1]


@pytest.fixture
async def openai_server(monkeypatch):
    async def start(**kwargs):
        fake = FakeOpenAI(**kwargs)
        started.append(await serve_chat_completions(fake.handle, monkeypatch))
        return fake

    started = []
    yield start
    for runner in started:
        await runner.cleanup()


async def test_atomic_task_through_a_real_http_endpoint(tmp_path, openai_server):
    fake = await openai_server(answers=['```json\n{"valid": true, "errors": 0}\n```'])
    trace = tmp_path / "trace.jsonl"
    result, _ = await run(tmp_path, """
        <task name="judge">
          <system>You are strict.</system>
          <instructions>Judge {{thing}}</instructions>
          <output_format type="json" schema="object"/>
          <inputs><input name="thing">the draft</input><input name="extra">more</input></inputs>
        </task>""", model="openai/local-model", trace=str(trace))
    assert result.parsed_content == {"valid": True, "errors": 0}
    request = fake.requests[0]
    assert request["auth"] == f"Bearer {SECRET}"
    assert request["body"]["model"] == "local-model"
    system, user = request["body"]["messages"]
    assert system["role"] == "system" and "You are strict." in system["content"]
    assert "Answer with JSON only (a JSON object)." in system["content"]
    assert user == {"role": "user", "content": 'Judge the draft\n\n<input name="extra">\nmore\n</input>'}
    assert SECRET not in trace.read_text()


async def test_sequential_with_cond_through_http(tmp_path, openai_server):
    fake = await openai_server(answers=['{"score": 9}', "ship it"])
    result, _ = await run(tmp_path, """
        <task type="sequential" name="review">
          <description>review</description>
          <steps>
            <task><instructions>Score it</instructions><output_format type="json"/></task>
            <cond><case test="output.score > 5"><task><instructions>Approve</instructions></task></case></cond>
          </steps>
        </task>""", model="openai/local-model")
    assert result.content == "ship it"
    assert [r["body"]["messages"][1]["content"] for r in fake.requests] == ["Score it", "Approve"]


async def test_rejected_credentials_are_a_clear_error(tmp_path, openai_server):
    await openai_server(status=401)
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""", model="openai/local-model")
    assert (info.value.type, info.value.reason) == ("VALIDATION_ERROR", "authentication")
    assert info.value.message.startswith("model 'openai/local-model' rejected the credentials")
    assert SECRET not in str(info.value)


async def test_missing_credentials_name_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""", model="gpt-4o-mini")
    assert info.value.message == ("model 'gpt-4o-mini' needs credentials and none are set: export OPENAI_API_KEY=… "
                                  "(or run offline with --model taskdsl/replay (answers from a fixture) or "
                                  "--model taskdsl/echo)")
    assert info.value.reason == "missing_credentials"
    assert info.value.details["missing"] == ["OPENAI_API_KEY"]


@pytest.mark.parametrize("model, reason, message", [
    ("nonexistent-model-xyz", "unknown_model", "model 'nonexistent-model-xyz' is not known to litellm"),
    ("taskdsl/nope", "unknown_model", "model 'taskdsl/nope' was not found"),
])
async def test_bad_model_is_a_clear_error(tmp_path, model, reason, message):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""", model=model)
    assert info.value.reason == reason and info.value.message.startswith(message)


async def test_a_misspelt_model_is_refused_with_the_names_it_is_close_to(tmp_path):
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""", model="gpt-4o-minii")
    assert info.value.message == ("model 'gpt-4o-minii' is not known to litellm (did you mean 'gpt-4o-mini' or "
                                  "'gpt-5.4-mini'?): use a name from its model list or a provider prefix such as "
                                  "openai/<name> or ollama/<name>")


async def test_prompt_larger_than_the_window_is_refused_before_calling(tmp_path, openai_server):
    fake = await openai_server()
    load_litellm().register_model({"openai/tiny-window": {"max_input_tokens": 100, "litellm_provider": "openai",
                                                          "mode": "chat"}})
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>{{text}}</instructions>
            <inputs><input name="text">x</input></inputs></task>""",
                  model="openai/tiny-window", inputs={"text": "word " * 500})
    error = info.value
    assert (error.type, error.reason) == ("RESOURCE_EXHAUSTION", "context")
    assert error.details["metrics"]["limit"] == 90  # 0.9 of the window
    assert error.details["metrics"]["used"] > 500
    assert fake.requests == []


async def test_warning_note_past_80_percent_of_the_usable_window(tmp_path, openai_server):
    fake = await openai_server()
    xml = """<task name="t"><instructions>{{text}}</instructions><inputs><input name="text">x</input></inputs></task>"""
    probe, _ = await run(tmp_path, xml, model="openai/local-model", inputs={"text": "word " * 200})
    used = load_litellm().token_counter(model="openai/snug", messages=fake.requests[0]["body"]["messages"])
    window = int(used / 0.9 / 0.85)  # the prompt fills ~85 % of the usable window
    load_litellm().register_model({"openai/snug": {"max_input_tokens": window, "litellm_provider": "openai",
                                                   "mode": "chat"}})
    result, _ = await run(tmp_path, xml, model="openai/snug", inputs={"text": "word " * 200})
    assert result.notes["warning"] == (f"the prompt uses {used / int(window * 0.9):.0%} of the usable context window "
                                       f"({used}/{int(window * 0.9)} tokens)")
    assert result.notes["warning"].startswith("the prompt uses 8")
    assert "warning" not in probe.notes
    # the prompt was counted for the window check, but the notes keep the count the model reported
    assert probe.notes["prompt_tokens"] == result.notes["prompt_tokens"] == 10


async def test_replay_model_answers_from_the_fixture(monkeypatch):
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", os.path.join(FIXTURES, "replay.json"))
    result = await run_file(os.path.join(FIXTURES, "triage.task.xml"), model="taskdsl/replay")
    assert result.content == "1. reproduce\n2. fix\n3. test"


async def test_replay_without_a_matching_answer_says_so(tmp_path, monkeypatch):
    fixture = tmp_path / "r.json"
    fixture.write_text(json.dumps({"answers": [{"contains": "something else", "answer": "x"}]}))
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", str(fixture))
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>Hello there</instructions></task>""", model="taskdsl/replay")
    assert "taskdsl/replay: no recorded answer matches the prompt 'Hello there'" in info.value.message


async def test_echo_json_output_and_failed_parse_is_noted(tmp_path):
    good, _ = await run(tmp_path, """<task name="t"><instructions>{"a": [1]}</instructions>
        <output_format type="json" schema="object"/></task>""")
    assert good.parsed_content == {"a": [1]}
    bad, _ = await run(tmp_path, """<task name="t"><instructions>not json</instructions>
        <output_format type="json"/></task>""")
    assert bad.parsed_content is None
    assert bad.notes["json_error"] == "output is not valid JSON: Expecting value at line 1 column 1"


def test_code_fences_are_stripped():
    assert strip_code_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_code_fences("```\n[1]\n```\n") == "[1]"
    assert strip_code_fences(" plain ") == "plain"


async def test_trace_redacts_secrets_from_outputs_and_prompts(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-123456")
    trace = tmp_path / "t.jsonl"
    await run(tmp_path, """
        <task type="sequential" name="leaky">
          <description>d</description>
          <steps>
            <task type="script"><command>echo "token is $MY_SERVICE_TOKEN"</command></task>
            <task><instructions>Repeat: {{last_output}}</instructions></task>
          </steps>
        </task>""", trace=str(trace))
    text = trace.read_text()
    assert "tok-abcdef-123456" not in text
    assert "token is ***" in text
    events = [json.loads(line)["event"] for line in text.splitlines()]
    assert events[0] == "run" and "model_call" in events and "script" in events
    call = next(json.loads(line) for line in text.splitlines() if json.loads(line)["event"] == "model_call")
    assert call["path"] == "leaky/steps[2]" and call["tokens"]["prompt"] > 0 and "duration_s" in call


async def test_cancelling_a_run_abandons_the_model_call(tmp_path, monkeypatch):
    import asyncio

    arrived, release = asyncio.Event(), asyncio.Event()

    async def hang(request):
        arrived.set()
        await release.wait()  # never answers while the run is alive
        return web.json_response({})

    runner = await serve_chat_completions(hang, monkeypatch)
    try:
        cancel = asyncio.Event()
        task = asyncio.create_task(run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""",
                                       model="openai/hanging", cancel=cancel))
        await asyncio.wait_for(arrived.wait(), 30)
        cancel.set()
        with pytest.raises(TaskError) as info:
            await asyncio.wait_for(task, 30)
        assert info.value.reason == "cancelled"
    finally:
        release.set()
        await runner.cleanup()
