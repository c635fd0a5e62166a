"""One hostile document never holds up another's diagnostics: a large document is parsed and checked
off the event loop, its diagnostics are capped with a final "N more", and a small broken document
opened after it gets its diagnostics first."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types

from conftest import pull_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOSTILE = '<task name="t"><description>' + "{{x}} " * 60_000 + "</description></task>\n"
SMALL = '<task name="s"><description>{{nothing_here}}</description></task>\n'


async def test_a_small_document_is_checked_while_a_huge_one_is_still_being_checked(client, docs):
    if pull_client(client):
        hostile_uri = await docs.open("hostile.task.xml", HOSTILE)
        small_uri = await docs.open("small.task.xml", SMALL)
        hostile = asyncio.ensure_future(client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(hostile_uri))))
        await asyncio.sleep(0)
        small = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(small_uri)))
        assert not hostile.done()  # the small answer came first
        assert [d.code for d in small.items] == ["TD402"]
        items = list((await hostile).items)
    else:
        client.published.clear()
        hostile_uri = await docs.open("hostile.task.xml", HOSTILE)
        small_uri = await docs.open("small.task.xml", SMALL)
        while not any(p.uri == hostile_uri for p in client.published):
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        order = [p.uri for p in client.published if p.uri in (hostile_uri, small_uri)]
        assert order.index(small_uri) < order.index(hostile_uri)
        [small] = [p for p in client.published if p.uri == small_uri]
        assert [d.code for d in small.diagnostics] == ["TD402"]
        [published] = [p for p in client.published if p.uri == hostile_uri]
        items = published.diagnostics
    assert len(items) == 501
    assert items[-1].message == ("59,500 more diagnostics are not shown (at most 500 per document); "
                                 "`taskdsl check` lists them all")
    assert all(d.code == "TD402" for d in items[:-1])
    docs.close(hostile_uri)
    docs.close(small_uri)


@pytest.mark.parametrize("command", ["taskdsl.runTask", "taskdsl.previewPrompt", "taskdsl.runTest"])
async def test_an_editor_command_on_a_device_is_refused_and_the_server_answers_on(client, docs, ws, command):
    """file:///dev/zero once grew the server to gigabytes: the one reader refuses a device."""
    link = ws / "zero.task.xml"
    if not link.exists():
        link.symlink_to("/dev/zero")
    for uri in ("file:///dev/zero", link.as_uri()):
        try:
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=[{"uri": uri}]))
        except Exception as error:  # an error answer is a refusal too
            result = {"error": str(error)}
        assert "is not a regular file" in json.dumps(result, default=str) or "no test" in json.dumps(result, default=str)
    uri = await docs.open(f"after-{command}.task.xml", SMALL)  # and the server still answers
    assert [d.code for d in await docs.diagnostics(uri)] == ["TD402"]
    docs.close(uri)
