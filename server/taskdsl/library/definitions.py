"""What one file defines and references: the index's data classes and their extraction.

`index_document` reads one parsed document into a `FileIndex`: each root `<task>` (by `name`,
else by file stem), each `<template>`, and each `<template>` / named `<task>` of a `<library>`
becomes a `Definition` (registered under its name and, with a `subtype`, its `type:subtype` key);
every `<task ref>` (also on `inner_task`/`reduction_task`), `<call template>` (and the legacy
`<call task>`) and inline `{{fn(…)}}` call becomes a `Reference`, with the span of the name as
written. Pure over the document: no files, no index, no checker.
"""

from __future__ import annotations

import dataclasses

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from taskdsl.language.document import Document, Element, Span
from taskdsl.meaning.facts import definition_output, inputs as input_elements, literal_default, subtype, task_kind, template_defaults
from taskdsl.language.names import file_stem, split_params
from taskdsl.language.templating import find_placeholders
from taskdsl.language.vocabulary import TASK_TAGS

Range = tuple[tuple[int, int], tuple[int, int]]  # 0-based (line, code-point column), end exclusive

IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
TASK_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
TASK_REF_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(:[A-Za-z_][A-Za-z0-9_.\-]*)?\Z")
TEMPLATE_SUFFIX = ".task.xml"


# --------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    default: str | None = None  # a literal input's text
    has_default: bool = False  # the input's literal text is a default (semantics.literal_default)


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    kind: str  # task | template | library-task
    type: str
    subtype: str | None
    params: tuple[Param, ...]
    description: str | None
    path: str | None
    span: Span  # the whole defining element
    name_span: Span | None  # the `name` value; None for a root task named after its file
    range: Range  # of name_span, or of the root's tag name when named after the file
    returns: str | None = None
    output: str | None = None  # what a call or ref of it produces: facts.definition_output
    effective: Any = field(default=None, compare=False)  # context.effective_settings, when available
    criteria: str | None = field(default=None, compare=False)  # what `taskdsl match` ranks, with description
    instructions: str | None = field(default=None, compare=False)

    @property
    def key(self) -> str | None:
        return f"{self.type}:{self.subtype}" if self.subtype else None

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def required_params(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if not p.has_default)

    @property
    def signature(self) -> tuple:
        """What a referring file's diagnostics depend on (not the location)."""
        return (self.name, self.kind, self.type, self.subtype, self.params, self.output)


@dataclass(frozen=True, slots=True)
class Reference:
    name: str  # as written: a name or a type:subtype key
    kind: str  # ref | call | inline | test (a test file's <test task>)
    path: str | None
    span: Span  # the name as written (attribute value, or the name inside the placeholder)
    range: Range
    owner: str | None  # the definition whose body holds the reference
    site: Span  # the referring element's tag name, or the whole placeholder
    positional: tuple[Span, ...] = ()  # positional args: <arg> tag names, or the placeholder per inline arg
    named: tuple[tuple[str, Span], ...] = ()  # <arg name=> / a ref's <input name=>: (name, value span)
    guarded: bool = False  # inside a <cond> of its owner's body: reached only when a case chooses it

    @property
    def is_key(self) -> bool:
        return ":" in self.name


@dataclass(slots=True)
class FileIndex:
    """What one document contributes: its definitions and its references."""

    path: str | None
    definitions: list[Definition]
    references: list[Reference]
    clean: bool  # the scanner found no well-formedness problem
    digest: int = 0  # hash of the text indexed
    edges: frozenset[tuple[str, str]] = frozenset()  # (owner, name as written) of the owned references

    def __post_init__(self) -> None:
        self.edges = frozenset((r.owner, r.name) for r in self.references if r.owner is not None)


# --------------------------------------------------------------------------- extraction


def index_document(doc: Document, path: str | None) -> FileIndex:
    """The definitions and references of one parsed document."""
    definitions: list[tuple[Element, Element | None, Definition]] = []
    for position, root in enumerate(doc.roots):
        definitions.extend(_root_definitions(doc, root, path, first=position == 0))
    owner_of = {id(element): definition.name for element, _, definition in definitions}
    references = _references(doc, path, owner_of)
    finished = [definition for _, _, definition in definitions]
    return FileIndex(path, finished, references, clean=not doc.problems, digest=hash(doc.text))


def _root_definitions(doc: Document, root: Element, path: str | None, first: bool):
    if root.tag == "task":
        if root.get("parameters") is not None and root.get("name"):  # legacy template form
            yield root, root, _template(doc, root, path, params_attr="parameters", task=root)
        else:
            definition = _task(doc, root, path, "task", stem=file_stem(path) if first else None)
            if definition:
                yield root, root, definition
    elif root.tag == "template":
        task = root.child("task")
        if root.get("name"):
            yield root, task, _template(doc, root, path, params_attr="params", task=task)
    elif root.tag == "library":
        for child in root.children:
            if child.tag == "template" and child.get("name"):
                task = child.child("task")
                yield child, task, _template(doc, child, path, params_attr="params", task=task)
            elif child.tag == "task" and child.get("name") and child.get("parameters") is not None:  # legacy form
                yield child, child, _template(doc, child, path, params_attr="parameters", task=child)
            elif child.tag == "task" and child.get("name"):
                yield child, child, _task(doc, child, path, "library-task", stem=None)


def _task(doc: Document, task: Element, path: str | None, kind: str, stem: str | None) -> Definition | None:
    name_attr = task.attr("name")
    if name_attr is not None and name_attr.value and name_attr.value_span is not None:
        name, name_span = name_attr.value, name_attr.value_span
    elif stem:
        name, name_span = stem, None
    else:
        return None
    return Definition(
        name=name,
        kind=kind,
        type=task_kind(task),
        subtype=subtype(task),
        params=_input_params(task),
        description=_description(task),
        path=path,
        span=task.span,
        name_span=name_span,
        range=_range(doc, name_span or task.name_span),
        output=definition_output(task),
        effective=_effective(task),
        criteria=_description(task, "criteria"),
        instructions=_description(task, "instructions"),
    )


def _template(doc: Document, template: Element, path: str | None, params_attr: str, task: Element | None) -> Definition:
    name_attr = template.attr("name")
    name_span = name_attr.value_span or name_attr.name_span
    return Definition(
        name=name_attr.value,
        kind="template",
        type=task_kind(task) if task is not None else "atomic",
        subtype=subtype(task) if task is not None else None,
        params=_template_params(template, params_attr),
        description=_description(task) if task is not None else None,
        path=path,
        span=template.span,
        name_span=name_span,
        range=_range(doc, name_span),
        returns=template.get("returns"),
        output=definition_output(task, template.get("returns")),
        effective=_effective(task),
        criteria=_description(task, "criteria") if task is not None else None,
        instructions=_description(task, "instructions") if task is not None else None,
    )


def _template_params(template: Element, params_attr: str) -> tuple[Param, ...]:
    defaults = template_defaults(template) if params_attr == "params" else {}
    return tuple(Param(p, defaults.get(p), p in defaults) for p in split_params(template.get(params_attr) or ""))


def _input_params(task: Element) -> tuple[Param, ...]:
    params = []
    for element in input_elements(task):
        name = element.get("name")
        if not name:
            continue
        literal = literal_default(element)  # only a literal is a default a ref may leave unbound
        params.append(Param(name, literal, literal is not None))
    return tuple(params)


def _description(task: Element, tag: str = "description") -> str | None:
    element = task.child(tag)
    if element is None:
        return None
    return " ".join(element.text.split()) or None


def _range(doc: Document, span: Span) -> Range:
    return doc.position(span.start), doc.position(span.end)


SETTING_TAGS = {"context_management", "inherit_context", "accumulate_data", "accumulation_format", "fresh_context"}
_DEFAULT_EFFECTIVE: dict[tuple, Any] = {}  # a task that sets nothing gets its operator's defaults


def _effective(task: Element | None) -> Any:
    """context.effective_settings of a definition's task, without references to the tree."""
    compute = _effective_settings_function()
    if compute is None or task is None:
        return None
    plain = not any(child.tag in SETTING_TAGS for child in task.children)
    key = (task.tag, task.get("type"), task.get("subtype"))
    if plain and key in _DEFAULT_EFFECTIVE:
        return _DEFAULT_EFFECTIVE[key]
    try:
        effective = compute(task)
    except Exception:  # a bad definition must not break the index
        return None
    if getattr(effective, "elements", None):
        effective = replace(effective, elements={})  # Elements would keep the whole tree alive
    if plain:
        _DEFAULT_EFFECTIVE[key] = effective
    return effective


_EFFECTIVE: list = []


def _effective_settings_function():
    """context.effective_settings, once context.py exists (it is written by another module)."""
    if not _EFFECTIVE:
        try:
            from taskdsl.meaning.context import effective_settings
        except ImportError:
            effective_settings = None
        _EFFECTIVE.append(effective_settings)
    return _EFFECTIVE[0]


def _references(doc: Document, path: str | None, owner_of: dict[int, str]) -> list[Reference]:
    found: list[Reference] = []
    text = doc.text
    inline = "{{" in text and "(" in text
    if not inline and "ref" not in text and "<call" not in text and "<test" not in text:
        return found
    stack: list[tuple[Element, str | None, bool]] = [(root, None, False) for root in reversed(doc.roots)]
    while stack:
        element, owner, guarded = stack.pop()
        if id(element) in owner_of:  # a definition starts: no <cond> of its own yet
            owner, guarded = owner_of[id(element)], False
        if element.tag in TASK_TAGS:
            reference = _ref_reference(doc, element, path, owner)
            if reference:
                found.append(_guarded(reference) if guarded else reference)
        elif element.tag == "call":
            reference = _call_reference(doc, element, path, owner)
            if reference:
                found.append(_guarded(reference) if guarded else reference)
        elif element.tag == "test":  # a test file's `<test task=…>`: resolved like a ref
            reference = _test_reference(doc, element, path)
            if reference:
                found.append(reference)
        if inline:
            for piece in element.text_pieces:
                if "{{" in piece.raw and "(" in piece.raw:
                    found.extend(_guarded(r) if guarded else r
                                 for r in _inline_references(doc, piece.raw, piece.span.start, path, owner))
        inside = guarded or element.tag == "cond"
        stack.extend((child, owner, inside) for child in reversed(element.children))
    return found


def _guarded(reference: Reference) -> Reference:
    return dataclasses.replace(reference, guarded=True)


def _name_value(element: Element, attribute: str) -> tuple[str, Span] | None:
    attr = element.attr(attribute)
    if attr is None or attr.value_span is None:
        return None
    value = attr.value.strip()
    if not TASK_REF_RE.match(value):  # empty or malformed: the schema reports it
        return None
    start = attr.value_span.start + attr.value.index(value)
    return value, Span(start, start + len(value))


def _ref_reference(doc: Document, task: Element, path: str | None, owner: str | None) -> Reference | None:
    found = _name_value(task, "ref")
    if found is None:
        return None
    name, span = found
    named = []
    for element in input_elements(task):
        attr = element.attr("name")
        if attr is not None and attr.value and attr.value_span is not None:
            named.append((attr.value, attr.value_span))
    return Reference(name, "ref", path, span, _range(doc, span), owner, task.name_span, named=tuple(named))


def _test_reference(doc: Document, test: Element, path: str | None) -> Reference | None:
    """`<test task="name">` with its `<input name>` children: kind "test", so TD503 reports
    unknown inputs but not unbound params (a test may leave one out to see the run fail)."""
    found = _name_value(test, "task")
    if found is None:
        return None
    name, span = found
    named = tuple((i.attr("name").value, i.attr("name").value_span) for i in test.children_named("input")
                  if i.attr("name") is not None and i.attr("name").value and i.attr("name").value_span is not None)
    return Reference(name, "test", path, span, _range(doc, span), None, test.name_span, named=named)


def _call_reference(doc: Document, call: Element, path: str | None, owner: str | None) -> Reference | None:
    found = _name_value(call, "template") or _name_value(call, "task")  # `task=` is the legacy form
    if found is None:
        return None
    name, span = found
    positional, named = [], []
    for arg in call.children_named("arg"):
        attr = arg.attr("name")
        if attr is None:
            positional.append(arg.name_span)
        elif attr.value_span is not None:
            named.append((attr.value, attr.value_span))
    return Reference(name, "call", path, span, _range(doc, span), owner, call.name_span,
                     positional=tuple(positional), named=tuple(named))


def _inline_references(doc: Document, raw: str, base: int, path: str | None, owner: str | None) -> Iterator[Reference]:
    for placeholder in find_placeholders(raw):
        if placeholder.kind != "call" or not placeholder.name:
            continue
        start = raw.index(placeholder.name, placeholder.start + 2) + base
        span = Span(start, start + len(placeholder.name))
        site = Span(base + placeholder.start, base + placeholder.end)
        yield Reference(placeholder.name, "inline", path, span, _range(doc, span), owner, site,
                        positional=tuple(site for _ in placeholder.args))
