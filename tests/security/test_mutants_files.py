"""The one writer, exactly: each refusal's message, the modes from the first instant, numbered twins,
whole lines, nothing left behind by a failed write (the mutants of taskdsl.support.files that the
other tests let live, see docs/security.md "Mutation testing")."""

import errno
import os
import stat

import pytest

from taskdsl.support.files import (LineAppender, UnsafeWrite, create, open_stream, private_folder, state_folder,
                                   write_bytes, write_private, write_text)

OTHER_USER = 65534  # nobody
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root (CI is root)")


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def modes_when_chmodded(monkeypatch):
    """The mode each file had just before taskdsl set it: a file must never be open to others, not
    even for the instant between its creation and the chmod."""
    seen = []
    real = os.fchmod

    def fchmod(fd, wanted):
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real(fd, wanted)

    monkeypatch.setattr(os, "fchmod", fchmod)
    old = os.umask(0)  # the laxest umask: only the mode taskdsl asks for protects the file
    yield seen
    os.umask(old)


def test_unsafe_write_says_the_path_and_why(tmp_path):
    error = UnsafeWrite(str(tmp_path / "x"), "is not a folder")
    assert (error.errno, error.filename, error.strerror, error.path, error.why) == (
        errno.EPERM, str(tmp_path / "x"), "is not a folder", str(tmp_path / "x"), "is not a folder")
    assert str(error) == f"{tmp_path / 'x'}: is not a folder"


def test_a_trace_through_a_symbolic_link_is_refused_and_a_missing_folder_is_not_called_a_link(tmp_path):
    (tmp_path / "victim.txt").write_text("precious", encoding="utf-8")
    (tmp_path / "t.jsonl").symlink_to(tmp_path / "victim.txt")
    with pytest.raises(UnsafeWrite) as info:
        open_stream(str(tmp_path / "t.jsonl"))
    assert str(info.value) == f"{tmp_path / 't.jsonl'}: is a symbolic link; taskdsl does not write through links"
    with pytest.raises(FileNotFoundError):
        open_stream(str(tmp_path / "no-folder" / "t.jsonl"))
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious"


def test_a_trace_at_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "t.jsonl")  # nobody reads it: an open that waits for a reader would hang
    with pytest.raises(UnsafeWrite) as info:
        open_stream(str(tmp_path / "t.jsonl"))
    assert str(info.value) == f"{tmp_path / 't.jsonl'}: is not a regular file"


def test_a_trace_at_a_folder_is_refused(tmp_path):
    (tmp_path / "t.jsonl").mkdir()
    with pytest.raises(IsADirectoryError):
        open_stream(str(tmp_path / "t.jsonl"))


@as_root
def test_a_trace_at_another_users_file_is_refused(tmp_path):
    (tmp_path / "t.jsonl").write_text("theirs", encoding="utf-8")
    os.chown(tmp_path / "t.jsonl", OTHER_USER, OTHER_USER)
    with pytest.raises(UnsafeWrite) as info:
        open_stream(str(tmp_path / "t.jsonl"))
    assert str(info.value) == f"{tmp_path / 't.jsonl'}: belongs to another user"
    assert (tmp_path / "t.jsonl").read_text(encoding="utf-8") == "theirs"


def test_a_trace_over_an_old_file_starts_empty_and_is_0600_from_its_creation(tmp_path, modes_when_chmodded):
    (tmp_path / "old.jsonl").write_text("old content\n", encoding="utf-8")
    os.chmod(tmp_path / "old.jsonl", 0o644)
    with open_stream(str(tmp_path / "old.jsonl")):
        pass
    assert (tmp_path / "old.jsonl").read_bytes() == b""
    assert mode(tmp_path / "old.jsonl") == 0o600
    with open_stream(str(tmp_path / "new.jsonl")) as handle:
        handle.write("ünïcode ✓\n")
    assert (tmp_path / "new.jsonl").read_bytes() == "ünïcode ✓\n".encode("utf-8")
    assert modes_when_chmodded[-1] == 0o600


def test_write_text_refuses_a_folder_and_leaves_nothing_behind(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        write_text(str(tmp_path / "out"), "x")
    assert (info.value.errno, info.value.filename) == (errno.EISDIR, str(tmp_path / "out"))
    assert str(info.value) == f"[Errno 21] Is a directory: '{tmp_path / 'out'}'"
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_failed_write_leaves_no_partial_file(tmp_path):
    with pytest.raises(TypeError):
        write_bytes(str(tmp_path / "out.json"), "text, not bytes")
    assert os.listdir(tmp_path) == []


def test_write_text_replaces_a_link_writes_utf8_and_is_0600_from_its_creation(tmp_path, modes_when_chmodded):
    (tmp_path / "victim.txt").write_text("precious", encoding="utf-8")
    (tmp_path / "report.md").symlink_to(tmp_path / "victim.txt")
    assert write_text(str(tmp_path / "report.md"), "résumé ✓") == str(tmp_path / "report.md")
    assert (tmp_path / "report.md").read_bytes() == "résumé ✓".encode("utf-8")
    assert not (tmp_path / "report.md").is_symlink() and mode(tmp_path / "report.md") == 0o600
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious"
    assert write_text(str(tmp_path / "shared.md"), "x", mode=0o644) and mode(tmp_path / "shared.md") == 0o644
    assert sorted(os.listdir(tmp_path)) == ["report.md", "shared.md", "victim.txt"]
    assert modes_when_chmodded[0] == 0o600


def test_create_makes_a_new_0600_file_and_never_reuses_a_name(tmp_path, modes_when_chmodded):
    folder = tmp_path / "runs"
    handle, path = create(str(folder), "result.md")
    with handle:
        handle.write("first ✓")
    assert path == str(folder / "result.md") and mode(folder) == 0o700 and mode(path) == 0o600
    assert modes_when_chmodded == [0o600]
    (folder / "other.txt").write_text("precious", encoding="utf-8")
    (folder / "result-1.md").symlink_to(folder / "other.txt")  # a planted link at the next name
    handle, second = create(str(folder), "result.md")
    with handle:
        handle.write("second")
    assert second == str(folder / "result-2.md")
    assert (folder / "result.md").read_text(encoding="utf-8") == "first ✓"
    assert (folder / "other.txt").read_text(encoding="utf-8") == "precious"
    handle, third = create(str(folder), "trace.run.jsonl", mode=0o640)
    handle.close()
    assert third == str(folder / "trace.run.jsonl") and mode(third) == 0o640
    handle, fourth = create(str(folder), "trace.run.jsonl")
    handle.close()
    assert fourth == str(folder / "trace-1.run.jsonl")


def test_create_gives_up_after_a_thousand_names(tmp_path):
    folder = tmp_path / "full"
    folder.mkdir(mode=0o700)
    (folder / "r.md").touch()
    for n in range(1, 1000):
        (folder / f"r-{n}.md").touch()
    with pytest.raises(UnsafeWrite) as info:
        create(str(folder), "r.md")
    assert str(info.value) == f"{folder / 'r.md'}: no free name"


def test_a_private_folder_is_made_0700_with_its_missing_parents(tmp_path):
    old = os.umask(0)  # the laxest umask: each folder is 0700 all the same
    try:
        made = private_folder(str(tmp_path / "a" / "b" / "c"))
    finally:
        os.umask(old)
    assert made == str(tmp_path / "a" / "b" / "c")
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700, 0o700, 0o700]
    assert private_folder(made) == made  # there already: fine
    assert private_folder(str(tmp_path / "a" / "b" / ".." / "b")) == str(tmp_path / "a" / "b")


def test_a_folder_that_is_not_safely_the_users_is_refused(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o777)
    (tmp_path / "group").mkdir()
    os.chmod(tmp_path / "group", 0o770)
    expected = {
        "link": "is a symbolic link; give the folder itself",
        "file": "is not a folder",
        "open": "is writable by other users; make it private (chmod 700) or choose another folder",
        "group": "is writable by other users; make it private (chmod 700) or choose another folder",
    }
    for name, why in expected.items():
        with pytest.raises(UnsafeWrite) as info:
            private_folder(str(tmp_path / name))
        assert str(info.value) == f"{tmp_path / name}: {why}"
    os.chmod(tmp_path / "open", 0o755)  # readable by others, writable by the user only: fine
    assert private_folder(str(tmp_path / "open")) == str(tmp_path / "open")


@as_root
def test_another_users_folder_is_refused(tmp_path):
    (tmp_path / "theirs").mkdir(mode=0o700)
    os.chown(tmp_path / "theirs", OTHER_USER, OTHER_USER)
    with pytest.raises(UnsafeWrite) as info:
        private_folder(str(tmp_path / "theirs"))
    assert str(info.value) == (f"{tmp_path / 'theirs'}: belongs to another user (uid {OTHER_USER}); "
                               "choose a folder of your own")


def test_the_state_folder_is_under_xdg_state_home_or_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert state_folder("runs") == str(tmp_path / "state" / "taskdsl" / "runs")
    assert mode(tmp_path / "state" / "taskdsl" / "runs") == 0o700
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_folder("runs") == str(tmp_path / "home" / ".local" / "state" / "taskdsl" / "runs")
    monkeypatch.setenv("XDG_STATE_HOME", "")
    assert state_folder() == str(tmp_path / "home" / ".local" / "state" / "taskdsl")


@pytest.mark.parametrize("unusable", ["relative/state", "~nobody-such/state"])
def test_without_a_usable_home_the_state_folder_is_a_fresh_private_one(tmp_path, monkeypatch, unusable):
    monkeypatch.setenv("XDG_STATE_HOME", unusable)
    made = state_folder("runs")
    assert os.path.isabs(made) and made.endswith(os.path.join("taskdsl", "runs"))
    assert os.path.basename(os.path.dirname(os.path.dirname(made))).startswith("taskdsl-")
    assert mode(made) == 0o700 and mode(os.path.dirname(os.path.dirname(made))) == 0o700
    assert not os.path.exists(unusable)


def test_write_private_makes_the_folder_private(tmp_path):
    assert write_private(str(tmp_path / "cache" / "ab" / "entry.json"), b'{"answer": 1}') == str(
        tmp_path / "cache" / "ab" / "entry.json")
    assert (tmp_path / "cache" / "ab" / "entry.json").read_bytes() == b'{"answer": 1}'
    assert mode(tmp_path / "cache" / "ab") == 0o700 and mode(tmp_path / "cache" / "ab" / "entry.json") == 0o600


def test_lines_are_appended_whole_to_a_private_file(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"row": 1}\n{"row": 2, "cut', encoding="utf-8")  # a run stopped mid-line
    os.chmod(path, 0o644)
    appender = LineAppender(str(path))
    assert appender.ends_mid_line() is True
    appender.write_line('{"row": 3,\n "text": "two lines ✓"}')
    assert appender.ends_mid_line() is False
    appender.close()
    appender.close()  # twice: harmless
    assert path.read_text(encoding="utf-8") == '{"row": 1}\n{"row": 2, "cut{"row": 3,  "text": "two lines ✓"}\n'
    assert mode(path) == 0o600
    empty = LineAppender(str(tmp_path / "new.jsonl"))
    assert empty.ends_mid_line() is False and mode(tmp_path / "new.jsonl") == 0o600
    empty.close()


def test_lines_are_never_appended_through_a_link_or_to_a_missing_folder(tmp_path):
    (tmp_path / "victim.txt").write_text("precious\n", encoding="utf-8")
    (tmp_path / "sym.jsonl").symlink_to(tmp_path / "victim.txt")
    os.link(tmp_path / "victim.txt", tmp_path / "hard.jsonl")
    with pytest.raises(UnsafeWrite) as info:
        LineAppender(str(tmp_path / "sym.jsonl"))
    assert str(info.value) == f"{tmp_path / 'sym.jsonl'}: is a symbolic link; taskdsl does not write through links"
    with pytest.raises(UnsafeWrite) as info:
        LineAppender(str(tmp_path / "hard.jsonl"))
    assert str(info.value) == f"{tmp_path / 'hard.jsonl'}: has 2 hard links; taskdsl writes only a file with one"
    with pytest.raises(FileNotFoundError) as missing:
        LineAppender(str(tmp_path / "no-folder" / "r.jsonl"))
    assert (missing.value.errno, missing.value.filename) == (errno.ENOENT, str(tmp_path / "no-folder"))
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious\n"


def test_a_device_is_never_written_as_a_trace_or_results(tmp_path):
    with pytest.raises(UnsafeWrite) as info:
        open_stream("/dev/null")
    assert str(info.value) == "/dev/null: is not a regular file"
    with pytest.raises(UnsafeWrite) as info:
        LineAppender("/dev/null")
    assert str(info.value) == "/dev/null: is not a regular file"


def test_lines_are_never_appended_to_a_folder_and_a_missing_folder_is_named(tmp_path):
    (tmp_path / "results.jsonl").mkdir()
    with pytest.raises(IsADirectoryError):
        LineAppender(str(tmp_path / "results.jsonl"))
    with pytest.raises(FileNotFoundError) as missing:
        LineAppender(str(tmp_path / "no-folder" / "r.jsonl"))
    assert str(missing.value) == f"[Errno 2] no such folder: '{tmp_path / 'no-folder'}'"


def test_a_one_byte_file_without_a_newline_ends_mid_line_and_closing_twice_closes_nothing_else(tmp_path):
    (tmp_path / "r.jsonl").write_text("x", encoding="utf-8")
    appender = LineAppender(str(tmp_path / "r.jsonl"))
    assert appender.ends_mid_line() is True
    appender.close()
    appender.close()
    os.fstat(1)  # the process's own output is still open


def test_a_results_file_is_0600_from_its_creation(tmp_path, modes_when_chmodded):
    LineAppender(str(tmp_path / "r.jsonl")).close()
    assert modes_when_chmodded == [0o600]


def test_a_write_at_a_path_never_goes_through_the_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-temporary-folder"))
    assert write_text(str(tmp_path / "out.md"), "text") == str(tmp_path / "out.md")
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == "text"


def test_files_are_utf8_whatever_the_locale(tmp_path):
    import subprocess
    import sys
    import textwrap

    with open_stream(str(tmp_path / "here.jsonl")) as handle:  # here too: mutation testing maps tests by it
        handle.write("✓")
    handle, _ = create(str(tmp_path / "here"), "r.md")
    with handle:
        handle.write("✓")
    code = textwrap.dedent(f"""
        from taskdsl.support.files import create, open_stream
        with open_stream({str(tmp_path / 't.jsonl')!r}) as handle:
            handle.write("ünïcode ✓")
        handle, path = create({str(tmp_path / 'runs')!r}, "r.md")
        with handle:
            handle.write("résumé ✓")
    """)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LC_", "LANG", "PYTHONUTF8"))}
    (tmp_path / "write.py").write_text(code, encoding="utf-8")  # a source file is UTF-8 whatever the locale
    done = subprocess.run([sys.executable, str(tmp_path / "write.py")], capture_output=True, text=True, timeout=60,
                          env={**env, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.jsonl").read_bytes() == "ünïcode ✓".encode("utf-8")
    assert (tmp_path / "runs" / "r.md").read_bytes() == "résumé ✓".encode("utf-8")
