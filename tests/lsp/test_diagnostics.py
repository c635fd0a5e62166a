"""Diagnostics: pushed (VS Code 1.65, Emacs) or pulled (Neovim 0.11), never both; debounced
edits publish only the newest version; settings and library changes re-check open documents."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import pull_client
from paths import REPO

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = """<template name="summarize" params="text">
  <task>
    <description>Summarize {{text}}</description>
  </task>
</template>
"""
FILES = {"lib.task.xml": LIB}
SETTINGS = {"debounce": 50}

BAD_TYPE = """<task bogus="x">
  <description>x</description>
</task>
"""


async def roundtrip(client: LanguageClient, uri: str) -> None:
    """A request answered after every earlier notification was handled."""
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(types.TextDocumentIdentifier(uri)))


async def test_open_reports_with_code_source_and_range(client: LanguageClient, docs):
    uri = await docs.open("bad.task.xml", BAD_TYPE)
    diagnostics = await docs.diagnostics(uri)
    assert [(d.code, d.source, d.severity, d.range) for d in diagnostics] == [
        ("TD103", "taskdsl", types.DiagnosticSeverity.Error,
         types.Range(types.Position(0, 6), types.Position(0, 11))),
    ]
    assert "bogus" in diagnostics[0].message
    # the code links to its rule page (by default the pages installed with taskdsl)
    assert diagnostics[0].code_description.href == (REPO / "docs" / "rules" / "TD103.md").as_uri()
    docs.close(uri)


async def test_push_or_pull_never_both(client: LanguageClient, docs):
    uri = await docs.open("both.task.xml", BAD_TYPE)
    await roundtrip(client, uri)
    pushed = [p for p in client.published if p.uri == uri]
    if pull_client(client):
        assert pushed == []
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
        assert [d.code for d in report.items] == ["TD103"]
        # asking again for the same version: unchanged
        again = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri), previous_result_id=report.result_id))
        assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    else:
        assert [(p.version, [d.code for d in p.diagnostics]) for p in pushed] == [(1, ["TD103"])]
    docs.close(uri)


async def test_debounced_changes_publish_only_the_newest_version(client: LanguageClient, docs):
    if pull_client(client):
        pytest.skip("pull client: nothing is pushed")
    uri = await docs.open("edit.task.xml", BAD_TYPE)
    await docs.diagnostics(uri)
    client.published.clear()
    for version, text in ((2, BAD_TYPE.replace("bogus", "bogu")), (3, BAD_TYPE.replace("bogus", "bog")),
                          (4, BAD_TYPE.replace("bogus", "name"))):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))
    diagnostics = await docs.diagnostics(uri)
    assert diagnostics == []
    # save publishes at once (not debounced); by then the edits' checks are long settled
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await docs.diagnostics(uri)
    assert [(p.version, len(p.diagnostics)) for p in client.published if p.uri == uri] == [(4, 0), (4, 0)]
    docs.close(uri)


async def test_incremental_change_is_applied(client: LanguageClient, docs):
    uri = await docs.open("inc.task.xml", BAD_TYPE)
    assert [d.code for d in await docs.diagnostics(uri)] == ["TD103"]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 6), types.Position(0, 11)), text="name")]))
    if pull_client(client):
        assert await docs.diagnostics(uri) == []
    else:
        await asyncio.wait_for(_published_version(client, uri, 2), 10)
        assert [list(p.diagnostics) for p in client.published if p.uri == uri and p.version == 2] == [[]]
    docs.close(uri)


async def _published_version(client: LanguageClient, uri: str, version: int) -> None:
    while not any(p.uri == uri and p.version == version for p in client.published):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def test_references_across_files_are_checked(client: LanguageClient, docs):
    text = '<task ref="summarize">\n  <inputs><input name="text">hi</input></inputs>\n</task>\n'
    uri = await docs.open("uses.task.xml", text)
    assert await docs.diagnostics(uri) == []
    uri2 = await docs.open("missing.task.xml", text.replace("summarize", "summarise"))
    codes = [d.code for d in await docs.diagnostics(uri2)]
    assert codes == ["TD501"]
    docs.close(uri)
    docs.close(uri2)


async def test_document_that_does_not_parse_still_answers(client: LanguageClient, docs):
    uri = await docs.open("broken.task.xml", "<task>\n  <description>x</descr\n")
    diagnostics = await docs.diagnostics(uri)
    assert diagnostics and {d.code for d in diagnostics} == {"TD001"}
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri)))
    assert [s.name for s in symbols] == ["task"]
    docs.close(uri)


async def test_edits_below_unicode_line_separators_land_where_the_editor_made_them(client: LanguageClient, docs):
    """LSP lines end at \\n, \\r\\n or \\r only; U+2028 and U+0085 are text. An edit on line 2 must
    fix line 2 (pygls's own line splitting put it one line up, and the server's text drifted)."""
    text = "<task>\n  <description>a\u2028b\x85c</description>\n  <descripton>x</descripton>\n</task>\n"
    uri = await docs.open("separators.task.xml", text)
    assert [(d.code, d.range.start.line) for d in await docs.diagnostics(uri)] == [("TD101", 2)]
    line = "  <descripton>x</descripton>"
    fixed = line.replace("descripton", "criteria")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(2, 0), types.Position(2, len(line))), text=fixed)]))
    if not pull_client(client):
        await _published_version(client, uri, 2)
        client.diagnostics.pop(uri, None)
        published = [p for p in client.published if p.uri == uri and p.version == 2][-1]
        assert list(published.diagnostics) == []
    else:
        assert await docs.diagnostics(uri) == []
    docs.close(uri)
