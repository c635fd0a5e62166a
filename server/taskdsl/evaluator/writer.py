"""The one way a run writes files it keeps: the answer cache and a batch's results.

- `write_private(path, data)`: a whole file at once, readable and writable by its owner only,
  written to a temporary file in the same folder and renamed over `path` (a reader sees the old
  file or the new one, never half of one). The folder is created owner-only; a symbolic link at
  `path` or at its folder is refused, never followed.
- `LineAppender(path)`: one JSON line at a time appended to a results file opened owner-only and
  without following a link; each line goes out in one `write` of the whole line on an O_APPEND
  descriptor, so a reader (or a run stopped by Ctrl-C) sees only whole lines.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading


class UnsafePath(OSError):
    """A path the writer will not write through (a symbolic link, a folder that is not a folder)."""


def _refuse_link(path: str) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{path} is a symbolic link: taskdsl does not write through links")


def private_folder(folder: str) -> str:
    """`folder` created (with its parents) readable by its owner only; a link is refused."""
    folder = os.path.abspath(folder)
    missing = []
    where = folder
    while not os.path.lexists(where):
        missing.append(where)
        where = os.path.dirname(where)
    for part in reversed(missing):  # every folder made here is owner-only (makedirs gives parents the umask's)
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
    _refuse_link(folder)
    if not os.path.isdir(folder):
        raise UnsafePath(f"{folder} is not a folder")
    return folder


def write_private(path: str, data: bytes) -> None:
    """Replace `path` with `data` atomically, owner-only, never through a link."""
    folder = private_folder(os.path.dirname(os.path.abspath(path)))
    _refuse_link(path)
    fd, partial = tempfile.mkstemp(dir=folder, prefix=".", suffix=".partial")  # 0600, O_EXCL
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, path)  # rename replaces a link at path itself, never writes through it
    except BaseException:
        try:
            os.unlink(partial)
        except FileNotFoundError:
            pass
        raise


class LineAppender:
    """Whole lines appended to a file (owner-only, O_APPEND, O_NOFOLLOW); safe to share across threads."""

    def __init__(self, path: str):
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise FileNotFoundError(2, "no such folder", folder)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(path, flags, 0o600)
        except OSError as error:
            if os.path.islink(path):
                raise UnsafePath(f"{path} is a symbolic link: taskdsl does not write through links") from None
            raise error
        os.fchmod(self.fd, 0o600)
        self.lock = threading.Lock()
        self.path = path

    def ends_mid_line(self) -> bool:
        "Whether the file's last byte is not a newline (a line cut by a crash): the next write starts a new line."
        size = os.fstat(self.fd).st_size
        if size == 0:
            return False
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            return f.read(1) != b"\n"

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
