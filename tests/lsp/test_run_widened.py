"""The editor's Run in a project whose own taskdsl.toml widens what a run may read: the question shows
the folder and why it asks, the run reads there only after the user agreed, and a declined question
runs nothing (the one run path refuses a widened plan nobody agreed to)."""

from __future__ import annotations

import tempfile

import pytest
from lsprotocol import types

SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": tempfile.mkdtemp(prefix="taskdsl-widened-tests-")}}
OUTSIDE = tempfile.mkdtemp(prefix="taskdsl-outside-")  # a folder outside the project: the project allows it
FILES = {
    "taskdsl.toml": f'[run]\nallow_read = ["{OUTSIDE}"]\n',
    "reads.task.xml": f'<task name="reads"><description>Read</description><file_paths><path>{OUTSIDE}/notes.txt'
                      "</path></file_paths></task>\n",
}
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def run(client, ws):
    with open(f"{OUTSIDE}/notes.txt", "w", encoding="utf-8") as f:
        f.write("outside notes\n")
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.runTask", arguments=[{"uri": (ws / "reads.task.xml").as_uri(), "wait": True}]))


async def test_the_question_shows_what_the_project_widens_and_only_a_yes_runs_it(asked, ws):
    client = asked
    client.answers = ["Cancel"]
    declined = await run(client, ws)
    assert declined["status"] == "CANCELLED" and declined["error"]["reason"] == "declined"
    [question] = client.questions
    lines = question.message.splitlines()
    assert "  with what the project's configuration widens (it applies only if you agree):" in lines
    assert f"    [run] allow_read = {OUTSIDE}" in lines
    assert lines[-3] == ("Asked because it reads files outside the template's folder and the project's configuration "
                         "widens what it may read, write or run (allow_read, trace_dir, library_paths).")
    client.questions.clear()
    client.answers = ["Run"]
    agreed = await run(client, ws)
    assert agreed["status"] == "COMPLETE", agreed  # the file outside was read: refused, the run would have failed
