"""Re-checks of other open documents after an open or an edit changed a definition: queued, never
done inside the handler; the document that was opened is published first, the others still get
up-to-date diagnostics, and a document edited meanwhile is checked at its newest version.

No test relies on how long anything takes: the debounce is longer than any test, so a queued
re-check is certainly still waiting when the test looks, and a save (published at once, not
debounced) is the event that brings the waiting document up to date. That the queue then runs by
itself is test_rechecks_queue.py's test (no debounce)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import pull_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

# the re-check queue waits one debounce period: ten minutes, so it is waiting whenever a test looks
SETTINGS = {"debounce": 600_000}


def task(name: str, word: str = "x") -> str:
    return f'<task name="{name}">\n  <description>Say {word}</description>\n</task>\n'


def publishes(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    return [p for p in client.published if p.uri == uri]


def save(client: LanguageClient, uri: str) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))


async def published(client: LanguageClient, uri: str, count: int) -> None:
    while len(publishes(client, uri)) < count:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


async def test_the_opened_document_is_published_before_the_others_are_rechecked(client: LanguageClient, docs):
    if pull_client(client):
        pytest.skip("a pull client is asked to refresh instead")
    first = await docs.open("first.task.xml", task("shared"))
    await asyncio.wait_for(published(client, first, 1), 30)
    assert list(publishes(client, first)[0].diagnostics) == []

    second = await docs.open("second.task.xml", task("shared", "y"))
    # the open's handler answered (a request after it is answered) without re-checking the other
    # document: its re-check is queued
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(types.TextDocumentIdentifier(second)))
    assert [d.code for d in publishes(client, second)[0].diagnostics] == ["TD502"]
    assert len(publishes(client, first)) == 1

    save(client, first)
    await asyncio.wait_for(published(client, first, 2), 30)
    assert [d.code for d in publishes(client, first)[1].diagnostics] == ["TD502"]
    order = [p.uri for p in client.published if p.uri in (first, second)]
    assert order == [first, second, first]
    docs.close(first)
    docs.close(second)


async def test_a_document_edited_while_its_recheck_waits_is_checked_at_its_newest_version(client: LanguageClient, docs):
    if pull_client(client):
        pytest.skip("a pull client is asked to refresh instead")
    first = await docs.open("edited.task.xml", task("twice"))
    await asyncio.wait_for(published(client, first, 1), 30)
    second = await docs.open("other.task.xml", task("twice", "y"))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=first, version=2),
        [types.TextDocumentContentChangeWholeDocument(text=task("twice", "z"))]))
    # its queued re-check and the edit's debounced check both wait; the save publishes it at once
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(types.TextDocumentIdentifier(first)))
    assert len(publishes(client, first)) == 1
    save(client, first)
    await asyncio.wait_for(published(client, first, 2), 30)
    later = publishes(client, first)[1:]
    assert [p.version for p in later] == [2] * len(later)
    assert [d.code for d in later[-1].diagnostics] == ["TD502"]
    assert [d.code for d in publishes(client, second)[0].diagnostics] == ["TD502"]
    docs.close(first)
    docs.close(second)
