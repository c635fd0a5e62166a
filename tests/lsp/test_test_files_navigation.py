"""A test file (*.test.xml) names its task by `task="…"` and binds its inputs by `<input name>`:
references and rename of the task or of its input cover the test file too, and definition,
references and hover answer from `task="…"` inside the test file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos

pytestmark = pytest.mark.asyncio(loop_scope="module")

TASK = """<task name="classify">
  <description>Sort a support ticket into a queue</description>
  <instructions>Classify {{ticket}}</instructions>
  <inputs><input name="ticket"/></inputs>
</task>
"""
TESTS = """<tests>
  <test name="a bug is a bug" task="classify">
    <input name="ticket">the app crashes</input>
    <expect test='"crashes" in output'/>
  </test>
</tests>
"""
FILES = {"atomic.task.xml": TASK, "atomic.test.xml": TESTS}


def span(text: str, needle: str, n: int = 1) -> tuple[int, int, int]:
    """(line, start, end) of the n-th occurrence of needle (ASCII texts: every encoding agrees)."""
    at = -1
    for _ in range(n):
        at = text.index(needle, at + 1)
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("\n", 0, at), at - line_start, at - line_start + len(needle)


def located(found) -> list[tuple[str, int, int, int]]:
    return sorted((Path(l.uri).name, l.range.start.line, l.range.start.character, l.range.end.character)
                  for l in found)


def edited(edit: types.WorkspaceEdit) -> dict[str, list[tuple[int, int, int, str]]]:
    changes = ({c.text_document.uri: c.edits for c in edit.document_changes} if edit.document_changes
               else edit.changes)
    return {Path(uri).name: sorted((e.range.start.line, e.range.start.character, e.range.end.character, e.new_text)
                                   for e in edits) for uri, edits in changes.items()}


def apply(text: str, edits: list[tuple[int, int, int, str]]) -> str:
    lines = text.split("\n")
    for line, start, end, new in sorted(edits, reverse=True):
        lines[line] = lines[line][:start] + new + lines[line][end:]
    return "\n".join(lines)


async def test_renaming_a_task_edits_the_test_file_that_names_it(client: LanguageClient, docs, ws: Path, tmp_path):
    uri = await docs.open("atomic.task.xml")
    at = TASK.index("classify") + 2
    edit = await client.text_document_rename_async(types.RenameParams(
        types.TextDocumentIdentifier(uri), pos(TASK, at, encoding(client)), "triage"))
    changes = edited(edit)
    assert changes == {"atomic.task.xml": [(*span(TASK, "classify"), "triage")],
                       "atomic.test.xml": [(*span(TESTS, "classify"), "triage")]}
    # the renamed copy still checks: the test names the task by its new name (no TD501)
    from taskdsl.rules.checker import check_index
    from taskdsl.library import Library
    from taskdsl.project.settings import Settings

    copy = tmp_path / "copy"
    shutil.copytree(ws, copy)
    for name, edits in changes.items():
        (copy / name).write_text(apply((ws / name).read_text(encoding="utf-8"), edits), encoding="utf-8")
    results = check_index(Library.from_paths([copy], Settings(), keep_documents=True))
    assert {Path(p).name: [d.code for d in r.diagnostics] for p, r in results.items()} == {
        "atomic.task.xml": [], "atomic.test.xml": []}
    docs.close(uri)


async def test_renaming_a_tasks_input_renames_the_tests_input(client: LanguageClient, docs):
    uri = await docs.open("atomic.task.xml")
    at = TASK.index('name="ticket"') + 7
    edit = await client.text_document_rename_async(types.RenameParams(
        types.TextDocumentIdentifier(uri), pos(TASK, at, encoding(client)), "issue"))
    assert edited(edit) == {
        "atomic.task.xml": sorted([(*span(TASK, "ticket", 2), "issue"), (*span(TASK, "ticket", 3), "issue")]),
        "atomic.test.xml": [(*span(TESTS, "ticket"), "issue")]}
    docs.close(uri)


async def test_definition_references_and_hover_from_the_test_files_task(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("atomic.test.xml")
    at = pos(TESTS, TESTS.index('task="classify"') + 8, enc)
    where = types.TextDocumentIdentifier(uri)
    found = await client.text_document_definition_async(types.DefinitionParams(where, at))
    assert located(found) == [("atomic.task.xml", *span(TASK, "classify"))]

    references = await client.text_document_references_async(types.ReferenceParams(
        text_document=where, position=at, context=types.ReferenceContext(include_declaration=True)))
    assert located(references) == [("atomic.task.xml", *span(TASK, "classify")),
                                   ("atomic.test.xml", *span(TESTS, "classify"))]

    hover = await client.text_document_hover_async(types.HoverParams(where, at))
    assert hover is not None and "Sort a support ticket into a queue" in hover.contents.value
    line, start, end = span(TESTS, "classify")
    assert hover.range == types.Range(types.Position(line, start), types.Position(line, end))

    # the test's <input name>: the task's input it binds
    found = await client.text_document_definition_async(
        types.DefinitionParams(where, pos(TESTS, TESTS.index('"ticket"') + 2, enc)))
    assert located(found) == [("atomic.task.xml", *span(TASK, "ticket", 3))]  # its <input name>
    docs.close(uri)
