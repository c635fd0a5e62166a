"""One writer for everything taskdsl writes: result documents, traces, JUnit reports, replay
fixtures, `ask --save`, the answer cache, a batch's results, the memory index. Other local users (and links they plant) are hostile:

- taskdsl's own files go into a per-user folder (`$XDG_STATE_HOME/taskdsl/…`, else
  `~/.local/state/taskdsl/…`), created `0700`; its owner is checked and a link there is refused.
  Nothing is written under a predictable name in the shared temporary folder.
- A new file in such a folder is created with `O_CREAT | O_EXCL | O_NOFOLLOW` (a name already
  taken gets a numbered twin, never reused), mode `0600`.
- A file at a path the user names is written to a fresh temporary file beside it (`mkstemp`:
  `O_EXCL`, `0600`) and renamed over the path, so a link planted at that path is replaced, never
  followed; a stream (a trace) at such a path is opened without following a link and refused
  unless it is a regular file of the user with one link.
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
        missing.append(where)
        where = os.path.dirname(where)
    for part in reversed(missing):  # each folder made here is 0700 (makedirs would give parents the umask's)
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeWrite(path, "is a symbolic link; give the folder itself")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeWrite(path, "is not a folder")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise UnsafeWrite(path, f"belongs to another user (uid {info.st_uid}); choose a folder of your own")
    if info.st_mode & 0o022:
        raise UnsafeWrite(path, "is writable by other users; make it private (chmod 700) or choose another folder")
    return path


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


def write_text(path: str, text: str, *, mode: int = PRIVATE) -> str:
    """text written to path through a fresh temporary file beside it, renamed over path: a reader never
    sees half a file, and a link at path is replaced, not followed."""
    return write_bytes(path, text.encode("utf-8"), mode=mode)


def write_bytes(path: str, data: bytes, *, mode: int = PRIVATE) -> str:
    """data written to path as write_text writes text (a temporary file beside it, renamed over it)."""
    given, path = path, os.path.abspath(path)
    folder, name = os.path.split(path)
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), given)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.remove(temporary)
        raise
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
