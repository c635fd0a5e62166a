"""The project configuration: `taskdsl.toml` at a project's root, or `[tool.taskdsl]` in its
`pyproject.toml` (taskdsl.toml wins when both exist, as ruff's own file wins over pyproject.toml).

    config = load_config(root)          # never raises: problems are diagnostics in the file
    settings = project_settings(config) # what the command line and the language server use

Unknown keys (TD901, with a did-you-mean), bad values (TD902) and TOML syntax errors (TD903)
are diagnostics in the config file itself, at the key as written (`tomlkeys` finds it). A bad
value is dropped; the rest of the file still applies.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from taskdsl.language.diagnostics import Diagnostic, Fix, Severity, TextEdit
from taskdsl.project.workspace import MAX_CONFIG_BYTES, _MENTIONS_TASKDSL
from taskdsl.language.document import Document, Span
from taskdsl.project.settings import Settings
from taskdsl.project.tomlkeys import KeyPlace, key_places

CONFIG_NAMES = ("taskdsl.toml", "pyproject.toml")
PYPROJECT_TABLE = ("tool", "taskdsl")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# key → kind of value; a dict is a table of its own keys
SCHEMA: dict[str, Any] = {
    "files": "globs",
    "library_paths": "paths",
    "exclude": "globs",
    "model": "string",
    "globals": "globals",
    "lint": {"select": "selectors", "ignore": "selectors", "per-file-ignores": "per_file_ignores"},
    "run": {"timeout": "positive", "trace_dir": "path", "allow_read": "paths", "max_cost": "non_negative",
            "retries": "count", "cache": "bool", "max_read_files": "positive", "max_read_bytes": "positive"},
    "memory": {"index": "project_path", "matcher": "matcher"},
    "models": "models",
}
MATCHERS = ("local", "model")  # [memory] matcher: taskdsl.evaluator.memory
#: the keys of one [models."NAME"] table
MODEL_KEYS = {"fallbacks": "fallbacks", "max_concurrency": "whole", "rpm": "whole", "tpm": "whole"}


@dataclass
class Config:
    """What one config file says. `values` holds the accepted values by key path."""

    root: Path
    path: Path | None = None  # the file read; None when the project has no configuration
    text: str = ""
    values: dict[tuple[str, ...], Any] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)

    def get(self, *path: str, default: Any = None) -> Any:
        return self.values.get(path, default)


# --------------------------------------------------------------------------- finding


def project_root(start: str | os.PathLike) -> Path:
    """The project start belongs to (workspace.project_root: the one answer)."""
    from taskdsl.project.workspace import project_root as root

    return Path(root(start))


def find_config(start: str | os.PathLike) -> Path | None:
    """The config file of start's project: its taskdsl.toml, else a pyproject.toml with a
    [tool.taskdsl] table; None when the project has neither."""
    return config_file_in(project_root(start))


def config_file_in(root: str | os.PathLike) -> Path | None:
    "The config file of a project root (workspace.config_file_in: the one answer)."
    from taskdsl.project.workspace import config_file_in as found

    return found(root)


def is_config_file(path: str | os.PathLike) -> bool:
    return Path(path).name in CONFIG_NAMES


def _read(path: Path) -> str | None:
    from taskdsl.support.reading import read_bytes

    try:
        return read_bytes(str(path), MAX_CONFIG_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


# --------------------------------------------------------------------------- loading


def load_config(root: str | os.PathLike, text_of: dict[str, str] | None = None) -> Config:
    """The configuration of the project at root. `text_of` maps a path to unsaved text (an editor
    buffer) that wins over the file on disk."""
    root = Path(os.path.abspath(root))
    path = config_file_in(root)
    if path is None:
        for name in CONFIG_NAMES:  # an open, unsaved buffer of a config file counts too
            unsaved = (text_of or {}).get(str(root / name))
            if unsaved is not None and (name == "taskdsl.toml" or _MENTIONS_TASKDSL.search(unsaved)):
                path = root / name
                break
    if path is None:
        return Config(root)
    text = (text_of or {}).get(str(path))
    if text is None:
        text = _read(path)
    if text is None:
        problem = Diagnostic("TD903", Severity.ERROR, Span(0, 0),
                             f"cannot read {path.name}: it must be UTF-8 text under {MAX_CONFIG_BYTES // 1_000_000} MB")
        return Config(root, path, "", problems=[problem])
    return parse_config(text, root, path)


def parse_config(text: str, root: Path, path: Path) -> Config:
    config = Config(root, path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        config.problems.append(_syntax_problem(text, str(error)))
        return config
    except RecursionError:  # tomllib recurses per nested array or table
        config.problems.append(Diagnostic("TD903", Severity.ERROR, Span(0, 0),
                                          "the TOML nests arrays or tables too deeply to read; nothing in this file applies"))
        return config
    prefix: tuple[str, ...] = ()
    if path.name == "pyproject.toml":
        prefix = PYPROJECT_TABLE
        tool = data.get("tool")
        data = tool.get("taskdsl", {}) if isinstance(tool, dict) else {}
    places = key_places(text)
    if not isinstance(data, dict):
        config.problems.append(_problem("TD902", places, prefix, (), "[tool.taskdsl] must be a table"))
        return config
    _validate(data, SCHEMA, (), prefix, places, config)
    return config


def _syntax_problem(text: str, message: str) -> Diagnostic:
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    offset = len(text)
    if found:
        offset = Document(text).offset(int(found.group(1)) - 1, int(found.group(2)) - 1)
    reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
    return Diagnostic("TD903", Severity.ERROR, Span(offset, min(offset + 1, len(text))),
                      f"not valid TOML: {reason}; nothing in this file applies until it is fixed")


def _problem(code: str, places, prefix, path, message: str, *, value: bool = False, item: str | None = None,
             text: str = "") -> Diagnostic:
    """A diagnostic at the key (or its value, or one string item of its value) as written; at the
    nearest written parent key otherwise."""
    full = prefix + path
    while full and full not in places:
        full = full[:-1]
    place: KeyPlace | None = places.get(full)
    span = Span(0, 0) if place is None else (place.value if value and place.value else place.key)
    if item is not None and place is not None and place.value is not None:
        span = _item_span(text, place.value, item) or span
    return Diagnostic(code, Severity.ERROR, span, message)


def _with_rename(problem: Diagnostic, text: str, key: str, close: list[str]) -> Diagnostic:
    """TD901's did-you-mean as a fix: rename the key as written (its quotes kept). Unsafe: the value
    then takes effect, which changes what a run does."""
    if not close:
        return problem
    written = text[problem.span.start:problem.span.end]
    if written.strip("\"'") != key:
        return problem  # not the key itself (the nearest written parent): nothing sure to rename
    new = f"{written[0]}{close[0]}{written[-1]}" if written[:1] in "\"'" and len(written) > 1 else close[0]
    return replace(problem, fixes=[Fix(f"Rename key '{key}' to '{close[0]}'", (TextEdit(problem.span, new),),
                                       safe=False)])


def _item_span(text: str, within: Span, item: str) -> Span | None:
    """The quoted string item in an array value (the first one written that way)."""
    for quoted in (f'"{item}"', f"'{item}'"):
        found = text.find(quoted, within.start, within.end)
        if found >= 0:
            return Span(found, found + len(quoted))
    return None


def _validate(data: dict, schema: dict, path: tuple[str, ...], prefix, places, config: Config) -> None:
    for key, value in data.items():
        key_path = path + (key,)
        dotted = ".".join(key_path)
        kind = schema.get(key)
        if kind is None:
            close = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known keys here: {', '.join(schema)}"
            where = f" in [{'.'.join(prefix + path)}]" if prefix + path else ""
            config.problems.append(_with_rename(_problem("TD901", places, prefix, key_path,
                                                         f"unknown key '{key}'{where}{hint}"), config.text, key, close))
        elif isinstance(kind, dict):
            if isinstance(value, dict):
                _validate(value, kind, key_path, prefix, places, config)
            else:
                config.problems.append(_problem("TD902", places, prefix, key_path,
                                                f"'{dotted}' must be a table ([{'.'.join(prefix + key_path)}])", value=True))
        else:
            accepted, message = _check_value(kind, value, dotted, places, prefix, key_path, config)
            if message:
                config.problems.append(_bad_value(message, places, prefix, key_path, config.text))
            if accepted is not None:
                config.values[key_path] = accepted


class _BadItem(str):
    """A problem message about one item of a list value (the diagnostic points at the item)."""

    def __new__(cls, item: str, message: str):
        made = super().__new__(cls, message)
        made.item = item
        return made


def _bad_value(message: str, places, prefix, key_path, text: str) -> Diagnostic:
    return _problem("TD902", places, prefix, key_path, message, value=True, item=getattr(message, "item", None), text=text)


def _check_value(kind: str, value: Any, dotted: str, places, prefix, key_path, config) -> tuple[Any, str | None]:
    """(the accepted value or None, the problem or None)."""
    if kind in ("globs", "paths"):
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list) and all(isinstance(item, str) and item for item in items):
            return tuple(items), None
        return None, f"'{dotted}' must be a list of non-empty strings, e.g. {dotted.split('.')[-1]} = [\"templates\"]"
    if kind in ("string", "path"):
        if isinstance(value, str) and value:
            return value, None
        return None, f"'{dotted}' must be a non-empty string"
    if kind in ("positive", "non_negative"):
        number_ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
        if number_ok and (value > 0 if kind == "positive" else value >= 0) and value != float("inf"):
            return float(value), None
        bound = "greater than 0" if kind == "positive" else "0 or more"
        return None, f"'{dotted}' must be a number {bound}, got {_shown(value)}"
    if kind == "count":
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100:
            return value, None
        return None, f"'{dotted}' must be a whole number from 0 to 100, got {_shown(value)}"
    if kind == "whole":
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, None
        return None, f"'{dotted}' must be a whole number greater than 0, got {_shown(value)}"
    if kind == "bool":
        if isinstance(value, bool):
            return value, None
        return None, f"'{dotted}' must be true or false, got {_shown(value)}"
    if kind == "models":
        return _models(value, places, prefix, key_path, config)
    if kind == "selectors":
        return _selectors(value, dotted)
    if kind == "project_path":
        inside = isinstance(value, str) and value and not os.path.isabs(os.path.expanduser(value)) \
            and not os.path.normpath(value).split(os.sep)[0] == ".."
        if inside:
            return value, None
        return None, f"'{dotted}' must be a path inside the project, relative to its root, e.g. \".taskdsl/memory.json\""
    if kind == "matcher":
        if value in MATCHERS:
            return value, None
        return None, f"'{dotted}' must be \"local\" (offline, the default) or \"model\" (the associative_matching template), got {_shown(value)}"
    if kind == "globals":
        return _globals(value, places, prefix, key_path, config)
    if kind == "per_file_ignores":
        return _per_file_ignores(value, places, prefix, key_path, config)
    raise AssertionError(kind)


def _shown(value: Any) -> str:
    return repr(value) if not isinstance(value, (dict, list)) else type(value).__name__


@functools.cache
def known_codes() -> list[str]:
    """Every diagnostic code, from the rule pages shipped with the package: one page per code of
    the rule registry, generated from it (tests/test_rule_pages.py keeps the two equal). The
    project layer sits below the rules, so it reads their pages rather than the registry."""
    from taskdsl.support.resources import installed

    return sorted(page.stem for page in installed("docs/rules", "docs/rules").glob("TD*.md"))


def _selectors(value: Any, dotted: str) -> tuple[Any, str | None]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None, f"'{dotted}' must be a list of rule codes or prefixes, e.g. [\"TD3\", \"TD402\"] or [\"ALL\"]"
    codes = known_codes()
    unknown = [item for item in value if not selector_known(item, codes)]
    if unknown:
        close = difflib.get_close_matches(unknown[0].upper(), codes, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else "; `taskdsl rules` lists the codes"
        accepted = tuple(item for item in value if item not in unknown)
        return accepted, _BadItem(unknown[0], f"unknown rule selector '{unknown[0]}' in '{dotted}'{hint}")
    return tuple(value), None


def selector_known(selector: str, codes: list[str]) -> bool:
    return selector == "ALL" or (selector.startswith("TD") and any(code.startswith(selector) for code in codes))


def _globals(value: Any, places, prefix, key_path, config: Config) -> tuple[Any, str | None]:
    if not isinstance(value, dict):
        return None, "'globals' must be a table of name = default value, e.g. globals = { project = \"demo\" }"
    accepted: dict[str, str] = {}
    for name, default in value.items():
        if not _IDENTIFIER.match(name):
            config.problems.append(_problem("TD902", places, prefix, key_path + (name,),
                                            f"global '{name}' is not a name: use letters, digits and _ (not first a digit)"))
        elif isinstance(default, bool):
            accepted[name] = "true" if default else "false"
        elif isinstance(default, (str, int, float)):
            accepted[name] = str(default)
        else:
            config.problems.append(_problem("TD902", places, prefix, key_path + (name,),
                                            f"global '{name}' must have a string, number or boolean value", value=True))
    return accepted, None


def _models(value: Any, places, prefix, key_path, config: Config) -> tuple[Any, str | None]:
    """[models."NAME"] tables: fallbacks (model names, TD601 for one litellm does not know),
    max_concurrency, rpm, tpm."""
    from taskdsl.language import models

    if not isinstance(value, dict):
        return None, "'models' must hold tables, e.g. [models.\"gpt-4o\"] with fallbacks = [\"gpt-4o-mini\"]"
    accepted = []
    for name, table in value.items():
        where = key_path + (name,)
        if not isinstance(table, dict):
            config.problems.append(_problem("TD902", places, prefix, where,
                                            f"'models.\"{name}\"' must be a table of fallbacks, max_concurrency, rpm, tpm",
                                            value=True))
            continue
        policy: list[tuple[str, Any]] = []
        for key, item in table.items():
            kind = MODEL_KEYS.get(key)
            dotted = f'models."{name}".{key}'
            if kind is None:
                close = difflib.get_close_matches(key, list(MODEL_KEYS), n=1, cutoff=0.6)
                hint = f"; did you mean '{close[0]}'?" if close else f"; known keys here: {', '.join(MODEL_KEYS)}"
                config.problems.append(_with_rename(_problem("TD901", places, prefix, where + (key,),
                                                             f"unknown key '{key}' in [models.\"{name}\"]{hint}"),
                                                    config.text, key, close))
                continue
            if kind == "fallbacks":
                if not isinstance(item, list) or not all(isinstance(m, str) and m.strip() for m in item):
                    config.problems.append(_bad_value(f"'{dotted}' must be a list of model names, e.g. "
                                                      "[\"gpt-4o-mini\"]", places, prefix, where + (key,), config.text))
                    continue
                for fallback in item:
                    problem = models.builtin_model_problem(fallback)
                    if problem is None and not models.is_known_model(fallback):
                        near = models.suggest(fallback)
                        problem = (f"fallback model '{fallback}' is unknown to litellm's model map"
                                   + (f": did you mean '{near[0]}'?" if near else
                                      ": use a litellm model name, or a provider prefix such as 'openai/'"))
                    if problem is not None:
                        found = _problem("TD601", places, prefix, where + (key,), problem, value=True, item=fallback,
                                         text=config.text)
                        if models.builtin_model_problem(fallback) is None:
                            found = replace(found, severity=Severity.WARNING)
                        config.problems.append(found)
                policy.append((key, tuple(m.strip() for m in item)))
                continue
            number, message = _check_value(kind, item, dotted, places, prefix, where + (key,), config)
            if message:
                config.problems.append(_bad_value(message, places, prefix, where + (key,), config.text))
            elif number is not None:
                policy.append((key, number))
        accepted.append((name, tuple(policy)))
    return tuple(accepted), None


def _per_file_ignores(value: Any, places, prefix, key_path, config: Config) -> tuple[Any, str | None]:
    if not isinstance(value, dict):
        return None, "'lint.per-file-ignores' must be a table of glob = [codes], e.g. \"drafts/*\" = [\"TD302\"]"
    accepted = []
    for pattern, selectors in value.items():
        codes, message = _selectors(selectors, f"lint.per-file-ignores.\"{pattern}\"")
        if message:
            config.problems.append(_bad_value(message, places, prefix, key_path + (pattern,), config.text))
        if codes:
            accepted.append((pattern, codes))
    return tuple(accepted), None


# --------------------------------------------------------------------------- settings


def project_settings(config: Config, base: Settings | None = None) -> Settings:
    """The one translation of a configuration into the Settings the CLI and the server use.
    Relative paths are taken from the project root."""
    base = base or Settings()
    root = config.root

    def absolute(path: str) -> str:
        return os.path.normpath(os.path.join(root, os.path.expanduser(path)))

    changes: dict[str, Any] = {"project_root": str(root)}
    simple = {
        ("files",): ("files", None),
        ("exclude",): ("exclude", None),
        ("library_paths",): ("library_paths", lambda paths: tuple(absolute(p) for p in paths)),
        ("model",): ("model", None),
        ("lint", "select"): ("lint_select", None),
        ("lint", "ignore"): ("lint_ignore", None),
        ("lint", "per-file-ignores"): ("lint_per_file_ignores", None),
        ("run", "timeout"): ("run_timeout", None),
        ("run", "trace_dir"): ("trace_dir", absolute),
        ("run", "allow_read"): ("run_allow_read", lambda paths: tuple(absolute(p) for p in paths)),
        ("run", "max_cost"): ("run_max_cost", None),
        ("memory", "index"): ("memory_index", None),  # relative to the root (taskdsl.project.memory_index)
        ("memory", "matcher"): ("memory_matcher", None),
        ("run", "retries"): ("run_retries", None),
        ("run", "cache"): ("run_cache", None),
        ("models",): ("model_policies", None),
        ("run", "max_read_files"): ("run_max_read_files", int),
        ("run", "max_read_bytes"): ("run_max_read_bytes", int),
    }
    for key_path, (attribute, convert) in simple.items():
        if key_path in config.values:
            value = config.values[key_path]
            changes[attribute] = convert(value) if convert else value
    global_values = config.get("globals", default={})
    if global_values:
        changes["global_values"] = tuple(global_values.items())
        changes["globals"] = tuple(dict.fromkeys((*base.globals, *global_values)))
    return replace(base, **changes)


def widening_entries(config: Config) -> tuple[tuple[str, str], ...]:
    """(key, absolute folder) of each `[run] allow_read` and `library_paths` entry of a project's
    configuration that lies outside the project root: what a repository's own file would widen
    (the run's consent shows them and asks, evaluator.plan.project_widening)."""
    from taskdsl.support.reading import within

    found = []
    root = os.path.realpath(config.root)
    for key_path, shown in ((("run", "allow_read"), "[run] allow_read"), (("library_paths",), "library_paths")):
        for written in config.get(*key_path, default=()) or ():
            folder = os.path.normpath(os.path.join(config.root, os.path.expanduser(written)))
            if not within(os.path.realpath(folder), root):
                found.append((shown, folder))
    return tuple(dict.fromkeys(found))


def settings_for(start: str | os.PathLike) -> tuple[Settings, Config]:
    """Settings of the project holding start (a file or folder), and the config they came from."""
    from taskdsl.project.workspace import env_library_paths

    config = load_config(project_root(start))
    settings = project_settings(config)
    extra = env_library_paths()  # TASKDSL_LIBRARY_PATH adds to the project's library paths
    if extra:
        settings = replace(settings, library_paths=tuple(dict.fromkeys((*settings.library_paths, *extra))))
    return settings, config


def run_defaults(start: str | os.PathLike, pairs: list[str]) -> tuple[dict[str, str], Settings, Config]:
    """What `taskdsl run` takes from the project: the globals it binds (the project's `globals` with
    NAME=VALUE pairs, `--global`, over them), its settings and the configuration they came from."""
    settings, config = settings_for(start)
    values = dict(settings.global_values)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not _IDENTIFIER.match(name.strip()):
            raise ValueError(f"--global {pair!r}: expected NAME=VALUE with NAME a name (letters, digits, _)")
        name = name.strip()
        declared = tuple(settings.globals)
        if name not in declared:  # a global is declared where the checker sees it (§17)
            known = f"the declared ones are {', '.join(declared)}" if declared else "the project declares none"
            raise ValueError(f"--global {name}: not a declared global ({known}); declare it in the [globals] "
                             f"table of taskdsl.toml ({name} = \"default\"), or pass a task input with --input")
        values[name] = value
    return values, settings, config
