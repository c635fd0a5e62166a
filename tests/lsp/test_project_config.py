"""The project configuration in the editor: the server reports what `taskdsl check` reports for the
same file under the same taskdsl.toml, publishes the config file's own problems at the key, and
follows edits of the config file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_navigation import actions_of, changes_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

CONFIG = """globals = { project = "demo" }

[lint]
ignore = ["TD302"]
selct = ["TD3"]

[lint.per-file-ignores]
"drafts/*" = ["TD4"]
"""
TEMPLATE = """<task type="sequential">
  <steps>
    <task>
      <description>About {{project}}: {{missing}}</description>
      <context_management>
        <inherit_context>none</inherit_context>
        <fresh_context>disabled</fresh_context>
      </context_management>
    </task>
    <task>
      <!-- taskdsl: ignore[TD402] -->
      <description>{{other}}</description>
    </task>
    <!-- taskdsl: ignore[TD303] -->
    <task>
      <description>{{last_output}}</description>
    </task>
  </steps>
</task>
"""
FILES = {"taskdsl.toml": CONFIG, "a.task.xml": TEMPLATE, "drafts/b.task.xml": TEMPLATE}


def check_cli(ws, relative: str) -> list[tuple[str, int, int]]:
    done = subprocess.run([sys.executable, "-m", "taskdsl", "check", "--format", "json", relative], cwd=ws,
                          capture_output=True, text=True, timeout=120)
    return [(d["code"], d["line"] - 1, d["column"] - 1) for d in json.loads(done.stdout) if d["path"] == relative]


def summary(diagnostics) -> list[tuple[str, int, int]]:
    return sorted((d.code, d.range.start.line, d.range.start.character) for d in diagnostics)


async def test_config_problems_are_published_at_the_key(client: LanguageClient, ws):
    uri = (ws / "taskdsl.toml").as_uri()
    published = [p for p in client.published if p.uri == uri]
    assert published, "the config file's problems are pushed at start"
    assert [(d.code, d.severity, d.range, d.source) for d in published[-1].diagnostics] == [
        ("TD901", types.DiagnosticSeverity.Error, types.Range(types.Position(4, 0), types.Position(4, 5)), "taskdsl")]
    assert published[-1].diagnostics[0].message == "unknown key 'selct' in [lint]; did you mean 'select'?"


async def test_a_misspelt_config_key_has_a_quick_fix_renaming_it(client: LanguageClient, ws):
    uri = (ws / "taskdsl.toml").as_uri()
    (misspelt,) = [d for p in client.published if p.uri == uri for d in p.diagnostics][-1:]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=misspelt.range,
        context=types.CodeActionContext(diagnostics=[misspelt])))
    fixes = [a for a in actions_of(actions) if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in fixes] == ["Rename key 'selct' to 'select'"]
    assert changes_of(client, fixes[0].edit) == {uri: [(misspelt.range, "select")]}
    assert fixes[0].diagnostics[0].code == "TD901"


@pytest.mark.parametrize("relative", ["a.task.xml", "drafts/b.task.xml"])
async def test_server_reports_what_check_reports(client: LanguageClient, docs, ws, relative):
    uri = await docs.open(relative)
    in_editor = summary(await docs.diagnostics(uri))
    assert in_editor == sorted(check_cli(ws, relative))
    # TD302 ignored, {{project}} a global; the TD402 errors stay whatever the suppression and the
    # drafts/ per-file ignore say (an error is never hidden: the run refuses it)
    assert in_editor == [("TD402", 3, 38), ("TD402", 11, 19), ("TD904", 13, 4)]
    docs.close(uri)


async def test_unused_suppression_has_a_quick_fix_removing_its_line(client: LanguageClient, docs):
    uri = await docs.open("a.task.xml")
    (unused,) = [d for d in await docs.diagnostics(uri) if d.code == "TD904"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=unused.range,
        context=types.CodeActionContext(diagnostics=[unused])))
    fixes = [a for a in actions_of(actions) if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in fixes] == ["Remove the unused suppression"]
    whole_line = types.Range(types.Position(13, 0), types.Position(14, 0))
    assert changes_of(client, fixes[0].edit) == {uri: [(whole_line, "")]}
    docs.close(uri)


async def test_editing_the_config_file_applies_at_once(client: LanguageClient, docs, ws):
    uri = await docs.open("a.task.xml")
    await docs.diagnostics(uri)
    config_uri = (ws / "taskdsl.toml").as_uri()
    client.published.clear()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=config_uri, language_id="toml", version=1, text='[lint]\nselect = ["TD3"]\n')))
    while not any(p.uri == config_uri and not p.diagnostics for p in client.published):  # its problems are gone
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 60)
    assert list([p.diagnostics for p in client.published if p.uri == config_uri][-1]) == []
    client.diagnostics.pop(uri, None)  # a re-check published before the edit applied; the next is after it
    # only TD3xx warnings; {{project}} no longer a global: its TD402 error is reported, as every error is
    assert summary(await docs.diagnostics(uri)) == [("TD302", 2, 5), ("TD402", 3, 25), ("TD402", 3, 38),
                                                    ("TD402", 11, 19)]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(config_uri)))
    docs.close(uri)
