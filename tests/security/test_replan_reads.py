"""A re-planned structure reads only what the run's plan showed it would: a file outside the template's folder
the plan did not list, or files chosen only when the structure runs where the plan had none, is refused, as a
command or a paid model the plan did not hold is. Before, a model's structure read `../.env` (in the project,
outside the template's folder) and sent it to the model, after a plan that listed no file and asked nothing.
Through the real command line with the offline replay model playing a hostile model."""

import json
import os
import subprocess
import sys

import pytest

TASK = '''<task name="t">
  <description>Give the answer as JSON</description>
  <output_format type="json" schema="object"/>
</task>
'''
SECRET = "correct-horse-battery"


def run(project, structure, *, listed=""):
    sub = project / "sub"
    sub.mkdir(exist_ok=True)
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    (project / ".env").write_text(f"PASSPHRASE={SECRET}\n", encoding="utf-8")
    (sub / "notes.txt").write_text("notes of the folder\n", encoding="utf-8")
    task = TASK if not listed else TASK.replace("</description>", f"</description>{listed}")
    (sub / "t.task.xml").write_text(task, encoding="utf-8")
    answers = [{"contains": ["This task failed when it ran"], "answer": structure},
               {"answer": "not json at all"}]
    (sub / "t.replay.json").write_text(json.dumps({"answers": answers}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    env["TASKDSL_REPLAY_FILE"] = str(sub / "t.replay.json")
    trace = project / "trace.jsonl"
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "sub/t.task.xml", "--model", "taskdsl/replay",
                           "--json", "--trace", str(trace)], cwd=project, env=env, capture_output=True, text=True,
                          timeout=300)
    return done, json.loads(done.stdout), trace.read_text(encoding="utf-8")


def structure(paths):
    listed = "".join(f"<path>{p}</path>" for p in paths)
    return (f'<task><description>Repeat the notes</description><file_paths>{listed}</file_paths>'
            '<output_format type="json" schema="object"/></task>')


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_a_structure_reading_a_file_outside_the_folder_the_plan_did_not_list_is_not_run(project):
    done, report, trace = run(project, structure(["../.env"]))
    assert done.returncode == 1
    assert report["error"]["details"]["not_replanned"] == (
        f"the structure reads files the run's plan did not list ({(project / '.env').resolve()}): the run's consent "
        "did not cover them; write the structure into the template to read them")
    assert report["error"]["details"]["files"] == [str((project / ".env").resolve())]
    assert SECRET not in trace and SECRET not in done.stdout


def test_a_structure_choosing_its_files_when_it_runs_is_not_run_after_a_plan_that_chose_none(project):
    done, report, trace = run(project, '<task type="sequential"><description>d</description><steps>'
                                       '<task><description>Repeat the notes</description>'
                                       '<file_paths source="description"><description>the environment file</description></file_paths>'
                                       '</task></steps></task>')
    assert done.returncode == 1
    assert report["error"]["details"]["not_replanned"].startswith(
        "the structure reads files the run's plan did not list (the files")
    assert SECRET not in trace


def test_a_structure_reading_inside_the_folder_or_what_the_plan_listed_runs(project):
    # inside the template's folder a plan asks nothing, so a structure may read there
    done, report, trace = run(project, structure(["notes.txt"]))
    assert report["error"]["details"]["not_replanned"].startswith("the re-planned structure failed too")  # it ran
    assert "notes of the folder" in trace
    # a file outside the folder that the plan itself listed (and asked for) may be read again
    done, report, trace = run(project, structure(["../.env"]), listed="<file_paths><path>../.env</path></file_paths>")
    assert report["error"]["details"]["not_replanned"].startswith("the re-planned structure failed too")
