"""The editor's Run task (taskdsl.runTask over stdio) against the loopback OpenAI-compatible
server (tests/loopback_openai.py, through litellm, never mocked): when the first model answers
5xx the fallback of `[models."NAME"]` answers and the result says so, and the second run of the
same request answers from the answer cache (`[run] cache = true`) without a call, and says
"cached". The server is started here, with the loopback model's address in its environment."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from conftest import SERVER, indexed
from test_run import execute, path_of, result_messages

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from loopback_openai import LoopbackOpenAI  # noqa: E402

MODEL = "openai/local-model"
KEY = "sk-editor-loopback-7311"
FILES = {
    "taskdsl.toml": f'[models."{MODEL}"]\nfallbacks = ["openai/backup"]\n[run]\ncache = true\nretries = 0\n',
    "say.task.xml": """<task name="say">
  <instructions>Say {{text}}</instructions>
  <inputs><input name="text"/></inputs>
</task>
""",
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model():
    "The loopback model: `local-model` always answers 503, `backup` answers."
    fake = LoopbackOpenAI(always={"local-model": 503})
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    fake.base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
    yield fake
    await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(model, ws, tmp_path_factory):
    "The server over stdio (VS Code's capabilities), pointed at the loopback model."
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    environment.update(OPENAI_API_BASE=model.base, OPENAI_API_KEY=KEY,
                       TASKDSL_CACHE_DIR=str(tmp_path_factory.mktemp("cache-home")))
    lsp_client = await ClientServerConfig(server_command=SERVER, server_env=environment).start()
    lsp_client.set_configuration({"trace": {"dir": str(tmp_path_factory.mktemp("runs"))}}, section="taskdsl")
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"), root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    await asyncio.wait_for(indexed(lsp_client), 120)  # a hang guard
    answers = []

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def consent(params: types.ShowMessageRequestParams):  # the plan's question (a paid model): "Run"
        answers.append(params.message)
        return next((a for a in params.actions or [] if a.title == "Run"), None)

    lsp_client.consent_messages = answers
    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()


async def test_run_task_shows_the_fallback_used_then_cached_on_the_second_run(client, ws, model):
    uri = (ws / "say.task.xml").as_uri()

    first = await execute(client, uri, None, {"text": "hello"}, MODEL)
    assert (first["status"], first["content"]) == ("COMPLETE", "backup says: Say hello")
    [step] = first["steps"]
    assert step["fallback"] == {"asked": MODEL, "answered": "openai/backup"}
    assert "cached" not in step
    assert (model.count("local-model"), model.count("backup")) == (1, 1)
    assert all(r["auth"] == f"Bearer {KEY}" for r in model.requests)
    document = path_of(first["result_uri"]).read_text(encoding="utf-8")
    assert f"answered by fallback openai/backup (for {MODEL})" in document
    assert " · cached" not in document
    [line] = [line for line in result_messages(client) if "✓ say (atomic, " in line]
    assert line.endswith(f", answered by fallback openai/backup (for {MODEL})): backup says: Say hello")
    assert "cached" not in line
    [question] = client.consent_messages  # a paid model: the plan was shown, with its fallback and the cache
    assert f"if {MODEL} still fails after its retries: openai/backup" in question
    assert "answers already in the cache are reused: cached calls cost nothing" in question

    client.log_messages.clear()
    second = await execute(client, uri, None, {"text": "hello"}, MODEL)  # the same request: from the cache
    assert (second["status"], second["content"]) == ("COMPLETE", "backup says: Say hello")
    assert model.count() == 2  # nothing sent
    [step] = second["steps"]
    assert step["cached"] is True
    assert step["fallback"] == {"asked": MODEL, "answered": "openai/backup"}
    document = path_of(second["result_uri"]).read_text(encoding="utf-8")
    assert " · cached · answered by fallback openai/backup" in document
    [line] = [line for line in result_messages(client) if "✓ say (atomic, " in line]
    assert ", cached, answered by fallback openai/backup" in line
