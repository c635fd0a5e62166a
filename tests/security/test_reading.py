"""Every read goes through taskdsl.support.reading: opened once, checked on what was opened, bounded
whatever st_size says; a run's reads bounded in count and bytes."""

import asyncio
import os

import pytest

from taskdsl.cli.main import main
from taskdsl.evaluator.results import TaskError
from taskdsl.evaluator.runner import run_file


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    (root / "taskdsl.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    return root


def reader(root, path, name="r"):
    (root / f"{name}.task.xml").write_text(
        f'<task name="{name}"><description>Read</description><file_paths><path>{path}</path></file_paths></task>\n',
        encoding="utf-8")
    return str(root / f"{name}.task.xml")


def test_a_template_linked_to_dev_zero_is_refused_not_read_without_bound(project, capsys):
    (project / "evil.task.xml").symlink_to("/dev/zero")
    (project / "ok.task.xml").write_text('<task name="ok"><description>x</description></task>\n', encoding="utf-8")
    code, out, _ = run(capsys, "check", str(project))
    assert code == 1
    assert "evil.task.xml:1:1: error TD001 is not a regular file (a device, a pipe or a folder): this is not a template" in out


def test_a_hard_link_inside_the_project_to_a_file_outside_is_refused(project, capsys, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret", encoding="utf-8")
    os.link(secret, project / "notes.txt")
    code, out, err = run(capsys, "run", reader(project, "notes.txt"), "--model", "taskdsl/echo")
    assert code != 0
    assert "'" + str(project / "notes.txt") + "' has 2 hard links" in err
    assert "the secret" not in out + err


def test_the_checks_are_made_on_what_was_opened(project, tmp_path, monkeypatch):
    """A file swapped for a link after the path was checked: the descriptor's own path is outside."""
    from taskdsl.project import confine

    outside = tmp_path / "outside.txt"
    outside.write_text("outside text", encoding="utf-8")
    (project / "notes.txt").symlink_to(outside)
    monkeypatch.setattr(confine, "read_refusal", lambda *a, **k: None)  # the swap happens after this check
    with pytest.raises(TaskError) as info:
        asyncio.run(run_file(reader(project, "notes.txt"), model="taskdsl/echo", check=False))
    assert info.value.reason == "TD802"
    assert f"is outside the project ({project}) (it is '{outside}')" in info.value.message


def test_a_sibling_folder_with_the_projects_name_as_prefix_is_outside(project, capsys, tmp_path):
    sibling = tmp_path / "project-other"
    sibling.mkdir()
    (sibling / "f.txt").write_text("sibling text", encoding="utf-8")
    path = reader(project, "../project-other/f.txt")
    code, out, _ = run(capsys, "check", path)
    assert "warning TD802" in out
    code, out, err = run(capsys, "run", path, "--model", "taskdsl/echo")
    assert code != 0 and "is outside the project" in err and "sibling text" not in out


def test_a_run_reads_at_most_its_count_of_files(project, capsys):
    (project / "taskdsl.toml").write_text("[run]\nmax_read_files = 5\n", encoding="utf-8")
    (project / "big.txt").write_text("x" * 200_000, encoding="utf-8")
    path = project / "t.task.xml"
    path.write_text('<task name="t"><description>Read</description><file_paths source="command"><command>'
                    'for i in $(seq 1 20000); do echo big.txt; done</command></file_paths></task>\n', encoding="utf-8")
    code, out, err = run(capsys, "run", str(path), "--plan")
    assert "    (at most 5 files and 50,000,000 bytes in all)" in out
    code, out, err = run(capsys, "run", str(path), "--model", "taskdsl/echo")
    assert code != 0
    assert "RESOURCE_EXHAUSTION" in err and "is one file more than the run may read (5: [run] max_read_files)" in err


def test_a_run_reads_at_most_its_bytes(project, capsys):
    (project / "taskdsl.toml").write_text("[run]\nmax_read_bytes = 1000\n", encoding="utf-8")
    (project / "a.txt").write_text("a" * 800, encoding="utf-8")
    path = project / "t.task.xml"
    path.write_text('<task name="t"><description>Read</description><file_paths><path>a.txt</path>'
                    '<path>a.txt</path></file_paths></task>\n', encoding="utf-8")
    code, out, err = run(capsys, "run", str(path), "--model", "taskdsl/echo")
    assert code != 0 and "would pass the 1,000 bytes the run may read ([run] max_read_bytes)" in err
