"""Variables visible at a point of a template (SPEC §5, last paragraph).

Shared by TD402/TD403 and, later, by completion and rename. The model is lexical, walking from
the element that holds the text (or the ``from`` attribute) up to the root:

- the inputs of every enclosing task, inner_task and reduction_task, by name. An input is
  evaluated in its task's *caller*: what lies inside ``<inputs>`` of a task T (an input's text,
  its ``from``, a nested task or call) does not see T's own inputs, only what T's parent sees;
- inside ``<inner_task>``: ``current_data`` and the names of its empty (placeholder) inputs, which
  the reduce operator binds; inside ``<reduction_task>``: ``current_result``, ``accumulator``,
  ``original_input``;
- the params of the enclosing ``<template>`` (also the legacy ``<task parameters=>``); the walk
  stops at a template: its body sees only its params and globals;
- ``last_output`` (a built-in of the evaluator's global environment: visible everywhere);
- the names of the ``taskdsl.globals`` setting.

Sequential steps see nothing of each other by name: a step's output reaches the next one as
``last_output`` (and through accumulation), never as a variable. The checker does not model
``inherit_context=none`` cutting the chain at run time: a parent's input a child cannot reach is
not reported (a possible TD402 false negative, never a false positive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskdsl.document import Attr, Element, Span

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TASK_TAGS = ("task", "inner_task", "reduction_task")
BUILTINS = ("last_output",)  # the evaluator's global environment
INNER_BOUND = ("current_data",)
REDUCTION_BOUND = ("current_result", "accumulator", "original_input")


@dataclass(frozen=True, slots=True)
class Binding:
    """Where a visible name comes from."""

    kind: str  # input | param | reduce | builtin | global
    name: str
    element: Element | None = None  # the <input>, <template>/<task> (params), inner_task/reduction_task
    attr: Attr | None = None  # the name=/params= attribute
    span: Span | None = None  # the declaration itself (the name inside the attribute value)


def input_elements(task: Element) -> list[Element]:
    """The <input> children of a task's <inputs>."""
    inputs = task.child("inputs")
    return inputs.children_named("input") if inputs is not None else []


def is_placeholder_input(element: Element) -> bool:
    """An empty <input> (comments only) of an inner/reduction task: bound by the reduce operator."""
    return not element.children and not element.has_text and element.get("from") is None


_PARAM_RE = re.compile(r"[^,\s]+")


def param_list(element: Element, attr_name: str = "params") -> list[tuple[str, Span | None]]:
    """The names of a params= (or legacy parameters=) attribute with their spans."""
    attr = element.attr(attr_name)
    if attr is None:
        return []
    names = []
    # exact spans when the value has no entity references (decoded length == source length)
    value_span = attr.value_span
    exact = value_span is not None and len(value_span) == len(attr.value)
    base = value_span.start if exact else None
    for match in _PARAM_RE.finditer(attr.value):
        span = Span(base + match.start(), base + match.end()) if base is not None else value_span
        names.append((match.group(0), span))
    return names


def visible_names(element: Element, settings=None) -> dict[str, Binding]:
    """Every name visible to text or a ``from`` attribute of ``element``, innermost first."""
    return Scopes(settings).visible(element)


SCOPE_TAGS = frozenset((*TASK_TAGS, "template"))


class Scopes:
    """visible_names() of many elements of one document. What a task (seen from its body or from
    its <inputs>) or a template makes visible is gathered once and shared by everything under it.

    The walk of visible_names, from an element up to the root, declares names only at the task-like
    elements and the template it passes; the innermost declaration wins. So the names visible at a
    scope element S (reached from below through its <inputs> or not) are S's own declarations
    followed by what is visible at S's parent: one dict per (S, through inputs), built once.
    names() is the same walk for the names alone (what the checks ask), without the bindings.
    What both return is shared: callers must not modify it."""

    __slots__ = ("settings", "_bindings", "_names", "_top", "_top_names")

    def __init__(self, settings=None):
        self.settings = settings
        # per scope element, seen from its body [0] or from its <inputs> [1]
        self._bindings: tuple[dict[Element, dict[str, Binding]], ...] = ({}, {})
        self._names: tuple[dict[Element, frozenset[str]], ...] = ({}, {})
        self._top: dict[str, Binding] | None = None
        self._top_names: frozenset[str] | None = None

    def visible(self, element: Element) -> dict[str, Binding]:
        """visible_names(element, settings)."""
        return self._walk(element, self._bindings, self._scope, self.everywhere)

    def names(self, element: Element) -> frozenset[str]:
        """The names of visible(element)."""
        return self._walk(element, self._names, self._scope_names, self.everywhere_names)

    def everywhere(self) -> dict[str, Binding]:
        """What is visible everywhere (last_output and the globals): part of every visible()."""
        if self._top is None:
            found: dict[str, Binding] = {}
            for name in BUILTINS:
                _declare(found, Binding("builtin", name))
            for name in getattr(self.settings, "globals", ()) or ():
                _declare(found, Binding("global", name))
            self._top = found
        return self._top

    def everywhere_names(self) -> frozenset[str]:
        """The names of everywhere()."""
        if self._top_names is None:
            self._top_names = frozenset((*BUILTINS, *(getattr(self.settings, "globals", ()) or ())))
        return self._top_names

    @staticmethod
    def _walk(element: Element, memo: tuple[dict, dict], build, top):
        """From element up to the first scope already built (or the top): build the ones passed."""
        pending: list[tuple[Element, bool]] = []  # innermost first
        known = None
        child: Element | None = None
        current: Element | None = element
        while current is not None:
            if current.tag in SCOPE_TAGS:
                through_inputs = child is not None and child.tag == "inputs"
                known = memo[through_inputs].get(current)
                if known is not None:
                    break
                pending.append((current, through_inputs))
                if current.tag == "template":
                    break  # a template's body sees only its params (and what everything sees)
            child, current = current, current.parent
        if known is None:
            known = top()
        for scope, through_inputs in reversed(pending):
            known = memo[through_inputs][scope] = build(scope, through_inputs, known)
        return known

    @staticmethod
    def _scope(current: Element, through_inputs: bool, outer: dict[str, Binding]) -> dict[str, Binding]:
        """What current declares (innermost first), then outer: the names visible at its parent."""
        found: dict[str, Binding] = {}
        if current.tag == "template":
            params = current.attr("params")
            for name, span in param_list(current):
                _declare(found, Binding("param", name, current, params, span))
        else:
            if not through_inputs:
                for item in input_elements(current):
                    name = item.get("name")
                    if name:
                        attr = item.attr("name")
                        _declare(found, Binding("input", name, item, attr, attr.value_span if attr else None))
                if current.tag == "inner_task":
                    for name in INNER_BOUND:
                        _declare(found, Binding("reduce", name, current))
                elif current.tag == "reduction_task":
                    for name in REDUCTION_BOUND:
                        _declare(found, Binding("reduce", name, current))
            parameters = current.attr("parameters") if current.tag == "task" else None
            if parameters is not None and current.parent is None:
                for name, span in param_list(current, "parameters"):
                    _declare(found, Binding("param", name, current, parameters, span))
        if not found:
            return outer  # declares nothing: the same names as its parent's
        for name, binding in outer.items():
            found.setdefault(name, binding)
        return found

    @staticmethod
    def _scope_names(current: Element, through_inputs: bool, outer: frozenset[str]) -> frozenset[str]:
        """The names _scope declares at current (no spans, no bindings), with outer."""
        if current.tag == "template":
            declared = _PARAM_RE.findall(current.get("params") or "")
        else:
            declared = []
            if not through_inputs:
                for item in input_elements(current):
                    name = item.get("name")
                    if name:
                        declared.append(name)
                if current.tag == "inner_task":
                    declared.extend(INNER_BOUND)
                elif current.tag == "reduction_task":
                    declared.extend(REDUCTION_BOUND)
            parameters = current.get("parameters") if current.tag == "task" else None
            if parameters is not None and current.parent is None:
                declared.extend(_PARAM_RE.findall(parameters))
        return outer.union(declared) if declared else outer


def _declare(found: dict[str, Binding], binding: Binding) -> None:
    found.setdefault(binding.name, binding)  # the innermost declaration wins


def enclosing_template(element: Element) -> Element | None:
    for ancestor in (element, *element.ancestors()):
        if ancestor.tag == "template":
            return ancestor
    return None
