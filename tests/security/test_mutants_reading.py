"""The one reader and the project's confinement, exactly: each refusal's message and kind, the
bounds at their edges, the memory a large file costs (the mutants of taskdsl.support.reading and
taskdsl.project.confine that the other tests let live, see docs/security.md "Mutation testing")."""

import errno
import os
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

from taskdsl.project.confine import read_refusal
from taskdsl.support.reading import ReadBudget, ReadRefused, opened_path, read_bytes, within

MIB = 1 << 20


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def refused(path, limit=100, **options) -> ReadRefused:
    with pytest.raises(ReadRefused) as info:
        read_bytes(str(path), limit, **options)
    return info.value


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes: an open that waits for a writer would hang here
    error = refused(fifo)
    assert (str(error), error.kind) == (f"'{fifo}' is not a regular file (a device, a pipe or a folder)", "device")
    assert (error.errno, error.filename, error.strerror) == (errno.EPERM, str(fifo),
                                                             "is not a regular file (a device, a pipe or a folder)")


def test_a_folder_is_refused(root):
    assert refused(root).kind == "device"


def test_proc_sys_and_dev_are_never_read_even_inside_the_root():
    error = refused("/proc/self/status", 10_000, root="/")
    assert (str(error), error.kind) == ("'/proc/self/status' is under /proc, which a run never reads", "outside")
    assert error.filename == "/proc/self/status"


def test_a_file_outside_the_root_is_refused_with_where_it_really_is(root, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside text", encoding="utf-8")
    (root / "link.txt").symlink_to(outside)
    error = refused(root / "link.txt", root=str(root))
    assert (str(error), error.kind) == (
        f"'{root / 'link.txt'}' is outside the project ({root}) (it is '{outside}')", "outside")
    assert read_bytes(str(root / "link.txt"), 100, root=str(root), allowed=[str(tmp_path)]) == b"outside text"


def test_a_hard_link_is_refused_unless_an_allowed_folder_holds_it(root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("the secret", encoding="utf-8")
    os.link(elsewhere / "secret.txt", root / "notes.txt")
    error = refused(root / "notes.txt", root=str(root))
    assert (str(error), error.kind) == (
        f"'{root / 'notes.txt'}' has 2 hard links, so it may be a file from outside the project; copy it, or "
        "allow its folder with --allow-read", "hardlink")
    # allowing another folder does not allow the link
    assert refused(root / "notes.txt", root=str(root), allowed=[str(elsewhere)]).kind == "hardlink"
    assert read_bytes(str(elsewhere / "secret.txt"), 100, root=str(root), allowed=[str(elsewhere)]) == b"the secret"
    # without a root (a template the user named) a hard link is read
    assert read_bytes(str(root / "notes.txt"), 100) == b"the secret"


def test_a_file_of_exactly_the_limit_is_read_one_byte_more_is_refused(root):
    (root / "a.txt").write_bytes(b"x" * 10)
    assert read_bytes(str(root / "a.txt"), 10) == b"x" * 10
    (root / "b.txt").write_bytes(b"x" * 11)
    error = refused(root / "b.txt", 10)
    assert (str(error), error.kind) == (f"'{root / 'b.txt'}' is larger than 10 bytes", "size")
    assert read_bytes(str(root / "b.txt"), 10, truncate=True) == b"x" * 10


def test_the_limit_holds_when_it_falls_on_a_read_boundary(root):
    """1 MiB is read at a time: a file one byte longer than a 1 MiB limit is still refused."""
    (root / "big.bin").write_bytes(b"y" * (MIB + 1))
    assert refused(root / "big.bin", MIB).kind == "size"
    assert str(refused(root / "big.bin", MIB)).endswith("is larger than 1,048,576 bytes")


def test_a_file_of_several_reads_comes_back_whole(root):
    data = bytes(range(256)) * (10 * 1024) + b"end"  # 2.5 MiB and 3 bytes
    (root / "data.bin").write_bytes(data)
    assert read_bytes(str(root / "data.bin"), 4 * MIB) == data


def test_a_huge_file_costs_memory_of_the_limit_not_of_the_file(root):
    huge = root / "huge.bin"
    with open(huge, "wb") as handle:
        handle.truncate(64 * MIB)  # sparse: 64 MiB of zeros on no disk
    limit = 3 * MIB // 2
    tracemalloc.start()
    try:
        data = read_bytes(str(huge), limit, truncate=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert data == b"\0" * limit
    assert peak < 8 * MIB


def test_reading_a_terminal_never_makes_it_the_controlling_terminal(tmp_path):
    """A session without a terminal that opens one would adopt it (O_NOCTTY prevents it); the reader
    refuses the terminal and the session still has none."""
    code = textwrap.dedent("""
        import os, sys
        from taskdsl.support.reading import ReadRefused, read_bytes
        master, slave = os.openpty()
        name = os.ttyname(slave)
        os.close(slave)
        try:
            read_bytes(name, 10)
        except ReadRefused as error:
            print(error.kind)
        try:
            os.close(os.open("/dev/tty", os.O_RDWR))
            print("has a terminal")
        except OSError:
            print("no terminal")
    """)
    master, slave = os.openpty()  # here too (mutation testing maps tests to code by what runs in this process)
    try:
        assert refused(os.ttyname(slave)).kind == "device"
    finally:
        os.close(master)
        os.close(slave)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, start_new_session=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.stdout.split() == ["device", "no", "terminal"], done.stderr


def test_what_was_opened_is_judged_not_what_the_path_names_now(root, tmp_path):
    (root / "a.txt").write_text("inside", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside", encoding="utf-8")
    link = root / "link.txt"
    link.symlink_to(root / "a.txt")
    fd = os.open(link, os.O_RDONLY)
    try:
        link.unlink()
        link.symlink_to(tmp_path / "outside.txt")  # swapped after the open
        assert opened_path(fd, str(link)) == str(root / "a.txt")
    finally:
        os.close(fd)


def test_a_file_swapped_for_a_link_right_after_it_was_opened_is_read_as_opened(root, tmp_path, monkeypatch):
    """The swap happens between the open and the checks (the moment the file is looked at): what was
    opened, inside the project, is read; the outside file the path now names is not."""
    (root / "a.txt").write_text("inside", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside", encoding="utf-8")
    link = root / "link.txt"
    link.symlink_to(root / "a.txt")
    real_fstat = os.fstat

    def swap_then_fstat(fd):
        if link.resolve() != tmp_path / "outside.txt":
            link.unlink()
            link.symlink_to(tmp_path / "outside.txt")
        return real_fstat(fd)

    monkeypatch.setattr(os, "fstat", swap_then_fstat)
    assert read_bytes(str(link), 100, root=str(root)) == b"inside"
    monkeypatch.setattr(os, "fstat", real_fstat)
    assert refused(link, root=str(root)).kind == "outside"  # opened now: the outside file, refused


def test_within_is_about_whole_folder_names():
    assert within("/srv/project/a.txt", "/srv/project")
    assert within("/srv/project/a.txt", "/srv/project/")
    assert within("/srv/project", "/srv/project")
    assert not within("/srv/project-other/a.txt", "/srv/project")
    assert within("/etc/hosts", "/")


def test_a_runs_budget_counts_files_and_bytes():
    budget = ReadBudget(files=2, total=100)
    assert (budget.read_files, budget.read_bytes) == (0, 0)
    assert budget.next_limit("a.txt") == 100
    budget.took(30)
    assert budget.next_limit("b.txt") == 70
    budget.took(20)
    assert (budget.read_files, budget.read_bytes) == (2, 50)
    with pytest.raises(ReadRefused) as info:
        budget.next_limit("c.txt")
    assert (str(info.value), info.value.kind) == (
        "'c.txt' is one file more than the run may read (2: [run] max_read_files)", "budget")


def test_confinement_says_what_is_outside_where_it_leads_and_how_to_allow_it(root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("x", encoding="utf-8")
    how = ("allow it with --allow-read {folder} (taskdsl run), allow_read in the [run] table of taskdsl.toml, "
           "or the editor setting taskdsl.run.allowRead")
    assert read_refusal(str(elsewhere / "notes.txt"), str(root)) == (
        f"'{elsewhere / 'notes.txt'}' is outside the project ({root}): " + how.format(folder=elsewhere))
    (root / "link.txt").symlink_to(elsewhere / "notes.txt")
    assert read_refusal(str(root / "link.txt"), str(root)) == (
        f"'{root / 'link.txt'}' (a link to '{elsewhere / 'notes.txt'}') is outside the project ({root}): "
        + how.format(folder=elsewhere))
    assert read_refusal(str(root / "link.txt"), str(root), allowed=[str(elsewhere)]) is None
    assert read_refusal("/proc/self/environ", "/") == "'/proc/self/environ' is under /proc, which a run never reads"


# ---- taskdsl's own files (the answer cache, the configuration): own= and follow_links=False

@pytest.mark.parametrize("mode, refused_too", [(0o600, False), (0o644, False), (0o601, False), (0o755, False),
                                               (0o664, True), (0o646, True)])
def test_own_refuses_a_file_others_may_write_and_reads_the_users_own(tmp_path, mode, refused_too):
    entry = tmp_path / "entry.json"
    entry.write_bytes(b"{}")
    os.chmod(entry, mode)
    assert read_bytes(str(entry), 100) == b"{}"  # without own= any mode is read
    if refused_too:
        error = refused(entry, own=True)
        assert (str(error), error.kind) == (f"'{entry}' belongs to another user or others may write it", "owner")
    else:
        assert read_bytes(str(entry), 100, own=True) == b"{}"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_own_refuses_another_users_file_even_when_only_they_may_write_it(tmp_path):
    entry = tmp_path / "entry.json"
    entry.write_bytes(b"{}")
    os.chmod(entry, 0o600)
    os.chown(entry, 12345, 12345)
    assert read_bytes(str(entry), 100) == b"{}"
    error = refused(entry, own=True)
    assert (str(error), error.kind) == (f"'{entry}' belongs to another user or others may write it", "owner")


def test_follow_links_false_refuses_a_link_and_the_default_follows_it(tmp_path):
    (tmp_path / "real.txt").write_bytes(b"data")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert read_bytes(str(tmp_path / "link.txt"), 100) == b"data"
    with pytest.raises(OSError) as info:
        read_bytes(str(tmp_path / "link.txt"), 100, follow_links=False)
    assert info.value.errno == errno.ELOOP and not isinstance(info.value, ReadRefused)
    assert read_bytes(str(tmp_path / "real.txt"), 100, follow_links=False) == b"data"


def test_follow_links_false_still_opens_a_fifo_without_blocking(tmp_path):
    """Not following links must not drop the other flags: a FIFO nobody writes is refused at once,
    not waited on (the test would hang)."""
    fifo = tmp_path / "entry.json"
    os.mkfifo(fifo)
    error = refused(fifo, follow_links=False, own=True)
    assert (str(error), error.kind) == (f"'{fifo}' is not a regular file (a device, a pipe or a folder)", "device")
