"""The editor's own taskdsl.trace.dir is the user's choice: with it set, a project's `[run] trace_dir`
outside the project does not apply, so the run asks nothing and writes into the user's folder."""

from __future__ import annotations

import os
import tempfile

import pytest
from lsprotocol import types

OUTSIDE = tempfile.mkdtemp(prefix="taskdsl-traces-outside-")  # the project's trace_dir: outside the project
MINE = tempfile.mkdtemp(prefix="taskdsl-traces-mine-")  # the user's own taskdsl.trace.dir
SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": MINE}}
FILES = {
    "taskdsl.toml": f'[run]\ntrace_dir = "{OUTSIDE}"\n',
    "t.task.xml": '<task name="t"><description>Say hello</description></task>\n',
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_the_users_own_trace_dir_asks_nothing(client, ws):
    questions = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: types.ShowMessageRequestParams):
        questions.append(params)
        return None

    done = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.runTask", arguments=[{"uri": (ws / "t.task.xml").as_uri(), "wait": True}]))
    assert done["status"] == "COMPLETE", done
    assert questions == []
    assert done["result_uri"].startswith(f"file://{MINE}/t-")
    assert os.listdir(OUTSIDE) == []
