"""The editor's Run with an offline model (`taskdsl/echo`) never needs litellm: the server starts
importing litellm in the background for runs with real models, and a first Run of an offline
template must not wait for that import (it once did: ~8 s on a loaded machine). Here litellm
cannot be imported at all (a package of that name that refuses to load is first on the server's
path), so a Run that asked for it would fail; the offline Run completes, and a Run with a real
model says what is missing instead of hanging."""

from __future__ import annotations

import asyncio
import os

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from conftest import SERVER, indexed
from test_run import execute

FILES = {
    "taskdsl.toml": 'model = "taskdsl/echo"\n',
    "hello.task.xml": """<task name="hello">
  <instructions>Say hello to {{who}}</instructions>
  <inputs><input name="who"/></inputs>
</task>
""",
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(ws, tmp_path_factory):
    blocker = tmp_path_factory.mktemp("no-litellm")
    (blocker / "litellm").mkdir()
    (blocker / "litellm" / "__init__.py").write_text(
        'raise ImportError("litellm is not importable in this test")\n', encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if k not in ("TASKDSL_MODEL", "OPENAI_API_KEY")}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), environment.get("PYTHONPATH")]))
    lsp_client = await ClientServerConfig(server_command=SERVER, server_env=environment).start()
    lsp_client.set_configuration({"trace": {"dir": str(tmp_path_factory.mktemp("runs"))}}, section="taskdsl")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"), root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    await asyncio.wait_for(indexed(lsp_client), 120)  # a hang guard

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def consent(params: types.ShowMessageRequestParams):
        return next((a for a in params.actions or [] if a.title == "Run"), None)

    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()


async def test_an_offline_run_does_not_need_litellm(client, ws):
    uri = (ws / "hello.task.xml").as_uri()
    result = await asyncio.wait_for(execute(client, uri, None, {"who": "Ada"}), 60)
    assert (result["status"], result["content"]) == ("COMPLETE", "Say hello to Ada")
    again = await asyncio.wait_for(execute(client, uri, None, {"who": "Bo"}, "taskdsl/echo"), 60)
    assert (again["status"], again["content"]) == ("COMPLETE", "Say hello to Bo")


async def test_a_run_with_a_real_model_says_litellm_is_missing(client, ws):
    uri = (ws / "hello.task.xml").as_uri()
    result = await asyncio.wait_for(execute(client, uri, None, {"who": "Ada"}, "openai/gpt-4o-mini"), 60)
    assert (result["status"], result["steps"]) == ("FAILED", [])
    assert result["error"] == {
        "type": "VALIDATION_ERROR", "reason": "litellm_unavailable", "details": {},
        "message": "litellm could not be imported (litellm is not importable in this test): reinstall taskdsl, whose "
                   "dependencies include it, or run with an offline model (taskdsl/echo, taskdsl/replay)"}
    assert "taskdsl: loading litellm…" in [m.message for m in client.log_messages]  # the client's output, not stderr
