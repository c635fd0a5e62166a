"""taskdsl.matchTasks through the server, under the recorded capabilities of VS Code, Neovim and
Emacs: the same ranked list as `taskdsl match --json`, and a clear error for bad arguments."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

# the client lives in the module's event loop: a test run in a loop of its own never sees an answer
pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {
    "word_count.task.xml": """\
<task name="word_count" type="script">
  <description>Count the words of a text</description>
  <criteria>count, words, length</criteria>
  <command>wc -w</command>
</task>
""",
    "lib/text.task.xml": """\
<library>
  <template name="summarise" params="text">
    <task>
      <description>Summarise a text in bullet points</description>
      <instructions>Summarise: {{text}}</instructions>
    </task>
  </template>
  <template name="split_long_input" params="text">
    <task subtype="reparse">
      <description>Split a long text into parts</description>
      <instructions>Split {{text}}</instructions>
    </task>
  </template>
</library>
""",
}


async def match(client, *arguments):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="taskdsl.matchTasks", arguments=list(arguments)))


async def test_the_command_is_advertised(client):
    commands = client.init_result.capabilities.execute_command_provider.commands
    assert "taskdsl.matchTasks" in commands


async def test_match_tasks_ranks_the_workspace_library(client, ws):
    rows = await match(client, "count the words of my essay")
    assert rows[0] == {"name": "word_count", "score": rows[0]["score"], "kind": "standard",
                       "path": str(ws / "word_count.task.xml"), "line": 1,
                             "description": "Count the words of a text"}
    assert 0 < rows[0]["score"] <= 1
    # the command line gives the same list for the same library
    # (run without blocking the loop the client reads the server's messages in)
    cli = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskdsl", "match", "count the words of my essay", "--json",
        cwd=ws, stdout=asyncio.subprocess.PIPE)
    stdout, _ = await cli.communicate()
    assert json.loads(stdout) == rows


async def test_match_tasks_takes_an_object_and_a_limit(client, ws):
    rows = await match(client, {"text": "split a long text into parts", "limit": 1})
    assert [(r["name"], r["kind"], r["line"]) for r in rows] == [("split_long_input", "reparse", 8)]


@pytest.mark.parametrize("arguments, message", [
    ([], "taskdsl.matchTasks needs the request text as its first argument"),
    (["words", 0], "taskdsl.matchTasks: limit must be a whole number from 1 to 100"),
    ([{"text": 5}], "taskdsl.matchTasks needs the request text as its first argument"),
])
async def test_bad_arguments_are_a_clear_error(client, arguments, message):
    with pytest.raises(JsonRpcException) as info:
        await match(client, *arguments)
    assert message in str(info.value)
    assert await match(client, "summarise a text")  # the server still answers
