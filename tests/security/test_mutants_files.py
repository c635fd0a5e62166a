"""The one writer, exactly: each refusal's message, the modes from the first instant, numbered twins,
whole lines, nothing left behind by a failed write (the mutants of taskdsl.support.files that the
other tests let live, see docs/security.md "Mutation testing")."""

import errno
import os
import stat

import pytest

from taskdsl.support.files import (LineAppender, UnsafeWrite, create, create_new, open_stream, private_folder,
                                   state_folder, write_bytes, write_private, write_text)

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
    create_new(str(tmp_path / "here.xml"), "✓", root=str(tmp_path))
    code = textwrap.dedent(f"""
        from taskdsl.support.files import create, create_new, open_stream
        create_new({str(tmp_path / 'new.xml')!r}, "<task>ünïcode ✓</task>", root={str(tmp_path)!r})
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
    assert (tmp_path / "new.xml").read_bytes() == "<task>ünïcode ✓</task>".encode("utf-8")


# --- the survivors of the run on the writer that walks a project's root without links (docs/security.md) ---


def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir(mode=0o700)
    return root


def test_a_write_just_outside_the_project_is_refused_naming_the_folder(tmp_path):
    root = project(tmp_path)
    for path in (tmp_path / "out.md", tmp_path / "sibling" / "out.md"):  # the root's parent, and beside it
        with pytest.raises(UnsafeWrite) as info:
            write_text(str(path), "x", root=str(root), make_folders=True)
        assert str(info.value) == f"{path.parent}: is outside the project ({root}); taskdsl writes only inside it"
        assert info.value.filename == str(path.parent)
    assert sorted(os.listdir(tmp_path)) == ["project"]
    with pytest.raises(UnsafeWrite) as info:
        create_new(str(tmp_path / "extracted.xml"), "<task/>", root=str(root))
    assert str(info.value) == f"{tmp_path}: is outside the project ({root}); taskdsl writes only inside it"
    assert sorted(os.listdir(tmp_path)) == ["project"]


def test_the_project_root_itself_is_written_into(tmp_path):
    root = project(tmp_path)
    assert write_text(str(root / "a.xml"), "<a/>", root=str(root)) == str(root / "a.xml")
    assert (root / "a.xml").read_text(encoding="utf-8") == "<a/>"


def test_a_missing_folder_in_the_project_is_named_whole_when_none_may_be_made(tmp_path):
    root = project(tmp_path)
    (root / "a").mkdir(mode=0o700)
    for write in (lambda: write_text(str(root / "a" / "b" / "c" / "r.json"), "x", root=str(root)),
                  lambda: create_new(str(root / "a" / "b" / "c" / "r.json"), "x", root=str(root))):
        with pytest.raises(FileNotFoundError) as info:
            write()
        assert (info.value.errno, info.value.strerror, info.value.filename) == (
            errno.ENOENT, "no such folder", str(root / "a" / "b"))
        assert str(info.value) == f"[Errno 2] no such folder: '{root / 'a' / 'b'}'"
    assert os.listdir(root / "a") == []  # create_new never makes a folder


def test_each_folder_made_in_the_project_is_0700_whatever_the_umask(tmp_path):
    root = project(tmp_path)
    old = os.umask(0)
    try:
        write_text(str(root / "a" / "b" / "r.json"), "x", root=str(root), make_folders=True)
    finally:
        os.umask(old)
    assert [mode(root / p) for p in ("a", "a/b")] == [0o700, 0o700]
    assert mode(root / "a" / "b" / "r.json") == 0o600


def test_a_link_planted_in_the_project_is_refused_naming_it_and_where_it_points(tmp_path):
    root = project(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (root / "fixtures").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeWrite) as info:
        write_text(str(root / "fixtures" / "sub" / "r.json"), "x", root=str(root), make_folders=True)
    assert str(info.value) == (f"{root / 'fixtures'}: is a symbolic link (to {tmp_path / 'elsewhere'}); taskdsl "
                               "does not write through links: nothing was created or written")
    assert os.listdir(tmp_path / "elsewhere") == []


def test_a_folder_replaced_by_a_link_while_it_is_made_is_refused_naming_it(tmp_path, monkeypatch):
    root = project(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    real = os.mkdir

    def race(part, mode=0o777, *, dir_fd=None):  # another process wins the race: a link where the folder was made
        real(part, mode, dir_fd=dir_fd)
        os.rmdir(part, dir_fd=dir_fd)
        os.symlink(str(tmp_path / "elsewhere"), part, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", race)
    with pytest.raises(UnsafeWrite) as info:
        write_text(str(root / "made" / "r.json"), "x", root=str(root), make_folders=True)
    assert str(info.value) == f"{root / 'made'}: was replaced by a link or a file while taskdsl made it: nothing written"
    assert os.listdir(tmp_path / "elsewhere") == []


def test_an_extracted_file_is_new_utf8_and_has_the_umasks_mode(tmp_path):
    root = project(tmp_path)
    old = os.umask(0o022)
    try:
        assert create_new(str(root / "part.xml"), "<task>✓</task>", root=str(root)) == str(root / "part.xml")
    finally:
        os.umask(old)
    assert mode(root / "part.xml") == 0o644
    assert (root / "part.xml").read_bytes() == "<task>✓</task>".encode("utf-8")
    with pytest.raises(FileExistsError):
        create_new(str(root / "part.xml"), "other", root=str(root))
    assert (root / "part.xml").read_bytes() == "<task>✓</task>".encode("utf-8")


def test_a_rewritten_file_is_0600_unless_its_mode_is_kept(tmp_path):
    (tmp_path / "shared.md").write_text("old", encoding="utf-8")
    os.chmod(tmp_path / "shared.md", 0o644)
    write_text(str(tmp_path / "shared.md"), "new")  # taskdsl's own file: private again
    assert mode(tmp_path / "shared.md") == 0o600
    root = project(tmp_path)
    (root / "t.xml").write_text("<old/>", encoding="utf-8")
    os.chmod(root / "t.xml", 0o640)
    assert write_text(str(root / "t.xml"), "<new/>", root=str(root), link="refuse", keep_mode=True) == str(
        root / "t.xml")
    assert (root / "t.xml").read_text(encoding="utf-8") == "<new/>" and mode(root / "t.xml") == 0o640
    write_text(str(root / "fresh.xml"), "<new/>", root=str(root), link="refuse", keep_mode=True, mode=0o604)
    assert mode(root / "fresh.xml") == 0o604  # nothing there to keep: the mode given
    assert sorted(os.listdir(root)) == ["fresh.xml", "t.xml"]


def test_a_users_file_that_is_a_link_a_fifo_or_has_two_links_is_refused_exactly(tmp_path):
    root = project(tmp_path)
    (tmp_path / "victim.xml").write_text("precious", encoding="utf-8")
    (root / "sym.xml").symlink_to(tmp_path / "victim.xml")
    os.link(tmp_path / "victim.xml", root / "hard.xml")
    os.mkfifo(root / "fifo.xml")
    expected = {
        "sym.xml": f"is a symbolic link (to {tmp_path / 'victim.xml'}); taskdsl does not write through links: fix the "
                   "file it points to where it is",
        "hard.xml": "has 2 hard links; taskdsl writes only a file with one",
        "fifo.xml": "is not a regular file",
    }
    for name, why in expected.items():
        with pytest.raises(UnsafeWrite) as info:
            write_text(str(root / name), "x", root=str(root), link="refuse", keep_mode=True)
        assert (str(info.value), info.value.filename) == (f"{root / name}: {why}", str(root / name))
    assert (tmp_path / "victim.xml").read_text(encoding="utf-8") == "precious"
    assert sorted(os.listdir(root)) == ["fifo.xml", "hard.xml", "sym.xml"]


def test_a_taken_temporary_name_is_never_opened_and_the_writer_gives_up_after_a_hundred(tmp_path, monkeypatch):
    (tmp_path / "victim.txt").write_text("precious", encoding="utf-8")
    names = iter([b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(names))
    (tmp_path / f".out.md.{'00' * 6}.partial").symlink_to(tmp_path / "victim.txt")  # planted at the first name
    assert write_text(str(tmp_path / "out.md"), "mine") == str(tmp_path / "out.md")
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == "mine"
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious"
    tries = []
    monkeypatch.setattr(os, "urandom", lambda n: tries.append(n) or b"\x00" * n)  # every name taken
    with pytest.raises(UnsafeWrite) as info:
        write_text(str(tmp_path / "out.md"), "again")
    assert str(info.value) == f"{tmp_path / 'out.md'}: no free temporary name beside it"
    assert info.value.filename == str(tmp_path / "out.md") and len(tries) == 100
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == "mine"


def _lines(tmp_path, content: bytes, **how):
    (tmp_path / "r.jsonl").write_bytes(content)
    appender = LineAppender(str(tmp_path / "r.jsonl"))
    try:
        return list(appender.whole_lines(**how))
    finally:
        appender.close()


def test_whole_lines_are_the_lines_already_there_without_a_cut_last_one(tmp_path):
    assert _lines(tmp_path, b"") == []
    assert _lines(tmp_path, b'{"a": 1}\n{"b": 2}\n') == [b'{"a": 1}', b'{"b": 2}']
    assert _lines(tmp_path, b'{"a": 1}\n\n{"b": 2, "cu') == [b'{"a": 1}', b""]
    assert _lines(tmp_path, b"only a cut line") == []


def test_whole_lines_span_the_reads_and_an_overlong_line_is_skipped(tmp_path):
    big = b"x" * ((1 << 20) + 5)  # past one read of 1 MiB
    assert _lines(tmp_path, b"a\n" + big + b"\nb\n") == [b"a", big, b"b"]
    assert _lines(tmp_path, b"a\n" + big + b"\nb\n", longest=(1 << 20) - 10) == [b"a", b"b"]
    huge = b"z" * ((3 << 20) + 7)  # over three reads: skipped from the read that passes the bound to its end
    assert _lines(tmp_path, huge + b"\nb\n" + huge, longest=1 << 20) == [b"b"]
    many = [b"line"] * 500_000  # 2.5 MB after the skipped line: the reads after it keep each line
    assert _lines(tmp_path, b"z" * ((1 << 20) + 5) + b"\n" + b"line\n" * len(many), longest=1 << 19) == many
    line = b"q" * (1 << 20)  # exactly one read: as long as the bound is kept, one byte longer is skipped
    assert _lines(tmp_path, line + b"\nb\n", longest=1 << 20) == [line, b"b"]
    assert _lines(tmp_path, line + b"\nb\n", longest=(1 << 20) - 1) == [b"b"]


def test_whole_lines_read_the_file_that_was_checked_not_the_name_again(tmp_path):
    (tmp_path / "r.jsonl").write_bytes(b"mine\n")
    appender = LineAppender(str(tmp_path / "r.jsonl"))
    try:
        os.replace(tmp_path / "r.jsonl", tmp_path / "moved.jsonl")
        (tmp_path / "r.jsonl").write_bytes(b"planted\n")
        assert list(appender.whole_lines()) == [b"mine"]
        appender.write_line("next")
        assert list(appender.whole_lines()) == [b"mine", b"next"]
    finally:
        appender.close()
