"""`taskdsl test` as a user runs it: one line per test, the summary, exit codes, -k, JSON, replay
fixtures beside the test file, and the examples' own tests."""

import json
import os
from pathlib import Path

import pytest

from taskdsl.cli.main import main
from tests.paths import REPO

SHOUT = """<library>
  <task name="shout" type="script">
    <description>Upper-case a word</description>
    <command>printf '%s' "$TASKDSL_INPUT_WORD" | tr '[:lower:]' '[:upper:]'</command>
    <inputs><input name="word"/></inputs>
  </task>
  <task name="judge">
    <description>Judge {{claim}}</description>
    <inputs><input name="claim"/></inputs>
    <model>gpt-4o-mini</model>
    <output_format type="json"/>
  </task>
</library>
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text(SHOUT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    return tmp_path


def write_tests(folder: Path, body: str, name: str = "shout.test.xml") -> Path:
    path = folder / name
    path.write_text(f"<tests>\n{body}\n</tests>\n", encoding="utf-8")
    return path


def test_the_examples_tests_pass_through_the_cli(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    code, out, err = run(capsys, "test", "examples")
    assert code == 0, out + err
    assert out.splitlines()[-1] == "9 passed, 0 failed"
    assert "PASS examples/greet_pipeline.test.xml::the pipeline greets, shouts and translates" in out
    assert ("PASS examples/replan/summarise_report.test.xml::the report overflows the window and is re-planned into "
            "a reduce over its parts") in out  # answered from summarise_report.replay.json beside the test file


def test_every_example_has_its_test_file_beside_it():
    templates = sorted((REPO / "examples").rglob("*.task.xml"))
    assert templates
    assert [str(t.relative_to(REPO)) for t in templates if not t.with_name(t.name.replace(".task.xml", ".test.xml")).is_file()] == []


def test_pass_fail_and_the_reason_of_each_failure(project, capsys):
    write_tests(project, """<test name="shouts" task="shout"><input name="word">hi</input><expect test='output == "HI"'/></test>
<test name="wrong" task="shout"><input name="word">hi</input><expect test='output == "hi"'/></test>
<test name="fails instead" task="shout"><expect test='output == "HI"'/></test>
<test name="succeeds instead" task="shout"><input name="word">hi</input><expect_error type="TASK_FAILURE"/></test>
<test name="wrong reason" task="shout"><expect_error type="TASK_FAILURE" reason="script_error"/></test>
<test name="right error" task="shout"><expect_error type="TASK_FAILURE" reason="missing_input"/></test>""")
    code, out, err = run(capsys, "test")
    assert code == 1
    assert out.splitlines() == [
        "PASS shout.test.xml::shouts",
        "FAIL shout.test.xml::wrong",
        "     expect 'output == \"hi\"' does not hold; output: 'HI'",
        "ERROR shout.test.xml::fails instead",
        "     the run failed: TASK_FAILURE (missing_input): task 'shout': input 'word' has no value: pass it "
        "from the caller or with --input word=…",
        "FAIL shout.test.xml::succeeds instead",
        "     expected a TASK_FAILURE error, the run succeeded with output 'HI'",
        "FAIL shout.test.xml::wrong reason",
        "     expected a TASK_FAILURE (script_error) error, the run failed with TASK_FAILURE (missing_input): task "
        "'shout': input 'word' has no value: pass it from the caller or with --input word=…",
        "PASS shout.test.xml::right error",
        "2 passed, 3 failed, 1 error",
    ]


def test_taskdsl_test_in_a_folder_of_the_project_runs_the_projects_tests(project, capsys, monkeypatch):
    write_tests(project, """<test name="shouts" task="shout"><input name="word">hi</input><expect test='output == "HI"'/></test>""")
    (project / "notes").mkdir()
    monkeypatch.chdir(project / "notes")
    code, out, _ = run(capsys, "test")
    assert (code, out.splitlines()) == (0, [f"PASS {os.path.join('..', 'shout.test.xml')}::shouts", "1 passed, 0 failed"])


def test_a_failing_test_answered_by_echo_without_a_fixture_says_so(project, capsys):
    (project / "ask.task.xml").write_text('<task name="asker"><description>Answer as JSON</description>'
                                          '<output_format type="json" schema="object"/>'
                                          '<disable_reparsing>true</disable_reparsing></task>\n', encoding="utf-8")
    write_tests(project, '<test name="json" task="asker"><expect test="output.ok == true"/></test>', "more.test.xml")
    code, out, _ = run(capsys, "test", "more.test.xml")
    assert code == 1
    assert out.splitlines()[1].endswith(
        "(its model calls were answered by taskdsl/echo, which repeats its prompt: no more.replay.json is beside "
        "more.test.xml; record one with `taskdsl test --record`, or name a model)")
    write_tests(project, '<test name="script" task="shout"><expect test="output == 1"/></test>', "shout.test.xml")
    code, out, _ = run(capsys, "test", "shout.test.xml")  # a script calls no model: nothing to say about echo
    assert "taskdsl/echo" not in out


def test_a_replay_test_without_its_fixture_says_where_the_fixture_goes(project, capsys):
    (project / "ask.task.xml").write_text('<task name="asker"><description>Say hi</description></task>\n',
                                          encoding="utf-8")
    write_tests(project, '<test name="r" task="asker" model="taskdsl/replay"><expect test="output == 1"/></test>',
                "more.test.xml")
    code, out, _ = run(capsys, "test", "more.test.xml")
    assert code == 1
    assert out.splitlines()[1].endswith("(a test's replay answers are more.replay.json beside more.test.xml: write it "
                                        "there, or record it with `taskdsl test --record`)")


def test_text_compared_with_a_number_says_the_output_is_text(project, capsys):
    write_tests(project, """<test name="a number" task="shout"><input name="word">5</input><expect test="output == 5"/></test>
<test name="a boolean" task="shout"><input name="word">true</input><expect test="not (output != true)"/></test>
<test name="a text" task="shout"><input name="word">5</input><expect test="output == '6'"/></test>""")
    code, out, _ = run(capsys, "test", "shout.test.xml")
    assert code == 1
    assert out.splitlines() == [
        "FAIL shout.test.xml::a number",
        "     expect 'output == 5' does not hold; output: '5' (text is never equal to the number 5: compare with "
        "the text '5', or declare <output_format type=\"json\"/> on the task so its output is read as JSON)",
        "FAIL shout.test.xml::a boolean",
        "     expect 'not (output != true)' does not hold; output: 'TRUE' (text is never equal to the boolean true: "
        "compare with the text 'true', or declare <output_format type=\"json\"/> on the task so its output is read as JSON)",
        "FAIL shout.test.xml::a text",
        "     expect \"output == '6'\" does not hold; output: '5'",
        "0 passed, 3 failed",
    ]


def test_an_expect_that_cannot_be_evaluated_fails_the_test_with_the_reason(project, capsys):
    write_tests(project, """<test name="member of text" task="shout"><input name="word">hi</input>
  <expect test="len(output.size) > 1"/></test>""")
    code, out, _ = run(capsys, "test", "shout.test.xml")
    assert code == 1
    assert out.splitlines()[1] == "     expect 'len(output.size) > 1': len() needs a string, array or object, got null; output: 'HI'"
    assert out.splitlines()[-1] == "0 passed, 1 failed"


def test_k_selects_tests_by_name_and_json_reports_each(project, capsys):
    write_tests(project, """<test name="shouts hi" task="shout"><input name="word">hi</input><expect test='output == "HI"'/></test>
<test name="shouts yo" task="shout"><input name="word">yo</input><expect test='output == "no"'/></test>""")
    code, out, _ = run(capsys, "test", "-k", "HI", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert (report["passed"], report["failed"], [t["name"] for t in report["tests"]]) == (1, 0, ["shouts hi"])
    assert report["tests"][0] == {"file": "shout.test.xml", "name": "shouts hi", "line": 2, "task": "shout",
                                  "status": "passed", "passed": True, "message": None,
                                  "output": "HI"}


def test_a_test_file_that_does_not_check_is_exit_2_and_the_others_still_run(project, capsys):
    write_tests(project, '<test name="t" task="shuot"><expect test="true"/></test>', "broken.test.xml")
    write_tests(project, '<test name="ok" task="shout"><input name="word">a</input><expect test=\'output == "A"\'/></test>')
    code, out, err = run(capsys, "test")
    assert code == 2
    assert "broken.test.xml:2:22: error TD501 'shuot' is not a task or template in the library; did you mean " \
           "'shout'?" in err
    assert "taskdsl test: broken.test.xml does not check (1 error(s)); its tests were not run" in err
    assert out.splitlines() == ["PASS shout.test.xml::ok", "1 passed, 0 failed, 1 test file(s) do not check"]


def test_no_test_files_is_a_usage_error(project, capsys):
    code, _, err = run(capsys, "test")
    assert code == 2
    assert "taskdsl test: no test files (*.test.xml) in ." in err


def test_a_replay_fixture_beside_the_test_file_answers_the_model_calls(project, capsys):
    """The task names a real model: the fixture answers it, nothing leaves the machine."""
    write_tests(project, """<test name="judged" task="judge"><input name="claim">the sky is green</input>
  <expect test="output.verdict == false and len(output.reasons) == 1"/></test>""", "judge.test.xml")
    (project / "judge.replay.json").write_text(json.dumps({"answers": [
        {"contains": "the sky is green", "answer": {"verdict": False, "reasons": ["it is blue"]}}]}), encoding="utf-8")
    code, out, err = run(capsys, "test", "judge.test.xml")
    assert (code, out.splitlines()[-1]) == (0, "1 passed, 0 failed"), out + err


def test_without_a_fixture_the_tests_model_is_used(project, capsys):
    write_tests(project, """<test name="echoed" task="judge" model="taskdsl/echo"><input name="claim">x</input>
  <expect test='"Judge x" in output'/></test>""", "judge.test.xml")
    code, out, _ = run(capsys, "test", "judge.test.xml")
    # the test's model wins over the task's <model>: echo answers with the prompt (text, not JSON)
    assert (code, out.splitlines()) == (0, ["PASS judge.test.xml::echoed", "1 passed, 0 failed"])


def test_model_answers_reach_only_the_safe_evaluator(project, capsys):
    """An answer shaped like code is data: the expect compares it, nothing runs it."""
    write_tests(project, """<test name="hostile" task="judge"><input name="claim">x</input>
  <expect test='"system(" in output.verdict'/></test>""", "judge.test.xml")
    (project / "judge.replay.json").write_text(json.dumps({"answers": [
        {"answer": {"verdict": "__import__('os').system('touch pwned')"}}]}), encoding="utf-8")
    code, out, _ = run(capsys, "test", "judge.test.xml")
    assert code == 0, out
    assert not os.path.exists(project / "pwned")


# --------------------------------------------------------------------------- JUnit

MIXED = """<test name="passes" task="shout"><input name="word">hi</input><expect test='output == "HI"'/></test>
<test name="fails" task="shout"><input name="word">hi</input><expect test='len(output) == 2'/><expect test='output == "hi"'/></test>
<test name="errors" task="shout"><expect test='output == "HI"'/></test>"""


def junit_schema():
    import xmlschema

    return xmlschema.XMLSchema(REPO / "tests" / "fixtures" / "junit-10.xsd")


def test_junit_counts_passing_failing_and_erroring_tests(project, capsys):
    from lxml import etree

    write_tests(project, MIXED)
    code, out, _ = run(capsys, "test", "--format", "junit")
    assert code == 1
    junit_schema().validate(out)
    root = etree.fromstring(out.encode("utf-8"))
    assert (root.get("name"), root.get("tests"), root.get("failures"), root.get("errors")) == ("taskdsl test", "3", "1", "1")
    suite = root.find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) \
        == ("shout.test.xml", "3", "1", "1", "0")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["passes", "fails", "errors"]
    assert {c.get("classname") for c in cases.values()} == {"shout.test.xml"}
    assert all(float(c.get("time")) >= 0 for c in cases.values())
    assert len(cases["passes"]) == 0
    failure = cases["fails"].find("failure")
    assert failure.get("message") == "expect 'output == \"hi\"' does not hold"
    assert failure.text == "expect 'output == \"hi\"' does not hold; output: 'HI'"
    error = cases["errors"].find("error")
    assert error.get("message").startswith("the run failed: TASK_FAILURE (missing_input): task 'shout'")
    assert cases["errors"].find("failure") is None


def test_junit_file_is_written_while_text_is_printed_and_exit_0_when_all_pass(project, capsys, tmp_path):
    write_tests(project, MIXED.splitlines()[0])
    report = tmp_path / "out" / "junit.xml"
    report.parent.mkdir()
    code, out, _ = run(capsys, "test", "--junit", str(report))
    assert (code, out.splitlines()) == (0, ["PASS shout.test.xml::passes", "1 passed, 0 failed"])
    text = report.read_text(encoding="utf-8")
    junit_schema().validate(text)
    assert '<testsuites name="taskdsl test" tests="1" failures="0" errors="0">' in text


def test_junit_skips_the_tests_of_a_file_that_does_not_check_with_exit_2(project, capsys):
    from lxml import etree

    write_tests(project, '<test name="t" task="shuot"><expect test="true"/></test>', "broken.test.xml")
    write_tests(project, MIXED)
    code, out, _ = run(capsys, "test", "--format", "junit")
    assert code == 2
    junit_schema().validate(out)
    root = etree.fromstring(out.encode("utf-8"))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert (suites["broken.test.xml"].get("tests"), suites["broken.test.xml"].get("skipped")) == ("1", "1")
    skipped = suites["broken.test.xml"].find("testcase/skipped")
    assert skipped.get("message") == "the test file does not check"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")


def test_junit_to_an_unwritable_file_is_exit_2(project, capsys):
    write_tests(project, MIXED.splitlines()[0])
    code, _, err = run(capsys, "test", "--junit", str(project / "missing" / "j.xml"))
    assert code == 2
    assert "taskdsl test: cannot write --junit" in err


def test_a_replay_fixture_answers_a_task_that_names_no_model(tmp_path, capsys, monkeypatch):
    """docs/testing.md: with NAME.replay.json beside the test file, every model call of its tests is
    answered from it, unless the test or the task names an offline model — the project's default
    model (taskdsl/echo unless configured) included."""
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "judge.task.xml").write_text(
        '<task name="judge"><description>Is the claim true? {{claim}}</description>'
        '<inputs><input name="claim"/></inputs><output_format type="json" schema="object"/></task>\n', encoding="utf-8")
    (tmp_path / "judge.test.xml").write_text(
        '<tests><test name="green sky" task="judge"><input name="claim">the sky is green</input>'
        '<expect test="output.verdict == false"/></test>'
        '<test name="named echo" task="judge" model="taskdsl/echo"><input name="claim">x</input>'
        '<expect_error type="INVALID_OUTPUT" reason="schema_mismatch"/></test></tests>\n', encoding="utf-8")
    (tmp_path / "judge.replay.json").write_text(json.dumps(
        {"answers": [{"contains": "the sky is green", "answer": {"verdict": False}}]}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "test", ".")
    assert "PASS judge.test.xml::green sky" in out and "PASS judge.test.xml::named echo" in out, out + err
    assert code == 0


@pytest.mark.parametrize("kind", ["link outside", "too large"])
def test_a_fixture_the_reader_refuses_is_an_error_not_a_call_to_the_real_model(project, capsys, tmp_path, kind):
    """A replay fixture is read as every file a run reads (inside the project, at most 50 MB); one that is there but
    refused fails its tests with the reason, rather than letting them call the paid model they name."""
    (project / "ask.task.xml").write_text('<task name="asker"><description>Say hi</description></task>\n',
                                          encoding="utf-8")
    write_tests(project, '<test name="r" task="asker" model="openai/gpt-4o"><expect test="output == \'hi\'"/></test>',
                "more.test.xml")
    fixture = project / "more.replay.json"
    if kind == "link outside":
        elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere.json"
        elsewhere.write_text(json.dumps({"answers": [{"answer": "hi"}]}), encoding="utf-8")
        fixture.symlink_to(elsewhere)
        why = f"is outside the project ({project}) (it is '{elsewhere}')"
    else:
        with open(fixture, "wb") as big:
            big.truncate(51_000_000)
        why = "is larger than 50,000,000 bytes"
    code, out, _ = run(capsys, "test", "more.test.xml")
    assert code == 1
    assert out.splitlines()[0] == "ERROR more.test.xml::r"
    assert out.splitlines()[1].startswith("     more.replay.json was not read: ")
    assert why in out.splitlines()[1]
    assert out.splitlines()[1].endswith(": fix it or remove it (without it the test's model calls go to the models "
                                        "it names)")
