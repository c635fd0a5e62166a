"""Definition, references and rename across two files; symbols, folding, links, workspace
symbols; code actions (quick fixes with exact edits, extraction) under each client."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from taskdsl.features import actions
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos, units
from rename_texts import LIB

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAIN = """<task name="report" type="sequential">
  <inputs>
    <input name="doc">a.md</input>
  </inputs>
  <steps>
    <task ref="summarize">
      <inputs>
        <input name="text" from="doc"/>
        <input name="style">short</input>
      </inputs>
    </task>
    <call template="summarize"><arg>{{doc}}</arg><arg>long</arg></call>
  </steps>
  <file_paths>
    <path>notes/a.md</path>
  </file_paths>
</task>
"""
# a library file saved with Windows line endings, never opened in the editor
CRLF_LIB = ('<library>\r\n  <!-- tools -->\r\n'
            '  <template name="shorten" params="text"><task><description>{{text}}</description></task></template>\r\n'
            '</library>\r\n')
FILES = {"lib.task.xml": LIB, "main.task.xml": MAIN, "crlf_lib.task.xml": CRLF_LIB}


def actions_of(result) -> list[types.CodeAction]:
    """The code actions of a response. lsprotocol's client-side converter reads any CodeAction
    that carries a ``command`` as a Command (its hook tests for the key): undo that here."""
    found = []
    for item in result or []:
        if isinstance(item, types.Command) and item.command.startswith("{"):
            command = ast.literal_eval(item.command)
            kind = types.CodeActionKind.RefactorExtract if command["command"] == actions.EXTRACT_COMMAND else None
            found.append(types.CodeAction(title=item.title, kind=kind, command=types.Command(**command)))
        else:
            found.append(item)
    return found


def changes_of(client: LanguageClient, edit: types.WorkspaceEdit) -> dict[str, list[tuple[types.Range, str]]]:
    """uri → [(range, text)] whichever form the server chose; checks the form fits the client."""
    document_changes = client.capabilities.workspace.workspace_edit.document_changes
    if document_changes:
        assert edit.changes is None
        return {c.text_document.uri: [(e.range, e.new_text) for e in c.edits] for c in edit.document_changes}
    assert edit.document_changes is None
    return {uri: [(e.range, e.new_text) for e in edits] for uri, edits in edit.changes.items()}


async def test_definition_and_references_of_a_template_across_files(client: LanguageClient, docs, ws: Path):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    ref_at = MAIN.index('ref="summarize"') + 6
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), pos(MAIN, ref_at, enc)))
    lib_uri = docs.uri("lib.task.xml")
    assert found == [types.Location(lib_uri, types.Range(types.Position(0, 16), types.Position(0, 25)))]

    references = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=pos(MAIN, ref_at, enc),
        context=types.ReferenceContext(include_declaration=True)))
    got = sorted((r.uri, r.range.start.line, r.range.start.character, r.range.end.character) for r in references)
    assert got == sorted([
        (lib_uri, 0, 16, 25),
        (uri, 5, 15, 24),
        (uri, 11, 20, 29),
    ])
    docs.close(uri)


async def test_variable_definition_and_references(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    use = MAIN.index("{{doc}}") + 3
    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), pos(MAIN, use, enc)))
    declaration = MAIN.index('name="doc"') + 6
    assert found == [types.Location(uri, types.Range(pos(MAIN, declaration, enc), pos(MAIN, declaration + 3, enc)))]
    references = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri), position=pos(MAIN, declaration, enc),
        context=types.ReferenceContext(include_declaration=False)))
    starts = [MAIN.index('from="doc"') + 6, MAIN.index("{{doc}}") + 2]
    assert [r.range for r in references] == [types.Range(pos(MAIN, s, enc), pos(MAIN, s + 3, enc)) for s in starts]
    docs.close(uri)


async def test_rename_template_across_files(client: LanguageClient, docs):
    uri = await docs.open("main.task.xml")
    ref_at = MAIN.index('ref="summarize"') + 6
    prepared = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(types.TextDocumentIdentifier(uri), pos(MAIN, ref_at, encoding(client))))
    assert prepared.range == types.Range(types.Position(5, 15), types.Position(5, 24))
    assert prepared.placeholder == "summarize"
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri), position=pos(MAIN, ref_at, encoding(client)), new_name="digest"))
    changes = changes_of(client, edit)
    assert changes == {
        docs.uri("lib.task.xml"): [(types.Range(types.Position(0, 16), types.Position(0, 25)), "digest")],
        uri: [(types.Range(types.Position(5, 15), types.Position(5, 24)), "digest"),
              (types.Range(types.Position(11, 20), types.Position(11, 29)), "digest")],
    }
    docs.close(uri)


async def test_rename_param_with_its_uses(client: LanguageClient, docs):
    uri = await docs.open("lib.task.xml")
    at = LIB.index("{{style}}") + 3
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri), position=pos(LIB, at, encoding(client)), new_name="tone"))
    # the ref in main.task.xml binds `style` by name and follows; its positional <call> needs nothing
    assert changes_of(client, edit) == {
        uri: [(types.Range(types.Position(0, 41), types.Position(0, 46)), "tone"),
              (types.Range(types.Position(2, 41), types.Position(2, 46)), "tone")],
        docs.uri("main.task.xml"): [(types.Range(types.Position(8, 21), types.Position(8, 26)), "tone")],
    }
    docs.close(uri)


async def test_document_symbols_folding_and_links(client: LanguageClient, docs, ws: Path):
    uri = await docs.open("main.task.xml")
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(types.TextDocumentIdentifier(uri)))
    (root,) = symbols
    assert (root.name, root.detail, root.kind) == ("report", "sequential", types.SymbolKind.Function)
    assert [(c.name, c.detail) for c in root.children] == [("doc", None), ("→ summarize", "ref"), ("call summarize", None)]
    assert [c.name for c in root.children[1].children] == ["text", "style"]

    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(types.TextDocumentIdentifier(uri)))
    assert [(f.start_line, f.end_line) for f in folds] == [(0, 15), (1, 2), (4, 11), (5, 9), (6, 8), (13, 14)]

    links = await client.text_document_document_link_async(types.DocumentLinkParams(types.TextDocumentIdentifier(uri)))
    assert [(link.range, link.target) for link in links] == [
        (types.Range(types.Position(14, 10), types.Position(14, 20)), (ws / "notes" / "a.md").as_uri())]
    docs.close(uri)


async def test_workspace_symbols(client: LanguageClient, docs):
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="summ"))
    assert [(s.name, s.kind, s.location.uri, s.location.range) for s in found] == [
        ("summarize", types.SymbolKind.Class, docs.uri("lib.task.xml"),
         types.Range(types.Position(0, 16), types.Position(0, 25)))]


async def test_quick_fix_is_an_exact_edit_with_its_diagnostic(client: LanguageClient, docs):
    text = ('<task>\n  <description>x</description>\n  <context_management>\n'
            '    <inherit_context>true</inherit_context>\n  </context_management>\n</task>\n')
    uri = await docs.open("fix.task.xml", text)
    diagnostics = await docs.diagnostics(uri)
    (legacy,) = [d for d in diagnostics if d.code == "TD305"]
    assert legacy.range == types.Range(types.Position(3, 21), types.Position(3, 25))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=legacy.range,
        context=types.CodeActionContext(diagnostics=[legacy])))
    fixes = [a for a in actions_of(actions) if a.kind == types.CodeActionKind.QuickFix]
    assert [(a.title, list(a.diagnostics)) for a in fixes] == [("Replace 'true' with 'full'", [legacy])]
    assert changes_of(client, fixes[0].edit) == {uri: [(legacy.range, "full")]}
    docs.close(uri)


async def test_quick_fix_for_an_enumeration_typo(client: LanguageClient, docs):
    enc = encoding(client)
    text = '<!-- über --><task type="sequental">\n  <description>x</description>\n  <steps><task><description>a</description></task></steps>\n</task>\n'
    uri = await docs.open("typo.task.xml", text)
    (typo,) = await docs.diagnostics(uri)
    start = text.index("sequental")
    value = types.Range(pos(text, start, enc), pos(text, start + len("sequental"), enc))
    assert (typo.code, typo.range) == ("TD105", value)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=typo.range,
        context=types.CodeActionContext(diagnostics=[typo])))
    fixes = [a for a in actions_of(actions) if a.kind == types.CodeActionKind.QuickFix]
    assert [(a.title, list(a.diagnostics), a.is_preferred) for a in fixes] == [
        ("Replace 'sequental' with 'sequential'", [typo], True)]
    assert changes_of(client, fixes[0].edit) == {uri: [(value, "sequential")]}
    docs.close(uri)


async def test_extract_inline_task(client: LanguageClient, docs, ws: Path):
    text = ('<task type="sequential">\n  <steps>\n    <task>\n      <description>Fetch {{url}}</description>\n'
            '      <inputs>\n        <input name="url">x</input>\n      </inputs>\n    </task>\n  </steps>\n</task>\n')
    name = f"extract_{client.capabilities.general is not None}_{id(client)}.task.xml"
    uri = await docs.open(name, text)
    at = pos(text, text.index("Fetch"), encoding(client))
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=types.Range(at, at),
        context=types.CodeActionContext(diagnostics=[])))
    (extract,) = [a for a in actions_of(actions) if a.kind == types.CodeActionKind.RefactorExtract]
    assert extract.title == "Extract inline task to a library template (extracted_task.task.xml)"
    new_file = ws / "extracted_task.task.xml"
    expected_file = ('<task name="extracted_task">\n  <description>Fetch {{url}}</description>\n  <inputs>\n'
                     '    <input name="url">x</input>\n  </inputs>\n</task>\n')
    replaced = types.Range(types.Position(2, 4), types.Position(7, 11))
    replacement = ('<task ref="extracted_task">\n      <inputs>\n        <input name="url">x</input>\n'
                   '      </inputs>\n    </task>')
    operations = client.capabilities.workspace.workspace_edit.resource_operations or []
    if types.ResourceOperationKind.Create in operations and client.capabilities.workspace.workspace_edit.document_changes:
        create, fill, edit = extract.edit.document_changes
        assert isinstance(create, types.CreateFile) and create.uri == new_file.as_uri()
        assert [(e.range, e.new_text) for e in fill.edits] == [
            (types.Range(types.Position(0, 0), types.Position(0, 0)), expected_file)]
        assert (edit.text_document.uri, [(e.range, e.new_text) for e in edit.edits]) == (uri, [(replaced, replacement)])
    else:
        assert extract.edit is None and extract.command.command == "taskdsl.extractTask"
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=extract.command.command, arguments=extract.command.arguments))
        assert result == str(new_file)
        assert new_file.read_text(encoding="utf-8") == expected_file
        assert changes_of(client, client.applied_edits[-1]) == {uri: [(replaced, replacement)]}
        new_file.unlink()
    docs.close(uri)


def applied(text: str, edits: list[tuple[types.Range, str]], enc: str) -> str:
    """The text after the edits (ranges in the negotiated encoding), applied from the last."""
    def offset(p: types.Position) -> int:
        start = sum(len(line) for line in text.splitlines(keepends=True)[:p.line])
        column = 0
        while units(text[start:start + column], enc) < p.character:
            column += 1
        return start + column
    for range_, new_text in sorted(edits, key=lambda e: (e[0].start.line, e[0].start.character), reverse=True):
        text = text[:offset(range_.start)] + new_text + text[offset(range_.end):]
    return text


def run_output(folder: Path, entry: str, *task: str) -> str:
    chosen = ["--task", *task] if task else []
    completed = subprocess.run([sys.executable, "-m", "taskdsl", "run", entry, *chosen, "--model", "taskdsl/echo", "--json"],
                               capture_output=True, text=True, cwd=folder, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)["content"]


async def extract_at(client: LanguageClient, uri: str, text: str, offset: int, new_file: Path) -> tuple[str, str]:
    """Extract the inline task at offset as the client would: (the new file's text, the document's new text)."""
    enc = encoding(client)
    at = pos(text, offset, enc)
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=types.Range(at, at),
        context=types.CodeActionContext(diagnostics=[])))
    (extract,) = [a for a in actions_of(found) if a.kind == types.CodeActionKind.RefactorExtract]
    if extract.edit is not None:
        create, fill, edit = extract.edit.document_changes
        assert create.uri == new_file.as_uri()
        return (applied("", [(e.range, e.new_text) for e in fill.edits], enc),
                applied(text, [(e.range, e.new_text) for e in edit.edits], enc))
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=extract.command.command, arguments=extract.command.arguments))
    template = new_file.read_text(encoding="utf-8")
    new_file.unlink()
    return template, applied(text, changes_of(client, client.applied_edits[-1])[uri], enc)


async def test_extracting_a_step_that_uses_outer_variables_keeps_it_checked_and_its_run(
        client: LanguageClient, docs, ws: Path, tmp_path: Path):
    """The step's free variables ({{url}} from the pipeline's inputs, last_output from the step before)
    become the new template's params, and the ref passes them."""
    step = f"fetch_{id(client)}"
    text = ('<task type="sequential" name="pipeline">\n  <inputs>\n    <input name="url">example.org</input>\n'
            '  </inputs>\n  <steps>\n    <task>\n      <instructions>Open {{url}}</instructions>\n    </task>\n'
            f'    <task name="{step}">\n      <inputs>\n        <input name="style">short</input>\n      </inputs>\n'
            '      <instructions>Summarise {{last_output}} from {{url}} in a {{style}} way</instructions>\n'
            '    </task>\n  </steps>\n</task>\n')
    before = run_output(_written(tmp_path / "before", {"pipeline.task.xml": text}), "pipeline.task.xml")
    assert before == "Summarise Open example.org from example.org in a short way"
    name = f"pipeline_{id(client)}.task.xml"
    uri = await docs.open(name, text)
    assert await docs.diagnostics(uri) == []
    template, changed = await extract_at(client, uri, text, text.index("Summarise"), ws / f"{step}.task.xml")
    assert template == (f'<task name="{step}">\n  <inputs>\n    <input name="style">short</input>\n'
                        '    <input name="last_output"/>\n    <input name="url"/>\n  </inputs>\n'
                        '  <instructions>Summarise {{last_output}} from {{url}} in a {{style}} way</instructions>\n'
                        '</task>\n')
    assert f'<task ref="{step}">\n      <inputs>\n        <input name="style">short</input>\n' \
           '        <input name="last_output" from="last_output"/>\n        <input name="url" from="url"/>\n' \
           '      </inputs>\n    </task>\n' in changed, changed
    docs.close(uri)
    # both files check clean in the editor, and the run's result is the same
    template_uri = await docs.open(f"{step}.task.xml", template)
    assert await docs.diagnostics(template_uri) == []
    changed_uri = await docs.open(f"pipeline_{id(client)}_after.task.xml", changed)
    assert await docs.diagnostics(changed_uri) == []
    docs.close(changed_uri)
    docs.close(template_uri)
    after = run_output(_written(tmp_path / "after", {"pipeline.task.xml": changed, f"{step}.task.xml": template}),
                       "pipeline.task.xml")
    assert after == before


async def test_extracting_a_step_whose_call_argument_is_an_outer_variable(client: LanguageClient, docs, ws: Path,
                                                                         tmp_path: Path):
    """`<arg>topic</arg>` is the variable topic where topic is visible, literal text elsewhere: the
    extracted template gets topic as a param, so the call still gets the variable's value."""
    step = f"shout_step_{id(client)}"
    text = ('<library>\n  <template name="shout" params="text">\n    <task><instructions>{{text}}!</instructions></task>\n'
            '  </template>\n  <task type="sequential" name="main">\n    <inputs>\n      <input name="topic">cats</input>\n'
            f'    </inputs>\n    <steps>\n      <task type="sequential" name="{step}">\n        <steps>\n'
            '          <call template="shout"><arg>topic</arg></call>\n        </steps>\n      </task>\n'
            '    </steps>\n  </task>\n</library>\n')
    before = run_output(_written(tmp_path / "before", {"main.task.xml": text}), "main.task.xml", "main")
    assert before == "cats!"
    uri = await docs.open(f"calls_{id(client)}.task.xml", text)
    template, changed = await extract_at(client, uri, text, text.index("<steps>\n          <call"),
                                         ws / f"{step}.task.xml")
    docs.close(uri)
    assert '  <inputs>\n    <input name="topic"/>\n  </inputs>\n' in template, template
    assert f'<task ref="{step}">\n        <inputs>\n          <input name="topic" from="topic"/>\n' in changed, changed
    after = run_output(_written(tmp_path / "after", {"main.task.xml": changed, f"{step}.task.xml": template}),
                       "main.task.xml", "main")
    assert after == before


def _written(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    (folder / ".git").mkdir()  # the project root: the library is this folder
    for file_name, content in files.items():
        (folder / file_name).write_text(content, encoding="utf-8")
    return folder


async def test_ranges_in_a_closed_crlf_file_are_where_the_editor_shows_them(client: LanguageClient, docs):
    text = '<call template="shorten"><arg>hi</arg></call>\n'
    uri = await docs.open("uses_crlf.task.xml", text)
    at = pos(text, text.index("shorten") + 2, encoding(client))
    found = await client.text_document_definition_async(types.DefinitionParams(types.TextDocumentIdentifier(uri), at))
    found = found if isinstance(found, list) else [found]
    target = [f for f in found if (getattr(f, "uri", None) or f.target_uri).endswith("crlf_lib.task.xml")]
    assert target, found
    where = getattr(target[0], "range", None) or target[0].target_selection_range
    # line 2 of the file, `shorten` in name="shorten": columns 18–25 (the CRs before it do not count)
    assert where == types.Range(types.Position(2, 18), types.Position(2, 25))
    docs.close(uri)
