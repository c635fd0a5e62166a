"""taskdsl.listTests (what VS Code's Test Explorer lists) under the recorded capabilities of VS Code,
Neovim and Emacs: every <test> of the project's *.test.xml files with its task, line and range,
open buffers as they are now, nothing from ignored folders."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import encoding, pos

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIBRARY = """<library>
  <task name="say">
    <description>Say {{word}}</description>
    <inputs><input name="word"/></inputs>
  </task>
</library>
"""
TESTS = """<tests>
  <test name="says hi" task="say">
    <input name="word">hi</input>
    <expect test='"Say" in output'/>
  </test>
  <test name="says bye" task="say">
    <input name="word">bye</input>
  </test>
</tests>
"""
OTHER = """<tests>
  <test name="déjà vu" task="say"><input name="word">again</input></test>
</tests>
"""
FILES = {"lib.task.xml": LIBRARY, "a.test.xml": TESTS, "sub/b.test.xml": OTHER,
         "node_modules/x.test.xml": TESTS, "plain.task.xml": LIBRARY.replace("say", "said")}
SETTINGS = {"model": "taskdsl/echo"}


def tag_range(text: str, needle: str, enc: str) -> types.Range:
    start = text.index(needle) + 1
    return types.Range(pos(text, start, enc), pos(text, start + len("test"), enc))


async def list_tests(client, *args):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="taskdsl.listTests", arguments=list(args)))


async def test_lists_every_test_of_the_project(client, ws):
    enc = encoding(client)
    answer = await list_tests(client)
    files = answer["files"]
    assert [f["path"] for f in files] == [str(ws / "a.test.xml"), str(ws / "sub" / "b.test.xml")]
    assert files[0]["uri"] == (ws / "a.test.xml").as_uri()
    first = files[0]["tests"]
    assert [(t["name"], t["task"], t["line"]) for t in first] == [("says hi", "say", 2), ("says bye", "say", 6)]
    expected = tag_range(TESTS, '<test name="says bye"', enc)
    got = first[1]["range"]
    assert (got["start"]["line"], got["start"]["character"], got["end"]["character"]) == (
        expected.start.line, expected.start.character, expected.end.character)
    assert [t["name"] for t in files[1]["tests"]] == ["déjà vu"]


async def test_an_open_buffer_is_listed_as_it_is_now(client, docs, ws):
    edited = TESTS.replace('name="says bye"', 'name="waves"')
    uri = await docs.open("a.test.xml", edited)
    answer = await list_tests(client, {"uri": uri})
    assert [[t["name"] for t in f["tests"]] for f in answer["files"]] == [["says hi", "waves"]]
    docs.close(uri)
