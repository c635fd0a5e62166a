"""One reader for every file taskdsl reads (templates for the CLI, the index and the editor; the files
a run sends to a model). A path is opened once and every check is made on what was opened, so
nothing can be swapped between the check and the read:

- it must be a regular file (a link to /dev/zero, a FIFO or a folder is refused);
- inside a root (when one is given): its real path, taken from the open descriptor, must be under
  the root or an allowed folder, and never under /proc, /sys or /dev;
- one link only (when a root is given): a hard link inside the project to a file elsewhere has
  st_nlink > 1 and is refused unless an allowed folder holds it;
- at most `limit` bytes are read, whatever st_size says.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Iterable

NEVER_READ = ("/proc", "/sys", "/dev")


class ReadRefused(OSError):
    """A file refused by what was opened (not a regular file, outside the root, hard-linked, too big)."""

    def __init__(self, path: str, why: str, kind: str):
        super().__init__(errno.EPERM, why, path)
        self.path, self.why, self.kind = path, why, kind

    def __str__(self) -> str:
        return f"'{self.path}' {self.why}"


def within(path: str, folder: str) -> bool:
    """path is folder or under it (a sibling 'folder-other' is not)."""
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder if folder == os.sep else folder + os.sep)


def opened_path(fd: int, path: str) -> str:
    """The real path of what fd refers to (from the descriptor itself where the system says it)."""
    for link in (f"/proc/self/fd/{fd}", f"/dev/fd/{fd}"):
        try:
            real = os.readlink(link)
        except OSError:
            continue
        if real.startswith("/"):
            return real
    return os.path.realpath(path)  # no descriptor path on this system: the best answer there is


def read_bytes(path: str, limit: int, *, root: str | None = None, allowed: Iterable[str] = (),
               truncate: bool = False, follow_links: bool = True, own: bool = False) -> bytes:
    """At most limit bytes of path, checked as the module says; ReadRefused when a check fails (the
    `kind` says which: device, outside, hardlink, size), OSError when it cannot be opened (ELOOP for
    a link when follow_links is false: taskdsl's own files, which nothing should link). With own, a
    file of another user or one others may write is refused (kind owner: what taskdsl wrote for the
    user alone, its answer cache). With truncate, a longer file gives its first limit bytes instead."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused(path, "is not a regular file (a device, a pipe or a folder)", "device")
        if own and ((hasattr(os, "geteuid") and info.st_uid != os.geteuid()) or info.st_mode & 0o022):
            raise ReadRefused(path, "belongs to another user or others may write it", "owner")
        if root is not None:
            real = opened_path(fd, path)
            for never in NEVER_READ:
                if within(real, never):
                    raise ReadRefused(path, f"is under {never}, which a run never reads", "outside")
            allowed = [os.path.realpath(a) for a in allowed]
            if not any(within(real, folder) for folder in [os.path.realpath(root), *allowed]):
                raise ReadRefused(path, f"is outside the project ({root}) (it is '{real}')", "outside")
            if info.st_nlink != 1 and not any(within(real, folder) for folder in allowed):
                raise ReadRefused(path, f"has {info.st_nlink} hard links, so it may be a file from outside the "
                                        "project; copy it, or allow its folder with --allow-read", "hardlink")
        if os.get_blocking(fd) is False:
            os.set_blocking(fd, True)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            if truncate:
                return data[:limit]
            raise ReadRefused(path, f"is larger than {limit:,} bytes", "size")
        return data
    finally:
        os.close(fd)


MAX_READ_FILES = 1_000  # a run's file_paths reads, all tasks together ([run] max_read_files)
MAX_READ_BYTES = 50_000_000  # and their bytes ([run] max_read_bytes)


class ReadBudget:
    """What one run may read in all: a count of files and a total of bytes. A command printing one
    file's name 20,000 times stops at the count, not at the machine's memory."""

    def __init__(self, files: int = MAX_READ_FILES, total: int = MAX_READ_BYTES):
        self.files, self.total = files, total
        self.read_files = self.read_bytes = 0

    def next_limit(self, path: str) -> int:
        """Bytes the next file may have; ReadRefused when the run has read its count of files."""
        if self.read_files >= self.files:
            raise ReadRefused(path, f"is one file more than the run may read ({self.files:,}: [run] max_read_files)",
                              "budget")
        return self.total - self.read_bytes

    def took(self, size: int) -> None:
        self.read_files += 1
        self.read_bytes += size
