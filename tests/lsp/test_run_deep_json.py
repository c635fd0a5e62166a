"""A run's output nested as deep as the one JSON reader takes (support/jsontext.MAX_DEPTH) is
answered to the editor like any other: the server encodes its answer (each level costs its encoder
several frames) and the request is never left unanswered. One level deeper is not JSON (the output
stays text, with the reader's note). An output 950 deep, under Python's own decoder limit, once
made the answer impossible to encode and the client waited for ever."""

from __future__ import annotations

import asyncio
import os

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from conftest import SERVER, indexed
from taskdsl.support.jsontext import MAX_DEPTH
from test_run import execute

FILES = {
    "taskdsl.toml": "",
    "deep.task.xml": """<task type="script" name="deep">
  <description>Print the JSON it is given</description>
  <inputs><input name="x"/></inputs>
  <command>printf '%s' "$TASKDSL_INPUT_X"</command>
  <output_format type="json"/>
</task>
""",
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(ws, tmp_path_factory):
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
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


@pytest.mark.parametrize("levels", [MAX_DEPTH, MAX_DEPTH + 1, 950])
async def test_a_deeply_nested_output_is_answered(client, ws, levels):
    text = "[" * levels + "]" * levels
    result = await asyncio.wait_for(execute(client, (ws / "deep.task.xml").as_uri(), None, {"x": text}), 60)
    assert (result["status"], result["content"]) == ("COMPLETE", text)
