"""One provider interface for every model: the offline models never import litellm, and a run
through them has the shape of a run through a real (loopback) OpenAI-compatible model."""

import asyncio
import json
import os
import sys

import pytest

from aiohttp import web

from evaluator_helpers import run, run_python, write
from loopback_openai import loopback  # noqa: F401  (a fixture)
from paths import REPO
from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT, HandlerConfig
from taskdsl.evaluator.providers import (CONTEXT_WINDOW, MESSAGE_MARGIN, count_message_tokens, count_tokens,
                                         load_litellm, prompt_token_bound)
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
    assert real.notes["prompt_tokens"] == 10 and real.notes["completion_tokens"] == 2  # what the server's usage said
    sent = fake.requests[0]["body"]["messages"]
    assert echo.notes["prompt_tokens"] == count_message_tokens(sent)  # what the echo model reports
    assert echo.notes["completion_tokens"] == count_tokens('{"valid": true}') == 8
    assert [e["event"] for e in echo_events] == [e["event"] for e in real_events]
    assert [r["event"] for r in echo_trace] == [r["event"] for r in real_trace] == ["run", "model_call", "end"]
    echo_call, real_call = echo_trace[1], real_trace[1]
    assert echo_call.keys() == real_call.keys()
    assert echo_call["tokens"].keys() == real_call["tokens"].keys() == {"prompt", "completion"}
    assert echo_call["prompt"] == real_call["prompt"]  # the same messages reach both models
    assert fake.requests[0]["body"]["messages"] == [{"role": "system", "content": echo_call["prompt"]["system"]},
                                                     {"role": "user", "content": echo_call["prompt"]["user"]}]


PROMPT = """<task name="t"><instructions>{{text}}</instructions><inputs><input name="text">x</input></inputs></task>"""


async def test_the_prompt_tokens_are_the_ones_the_model_reports(tmp_path, loopback):
    """No tokenizer pass before a call to a model that reports its usage: the notes, dataUsage and
    the trace carry the server's counts."""
    fake = await loopback(usage=(1234, 5))
    trace = tmp_path / "t.jsonl"
    result, _ = await run(tmp_path, PROMPT, model="openai/local-model", inputs={"text": "hello"}, trace=str(trace))
    assert (result.notes["prompt_tokens"], result.notes["completion_tokens"]) == (1234, 5)
    usage = result.notes["dataUsage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["model_calls"]) == (1234, 5, 1)
    call = json.loads(trace.read_text().splitlines()[1])
    assert call["tokens"] == {"prompt": 1234, "completion": 5}
    assert fake.count() == 1


async def test_a_model_that_reports_no_usage_has_its_prompt_counted(tmp_path, loopback):
    fake = await loopback(usage=None)
    result, _ = await run(tmp_path, PROMPT, model="openai/local-model", inputs={"text": "hello, world"})
    sent = fake.requests[0]["body"]["messages"]
    assert result.notes["prompt_tokens"] == load_litellm().token_counter(model="openai/local-model", messages=sent)
    assert result.notes["prompt_tokens"] > count_tokens("hello, world")


# the texts a tokenizer makes the most tokens of: NFKC's longest expansion (U+FDFA, 3 bytes → 18
# characters), squared letters, emoji, control characters, runs of spaces, plain ASCII
HARD_TEXTS = ["\ufdfa" * 300, "\u3300" * 300, "\U0001F600" * 300, "\x00" * 300, " " * 300, "a b " * 300,
              "\ufb03" * 300, "e\u0301" * 300, "Résumé — naïve café 中文 " * 30, ""]
BOUND_MODELS = ["gpt-4o-mini", "claude-sonnet-4-5-20250929", "deepseek/deepseek-chat", "taskdsl/echo"]


@pytest.mark.parametrize("model", BOUND_MODELS)
def test_the_cheap_token_bound_is_never_below_a_real_count(model):
    """The window check skips counting only when prompt_token_bound is below the warning: it must
    bound every counter a provider uses (tiktoken; Claude's NFKC-normalizing tokenizer; DeepSeek's;
    the offline models')."""
    count = (count_message_tokens if model.startswith("taskdsl/") else
             lambda messages: load_litellm().token_counter(model=model, messages=messages))
    for text in HARD_TEXTS:
        for messages in ([{"role": "user", "content": text}],
                         [{"role": "system", "content": text}, {"role": "user", "content": text[::-1]}]):
            assert prompt_token_bound(messages) >= count(messages), (model, text[:8])
    assert prompt_token_bound([{"role": "user", "content": ["an image part"]}]) is None  # not text: counted


async def test_a_prompt_with_more_tokens_than_bytes_is_refused_before_calling(tmp_path):
    """Claude's tokenizer (NFKC) makes about 15 tokens of the 3-byte U+FDFA: a bound on the bytes
    alone would have let this prompt through to the model; the window check counts it and refuses."""
    requests = []

    async def anything(request):
        requests.append(request.path)
        return web.json_response({"error": {"message": "not here"}}, status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    server = web.AppRunner(app)
    await server.setup()
    site = web.TCPSite(server, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    load_litellm().register_model({"claude-tiny-window": {"max_input_tokens": 1000, "litellm_provider": "anthropic",
                                                          "mode": "chat"}})
    text = "\ufdfa" * 100
    sent = [{"role": "system", "content": BASE_SYSTEM_PROMPT}, {"role": "user", "content": text}]
    assert sum(len(v.encode()) + MESSAGE_MARGIN for m in sent for v in m.values()) < 0.8 * 900  # bytes: "fits"
    config = HandlerConfig(model="claude-tiny-window", api_base=f"http://127.0.0.1:{port}", api_key="sk-ant-test",
                           retries=0)
    try:
        with pytest.raises(TaskError) as info:
            await run(tmp_path, PROMPT, model="claude-tiny-window", inputs={"text": text}, config=config)
    finally:
        await server.cleanup()
    error = info.value
    assert (error.type, error.reason) == ("RESOURCE_EXHAUSTION", "context"), error
    assert error.details["metrics"]["limit"] == 900
    assert error.details["metrics"]["used"] == load_litellm().token_counter(model="claude-tiny-window", messages=sent)
    assert error.details["metrics"]["used"] > 900
    assert requests == []


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
