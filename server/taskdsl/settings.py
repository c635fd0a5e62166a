"""User settings (SPEC §8), as the command line and the language server both see them."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Settings:
    files: tuple[str, ...] = ("**/*.task.xml", "**/*.test.xml")  # templates and test files
    library_paths: tuple[str, ...] = ()
    globals: tuple[str, ...] = ()
    model: str | None = None
    run_allow_scripts: bool = False
    run_allow_read: tuple[str, ...] = ()  # folders outside the project a run may read (taskdsl.confine)
    run_timeout: float = 600.0
    trace_dir: str | None = None
    debounce_ms: int = 200

    @property
    def default_model(self) -> str:
        return self.model or os.environ.get("TASKDSL_MODEL") or "taskdsl/echo"

    def updated(self, section: dict[str, Any] | None) -> Settings:
        """Apply a `taskdsl` configuration section (nested or dotted keys); bad values are ignored."""
        if not isinstance(section, dict):
            return self
        flat = _flatten(section)
        changes: dict[str, Any] = {}
        for key, attribute, kind in _KEYS:
            if key not in flat:
                continue
            value = _coerce(flat[key], kind)
            if value is not None:
                changes[attribute] = value
        return replace(self, **changes) if changes else self


_KEYS = [
    ("files", "files", "strings"),
    ("libraryPaths", "library_paths", "strings"),
    ("globals", "globals", "strings"),
    ("model", "model", "string"),
    ("run.allowScripts", "run_allow_scripts", "bool"),
    ("run.allowRead", "run_allow_read", "strings"),
    ("run.timeout", "run_timeout", "number"),
    ("trace.dir", "trace_dir", "string"),
    ("debounce", "debounce_ms", "int"),
]


def _flatten(section: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in section.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _coerce(value: Any, kind: str) -> Any:
    if kind == "strings":
        if isinstance(value, str):
            return (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        return None
    if kind == "string":
        return value if isinstance(value, str) and value else None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    if kind == "int":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
    if kind == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None
    return None


SETTING_NAMES = [key for key, _, _ in _KEYS]
assert {f.name for f in fields(Settings)} == {a for _, a, _ in _KEYS}
