"""taskdsl.previewPrompt through the server, under the recorded capabilities of VS Code, Neovim
and Emacs: the same text as `taskdsl render`, from the editor's buffers and live index."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETTINGS = {"model": "taskdsl/echo"}

FILES = {
    "lib.task.xml": """<library>
  <template name="translate" params="text, language">
    <task><system>Keep the tone.</system><instructions>Translate into {{language}}: {{text}}</instructions></task>
  </template>
</library>
""",
    "ask.task.xml": """<task name="ask">
  <instructions>Answer: {{question}}</instructions>
  <inputs><input name="question">Why is the sky blue?</input></inputs>
</task>
""",
}


async def preview(client, *arguments):
    return await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="taskdsl.previewPrompt", arguments=list(arguments))), 20)


async def test_the_server_previews_what_render_prints(client, ws):
    uri = (ws / "lib.task.xml").as_uri()
    answer = await preview(client, uri, "translate", {"text": "hi", "language": "French"})
    rendered = subprocess.run([sys.executable, "-m", "taskdsl", "render", str(ws / "lib.task.xml"), "--task",
                               "translate", "--input", "text=hi", "--input", "language=French"],
                              capture_output=True, text=True, env={"TASKDSL_MODEL": "taskdsl/echo", "PATH": ""})
    assert rendered.returncode == 0, rendered.stderr
    assert answer["error"] is None
    assert answer["text"] == rendered.stdout
    [prompt] = answer["prompts"]
    assert (prompt["task"], prompt["model"], prompt["user"]) == ("translate", "taskdsl/echo", "Translate into French: hi")


async def test_an_open_buffer_is_previewed_as_typed(client, docs):
    uri = await docs.open("ask.task.xml", FILES["ask.task.xml"].replace("Answer:", "Reply briefly:"))
    answer = await preview(client, {"uri": uri})
    assert [p["user"] for p in answer["prompts"]] == ["Reply briefly: Why is the sky blue?"]
    docs.close(uri)


async def test_bad_arguments_and_bad_files_answer_an_error_and_the_server_stays(client, ws):
    answer = await preview(client, 42)
    assert answer == {"text": "", "prompts": [], "error": {
        "type": "VALIDATION_ERROR", "reason": "arguments", "details": {},
        "message": "taskdsl.previewPrompt needs the document's uri as its first argument"}}
    answer = await preview(client, (ws / "lib.task.xml").as_uri(), "nope")
    assert answer["error"]["message"] == "no task 'nope' in lib.task.xml; it defines translate"
    answer = await preview(client, (ws / "ask.task.xml").as_uri())
    assert answer["error"] is None
