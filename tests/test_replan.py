"""Re-planning at run time, through the real command line (`taskdsl run … --json` in a subprocess)
with the offline replay model: its fixture claims a small context window, so a long report
overflows it, and its recorded answers play the model that writes the new structure."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from paths import REPO

EXAMPLE = REPO / "examples" / "replan"
REPORT = (EXAMPLE / "report.txt").read_text(encoding="utf-8")
FIXTURE = json.loads((EXAMPLE / "summarise_report.replay.json").read_text(encoding="utf-8"))
REDUCE = FIXTURE["answers"][0]["answer"]  # the structure the example's model proposes
TASK = (EXAMPLE / "summarise_report.task.xml").read_text(encoding="utf-8")
SUMMARY = "Sales grew, costs fell, hiring paused."
REPARSE = "This task failed when it ran"  # words of the built-in reparse template's prompt


def taskdsl(folder, *args, answers=None, window=4000):
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    fixture = folder / "replay.json"
    fixture.write_text(json.dumps({"context_window": window, "answers": answers or FIXTURE["answers"]}),
                       encoding="utf-8")
    environment["TASKDSL_REPLAY_FILE"] = str(fixture)
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=300)


def run_report(folder, task=TASK, answers=None, *extra):
    (folder / "summarise_report.task.xml").write_text(task, encoding="utf-8")
    return taskdsl(folder, "run", "summarise_report.task.xml", "--model", "taskdsl/replay", "--json",
                   "--input", f"report={REPORT}", *extra, answers=answers)


def proposing(structure, error="RESOURCE_EXHAUSTION"):
    """The example's answers, with `structure` as the reparse model's answer."""
    return [{"contains": [REPARSE, error], "answer": structure}] + FIXTURE["answers"][1:]


def report_of(done):
    return json.loads(done.stdout)


def failed(done, type_="RESOURCE_EXHAUSTION", reason="context") -> dict:
    """The run's error, after checking it failed with `type_` (`reason`)."""
    assert done.returncode == 1, done.stderr
    error = report_of(done)["error"]
    assert (error["type"], error["reason"]) == (type_, reason)
    return error


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    return tmp_path


# --------------------------------------------------------------------------- the input overflows the window


def test_an_overflowing_step_is_replanned_into_a_reduce_over_parts(project):
    done = run_report(project)
    assert done.returncode == 0, done.stderr
    report = report_of(done)
    assert report["content"] == SUMMARY
    replanned = report["notes"]["replanned"]
    assert {k: replanned[k] for k in ("task", "error", "reason", "depth")} == {
        "task": "summarise_report", "error": "RESOURCE_EXHAUSTION", "reason": "context", "depth": 1}
    assert replanned["structure"].strip() == REDUCE.strip()
    assert replanned["model"] == "taskdsl/replay"
    assert replanned["template"].endswith(os.path.join("taskdsl", "templates", "reparse.task.xml"))
    steps = [(s["path"], s["status"]) for s in report["steps"]]
    assert steps[:3] == [("summarise_report", "COMPLETE"), ("summarise_report/replan", "COMPLETE"),
                         ("summarise_report/replan/inner_task[1]", "COMPLETE")]
    assert len([p for p, _ in steps if "inner_task" in p]) == 3  # the report in three parts, one per section
    assert report["notes"]["dataUsage"]["model_calls"] == 7  # the model writing the reduce, then its 6 calls
    text = taskdsl(project, "run", "summarise_report.task.xml", "--model", "taskdsl/replay",
                   "--input", f"report={REPORT}")
    assert text.stdout == SUMMARY + "\n"
    assert ("↻ summarise_report: RESOURCE_EXHAUSTION, re-planned (level 1): a reduce task — Summarise the "
            "report part by part (see --json)") in text.stderr


def test_the_parts_are_cut_at_paragraphs_and_named_in_the_prompt(project):
    # the reparse model is told the sizes and the parts' names; each part holds one section
    answers = [{"contains": [REPARSE, "report: 13,791 characters", "also bound in 3 parts: report_part1 (",
                             "report_part3 ("], "answer": REDUCE}] + FIXTURE["answers"][1:]
    done = run_report(project, TASK, answers)
    assert done.returncode == 0, done.stderr
    assert report_of(done)["content"] == SUMMARY


def test_the_example_in_the_docs_runs_as_written(tmp_path):
    folder = tmp_path / "replan"
    shutil.copytree(EXAMPLE, folder)
    environment = {**{k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"},
                   "TASKDSL_REPLAY_FILE": str(folder / "summarise_report.replay.json")}
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "summarise_report.task.xml", "--model",
                           "taskdsl/replay", "--input", f"report={REPORT}"], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (0, SUMMARY + "\n"), done.stderr


# --------------------------------------------------------------------------- locks


LOCKED = TASK.replace("  </inputs>\n", "  </inputs>\n  <{lock}>true</{lock}>\n")


def test_disable_reparsing_leaves_the_error_standing(project):
    done = run_report(project, LOCKED.format(lock="disable_reparsing"))
    error = failed(done)
    assert error["details"]["not_replanned"] == ("the task or a task around it sets "
                                                 "<disable_reparsing>true</disable_reparsing>")
    assert "proposal" not in error["details"]
    assert [s["path"] for s in report_of(done)["steps"]] == ["summarise_report"]


def in_a_sequential(before: str = "", after: str = "") -> str:
    """The summarising step inside a sequential, with `before` steps and `after` its steps."""
    return textwrap.dedent("""\
        <task name="summarise_report" type="sequential">
          <description>Summarise a long report</description>
          <inputs>
            <input name="report"/>
          </inputs>
          <steps>
        {before}    <task>
              <description>Summarise it</description>
              <instructions>Summarise this report in one line: {{{{report}}}}</instructions>
            </task>
          </steps>
        {after}</task>
        """).format(before=before, after=after)


def test_disable_reparsing_on_an_ancestor_covers_its_steps(project):
    task = in_a_sequential(after="  <disable_reparsing>true</disable_reparsing>\n")
    done = run_report(project, task)
    assert done.returncode == 1
    inner = report_of(done)["error"]["details"]["error"]
    assert inner["type"] == "RESOURCE_EXHAUSTION"
    assert "disable_reparsing" in inner["details"]["not_replanned"]
    plain = run_report(project, task.replace("  <disable_reparsing>true</disable_reparsing>\n", ""))
    assert report_of(plain)["content"] == SUMMARY  # the same step without the lock is re-planned


def test_manual_xml_returns_the_proposal_without_running_it(project):
    done = run_report(project, LOCKED.format(lock="manual_xml"))
    error = failed(done)
    assert error["details"]["proposal"].strip() == REDUCE.strip()
    assert error["details"]["not_replanned"].startswith("the task or a task around it sets <manual_xml>true</manual_xml>")
    assert [s["path"] for s in report_of(done)["steps"]] == ["summarise_report"]
    assert "  not re-planned: the task or a task around it sets <manual_xml>true</manual_xml>" in done.stderr


# --------------------------------------------------------------------------- two levels, then the error stands


AGAIN = textwrap.dedent("""\
    <task type="sequential">
      <description>Summarise the report in one step</description>
      <steps>
        <task>
          <description>Summarise the whole report</description>
          <instructions>Summarise the whole report: {{report}}</instructions>
        </task>
      </steps>
    </task>""")


def test_a_third_failure_after_two_levels_is_the_error_with_both_attempts(project):
    done = run_report(project, TASK, proposing(AGAIN))
    error = failed(done)
    attempts = error["details"]["replans"]
    assert [(a["task"], a["depth"]) for a in attempts] == [
        ("summarise_report", 1), ("summarise_report/replan/steps[1]", 2)]
    assert all(a["structure"].strip() == AGAIN.strip() for a in attempts)
    innermost = error["details"]["replan_error"]["details"]["error"]["details"]["replan_error"]
    last = innermost["details"]["error"]
    assert last["details"]["not_replanned"] == "at most 2 levels of re-planning"
    paths = [s["path"] for s in report_of(done)["steps"]]
    assert "summarise_report/replan/steps[1]/replan/steps[1]" in paths
    assert not any("replan/steps[1]/replan/steps[1]/replan" in p for p in paths)


# --------------------------------------------------------------------------- an answer of the wrong form


RELEASE = textwrap.dedent("""\
    <task name="release">
      <description>Describe the release</description>
      <instructions>Describe the release as a JSON object with its version and date.</instructions>
      <output_format type="json" schema="object"/>
    </task>
    """)
VERSION_ONLY = textwrap.dedent("""\
    <task>
      <description>Give only the version</description>
      <instructions>Give the release's version as a JSON object with one member, version.</instructions>
      <output_format type="json" schema="object"/>
    </task>""")
RELEASE_ANSWERS = [{"contains": [REPARSE, "INVALID_OUTPUT"], "answer": VERSION_ONLY},
                   {"contains": "one member, version", "answer": '{"version": "2.0"}'},
                   {"contains": "as a JSON object with its version and date", "answer": "version 2.0, out on Friday"},
                   {"contains": "Your answer cannot be used", "answer": "version 2.0, out on Friday"}]


def test_an_invalid_output_step_is_replanned(project):
    (project / "release.task.xml").write_text(RELEASE, encoding="utf-8")
    done = taskdsl(project, "run", "release.task.xml", "--model", "taskdsl/replay", "--json", answers=RELEASE_ANSWERS)
    assert done.returncode == 0, done.stderr
    report = report_of(done)
    assert report["parsed_content"] == {"version": "2.0"}
    replanned = report["notes"]["replanned"]
    assert (replanned["error"], replanned["reason"], replanned["depth"]) == ("INVALID_OUTPUT", "schema_mismatch", 1)
    assert replanned["structure"].strip() == VERSION_ONLY.strip()


def test_echo_cannot_write_a_structure_so_nothing_is_replanned(project):
    (project / "release.task.xml").write_text(RELEASE, encoding="utf-8")
    done = taskdsl(project, "run", "release.task.xml", "--model", "taskdsl/echo", "--json")
    assert done.returncode == 1
    error = report_of(done)["error"]
    assert error["type"] == "INVALID_OUTPUT"
    assert error["details"]["not_replanned"] == ("the model taskdsl/echo repeats its prompt and cannot write a "
                                                 "structure; run with a model (--model) to re-plan")
    assert "  not re-planned: the model taskdsl/echo repeats its prompt" in done.stderr


def test_a_library_reparse_template_is_used_instead_of_the_built_in_one(project):
    (project / "lib.task.xml").write_text(textwrap.dedent("""\
        <library>
          <template name="split_for_release" params="task_xml, error">
            <task subtype="reparse">
              <description>Re-plan a release description that failed</description>
              <instructions>OUR OWN REPARSE PROMPT. Failed: {{task_xml}} Error: {{error}}</instructions>
            </task>
          </template>
        </library>
        """), encoding="utf-8")
    (project / "release.task.xml").write_text(RELEASE, encoding="utf-8")
    answers = [{"contains": ["OUR OWN REPARSE PROMPT", "INVALID_OUTPUT", "<task name=\"release\">"],
                "answer": VERSION_ONLY}] + RELEASE_ANSWERS[1:]
    done = taskdsl(project, "run", "release.task.xml", "--model", "taskdsl/replay", "--json", answers=answers)
    assert done.returncode == 0, done.stderr
    replanned = report_of(done)["notes"]["replanned"]
    assert replanned["template"] == str(project / "lib.task.xml")


def test_a_reparse_template_running_a_command_outside_the_plan_is_not_used(project):
    # the reparse template is chosen only when a task fails: the run's consent never saw its script input
    (project / "lib.task.xml").write_text(textwrap.dedent("""\
        <library>
          <template name="split_for_release" params="task_xml, error">
            <task subtype="reparse">
              <description>Re-plan a release description that failed</description>
              <inputs>
                <input name="extra">
                  <task type="script">
                    <description>More context</description>
                    <command>touch pwned</command>
                  </task>
                </input>
              </inputs>
              <instructions>OUR OWN REPARSE PROMPT. {{extra}} Failed: {{task_xml}} Error: {{error}}</instructions>
            </task>
          </template>
        </library>
        """), encoding="utf-8")
    (project / "release.task.xml").write_text(RELEASE, encoding="utf-8")
    answers = [{"contains": "OUR OWN REPARSE PROMPT", "answer": VERSION_ONLY}] + RELEASE_ANSWERS[1:]
    done = taskdsl(project, "run", "release.task.xml", "--model", "taskdsl/replay", "--json", answers=answers)
    assert done.returncode == 1
    error = report_of(done)["error"]
    assert error["type"] == "INVALID_OUTPUT"
    assert error["details"]["not_replanned"] == ("no structure: VALIDATION_ERROR (reparse_template): the reparse "
                                                 "template runs shell commands the run was not allowed to run "
                                                 "($ touch pwned)")
    assert not (project / "pwned").exists()


# --------------------------------------------------------------------------- hostile answers


def test_a_proposal_with_a_dtd_is_an_xml_parse_error_and_reads_nothing(project):
    secret = project / "secret.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    hostile = (f'<!DOCTYPE task [<!ENTITY leak SYSTEM "file://{secret}">]>\n'
               "<task><description>&leak;</description><instructions>&leak;</instructions></task>")
    done = run_report(project, TASK, proposing(hostile))
    error = failed(done, "XML_PARSE_ERROR", "dtd")
    assert error["details"]["replan_of"]["task"] == "summarise_report"
    assert error["details"]["replan_of"]["error"]["type"] == "RESOURCE_EXHAUSTION"
    assert "TOP-SECRET" not in done.stdout + done.stderr


SCRIPT = textwrap.dedent("""\
    <task type="script">
      <description>Summarise with a tool</description>
      <command>touch pwned</command>
    </task>""")


def test_a_proposal_running_a_shell_command_is_refused_without_consent(project):
    done = run_report(project, TASK, proposing(SCRIPT))
    error = failed(done)
    assert error["details"]["not_replanned"] == (
        "the structure runs shell commands the run was not allowed to run ($ touch pwned): a run may execute only "
        "the commands of the plan it was started with; write the structure into the template to run it")
    assert error["details"]["proposal"].strip() == SCRIPT.strip()
    assert not (project / "pwned").exists()


def test_a_command_the_run_was_started_with_may_run_again(project):
    # the run's own plan holds `date +%Y >> year.txt` (no standard input, as the step after it gets
    # its empty output): a structure running that same command is within its consent
    task = in_a_sequential(before=("    <task type=\"script\">\n      <description>The year</description>\n"
                                    "      <command>date +%Y &gt;&gt; year.txt</command>\n    </task>\n"))
    structure = SCRIPT.replace("touch pwned", "date +%Y &gt;&gt; year.txt")
    done = run_report(project, task, proposing(structure))
    assert done.returncode == 0, done.stderr
    years = (project / "year.txt").read_text(encoding="utf-8").split()
    assert len(years) == 2 and years[0] == years[1] and years[0].isdigit()  # the plan's run, then the structure's


def test_a_proposal_reading_files_outside_the_project_is_never_read(project):
    outside = textwrap.dedent("""\
        <task>
          <description>Summarise with the password file</description>
          <instructions>Summarise the report.</instructions>
          <file_paths>
            <path>/etc/passwd</path>
          </file_paths>
        </task>""")
    done = run_report(project, TASK, proposing(outside) + [{"contains": "root:", "answer": "LEAKED"}])
    assert done.returncode == 1
    error = report_of(done)["error"]
    assert error["type"] == "RESOURCE_EXHAUSTION"
    # refused before it runs: the plan listed no file outside the template's folder (tests/security/test_replan_reads.py)
    assert error["details"]["not_replanned"].startswith("the structure reads files the run's plan did not list (/etc/passwd)")
    assert "LEAKED" not in done.stdout


# --------------------------------------------------------------------------- a reduce that makes no progress


TALLY = textwrap.dedent("""\
    <task name="tally" type="reduce">
      <description>Tally the votes</description>
      <inputs>
        <input name="a">yes</input>
        <input name="b">no</input>
        <input name="c">yes</input>
      </inputs>
      <initial_value>nothing yet</initial_value>
      <inner_task>
        <description>Read one vote</description>
        <instructions>Read this vote: {{current_data}}</instructions>
      </inner_task>
      <reduction_task>
        <description>Add the vote</description>
        <instructions>Add {{current_result}} to the tally {{accumulator}}</instructions>
      </reduction_task>
    </task>
    """)
COUNT_AT_ONCE = textwrap.dedent("""\
    <task>
      <description>Count the votes at once</description>
      <instructions>Count the yes votes among {{a}}, {{b}} and {{c}}.</instructions>
    </task>""")


def test_a_reduce_making_no_progress_is_replanned(project):
    (project / "tally.task.xml").write_text(TALLY, encoding="utf-8")
    answers = [{"contains": [REPARSE, "NO_PROGRESS"], "answer": COUNT_AT_ONCE},
               {"contains": "Count the yes votes among yes, no and yes", "answer": "2 yes votes"},
               {"contains": "Read this vote", "answer": "a vote"},
               {"contains": "Add a vote to the tally", "answer": "nothing yet"}]  # the tally never moves
    done = taskdsl(project, "run", "tally.task.xml", "--model", "taskdsl/replay", "--json", answers=answers)
    assert done.returncode == 0, done.stderr
    report = report_of(done)
    assert report["content"] == "2 yes votes"
    assert (report["notes"]["replanned"]["task"], report["notes"]["replanned"]["error"]) == ("tally", "NO_PROGRESS")


# --------------------------------------------------------------------------- which template, which model


def reparse_library(project, body: str) -> None:
    (project / "lib.task.xml").write_text(textwrap.dedent("""\
        <library>
          <template name="our_reparse" params="task_xml, error">
            <task subtype="reparse">
              <description>Re-plan a failed task</description>
              <instructions>Failed: {{task_xml}} Error: {{error}}</instructions>
        {body}    </task>
          </template>
        </library>
        """).format(body=body), encoding="utf-8")


def test_the_reparse_template_s_own_model_answers(project):
    # the failed task runs on replay, the project's reparse template names echo: echo is asked (and cannot)
    reparse_library(project, "      <model>taskdsl/echo</model>\n")
    (project / "release.task.xml").write_text(RELEASE.replace(
        '  <output_format', '  <model>taskdsl/replay</model>\n  <output_format'), encoding="utf-8")
    done = taskdsl(project, "run", "release.task.xml", "--json", answers=RELEASE_ANSWERS)
    error = failed(done, "INVALID_OUTPUT", "schema_mismatch")
    assert error["details"]["not_replanned"].startswith("the model taskdsl/echo repeats its prompt")


def test_a_reparse_template_that_is_not_atomic_leaves_the_error_standing(project):
    reparse_library(project, "      <steps><task><description>x</description></task></steps>\n")
    (project / "lib.task.xml").write_text((project / "lib.task.xml").read_text().replace(
        '<task subtype="reparse">', '<task type="sequential" subtype="reparse">').replace(
        "      <instructions>Failed: {{task_xml}} Error: {{error}}</instructions>\n", ""), encoding="utf-8")
    (project / "release.task.xml").write_text(RELEASE, encoding="utf-8")
    done = taskdsl(project, "run", "release.task.xml", "--model", "taskdsl/replay", "--json", answers=RELEASE_ANSWERS)
    error = failed(done, "INVALID_OUTPUT", "schema_mismatch")
    assert error["details"]["not_replanned"] == (
        f"no structure: VALIDATION_ERROR (reparse_template): the reparse template 'our_reparse' "
        f"({project / 'lib.task.xml'}) must be an atomic task or a template whose task is atomic")


# --------------------------------------------------------------------------- models the consent never saw


def test_a_reparse_template_naming_a_paid_model_the_plan_did_not_call_is_not_used(project):
    # the run's plan calls only the offline replay model (no cost question); the project's reparse
    # template would call a paid model nobody agreed to
    reparse_library(project, "      <model>gpt-4o-mini</model>\n")
    (project / "release.task.xml").write_text(RELEASE.replace(
        '  <output_format', '  <model>taskdsl/replay</model>\n  <output_format'), encoding="utf-8")
    done = taskdsl(project, "run", "release.task.xml", "--json", answers=RELEASE_ANSWERS)
    error = failed(done, "INVALID_OUTPUT", "schema_mismatch")
    assert error["details"]["not_replanned"] == (
        "no structure: VALIDATION_ERROR (reparse_template): the reparse template names the model gpt-4o-mini, which "
        "the run's plan did not call: it may cost money and the run's consent did not cover it")


def test_a_structure_calling_a_paid_model_the_plan_did_not_call_is_not_run(project):
    (project / "release.task.xml").write_text(RELEASE.replace(
        '  <output_format', '  <model>taskdsl/replay</model>\n  <output_format'), encoding="utf-8")
    paid = VERSION_ONLY.replace("  <output_format", "  <model>gpt-4o-mini</model>\n  <output_format")
    done = taskdsl(project, "run", "release.task.xml", "--json",
                   answers=[{"contains": [REPARSE, "INVALID_OUTPUT"], "answer": paid}] + RELEASE_ANSWERS[1:])
    error = failed(done, "INVALID_OUTPUT", "schema_mismatch")
    assert error["details"]["not_replanned"] == (
        "the structure calls models the run's plan did not (gpt-4o-mini): each call sends its prompt to that "
        "model's provider and may cost money, and the run's consent did not cover them")
    assert error["details"]["models"] == ["gpt-4o-mini"]


def test_a_structure_calling_a_free_remote_model_the_plan_did_not_call_is_not_run_either(project):
    (project / "release.task.xml").write_text(RELEASE.replace(
        '  <output_format', '  <model>taskdsl/replay</model>\n  <output_format'), encoding="utf-8")
    free = VERSION_ONLY.replace("  <output_format", "  <model>gemini/gemma-3-27b-it</model>\n  <output_format")
    done = taskdsl(project, "run", "release.task.xml", "--json",
                   answers=[{"contains": [REPARSE, "INVALID_OUTPUT"], "answer": free}] + RELEASE_ANSWERS[1:])
    error = failed(done, "INVALID_OUTPUT", "schema_mismatch")
    assert error["details"]["models"] == ["gemini/gemma-3-27b-it"]


def test_a_structure_running_a_planned_command_with_its_own_values_is_refused(project):
    """The plan ran `touch {{target}}` on scratch.txt; the model's structure runs the same text on a
    path of its own: held to the plan's commands after substitution, it is refused."""
    task = textwrap.dedent("""\
        <task name="summarise_report" type="sequential">
          <description>Summarise a long report</description>
          <inputs>
            <input name="report"/>
            <input name="target">scratch.txt</input>
          </inputs>
          <steps>
            <task type="script"><command>touch {{target}}</command></task>
            <task>
              <description>Summarise it</description>
              <instructions>Summarise this report in one line: {{report}}</instructions>
            </task>
          </steps>
        </task>
        """)
    structure = textwrap.dedent("""\
        <task type="script">
          <description>Summarise with a tool</description>
          <inputs><input name="target">../escaped.txt</input></inputs>
          <command>touch {{target}}</command>
        </task>""")
    done = run_report(project, task, proposing(structure))
    assert (project / "scratch.txt").exists()
    assert not (project.parent / "escaped.txt").exists()
    assert done.returncode == 1, done.stderr
    assert "values, standard input or folder the run's plan did not run it with" in done.stdout + done.stderr
