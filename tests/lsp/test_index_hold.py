"""Before the first library index is built the server publishes no library-dependent
diagnostic (TD5xx: a ref it cannot resolve yet is not "not a task or template"), and hover and
go-to-definition say the library is being indexed; once the index is built the same document
gets the right diagnostics and both answer with the definition.

The index is held back by the client, deterministically: the server asks the client to create
the index's progress token (``window/workDoneProgress/create``) before it starts indexing, and
this client answers only after it has opened the document and asked everything below. Every
wait is on a message the server sends, never on time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import CLIENTS, SERVER, Docs, encoding, pos, pull_client
from taskdsl.features.navigation import INDEXING

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = """<library>
  <template name="greet" params="who"><task><description>Say hello to {{who}}.</description></task></template>
</library>
"""
MAIN = """<task name="report" type="sequential">
  <steps>
    <task ref="greet">
      <inputs>
        <input name="who">world</input>
      </inputs>
    </task>
    <task ref="gret"/>
  </steps>
</task>
"""
FILES = {"lib/greet.task.xml": LIB, "main.task.xml": MAIN}


def index_ended(client: LanguageClient) -> bool:
    return any(isinstance(report, types.WorkDoneProgressEnd)
               for token, reports in client.progress_reports.items() if str(token).startswith("taskdsl-index")
               for report in reports)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module", params=CLIENTS)
async def client(lsp_client: LanguageClient, request, ws: Path):
    lsp_client.set_configuration({}, section="taskdsl")
    lsp_client.published = []  # type: ignore[attr-defined]
    features = lsp_client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams):
        lsp_client.published.append(params)  # type: ignore[attr-defined]
        return keep(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    asked, release = asyncio.Event(), asyncio.Event()
    lsp_client.index_asked, lsp_client.index_release = asked, release  # type: ignore[attr-defined]

    async def create_progress(params: types.WorkDoneProgressCreateParams):
        lsp_client.progress_reports.setdefault(params.token, [])
        if str(params.token).startswith("taskdsl-index"):
            asked.set()
            await release.wait()  # the server starts indexing only once this is answered

    features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = create_progress  # in place of pytest-lsp's own

    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=client_capabilities(request.param),
        root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
    ))
    await asyncio.wait_for(asked.wait(), 120)  # a hang guard: the server is about to index
    yield
    release.set()
    await lsp_client.shutdown_session()


async def said(client: LanguageClient, message: str) -> None:
    while not any(m.message == message for m in client.messages):
        await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)


def codes_and_ranges(diagnostics) -> list[tuple[str, types.Range]]:
    return sorted(((str(d.code), d.range) for d in diagnostics), key=lambda found: (found[1].start.line, found[0]))


async def test_nothing_false_before_the_index_and_the_right_diagnostics_after(client: LanguageClient, ws: Path):
    docs = Docs(client, ws)
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    greet_at, gret_at = MAIN.index('ref="greet"') + 5, MAIN.index('ref="gret"') + 5
    assert not client.index_release.is_set()  # type: ignore[attr-defined]

    # before the index: no TD501 for either ref (one is defined in a file not yet indexed)
    assert codes_and_ranges(await docs.diagnostics(uri)) == []

    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), pos(MAIN, greet_at, enc)))
    assert hover is not None and "library is still being indexed" in hover.contents.value
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), pos(MAIN, greet_at, enc)))
    assert found is None
    await asyncio.wait_for(said(client, INDEXING), 60)  # a hang guard: the message precedes the answer
    assert [m.type for m in client.messages if m.message == INDEXING] == [types.MessageType.Info]
    # a position that names nothing in the library is answered empty without the message
    await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), types.Position(0, 0)))
    assert len([m for m in client.messages if m.message == INDEXING]) == 1
    assert not index_ended(client)

    # the index is built: the document is checked again, the misspelt ref alone is TD501
    seen = len(client.published)  # type: ignore[attr-defined]
    client.index_release.set()  # type: ignore[attr-defined]
    while not index_ended(client):
        await client.wait_for_notification(types.PROGRESS)
    if pull_client(client):
        after = await docs.diagnostics(uri)
    else:
        while not any(p.uri == uri for p in client.published[seen:]):  # type: ignore[attr-defined]
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        after = next(p for p in client.published[seen:] if p.uri == uri).diagnostics  # type: ignore[attr-defined]
    gret = types.Range(pos(MAIN, gret_at, enc), pos(MAIN, gret_at + len("gret"), enc))
    assert codes_and_ranges(after) == [("TD501", gret)]

    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), pos(MAIN, greet_at, enc)))
    assert "Say hello to" in hover.contents.value and "indexed" not in hover.contents.value
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), pos(MAIN, greet_at, enc)))
    lib_uri = docs.uri("lib/greet.task.xml")
    assert found == [types.Location(lib_uri, types.Range(types.Position(1, 18), types.Position(1, 23)))]
    assert len([m for m in client.messages if m.message == INDEXING]) == 1
