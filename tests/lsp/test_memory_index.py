"""The memory index in the editor: its file's problems are pushed at the key (TD906-TD908, as
`taskdsl memory show` reports them), follow edits of the open buffer, and hovering an enabled
<fresh_context> says which files the task would get now."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos

pytestmark = pytest.mark.asyncio(loop_scope="module")

INDEX = '{\n  "reports/q3.md": "Q3 revenue and costs",\n  "gone.md": "old",\n  "../secret.txt": "keys"\n}\n'
TASK = """<task name="revenue">
  <description>Write about the quarterly revenue</description>
  <context_management>
    <inherit_context>none</inherit_context>
    <fresh_context>enabled</fresh_context>
  </context_management>
</task>
"""
FILES = {"taskdsl.toml": "", "reports/q3.md": "# Quarter three\n", "reports/hr.md": "# Holidays\n",
         ".taskdsl/memory.json": INDEX, "revenue.task.xml": TASK}


async def index_problems(client: LanguageClient, uri: str, count: int | None = None):
    for _ in range(300):
        found = [p for p in client.published if p.uri == uri]
        if found and (count is None or len(found[-1].diagnostics) == count):
            return found[-1].diagnostics
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics published for {uri}")


async def test_the_index_problems_are_pushed_at_the_key(client: LanguageClient, ws):
    uri = (ws / ".taskdsl" / "memory.json").as_uri()
    problems = await index_problems(client, uri)
    enc = encoding(client)
    assert [(d.code, d.severity, d.range.start, d.range.end) for d in problems] == [
        ("TD907", types.DiagnosticSeverity.Warning, pos(INDEX, INDEX.index('"gone.md"'), enc),
         pos(INDEX, INDEX.index('"gone.md"') + 9, enc)),
        ("TD908", types.DiagnosticSeverity.Error, pos(INDEX, INDEX.index('"../secret.txt"'), enc),
         pos(INDEX, INDEX.index('"../secret.txt"') + 15, enc)),
    ]
    assert problems[1].message.startswith("'../secret.txt' is outside the project")


async def test_editing_the_open_index_checks_the_buffer(client: LanguageClient, docs, ws):
    uri = (ws / ".taskdsl" / "memory.json").as_uri()
    client.published.clear()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="json", version=1, text=json.dumps({"reports/q3.md": "Q3"}))))
    assert list(await index_problems(client, uri, 0)) == []
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [types.TextDocumentContentChangeWholeDocument(text='{"reports/q3.md": 3}')]))
    (problem,) = await index_problems(client, uri, 1)
    assert (problem.code, problem.message) == ("TD906", "the metadata of 'reports/q3.md' must be a string (what the "
                                                        "file is about)")
    docs.close(uri)
    assert len(await index_problems(client, uri, 2)) == 2  # closed: the file on disk again


async def test_hover_on_fresh_context_says_what_it_would_match_now(client: LanguageClient, docs):
    uri = await docs.open("revenue.task.xml")
    await docs.diagnostics(uri)
    at = pos(TASK, TASK.index("enabled") + 2, encoding(client))
    found = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    text = found.contents.value
    assert "from the memory index" in text and "reports/q3.md" in text and "Q3 revenue and costs" in text
    assert "reports/hr.md" not in text
    docs.close(uri)
