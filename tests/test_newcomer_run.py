"""What a newcomer with the README hit on the command line (run, check, test), each through the
real CLI (`main([...])`) with the exact message, exit code and result a user would look at."""

import json

import pytest

from taskdsl.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("")
    return tmp_path


# -- a root task's from=: the run is its caller -----------------------------------------------

ROOT_FROM = ('<task name="f1"><instructions>Hi {{x}}</instructions>'
             '<inputs><input name="x" from="nothing_here"/></inputs></task>\n')


def test_a_root_inputs_from_is_asked_of_the_run_and_the_run_takes_it(project, capsys):
    (project / "f1.task.xml").write_text(ROOT_FROM)
    code, out, err = run(capsys, "check", "f1.task.xml")
    assert (code, out, err.strip()) == (0, "", "0 errors, 0 warnings in 1 file")
    code, out, err = run(capsys, "run", "f1.task.xml")
    assert code == 1
    assert last_line(err) == (
        "taskdsl run: TASK_FAILURE (missing_input): task 'f1': input 'x' has no value: from=\"nothing_here\" names "
        "nothing the caller gives: pass it from the caller, or run with --input nothing_here=… (or --input x=…)")
    code, out, err = run(capsys, "render", "f1.task.xml")
    assert last_line(err) == ("taskdsl render: 'f1' needs the input 'nothing_here': pass --input nothing_here=… "
                              "(or --inputs FILE.json)")
    # what render and the failure advise, the run accepts
    code, out, err = run(capsys, "run", "f1.task.xml", "--input", "nothing_here=5")
    assert (code, out.strip()) == (0, "Hi 5")
    code, out, err = run(capsys, "run", "f1.task.xml", "--input", "x=6")
    assert (code, out.strip()) == (0, "Hi 6")


def test_a_from_with_a_field_reads_the_field(project, capsys):
    (project / "f.task.xml").write_text('<task name="f"><instructions>Hi {{x}}</instructions>'
                                        '<inputs><input name="x" from="obj.field"/></inputs></task>\n')
    code, out, err = run(capsys, "run", "f.task.xml", "--input", 'obj={"field": "there"}')
    assert (code, out.strip()) == (0, "Hi there")


# -- a reduce that keeps its accumulator on purpose --------------------------------------------

LONGEST = """<task type="reduce" name="longest">
  <initial_value></initial_value>
  <inputs>
    <input name="a">watermelon</input><input name="b">fig</input>
    <input name="c">kiwi</input><input name="d">pear</input>
  </inputs>
  <inner_task type="script"><command>printf '%s' {{current_data}}</command></inner_task>
  <reduction_task type="script">
    <command>if [ ${#TASKDSL_INPUT_CURRENT_RESULT} -gt ${#TASKDSL_INPUT_ACCUMULATOR} ]; then printf '%s' "$TASKDSL_INPUT_CURRENT_RESULT"; else printf '%s' "$TASKDSL_INPUT_ACCUMULATOR"; fi</command>
  </reduction_task>
</task>
"""


def test_a_script_reduction_keeping_the_largest_is_not_no_progress(project, capsys):
    (project / "longest.task.xml").write_text(LONGEST)
    code, out, err = run(capsys, "run", "longest.task.xml", "--json")
    report = json.loads(out)
    assert (code, report["status"], report["content"]) == (0, "COMPLETE", "watermelon")


# -- --json always answers in JSON; batch options say what they need -------------------------

CLASSIFY = """<task name="classify">
  <instructions>Classify this ticket: {{ticket}}</instructions>
  <inputs><input name="ticket"/></inputs>
</task>
"""


def test_run_json_prints_the_refusal_of_a_template_that_does_not_check(project, capsys):
    (project / "bad.task.xml").write_text('<task name="bad"><instructions>Hi {{nobody}}</instructions></task>\n')
    code, out, err = run(capsys, "run", "bad.task.xml", "--json")
    assert code == 2
    diagnostic = ("bad.task.xml:1:35: error TD402 {{nobody}} names nothing visible: nothing here declares it "
                  "(visible: nothing)")
    assert json.loads(out) == {"error": {
        "type": "VALIDATION_ERROR", "reason": "template_errors",
        "message": "bad.task.xml does not check (1 error(s)); fix them first",
        "details": {"diagnostics": [diagnostic]}}}
    assert err.splitlines() == [diagnostic, "taskdsl run: bad.task.xml does not check (1 error(s)); fix them first"]


@pytest.mark.parametrize("argv, message", [
    (["nothere.task.xml"], "nothere.task.xml: no such file"),
    (["classify.task.xml", "--input", "ticket"], "--input 'ticket': expected NAME=VALUE"),
])
def test_run_json_prints_every_refusal_as_json(project, capsys, argv, message):
    (project / "classify.task.xml").write_text(CLASSIFY)
    code, out, err = run(capsys, "run", *argv, "--json")
    assert (code, json.loads(out)["error"]["message"], last_line(err)) == (2, message, f"taskdsl run: {message}")


@pytest.mark.parametrize("argv, message", [
    (["--resume", "--input", "ticket=x"], "--resume needs --data ROWS.jsonl|ROWS.csv (a batch run); a single run "
                                          "prints its result (--json for JSON)"),
    (["--out", "r.jsonl", "--input", "ticket=x"], "--out needs --data ROWS.jsonl|ROWS.csv (a batch run); a single "
                                                  "run prints its result (--json for JSON)"),
    (["--jobs", "3", "--executor", "ray", "--input", "ticket=x"], "--jobs and --executor need --data "
                                                                   "ROWS.jsonl|ROWS.csv (a batch run); a single run "
                                                                   "prints its result (--json for JSON)"),
    (["--fail-fast", "--input", "ticket=x"], "--fail-fast needs --data ROWS.jsonl|ROWS.csv (a batch run); a single "
                                             "run prints its result (--json for JSON)"),
    (["--data", "rows.jsonl", "--input", "ticket=x"], "--input/--inputs and --data do not go together: put the "
                                                      "inputs in the rows"),
    (["--data", "rows.jsonl", "--out", "outdir"], "--out outdir is a folder: give the file the results go to "
                                                  "(RESULTS.jsonl)"),
])
def test_batch_options_given_wrongly_are_named(project, capsys, argv, message):
    (project / "classify.task.xml").write_text(CLASSIFY)
    (project / "rows.jsonl").write_text('{"ticket": "x"}\n')
    (project / "outdir").mkdir()
    code, out, err = run(capsys, "run", "classify.task.xml", *argv)
    assert (code, out, last_line(err)) == (2, "", f"taskdsl run: {message}")


def test_a_batch_row_missing_an_input_fails_as_a_single_run_does_and_says_to_fill_the_row(project, capsys):
    (project / "classify.task.xml").write_text(CLASSIFY)
    (project / "rows.jsonl").write_text('{}\n')
    code, out, err = run(capsys, "run", "classify.task.xml", "--data", "rows.jsonl", "--model", "taskdsl/echo")
    assert code == 1
    assert json.loads(out)["error"] == {
        "type": "TASK_FAILURE", "reason": "missing_input",
        "message": "cannot run 'classify': input 'ticket' has no value; give every row a value for it (a key of "
                   "the JSON line or a CSV column: {\"ticket\": \"…\"})",
        "details": {"missing": ["ticket"]}}
    code, out, err = run(capsys, "run", "classify.task.xml", "--json")  # the single run: the same type and reason
    assert (code, json.loads(out)["error"]["type"], json.loads(out)["error"]["reason"]) == (
        1, "TASK_FAILURE", "missing_input")


# -- taskdsl test: what a failure shows, and tests that test nothing ----------------------------

LINES = """<task name="lines" type="script"><command>printf 'say &lt;b class="x"&gt;\\nhi\\n&lt;/b&gt;'</command></task>
"""


def test_a_failing_expect_shows_the_output_with_its_line_breaks_and_the_test_as_written(project, capsys):
    (project / "lines.task.xml").write_text(LINES)
    (project / "lines.test.xml").write_text("""<tests>
  <test name="joined" task="lines">
    <expect test='output == "say &lt;b class=\\"x\\"&gt; hi &lt;/b&gt;"'/>
  </test>
</tests>
""")
    code, out, err = run(capsys, "test", "lines.test.xml")
    assert code == 1
    assert out.splitlines()[:2] == [
        "FAIL lines.test.xml::joined",
        "     expect 'output == \"say <b class=\\\"x\\\"> hi </b>\"' does not hold; "
        "output: 'say <b class=\"x\">\\nhi\\n</b>'"]


def test_a_test_expecting_nothing_is_a_warning_and_a_name_used_twice_an_error(project, capsys):
    (project / "lines.task.xml").write_text(LINES)
    (project / "weak.test.xml").write_text("""<tests>
  <test name="runs" task="lines"/>
  <test name="same" task="lines"><expect test="true"/></test>
</tests>
""")
    warning = ("weak.test.xml:2:4: warning TD705 test 'runs' has no <expect> or <expect_error>: it passes whenever "
               "the run succeeds; add <expect test=\"…\"/> (<expect test=\"true\"/> if that is all it checks)")
    code, out, err = run(capsys, "check", "weak.test.xml")
    assert (code, out.splitlines()) == (0, [warning])
    code, out, err = run(capsys, "test", "weak.test.xml")
    assert (code, err.splitlines(), out.splitlines()[-1]) == (0, [warning], "2 passed, 0 failed")
    (project / "weak.test.xml").write_text("""<tests>
  <test name="same" task="lines"><expect test="true"/></test>
  <test name="same" task="lines"><expect test='"hi" in output'/></test>
</tests>
""")
    error = ("weak.test.xml:3:15: error TD706 the test name 'same' is used twice in this file (also on line 2): "
             "rename one of them")
    code, out, err = run(capsys, "test", "weak.test.xml")
    assert (code, err.splitlines()) == (2, [
        error, "taskdsl test: weak.test.xml does not check (1 error(s)); its tests were not run"])


# -- two unnamed root tasks with one file name ------------------------------------------------

def test_two_unnamed_roots_with_one_file_name_say_the_name_is_the_file_name_and_suggest_name(project, capsys):
    for folder in ("a", "b"):
        (project / folder).mkdir()
        (project / folder / "x.task.xml").write_text("<task><instructions>A</instructions></task>\n")
    code, out, err = run(capsys, "run", "a/x.task.xml")
    assert code == 2
    assert err.splitlines() == [
        "a/x.task.xml:1:2: error TD502 'x' is defined more than once: also at ../b/x.task.xml:1 (named after its "
        "file); names in the library must be unique; this task has no name= and takes its file's name: give it "
        "one (<task name=\"…\">)",
        "taskdsl run: a/x.task.xml does not check (1 error(s)); fix them first"]
    (project / "b" / "x.task.xml").write_text('<task name="x_b"><instructions>A</instructions></task>\n')
    code, out, err = run(capsys, "run", "a/x.task.xml")
    assert (code, out.strip()) == (0, "A")


# -- a guarded recursion that never takes its exit -----------------------------------------------

def test_a_guarded_recursion_that_never_ends_points_at_its_cond(project, capsys):
    (project / "rec.task.xml").write_text("""<library>
  <task name="countdown" type="sequential">
    <inputs><input name="n">3</input></inputs>
    <steps>
      <task type="script"><command>echo '{"n": 5}'</command><output_format type="json"/></task>
      <cond>
        <case test="output.n == 0"><task type="script"><command>echo done</command></task></case>
        <default><task ref="countdown"><inputs><input name="n">1</input></inputs></task></default>
      </cond>
    </steps>
  </task>
</library>
""")
    code, out, err = run(capsys, "run", "rec.task.xml", "--task", "countdown", "-q")
    assert (code, last_line(err)) == (1, (
        "taskdsl run: RESOURCE_EXHAUSTION (call_depth): more than 50 nested calls through the cycle countdown → "
        "countdown: the <cond> around the recursive step took it every time: check its tests (the case that ends "
        "the recursion never held)"))


# -- scratch files: the way docs/testing.md shows works under run and test alike ---------------

def test_a_scratch_file_made_with_mktemp_works_under_run_without_tmpdir_and_under_test(project, capsys, monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    (project / "scratch.task.xml").write_text(
        '<task name="scratch" type="script"><command>out=$(mktemp) &amp;&amp; printf kept &gt; "$out" &amp;&amp; '
        'cat "$out" &amp;&amp; rm -f "$out"</command></task>\n')
    (project / "scratch.test.xml").write_text(
        '<tests><test name="scratch" task="scratch"><expect test=\'output == "kept"\'/></test></tests>\n')
    code, out, err = run(capsys, "run", "scratch.task.xml", "-q")
    assert (code, out) == (0, "kept\n")
    code, out, err = run(capsys, "test", "scratch.test.xml")
    assert (code, out.splitlines()) == (0, ["PASS scratch.test.xml::scratch", "1 passed, 0 failed"])


# -- a replay fixture's misspelt key -------------------------------------------------------------

def test_a_misspelt_key_of_a_replay_answer_is_refused_with_the_key_meant(project, capsys, monkeypatch):
    (project / "a.task.xml").write_text('<task name="a"><instructions>say x</instructions></task>\n')
    (project / "r.json").write_text('{"answers": [{"contans": "x", "answer": "y"}]}')
    monkeypatch.setenv("TASKDSL_REPLAY_FILE", "r.json")
    code, out, err = run(capsys, "run", "a.task.xml", "--model", "taskdsl/replay")
    assert (code, last_line(err)) == (2, (
        "taskdsl run: VALIDATION_ERROR (replay_fixture): model 'taskdsl/replay': replay fixture 'r.json': answer 1 "
        "has the key 'contans', which replay does not read; did you mean 'contains'? (an answer takes contains, "
        f"answer, test) ({project / 'r.json'}); fix it (or record it again with taskdsl test --record)"))
    (project / "r.json").write_text('{"answers": [{"contains": "x", "answer": "y"}]}')
    code, out, err = run(capsys, "run", "a.task.xml", "--model", "taskdsl/replay")
    assert (code, out) == (0, "y\n")


# -- message slips ---------------------------------------------------------------------------------

def test_a_non_ascii_name_is_told_names_are_ascii(project, capsys):
    (project / "w.task.xml").write_text('<task name="w"><instructions>hi</instructions>'
                                        '<inputs><input name="wörter">1</input></inputs></task>\n')
    code, out, err = run(capsys, "check", "w.task.xml")
    assert (code, out.splitlines()) == (1, [
        "w.task.xml:1:68: error TD105 'wörter' is not valid for attribute 'name' of <input>; expected a name: an "
        "ASCII letter (a-z, A-Z) or underscore, then ASCII letters, digits or underscores (e.g. my_input)"])


def test_a_trace_in_a_missing_folder_names_the_folder(project, capsys):
    (project / "a.task.xml").write_text('<task name="a" type="script"><command>echo hi</command></task>\n')
    code, out, err = run(capsys, "run", "a.task.xml", "--trace", "nowhere/dir/t.jsonl", "-q")
    assert (code, out, err) == (2, "", "taskdsl run: nowhere/dir/t.jsonl: no such folder nowhere/dir: create it first\n")


def test_a_tiny_budget_is_written_as_given(project, capsys):
    (project / "m.task.xml").write_text('<task name="m"><instructions>hello there</instructions>'
                                        '<model>gpt-4o-mini</model></task>\n')
    code, out, err = run(capsys, "run", "m.task.xml", "--max-cost", "0.0000001", "-q")
    assert code == 1
    assert "over its budget of $0.0000001: raise --max-cost" in last_line(err)


def test_check_of_a_missing_file_prints_no_summary_that_reads_as_a_pass(project, capsys):
    code, out, err = run(capsys, "check", "nonexist.task.xml")
    assert (code, out, err) == (2, "", "taskdsl: error: nonexist.task.xml: no such file or directory\n")


def test_memory_index_counts_an_entry_dropped_for_lying_outside_the_project(project, capsys):
    (project / "notes.md").write_text("q3 revenue")
    (project / ".taskdsl").mkdir()
    (project / ".taskdsl" / "memory.json").write_text('{"../../etc/passwd": "x"}')
    code, out, err = run(capsys, "memory", "index", "notes.md")
    assert (code, err) == (0, "wrote .taskdsl/memory.json: 1 entry (1 new, 0 refreshed, 1 removed)\n")
