"""The memory system's global index as a project file: path → metadata (a string), as the seeds
define it (`GlobalIndex = Map<string, FileMetadata>`).

The file is `.taskdsl/memory.json` at the project root unless `[memory] index` in taskdsl.toml
names another (inside the project). It is one JSON object, written sorted and indented so people
read and edit it:

    {
      "reports/q3.md": "Q3 revenue and costs",
      "reports/hr.md": "Holiday policy for 2026"
    }

Keys are paths relative to the project root, '/'-separated; values are what a matcher selects on.

- `index_path(root, settings)`: where the project's index is.
- `load(path, root)`: the index and its problems as diagnostics in the file itself (TD906 not a
  JSON object of strings, TD907 a path that names no file, TD908 a path outside the project), at
  the key as written, as the configuration's are. Never raises; the file is opened without
  following a link and read through the project's one reader.
- `save(path, root, entries)`: owner-only (0600 in a 0700 folder created for it), written to a
  temporary file in the same folder and renamed over the index, never through a link.
- `offline_metadata(path)`: what the file system and the file's own first heading (Markdown),
  docstring (Python) or `<description>` (a template) say.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field

from taskdsl.support import jsontext
from taskdsl.language.diagnostics import Diagnostic, Severity
from taskdsl.language.document import Span

DEFAULT_INDEX = os.path.join(".taskdsl", "memory.json")
MAX_INDEX_BYTES = 5_000_000
MAX_METADATA = 200  # characters of a heading or summary kept
CODE_INVALID, CODE_MISSING, CODE_OUTSIDE = "TD906", "TD907", "TD908"


@dataclass
class MemoryIndex:
    path: str
    root: str
    entries: dict[str, str] = field(default_factory=dict)  # relative path → metadata, in file order
    problems: list[Diagnostic] = field(default_factory=list)
    spans: dict[str, Span] = field(default_factory=dict)  # relative path → its key as written
    exists: bool = False
    text: str = ""


def index_path(root: str, settings=None) -> str:
    """The project's index file: `[memory] index` (relative to the root), else the default."""
    configured = getattr(settings, "memory_index", None) if settings is not None else None
    return os.path.normpath(os.path.join(root, configured or DEFAULT_INDEX))


def relative(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def outside_reason(key: str, root: str) -> str | None:
    """Why a key of the index does not name a place inside the project (None: it does)."""
    from taskdsl.project.confine import NEVER_READ, within

    if not key or "\x00" in key or os.path.isabs(key) or key.startswith("~"):
        return f"{key!r} is not a path relative to the project root"
    full = os.path.join(root, key)
    real = os.path.realpath(full)
    if any(within(real, never) for never in NEVER_READ):
        return f"'{key}' resolves under a system folder"
    if not within(real, os.path.realpath(root)):
        shown = f" (a link to '{real}')" if os.path.abspath(full) != real else ""
        return f"'{key}'{shown} is outside the project ({root})"
    return None


def _read_text(path: str) -> str | None:
    """The index file's text, opened once by the one reader without following a link (None: there is no file)."""
    from taskdsl.project.workspace import decode
    from taskdsl.support.reading import ReadRefused, read_bytes

    try:
        data = read_bytes(path, MAX_INDEX_BYTES, follow_links=False)
    except FileNotFoundError:
        return None
    except ReadRefused as refused:
        if refused.kind == "size":
            raise ValueError(f"the memory index {path} is larger than {MAX_INDEX_BYTES // 1_000_000} MB") from None
        raise ValueError(f"the memory index {path} is not a regular file") from None
    except OSError as error:
        raise ValueError(f"cannot open the memory index {path}: "
                         f"{'it is a symbolic link' if os.path.islink(path) else error.strerror}") from None
    source = decode(path, data)
    if source.refused or source.problem is not None:
        raise ValueError(f"the memory index {path}: {source.problem[1]}")
    return source.text


def load(path: str, root: str, text: str | None = None) -> MemoryIndex:
    """The index at `path` of the project at `root` (`text`: an editor's unsaved buffer)."""
    index = MemoryIndex(path, root)
    try:
        text = _read_text(path) if text is None else text
    except ValueError as error:
        index.exists = True
        index.problems.append(Diagnostic(CODE_INVALID, Severity.ERROR, Span(0, 0), str(error)))
        return index
    if text is None:
        return index
    index.exists, index.text = True, text
    if not _parse(index, text):  # not JSON: nothing in it applies until it parses
        index.entries, index.spans = {}, {}
        return index
    for key, span in index.spans.items():
        why = outside_reason(key, root)
        if why is not None:
            index.entries.pop(key, None)
            index.problems.append(Diagnostic(CODE_OUTSIDE, Severity.ERROR, span,
                                             f"{why}: the memory never reads it; remove the entry"))
        elif not os.path.isfile(os.path.join(root, key)):
            index.problems.append(Diagnostic(CODE_MISSING, Severity.WARNING, span,
                                             f"'{key}' names no file of the project: remove the entry, or run "
                                             "`taskdsl memory index` to refresh the index"))
    index.problems.sort(key=lambda p: p.span.start)
    return index


def configuration_problems(root, settings=None, config=None) -> list[tuple[str, str, list[Diagnostic]]]:
    """The problems of the project's configuration files, each as (path, text, problems): its
    config file (taskdsl.toml or [tool.taskdsl]; `config` when already loaded) and its memory index.
    The one list `taskdsl check` reports and a run's gate refuses on (its errors)."""
    from taskdsl.project.config import load_config, project_settings

    root = str(root)
    config = config if config is not None else load_config(root)
    found = []
    if config.path is not None and config.problems:
        found.append((str(config.path), config.text, sorted(config.problems, key=lambda d: d.span.start)))
    if settings is None or getattr(settings, "memory_index", None) is None:
        settings = project_settings(config)  # where the index is: the project's own [memory] index
    index = load(index_path(root, settings), root)
    if index.problems:
        found.append((index.path, index.text, list(index.problems)))
    return found


_WS = re.compile(r"[ \t\n\r]*")


def _parse(index: MemoryIndex, text: str) -> bool:
    """One JSON object of strings, read key by key so each problem has the key's span. False when
    the text is not JSON at all."""
    decoder = json.JSONDecoder()

    def bad(at: int, message: str, end: int | None = None) -> bool:
        at = min(at, len(text))
        index.problems.append(Diagnostic(CODE_INVALID, Severity.ERROR, Span(at, end if end is not None else
                                                                           min(at + 1, len(text))), message))
        return False

    position = _WS.match(text, 0).end()
    if not text.startswith("{", position):
        try:
            jsontext.loads(text)
        except RecursionError:
            return bad(position, 'the memory index must be one JSON object {"path": "what the file is about", …}')
        except json.JSONDecodeError as error:
            return bad(error.pos, f"not valid JSON: {error.msg}; the memory index is one JSON object "
                                  '{"path": "what the file is about", …}')
        return bad(position, 'the memory index must be one JSON object {"path": "what the file is about", …}')
    position = _WS.match(text, position + 1).end()
    if text.startswith("}", position):
        return _trailing(text, position + 1, bad)
    while True:
        if not text.startswith('"', position):
            return bad(position, "not valid JSON: expected a path in double quotes")
        try:
            key, end = json.decoder.scanstring(text, position + 1)
        except json.JSONDecodeError as error:
            return bad(error.pos, f"not valid JSON: {error.msg}")
        key_span = Span(position, end)
        position = _WS.match(text, end).end()
        if not text.startswith(":", position):
            return bad(position, "not valid JSON: expected ':' after the path")
        position = _WS.match(text, position + 1).end()
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            return bad(error.pos, f"not valid JSON: {error.msg}")
        except RecursionError:  # the decoder recurses per nested array or object
            return bad(position, "the value nests arrays or objects too deeply to read: each value is a string")
        if not isinstance(value, str):
            index.problems.append(Diagnostic(CODE_INVALID, Severity.ERROR, Span(position, end),
                                             f"the metadata of '{key}' must be a string (what the file is about)"))
        elif key in index.entries:
            index.problems.append(Diagnostic(CODE_INVALID, Severity.WARNING, key_span,
                                             f"'{key}' is in the index twice: the later entry wins"))
            index.entries[key] = value
        else:
            index.entries[key] = value
            index.spans[key] = key_span
        position = _WS.match(text, end).end()
        if text.startswith(",", position):
            position = _WS.match(text, position + 1).end()
            continue
        if text.startswith("}", position):
            return _trailing(text, position + 1, bad)
        return bad(position, "not valid JSON: expected ',' or '}'")


def _trailing(text: str, position: int, bad) -> bool:
    position = _WS.match(text, position).end()
    if position < len(text):
        return bad(position, "not valid JSON: text after the index's closing '}'")
    return True


def dumps(entries: dict[str, str]) -> str:
    return json.dumps(dict(sorted(entries.items())), ensure_ascii=False, indent=2) + "\n"


def save(path: str, root: str, entries: dict[str, str]) -> None:
    """Write the index owner-only: a temporary file in its folder, renamed over it (a link at the
    index's place is replaced, never followed). Raises ValueError naming what is wrong."""
    from taskdsl.project.confine import within

    path = os.path.abspath(path)
    if not within(os.path.normpath(path), os.path.abspath(root)):
        raise ValueError(f"the memory index {path} is outside the project ({root}): set [memory] index in "
                         "taskdsl.toml to a path inside it")
    from taskdsl.support.files import UnsafeWrite, write_text

    try:  # the one writer: each folder from the root checked (no link, yours) before any is made
        write_text(path, dumps(entries), root=os.path.abspath(root), make_folders=True)
    except UnsafeWrite as error:
        raise ValueError(f"the memory index {path} is not written: {error}") from None


# --------------------------------------------------------------------------- offline metadata

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SETEXT = re.compile(r"^(\S[^\n]*)\n(?:=+|-+)\s*$", re.MULTILINE)
_PY_DOC = re.compile(r'\A(?:\s*#[^\n]*\n|\s*\n)*\s*[rRuU]?("""|\'\'\')\s*(.*?)\1', re.S)
_DESCRIPTION = re.compile(r"<description>\s*(.*?)\s*</description>", re.S)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_METADATA else line[:MAX_METADATA - 1] + "…"


def heading_of(path: str, text: str) -> str | None:
    """The file's own first heading, docstring line or template description, if it has one."""
    lower = path.lower()
    found = None
    if lower.endswith((".md", ".markdown")):
        match = _MD_HEADING.search(text) or _SETEXT.search(text)
        found = match.group(1) if match else None
    elif lower.endswith((".py", ".pyi")):
        match = _PY_DOC.match(text)
        found = match.group(2).strip().split("\n\n")[0] if match else None
    elif lower.endswith(".xml"):
        match = _DESCRIPTION.search(text)
        found = match.group(1) if match else None
    return _one_line(found) if found and found.strip() else None


def offline_metadata(path: str, root: str | None = None) -> str:
    """What the file system says (kind and size) and the file's own heading, when it has one."""
    from taskdsl.project.workspace import read_source

    try:
        info = os.lstat(path)
    except OSError:
        return ""
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    kind = f"{extension + ' ' if extension else ''}file, {info.st_size} bytes"
    heading = None
    if stat.S_ISREG(info.st_mode):
        try:
            source = read_source(path, info.st_size, root=root)  # a hard link to a file outside: not read
        except OSError:
            source = None
        if source is not None and not source.refused:
            heading = heading_of(path, source.text)
    return f"{heading} ({kind})" if heading else kind
