"""The editor's run writes its result document into the user's own 0700 state folder, never into a
predictable folder of the shared temporary folder (where a planted link made a run overwrite another
file), and refuses a trace folder that belongs to another user."""

import asyncio
import os
import stat
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = Path(tempfile.mkdtemp(prefix="taskdsl-writes-"))
SHARED_TMP = ROOT / "tmp"  # the shared temporary folder the server sees
STATE = ROOT / "state"
WS = ROOT / "ws"
for folder in (SHARED_TMP, STATE, WS):
    folder.mkdir()
VICTIMS = ROOT / "victims"
VICTIMS.mkdir()
(SHARED_TMP / "taskdsl-runs").symlink_to(VICTIMS)  # what an attacker plants before the user's run
(WS / "hello.task.xml").write_text('<task name="hello"><description>Say hello</description></task>\n', encoding="utf-8")
ENV = {**os.environ, "TMPDIR": str(SHARED_TMP), "XDG_STATE_HOME": str(STATE)}

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "taskdsl", "serve"], server_env=ENV),
                    scope="module")
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({"model": "taskdsl/echo"}, section="taskdsl")

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"), root_uri=WS.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=WS.as_uri(), name="ws")]))
    yield
    await lsp_client.shutdown_session()


async def test_the_result_document_goes_to_the_users_private_state_folder(client):
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.runTask", arguments=[{"uri": (WS / "hello.task.xml").as_uri(), "wait": True}]))
    assert result["status"] == "COMPLETE"
    written = Path(unquote(urlparse(result["result_uri"]).path))
    assert written.parent == STATE / "taskdsl" / "runs"
    assert stat.S_IMODE(written.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert list(VICTIMS.iterdir()) == []
