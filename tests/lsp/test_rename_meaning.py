"""Rename never changes what a template computes, and references list what rename edits: each
rename the server answers is applied to a copy of the workspace, which must check as before and
run (offline echo model) to the same output."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos
from rename_texts import LIB, MAIN, OUTPUT, nth

from taskdsl.library import Library
from taskdsl.project.settings import Settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = {"lib.task.xml": LIB, "main.task.xml": MAIN}
TEXTS = FILES


def offset_of(text: str, position: types.Position, enc: str) -> int:
    line_start = 0
    for _ in range(position.line):
        line_start = text.index("\n", line_start) + 1
    line = text[line_start:]
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return line_start + index
        units += len(char.encode("utf-8")) if enc == "utf-8" else 1 if enc == "utf-32" else len(char.encode("utf-16-le")) // 2
    return line_start + len(line)


def edits_of(edit: types.WorkspaceEdit) -> dict[str, list[types.TextEdit]]:
    if edit.document_changes:
        return {change.text_document.uri: list(change.edits) for change in edit.document_changes}
    return dict(edit.changes)


def places(found) -> set[tuple[str, int, int, int]]:
    """(file name, line, start, end) of locations or (uri, edits)."""
    if isinstance(found, dict):
        return {(Path(uri).name, e.range.start.line, e.range.start.character, e.range.end.character)
                for uri, edits in found.items() for e in edits}
    return {(Path(l.uri).name, l.range.start.line, l.range.start.character, l.range.end.character) for l in found}


def diagnostics(folder: Path) -> dict[str, list[tuple]]:
    from taskdsl.rules.checker import check_index

    results = check_index(Library.from_paths([folder], Settings(), keep_documents=True))
    return {Path(p).name: [(d.code, d.message) for d in r.diagnostics] for p, r in results.items()}


async def run(folder: Path) -> str:
    """The output of `taskdsl run main.task.xml --model taskdsl/echo` in folder."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskdsl", "run", str(folder / "main.task.xml"), "--model", "taskdsl/echo", "-q",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def rename_keeps_meaning(client: LanguageClient, docs, ws: Path, tmp_path: Path,
                               file: str, offset: int, new: str) -> set[tuple]:
    enc = encoding(client)
    uri = await docs.open(file)
    at = pos(TEXTS[file], offset, enc)
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri), position=at, new_name=new))
    found = edits_of(edit)
    references = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=at,
        context=types.ReferenceContext(include_declaration=True)))
    docs.close(uri)
    assert places(references) == places(found)
    assert all(e.new_text == new for edits in found.values() for e in edits)

    copy = tmp_path / "copy"
    shutil.copytree(ws, copy)
    assert not any(diagnostics(copy).values())  # the workspace as written checks clean and runs to OUTPUT (the first test)
    for file_uri, edits in found.items():
        target = copy / Path(file_uri.removeprefix("file://")).name
        text = target.read_text(encoding="utf-8")
        spans = sorted(((offset_of(text, e.range.start, enc), offset_of(text, e.range.end, enc)) for e in edits), reverse=True)
        for start, end in spans:
            text = text[:start] + new + text[end:]
        target.write_text(text, encoding="utf-8")
    assert not any(diagnostics(copy).values())
    assert await run(copy) == OUTPUT
    return {(name, line) for name, line, _, _ in places(found)}


async def test_the_workspace_as_written_runs_to_the_expected_output(ws: Path):
    assert await run(ws) == OUTPUT


async def test_rename_an_input_used_in_from_and_an_inline_call_argument(client, docs, ws, tmp_path):
    edited = await rename_keeps_meaning(client, docs, ws, tmp_path, "main.task.xml",
                                        nth(MAIN, '"doc"', within=1), "paper")
    assert edited == {("main.task.xml", 2), ("main.task.xml", 8), ("main.task.xml", 18)}


async def test_rename_an_input_used_as_a_bare_arg_and_a_placeholder(client, docs, ws, tmp_path):
    edited = await rename_keeps_meaning(client, docs, ws, tmp_path, "main.task.xml",
                                        nth(MAIN, '<arg name="style">tone', within=18), "mood")
    assert edited == {("main.task.xml", line) for line in (3, 9, 13, 18)}


async def test_rename_a_shadowing_inner_input_leaves_the_outer_one(client, docs, ws, tmp_path):
    edited = await rename_keeps_meaning(client, docs, ws, tmp_path, "main.task.xml",
                                        nth(MAIN, "inner {{doc}}", within=8), "local")
    assert edited == {("main.task.xml", 13), ("main.task.xml", 15)}


async def test_rename_a_template_param_renames_its_bindings_in_other_files(client, docs, ws, tmp_path):
    edited = await rename_keeps_meaning(client, docs, ws, tmp_path, "lib.task.xml",
                                        LIB.index("{{text}}") + 3, "body")
    # params entry and body in lib; the ref's <input name> and the call's <arg name> in main
    assert edited == {("lib.task.xml", 0), ("lib.task.xml", 2), ("main.task.xml", 8), ("main.task.xml", 18)}


async def test_rename_a_param_from_a_refs_input_name(client, docs, ws, tmp_path):
    edited = await rename_keeps_meaning(client, docs, ws, tmp_path, "main.task.xml",
                                        nth(MAIN, '<input name="style"', within=14), "manner")
    assert edited == {("lib.task.xml", 0), ("lib.task.xml", 2), ("main.task.xml", 9), ("main.task.xml", 18)}


async def test_definition_from_an_inline_call_argument_goes_to_the_variable(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    at = pos(MAIN, nth(MAIN, "summarize(doc", within=len("summarize(") + 1), enc)
    found = await client.text_document_definition_async(types.DefinitionParams(types.TextDocumentIdentifier(uri), at))
    declaration = nth(MAIN, '"doc"', within=1)
    assert found == [types.Location(uri, types.Range(pos(MAIN, declaration, enc), pos(MAIN, declaration + 3, enc)))]
    docs.close(uri)


async def test_rename_to_a_visible_name_is_refused_with_the_reason(client: LanguageClient, docs):
    uri = await docs.open("main.task.xml")
    at = pos(MAIN, nth(MAIN, '"doc"', within=1), encoding(client))
    with pytest.raises(Exception, match=r"'tone' is already visible at line 3: input tone \(line 4\)"):
        await client.text_document_rename_async(types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri), position=at, new_name="tone"))
    docs.close(uri)


async def test_prepare_rename_of_a_builtin_says_it_cannot_be_renamed(client: LanguageClient, docs):
    uri = await docs.open("main.task.xml")
    at = pos(MAIN, nth(MAIN, "{{last_output}}", within=4), encoding(client))
    with pytest.raises(Exception, match="'last_output' is built in"):
        await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(types.TextDocumentIdentifier(uri), at))
    prepared = await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, nth(MAIN, "summarize(doc", within=11), encoding(client))))
    assert prepared.placeholder == "doc"
    docs.close(uri)
