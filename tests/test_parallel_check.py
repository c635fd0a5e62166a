"""`taskdsl check --jobs N`: the same report as one process, byte for byte, each file read once,
and a failing worker never loses a file nor changes the exit code."""

import os
from pathlib import Path

import pytest

from taskdsl.rules import parallel

from taskdsl.project import workspace
from taskdsl.cli.check import FORMATS
from taskdsl.cli.main import main
from paths import REPO, corpus_files, need_corpus

# the repository's folders, and the upstream templates named one by one (they are *.xml)
GIVEN = ("examples", "tests/fixtures", *(str(p) for p in corpus_files()))
CLEAN = '<template name="t{n}" params="x">\n  <task>\n    <description>Step {n}: {{{{x}}}}</description>\n  </task>\n</template>\n'
FIXABLE = ('<task type="sequential">\n  <description>x</description>\n  <context_management>\n'
           '    <inherit_context>false</inherit_context>\n  </context_management>\n'
           '  <steps><task><description>one</description></task></steps>\n</task>\n')


@pytest.fixture
def small_pool(monkeypatch, worker_log):
    """Fork workers even for a handful of files, and record which processes checked chunks."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_FILES", 2)
    return worker_log


@pytest.fixture
def worker_log(monkeypatch, tmp_path):
    """The processes that checked chunks."""
    log = tmp_path / "workers.log"
    real = parallel.check_chunk

    def logged(start, stop):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        return real(start, stop)

    monkeypatch.setattr(parallel, "check_chunk", logged)
    return lambda: {int(pid) for pid in log.read_text().split()} if log.exists() else set()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def project(folder: Path, count: int, extra: dict | None = None) -> Path:
    folder.mkdir()
    for n in range(count):
        (folder / f"t{n:03d}.task.xml").write_text(CLEAN.format(n=n), encoding="utf-8")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "taskdsl.toml").write_text("", encoding="utf-8")
    return folder


@pytest.mark.parametrize("fmt", FORMATS)
def test_jobs_give_the_serial_report_byte_for_byte(fmt, capsys, monkeypatch, small_pool):
    need_corpus()  # its findings are what is compared; skipped without it, failed under CI
    monkeypatch.chdir(REPO)
    serial = run(capsys, "check", "--format", fmt, "--jobs", "1", *GIVEN)
    assert small_pool() == set()
    pooled = run(capsys, "check", "--format", fmt, "--jobs", "2", *GIVEN)
    workers = small_pool()
    assert workers and os.getpid() not in workers  # the chunks really were checked by forked workers
    assert pooled == serial
    assert serial[1]  # the corpus has findings: the comparison compares something


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_each_file_is_read_once(jobs, tmp_path, capsys, monkeypatch, small_pool):
    folder = project(tmp_path / "proj", 12, {"bad.task.xml": "<task><description>x</task>\n"})
    reads = tmp_path / "reads.log"
    real = workspace.decode

    def counted(path, data):  # every template read ends here, in this process or a worker
        with open(reads, "a", encoding="utf-8") as handle:
            handle.write(f"{os.path.abspath(path)}\n")
        return real(path, data)

    monkeypatch.setattr(workspace, "decode", counted)
    code, out, err = run(capsys, "check", "--jobs", jobs, str(folder))
    assert code == 1 and "bad.task.xml:1:" in out and err.endswith("in 13 files\n")
    read = reads.read_text().split()
    assert sorted(read) == sorted(str(p) for p in folder.glob("*.task.xml"))  # each once, none twice


def test_a_worker_that_dies_leaves_its_files_to_this_process(tmp_path, capsys, monkeypatch, small_pool):
    folder = project(tmp_path / "proj", 30, {"bad.task.xml": "<task><description>x</task>\n"})
    serial = run(capsys, "check", "--jobs", "1", str(folder))
    parent = os.getpid()
    real = parallel.check_chunk

    def dies(start, stop):
        if os.getpid() != parent:
            os._exit(9)  # as a worker killed by the system would
        return real(start, stop)

    monkeypatch.setattr(parallel, "check_chunk", dies)
    code, out, err = run(capsys, "check", "--jobs", "2", str(folder))
    assert (code, out) == serial[:2] and code == 1
    assert "taskdsl: warning: a check worker failed" in err and "checking the remaining files in this process" in err
    assert "Traceback" not in err and err.endswith(serial[2])


def test_a_worker_whose_check_fails_leaves_its_files_to_this_process(tmp_path, capsys, monkeypatch, small_pool):
    folder = project(tmp_path / "proj", 20)
    serial = run(capsys, "check", "--jobs", "1", str(folder))
    parent = os.getpid()
    from taskdsl.cli import check as cli

    real = cli.check_source

    def fails_in_worker(source, library, settings):
        if os.getpid() != parent:
            raise RuntimeError("rule crashed")
        return real(source, library, settings)

    monkeypatch.setattr(cli, "check_source", fails_in_worker)
    code, out, err = run(capsys, "check", "--jobs", "2", str(folder))
    assert (code, out) == serial[:2] and code == 0
    assert "a check worker failed (rule crashed)" in err and err.endswith("0 errors, 0 warnings in 20 files\n")


def test_an_unreadable_file_is_a_usage_error_with_or_without_workers(tmp_path, capsys, small_pool):
    folder = project(tmp_path / "proj", 10)
    (folder / "gone.task.xml").symlink_to(folder / "missing-target.xml")  # discovered, cannot be read
    serial = run(capsys, "check", "--jobs", "1", str(folder))
    pooled = run(capsys, "check", "--jobs", "2", str(folder))
    assert pooled == serial
    code, _, err = serial
    assert code == 2 and f"taskdsl: error: {folder / 'gone.task.xml'}: cannot read: No such file or directory" in err
    assert small_pool()  # the readable files still went to the workers


def test_fix_stays_in_this_process(tmp_path, capsys, small_pool):
    folder = project(tmp_path / "proj", 10, {"fixme.task.xml": FIXABLE})
    code, out, err = run(capsys, "check", "--fix", "--jobs", "4", str(folder))
    assert code == 0 and f"{folder / 'fixme.task.xml'}:4:22: fixed TD305 Replace 'false' with 'none'" in out
    assert (folder / "fixme.task.xml").read_text() == FIXABLE.replace(">false<", ">none<")
    assert small_pool() == set()


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(value, tmp_path, capsys):
    code, out, err = run(capsys, "check", "--jobs", value, str(tmp_path))
    assert code == 2 and out == ""
    assert "--jobs/-j: expected a number of processes, 1 or more (1: check in this process)" in err


def test_without_fork_the_check_runs_in_this_process(tmp_path, capsys, monkeypatch, small_pool):
    import multiprocessing

    folder = project(tmp_path / "proj", 10)
    serial = run(capsys, "check", "--jobs", "1", str(folder))
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert run(capsys, "check", "--jobs", "2", str(folder)) == serial
    assert small_pool() == set()


def test_the_garbage_collector_is_paused_for_the_bulk_work_and_resumed(tmp_path, capsys, monkeypatch):
    import gc

    from taskdsl.cli import check as cli

    folder = project(tmp_path / "proj", 3)
    seen = []
    real = cli.check_source

    def noting(source, library, settings):
        seen.append(gc.isenabled())
        return real(source, library, settings)

    monkeypatch.setattr(cli, "check_source", noting)
    assert gc.isenabled()
    assert run(capsys, "check", "--jobs", "1", str(folder))[0] == 0
    assert seen == [False, False, False] and gc.isenabled()


def test_few_files_are_checked_in_this_process(tmp_path, capsys, worker_log):
    folder = project(tmp_path / "proj", parallel.MIN_PARALLEL_FILES - 1)
    code, _, err = run(capsys, "check", "--jobs", "2", str(folder))
    assert code == 0 and err.endswith(f"in {parallel.MIN_PARALLEL_FILES - 1} files\n")
    assert worker_log() == set()  # forking would cost more than it saves
