"""linkedEditingRange, selectionRange and documentHighlight over stdio, under the recorded
capabilities of VS Code, Neovim and Emacs (positions in each one's negotiated encoding)."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import encoding, pos

pytestmark = pytest.mark.asyncio(loop_scope="module")

# a non-ASCII description before the names: UTF-8, UTF-16 and UTF-32 columns differ on line 2
MAIN = """<task name="report" type="sequential">
  <description>Résumé 📄 of {{doc}}</description>
  <inputs>
    <input name="doc">a.md</input>
  </inputs>
  <steps>
    <task><description>Summarize {{doc}} briefly</description></task>
    <task ref="shout"><inputs><input name="word" from="doc"/></inputs></task>
  </steps>
</task>
"""
SHOUT = """<task name="shout"><inputs><input name="word"/></inputs><description>{{word}}!</description></task>
"""
FILES = {"main.task.xml": MAIN, "shout.task.xml": SHOUT}


def nth(text: str, needle: str, n: int = 1) -> int:
    at = -1
    for _ in range(n):
        at = text.index(needle, at + 1)
    return at


def rng(text: str, start: int, end: int, enc: str) -> types.Range:
    return types.Range(pos(text, start, enc), pos(text, end, enc))


async def test_linked_editing_of_a_tag_pair(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    at = nth(MAIN, "<steps>") + 3  # inside the name "steps" of the start tag
    result = await client.text_document_linked_editing_range_async(types.LinkedEditingRangeParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, at, enc)))
    start, end = nth(MAIN, "<steps>") + 1, nth(MAIN, "</steps>") + 2
    assert list(result.ranges) == [rng(MAIN, start, start + 5, enc), rng(MAIN, end, end + 5, enc)]
    assert result.word_pattern
    # from the end tag: the same pair
    again = await client.text_document_linked_editing_range_async(types.LinkedEditingRangeParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, end + 2, enc)))
    assert list(again.ranges) == list(result.ranges)
    # an attribute value is not a tag name; a self-closing element has no pair
    none = await client.text_document_linked_editing_range_async(types.LinkedEditingRangeParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, nth(MAIN, "sequential") + 2, enc)))
    assert none is None
    single = await client.text_document_linked_editing_range_async(types.LinkedEditingRangeParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, nth(MAIN, '<input name="word"') + 2, enc)))
    assert single is None
    docs.close(uri)


def chain(selection: types.SelectionRange) -> list[types.Range]:
    found = []
    while selection is not None:
        found.append(selection.range)
        selection = selection.parent
    return found


async def test_selection_grows_element_by_element(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    in_value = nth(MAIN, '"doc"') + 2  # inside the value of <input name="doc">
    in_text = nth(MAIN, "{{doc}}", 1) + 3  # the name of {{doc}} in the root's description (after the emoji)
    result = await client.text_document_selection_range_async(types.SelectionRangeParams(
        types.TextDocumentIdentifier(uri), [pos(MAIN, in_value, enc), pos(MAIN, in_text, enc)]))
    assert len(result) == 2

    value = nth(MAIN, '"doc"') + 1
    input_el = nth(MAIN, '<input name="doc"')
    inputs_el = nth(MAIN, "<inputs>")
    expected = [
        (value, value + 3),  # the name doc
        (value - 6, value + 4),  # name="doc"
        (input_el, nth(MAIN, ">a.md") + 1),  # the start tag
        (input_el, nth(MAIN, "</input>") + len("</input>")),  # the element
        (inputs_el + len("<inputs>"), nth(MAIN, "</inputs>")),  # the parent's content
        (inputs_el, nth(MAIN, "</inputs>") + len("</inputs>")),  # the parent
        (0, nth(MAIN, "</task>\n", 3) + len("</task>")),  # ... up to the root
    ]
    got = chain(result[0])
    assert got[:6] == [rng(MAIN, s, e, enc) for s, e in expected[:6]]
    assert rng(MAIN, *expected[6], enc) in got
    assert got[-1] == rng(MAIN, 0, len(MAIN), enc)

    name = nth(MAIN, "{{doc}}") + 2
    description = nth(MAIN, "<description>")
    text_start = description + len("<description>")
    assert chain(result[1])[:4] == [
        rng(MAIN, name, name + 3, enc),  # doc
        rng(MAIN, name - 2, name + 5, enc),  # {{doc}}
        rng(MAIN, text_start, nth(MAIN, "</description>"), enc),  # the text
        rng(MAIN, description, nth(MAIN, "</description>") + len("</description>"), enc),  # <description>…
    ]
    docs.close(uri)


async def test_highlights_of_a_name_declaration_and_uses(client: LanguageClient, docs):
    enc = encoding(client)
    uri = await docs.open("main.task.xml")
    result = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, nth(MAIN, "{{doc}}", 2) + 3, enc)))
    declaration = nth(MAIN, '"doc"') + 1
    uses = [nth(MAIN, "{{doc}}", 1) + 2, nth(MAIN, "{{doc}}", 2) + 2, nth(MAIN, 'from="doc"') + 6]
    assert sorted(result, key=lambda h: (h.range.start.line, h.range.start.character)) == [
        types.DocumentHighlight(rng(MAIN, uses[0], uses[0] + 3, enc), types.DocumentHighlightKind.Read),
        types.DocumentHighlight(rng(MAIN, declaration, declaration + 3, enc), types.DocumentHighlightKind.Write),
        types.DocumentHighlight(rng(MAIN, uses[1], uses[1] + 3, enc), types.DocumentHighlightKind.Read),
        types.DocumentHighlight(rng(MAIN, uses[2], uses[2] + 3, enc), types.DocumentHighlightKind.Read),
    ]
    # a ref's target: its use here (the definition is in another file: not highlighted here)
    ref = nth(MAIN, '"shout"') + 1
    result = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, ref + 1, enc)))
    assert list(result) == [types.DocumentHighlight(rng(MAIN, ref, ref + 5, enc), types.DocumentHighlightKind.Read)]
    # on a tag name with no name under it: the start and end tag
    steps = nth(MAIN, "<steps>") + 1
    result = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        types.TextDocumentIdentifier(uri), pos(MAIN, steps + 1, enc)))
    end = nth(MAIN, "</steps>") + 2
    assert list(result) == [types.DocumentHighlight(rng(MAIN, steps, steps + 5, enc), types.DocumentHighlightKind.Text),
                      types.DocumentHighlight(rng(MAIN, end, end + 5, enc), types.DocumentHighlightKind.Text)]
    docs.close(uri)
