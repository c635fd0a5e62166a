"""`taskdsl run --agree DIGEST` approves exactly the plan `--plan` printed: CI reviews the plan, then
runs it with its digest; a repository that changed in between (a pull, a checkout: another command,
another widened folder) is refused, naming both digests, and nothing runs. Through the real command
line."""

import json
import subprocess
import sys

import pytest

TASK = ('<task type="sequential" name="r"><description>Note and summarise</description><steps>'
        '<task type="script" name="s"><command>echo ran &gt;&gt; ran.txt</command></task>'
        '<task name="sum"><instructions>Summarise the notes</instructions>'
        '<file_paths><path>{notes}</path></file_paths></task>'
        '</steps></task>\n')


def taskdsl(folder, *args):
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def project(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "n.txt").write_text("notes", encoding="utf-8")
    folder = tmp_path / "p"
    folder.mkdir()
    # the project widens what the run may read: without an agreement the run is refused
    (folder / "taskdsl.toml").write_text(f'[run]\nallow_read = ["{allowed}"]\n', encoding="utf-8")
    (folder / "r.task.xml").write_text(TASK.format(notes=allowed / "n.txt"), encoding="utf-8")
    return folder


def planned(folder, *extra):
    done = taskdsl(folder, "run", "--plan", "r.task.xml", "--model", "taskdsl/echo", *extra)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("Plan ")
    return last.split()[1]


def test_the_reviewed_plan_runs_with_its_digest(project):
    digest = planned(project)
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--agree", digest)
    assert done.returncode == 0, done.stderr
    assert (project / "ran.txt").read_text(encoding="utf-8") == "ran\n"
    without = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo")  # no agreement: refused
    assert without.returncode == 2 and "(not_agreed)" in without.stderr


def test_a_plan_that_changed_after_review_is_refused_naming_both(project):
    digest = planned(project)
    (project / "r.task.xml").write_text((project / "r.task.xml").read_text(encoding="utf-8").replace(
        "echo ran", "echo pulled"), encoding="utf-8")  # a pull between the review and the run
    now = planned(project)
    assert now != digest
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--agree", digest, "--json")
    assert done.returncode == 2
    assert not (project / "ran.txt").exists()  # nothing ran
    assert (f"taskdsl run: VALIDATION_ERROR (plan_changed): the plan is {now}, not the {digest} you agreed to "
            "with --agree: the template, its inputs, models, files or configuration changed since --plan printed "
            "it; run --plan again to review the new plan") in done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["reason"] == "plan_changed" and error["details"]["agreed"] == digest
    assert error["details"]["plan"].startswith(now)


def test_another_input_is_another_plan(project):
    (project / "r.task.xml").write_text((project / "r.task.xml").read_text(encoding="utf-8").replace(
        'name="r">', 'name="r"><inputs><input name="who">me</input></inputs>'), encoding="utf-8")
    digest = planned(project, "--input", "who=me")
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--input", "who=you", "--agree", digest)
    assert done.returncode == 2 and "(plan_changed)" in done.stderr
    assert not (project / "ran.txt").exists()


def test_a_batch_runs_only_the_plan_reviewed(project):
    (project / "rows.jsonl").write_text('{}\n{}\n', encoding="utf-8")
    digest = planned(project, "--data", "rows.jsonl")
    (project / "rows.jsonl").write_text('{}\n{}\n{}\n', encoding="utf-8")  # a row more since the review
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--data", "rows.jsonl", "--agree", digest)
    now = planned(project, "--data", "rows.jsonl")
    assert done.returncode == 2
    assert f"taskdsl run: the plan is {now}, not the {digest} you agreed to with --agree" in done.stderr
    assert not (project / "ran.txt").exists()
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--data", "rows.jsonl", "--agree", now)
    assert done.returncode == 0, done.stderr
    assert (project / "ran.txt").read_text(encoding="utf-8") == "ran\n" * 3


@pytest.mark.parametrize("given", ["xyz", "abc", "g" * 32])
def test_a_digest_that_is_not_one_is_a_usage_error(project, given):
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--agree", given)
    assert done.returncode == 2
    assert (f"argument --agree: expected the plan's digest as --plan prints it on its Plan line (32 to 64 hex "
            f"digits), got '{given}'") in done.stderr


def test_the_plan_line_has_128_bits_and_a_shorter_prefix_agrees_to_nothing(project):
    """12 hex digits (48 bits) let a repository's author craft two plans that share them with a birthday
    search of minutes (the reviewer pins the benign one, CI runs the other); 32 digits cost ~2^64."""
    digest = planned(project)
    assert len(digest) == 32 and int(digest, 16) >= 0
    done = taskdsl(project, "run", "r.task.xml", "--model", "taskdsl/echo", "--agree", digest[:12])
    assert done.returncode == 2 and "(32 to 64 hex digits)" in done.stderr
    assert not (project / "ran.txt").exists()
