"""TD501-TD504 through the checker: exact codes, ranges, messages and fixes."""

from __future__ import annotations

import pytest

from taskdsl.rules.checker import check_text
from taskdsl.language.diagnostics import apply_edits
from taskdsl.library import Library

TEMPLATES = """<library>
  <template name="analyze" params="data,config">
    <task subtype="analysis"><description>{{data}} {{config}}</description></task>
  </template>
  <template name="greet" params="who">
    <task subtype="analysis"><description>Hello {{who}}</description></task>
  </template>
  <task name="fetch" subtype="loader">
    <description>Fetch</description>
    <inputs>
      <input name="url">https://example.org</input>
      <input name="limit"/>
    </inputs>
  </task>
  <task name="store">
    <description>Store</description>
    <inputs><input name="key"/><input name="mode">append</input></inputs>
  </task>
</library>
"""


@pytest.fixture
def library(tmp_path):
    (tmp_path / "lib.task.xml").write_text(TEMPLATES, encoding="utf-8")
    return Library.from_paths([tmp_path])


def found(text: str, code: str, library=None, path=None) -> list[tuple[str, str]]:
    """(source text under the range, message) of each diagnostic with the code."""
    result = check_text(text, path=path, library=library)
    return [(text[d.span.start:d.span.end], d.message) for d in result.diagnostics if d.code == code]


def steps(*body: str) -> str:
    return '<task name="flow" type="sequential">\n  <steps>\n    ' + "\n    ".join(body) + "\n  </steps>\n</task>\n"


# --------------------------------------------------------------------------- TD501


def test_td501_unresolved_ref_call_and_inline_call(library):
    text = steps('<task ref="fetc"><inputs><input name="limit">1</input></inputs></task>',
                 '<call template="analyse"><arg>a</arg><arg>b</arg></call>',
                 '<task><description>{{ gret("x") }}</description></task>')
    assert found(text, "TD501", library) == [
        ("fetc", "'fetc' is not a task or template in the library; did you mean 'fetch'?"),
        ("analyse", "'analyse' is not a task or template in the library; did you mean 'analyze'?"),
        ("gret", "'gret' is not a task or template in the library; did you mean 'greet'?"),
    ]


def test_td501_fixes_one_per_suggestion_unsafe(library):
    text = steps('<task ref="ANALYZE"/>')
    (diagnostic,) = [d for d in check_text(text, library=library).diagnostics if d.code == "TD501"]
    assert [f.title for f in diagnostic.fixes] == ["Change to 'analyze'"]
    assert not any(f.safe for f in diagnostic.fixes)
    assert '<task ref="analyze"/>' in apply_edits(text, diagnostic.fixes[0].edits)


def test_td501_without_suggestion_has_no_fix(library):
    text = steps('<task ref="zzzzzz"/>')
    (diagnostic,) = [d for d in check_text(text, library=library).diagnostics if d.code == "TD501"]
    assert diagnostic.message == "'zzzzzz' is not a task or template in the library"
    assert diagnostic.fixes == []


def test_td501_type_subtype_keys(library):
    text = steps('<task ref="atomic:loader"><inputs><input name="limit">1</input></inputs></task>',
                 '<task ref="atomic:loadr"/>',
                 '<task ref="atomic:analysis"/>')
    assert found(text, "TD501", library) == [
        ("atomic:loadr", "no task or template has the type:subtype key 'atomic:loadr' in the library; "
                         "did you mean 'atomic:loader'?"),
        ("atomic:analysis", "the key 'atomic:analysis' matches 2 definitions (analyze, greet): ref one of them by name"),
    ]
    (ambiguous,) = [d for d in check_text(text, library=library).diagnostics
                    if d.code == "TD501" and "matches" in d.message]
    assert [f.title for f in ambiguous.fixes] == ["Change to 'analyze'", "Change to 'greet'"]


def test_td501_lone_document_resolves_within_itself():
    text = """<library>
  <template name="inner" params="">
    <task><description>x</description></task>
  </template>
  <task name="outer" type="sequential">
    <steps>
      <call template="inner"/>
      <task ref="elsewhere"/>
    </steps>
  </task>
</library>
"""
    assert found(text, "TD501") == [
        ("elsewhere", "'elsewhere' is not a task or template in this file (no workspace library)")]


def test_td501_this_buffer_overrides_the_index_for_its_own_file(library, tmp_path):
    path = str(tmp_path / "lib.task.xml")
    edited = TEMPLATES.replace('name="greet"', 'name="welcome"') .replace("</library>", "  " + steps('<call template="greet"><arg>x</arg></call>') + "</library>")
    assert found(edited, "TD501", library, path=path) == [
        ("greet", "'greet' is not a task or template in the library")]


# --------------------------------------------------------------------------- TD502


def test_td502_duplicate_in_one_file_relates_to_the_other_by_span():
    text = '<library>\n  <template name="dup" params=""><task><description>a</description></task></template>\n' \
           '  <task name="dup"><description>b</description></task>\n</library>\n'
    result = check_text(text, path="/ws/dup.task.xml")
    duplicates = [d for d in result.diagnostics if d.code == "TD502"]
    assert [(text[d.span.start:d.span.end], d.message) for d in duplicates] == [
        ("dup", "'dup' is defined more than once: also at line 3 of this file; names in the library must be unique"),
        ("dup", "'dup' is defined more than once: also at line 2 of this file; names in the library must be unique"),
    ]
    first, second = duplicates
    assert first.related[0].path is None and first.related[0].span == second.span
    assert first.related[0].message == "other definition of 'dup'"


def test_td502_root_task_named_after_its_file(library, tmp_path):
    text = "<task><description>a second greet</description></task>\n"
    path = str(tmp_path / "greet.task.xml")
    result = check_text(text, path=path, library=library)
    (duplicate,) = [d for d in result.diagnostics if d.code == "TD502"]
    assert text[duplicate.span.start:duplicate.span.end] == "task"
    assert duplicate.message == ("'greet' is defined more than once: also at lib.task.xml:5; names in the library must "
                                 "be unique; this task has no name= and takes its file's name: give it one "
                                 "(<task name=\"…\">)")
    assert duplicate.related[0].range == ((4, 18), (4, 23))


# --------------------------------------------------------------------------- TD503


def test_td503_positional_count_for_call(library):
    text = steps('<call template="analyze"><arg>a</arg></call>',
                 '<call template="analyze"><arg>a</arg><arg>b</arg><arg>c</arg></call>',
                 '<call template="greet"><arg>a</arg></call>')
    assert found(text, "TD503", library) == [
        ("analyze", "'analyze' takes 2 arguments (data, config); this call passes 1"),
        ("arg", "'analyze' takes 2 arguments (data, config); this call passes 3"),
    ]
    result = check_text(text, library=library)
    extra = [d for d in result.diagnostics if d.code == "TD503"][1]
    assert text.index("<arg>c</arg>") + 1 == extra.span.start  # the third <arg>'s tag name


def test_td503_named_args(library):
    text = steps('<call template="analyze"><arg name="data">a</arg><arg name="cfg">b</arg></call>',
                 '<call template="analyze"><arg>a</arg><arg name="data">b</arg><arg name="config">c</arg></call>',
                 '<call template="analyze"><arg name="config">c</arg><arg name="data">d</arg></call>')
    assert found(text, "TD503", library) == [
        ("analyze", "call to 'analyze' does not bind its parameter 'config'"),
        ("cfg", "'analyze' has no parameter 'cfg' (its parameters: data, config)"),
        ("data", "parameter 'data' of 'analyze' is bound twice (by position and by name)"),
    ]


def test_td503_ref_inputs_literal_inputs_are_defaults(library):
    text = steps('<task ref="fetch"><inputs><input name="limit">10</input></inputs></task>',
                 '<task ref="fetch"><inputs><input name="url">x</input></inputs></task>',
                 '<task ref="fetch"><inputs><input name="limit">1</input><input name="depth">2</input></inputs></task>',
                 '<task ref="greet"/>')
    assert found(text, "TD503", library) == [
        ("fetch", "ref to 'fetch' does not bind its parameter 'limit': add an <input name=…> for each (they have no default)"),
        ("depth", "'fetch' has no parameter 'depth' (its parameters: url, limit)"),
        ("greet", "ref to 'greet' does not bind its parameter 'who': add an <input name=…> for each (they have no default)"),
    ]


def test_td503_inline_calls_and_defaults_count_range(library):
    text = steps('<task><description>{{greet()}} {{greet("a", 2)}} {{greet(name)}}</description></task>',
                 '<call template="fetch"><arg>u</arg></call>',
                 '<call template="fetch"><arg>u</arg><arg>2</arg></call>',
                 '<call template="store"/>',
                 '<call template="store"><arg>k</arg></call>')
    assert found(text, "TD503", library) == [
        ("{{greet()}}", "'greet' takes 1 argument (who); this call passes 0"),
        ('{{greet("a", 2)}}', "'greet' takes 1 argument (who); this call passes 2"),
        ("fetch", "'fetch' takes 2 arguments (url, limit); this call passes 1"),
        ("store", "'store' takes 1 to 2 arguments (key, mode); this call passes 0"),
    ]


# --------------------------------------------------------------------------- TD504


def test_td504_self_recursion_in_a_lone_document():
    text = '<template name="loop" params="n">\n  <task><description>{{loop(n)}}</description></task>\n</template>\n'
    result = check_text(text)
    cycles = [d for d in result.diagnostics if d.code == "TD504"]
    assert [(text[d.span.start:d.span.end], d.message, d.severity.value) for d in cycles] == [
        ("loop", "reference cycle: loop → loop, with no <cond> on its path: the run cannot end; guard the "
                 "recursive step with a <cond> or break the cycle", "error")]


def test_td504_no_warning_without_a_cycle(library):
    text = '<template name="top" params="">\n  <task type="sequential"><steps><call template="greet"><arg>x</arg></call></steps></task>\n</template>\n'
    assert found(text, "TD504", library) == []
    assert found(text, "TD501", library) == []


def test_rules_document_every_code():
    from taskdsl.rules import RULES

    for code in ("TD501", "TD502", "TD503", "TD504"):
        doc = RULES[code].doc()
        assert code in doc and "Bad:" in doc and "Good:" in doc and "Fix:" in doc


def test_a_long_cycle_is_written_out_once_and_pointed_at_from_every_other_member(tmp_path, capsys, monkeypatch):
    """A ring of 300 templates: the chain is written once, at its first member by name; every other
    member's TD504 (still an error: the run refuses the cycle) is a short pointer to it."""
    from taskdsl.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    size = 300
    for i in range(1, size + 1):
        (tmp_path / f"f{i}.task.xml").write_text(
            f'<template name="t{i}" params="">\n  <task type="sequential"><steps><call template="t{i % size + 1}"/>'
            '</steps></task>\n</template>\n')
    assert main(["check", "."]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == size and all(" error TD504 reference cycle: " in line for line in lines)
    whole = "t1 → " + " → ".join(f"t{i}" for i in range(2, size + 1)) + " → t1"
    assert [line for line in lines if whole in line] == [
        f"f1.task.xml:2:50: error TD504 reference cycle: {whole}, with no <cond> on its path: the run cannot end; "
        "guard the recursive step with a <cond> or break the cycle"]
    assert "f97.task.xml:2:50: error TD504 reference cycle: t97 → t98 → … → t97 (300 names; the whole cycle is shown " \
           "at 't1'), with no <cond> on its path: the run cannot end; guard the recursive step with a <cond> or break " \
           "the cycle" in lines
    assert sum(len(line) for line in lines) < 100_000  # was 300 full chains: 825 KB
