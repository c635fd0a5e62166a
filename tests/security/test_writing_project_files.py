"""Files taskdsl writes inside a project go through the one writer: `taskdsl check --fix` never writes
through a link (or into a hard-linked file) to a file outside the project, and keeps a fixed file's
mode; `taskdsl memory index` creates nothing through a link on the way to its index. Through the
real command line, with the attacker's reproductions."""

import os
import stat
import subprocess
import sys

import pytest

UNSAFE = ('<task type="script" name="t"><description>t</description><inputs><input name="x">hi</input></inputs>'
          '<command>tar -cf out.tar {{x}}</command></task>\n')


def taskdsl(folder, *args):
    return subprocess.run([sys.executable, "-m", "taskdsl", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def places(tmp_path):
    project, outside = tmp_path / "fixp", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    (outside / "real.task.xml").write_text(UNSAFE, encoding="utf-8")
    return project, outside


def test_check_fix_refuses_a_link_to_a_file_outside_the_project(places):
    project, outside = places
    os.symlink(outside / "real.task.xml", project / "a.task.xml")
    done = taskdsl(project, "check", "--fix", ".")
    assert (outside / "real.task.xml").read_text(encoding="utf-8") == UNSAFE
    assert os.path.islink(project / "a.task.xml")
    assert done.returncode == 2
    assert (f"taskdsl: error: cannot fix a.task.xml: a.task.xml: is a symbolic link (to {outside / 'real.task.xml'}); "
            "taskdsl does not write through links: fix the file it points to where it is") in done.stderr
    assert "fixed TD805" not in done.stdout + done.stderr


def test_check_fix_refuses_a_hard_link_to_a_file_outside_the_project(places):
    project, outside = places
    os.link(outside / "real.task.xml", project / "a.task.xml")
    done = taskdsl(project, "check", "--fix", ".")
    assert (outside / "real.task.xml").read_text(encoding="utf-8") == UNSAFE
    assert done.returncode == 2
    assert ("cannot fix a.task.xml: a.task.xml: has 2 hard links; taskdsl writes only a file with one"
            in done.stderr)


def test_check_fix_refuses_a_linked_folder_on_the_way(places):
    project, outside = places
    os.symlink(outside, project / "linked")
    done = taskdsl(project, "check", "--fix", "linked/real.task.xml")
    assert (outside / "real.task.xml").read_text(encoding="utf-8") == UNSAFE
    assert done.returncode == 2
    assert (f"{project / 'linked'}: is a symbolic link (to {outside}); taskdsl does not write through links"
            in done.stderr)


def test_check_fix_writes_a_file_of_its_own_keeping_its_mode(places):
    project, _ = places
    (project / "a.task.xml").write_text(UNSAFE, encoding="utf-8")
    os.chmod(project / "a.task.xml", 0o640)
    done = taskdsl(project, "check", "--fix", ".")
    assert "a.task.xml:1:126: fixed TD805 Insert -- before the value" in done.stdout
    assert "tar -cf out.tar -- {{x}}" in (project / "a.task.xml").read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(project / "a.task.xml").st_mode) == 0o640
    assert sorted(os.listdir(project)) == ["a.task.xml", "taskdsl.toml"]  # no temporary file left


def test_the_memory_index_creates_nothing_through_a_link(tmp_path):
    project, victim = tmp_path / "proj", tmp_path / "victim"
    project.mkdir()
    victim.mkdir()
    os.symlink(victim, project / "link")
    (project / "taskdsl.toml").write_text('[memory]\nindex = "link/a/b/memory.json"\n', encoding="utf-8")
    (project / "notes.md").write_text("hello\n", encoding="utf-8")
    done = taskdsl(project, "memory", "index")
    assert done.returncode == 2
    assert os.listdir(victim) == []  # nothing created under the link's target
    assert (f"is not written: {project / 'link'}: is a symbolic link (to {victim}); taskdsl does not write "
            "through links: nothing was created or written") in done.stderr


def test_the_memory_index_makes_its_missing_folders_private(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "taskdsl.toml").write_text('[memory]\nindex = "state/a/memory.json"\n', encoding="utf-8")
    (project / "notes.md").write_text("hello\n", encoding="utf-8")
    done = taskdsl(project, "memory", "index")
    assert done.returncode == 0, done.stderr
    assert '"notes.md"' in (project / "state" / "a" / "memory.json").read_text(encoding="utf-8")
    for folder in (project / "state", project / "state" / "a"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


# --------------------------------------------------------------------------- the writer itself, in process


def test_the_writer_reaches_a_project_file_one_checked_folder_at_a_time(tmp_path):
    from taskdsl.support import files

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    with pytest.raises(files.UnsafeWrite, match=r"is outside the project .*; taskdsl writes only inside it"):
        files.write_text(str(outside / "x.txt"), "x", root=str(root))
    with pytest.raises(FileNotFoundError):  # without make_folders nothing is made
        files.write_text(str(root / "a" / "x.txt"), "x", root=str(root))
    assert os.listdir(root) == []
    (root / "plain").write_text("", encoding="utf-8")
    with pytest.raises(files.UnsafeWrite, match="plain: is not a folder"):
        files.write_text(str(root / "plain" / "x.txt"), "x", root=str(root), make_folders=True)
    os.symlink(outside, root / "link")
    with pytest.raises(files.UnsafeWrite, match=r"link: is a symbolic link \(to .*outside\)"):
        files.write_text(str(root / "link" / "new" / "x.txt"), "x", root=str(root), make_folders=True)
    assert os.listdir(outside) == []
    written = files.write_text(str(root / "a" / "b" / "x.txt"), "made", root=str(root), make_folders=True)
    assert written == str(root / "a" / "b" / "x.txt")
    assert (root / "a" / "b" / "x.txt").read_text(encoding="utf-8") == "made"
    assert stat.S_IMODE(os.stat(root / "a" / "b" / "x.txt").st_mode) == 0o600
    assert sorted(os.listdir(root / "a" / "b")) == ["x.txt"]


def test_a_user_file_is_refused_through_a_link_and_replaced_when_it_is_taskdsl_s_own(tmp_path):
    from taskdsl.support import files

    (tmp_path / "target").write_text("keep", encoding="utf-8")
    os.symlink(tmp_path / "target", tmp_path / "at")
    with pytest.raises(files.UnsafeWrite, match="is a symbolic link"):
        files.write_text(str(tmp_path / "at"), "new", root=str(tmp_path), link="refuse")
    assert (tmp_path / "target").read_text(encoding="utf-8") == "keep" and os.path.islink(tmp_path / "at")
    files.write_text(str(tmp_path / "at"), "new", root=str(tmp_path))  # taskdsl's own file: the link replaced
    assert (tmp_path / "target").read_text(encoding="utf-8") == "keep"
    assert not os.path.islink(tmp_path / "at") and (tmp_path / "at").read_text(encoding="utf-8") == "new"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(files.UnsafeWrite, match="is not a regular file"):
        files.write_text(str(tmp_path / "fifo"), "x", root=str(tmp_path), link="refuse")


def test_a_new_file_is_created_only_where_nothing_is(tmp_path):
    from taskdsl.support import files

    (tmp_path / "there.task.xml").write_text("old", encoding="utf-8")
    with pytest.raises(FileExistsError):
        files.create_new(str(tmp_path / "there.task.xml"), "new", root=str(tmp_path))
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling.task.xml")
    with pytest.raises(FileExistsError):  # a dangling link is not followed to create its target
        files.create_new(str(tmp_path / "dangling.task.xml"), "new", root=str(tmp_path))
    assert not (tmp_path / "nowhere").exists()
    files.create_new(str(tmp_path / "new.task.xml"), "text", root=str(tmp_path))
    assert (tmp_path / "new.task.xml").read_text(encoding="utf-8") == "text"


def test_folders_and_files_of_another_user_are_refused(tmp_path, monkeypatch):
    from taskdsl.support import files

    (tmp_path / "a").mkdir()
    (tmp_path / "mine.txt").write_text("keep", encoding="utf-8")
    victim = tmp_path / "victim"
    victim.mkdir()
    os.symlink(victim, tmp_path / "planted")
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)  # now every file here is another user's
    with pytest.raises(files.UnsafeWrite, match=rf"a: belongs to another user \(uid {me}\); taskdsl writes only"):
        files.write_text(str(tmp_path / "a" / "x.txt"), "x", root=str(tmp_path), make_folders=True)
    with pytest.raises(files.UnsafeWrite, match=rf"mine.txt: belongs to another user \(uid {me}\)"):
        files.write_text(str(tmp_path / "mine.txt"), "x", root=str(tmp_path), link="refuse")
    # a private folder to be made under a link another user planted: nothing is created through it
    with pytest.raises(files.UnsafeWrite, match=rf"planted: is a symbolic link of another user \(uid {me}\)"):
        files.private_folder(str(tmp_path / "planted" / "runs" / "today"))
    assert os.listdir(victim) == [] and os.listdir(tmp_path / "a") == []
    assert (tmp_path / "mine.txt").read_text(encoding="utf-8") == "keep"


def test_a_recorded_fixture_is_not_written_through_a_linked_folder(tmp_path):
    """`taskdsl test --record` writes NAME.replay.json beside the test file, reached from the project's
    root: a test folder that is a link out of the project gets nothing."""
    from types import SimpleNamespace

    from taskdsl.authoring.testcases import Recorder
    from taskdsl.support.files import UnsafeWrite

    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    os.symlink(outside, project / "tests")
    recorder = Recorder()
    case = SimpleNamespace(file=str(project / "tests" / "a.test.xml"), line=1, name="a")
    recorder.for_case(case)("a prompt", "an answer")
    with pytest.raises(UnsafeWrite, match=r"tests: is a symbolic link"):
        recorder.write()
    assert os.listdir(outside) == []
    os.unlink(project / "tests")
    (project / "tests").mkdir()
    assert recorder.write() == [(str(project / "tests" / "a.replay.json"), None)]  # (fixture, no backup)
    assert '"answer": "an answer"' in (project / "tests" / "a.replay.json").read_text(encoding="utf-8")
