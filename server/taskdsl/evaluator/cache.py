"""The answer cache: a model's answer to the same request is reused instead of paid for again.

The key is a sha256 of the model, the messages, the call's parameters and the declared output
format (canonical JSON). One answer is one file, `<key>.json`, under the user's cache folder
(`platformdirs.user_cache_dir("taskdsl")`, or TASKDSL_CACHE_DIR), in a folder per project (a
digest of the project root's real path): `taskdsl cache info` and `clear` work on the current
project's folder. Files are written by the one writer (support/files.py): owner-only,
temp-and-rename, never through a link. An entry that cannot be read or does not have the
expected shape is a miss, never an error (a local process may have written anything there).
An answer that shows a secret (an environment variable named like one, the configured API key) is
not kept: masked it would not be the answer, in clear it would be a secret on disk.

Offline models are never cached (providers.py wraps only litellm's models). A cached answer
costs nothing: `dataUsage` counts it as `cached`, the notes say `cached: true`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from typing import Any
from taskdsl.support import jsontext
from taskdsl.support.files import not_private

FORMAT_VERSION = 1
MAX_ENTRY_BYTES = 20_000_000


def cache_home() -> str:
    explicit = os.environ.get("TASKDSL_CACHE_DIR")
    if explicit:
        return os.path.abspath(explicit)
    import platformdirs

    return platformdirs.user_cache_dir("taskdsl", appauthor=False)


def project_folder(project_root: str) -> str:
    digest = hashlib.sha256(os.path.realpath(project_root).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return os.path.join(cache_home(), "answers", digest)


def _private(top: str, folder: str) -> bool:
    """Whether every folder from top down to folder is the user's own, not a link, and not writable by
    others: then no one else can have put or swapped anything in it (the writer makes them so)."""
    here = os.path.abspath(folder)
    top = os.path.abspath(top)
    while True:
        try:
            if not_private(os.lstat(here)):
                return False
        except OSError:
            return False
        if here == top:
            return True
        parent = os.path.dirname(here)
        if parent == here or not here.startswith(top + os.sep):
            return False
        here = parent


@dataclass(frozen=True)
class CacheInfo:
    folder: str
    entries: int
    size: int  # bytes


class AnswerCache:
    """The answers of one project."""

    def __init__(self, project_root: str, secrets: tuple = ()):
        from taskdsl.support.redaction import Redactor

        self.root = project_root
        self.folder = project_folder(project_root)
        self.redactor = Redactor(extra=secrets)  # the environment's secrets and the configured API key
        self.hits = 0
        self.stored = 0
        self.withheld = 0  # answers not kept because they show a secret

    @staticmethod
    def key(model: str, messages: list[dict], parameters: dict | None, output_format: dict | None) -> str:
        canonical = {"v": FORMAT_VERSION, "model": model, "messages": messages,
                     "parameters": {k: v for k, v in (parameters or {}).items() if v is not None},
                     "output_format": output_format}
        text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def get(self, key: str):
        from taskdsl.evaluator.results import Completion

        from taskdsl.support.reading import read_bytes

        path = self.path(key)
        if not _private(cache_home(), os.path.dirname(path)):
            return None  # a folder another user may write: what it holds may be theirs
        try:  # opened once, never through a link, the user's own regular file of at most MAX_ENTRY_BYTES: else a miss
            data = jsontext.loads(read_bytes(path, MAX_ENTRY_BYTES, follow_links=False, own=True).decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not (isinstance(data, dict) and data.get("v") == FORMAT_VERSION and data.get("key") == key
                and isinstance(data.get("content"), str)):
            return None
        tokens, prompt = data.get("completion_tokens"), data.get("prompt_tokens")
        model = data.get("model")
        self.hits += 1
        return Completion(data["content"], tokens if whole(tokens) else None,
                          model=model if isinstance(model, str) else None, cached=True,
                          prompt_tokens=prompt if whole(prompt) and prompt > 0 else None)  # else counted

    def put(self, key: str, answer) -> None:
        """Keep the answer, unless it shows a secret: masked it would not be the answer a hit must give
        again, and in clear it would be a secret on disk that outlives the run."""
        from taskdsl.support.files import write_private

        if self.redactor.text(answer.content) != answer.content:
            self.withheld += 1
            return
        data = {"v": FORMAT_VERSION, "key": key, "model": answer.model, "content": answer.content,
                "completion_tokens": answer.completion_tokens, "prompt_tokens": answer.prompt_tokens}
        try:
            write_private(self.path(key), json.dumps(data, ensure_ascii=False).encode("utf-8"))
            self.stored += 1
        except OSError:  # a cache that cannot be written is no cache: the run goes on
            pass


def whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def info(project_root: str) -> CacheInfo:
    folder = project_folder(project_root)
    entries = size = 0
    for where, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".json"):
                entries += 1
                try:
                    size += os.lstat(os.path.join(where, name)).st_size
                except OSError:
                    pass
    return CacheInfo(folder, entries, size)


def clear(project_root: str) -> int:
    """Remove the project's cached answers; how many there were."""
    found = info(project_root).entries
    folder = project_folder(project_root)
    if os.path.islink(folder):
        os.unlink(folder)
    elif os.path.isdir(folder):
        shutil.rmtree(folder)
    return found


def for_run(project_root: str | None, enabled: bool, secrets: tuple = ()) -> Any:
    return AnswerCache(project_root or os.getcwd(), secrets) if enabled else None
