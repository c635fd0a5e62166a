"""The features' view of the workspace library (``taskdsl.library``).

One small adapter, so the feature modules read definitions the same way whatever shape the
library's records take: ``Entry`` (name, kind, path, span, description, params, type,
subtype). Every query tolerates a missing library (a lone document) and answers empty.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from lsprotocol import types

from taskdsl.language.document import Span

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # task | template
    path: str | None
    span: Span | None  # the whole definition element
    name_span: Span | None  # the name (attribute value), where it is written
    description: str | None = None
    params: tuple[str, ...] = ()
    type: str | None = None
    subtype: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)


def _get(obj: Any, *names: str, default=None):
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _span(value: Any) -> Span | None:
    if value is None:
        return None
    if isinstance(value, Span):
        return value
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return Span(*value)
    return None


def to_entry(raw: Any) -> Entry | None:
    if raw is None:
        return None
    name = _get(raw, "name", "key")
    if not name:
        return None
    params = _get(raw, "params", "parameters", default=()) or ()
    if isinstance(params, str):
        params = tuple(p.strip() for p in params.split(",") if p.strip())
    params = tuple(p if isinstance(p, str) else _get(p, "name", default=str(p)) for p in params)
    path = _get(raw, "path", "file")
    return Entry(
        name=str(name),
        kind="template" if _get(raw, "kind") == "template" else "task",
        path=str(path) if path else None,
        span=_span(_get(raw, "span")),
        name_span=_span(_get(raw, "name_span", "selection_span")),
        description=_get(raw, "description"),
        params=params,
        type=_get(raw, "type", "task_type"),
        subtype=_get(raw, "subtype"),
        raw=raw,
    )


@dataclass(frozen=True)
class ParamInfo:
    name: str
    required: bool  # no default: a call or ref must bind it
    default: str | None = None  # the literal value a named task's input gives it


def param_info(entry: Entry) -> list[ParamInfo]:
    """An entry's params with what the library knows of their defaults (a template's params
    have none; a named task's inputs with text, ``from`` or a nested task have one)."""
    raw = _get(entry.raw, "params", default=()) or ()
    found = []
    for index, name in enumerate(entry.params):
        param = raw[index] if index < len(raw) and not isinstance(raw[index], str) else None
        has_default = bool(_get(param, "has_default", default=False)) if param is not None else False
        found.append(ParamInfo(name, not has_default, _get(param, "default") if param is not None else None))
    return found


def entries(library) -> list[Entry]:
    if library is None:
        return []
    raw_entries: Iterable[Any]
    if hasattr(library, "all_definitions"):
        raw_entries = library.all_definitions()
    elif hasattr(library, "definitions"):
        raw_entries = library.definitions() if callable(library.definitions) else library.definitions
    elif hasattr(library, "entries"):
        raw_entries = library.entries() if callable(library.entries) else library.entries
    else:
        raw_entries = library.names_matching("")
    found = [to_entry(raw) for raw in raw_entries]
    return [entry for entry in found if entry is not None]


def definition(library, name: str) -> Entry | None:
    if library is None or not name:
        return None
    raw = library.definition(name)
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    return to_entry(raw)


def matching(library, prefix: str) -> list[Entry]:
    if library is None:
        return []
    found = [to_entry(raw) for raw in library.names_matching(prefix)]
    return [entry for entry in found if entry is not None]


def location(entry: Entry, positions_for: Callable[[str], Any]) -> types.Location | None:
    from taskdsl.features.util import path_to_uri

    if not entry.path:
        return None
    positions = positions_for(entry.path)
    if positions is None:
        return None
    return types.Location(path_to_uri(entry.path), positions.range(name_span(entry, positions)))


def name_span(entry: Entry, positions) -> Span:
    """Where the name is written; for a root task named after its file, its tag name."""
    if entry.name_span is not None:
        return entry.name_span
    range_ = _get(entry.raw, "range")
    if range_ is not None:
        (l1, c1), (l2, c2) = range_
        return Span(positions.doc.offset(l1, c1), positions.doc.offset(l2, c2))
    return entry.span or Span(0, 0)


def describe_location(entry: Entry, positions_for: Callable[[str], Any]) -> str:
    if not entry.path:
        return ""
    positions = positions_for(entry.path)
    if positions is None or entry.span is None:
        return Path(entry.path).name
    line = positions.doc.position(name_span(entry, positions).start)[0] + 1
    return f"{Path(entry.path).name}:{line}"
