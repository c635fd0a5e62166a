"""One writer for everything taskdsl writes: result documents, traces, JUnit reports, replay
fixtures, `ask --save`, the answer cache, a batch's results, the memory index. Other local users (and links they plant) are hostile:

- taskdsl's own files go into a per-user folder (`$XDG_STATE_HOME/taskdsl/…`, else
  `~/.local/state/taskdsl/…`), created `0700`; its owner is checked and a link there is refused.
  Nothing is written under a predictable name in the shared temporary folder.
- A new file in such a folder is created with `O_CREAT | O_EXCL | O_NOFOLLOW` (a name already
  taken gets a numbered twin, never reused), mode `0600`.
- A file at a path the user names is written to a fresh temporary file beside it (`O_EXCL`,
  `0600`) and renamed over the path, so a link planted at that path is replaced, never followed; a
  stream (a trace) at such a path is opened without following a link and refused unless it is a
  regular file of the user with one link.
- A file inside a project (`root=`: a template `check --fix` rewrites, the memory index, a replay
  fixture `test --record` writes, a file the editor extracts) is reached from the project's root
  one folder at a time, each opened without following a link and checked to be a folder of the
  user before anything is created; a missing folder is made `0700` relative to its checked parent.
  A link anywhere on the way is refused, naming it: nothing is created or written through it. A
  user's own file (`link="refuse"`) that is a link or has other hard links is refused too, and the
  new text keeps the file's mode.

Nothing else in taskdsl opens a file for writing (tests/security/test_one_writer.py).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

PRIVATE = 0o600


class UnsafeWrite(OSError):
    """A write refused because what is there is not safely the user's own."""

    def __init__(self, path: str, why: str):
        super().__init__(errno.EPERM, why, path)
        self.path = path
        self.why = why

    def __str__(self) -> str:
        return f"{self.path}: {self.why}"


def state_folder(*parts: str) -> str:
    """The user's own folder for taskdsl's files (created 0700, owner checked)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    if not os.path.isabs(base) or base.startswith("~"):
        base = tempfile.mkdtemp(prefix="taskdsl-")  # no home: a fresh private folder of this process
    return private_folder(os.path.join(base, "taskdsl", *parts))


def private_folder(path: str) -> str:
    """path as a folder only the user can write into: created 0700 when missing, refused when it is a
    link, not a folder, another user's, or writable by others."""
    path = os.path.abspath(path)
    missing, where = [], path
    while not os.path.lexists(where):
        missing.append(os.path.basename(where))
        where = os.path.dirname(where)
    if missing:  # each folder made here is 0700 (makedirs would give parents the umask's), relative to its
        # parent's descriptor and opened without following a link: a link planted meanwhile is refused
        there = os.lstat(where)
        if stat.S_ISLNK(there.st_mode) and hasattr(os, "geteuid") and there.st_uid != os.geteuid():
            raise UnsafeWrite(where, f"is a symbolic link of another user (uid {there.st_uid}); nothing was created "
                                     "through it: choose a folder of your own")
        fd = os.open(where, _DIRECTORY)
        try:
            for part in reversed(missing):
                where = os.path.join(where, part)
                try:
                    os.mkdir(part, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
                child = _open_checked(part, fd, where)
                os.close(fd)
                fd = child
        finally:
            os.close(fd)
    problem = not_private(os.lstat(path))
    if problem:
        raise UnsafeWrite(path, problem)
    return path


def not_private(info: os.stat_result) -> str | None:
    """Why a folder (its lstat) is not one only the user can write into, or None when it is: the one
    predicate for the writer's folders and for what the answer cache trusts to read back."""
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link; give the folder itself"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"belongs to another user (uid {info.st_uid}); choose a folder of your own"
    if info.st_mode & 0o022:
        return "is writable by other users; make it private (chmod 700) or choose another folder"
    return None


def create(folder: str, name: str, *, mode: int = PRIVATE):
    """A new text file named name (or name's numbered twin) in folder: (file, path). Never follows a
    link and never reuses a file that is there."""
    folder = private_folder(folder)
    stem, dot, ext = name.partition(".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for n in range(1000):
        candidate = name if n == 0 else f"{stem}-{n}{dot}{ext}"
        path = os.path.join(folder, candidate)
        try:
            fd = os.open(path, flags, mode)
        except FileExistsError:
            continue
        os.fchmod(fd, mode)
        return os.fdopen(fd, "w", encoding="utf-8"), path
    raise UnsafeWrite(os.path.join(folder, name), "no free name")


def _check_own_file(fd: int, path: str) -> None:
    """What fd opened is a regular file of the user with a single link (else UnsafeWrite)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeWrite(path, "is not a regular file")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise UnsafeWrite(path, "belongs to another user")
    if info.st_nlink != 1:
        raise UnsafeWrite(path, f"has {info.st_nlink} hard links; taskdsl writes only a file with one")


def open_stream(path: str, *, mode: int = PRIVATE):
    """path opened for writing from its start (a trace), refused unless it is (or becomes) a regular
    file of the user with a single link; a link at path is never followed."""
    # O_NONBLOCK: a FIFO (or a device) at path must not block the open; it is refused below
    nonblock = getattr(os, "O_NONBLOCK", 0)
    flags = os.O_WRONLY | os.O_CREAT | nonblock | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeWrite(path, "is a symbolic link; taskdsl does not write through links") from None
        if error.errno == errno.ENXIO:  # a FIFO nobody reads
            raise UnsafeWrite(path, "is not a regular file") from None
        raise
    try:
        _check_own_file(fd, path)
        if nonblock:
            os.set_blocking(fd, True)
        os.fchmod(fd, mode)
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "w", encoding="utf-8")


def write_text(path: str, text: str, **how) -> str:
    """text written to path through a fresh temporary file beside it, renamed over path: a reader never
    sees half a file, and a link at path is replaced, not followed (see write_bytes for `how`)."""
    return write_bytes(path, text.encode("utf-8"), **how)


_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _inside(path: str, root: str) -> list[str] | None:
    """path's components below root (lexically, or below root's real path), or None when outside it."""
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        relative = os.path.relpath(path, base)
        if relative == "." or not (relative == ".." or relative.startswith(".." + os.sep)):
            return [] if relative == "." else relative.split(os.sep)
    return None


def _open_folder(folder: str, root: str | None, make_folders: bool) -> int:
    """An open descriptor of folder. Without root, folder as the user named it (it must exist). With
    root, folder reached from root one component at a time: each opened without following a link and
    checked to be a folder of the user before the next is opened or created; a missing one is made
    0700 relative to its checked parent (when make_folders), so nothing is created through a link."""
    if root is None:
        return os.open(folder, _DIRECTORY)
    parts = _inside(folder, root)
    if parts is None:
        raise UnsafeWrite(folder, f"is outside the project ({root}); taskdsl writes only inside it")
    fd = os.open(root, _DIRECTORY)
    where = root
    try:
        for part in parts:
            where = os.path.join(where, part)
            try:
                child = os.open(part, _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not make_folders:
                    raise FileNotFoundError(errno.ENOENT, "no such folder", where) from None
                try:
                    os.mkdir(part, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened and checked below like any other
                child = _open_checked(part, fd, where)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(
                        os.lstat(part, dir_fd=fd).st_mode):
                    raise UnsafeWrite(where, f"is a symbolic link (to {os.readlink(part, dir_fd=fd)}); taskdsl "
                                             "does not write through links: nothing was created or written") from None
                if error.errno == errno.ENOTDIR:
                    raise UnsafeWrite(where, "is not a folder") from None
                raise
            os.close(fd)
            fd = child
            _check_own_folder(fd, where)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_checked(part: str, parent: int, where: str) -> int:
    try:
        return os.open(part, _DIRECTORY | _NOFOLLOW, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeWrite(where, "was replaced by a link or a file while taskdsl made it: nothing written") from None
        raise


def _check_own_folder(fd: int, where: str) -> None:
    info = os.fstat(fd)
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise UnsafeWrite(where, f"belongs to another user (uid {info.st_uid}); taskdsl writes only into your folders")


def write_bytes(path: str, data: bytes, *, mode: int = PRIVATE, root: str | None = None,
                make_folders: bool = False, link: str = "replace", keep_mode: bool = False) -> str:
    """data written to path through a fresh temporary file beside it (O_EXCL, created relative to the
    folder's descriptor), renamed over path: a reader never sees half a file.

    root: path is a file inside that project, reached from it as `_open_folder` says (make_folders:
    missing folders made 0700). link: what a link at path gets, "replace" (taskdsl's own files: the
    link is replaced, never followed) or "refuse" (a user's file: a symbolic link, or a file with
    other hard links, is refused naming it). keep_mode: an existing file keeps its mode."""
    given, path = path, os.path.abspath(path)
    folder, name = os.path.split(path)
    fd = _open_folder(folder, root, make_folders)
    try:
        try:
            there = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        if there is not None and stat.S_ISDIR(there.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), given)
        if there is not None and link == "refuse":
            if stat.S_ISLNK(there.st_mode):
                raise UnsafeWrite(given, f"is a symbolic link (to {os.readlink(name, dir_fd=fd)}); taskdsl does not "
                                         "write through links: fix the file it points to where it is")
            if not stat.S_ISREG(there.st_mode):
                raise UnsafeWrite(given, "is not a regular file")
            if there.st_nlink != 1:
                raise UnsafeWrite(given, f"has {there.st_nlink} hard links; taskdsl writes only a file with one")
            if hasattr(os, "geteuid") and there.st_uid != os.geteuid():
                raise UnsafeWrite(given, f"belongs to another user (uid {there.st_uid}); taskdsl rewrites only your files")
        if keep_mode and there is not None and stat.S_ISREG(there.st_mode):
            mode = stat.S_IMODE(there.st_mode)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        for _ in range(100):
            temporary = f".{name}.{os.urandom(6).hex()}.partial"
            try:
                out = os.open(temporary, flags, PRIVATE, dir_fd=fd)
                break
            except FileExistsError:
                continue
        else:
            raise UnsafeWrite(path, "no free temporary name beside it")
        try:
            with os.fdopen(out, "wb") as handle:
                os.fchmod(handle.fileno(), mode)
                handle.write(data)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=fd)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(fd)
    return path


def create_new(path: str, text: str, *, root: str) -> str:
    """A new file at path inside the project root (reached as write_bytes reaches it), never over
    anything there (O_EXCL, no link followed): a file the editor extracts. Mode as the umask gives."""
    path = os.path.abspath(path)
    folder, name = os.path.split(path)
    fd = _open_folder(folder, root, False)
    try:
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                      0o666, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(out, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def write_private(path: str, data: bytes) -> str:
    """data at path in a folder only the user can write into (created 0700, owner checked): the
    answer cache's entries."""
    private_folder(os.path.dirname(os.path.abspath(path)))
    return write_bytes(path, data)


class LineAppender:
    """Whole lines appended to a file (a batch's results): opened owner-only with O_APPEND and
    without following a link, refused unless it is a regular file of the user with one link; each
    line goes out in one write of the whole line, so a reader (or a run stopped by Ctrl-C) sees only
    whole lines. Safe to share across threads."""

    def __init__(self, path: str):
        import threading

        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise FileNotFoundError(errno.ENOENT, "no such folder", folder)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(path, flags, PRIVATE)
        except OSError as error:
            if error.errno == errno.ELOOP or os.path.islink(path):
                raise UnsafeWrite(path, "is a symbolic link; taskdsl does not write through links") from None
            raise
        try:
            _check_own_file(self.fd, path)
            os.fchmod(self.fd, PRIVATE)
        except BaseException:
            os.close(self.fd)
            raise
        self.lock = threading.Lock()
        self.path = path

    def ends_mid_line(self) -> bool:
        """Whether the file's last byte is not a newline (a line cut by a crash): the next write starts a new line."""
        size = os.fstat(self.fd).st_size
        return size > 0 and os.pread(self.fd, 1, size - 1) != b"\n"

    def whole_lines(self, longest: int = 1 << 26):
        """The lines already in the file (without their newline; a cut last line is not one), read through
        the descriptor that was checked, never by looking the name up again. A line still unfinished past
        `longest` bytes at the end of a read (of 1 MiB) is skipped whole: memory stays bounded (by `longest`
        plus one read) whatever the file holds."""
        offset, rest, skipping = 0, b"", False
        while chunk := os.pread(self.fd, 1 << 20, offset):
            offset += len(chunk)
            parts = (rest + chunk).split(b"\n")
            rest = parts.pop()
            if skipping and parts:
                parts, skipping = parts[1:], False  # the end of the overlong line
            yield from parts
            if len(rest) > longest:
                rest, skipping = b"", True

    def write_line(self, text: str) -> None:
        data = (text.replace("\n", " ") + "\n").encode("utf-8")
        with self.lock:
            written = 0
            while written < len(data):  # one write for a regular file; the loop is for a short write
                written += os.write(self.fd, data[written:])

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
