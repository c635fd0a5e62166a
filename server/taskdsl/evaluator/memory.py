"""The memory system: a global index of file metadata and get_relevant_context_for (SPEC §7).

Local and offline: the index maps each workspace file (absolute path) to a metadata string
made of what the file system says about it (its kind and size): never its contents, which a
hostile file could fill with text for the model, nor anything of the environment. Matching keeps
the files whose path shares a word with the request. No ranking (the seeds exclude
it): matches come back in path order.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
             "dist", "build"}
MAX_FILES = 5000
MAX_MATCHES = 20
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_STOP = {"this", "that", "with", "from", "into", "each", "task", "data", "file", "files", "the", "and", "output",
         "input", "inputs", "then", "when", "what", "your", "only", "will", "should", "must", "have", "about"}


@dataclass
class ContextGenerationInput:
    task_text: str
    previous_outputs: str | None = None
    inherited_context: str | None = None

    def as_xml(self) -> str:
        "The structured request of the seeds: three fields, each under its own tag."
        parts = []
        if self.previous_outputs:
            parts.append(f"<previous_outputs>{self.previous_outputs}</previous_outputs>")
        if self.inherited_context:
            parts.append(f"<inherited_context>{self.inherited_context}</inherited_context>")
        parts.append(f"<task_text>{self.task_text}</task_text>")
        return "\n".join(parts)


@dataclass
class AssociativeMatchResult:
    context: str
    matches: list[tuple[str, str | None]] = field(default_factory=list)


def _metadata(path: str) -> str:
    "The file's kind and size, from the file system only (a link is not followed)."
    try:
        info = os.lstat(path)
    except OSError:
        return ""
    if stat.S_ISLNK(info.st_mode):
        return "symbolic link"
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    return f"{extension + ' ' if extension else ''}file, {info.st_size} bytes"


def build_global_index(root: str) -> dict[str, str]:
    index: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.abspath(os.path.join(folder, name))
            index[path] = _metadata(path)
            if len(index) >= MAX_FILES:
                return index
    return index


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


class MemorySystem:
    def __init__(self, root: str | None = None, index: dict[str, str] | None = None):
        self.root = root
        self._index = index

    def get_global_index(self) -> dict[str, str]:
        if self._index is None:
            self._index = build_global_index(self.root) if self.root else {}
        return self._index

    def update_global_index(self, index: dict[str, str]) -> None:
        self._index = dict(index)

    def get_relevant_context_for(self, request: ContextGenerationInput) -> AssociativeMatchResult:
        wanted = _words(request.task_text) | _words(request.previous_outputs or "")
        matches = []
        for path, metadata in sorted(self.get_global_index().items()):
            rel = os.path.relpath(path, self.root) if self.root else path
            if wanted & _words(rel.replace(os.sep, " ").replace(".", " ")):  # the metadata says nothing more
                matches.append((path, metadata or None))
                if len(matches) >= MAX_MATCHES:
                    break
        lines = [f"- {os.path.relpath(p, self.root) if self.root else p}: {m or ''}".rstrip(": ") for p, m in matches]
        context = "Relevant files:\n" + "\n".join(lines) if lines else ""
        return AssociativeMatchResult(context, matches)
