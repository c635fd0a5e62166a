"""Quick fixes for common typos: each applied through the one fixer (`fix_text`) and through
`taskdsl check --fix` / `--fix --unsafe-fixes`; afterwards the diagnostic is gone and none is new."""

from __future__ import annotations

import subprocess
import sys

import pytest

from _rulehelp import check, dedent
from taskdsl.cli.main import main
from taskdsl.rules.fixer import fix_text

LIBRARY = dedent("""
    <library>
      <template name="analyze" params="data,config">
        <task><description>Analyze {{data}} with {{config}}</description></task>
      </template>
      <task name="greet">
        <inputs><input name="who">world</input><input name="mood"><task><description>pick</description></task></input></inputs>
        <description>Greet {{who}} {{mood}}</description>
      </task>
      <task name="main" type="sequential">
        <description>d</description>
        <inputs><input name="mood">calm</input></inputs>
        <steps>
          %s
        </steps>
      </task>
    </library>
""")


def in_library(step: str) -> str:
    return LIBRARY % step


def in_cond(test: str) -> str:
    return ('<task type="sequential"><description>d</description><steps>'
            '<task><description>a</description><output_format type="json"/></task>'
            f'<cond><case test="{test}"><task><description>d</description></task></case></cond></steps></task>\n')


# (code, the fix's title, text before, text after, whether the fix is safe)
CASES = [
    ("TD105", "Replace 'sequental' with 'sequential'",
     '<task type="sequental">\n  <description>d</description>\n  <steps><task><description>a</description></task></steps>\n</task>\n',
     '<task type="sequential">\n  <description>d</description>\n  <steps><task><description>a</description></task></steps>\n</task>\n',
     True),
    ("TD105", "Replace 'ful' with 'full'",
     '<task>\n  <description>d</description>\n  <context_management><inherit_context>ful</inherit_context></context_management>\n</task>\n',
     '<task>\n  <description>d</description>\n  <context_management><inherit_context>full</inherit_context></context_management>\n</task>\n',
     True),
    ("TD105", "Replace 'ture' with 'true'",
     '<task>\n  <description>d</description>\n  <manual_xml>ture</manual_xml>\n</task>\n',
     '<task>\n  <description>d</description>\n  <manual_xml>true</manual_xml>\n</task>\n',
     True),
    ("TD101", "Rename <descripton> to <description>",
     '<task>\n  <descripton>Summarize</descripton>\n</task>\n',
     '<task>\n  <description>Summarize</description>\n</task>\n',
     True),
    ("TD103", "Rename attribute 'timout' to 'timeout'",
     '<task type="script">\n  <command timout="5">echo hi</command>\n</task>\n',
     '<task type="script">\n  <command timeout="5">echo hi</command>\n</task>\n',
     True),
    ("TD103", "Rename attribute 'nme' to 'name'",
     '<task>\n  <description>{{x}}</description>\n  <inputs><input nme="x">1</input></inputs>\n</task>\n',
     '<task>\n  <description>{{x}}</description>\n  <inputs><input name="x">1</input></inputs>\n</task>\n',
     True),
    ("TD601", "Replace with 'gpt-4o-mini'",
     '<task>\n  <description>d</description>\n  <model>gpt-4o-mni</model>\n</task>\n',
     '<task>\n  <description>d</description>\n  <model>gpt-4o-mini</model>\n</task>\n',
     False),
    ("TD503", "Rename argument 'dta' to 'data'",
     in_library('<call template="analyze"><arg name="dta">w</arg><arg name="config">c</arg></call>'),
     in_library('<call template="analyze"><arg name="data">w</arg><arg name="config">c</arg></call>'),
     True),
    ("TD503", "Rename argument 'mod' to 'mood'",
     in_library('<task ref="greet"><inputs><input name="mod">happy</input></inputs></task>'),
     in_library('<task ref="greet"><inputs><input name="mood">happy</input></inputs></task>'),
     True),
    ("TD503", "Add an argument for config",
     in_library('<call template="analyze">\n        <arg>weather</arg>\n      </call>'),
     in_library('<call template="analyze">\n        <arg>weather</arg>\n        <arg name="config"></arg>\n      </call>'),
     False),
    ("TD503", "Add an argument for data, config",
     in_library('<call template="analyze"/>'),
     in_library('<call template="analyze"><arg name="data"></arg><arg name="config"></arg></call>'),
     False),
    ("TD503", "Add an input for mood",
     in_library('<task ref="greet"/>'),
     in_library('<task ref="greet"><inputs><input name="mood"/></inputs></task>'),
     False),
    ("TD503", "Add an input for mood",
     in_library('<task ref="greet"><inputs><input name="who">x</input></inputs></task>'),
     in_library('<task ref="greet"><inputs><input name="who">x</input><input name="mood"/></inputs></task>'),
     False),
    ("TD404", "Close as {{x}}",
     '<task>\n  <inputs><input name="x">1</input></inputs>\n  <description>Hello {{x} and more</description>\n</task>\n',
     '<task>\n  <inputs><input name="x">1</input></inputs>\n  <description>Hello {{x}} and more</description>\n</task>\n',
     True),
    ("TD701", "Replace '=' with '=='", in_cond("output.a = 1"), in_cond("output.a == 1"), True),
    ("TD701", "Remove '='", in_cond("output.a === 1"), in_cond("output.a == 1"), True),
    ("TD702", "Replace '&&' with 'and'", in_cond("output.a==1 &amp;&amp; output.b"), in_cond("output.a==1 and output.b"), True),
    ("TD702", "Replace '||' with 'or'", in_cond("output.a||output.b"), in_cond("output.a or output.b"), True),
    ("TD702", "Replace 'True' with 'true'", in_cond("output.a == True"), in_cond("output.a == true"), True),
    ("TD702", "Replace '!' with 'not'", in_cond("!output.a"), in_cond("not output.a"), False),
]
IDS = [f"{code}-{title}" for code, title, *_ in CASES]


def only_diagnostic(text: str):
    diagnostics = check(text).diagnostics
    assert len(diagnostics) == 1, [(d.code, d.message) for d in diagnostics]
    return diagnostics[0]


def fixable(text: str):
    """The one diagnostic with a fix (a typo may bring another without one: TD204 for a misspelt
    <description>, TD503 'mood' unbound beside the misspelt 'mod')."""
    diagnostics = [d for d in check(text).diagnostics if d.fixes]
    assert len(diagnostics) == 1, [(d.code, d.message) for d in diagnostics]
    return diagnostics[0]


@pytest.mark.parametrize("code, title, before, after, safe", CASES, ids=IDS)
def test_the_fix_removes_the_diagnostic_and_adds_none(code, title, before, after, safe):
    diagnostic = fixable(before)
    assert diagnostic.code == code
    assert (diagnostic.fixes[0].title, diagnostic.fixes[0].safe) == (title, safe)
    fixed = fix_text(before, unsafe=True)
    assert fixed.text == after
    assert [(a.diagnostic.code, a.fix.title) for a in fixed.applied] == [(code, title)]
    assert check(after).diagnostics == []
    # --fix alone applies only the safe ones
    assert fix_text(before).text == (after if safe else before)


@pytest.mark.parametrize("code, title, before, after, safe", CASES, ids=IDS)
def test_check_fix_on_the_command_line(code, title, before, after, safe, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.task.xml"
    path.write_text(before, encoding="utf-8")
    exit_code = main(["check", "--fix", "t.task.xml"])
    out, err = capsys.readouterr()
    if safe:
        assert (exit_code, path.read_text(encoding="utf-8")) == (0, after)
        assert f"fixed {code} {title}" in out
        assert err.strip() == "0 errors, 0 warnings in 1 file; 1 fix applied"
    else:
        assert path.read_text(encoding="utf-8") == before
        assert "fixed" not in out
    exit_code = main(["check", "--fix", "--unsafe-fixes", "t.task.xml"])
    out, err = capsys.readouterr()
    assert (exit_code, path.read_text(encoding="utf-8")) == (0, after)
    assert err.strip().startswith("0 errors, 0 warnings in 1 file")


def test_unsafe_fixes_through_the_installed_command(tmp_path):
    path = tmp_path / "t.task.xml"
    path.write_text(in_library('<task ref="greet"/>'), encoding="utf-8")
    completed = subprocess.run([sys.executable, "-m", "taskdsl", "check", "--fix", "--unsafe-fixes", "t.task.xml"],
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["t.task.xml:13:18: fixed TD503 Add an input for mood"]
    assert completed.stderr.strip() == "0 errors, 0 warnings in 1 file; 1 fix applied"
    assert path.read_text(encoding="utf-8") == in_library('<task ref="greet"><inputs><input name="mood"/></inputs></task>')


def test_unsafe_fixes_without_fix_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.task.xml").write_text(in_library('<task ref="greet"/>'), encoding="utf-8")
    assert main(["check", "--unsafe-fixes", "t.task.xml"]) == 2
    _, err = capsys.readouterr()
    assert "taskdsl: error: --unsafe-fixes applies fixes only together with --fix" in err
    assert (tmp_path / "t.task.xml").read_text(encoding="utf-8") == in_library('<task ref="greet"/>')


# ----------------------------------------------------------------------------- no fix where none is obvious


@pytest.mark.parametrize("text, code", [
    (in_cond("output.a is not None"), "TD702"),  # `is not` is `!=`, not `== not`
    (in_cond("output.a &amp; output.b"), "TD702"),  # a single & is bitwise: no obvious word
    (in_cond("output.a == 1 = 2"), "TD701"),  # `== 1 == 2` would be a chained comparison
    ('<task>\n  <description>Hello {{x y}</description>\n</task>\n', "TD404"),  # not a variable
])
def test_no_fix_where_the_rewrite_is_not_obvious(text, code):
    diagnostic = only_diagnostic(text)
    assert (diagnostic.code, diagnostic.fixes) == (code, [])


def test_a_param_that_is_no_identifier_is_never_written_into_markup():
    text = dedent("""
        <library>
          <template name="t" params="x&quot;/&gt;&lt;evil">
            <task><description>d</description></task>
          </template>
          <task name="main" type="sequential"><description>d</description><steps><call template="t"/></steps></task>
        </library>
    """)
    result = check(text)
    mismatch = [d for d in result.diagnostics if d.code == "TD503"]
    assert len(mismatch) == 1 and mismatch[0].fixes == []
    assert fix_text(text, unsafe=True).text == text


def test_a_name_typed_half_way_is_a_guess_not_a_safe_fix():
    text = '<task>\n  <description>d</description>\n  <context_management><fresh>disabled</fresh></context_management>\n</task>\n'
    diagnostic = only_diagnostic(text)
    assert diagnostic.code == "TD101"
    assert [(f.title, f.safe) for f in diagnostic.fixes] == [("Rename <fresh> to <fresh_context>", False)]
    assert fix_text(text).text == text
    assert fix_text(text, unsafe=True).text == text.replace("fresh>", "fresh_context>")


def test_a_typo_close_to_two_words_is_a_guess():
    from taskdsl.language.names import nearest

    assert nearest("sequental", ["atomic", "sequential", "reduce", "script"]) == ("sequential", True)
    assert nearest("inputx", ["inputs", "input"]) == ("input", False)  # both close: not safe
    assert nearest("fresh", ["fresh_context", "inherit_context"]) == ("fresh_context", False)  # typed half-way
    assert nearest("zzz", ["atomic"]) == (None, False)


def test_a_close_but_different_word_is_not_a_safe_rename():
    # <output_slot> (an old draft's element) is near <output_format> for difflib, but no typo of it:
    # renaming it would turn text into an element that must be empty, so --fix leaves it
    text = '<task>\n  <description>d</description>\n  <output_slot>summary</output_slot>\n</task>\n'
    diagnostic = only_diagnostic(text)
    assert [(f.title, f.safe) for f in diagnostic.fixes] == [("Rename <output_slot> to <output_format>", False)]
    assert fix_text(text).text == text


@pytest.mark.parametrize("a, b, distance", [
    ("ture", "true", 1), ("descripton", "description", 1), ("ful", "full", 1), ("dta", "data", 1),
    ("output_slot", "output_format", 5), ("", "abc", 3), ("abc", "abc", 0),
])
def test_typo_distance(a, b, distance):
    from taskdsl.language.names import typo_distance

    assert typo_distance(a, b) == distance == typo_distance(b, a)


def test_an_attribute_is_never_renamed_to_one_already_set():
    # 'nme' is a typo of 'name', but the input has a name: renaming would repeat the attribute
    text = '<task>\n  <description>{{a}}</description>\n  <inputs><input name="a" nme="b">1</input></inputs>\n</task>\n'
    diagnostic = only_diagnostic(text)
    assert diagnostic.code == "TD103" and "(did you mean 'name'?)" in diagnostic.message
    assert diagnostic.fixes == []
    assert fix_text(text, unsafe=True).text == text


NEW_LINES = [c for c in CASES if c[3].count("\n") > c[2].count("\n")]  # fixes that add lines


@pytest.mark.parametrize("code, title, before, after, safe", NEW_LINES, ids=[c[0] for c in NEW_LINES])
def test_a_crlf_file_stays_crlf_after_its_fixes(code, title, before, after, safe, tmp_path, monkeypatch, capsys):
    """A file written with CRLF line endings keeps them: the fixes' own new lines are CRLF too."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.task.xml"
    path.write_bytes(before.replace("\n", "\r\n").encode("utf-8"))
    assert main(["check", "--fix", "--unsafe-fixes", "t.task.xml"]) == 0
    capsys.readouterr()
    assert path.read_bytes() == after.replace("\n", "\r\n").encode("utf-8")


def test_a_file_with_mixed_line_endings_is_left_as_it_is_around_the_fix(tmp_path, monkeypatch, capsys):
    code, title, before, after, safe = NEW_LINES[0]
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.task.xml"
    mixed = before.replace("\n", "\r\n", 1)  # one CRLF, the rest LF: not a CRLF file
    path.write_bytes(mixed.encode("utf-8"))
    assert main(["check", "--fix", "--unsafe-fixes", "t.task.xml"]) == 0
    capsys.readouterr()
    assert path.read_bytes() == after.replace("\n", "\r\n", 1).encode("utf-8")
