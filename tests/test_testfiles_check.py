"""Test files (`*.test.xml`) are checked like templates: the grammar, the task under test
(TD501, resolved through the library), inputs against its params (TD503), `<expect test>` in
the cond language (TD701/TD702), and `taskdsl check FOLDER` finds them."""

from __future__ import annotations

from taskdsl.rules.checker import check_text
from taskdsl.cli.main import main
from taskdsl.library import Library

SHOUT = """<task name="shout">
  <description>Say {{word}} loudly</description>
  <inputs><input name="word"/></inputs>
</task>
"""


def diagnostics(tmp_path, tests: str):
    (tmp_path / "shout.task.xml").write_text(SHOUT, encoding="utf-8")
    path = tmp_path / "shout.test.xml"
    path.write_text(tests, encoding="utf-8")
    library = Library.from_paths([tmp_path])
    return [(d.code, tests[d.span.start:d.span.end], d.message) for d in check_text(tests, path=str(path), library=library).diagnostics]


def test_a_good_test_file_has_no_diagnostics(tmp_path):
    assert diagnostics(tmp_path, """<tests>
  <test name="shouts" task="shout" model="taskdsl/echo">
    <input name="word">hi</input>
    <expect test='"hi" in output'/>
  </test>
  <test name="needs a word" task="shout">
    <expect_error type="TASK_FAILURE" reason="missing_input"/>
  </test>
</tests>""") == []


def test_unknown_task_is_td501_with_the_nearest_name(tmp_path):
    assert diagnostics(tmp_path, '<tests><test name="t" task="shuot"><expect test="true"/></test></tests>') == [
        ("TD501", "shuot", "'shuot' is not a task or template in the library; did you mean 'shout'?")]


def test_an_input_the_task_does_not_have_is_td503(tmp_path):
    assert diagnostics(tmp_path, '<tests><test name="t" task="shout"><input name="wrd">x</input>'
                                  '<expect test="true"/></test></tests>') == [
        ("TD503", "wrd", "'shout' has no parameter 'wrd' (its parameters: word)")]


def test_expect_tests_are_parsed_as_cond_tests(tmp_path):
    found = diagnostics(tmp_path, """<tests><test name="t" task="shout">
  <expect test="output = = 1"/><expect test="__import__('os')"/><expect test="output.a =="/></test></tests>""")
    assert [code for code, _, _ in found] == ["TD701", "TD702", "TD701"]  # `= =` is a syntax error
    assert found[0][1:] == ("= =", "cond test does not parse: '=' is assignment: use '==' to compare")


def test_grammar_of_test_files(tmp_path):
    found = diagnostics(tmp_path, """<tests><test name="t" task="shout">
  <expect_error type="BOOM"/><expect test="true"/></test><test task="shout"><expect test="true"/></test></tests>""")
    codes = [code for code, _, _ in found]
    assert codes and all(code.startswith("TD1") for code in codes), found
    assert any("BOOM" in message for _, _, message in found)
    assert any("'name'" in message or "name" in text for _, text, message in found)


def test_check_finds_test_files_in_folders(tmp_path, capsys):
    (tmp_path / "shout.task.xml").write_text(SHOUT, encoding="utf-8")
    (tmp_path / "shout.test.xml").write_text('<tests><test name="t" task="nope"/></tests>', encoding="utf-8")
    assert main(["check", str(tmp_path)]) == 1
    assert "shout.test.xml:1:29: error TD501 'nope' is not a task or template in the library" in capsys.readouterr().out
