"""Every file taskdsl reads for the user goes through the one reader (support.reading.read_bytes): a FIFO,
a device or a link to one is refused with a one-line message, never read forever. Before, a FIFO named
.gitignore hung `taskdsl check .`, a link to /dev/zero exhausted memory, and --inputs, graph --run, a
replay fixture and --trace at a FIFO hung the command."""

import os
import subprocess
import sys

import pytest

SCRIPT = """<task type="script" name="s">
  <command>echo {{x}}</command>
  <inputs><input name="x">placeholder</input></inputs>
</task>
"""
ASK = """<task name="ask">
  <description>Say hello</description>
</task>
"""


def cli(*args, cwd, env=None):
    # the timeout only stops a hang that the guard prevents; no test asserts a duration
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "TASKDSL_MODEL": "taskdsl/echo", **(env or {})}, timeout=120)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("")
    (tmp_path / "t.task.xml").write_text(SCRIPT)
    return tmp_path


def test_a_fifo_named_gitignore_does_not_hang_check(project):
    os.mkfifo(project / ".gitignore")
    done = cli("check", ".", cwd=project)
    assert done.returncode == 0, done.stderr


def test_a_gitignore_linked_to_dev_zero_is_not_read(project):
    os.symlink("/dev/zero", project / ".gitignore")
    done = cli("check", ".", cwd=project)
    assert done.returncode == 0, done.stderr


def test_inputs_from_a_fifo_are_refused(project):
    os.mkfifo(project / "in.json")
    done = cli("run", "t.task.xml", "--inputs", "in.json", cwd=project)
    assert done.returncode == 2
    assert "--inputs 'in.json' is not a regular file (a device, a pipe or a folder): give a regular JSON file" \
        in done.stderr
    assert "Traceback" not in done.stderr


def test_graph_run_from_a_fifo_is_refused(project):
    os.mkfifo(project / "run.json")
    done = cli("graph", "t.task.xml", "--run", "run.json", cwd=project)
    assert done.returncode == 2
    assert "is not a regular file (a device, a pipe or a folder): give the file `taskdsl run --json` wrote" \
        in done.stderr
    assert "Traceback" not in done.stderr


def test_a_replay_fixture_at_a_fifo_is_refused(project):
    (project / "ask.task.xml").write_text(ASK)
    os.mkfifo(project / "answers.json")
    done = cli("run", "ask.task.xml", cwd=project,
               env={"TASKDSL_MODEL": "taskdsl/replay", "TASKDSL_REPLAY_FILE": str(project / "answers.json")})
    assert done.returncode != 0
    assert "is not a regular file (a device, a pipe or a folder): give a regular JSON file" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_trace_at_a_fifo_is_refused(project):
    os.mkfifo(project / "trace.jsonl")
    done = cli("run", "t.task.xml", "--input", "x=hi", "--trace", "trace.jsonl", cwd=project)
    assert done.returncode != 0
    assert "trace.jsonl: is not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_batch_rows_from_a_device_or_a_fifo_are_refused(project, special):
    """A repository may ship data/rows.jsonl -> /dev/zero: the rows were read without a bound (2 GB of memory, then
    MemoryError), a FIFO hung the run; and the plan's digest was of a second look-up of the file."""
    rows = project / "rows.jsonl"
    os.mkfifo(rows) if special == "fifo" else os.symlink(special, rows)
    done = cli("run", "t.task.xml", "--data", "rows.jsonl", cwd=project)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(
        "rows.jsonl: is not a regular file (a device, a pipe or a folder): give the rows as a regular file")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_resuming_into_a_device_or_a_fifo_is_refused_before_reading_it(project, special):
    (project / "rows.jsonl").write_text('{"x": "one"}\n')
    out = project / "out.jsonl"
    os.mkfifo(out) if special == "fifo" else os.symlink(special, out)
    done = cli("run", "t.task.xml", "--data", "rows.jsonl", "--out", "out.jsonl", "--resume", cwd=project)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "out.jsonl" in done.stderr.splitlines()[-1]


def test_resume_reads_the_rows_done_from_the_results_it_appends_to(project):
    (project / "rows.jsonl").write_text('{"x": "one"}\n{"x": "two"}\n{"x": "three"}\n')
    (project / "out.jsonl").write_text('{"row": 2, "status": "ok"}\n{"row": 3, "sta')  # row 3 cut by a crash
    done = cli("run", "t.task.xml", "--data", "rows.jsonl", "--out", "out.jsonl", "--resume", "--yes", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = (project / "out.jsonl").read_text().splitlines()
    import json

    assert sorted(json.loads(line)["row"] for line in lines[2:]) == [1, 3]  # 2 was done; 3's line was cut
