"""Completion, hover, inlay hints and formatting over stdio, under each client's capabilities;
positions in the negotiated encoding (UTF-16 for VS Code, UTF-8 for Neovim, UTF-32 for Emacs)."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos, text_at

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = """<template name="summarize" params="text, style">
  <task>
    <description>Summarize {{text}} in the given style</description>
  </task>
</template>
"""
FILES = {"lib.task.xml": LIB}


def snippets(client: LanguageClient) -> bool:
    item = client.capabilities.text_document.completion.completion_item
    return bool(item and item.snippet_support)


def markdown(client: LanguageClient) -> bool:
    return types.MarkupKind.Markdown in (client.capabilities.text_document.hover.content_format or [])


async def complete(client: LanguageClient, docs, name: str, marked: str):
    enc = encoding(client)
    text, position = text_at(marked, enc)
    uri = await docs.open(name, text)
    result = await client.text_document_completion_async(
        types.CompletionParams(types.TextDocumentIdentifier(uri), position))
    docs.close(uri)
    return text, result.items


async def test_element_completion_leaves_out_present_singletons(client: LanguageClient, docs):
    text, items = await complete(client, docs, "c1.task.xml", "<task>\n  <description>x</description>\n  <|\n</task>\n")
    labels = [i.label for i in items]
    # an atomic task: no <steps>, no reduce parts, no <command>
    assert labels == ["instructions", "system", "model", "criteria", "output_format", "context_management",
                      "inputs", "file_paths", "manual_xml", "disable_reparsing"]
    by_label = {i.label: i for i in items}
    edit = by_label["output_format"].text_edit
    assert edit.range == types.Range(types.Position(2, 2), types.Position(2, 3))
    if snippets(client):
        assert edit.new_text == '<output_format type="$1"/>'
        assert by_label["system"].text_edit.new_text == "<system>$0</system>"
        assert by_label["system"].insert_text_format == types.InsertTextFormat.Snippet
    else:
        assert edit.new_text == '<output_format type=""/>'
        assert by_label["system"].text_edit.new_text == "<system>"
        assert by_label["system"].insert_text_format == types.InsertTextFormat.PlainText


async def test_attribute_and_value_completion(client: LanguageClient, docs):
    _, items = await complete(client, docs, "c2.task.xml", '<task name="t" |>\n  <description>x</description>\n</task>\n')
    assert [i.label for i in items] == ["type", "ref", "subtype"]
    _, items = await complete(client, docs, "c3.task.xml", '<task type="s|">\n  <description>x</description>\n</task>\n')
    assert [i.label for i in items] == ["atomic", "sequential", "reduce", "script"]
    assert [i.text_edit.range for i in items] == [types.Range(types.Position(0, 12), types.Position(0, 13))] * 4


async def test_element_text_enumeration(client: LanguageClient, docs):
    _, items = await complete(client, docs, "c4.task.xml",
                              "<task>\n  <description>x</description>\n  <context_management>\n"
                              "    <inherit_context>|</inherit_context>\n  </context_management>\n</task>\n")
    assert [i.label for i in items] == ["full", "none", "subset"]
    documentation = items[0].documentation
    if isinstance(documentation, str):  # Emacs declares no documentation format: plain string
        assert client.capabilities.text_document.completion.completion_item.documentation_format is None
    else:
        documentation = documentation.value
    assert documentation.startswith("The task sees everything")


async def test_ref_names_from_the_library(client: LanguageClient, docs):
    _, items = await complete(client, docs, "c5.task.xml", '<task ref="|"/>\n')
    assert [(i.label, i.detail) for i in items] == [("summarize", "template(text, style)")]
    assert items[0].text_edit.range == types.Range(types.Position(0, 11), types.Position(0, 11))


async def test_variables_in_scope_inside_braces_after_non_ascii(client: LanguageClient, docs):
    enc = encoding(client)
    marked = ('<task>\n  <inputs><input name="stadt">x</input></inputs>\n'
              '  <description>Liste 😀 der {{st|}}</description>\n</task>\n')
    text, items = await complete(client, docs, "c6.task.xml", marked)
    labels = [i.label for i in items]
    assert labels[:1] == ["stadt"] and "last_output" not in labels  # no previous step here
    start = text.index("{{st") + 2
    assert items[0].text_edit.range == types.Range(pos(text, start, enc), pos(text, start + 2, enc))
    # the column differs per encoding: the emoji is 4 UTF-8 units, 2 UTF-16 units, 1 code point
    assert items[0].text_edit.range.start.character == {"utf-8": 32, "utf-16": 30, "utf-32": 29}[enc]


async def test_closing_tag(client: LanguageClient, docs):
    _, items = await complete(client, docs, "c7.task.xml", "<task>\n  <description>x</|\n")
    assert [(i.label, i.text_edit.range) for i in items] == [
        ("</description>", types.Range(types.Position(1, 16), types.Position(1, 18)))]


async def test_hover_element_attribute_value_and_task_context(client: LanguageClient, docs):
    text = ('<task type="sequential">\n  <description>x</description>\n  <steps>\n'
            '    <task ref="summarize"/>\n  </steps>\n</task>\n')
    uri = await docs.open("h1.task.xml", text)

    async def hover_at(offset: int):
        return await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), pos(text, offset, encoding(client))))

    on_task = await hover_at(2)
    assert on_task.range == types.Range(types.Position(0, 1), types.Position(0, 5))
    assert "inherit: full · accumulate: true · format: notes_only · fresh: disabled (defaults)" in on_task.contents.value
    assert on_task.contents.kind == (types.MarkupKind.Markdown if markdown(client) else types.MarkupKind.PlainText)

    on_value = await hover_at(text.index("sequential") + 2)
    assert on_value.range == types.Range(types.Position(0, 12), types.Position(0, 22))
    assert "Runs its `steps` in order" in on_value.contents.value

    on_ref = await hover_at(text.index("summarize") + 1)
    if markdown(client):
        assert "- `text`: required\n- `style`: required" in on_ref.contents.value
    else:
        assert "  text: required\n  style: required" in on_ref.contents.value
    assert "Summarize {{text}} in the given style" in on_ref.contents.value
    assert "lib.task.xml:1" in on_ref.contents.value

    assert await hover_at(text.index("\n  <steps>") + 2) is None  # whitespace between elements
    docs.close(uri)


async def test_inlay_hints_show_implicit_settings(client: LanguageClient, docs):
    text = ('<task type="sequential">\n  <context_management>\n    <inherit_context>none</inherit_context>\n'
            '  </context_management>\n  <steps>\n    <task><description>x</description></task>\n  </steps>\n</task>\n')
    uri = await docs.open("i1.task.xml", text)
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(8, 0))))
    docs.close(uri)
    enc = encoding(client)
    assert [(h.position, h.label) for h in hints] == [
        (pos(text, text.index("</context_management>") + len("</context_management>"), enc),
         "inherit: none · accumulate: true (default) · format: notes_only (default) · fresh: disabled (default)"),
        (pos(text, text.index("<task><desc") + len("<task>"), enc), "inherit: full · fresh: disabled (defaults)"),
    ]


async def test_formatting_keeps_comments_cdata_and_text(client: LanguageClient, docs):
    text = ('<task type="sequential">\n'
            '      <!-- keep   me -->\n'
            '<description>\n   text   stays\n     as is\n</description>\n'
            '    <steps>\n'
            '<task><instructions><![CDATA[  a < b\n   c ]]></instructions></task>\n'
            '  </steps>\n'
            '</task>\n')
    uri = await docs.open("f1.task.xml", text)
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        types.TextDocumentIdentifier(uri), types.FormattingOptions(tab_size=2, insert_spaces=True)))
    docs.close(uri)
    assert [(e.range, e.new_text) for e in edits] == [
        (types.Range(types.Position(1, 0), types.Position(1, 6)), "  "),
        (types.Range(types.Position(2, 0), types.Position(2, 0)), "  "),
        (types.Range(types.Position(6, 0), types.Position(6, 4)), "  "),
        (types.Range(types.Position(7, 0), types.Position(7, 0)), "    "),
    ]
