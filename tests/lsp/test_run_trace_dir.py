"""The editor's Run in a project whose own taskdsl.toml sets `[run] trace_dir` to a folder outside the
project: the run would write its trace and result document there, so the question shows the folder,
a declined question writes nothing there, and only a yes runs. A trace_dir inside the project asks
nothing."""

from __future__ import annotations

import asyncio
import os
import tempfile

import pytest
from lsprotocol import types

OUTSIDE = tempfile.mkdtemp(prefix="taskdsl-traces-outside-")  # the project's trace_dir: outside the project
SETTINGS = {"model": "taskdsl/echo"}  # no taskdsl.trace.dir of the user's: the project's applies
FILES = {
    "taskdsl.toml": f'[run]\ntrace_dir = "{OUTSIDE}"\n',
    "t.task.xml": '<task name="t"><description>Say hello</description></task>\n',
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def run(client, ws):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.runTask", arguments=[{"uri": (ws / "t.task.xml").as_uri(), "wait": True}]))


async def test_a_trace_dir_outside_the_project_is_asked_for_and_written_only_after_a_yes(asked, ws):
    client = asked
    for name in os.listdir(OUTSIDE):  # another client's run (one server per client)
        os.remove(os.path.join(OUTSIDE, name))
    client.answers = ["Cancel"]
    declined = await run(client, ws)
    assert declined["status"] == "CANCELLED" and declined["error"]["reason"] == "declined"
    [question] = client.questions
    lines = question.message.splitlines()
    assert "  with what the project's configuration widens (it applies only if you agree):" in lines
    assert f"    [run] trace_dir = {OUTSIDE} (the run writes its trace and result document there)" in lines
    assert lines[-3] == ("Asked because the project's configuration widens what it may read, write or run "
                         "(allow_read, trace_dir, library_paths).")
    assert os.listdir(OUTSIDE) == []  # declined: nothing was written there
    client.questions.clear()
    client.answers = ["Run"]
    agreed = await run(client, ws)
    assert agreed["status"] == "COMPLETE", agreed
    assert agreed["result_uri"].startswith(f"file://{OUTSIDE}/t-")
    assert sorted(name.split(".", 1)[1] for name in os.listdir(OUTSIDE)) == ["md", "trace.jsonl"]


async def test_a_trace_dir_inside_the_project_asks_nothing(asked, ws):
    client = asked
    config_uri = (ws / "taskdsl.toml").as_uri()
    client.published.clear()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=config_uri, language_id="toml", version=1, text='[run]\ntrace_dir = "traces"\n')))
    while not any(p.uri == config_uri for p in client.published):  # the server read the new configuration
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 60)
    done = await run(client, ws)
    assert done["status"] == "COMPLETE", done
    assert client.questions == []
    assert done["result_uri"].startswith((ws / "traces").as_uri() + "/t-")
