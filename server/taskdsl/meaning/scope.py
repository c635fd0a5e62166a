"""Variables visible at a point of a template: the one answer the checker (TD402/TD403), the
compiler (a bare `<arg>` name, refusing what cannot resolve), completion and rename share.

The model mirrors the evaluator's environments, walking from the element that holds the text (or
the ``from`` attribute) up to the root:

- the inputs of every enclosing task, inner_task and reduction_task, by name. An input is
  evaluated in its task's *caller*: what lies inside ``<inputs>`` of a task T (an input's text,
  its ``from``, a nested task or call) does not see T's own inputs, only what T's parent sees;
- inside ``<inner_task>`` (its ``<inputs>`` included): ``current_data`` and the names of its
  empty (placeholder) inputs, which the reduce operator binds; inside ``<reduction_task>``:
  ``current_result``, ``accumulator``, ``original_input``;
- a task's effective ``inherit_context`` cuts the chain as the run does: ``none`` — above the
  task only the globals are visible; ``subset`` — the globals and the parent's variables that
  the task's inputs name with ``from``;
- the params of the enclosing ``<template>`` (also the legacy ``<task parameters=>`` of a root or
  a ``<library>`` task, which TD210 reports once, with its fix); the walk
  stops at a template: its body sees only its params and globals, whatever its
  ``inherit_context`` (the params are the template's own environment, not a caller's);
- ``last_output`` in a sequential's second and later steps (and below them, while inheritance
  keeps the chain), and at the top of a root ``<cond>`` document (where the run asks for it);
- the names of the ``taskdsl.globals`` setting, everywhere.

A point is *closed* when nothing outside the file can add a name there (a template, or a task
that does not inherit in full): a name not visible at a closed point is an error, elsewhere the
caller's environment (or ``--input``) may still supply it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskdsl.meaning.context import effective_settings
from taskdsl.language.document import Attr, Element, Span
from taskdsl.language.names import PARAM_RE
from taskdsl.meaning.facts import INNER_BOUND, LAST_OUTPUT, REDUCTION_BOUND, input_has_value, is_later_step, is_ref, task_type
from taskdsl.language.vocabulary import TASK_TAGS

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True, init=False)
class Binding:
    """Where a visible name comes from."""

    kind: str  # input | param | reduce | builtin | global
    name: str
    element: Element | None  # the <input>, <template>/<task> (params), inner_task/reduction_task
    attr: Attr | None  # the name=/params= attribute
    span: Span | None  # the declaration itself (the name inside the attribute value)

    def __init__(self, kind: str, name: str, element: Element | None = None, attr: Attr | None = None,
                 span: Span | None = None) -> None:
        # the slot setters directly, as document.Span does: one Binding per declaration a check meets
        _set_kind(self, kind)
        _set_name(self, name)
        _set_element(self, element)
        _set_attr(self, attr)
        _set_span(self, span)


_set_kind, _set_name, _set_element, _set_attr, _set_span = (
    getattr(Binding, field).__set__ for field in ("kind", "name", "element", "attr", "span"))


from taskdsl.meaning.facts import inputs as input_elements  # noqa: E402  (the names other modules import)


def is_placeholder_input(element: Element) -> bool:
    """An empty <input> (comments only) of an inner/reduction task: bound by the reduce operator."""
    return not input_has_value(element)



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
    for match in PARAM_RE.finditer(attr.value):
        span = Span(base + match.start(), base + match.end()) if base is not None else value_span
        names.append((match.group(0), span))
    return names


def visible_names(element: Element, settings=None) -> dict[str, Binding]:
    """Every name visible to text or a ``from`` attribute of ``element``, innermost first."""
    return Scopes(settings).visible(element)


SCOPE_TAGS = frozenset((*TASK_TAGS, "template"))
BODY, INPUTS, LATER_STEP = 0, 1, 2  # how a walk reaches a scope element: from its body, its <inputs>, a 2nd+ step


class Scopes:
    """visible_names() of many elements of one document. What a task (seen from its body, its
    <inputs> or a later step) or a template makes visible is gathered once and shared by
    everything under it: one Frame per (scope element, direction). What the methods return is
    shared: callers must not modify it."""

    __slots__ = ("settings", "_frames", "_top", "_globals", "_effective", "_sequential")

    def __init__(self, settings=None):
        self.settings = settings
        self._effective: dict[Element, object] = {}  # task → its effective context settings
        self._frames: tuple[dict[Element, _Frame], ...] = ({}, {}, {})
        self._top: dict[bool, _Frame] = {}
        self._globals: _Frame | None = None
        self._sequential: dict[Element, bool] = {}  # scope element → a sequential task? (every step asks)

    def visible(self, element: Element) -> dict[str, Binding]:
        """visible_names(element, settings)."""
        return self._frame(element).bindings

    def names(self, element: Element) -> frozenset[str]:
        """The names of visible(element)."""
        return self._frame(element).names

    def sees(self, element: Element, name: str) -> bool:
        """name in names(element), without building the name set (the checks ask for every use)."""
        return name in self._frame(element).bindings

    def closed(self, element: Element) -> bool:
        """True when nothing outside the file can add a visible name at element."""
        return self._frame(element).closed

    def settings_of(self, task: Element):
        """The effective context settings of a task-like element, read once (the scopes and the
        rules both ask for every task)."""
        found = self._effective.get(task)
        if found is None:
            found = self._effective[task] = effective_settings(task)
        return found

    def everywhere(self) -> dict[str, Binding]:
        """What is visible everywhere (the globals): part of every visible()."""
        return self._global_frame().bindings

    def everywhere_names(self) -> frozenset[str]:
        return self._global_frame().names

    def _global_frame(self) -> _Frame:
        if self._globals is None:
            found: dict[str, Binding] = {}
            for name in getattr(self.settings, "globals", ()) or ():
                _declare(found, Binding("global", name))
            self._globals = _Frame(found, True)
        return self._globals

    def _top_frame(self, root: Element) -> _Frame:
        """Above the root: the globals, and last_output in a root <cond> document; open."""
        is_cond = root.tag == "cond"
        frame = self._top.get(is_cond)
        if frame is None:
            bindings = dict(self._global_frame().bindings)
            if is_cond:
                _declare(bindings, Binding("builtin", LAST_OUTPUT, root))
            frame = self._top[is_cond] = _Frame(bindings, False)
        return frame

    def _frame(self, element: Element) -> _Frame:
        """From element up to the first scope already built (or the top): build the ones passed."""
        pending: list[tuple[Element, int]] = []  # innermost first
        known = None
        grandchild: Element | None = None
        child: Element | None = None
        current: Element | None = element
        root = element
        while current is not None:
            root = current
            if current.tag in SCOPE_TAGS:
                if child is not None and child.tag == "inputs":
                    direction = INPUTS
                elif child is not None and child.tag == "steps" and grandchild is not None \
                        and is_later_step(grandchild) and self._is_sequential(current):
                    direction = LATER_STEP
                else:
                    direction = BODY
                known = self._frames[direction].get(current)
                if known is not None:
                    break
                pending.append((current, direction))
                if current.tag == "template":
                    break  # a template's body sees only its params (and what everything sees)
            grandchild, child, current = child, current, current.parent
        if known is None:
            known = self._global_frame() if pending and pending[-1][0].tag == "template" else self._top_frame(root)
        for scope, direction in reversed(pending):
            known = self._frames[direction][scope] = self._build(scope, direction, known)
        return known

    def _is_sequential(self, task: Element) -> bool:
        found = self._sequential.get(task)
        if found is None:
            found = self._sequential[task] = task_type(task) == "sequential"
        return found

    def _build(self, current: Element, direction: int, outer: _Frame) -> _Frame:
        """What current declares (innermost first), over what its environment's outer holds."""
        found: dict[str, Binding] = {}
        closed = outer.closed
        if current.tag == "template":
            params = current.attr("params")
            for name, span in param_list(current):
                _declare(found, Binding("param", name, current, params, span))
            closed = True
        elif direction == INPUTS:
            if current.tag in ("inner_task", "reduction_task"):  # the operator binds them before the inputs run
                self._declare_reduce(found, current)
        else:
            if direction == LATER_STEP:
                _declare(found, Binding("builtin", LAST_OUTPUT, current))
            for item in input_elements(current):
                attr = item.attr("name")
                if attr is not None and attr.value:
                    _declare(found, Binding("input", attr.value, item, attr, attr.value_span))
            if current.tag != "task":
                self._declare_reduce(found, current)
            parameters = current.attr("parameters") if current.tag == "task" else None
            if parameters is not None and (current.parent is None or current.parent.tag == "library"):
                for name, span in param_list(current, "parameters"):
                    _declare(found, Binding("param", name, current, parameters, span))
            if not is_ref(current):
                inherit = self.settings_of(current).inherit_context
                if inherit != "full":
                    closed = True
                    kept = self._global_frame().bindings
                    if inherit == "subset":
                        wanted = {_root_name(item.get("from")) for item in input_elements(current)}
                        kept = {**kept, **{n: b for n, b in outer.bindings.items() if n in wanted}}
                    if current.parent is not None and current.parent.tag == "template":
                        # a template's body: its params are the template's own environment, not a
                        # caller's (the run binds them as the body's arguments whatever it inherits)
                        kept = {**kept, **{n: b for n, b in outer.bindings.items()
                                           if b.kind == "param" and b.element is current.parent}}
                    outer = _Frame(kept, True)
        if not found and closed == outer.closed:
            return outer  # declares nothing: the same names as its parent's
        for name, binding in outer.bindings.items():
            found.setdefault(name, binding)
        return _Frame(found, closed)

    @staticmethod
    def _declare_reduce(found: dict[str, Binding], current: Element) -> None:
        if current.tag == "inner_task":
            for name in INNER_BOUND:
                _declare(found, Binding("reduce", name, current))
            for item in input_elements(current):
                name = item.get("name")
                if name and not input_has_value(item):
                    _declare(found, Binding("reduce", name, item))
        elif current.tag == "reduction_task":
            for name in REDUCTION_BOUND:
                _declare(found, Binding("reduce", name, current))


class _Frame:
    """The names visible at a scope (innermost binding first) and whether the file decides them all."""

    __slots__ = ("bindings", "closed", "_names")

    def __init__(self, bindings: dict[str, Binding], closed: bool):
        self.bindings, self.closed, self._names = bindings, closed, None

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            self._names = frozenset(self.bindings)
        return self._names


def _root_name(value: str | None) -> str | None:
    match = IDENT_RE.match((value or "").strip())
    return match.group(0) if match else None


def _declare(found: dict[str, Binding], binding: Binding) -> None:
    found.setdefault(binding.name, binding)  # the innermost declaration wins


def enclosing_template(element: Element) -> Element | None:
    for ancestor in (element, *element.ancestors()):
        if ancestor.tag == "template":
            return ancestor
    return None


def exported_names(script: Element, visible: dict[str, Binding]) -> dict[str, Binding]:
    """The names a script task finds in its environment as TASKDSL_INPUT_<NAME> (the evaluator exports
    the task's own inputs and what its caller binds: the params of the template whose task it is, the
    reduce's names for an inner_task or reduction_task that is the script), by upper-cased name. A name
    it only inherits is not exported: it reaches the command through {{name}} alone. `visible`: the
    script's visible_names."""
    found: dict[str, Binding] = {}
    for name, binding in visible.items():
        element = binding.element
        own_input = binding.kind == "input" and element is not None and element.parent is not None \
            and element.parent.parent is script
        bound_here = binding.kind == "reduce" and element is script
        param = binding.kind == "param" and element is not None and (element is script or script.parent is element)
        if own_input or bound_here or param:
            found.setdefault(name.upper(), binding)
    return found
