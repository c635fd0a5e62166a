"""Every use of every name (taskdsl.meaning.uses) and the navigation built on it, without a server.

Each rename is applied to the files, the workspace is checked again (no new diagnostics) and run
with the offline echo model: the output must not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskdsl.cli.main import main
from taskdsl.language.document import Span, parse
from taskdsl.library import Library, RenameError
from taskdsl.project.workspace import read_text
from taskdsl.meaning.uses import Workspace, document_uses
from taskdsl.project.settings import Settings

from rename_texts import LIB, MAIN, OUTPUT, nth


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "lib.task.xml").write_text(LIB, encoding="utf-8")
    (tmp_path / "main.task.xml").write_text(MAIN, encoding="utf-8")
    return tmp_path


def workspace(folder: Path, name: str) -> Workspace:
    library = Library.from_paths([folder], Settings())
    path = str(folder / name)
    return Workspace(parse(read_text(path)), path, library=library,
                     document_of=lambda p: parse(read_text(p)), settings=Settings())


def written(folder: Path, found: dict[str, list[Span]]) -> dict[str, list[str]]:
    """file name → the text at each span."""
    texts = {path: read_text(path) for path in found}
    return {Path(path).name: [texts[path][s.start:s.end] for s in spans] for path, spans in found.items()}


def lines(folder: Path, found: dict[str, list[Span]]) -> dict[str, list[int]]:
    return {Path(path).name: [parse(read_text(path)).position(s.start)[0] for s in spans]
            for path, spans in found.items()}


def apply(found: dict[str, list[Span]], new: str) -> None:
    for path, spans in found.items():
        text = read_text(path)
        for span in sorted(spans, key=lambda s: s.start, reverse=True):
            text = text[:span.start] + new + text[span.end:]
        Path(path).write_text(text, encoding="utf-8")


def diagnostics(folder: Path) -> dict[str, list[tuple]]:
    from taskdsl.rules.checker import check_index

    results = check_index(Library.from_paths([folder], Settings(), keep_documents=True))
    return {Path(p).name: [(d.code, d.message) for d in r.diagnostics] for p, r in results.items()}


def run(folder: Path, capsys) -> str:
    capsys.readouterr()
    assert main(["run", str(folder / "main.task.xml"), "--model", "taskdsl/echo", "-q"]) == 0
    return capsys.readouterr().out.strip()


def rename_keeps_meaning(folder: Path, file: str, offset: int, new: str, capsys) -> dict[str, list[int]]:
    """Rename at offset; references == rename; the files check and run as before. Lines edited."""
    before_output, before_diagnostics = run(folder, capsys), diagnostics(folder)
    assert before_output == OUTPUT and all(not d for d in before_diagnostics.values())
    space = workspace(folder, file)
    found = space.rename(offset, new)
    assert found == space.references(offset, include_declaration=True)
    edited = lines(folder, found)
    apply(found, new)
    assert diagnostics(folder) == before_diagnostics
    assert run(folder, capsys) == before_output
    return edited


# -- what the uses are -----------------------------------------------------------------------------


def test_every_form_of_use_with_its_exact_span_and_resolution():
    doc = parse(MAIN)
    found = [(u.form, MAIN[u.span.start:u.span.end], u.binding.kind if u.binding else None, u.target)
             for u in document_uses(doc)]
    assert found == [
        ("definition", "report", None, None),
        ("input", "doc", "input", None), ("input", "tone", "input", None),
        ("ref", "summarize", None, None),
        ("ref-input", "text", None, "summarize"), ("from", "doc", "input", None),
        ("ref-input", "style", None, "summarize"), ("placeholder", "tone", "input", None),
        ("placeholder", "last_output", "builtin", None), ("placeholder", "doc", "input", None),
        ("placeholder", "tone", "input", None), ("input", "doc", "input", None),
        ("call", "summarize", None, None), ("arg-name", "style", None, "summarize"), ("arg", "tone", "input", None),
        ("arg-name", "text", None, "summarize"), ("placeholder", "last_output", "builtin", None),
        ("inline", "summarize", None, None), ("call-arg", "doc", "input", None),
    ]
    uses = document_uses(doc)
    inner_doc = [u for u in uses if u.form == "input" and u.name == "doc"][1]
    shadowed = [u for u in uses if u.form == "placeholder" and u.name == "doc"][0]
    assert shadowed.binding.element is inner_doc.element  # the inner input shadows the outer one


def test_an_arg_word_that_names_nothing_visible_is_text_not_a_use():
    text = '<task><inputs><input name="a">1</input></inputs><call template="t"><arg>a</arg><arg> b </arg></call></task>'
    uses = [u for u in document_uses(parse(text)) if u.form == "arg"]
    assert [(u.name, u.binding is not None, u.literal) for u in uses] == [("a", True, False), ("b", False, True)]
    assert text[uses[1].span.start:uses[1].span.end] == "b"


# -- definition and references ------------------------------------------------------------------------


def test_definition_from_an_inline_call_argument_goes_to_the_variable(ws):
    space = workspace(ws, "main.task.xml")
    at = nth(MAIN, 'summarize(doc', within=len("summarize(") + 1)
    assert space.definitions(at) == [(str(ws / "main.task.xml"), Span(nth(MAIN, '"doc"', within=1),
                                                                     nth(MAIN, '"doc"', within=4)))]
    # the call's name itself still goes to the template
    assert [(Path(p).name, LIB[s.start:s.end]) for p, s in space.definitions(nth(MAIN, "summarize(doc", within=2))] \
        == [("lib.task.xml", "summarize")]


def test_definition_of_a_ref_input_goes_to_the_param_in_the_template(ws):
    space = workspace(ws, "main.task.xml")
    ((path, span),) = space.definitions(nth(MAIN, 'name="text"', within=7))
    assert (Path(path).name, span) == ("lib.task.xml", Span(LIB.index("text, "), LIB.index("text, ") + 4))


def test_references_of_a_param_cover_its_body_and_every_binding_across_files(ws):
    space = workspace(ws, "lib.task.xml")
    found = space.references(LIB.index("{{style}}") + 3)
    assert written(ws, found) == {"lib.task.xml": ["style", "style"], "main.task.xml": ["style", "style"]}
    assert lines(ws, found) == {"lib.task.xml": [0, 2], "main.task.xml": [9, 18]}
    without = space.references(LIB.index("{{style}}") + 3, include_declaration=False)
    assert lines(ws, without) == {"lib.task.xml": [2], "main.task.xml": [9, 18]}


# -- rename: what it edits, and that nothing changes meaning --------------------------------------------


def test_rename_an_input_used_in_from_an_inline_call_and_a_placeholder(ws, capsys):
    edited = rename_keeps_meaning(ws, "main.task.xml", nth(MAIN, '"doc"', within=1), "paper", capsys)
    # declaration, from="doc", {{summarize(doc, …)}}; the inner step's own doc (line 13, 15) is not touched
    assert edited == {"main.task.xml": [2, 8, 18]}


def test_rename_an_input_used_as_a_bare_arg_and_in_placeholders(ws, capsys):
    edited = rename_keeps_meaning(ws, "main.task.xml", nth(MAIN, "{{tone}}", within=3), "mood", capsys)
    assert edited == {"main.task.xml": [3, 9, 13, 18]}
    assert '<arg name="style">mood</arg>' in (ws / "main.task.xml").read_text()


def test_rename_the_inner_shadowing_input_leaves_the_outer_alone(ws, capsys):
    edited = rename_keeps_meaning(ws, "main.task.xml", nth(MAIN, 'name="doc"', 2, within=6), "local", capsys)
    assert edited == {"main.task.xml": [13, 15]}


def test_rename_a_template_param_across_files(ws, capsys):
    edited = rename_keeps_meaning(ws, "lib.task.xml", LIB.index("{{text}}") + 3, "body", capsys)
    assert edited == {"lib.task.xml": [0, 2], "main.task.xml": [8, 18]}
    assert (ws / "lib.task.xml").read_text().startswith('<template name="summarize" params="body, style">')


def test_rename_a_param_from_a_ref_input_in_another_file(ws, capsys):
    edited = rename_keeps_meaning(ws, "main.task.xml", nth(MAIN, 'name="style"', within=7), "manner", capsys)
    assert edited == {"lib.task.xml": [0, 2], "main.task.xml": [9, 18]}


def test_rename_a_template_across_files(ws, capsys):
    edited = rename_keeps_meaning(ws, "main.task.xml", nth(MAIN, 'ref="summarize"', within=6), "digest", capsys)
    assert edited == {"lib.task.xml": [0], "main.task.xml": [6, 18, 18]}


@pytest.mark.parametrize("new, reason", [
    ("tone", r"'tone' is already visible at line 3: input tone \(line 4\)"),
    ("last_output", "'last_output' is already visible .*the built-in last_output"),
    ("plain words", "'plain words' is not a valid name"),
])
def test_rename_refuses_a_name_already_visible_or_invalid(ws, new, reason):
    with pytest.raises(RenameError, match=reason):
        workspace(ws, "main.task.xml").rename(nth(MAIN, '"doc"', within=1), new)


@pytest.mark.parametrize("text, old, new, reason", [
    # an <arg> word that is text today would become the renamed variable
    ('<task type="sequential"><inputs><input name="doc">a</input></inputs><steps>'
     '<call template="t"><arg>{{doc}}</arg><arg>paper</arg></call></steps></task>',
     '"doc"', "paper", "would change what 'paper' at line 1 refers to"),
    # renaming the inner x to y would make the inner {{y}} (the outer y today) refer to it
    ('<task name="r"><description>d</description><inputs><input name="y">1</input></inputs>'
     '<steps><task><description>{{x}} {{y}}</description><inputs><input name="x">2</input></inputs></task></steps></task>',
     '"x"', "y", "'y' is already visible at line 1: input y"),
])
def test_rename_refuses_to_capture(text, old, new, reason):
    with pytest.raises(RenameError, match=reason):
        Workspace(parse(text), "/w/r.task.xml").rename(text.index(old) + 1, new)


@pytest.mark.parametrize("name, reason", [
    ("last_output", "'last_output' is built in"),
    ("current_data", "bound by the reduce operator"),
    ("nowhere", "names nothing visible"),
    ("team", "'team' is a global: rename it in the taskdsl.globals setting"),
])
def test_names_that_cannot_be_renamed_say_why(name, reason):
    text = ('<task type="reduce"><inputs><input name="items">a</input></inputs>'
            f'<inner_task><description>{{{{{name}}}}}</description></inner_task>'
            '<reduction_task><description>r</description></reduction_task></task>')
    space = Workspace(parse(text), "/w/x.task.xml", settings=Settings(globals={"team": "core"}))
    with pytest.raises(RenameError, match=reason):
        space.rename_target(text.index(name) + 1)
    with pytest.raises(RenameError, match=reason):
        space.rename(text.index(name) + 1, "other")


def test_a_task_rename_refuses_a_taken_name(ws):
    (ws / "other.task.xml").write_text('<task name="other"><description>o</description></task>')
    with pytest.raises(RenameError, match="'other' is already defined in .*other.task.xml:1"):
        workspace(ws, "lib.task.xml").rename(LIB.index("summarize") + 1, "other")



def test_definition_of_a_key_ref_and_of_a_task_named_after_its_file(tmp_path):
    (tmp_path / "helper.task.xml").write_text('<task subtype="tool"><description>h</description></task>')
    text = '<task type="sequential"><steps><task ref="atomic:tool"/><task ref="helper"/></steps></task>'
    (tmp_path / "main.task.xml").write_text(text)
    space = workspace(tmp_path, "main.task.xml")
    helper = (str(tmp_path / "helper.task.xml"), Span(1, 5))  # <task> named after its file: its tag name
    assert space.definitions(text.index("atomic:tool") + 2) == [helper]
    assert space.definitions(text.index('"helper"') + 2) == [helper]
    # a key names the key: its references are the refs written with it; it is never renamed
    assert written(tmp_path, space.references(text.index("atomic:tool") + 2)) == {"main.task.xml": ["atomic:tool"]}
    with pytest.raises(RenameError, match="is a type:subtype key, not a name"):
        space.rename(text.index("atomic:tool") + 2, "x")
