"""Settings as the command line and the language server both see them: the project's
configuration (taskdsl.toml, read by `config.project_settings`) with the editor's settings over it
(`overlay`)."""

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
    run_allow_read: tuple[str, ...] = ()  # folders outside the project a run may read (taskdsl.project.confine)
    run_timeout: float = 600.0
    trace_dir: str | None = None
    debounce_ms: int = 200
    # from the project configuration only (taskdsl.toml / [tool.taskdsl])
    project_root: str | None = None  # the folder per-file-ignores and relative paths are read from
    exclude: tuple[str, ...] = ()
    global_values: tuple[tuple[str, str], ...] = ()  # (name, default value) bound at run
    lint_select: tuple[str, ...] | None = None  # None: every rule
    lint_ignore: tuple[str, ...] = ()
    lint_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, selectors)
    run_allow_read: tuple[str, ...] = ()
    run_max_cost: float | None = None
    memory_index: str | None = None  # [memory] index, as written (None: .taskdsl/memory.json)
    memory_matcher: str = "local"  # [memory] matcher: local | model
    run_retries: int | None = None  # [run] retries (None: the default, 3)
    run_cache: bool | None = None  # [run] cache (None: on for `taskdsl test`, off for `taskdsl run`)
    model_policies: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()  # [models."NAME"]: (name, (key, value)…)
    run_max_read_files: int = 1_000  # what one run may read through file_paths (taskdsl.support.reading)
    run_max_read_bytes: int = 50_000_000
    rules_url: str | None = None  # where diagnostics link their rule page (None: the installed pages)
    # the user's own answer (`--yes` on the command line), never read from a project or editor setting: the
    # user agreed to what the project's configuration widens (evaluator.plan.project_widening)
    run_agreed: bool = False

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
    ("docs.rulesUrl", "rules_url", "string"),
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


def overlay(project: Settings, editor: Settings) -> Settings:
    """The editor's settings over the project's. A setting the editor leaves at its built-in
    default does not count (editors send every setting, defaults included): the project's value
    stays. The editor's `globals` names are added to the project's."""
    defaults = Settings()
    changes: dict[str, Any] = {}
    for _, attribute, _ in _KEYS:
        value = getattr(editor, attribute)
        if value != getattr(defaults, attribute):
            changes[attribute] = value
    if "globals" in changes:
        changes["globals"] = tuple(dict.fromkeys((*project.globals, *editor.globals)))
    return replace(project, **changes) if changes else project


SETTING_NAMES = [key for key, _, _ in _KEYS]
assert {a for _, a, _ in _KEYS} <= {f.name for f in fields(Settings)}
