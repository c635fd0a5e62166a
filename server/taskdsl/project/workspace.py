"""The project: where it starts, which files it holds, and how a template file is read.

One answer for every surface: `taskdsl check`, `taskdsl run`, the language server's index and its
Run task all find files with `discover` and read them with `read_source`.

- `project_root(path)`: the nearest folder upward holding `taskdsl.toml`, `pyproject.toml` or
  `.git`; else the file's own folder (a folder given is its own start).
- `discover(roots, settings)`: every file matching the `files` globs under the roots and the
  `library_paths`, skipping what `.gitignore` files ignore, the folders `.git`, `.venv`, `venv`,
  `node_modules`, `__pycache__` (and every other hidden folder), the `exclude` globs, and every
  sub-folder that is a project of its own (its own `taskdsl.toml` or `[tool.taskdsl]`).
- `read_source(path)`: UTF-8 (a BOM is dropped and remembered); undecodable bytes become U+FFFD
  and a problem naming the byte offset; binary or oversized files are refused with a reason.

The project configuration (`taskdsl.toml`) is read elsewhere: it reaches this module as a
`Settings` value (its `files`, `library_paths` and an optional `exclude`) or as the `exclude`
argument.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from taskdsl.support import reading

PROJECT_MARKERS = ("taskdsl.toml", "pyproject.toml", ".git")
SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__"})
MAX_FILE_BYTES = 5_000_000  # no template comes near this; it bounds what a hostile file costs
DEFAULT_FILES = ("**/*.task.xml",)


# --------------------------------------------------------------------------- the project root


def project_root(path: str | os.PathLike) -> str:
    """The project a file (or folder) belongs to: the nearest folder upward with a marker file."""
    path = os.path.abspath(os.fspath(path))
    start = path if os.path.isdir(path) else os.path.dirname(path)
    folder = start
    while True:
        if any(_marks(folder, marker, folder == start) for marker in PROJECT_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def _marks(folder: str, marker: str, own_folder: bool) -> bool:
    """Whether marker makes folder a project root. Above the starting folder only a marker of the user
    counts: a taskdsl.toml another user left in a shared parent folder (/tmp) is not adopted."""
    path = os.path.join(folder, marker)
    try:
        info = os.stat(path)
    except OSError:
        return False
    return own_folder or not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


MAX_CONFIG_BYTES = 1_000_000
_MENTIONS_TASKDSL = re.compile(r"^\s*\[\s*tool\s*\.\s*taskdsl\b|^\s*tool\s*\.\s*taskdsl\b", re.MULTILINE)


def config_file_in(root: str | os.PathLike) -> Path | None:
    """The config file of a project root: its taskdsl.toml, else a pyproject.toml with a
    [tool.taskdsl] table; None when it has neither."""
    root = Path(root)
    own = root / "taskdsl.toml"
    if own.is_file():
        return own
    pyproject = root / "pyproject.toml"
    try:  # the one reader: a link to /dev/zero or a FIFO named pyproject.toml is not read
        from taskdsl.support.reading import read_bytes

        if pyproject.is_file() and _MENTIONS_TASKDSL.search(
                read_bytes(str(pyproject), MAX_CONFIG_BYTES).decode("utf-8-sig")):
            return pyproject
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    return None


def own_project(folder: str) -> bool:
    """A folder holding its own config (taskdsl.toml, or a pyproject.toml with [tool.taskdsl]) is
    a project of its own: discovery from a parent folder skips it (SPEC §17, nested projects)."""
    return config_file_in(folder) is not None


def env_library_paths() -> tuple[str, ...]:
    """TASKDSL_LIBRARY_PATH: more library folders or files, os.pathsep-separated."""
    return tuple(p for p in os.environ.get("TASKDSL_LIBRARY_PATH", "").split(os.pathsep) if p)


# --------------------------------------------------------------------------- discovery


def glob_regex(pattern: str):
    """A `files` glob over '/'-separated relative paths (`**/` = any folders, or none), matched in linear
    time (taskdsl.project.globs: a regex would backtrack exponentially on a hostile glob)."""
    from taskdsl.project.globs import compile_glob

    return compile_glob(pattern)


def skipped_folder(name: str) -> bool:
    """A folder discovery never enters (environments, dependencies, caches, hidden folders)."""
    return name in SKIPPED_DIRS or name.startswith(".")


MAX_GITIGNORE_BYTES = 1_000_000  # a .gitignore read for the workspace's file list
# patterns of one .gitignore (or the exclude list) applied: each is a regex tried on every path checked, so
# 44,000 of them made `taskdsl check` and the server's index spend seconds a path; real ones hold hundreds
MAX_GITIGNORE_PATTERNS = 1_000


def _gitignore_spec(lines: list[str]):
    """Git's own matching rules (pathspec), imported only when a .gitignore or exclude exists: the first
    MAX_GITIGNORE_PATTERNS patterns that are not too costly to match (comments and blank lines do not count)."""
    import pathspec

    from taskdsl.project.globs import costly_gitignore_line

    patterns = [line for line in lines if line.strip() and not line.startswith("#") and not costly_gitignore_line(line)]
    return pathspec.GitIgnoreSpec.from_lines(patterns[:MAX_GITIGNORE_PATTERNS])


class _Ignores:
    """The `.gitignore` files that apply under a folder, and the `exclude` globs."""

    def __init__(self, top: str, exclude: Iterable[str]):
        self._specs: dict[str, object] = {}  # folder → its .gitignore's spec (None: it has none)
        exclude = list(exclude)
        self._exclude = _gitignore_spec(exclude) if exclude else None
        self._top = top

    def _spec(self, folder: str):
        if folder not in self._specs:
            spec = None
            try:  # a link to /dev/zero or a FIFO named .gitignore is refused, not read forever
                data = reading.read_bytes(os.path.join(folder, ".gitignore"), MAX_GITIGNORE_BYTES)
                spec = _gitignore_spec(data.decode("utf-8", "replace").splitlines())
            except OSError:
                pass
            self._specs[folder] = spec
        return self._specs[folder]

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether a path is excluded or ignored by a .gitignore between the project top and it."""
        relative = os.path.relpath(path, self._top).replace(os.sep, "/")
        suffix = "/" if is_dir else ""
        if self._exclude is not None and not relative.startswith("../") and \
                self._exclude.match_file(relative + suffix):
            return True
        folder = os.path.dirname(path)
        while True:
            spec = self._spec(folder)
            if spec is not None:
                inner = os.path.relpath(path, folder).replace(os.sep, "/")
                if spec.match_file(inner + suffix):
                    return True
            if folder == self._top or not folder.startswith(self._top):
                return False
            parent = os.path.dirname(folder)
            if parent == folder:
                return False
            folder = parent


def files_under(folder: str, patterns: Iterable[str] = DEFAULT_FILES, exclude: Iterable[str] = (),
                top: str | None = None, nested: list | None = None) -> list[str]:
    """The files under one folder matching any pattern (relative to the folder), minus what is
    skipped, ignored or excluded. `.gitignore` files count from `top` (the project root) down."""
    folder = os.path.abspath(folder)
    top = os.path.abspath(top) if top else folder
    if not (folder == top or folder.startswith(top.rstrip(os.sep) + os.sep)):
        top = folder
    ignores = _Ignores(top, exclude)
    regexes = [glob_regex(p.lstrip("/")) for p in patterns]
    found = []
    for directory, subdirs, files in os.walk(folder):
        kept = [d for d in subdirs if not skipped_folder(d)
                and not ignores.ignored(os.path.join(directory, d), is_dir=True)]
        if nested is not None:  # the projects of their own passed over (the caller may say so)
            nested.extend(os.path.join(directory, d) for d in kept if own_project(os.path.join(directory, d)))
        subdirs[:] = sorted(d for d in kept if not own_project(os.path.join(directory, d)))
        relative_dir = os.path.relpath(directory, folder)
        for name in sorted(files):
            relative = name if relative_dir == "." else f"{relative_dir}/{name}".replace(os.sep, "/")
            if any(regex.match(relative) for regex in regexes):
                path = os.path.join(directory, name)
                if not ignores.ignored(path, is_dir=False):
                    found.append(path)
    return found


def excludes(settings, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The configured `exclude` globs (the settings' own, when they carry some) plus `exclude`."""
    return tuple(getattr(settings, "exclude", ()) or ()) + tuple(exclude)


def library_path_entries(settings, bases: Iterable[str]) -> list[str]:
    """The `library_paths` as absolute paths: relative entries are taken against each base."""
    bases = list(bases) or [os.getcwd()]
    found = []
    for entry in getattr(settings, "library_paths", ()) or ():
        entry = os.path.expanduser(entry)
        candidates = [entry] if os.path.isabs(entry) else [os.path.join(base, entry) for base in bases]
        found.extend(os.path.abspath(candidate) for candidate in candidates)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Discovered:
    """What `discover` found: the project files (checked) and the library-path files (only
    indexed, so references resolve against them)."""

    project_files: list[str]
    library_files: list[str]
    nested: tuple = ()  # folders under the roots that are projects of their own (SPEC §17): not walked

    @property
    def all(self) -> list[str]:
        return list(dict.fromkeys(self.project_files + self.library_files))


def _folders(roots: Iterable[str], settings) -> list[tuple[str, str]]:
    """(folder to walk, the project top its .gitignore files count from): the root folders, then
    the library-path folders (each inside its own project)."""
    roots = [r for r in roots if os.path.isdir(r)]
    pairs = [(root, root) for root in roots]
    pairs += [(entry, project_root(entry)) for entry in library_path_entries(settings, roots) if os.path.isdir(entry)]
    return pairs


def discover(roots: Iterable[str | os.PathLike], settings=None, exclude: Iterable[str] = ()) -> Discovered:
    """Every template of the projects at `roots` (folders; a file given is taken as it is) and of
    the settings' library paths."""
    patterns = tuple(getattr(settings, "files", DEFAULT_FILES) or DEFAULT_FILES)
    skip = excludes(settings, exclude)
    roots = [os.path.abspath(os.fspath(r)) for r in roots]
    folders = [r for r in roots if os.path.isdir(r)]
    project = [r for r in roots if os.path.isfile(r)]
    nested: list[str] = []
    for folder in folders:
        project.extend(files_under(folder, patterns, skip, top=folder, nested=nested))
    library = []
    for entry in library_path_entries(settings, folders):
        if os.path.isdir(entry):
            library.extend(files_under(entry, patterns, skip, top=project_root(entry)))
        elif os.path.isfile(entry):
            library.append(entry)
    project = list(dict.fromkeys(project))
    known = set(project)
    return Discovered(project, [p for p in dict.fromkeys(library) if p not in known], tuple(dict.fromkeys(nested)))


def belongs(path: str, roots: Iterable[str], settings=None, exclude: Iterable[str] = ()) -> bool:
    """Whether `discover(roots, settings)` finds `path` (decided without walking the folders)."""
    path = os.path.abspath(path)
    roots = [os.path.abspath(r) for r in roots]
    if path in library_path_entries(settings, [r for r in roots if os.path.isdir(r)]):
        return True
    patterns = [glob_regex(p.lstrip("/")) for p in (getattr(settings, "files", DEFAULT_FILES) or DEFAULT_FILES)]
    for folder, top in _folders(roots, settings):
        if not path.startswith(folder.rstrip(os.sep) + os.sep):
            continue
        relative = os.path.relpath(path, folder).replace(os.sep, "/")
        parts = relative.split("/")
        if any(skipped_folder(part) for part in parts[:-1]) or not any(r.match(relative) for r in patterns):
            continue
        nested = folder
        if any(own_project(nested := os.path.join(nested, part)) for part in parts[:-1]):
            continue  # inside a project of its own
        ignores = _Ignores(top, excludes(settings, exclude))
        current = folder
        inside = [current := os.path.join(current, part) for part in parts[:-1]]
        if not any(ignores.ignored(d, is_dir=True) for d in inside) and not ignores.ignored(path, is_dir=False):
            return True
    return False


# --------------------------------------------------------------------------- reading


@dataclass
class Source:
    """One template file as read: its text, and what reading it found."""

    path: str
    text: str = ""
    bom: bool = False
    problem: tuple[int, str] | None = None  # (text offset, message) of bytes that are not UTF-8
    refused: bool = False  # too large or binary: `text` is empty and `problem` says why

    @property
    def error(self) -> str | None:
        """The reading problem as one line for a user, or None."""
        return None if self.problem is None else f"{self.path}: {self.problem[1]}"


def decode(path: str, data: bytes) -> Source:
    """Template bytes → Source (never raises for bad bytes)."""
    source = Source(path)
    nul = data.find(b"\x00")
    if nul >= 0:
        source.refused = True
        source.problem = (0, f"binary file (a NUL byte at byte {nul}): this is not a template")
        return source
    if data.startswith(codecs.BOM_UTF8):
        source.bom, data = True, data[len(codecs.BOM_UTF8):]
    try:
        source.text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        source.text = data.decode("utf-8", errors="replace")
        offset = len(data[: error.start].decode("utf-8", errors="replace"))
        byte = error.start + (len(codecs.BOM_UTF8) if source.bom else 0)
        source.problem = (offset, f"not valid UTF-8 at byte {byte} (0x{data[error.start]:02x}): templates are UTF-8")
    return source


def read_source(path: str, size: int | None = None, *, root: str | None = None, allowed=()) -> Source:
    """Read a template file (or a project file for the memory: with `root`, it must be inside it or an
    allowed folder, with one link, as a run's reads). Raises OSError when it cannot be read at all."""
    size = os.path.getsize(path) if size is None else size
    if size > MAX_FILE_BYTES:
        return Source(path, refused=True, problem=(0, f"the file is {size / 1_000_000:.1f} MB: templates larger "
                                                      f"than {MAX_FILE_BYTES / 1_000_000:g} MB are not read"))
    from taskdsl.support.reading import ReadRefused, read_bytes

    try:  # opened once; a device (a link to /dev/zero) is refused and no more than the limit is read
        data = read_bytes(path, MAX_FILE_BYTES, root=root, allowed=allowed)
    except ReadRefused as refused:
        what = (f"the file is larger than {MAX_FILE_BYTES / 1_000_000:g} MB: templates that large are not read"
                if refused.kind == "size" else refused.why if refused.kind in ("outside", "hardlink")
                else f"{refused.why}: this is not a template")
        return Source(path, refused=True, problem=(0, what))
    return decode(path, data)


def read_text(path: str, size: int | None = None) -> str | None:
    """A template's text for indexing (bad bytes as U+FFFD), or None when it cannot be read, is
    binary or is too big."""
    try:
        source = read_source(path, size)
    except OSError:
        return None
    return None if source.refused else source.text


def write_source(source: Source, text: str) -> None:
    """Write a template back as it was read (a BOM kept), through the one writer: inside its project,
    reached without following a link, never through a link or into a file with other hard links
    (support.files.UnsafeWrite names it), renamed into place keeping the file's mode."""
    from taskdsl.support import files

    files.write_bytes(source.path, (codecs.BOM_UTF8 if source.bom else b"") + text.encode("utf-8"),
                      root=project_root(source.path), link="refuse", keep_mode=True)
