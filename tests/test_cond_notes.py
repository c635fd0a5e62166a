"""A <cond> case (or a test's `expect`) that does not hold because of a likely mistake is said, not
only skipped: a member the output does not have, compared with a value (`output.lable == 'negative'`
where the output has `label`: the member is null, so the case quietly fails and the run takes the
default), or text compared with a number. The run still goes as written; the note is on stderr, in
`--json`'s steps and in the trace. A placeholder naming a missing member fails, listing the members."""

import json

import pytest

from taskdsl.cli.main import main
from taskdsl.language import cond

ROUTE = """<task type="sequential" name="review">
  <description>Classify then route</description>
  <steps>
    <task type="script" name="classify"><command>printf '{{"label": "negative", "score": 0.9}}'</command>
      <output_format type="json"/></task>
    <cond>
      <case test="{test}"><task type="script" name="neg"><command>echo negative</command></task></case>
      <default><task type="script" name="other"><command>echo other</command></task></default>
    </cond>
  </steps>
</task>
"""

OUTPUT = {"label": "negative", "score": 0.9, "meta": {"source": "web"}}


@pytest.mark.parametrize("test, said", [
    ("output.lable == 'negative'",
     "output has no member 'lable' (it has label, meta, score): did you mean output.label?"),
    ("output['lable'] == 'negative'",
     "output has no member 'lable' (it has label, meta, score): did you mean output.label?"),
    ("output.score > 0.5 and output.meta.sorce == 'web'",
     "output.meta has no member 'sorce' (it has source): did you mean output.meta.source?"),
    ("output.missing.deep == 1", "output has no member 'missing' (it has label, meta, score)"),
    ("not (output.lable != 'x')",
     "output has no member 'lable' (it has label, meta, score): did you mean output.label?"),
])
def test_a_member_the_output_does_not_have_compared_with_a_value_is_said(test, said):
    assert cond.holds(test, OUTPUT) is False
    assert cond.why_not(test, OUTPUT) == said


@pytest.mark.parametrize("test", [
    "output.error",  # the usual ways to ask whether a member is there: no note
    "not output.error",
    "output.error == null",
    "output.label == 'positive'",  # the member is there: the answer is simply no
    "output.score > 1",
])
def test_asking_whether_a_member_is_there_or_a_plain_no_says_nothing(test):
    assert cond.why_not(test, OUTPUT) is None


def test_a_member_of_text_says_to_declare_json_output():
    assert cond.why_not("output.label == 'x'", "plain text") == (
        "output is text, not a JSON object: it has no member 'label'; declare <output_format type=\"json\"/> on the "
        "task so its output is read as JSON")


def test_the_run_says_why_the_case_did_not_hold_and_goes_on_as_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "r.task.xml").write_text(ROUTE.format(test="output.lable == 'negative'"), encoding="utf-8")
    assert main(["run", "r.task.xml", "--yes"]) == 0
    out, err = capsys.readouterr()
    assert out == "other\n"  # the default, as the template says
    assert ("  ! review/steps[2]: cond case 1 (test \"output.lable == 'negative'\") did not hold: output has no member "
            "'lable' (it has label, score): did you mean output.label?\n") in err
    assert main(["run", "r.task.xml", "--yes", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "did not hold" not in err  # --quiet: no progress lines, the note is in the JSON
    steps = {s["path"]: s for s in json.loads(out)["steps"]}
    assert steps["review/steps[2]"]["notes"] == [
        "cond case 1 (test \"output.lable == 'negative'\") did not hold: output has no member 'lable' (it has label, "
        "score): did you mean output.label?"]


def test_a_case_that_holds_or_a_plain_no_notes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    for test, shown in (("output.label == 'negative'", "negative"), ("output.label == 'positive'", "other")):
        (tmp_path / "r.task.xml").write_text(ROUTE.format(test=test), encoding="utf-8")
        assert main(["run", "r.task.xml", "--yes", "--json"]) == 0
        out, err = capsys.readouterr()
        assert "did not hold" not in err and json.loads(out)["content"] == shown
        assert not any("notes" in s for s in json.loads(out)["steps"])


def test_a_placeholder_naming_a_missing_member_lists_the_members(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lo.task.xml").write_text(
        '<task type="sequential" name="lo"><description>x</description><steps>'
        '<task type="script" name="classify"><command>printf \'{"label": "negative", "score": 0.9}\'</command>'
        '<output_format type="json"/></task>'
        '<task type="script" name="show"><command>echo "{{last_output.lable}}"</command></task>'
        '</steps></task>\n', encoding="utf-8")
    assert main(["run", "lo.task.xml", "--yes"]) == 1
    assert ("task 'show': 'last_output' has no member 'lable' (it has label, score): did you mean 'label'? "
            "(in {{last_output.lable}})") in capsys.readouterr().err


def test_an_expect_with_a_misspelt_member_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "c.task.xml").write_text(
        '<task type="script" name="classify"><description>x</description>'
        '<command>printf \'{"label": "negative"}\'</command><output_format type="json"/></task>\n', encoding="utf-8")
    (tmp_path / "c.test.xml").write_text(
        '<tests><test name="label" task="classify"><expect test="output.lable == \'negative\'"/></test></tests>\n',
        encoding="utf-8")
    assert main(["test", "c.test.xml"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1] == (
        "     expect \"output.lable == 'negative'\" does not hold; output: '{\"label\": \"negative\"}' (output has no "
        "member 'lable' (it has label): did you mean output.label?)")
