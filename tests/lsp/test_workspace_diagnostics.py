"""Workspace diagnostics (pull, `workspace/diagnostic`): the files nobody opened are checked too,
against the library; unchanged files are answered unchanged; every code links to its rule page
under the `docs.rulesUrl` setting."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = '<template name="summarize" params="text">\n  <task>\n    <description>Summarize {{text}}</description>\n  </task>\n</template>\n'
USES_MISSING = '<task ref="summarise">\n  <inputs><input name="text">hi</input></inputs>\n</task>\n'
BAD_ATTR = '<task bogus="x">\n  <description>x</description>\n</task>\n'
FILES = {"lib.task.xml": LIB, "uses.task.xml": USES_MISSING, "sub/bad.task.xml": BAD_ATTR,
         "notes.xml": "<task bogus='not a template file'/>"}
SETTINGS = {"docs": {"rulesUrl": "https://example.org/taskdsl/docs/rules/"}}


async def pull_workspace(client: LanguageClient, previous=()) -> dict[str, types.WorkspaceDocumentDiagnosticReport]:
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[types.PreviousResultId(uri=uri, value=value) for uri, value in previous]))
    return {item.uri: item for item in report.items}


async def test_the_server_offers_workspace_diagnostics(client: LanguageClient):
    provider = client.init_result.capabilities.diagnostic_provider
    assert provider.workspace_diagnostics is True and provider.inter_file_dependencies is True


async def test_unopened_files_are_checked_against_the_library(client: LanguageClient, ws):
    reports = await pull_workspace(client)
    codes = {uri: [(d.code, d.range.start.line, d.range.start.character, d.code_description.href)
                   for d in report.items] for uri, report in reports.items()}
    assert codes == {
        (ws / "lib.task.xml").as_uri(): [],
        (ws / "uses.task.xml").as_uri(): [("TD501", 0, 11, "https://example.org/taskdsl/docs/rules/TD501.md")],
        (ws / "sub" / "bad.task.xml").as_uri(): [("TD103", 0, 6, "https://example.org/taskdsl/docs/rules/TD103.md")],
    }  # notes.xml is not a template file (`files` setting): not reported


async def test_unchanged_files_are_answered_unchanged_and_edits_on_disk_are_seen(client: LanguageClient, ws):
    first = await pull_workspace(client)
    again = await pull_workspace(client, [(uri, report.result_id) for uri, report in first.items()])
    assert {uri: report.kind for uri, report in again.items()} == {uri: "unchanged" for uri in first}
    bad = ws / "sub" / "bad.task.xml"
    bad.write_text(BAD_ATTR.replace("bogus", "name") + "\n", encoding="utf-8")
    try:
        third = await pull_workspace(client, [(uri, report.result_id) for uri, report in first.items()])
        assert third[bad.as_uri()].kind == "full" and list(third[bad.as_uri()].items) == []
        assert third[(ws / "lib.task.xml").as_uri()].kind == "unchanged"
    finally:
        bad.write_text(BAD_ATTR, encoding="utf-8")


async def test_open_documents_are_left_to_document_pulls(client: LanguageClient, ws):
    uri = (ws / "uses.task.xml").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="taskxml", version=1, text=USES_MISSING)))
    try:
        reports = await pull_workspace(client)
        assert uri not in reports and (ws / "lib.task.xml").as_uri() in reports
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
