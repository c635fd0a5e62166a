"""One writer for everything taskdsl writes: result documents, traces, JUnit reports, replay
fixtures, `ask --save`. Other local users (and links they plant) are hostile:

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
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
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


def open_stream(path: str, *, mode: int = PRIVATE):
    """path opened for writing from its start (a trace), refused unless it is (or becomes) a regular
    file of the user with a single link; a link at path is never followed."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeWrite(path, "is a symbolic link; taskdsl does not write through links") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeWrite(path, "is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise UnsafeWrite(path, "belongs to another user")
        if info.st_nlink != 1:
            raise UnsafeWrite(path, f"has {info.st_nlink} hard links; taskdsl writes only a file with one")
        os.fchmod(fd, mode)
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "w", encoding="utf-8")


def write_text(path: str, text: str, *, mode: int = PRIVATE) -> str:
    """text written to path through a fresh temporary file beside it, renamed over path: a reader never
    sees half a file, and a link at path is replaced, not followed."""
    given, path = path, os.path.abspath(path)
    folder, name = os.path.split(path)
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), given)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.remove(temporary)
        raise
    return path
