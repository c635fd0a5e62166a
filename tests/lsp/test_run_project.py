"""The editor's Run task resolves against the live index, as `taskdsl run` does: libraryPaths
files, the globals, and the unsaved buffers of the other files the run reaches."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

SHARED = Path(tempfile.mkdtemp(prefix="taskdsl-shared-"))
(SHARED / "greeting.task.xml").write_text("""\
<template name="greeting" params="who">
  <task>
    <description>Greet {{who}} for {{audience}}</description>
  </task>
</template>
""", encoding="utf-8")
(SHARED / "venv").mkdir()
(SHARED / "venv" / "hidden.task.xml").write_text(
    '<template name="hidden" params="x"><task><description>{{x}}</description></task></template>\n',
    encoding="utf-8")

SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": tempfile.mkdtemp(prefix="taskdsl-run-tests-")},
            "libraryPaths": [str(SHARED)], "globals": ["audience"]}

FILES = {
    "main.task.xml": """\
<task type="sequential" name="main">
  <description>Greet through the shared library</description>
  <steps>
    <call template="greeting"><arg>Ada</arg></call>
  </steps>
</task>
""",
    "local.task.xml": """\
<task type="sequential" name="local">
  <description>Call a template of this workspace</description>
  <steps>
    <call template="shout"><arg>hi</arg></call>
  </steps>
</task>
""",
    "shout.task.xml": """\
<template name="shout" params="text">
  <task>
    <description>Say {{text}} on disk</description>
  </task>
</template>
""",
    "hidden.task.xml": """\
<task type="sequential" name="uses_hidden">
  <description>A template in a venv folder is not part of the library</description>
  <steps>
    <call template="hidden"><arg>x</arg></call>
  </steps>
</task>
""",
}

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def execute(client, *arguments):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="taskdsl.runTask", arguments=list(arguments)))


async def test_a_template_of_the_library_paths_runs_with_a_global(client, ws):
    result = await execute(client, (ws / "main.task.xml").as_uri(), None, {"audience": "engineers"})
    assert result["error"] is None
    assert (result["status"], result["content"]) == ("COMPLETE", "Greet Ada for engineers")


async def test_the_run_reads_the_unsaved_buffer_of_a_template_it_calls(client, ws):
    uri = (ws / "shout.task.xml").as_uri()
    edited = FILES["shout.task.xml"].replace("on disk", "from the buffer")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="xml", version=1, text=edited)))
    try:
        result = await execute(client, (ws / "local.task.xml").as_uri())
        assert (result["status"], result["content"]) == ("COMPLETE", "Say hi from the buffer")
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def test_a_template_under_venv_is_refused_with_the_checkers_error(client, ws):
    result = await execute(client, (ws / "hidden.task.xml").as_uri())
    assert result["status"] == "FAILED"
    assert result["error"]["reason"] == "template_errors"
    assert "4:21 TD501 'hidden' is not a task or template in the library" in result["error"]["message"]
