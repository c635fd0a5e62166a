"""Property-based: mutated templates never crash the checker, and its answers are well-formed.

The seeds are the bundled examples and the upstream corpus; hypothesis cuts, splices, repeats and
truncates them, and inserts fragments people type half-way (a lone '<', an open attribute quote,
an unknown entity, a stray end tag).
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from taskdsl.rules.checker import check_text
from taskdsl.language.document import parse

ROOT = Path(__file__).resolve().parents[1]
from mutations import mutated_templates  # noqa: E402
from paths import corpus_files  # noqa: E402
SEEDS = sorted((ROOT / "examples").rglob("*.task.xml")) + corpus_files()[:40]
TEXTS = [path.read_text(encoding="utf-8") for path in SEEDS]
FRAGMENTS = ["<", "</", "<task>", "</task>", '="', '"', "&", "&foo;", "<![CDATA[", "]]>", "<!--", "-->",
             "{{", "}}", "{{x", "<steps>", "<inputs><input name=\"a\">", "<cond><case test=\"output.\">",
             "\x00", "\ufeff", "é", "\U0001F600", "\r\n", "<!DOCTYPE x>", "<?xml version='1.0'?>"]


def mutated():
    return mutated_templates(TEXTS, FRAGMENTS, (1, 4))


CODE = re.compile(r"^TD\d{3}$")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_checker_survives_mutations_and_answers_consistently(text):
    first = check_text(text)
    for diagnostic in first.diagnostics:
        assert CODE.match(diagnostic.code), diagnostic
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text), diagnostic
        assert diagnostic.message and "\n" not in diagnostic.message, diagnostic
        for fix in diagnostic.fixes:
            for edit in fix.edits:
                assert 0 <= edit.span.start <= edit.span.end <= len(text)
    again = check_text(text)
    assert [(d.code, d.span, d.message) for d in again.diagnostics] == [(d.code, d.span, d.message) for d in first.diagnostics]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_scanner_takes_any_text(text):
    doc = parse(text)
    for element in doc.iter():
        assert 0 <= element.start_tag.start <= element.end <= len(text)
        assert text[element.name_span.start : element.name_span.end] == element.tag
