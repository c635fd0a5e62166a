"""taskdsl.graph through the server, under the recorded capabilities of VS Code, Neovim and Emacs:
the picture `taskdsl graph` draws, of the editor's buffer, the entry at the cursor, and a run's
steps coloured on it (the steps the run command answers with)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys

import pytest
from lsprotocol import types
from paths import need

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETTINGS = {"model": "taskdsl/echo"}

FILES = {
    "lib.task.xml": """<library>
  <template name="shout" params="text">
    <task type="script"><command>printf '%s' {{text}} | tr a-z A-Z</command></task>
  </template>
  <task name="twice" type="sequential">
    <steps>
      <call template="shout"><arg>"a"</arg></call>
      <call template="shout"><arg>"b"</arg></call>
    </steps>
  </task>
</library>
""",
    "flow.task.xml": """<task type="sequential" name="flow">
  <steps>
    <task type="script" name="first"><command>echo hello</command></task>
    <task type="script" name="second"><command>exit 4</command></task>
    <task type="script" name="third"><command>echo never</command></task>
  </steps>
</task>
""",
    "evil.task.xml": """<task type="sequential" name="evil">
  <steps>
    <task type="script" name="x"><description>d</description><command>echo '&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;'</command></task>
  </steps>
</task>
""",
}


async def command(client, name, *arguments, timeout=60):
    return await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))), timeout)


async def graph(client, *arguments):
    return await command(client, "taskdsl.graph", *arguments)


def cli_graph(path, *options) -> str:
    return subprocess.run([sys.executable, "-m", "taskdsl", "graph", str(path), *options],
                          capture_output=True, text=True, check=True).stdout


async def test_the_command_is_advertised(client):
    assert "taskdsl.graph" in client.init_result.capabilities.execute_command_provider.commands


async def test_the_server_draws_what_taskdsl_graph_prints(client, ws):
    answer = await graph(client, {"uri": (ws / "flow.task.xml").as_uri(), "format": "mermaid"})
    assert answer["error"] is None and answer["task"] == "flow" and answer["unmapped"] == []
    assert (answer["format"], answer["text"]) == ("mermaid", await asyncio.to_thread(cli_graph, ws / "flow.task.xml"))


async def test_svg_by_default_when_graphviz_is_installed(client, ws):
    need(shutil.which("dot") is not None, "Graphviz's dot")
    answer = await graph(client, (ws / "flow.task.xml").as_uri())
    assert answer["format"] == "svg" and answer["hint"] is None
    assert answer["text"].lstrip().startswith("<?xml") and "<svg" in answer["text"] and ">second</text>" in answer["text"]


async def test_the_buffer_is_drawn_not_the_disk(client, ws, docs):
    text = (ws / "flow.task.xml").read_text().replace('name="third"', 'name="renamed"')
    uri = await docs.open("flow.task.xml", text)
    try:
        answer = await graph(client, {"uri": uri, "format": "dot"})
        assert '"renamed\\nscript: echo never"' in answer["text"] and "third" not in answer["text"]
    finally:
        docs.close(uri)


async def test_the_entry_at_the_cursor_of_a_library_is_drawn(client, ws):
    uri = (ws / "lib.task.xml").as_uri()
    at_twice = await graph(client, {"uri": uri, "format": "mermaid", "position": {"line": 5, "character": 4}})
    assert at_twice["task"] == "twice"
    assert at_twice["text"] == await asyncio.to_thread(cli_graph, ws / "lib.task.xml", "--task", "twice")
    at_shout = await graph(client, {"uri": uri, "format": "mermaid", "position": {"line": 2, "character": 8}})
    assert at_shout["task"] == "shout" and at_shout["text"].splitlines()[1] == '  n1[["template shout(text)"]]'
    named = await graph(client, {"uri": uri, "task": "shout", "format": "mermaid"})
    assert named["text"] == at_shout["text"]


async def test_a_run_is_coloured_on_the_picture(client, ws):
    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def agree(params: types.ShowMessageRequestParams):  # the run's consent question: "Run"
        return next(action for action in params.actions if action.title == "Run")

    uri = (ws / "flow.task.xml").as_uri()
    run = await command(client, "taskdsl.runTask", uri)
    assert run["status"] == "FAILED"
    answer = await graph(client, {"uri": uri, "format": "dot", "steps": run["steps"]})
    assert answer["unmapped"] == []
    lines = answer["text"].splitlines()

    def node(name: str) -> str:
        return next(line for line in lines if f'label="{name}\\nscript' in line)

    assert "\\n✓ ok " in node("first") and 'fillcolor="#c8e6c9"' in node("first")
    assert "\\n✗ error " in node("second") and 'fillcolor="#ffcdd2"' in node("second")
    assert '\\nnot run"' in node("third")


async def test_steps_the_picture_does_not_have_are_answered(client, ws):
    answer = await graph(client, {"uri": (ws / "flow.task.xml").as_uri(), "format": "dot",
                                  "steps": [{"path": "flow/steps[7]", "status": "COMPLETE", "duration_s": 0.5}]})
    assert answer["error"] is None and answer["unmapped"] == ["flow/steps[7]"]


async def test_labels_are_text_in_the_svg_never_markup(client, ws):
    need(shutil.which("dot") is not None, "Graphviz's dot")
    answer = await graph(client, {"uri": (ws / "evil.task.xml").as_uri()})
    assert "<script" not in answer["text"] and "&lt;script&gt;" in answer["text"]


@pytest.mark.parametrize(("arguments", "message"), [
    ([], "taskdsl.graph needs the document's uri"),
    ([{"uri": "file:///x.task.xml", "format": "png"}], "taskdsl.graph: format must be one of mermaid, dot, svg"),
    ([{"uri": "file:///x.task.xml", "position": {"line": -1, "character": 0}}],
     'taskdsl.graph: position must be {"line": N, "character": N}'),
    ([{"uri": "file:///x.task.xml", "steps": "all"}],
     "taskdsl.graph: steps must be a list of a run's steps ({path, status, duration_s})"),
    (["untitled:Untitled-1"], "only files can be drawn, not untitled:Untitled-1"),
])
async def test_bad_arguments_get_a_message_not_a_traceback(client, arguments, message):
    answer = await graph(client, *arguments)
    assert answer["text"] == "" and answer["error"]["message"] == message


async def test_a_template_that_does_not_check_says_so(client, ws, docs):
    uri = await docs.open("broken.task.xml", '<task name="broken" type="sequential"><steps><task ref="no_such_task"/>'
                                              '</steps></task>\n')
    try:
        answer = await graph(client, {"uri": uri, "format": "mermaid"})
        assert answer["format"] is None and answer["error"]["type"] == "VALIDATION_ERROR"
        assert "fix them before running" in answer["error"]["message"]
    finally:
        docs.close(uri)
