"""A client whose workspace is not trusted says so at initialize (`client.workspaceTrusted: false`, as the
VS Code extension does): the server itself then refuses every command that runs a template or asks a
model (taskdsl.runTask, taskdsl.runTest, taskdsl.newTask), whatever the client sends, while checking
and the preview still work."""

from __future__ import annotations

import pytest
from lsprotocol import types

INITIALIZATION_OPTIONS = {"client": {"workspaceTrusted": False}}
SETTINGS = {"model": "taskdsl/replay"}
FILES = {
    "s.task.xml": '<task name="s" type="script"><description>Touch a marker file</description><command>touch ran; echo ok</command></task>\n',
    "s.test.xml": '<tests><test name="runs" task="s"><expect test=\'"ok" in output\'/></test></tests>\n',
}
pytestmark = pytest.mark.asyncio(loop_scope="module")
UNTRUSTED = ("this workspace is not trusted, so its tasks do not run and no model is asked (checking still works); "
             "trust the workspace to run them")


async def command(client, name: str, argument: dict):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=[argument]))


async def test_an_untrusted_workspace_runs_no_task_and_asks_no_model(client, ws):
    ran = await command(client, "taskdsl.runTask", {"uri": (ws / "s.task.xml").as_uri(), "wait": True})
    assert (ran["status"], ran["error"]["reason"], ran["error"]["message"]) == ("FAILED", "untrusted", UNTRUSTED)
    tested = await command(client, "taskdsl.runTest", {"uri": (ws / "s.test.xml").as_uri(), "wait": True})
    assert (tested["error"]["reason"], tested["error"]["message"]) == ("untrusted", UNTRUSTED)
    written = await command(client, "taskdsl.newTask", {"text": "write a haiku about autumn leaves"})
    assert (written["xml"], written["error"]["reason"], written["error"]["message"]) == (None, "untrusted", UNTRUSTED)
    assert not (ws / "ran").exists()


async def test_an_untrusted_workspace_still_previews_and_lists_tests(client, ws):
    shown = await command(client, "taskdsl.previewPrompt", {"uri": (ws / "s.task.xml").as_uri()})
    assert "error" not in shown or not shown["error"], shown
    listed = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="taskdsl.listTests"))
    assert [t["name"] for f in listed["files"] for t in f["tests"]] == ["runs"]
    drawn = await command(client, "taskdsl.graph", {"uri": (ws / "s.task.xml").as_uri()})
    assert not drawn.get("error"), drawn
    matched = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.matchTasks", arguments=["touch a marker file", 5]))
    assert [row["name"] for row in matched] == ["s"]
    assert not (ws / "ran").exists()
