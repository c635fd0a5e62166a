"""One provider interface for every model: the offline models never import litellm, and a run
through them has the shape of a run through a real (loopback) OpenAI-compatible model."""

import asyncio
import json
import os
import sys

import pytest

from evaluator_helpers import run, run_python, write
from paths import REPO
from taskdsl.evaluator.providers import CONTEXT_WINDOW, count_message_tokens, count_tokens
from taskdsl.evaluator.results import TaskError
from test_evaluator_models import FakeOpenAI, serve_chat_completions

SUMMARISE = str(REPO / "examples" / "summarise.task.xml")
JUDGE = """
    <task name="judge">
      <system>You are strict.</system>
      <instructions>{{thing}}</instructions>
      <output_format type="json" schema="object"/>
      <inputs><input name="thing">{"valid": true}</input></inputs>
    </task>"""


@pytest.mark.parametrize("model", ["taskdsl/echo", "taskdsl/replay"])
def test_an_offline_run_never_imports_litellm(tmp_path, model):
    fixture = tmp_path / "replay.json"
    fixture.write_text(json.dumps({"answers": [{"answer": "- one\n- two\n- three"}]}))
    code = (
        "import sys\n"
        "from taskdsl.cli.main import main\n"
        f"code = main(['run', {SUMMARISE!r}, '--model', {model!r}, '--json', '--trace', {str(tmp_path / 't.jsonl')!r}])\n"
        "assert code == 0, code\n"
        "print('litellm imported' if 'litellm' in sys.modules else 'litellm not imported')\n"
    )
    done = run_python(code, env=dict(os.environ, TASKDSL_REPLAY_FILE=str(fixture)))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout[:done.stdout.rindex("}") + 1])
    expected = "- one\n- two\n- three" if model == "taskdsl/replay" else (
        "Summarise the following text in three short bullet points: Task templates compose LLM prompts, shell "
        "scripts and conditionals into pipelines that run the same way every time.")
    assert result["content"] == expected
    assert done.stdout.rstrip().endswith("litellm not imported")
    assert "loading litellm" not in done.stderr


async def test_echo_and_a_real_model_give_results_notes_and_traces_of_one_shape(tmp_path, monkeypatch):
    fake = FakeOpenAI(answers=['{"valid": true}'])
    server = await serve_chat_completions(fake.handle, monkeypatch)
    try:
        runs = {}
        for model in ("taskdsl/echo", "openai/gpt-4o-mini"):  # a model with a window in litellm's map
            trace = tmp_path / f"{model.replace('/', '_')}.jsonl"
            result, events = await run(tmp_path, JUDGE, model=model, trace=str(trace))
            records = [json.loads(line) for line in trace.read_text().splitlines()]
            runs[model] = (result, events, records)
    finally:
        await server.cleanup()
    (echo, echo_events, echo_trace), (real, real_events, real_trace) = runs.values()
    assert echo.parsed_content == real.parsed_content == {"valid": True}
    assert echo.to_json().keys() == real.to_json().keys()
    assert echo.notes.keys() == real.notes.keys() == {"model", "prompt_tokens", "context_limit", "dataUsage",
                                                          "completion_tokens", "duration_s"}
    assert all(isinstance(n["prompt_tokens"], int) and n["prompt_tokens"] > 0 for n in (echo.notes, real.notes))
    assert real.notes["completion_tokens"] == 2  # what the server's usage said
    assert echo.notes["completion_tokens"] == count_tokens('{"valid": true}') == 8
    assert [e["event"] for e in echo_events] == [e["event"] for e in real_events]
    assert [r["event"] for r in echo_trace] == [r["event"] for r in real_trace] == ["run", "model_call", "end"]
    echo_call, real_call = echo_trace[1], real_trace[1]
    assert echo_call.keys() == real_call.keys()
    assert echo_call["tokens"].keys() == real_call["tokens"].keys() == {"prompt", "completion"}
    assert echo_call["prompt"] == real_call["prompt"]  # the same messages reach both models
    assert fake.requests[0]["body"]["messages"] == [{"role": "system", "content": echo_call["prompt"]["system"]},
                                                     {"role": "user", "content": echo_call["prompt"]["user"]}]


def test_offline_token_counting_is_the_documented_one():
    assert count_tokens("Hello, world!") == 6  # Hell o , worl d !
    assert count_tokens("") == 0
    assert count_tokens("a  b\n\tc") == 3
    assert count_message_tokens([{"role": "system", "content": "Hello, world!"}, {"role": "user", "content": "hi"}]) \
        == (6 + 4) + (1 + 4) + 3


async def test_echo_notes_count_the_prompt_it_was_sent(tmp_path):
    trace = tmp_path / "t.jsonl"
    result, _ = await run(tmp_path, JUDGE, trace=str(trace))
    call = json.loads(trace.read_text().splitlines()[1])
    messages = [{"role": "system", "content": call["prompt"]["system"]}, {"role": "user", "content": call["prompt"]["user"]}]
    assert result.notes["prompt_tokens"] == call["tokens"]["prompt"] == count_message_tokens(messages)


async def test_the_offline_window_check_uses_the_same_count(tmp_path):
    big = "word " * 120_000  # 120,000 tokens: past 0.9 of the 128,000-token window
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>{{text}}</instructions>
            <inputs><input name="text">x</input></inputs></task>""", inputs={"text": big})
    error = info.value
    assert (error.type, error.reason) == ("RESOURCE_EXHAUSTION", "context")
    assert error.details["metrics"]["limit"] == int(CONTEXT_WINDOW * 0.9)
    assert error.details["metrics"]["used"] > 120_000


async def test_a_near_full_offline_window_is_a_warning_note(tmp_path):
    near = "word " * 100_000  # past 0.8 of the usable 115,200 tokens
    result, _ = await run(tmp_path, """<task name="t"><instructions>{{text}}</instructions>
        <inputs><input name="text">x</input></inputs></task>""", inputs={"text": near})
    assert result.notes["warning"].startswith("the prompt uses 8")
    assert result.notes["context_limit"] == int(CONTEXT_WINDOW * 0.9)


def test_waiting_for_litellm_says_so_once():
    code = (
        "import asyncio\n"
        "from taskdsl.evaluator import providers\n"
        "assert not providers.litellm_loaded()\n"
        "asyncio.run(providers.litellm_module())\n"
        "asyncio.run(providers.litellm_module())\n"
        "print('loaded' if providers.litellm_loaded() else 'not loaded')\n"
    )
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loaded"
    assert done.stderr.count("loading litellm…") == 1


async def test_the_cli_runs_a_real_model_after_loading_litellm_in_the_background(tmp_path, monkeypatch):
    fake = FakeOpenAI(answers=["a real answer"])
    server = await serve_chat_completions(fake.handle, monkeypatch)
    path = write(tmp_path, "t.task.xml", """<task name="t"><instructions>hi</instructions></task>""")
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "taskdsl", "run", path, "--model", "openai/local-model",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
        out, err = await asyncio.wait_for(process.communicate(), 120)
    finally:
        await server.cleanup()
    assert process.returncode == 0, err.decode()
    assert out.decode() == "a real answer\n"
    assert [r["body"]["model"] for r in fake.requests] == ["local-model"]


async def test_replay_without_a_fixture_names_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("TASKDSL_REPLAY_FILE", raising=False)
    with pytest.raises(TaskError) as info:
        await run(tmp_path, """<task name="t"><instructions>hi</instructions></task>""", model="taskdsl/replay")
    assert info.value.message == ("model 'taskdsl/replay' answers from a replay fixture and none is given: "
                                  "export TASKDSL_REPLAY_FILE=answers.json (or record one with taskdsl test --record)")
    assert info.value.reason == "replay_fixture"  # preflight: refused before the task ran
