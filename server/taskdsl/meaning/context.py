"""Context management: the one table of operator defaults (SPEC §4) and effective settings.

A task's *effective* settings are the operator's defaults overridden by what its
``<context_management>`` says. They are computed once per document (the rule context caches
:func:`effective_settings_map`) and shown to the user by hover and inlay hints (:func:`describe`).

Values are read leniently so the rules can explain legacy forms while the effective value already
carries their meaning: ``inherit_context`` ``true``/``false`` mean ``full``/``none``;
``accumulation_format`` ``full``/``minimal`` mean ``full_output``/``notes_only``. A setting written
directly under the task (the historical placement, corpus 078) is read too. A value that is not
understood at all (a typo the schema reports as TD105) is ignored: the default applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from taskdsl.language.document import Document, Element, Span
from taskdsl.meaning.facts import subtype, task_kind
from taskdsl.language.vocabulary import TASK_TAGS, collapse, task_types

FIELDS = ("inherit_context", "accumulate_data", "accumulation_format", "fresh_context")

INHERIT_VALUES = ("full", "none", "subset")
FORMAT_VALUES = ("full_output", "notes_only")
FRESH_VALUES = ("enabled", "disabled")

#: legacy value → version 1 value, per field (SPEC §3 "Legacy forms")
LEGACY_VALUES: dict[str, dict[str, str]] = {
    "inherit_context": {"true": "full", "false": "none"},
    "accumulation_format": {"full": "full_output", "minimal": "notes_only"},
}


@dataclass(frozen=True)
class Defaults:
    inherit_context: str
    accumulate_data: bool | None  # None: n/a (the operator does not accumulate)
    accumulation_format: str | None
    fresh_context: str


#: SPEC §4, the one table. Keys: operator, or operator.subtype / reduce.<part>.
OPERATOR_DEFAULTS: dict[str, Defaults] = {
    "atomic": Defaults("full", None, None, "disabled"),
    "atomic.subtask": Defaults("none", None, None, "enabled"),
    "sequential": Defaults("full", True, "notes_only", "disabled"),
    "reduce": Defaults("none", None, None, "enabled"),
    "reduce.inner_task": Defaults("full", None, None, "disabled"),
    "reduce.reduction_task": Defaults("full", None, None, "disabled"),
    "script": Defaults("full", None, None, "disabled"),
}

TASK_TYPES = task_types()


@dataclass(frozen=True, eq=False, slots=True, init=False)
class ContextSettings:
    """Effective settings of one task, with where each explicit value was written."""

    operator: str  # key into OPERATOR_DEFAULTS
    inherit_context: str
    accumulate_data: bool | None
    accumulation_format: str | None
    fresh_context: str
    explicit: frozenset[str]  # fields the template sets (leniently read)
    elements: dict[str, Element]  # field → the element that sets it
    legacy: frozenset[str]  # fields whose value was a legacy form, mapped

    def __init__(self, operator: str, inherit_context: str, accumulate_data: bool | None,
                 accumulation_format: str | None, fresh_context: str, explicit: frozenset[str] = frozenset(),
                 elements: dict[str, Element] | None = None, legacy: frozenset[str] = frozenset()) -> None:
        # the slot setters directly, as document.Span does: one per task that sets anything, every check
        _set_operator(self, operator)
        _set_inherit(self, inherit_context)
        _set_accumulate(self, accumulate_data)
        _set_format(self, accumulation_format)
        _set_fresh(self, fresh_context)
        _set_explicit(self, explicit)
        _set_elements(self, {} if elements is None else elements)
        _set_legacy(self, legacy)

    def is_default(self, name: str) -> bool:
        return name not in self.explicit

    @property
    def accumulates(self) -> bool:
        return bool(self.accumulate_data)

    def value(self, name: str):
        return getattr(self, name)


_set_operator, _set_inherit, _set_accumulate, _set_format, _set_fresh, _set_explicit, _set_elements, _set_legacy = (
    getattr(ContextSettings, name).__set__ for name in ("operator", *FIELDS, "explicit", "elements", "legacy"))


def operator_key(element: Element) -> str:
    """Which row of OPERATOR_DEFAULTS applies to a task, inner_task or reduction_task."""
    return _operator_key(element, task_kind(element))


def _operator_key(element: Element, kind: str) -> str:
    if element.tag in ("inner_task", "reduction_task"):
        return f"reduce.{element.tag}"
    if kind == "atomic" and subtype(element) == "subtask":
        return "atomic.subtask"
    return kind


def defaults_for(element: Element) -> Defaults:
    kind = task_kind(element)
    return _defaults(_operator_key(element, kind), kind)


def _defaults(key: str, kind: str) -> Defaults:
    if key.startswith("reduce.") and kind == "sequential":
        return _SEQUENTIAL_PARTS[key]
    return OPERATOR_DEFAULTS[key]


def _sequential_part(key: str) -> Defaults:
    # a sequential inner/reduction task accumulates as a sequential does
    base, seq = OPERATOR_DEFAULTS[key], OPERATOR_DEFAULTS["sequential"]
    return Defaults(base.inherit_context, seq.accumulate_data, seq.accumulation_format, base.fresh_context)


_SEQUENTIAL_PARTS = {key: _sequential_part(key) for key in ("reduce.inner_task", "reduce.reduction_task")}


def read_value(name: str, text: str):
    """(value, legacy?) of a setting's text, or (None, False) when it is not understood."""
    text = collapse(text)  # XSD token values: whitespace collapsed
    if name == "inherit_context":
        if text in INHERIT_VALUES:
            return text, False
        if text in LEGACY_VALUES[name]:
            return LEGACY_VALUES[name][text], True
    elif name == "accumulate_data":
        if text in ("true", "false"):
            return text == "true", False
    elif name == "accumulation_format":
        if text in FORMAT_VALUES:
            return text, False
        if text in LEGACY_VALUES[name]:
            return LEGACY_VALUES[name][text], True
    elif name == "fresh_context":
        if text in FRESH_VALUES:
            return text, False
    return None, False


def setting_elements(element: Element) -> dict[str, Element]:
    """field → the element that sets it: inside <context_management>, else directly under the task."""
    found: dict[str, Element] = {}
    block = element.child("context_management")
    if block is not None:
        for child in block.children:
            if child.tag in FIELDS and child.tag not in found:
                found[child.tag] = child
    for child in element.children:  # legacy placement, read when the block does not say it
        if child.tag in FIELDS and child.tag not in found:
            found[child.tag] = child
    return found


def value_span(element: Element) -> Span:
    """The trimmed text of a setting element (its start-tag name when it has no text)."""
    for piece in element.text_pieces:
        stripped = piece.raw.strip()
        if stripped:
            start = piece.span.start + (len(piece.raw) - len(piece.raw.lstrip()))
            return Span(start, start + len(stripped))
    return element.name_span


def effective_settings(element: Element) -> ContextSettings:
    kind = task_kind(element)
    key = _operator_key(element, kind)
    base = _defaults(key, kind)
    settings = setting_elements(element)
    if not settings:  # the operator's defaults: one shared (frozen) instance per row
        found = _PLAIN.get((key, kind))
        if found is None:
            found = _PLAIN[key, kind] = ContextSettings(key, base.inherit_context, base.accumulate_data,
                                                        base.accumulation_format, base.fresh_context)
        return found
    values = [base.inherit_context, base.accumulate_data, base.accumulation_format, base.fresh_context]  # FIELDS
    elements, legacy = {}, []
    for name, setting in settings.items():
        value, was_legacy = read_value(name, setting.text)
        if value is None:
            continue
        values[FIELDS.index(name)] = value
        elements[name] = setting
        if was_legacy:
            legacy.append(name)
    return ContextSettings(key, *values, frozenset(elements), elements, frozenset(legacy))


_PLAIN: dict[tuple[str, str], ContextSettings] = {}  # (operator key, kind) → a task's settings when it sets none


def effective_settings_map(document: Document, tasks: Iterable[Element] | None = None,
                           read=effective_settings) -> dict[Element, ContextSettings]:
    """Effective settings of every task, inner_task and reduction_task (ref tasks included).
    `tasks`: those elements of the document, in document order, when the caller has them listed;
    `read`: how one task's settings are read (the file model passes its memo)."""
    if tasks is None:
        tasks = [element for element in document.iter() if element.tag in TASK_TAGS]
    return {element: read(element) for element in tasks}


def describe(settings: ContextSettings) -> str:
    """One line for hover and inlay hints, e.g. ``inherit: full · fresh: disabled (defaults)``."""
    parts = []
    shown = ["inherit_context"]
    if settings.accumulate_data is not None:
        shown.append("accumulate_data")
        if settings.accumulate_data and settings.accumulation_format is not None:
            shown.append("accumulation_format")
    elif "accumulate_data" in settings.explicit:
        shown.append("accumulate_data")
    shown.append("fresh_context")
    labels = {"inherit_context": "inherit", "accumulate_data": "accumulate",
              "accumulation_format": "format", "fresh_context": "fresh"}
    all_default = not any(name in settings.explicit for name in shown)
    for name in shown:
        value = settings.value(name)
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        part = f"{labels[name]}: {text}"
        if not all_default and name not in settings.explicit:
            part += " (default)"
        parts.append(part)
    line = " · ".join(parts)
    return line + " (defaults)" if all_default else line
