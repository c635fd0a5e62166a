"""The work behind one document is linear in its size: positions are converted with each line read
once, and the cond parser does not scan its token list per operator (8,000 `or` terms took 22.5 s)."""

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from taskdsl.features.util import Positions
from taskdsl.language import cond
from taskdsl.language.document import Document, parse


def test_positions_on_one_long_line_read_the_line_once(monkeypatch):
    text = "<a>" + "<task>é😀" * 10_000 + "</a>"
    doc = parse(text)
    reads = []
    original = Document.line_text
    monkeypatch.setattr(Document, "line_text", lambda self, i: reads.append(i) or original(self, i))
    for encoding in (types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8):
        reads.clear()
        positions = Positions(doc, PositionCodec(encoding))
        got = [positions.position(offset) for offset in range(0, len(text), 3)]
        assert reads == [0]
        # the same answers as pygls's own conversion
        for offset, position in list(zip(range(0, len(text), 3), got))[::997]:
            expected = PositionCodec(encoding).position_to_client_units([original(doc, 0)], types.Position(0, offset))
            assert (position.line, position.character) == (expected.line, expected.character)


class CountingList(list):
    scans = 0

    def __iter__(self):
        CountingList.scans += 1
        return super().__iter__()


def test_a_cond_test_of_8000_or_terms_scans_its_tokens_once(monkeypatch):
    tokenize = cond.tokenize
    monkeypatch.setattr(cond, "tokenize", lambda text: CountingList(tokenize(text)))
    CountingList.scans = 0
    expr = cond.parse_expr(" or ".join(["output.x == 1"] * 8_000))
    assert CountingList.scans <= 2
    assert cond.holds(expr, {"x": 1})


class CountingText(str):
    """A text whose `find` counts the characters it walks."""

    walked = 0

    def find(self, sub, start=0, end=None):
        found = super().find(sub, start) if end is None else super().find(sub, start, end)
        CountingText.walked += (len(self) if found == -1 else found) - start
        return found


def test_placeholders_reopened_before_their_close_are_found_in_one_walk_of_the_text():
    """`{{` 40,000 times, then `} ` 40,000 times and one `}}` (160 KB): each `{{` searched the whole run of `}`
    again for its `}}` (14.7 s; the server stalled 17 s for everyone on a document just under the worker's size)."""
    from taskdsl.language.templating import find_placeholders

    k = 40_000
    text = CountingText("{{" * k + "} " * k + "}}")
    CountingText.walked = 0
    found = find_placeholders(text)
    assert CountingText.walked <= 3 * len(text)
    assert [p.kind for p in found[:2]] == ["malformed", "malformed"] and len(found) == k
    assert found[-1].start == 2 * (k - 1) and found[-1].end == len(text)  # the last '{{' closes at the end


def test_did_you_mean_is_searched_for_at_most_a_hundred_names_a_document(monkeypatch):
    """2,000 steps each naming another unknown model: each did-you-mean scans litellm's whole model map (~15 ms),
    and a 145 KB document held the server 31 s (44 s more at each edit). Past 100 searches a document's
    diagnostics come without one; the first ones keep theirs."""
    import difflib

    from taskdsl.rules.checker import check_text

    searches = []
    original = difflib.get_close_matches
    monkeypatch.setattr(difflib, "get_close_matches", lambda *a, **k: searches.append(a[0]) or original(*a, **k))
    steps = "".join(f"<task><description>d</description><model>gpt-4o-mini-x{i}</model></task>\n" for i in range(2_000))
    text = f'<task type="sequential" name="t"><description>d</description><steps>\n{steps}</steps></task>\n'
    found = [d for d in check_text(text).diagnostics if d.code == "TD601"]
    assert len(found) == 2_000
    assert len({name for name in searches if name.startswith("gpt-4o-mini-x")}) == 100
    assert found[0].message == ("model 'gpt-4o-mini-x0' is unknown to litellm's model map: did you mean 'gpt-4o-mini' "
                                "or 'gpt-4o-mini-tts'?")
    assert found[-1].message == ("model 'gpt-4o-mini-x1999' is unknown to litellm's model map: use a litellm model "
                                 "name, or a provider prefix such as 'ollama/' or 'openai/'")


def test_unknown_template_names_are_matched_against_the_library_at_most_a_hundred_times(monkeypatch):
    """10,000 `{{fn_N(a, b)}}` calls of names nothing defines, beside a library of 2,000 templates: each sorted the
    library's names and searched them for a did-you-mean (31.9 s)."""
    import difflib

    from taskdsl.library import Library
    from taskdsl.rules.checker import check_text

    searches = []
    original = difflib.get_close_matches
    monkeypatch.setattr(difflib, "get_close_matches",  # a search over no candidate costs nothing: not counted
                        lambda *a, **k: (len(a[1]) and searches.append(a[0])) or original(*a, **k))
    library = Library()
    templates = "".join(f'<template name="tmpl_{i}" params="a b"><task><description>{{{{a}}}} {{{{b}}}}</description>'
                        f'</task></template>\n' for i in range(2_000))
    library.update_file("/project/lib.task.xml", f"<library>\n{templates}</library>\n")
    calls = " ".join(f"{{{{fn_{i}(a, b)}}}}" for i in range(10_000))
    text = (f'<task name="d"><description>{calls}</description><inputs><input name="a">1</input>'
            '<input name="b">2</input></inputs></task>\n')
    found = [d for d in check_text(text, path="/project/d.task.xml", library=library).diagnostics if d.code == "TD501"]
    assert len(found) == 10_000
    assert len({name for name in searches if name.startswith("fn_")}) == 100
    assert found[-1].message == "'fn_9999' is not a task or template in the library"
