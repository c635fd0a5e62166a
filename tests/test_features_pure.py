"""Unit tests of the pure feature functions (no server): formatting, folding, symbols, links,
inlay hints, completion contexts, hover text, navigation targets, extraction plan, positions."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from taskdsl.language.diagnostics import TextEdit, apply_edits
from taskdsl.language.document import Span, parse
from taskdsl.features import actions, completion, formatting, hover, inlay, navigation, symbols
from taskdsl.features.util import ClientFeatures, Positions


def at(marked: str) -> tuple[str, int]:
    offset = marked.index("|")
    return marked[:offset] + marked[offset + 1:], offset


def test_positions_round_trip_in_each_encoding():
    text = "<task>\n  <description>é😀x</description>\n</task>\n"
    doc = parse(text)
    offset = text.index("x")
    for encoding, column in (("utf-8", 21), ("utf-16", 18), ("utf-32", 17)):
        positions = Positions(doc, PositionCodec(encoding))
        assert positions.position(offset) == types.Position(1, column)
        assert positions.offset(types.Position(1, column)) == offset


def test_formatting_reindents_tag_lines_only_and_keeps_text():
    text = "<task>\n<description>\n  keep\n      this</description>\n        <!-- c -->\n<steps/>\n</task>\n"
    doc = parse(text)
    edits = formatting.indentation_edits(doc)
    result = apply_edits(text, [TextEdit(span, new) for span, new in edits])
    assert result == "<task>\n  <description>\n  keep\n      this</description>\n  <!-- c -->\n  <steps/>\n</task>\n"
    # idempotent
    assert formatting.indentation_edits(parse(result)) == []


def test_formatting_leaves_a_broken_document_alone():
    assert formatting.indentation_edits(parse("<task>\n<description>x\n</task>")) == []


def test_folding_and_symbols():
    text = "<task type=\"sequential\">\n  <steps>\n    <task ref=\"a\"/>\n  </steps>\n</task>\n"
    doc = parse(text)
    assert [(f.start_line, f.end_line) for f in symbols.folding_ranges(doc)] == [(0, 3), (1, 2)]
    (root,) = symbols.document_symbols(doc, Positions(doc))
    assert (root.name, root.detail, [c.name for c in root.children]) == ("task", "sequential", ["→ a"])
    flat = symbols.flat_symbols(doc, Positions(doc), "file:///x.task.xml")
    assert [(s.name, s.container_name) for s in flat] == [("task", None), ("→ a", "task")]


def test_document_links_resolve_against_the_template_folder():
    text = "<task><file_paths><path> data/x.txt </path><path>{{v}}</path></file_paths></task>"
    doc = parse(text)
    (link,) = symbols.document_links(doc, Positions(doc), "/w/t.task.xml")
    assert link.target == "file:///w/data/x.txt"
    assert (link.range.start.character, link.range.end.character) == (25, 35)
    command = parse('<task><file_paths source="command"><command>ls</command></file_paths></task>')
    assert symbols.document_links(command, Positions(command), "/w/t.task.xml") == []


def test_inlay_hint_positions():
    text = "<task>\n  <context_management><fresh_context>disabled</fresh_context></context_management>\n</task>"
    doc = parse(text)
    (hint,) = inlay.inlay_hints(doc, Positions(doc))
    assert hint.position == types.Position(1, 82)
    assert hint.label == "inherit: full (default) · fresh: disabled"
    fully = parse("<task><context_management><inherit_context>none</inherit_context>"
                  "<fresh_context>disabled</fresh_context></context_management></task>")
    assert inlay.inlay_hints(fully, Positions(fully)) == []


def test_completion_contexts():
    text, offset = at("<task>\n  <steps>\n    <|\n  </steps>\n</task>")
    doc = parse(text)
    items = completion.complete(doc, offset, Positions(doc)).items
    assert [i.label for i in items] == ["task", "call", "cond"]
    text, offset = at('<task><output_format type="json" schema="|"/></task>')
    doc = parse(text)
    assert [i.label for i in completion.complete(doc, offset, Positions(doc)).items] == [
        "object", "array", "string[]", "number", "boolean"]
    text, offset = at("<task><!-- <| --></task>")
    doc = parse(text)
    assert completion.complete(doc, offset, Positions(doc)).items == []
    # snippets only with the client's support
    text, offset = at("<task><|")
    doc = parse(text)
    plain = completion.complete(doc, offset, Positions(doc), client=ClientFeatures(snippets=False)).items
    assert all(i.insert_text_format == types.InsertTextFormat.PlainText for i in plain)


def test_hover_plaintext_and_model_window():
    text = "<task><model>gpt-4o-mini</model></task>"
    doc = parse(text)
    found = hover.describe_at(doc, text.index("gpt") + 1, markdown=False)
    assert found is not None and found[1] == Span(13, 24)
    assert "Context window: 128,000 tokens" in found[0]
    on_tag = hover.describe_at(doc, 2, markdown=False)
    assert on_tag[0].startswith("<task>") and "**" not in on_tag[0]


def test_extraction_plan_keeps_inputs_on_the_ref(tmp_path):
    text = ('<task type="sequential">\n  <steps>\n    <task name="fetch">\n      <description>x</description>\n'
            '      <inputs><input name="u">v</input></inputs>\n    </task>\n  </steps>\n</task>\n')
    doc = parse(text)
    task = actions.inline_task_at(doc, text.index("x</desc"))
    plan = actions.plan_extraction(doc, task, str(tmp_path / "main.task.xml"))
    assert plan.name == "fetch" and plan.path == str(tmp_path / "fetch.task.xml")
    assert plan.text == ('<task name="fetch">\n  <description>x</description>\n'
                         '  <inputs><input name="u">v</input></inputs>\n</task>\n')
    assert plan.replacement == ('<task ref="fetch">\n      <inputs><input name="u">v</input></inputs>\n    </task>')
    (tmp_path / "fetch.task.xml").write_text("taken")
    assert actions.plan_extraction(doc, task, str(tmp_path / "main.task.xml")).name == "fetch_2"
