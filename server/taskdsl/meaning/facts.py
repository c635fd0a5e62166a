"""Facts of one element, read the same way everywhere: a task's type after XSD whitespace
collapsing, its steps and inputs, whether an input has a value, a template's params.

These are the bottom layer of the semantic model (`semantics.py` builds the file model on them);
they import nothing above the document and the vocabulary, so every module can ask them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from taskdsl.language.document import Document, Element, Span
from taskdsl.language.names import split_params
from taskdsl.language.vocabulary import RUNNABLE_TAGS, TASK_TAGS, collapse, enum_value

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LAST_OUTPUT = "last_output"
#: names the reduce operator binds inside its inner_task and its reduction_task
INNER_BOUND = ("current_data",)
REDUCTION_BOUND = ("current_result", "accumulator", "original_input")
#: elements whose text may hold {{…}}
TEXT_TAGS = ("description", "instructions", "system", "command", "arg", "input")


# ------------------------------------------------------------------ tasks

def is_ref(element: Element) -> bool:
    """A `<task ref=…>` (also on inner_task/reduction_task): a call of a library task."""
    return element.tag in TASK_TAGS and element.attr("ref") is not None


def task_type(element: Element) -> str | None:
    """atomic/sequential/reduce/script after XSD whitespace collapsing; ``atomic`` when `type` is
    absent or blank; None for a value version 1 does not know (TD105/TD208 report it)."""
    value = element.get("type")
    if value is None or not value.strip():
        return "atomic"
    return enum_value(value, "taskKind")


def task_kind(element: Element) -> str:
    """task_type, read leniently (``atomic`` when not understood): what defaults and hover use."""
    return task_type(element) or "atomic"


def raw_type(element: Element) -> str:
    """The written type, collapsed (for messages)."""
    return collapse(element.get("type") or "")


UNSUPPORTED_HINTS = {
    "director_evaluator_loop": "write the loop as a sequential whose steps are the director task, a script "
                               "step (type=\"script\") that evaluates, and the evaluator task",
}


def unknown_type(element: Element) -> tuple[str, str] | None:
    """(code, message) for a `type` version 1 does not know: TD105 for a typo of a real type (the
    schema lists the values), TD208 for a type of older documents; None when the type is known."""
    if task_type(element) is not None:
        return None
    from difflib import get_close_matches

    from taskdsl.language.vocabulary import task_types

    written = raw_type(element)
    if get_close_matches(written, task_types(), n=1, cutoff=0.75):
        return "TD105", f"unknown task type '{written}': expected {', '.join(task_types())}"
    hint = UNSUPPORTED_HINTS.get(written, "use atomic, sequential, reduce or script")
    return "TD208", f"type '{written}' is not supported in version 1: {hint}"


def subtype(element: Element) -> str | None:
    value = collapse(element.get("subtype") or "")
    return value or None


def runnable_children(element: Element | None) -> list[Element]:
    """The task/call/cond children (the steps of <steps>, the body of a case, an input's task)."""
    return [c for c in element.children if c.tag in RUNNABLE_TAGS] if element is not None else []


def steps(task: Element) -> list[Element]:
    return runnable_children(task.child("steps"))


def inputs(task: Element) -> list[Element]:
    """The <input> children of a task's <inputs>."""
    block = task.child("inputs")
    return block.children_named("input") if block is not None else []


def input_source(item: Element) -> str | None:
    """How an <input> gets its value: ``from`` (a variable; `<input name="p"/>` on a ref is short
    for from="p"), ``task`` (a nested task or call), ``text`` (literal text), or None: a
    placeholder the reduce operator or a caller binds."""
    if item.get("from"):
        return "from"
    if runnable_children(item):
        return "task"
    if item.text.strip():
        return "text"
    if short_from(item):
        return "from"
    return None


def short_from(item: Element) -> bool:
    """`<input name="p"/>` of a ref (no text, no from, no nested task) is short for from="p": the
    caller's visible p (SPEC §17)."""
    task = item.parent.parent if item.parent is not None else None
    return (task is not None and is_ref(task) and item.get("from") is None and bool((item.get("name") or "").strip())
            and not item.text.strip() and not runnable_children(item))


def from_name(item: Element) -> str | None:
    "The variable an <input> takes its value from (its `from`, or its name in the short form)."
    value = item.get("from")
    if value is not None:
        return value.strip() or None
    return item.get("name").strip() if short_from(item) else None


def from_attr(item: Element):
    "The attribute naming that variable: `from`, or `name` in the short form (None: neither)."
    attr = item.attr("from")
    return attr if attr is not None else (item.attr("name") if short_from(item) else None)


def input_has_value(item: Element) -> bool:
    return input_source(item) is not None


def literal_default(item: Element) -> str | None:
    """A named task's input is a param; its literal text is the default a ref may leave unbound."""
    return item.text.strip() if input_source(item) == "text" else None


def template_defaults(template: Element) -> dict[str, str]:
    """The params of a <template> its task gives a literal default (`<input name="sep">-</input>`):
    a ref or a call may leave them out, and the run then uses the default (SPEC §17)."""
    body = template.child("task")
    params = set(split_params(template.get("params")))
    found: dict[str, str] = {}
    for item in (inputs(body) if body is not None else ()):
        value = literal_default(item)
        if item.get("name") in params and value is not None and "{{" not in value:
            found.setdefault(item.get("name"), value)
    return found


def unbound_placeholder(item: Element) -> str | None:
    """The problem of an empty <input> of a reduction_task that the reduce operator does not bind
    (only current_result, accumulator and original_input are); None otherwise."""
    task = item.parent.parent if item.parent is not None else None
    if task is None or task.tag != "reduction_task" or input_has_value(item) or is_ref(task):
        return None
    name = item.get("name") or ""
    if name in REDUCTION_BOUND:
        return None
    return (f"the empty input '{name}' of <reduction_task> is bound by nothing: the reduce operator binds "
            f"{', '.join(REDUCTION_BOUND)}; name it one of these or give it a value")


def empty_input_is_text(item: Element) -> bool:
    """An empty <input> of a nested task (not a param of a named task or template, not a reduce
    placeholder) is the empty text: nothing else could bind it."""
    task = item.parent.parent if item.parent is not None else None
    if task is None or input_has_value(item) or is_ref(task) or task.tag != "task":
        return False
    return not is_named_definition(task) and not (task.parent is not None and task.parent.tag == "template")


def template_params(template: Element, attr_name: str = "params") -> list[str]:
    """`params="a, b"` / `params="a b"`: entries separated by whitespace and/or commas."""
    return split_params(template.get(attr_name))


def is_named_definition(task: Element) -> bool:
    """A root task or a named task of a <library>: callers bind its inputs as params."""
    parent = task.parent
    return task.tag == "task" and (parent is None or (parent.tag == "library" and bool(task.get("name"))))


def enclosing(element: Element, tag: str) -> Element | None:
    for ancestor in (element, *element.ancestors()):
        if ancestor.tag == tag:
            return ancestor
    return None


def step_index(step: Element) -> int | None:
    """1-based position of a step among its sequential's steps (None when not a step)."""
    parent = step.parent
    if parent is None or parent.tag != "steps" or step.tag not in RUNNABLE_TAGS:
        return None
    return runnable_children(parent).index(step) + 1


def is_later_step(step: Element) -> bool:
    """A second or later step of its <steps> (what sees last_output): step_index(step) >= 2, found
    without counting the siblings before it (every step of a long sequential asks)."""
    parent = step.parent
    if parent is None or parent.tag != "steps" or step.tag not in RUNNABLE_TAGS:
        return False
    return next(c for c in parent.children if c.tag in RUNNABLE_TAGS) is not step


# ------------------------------------------------------------------ outputs

#: a template's `returns` values that promise a structured (JSON) output a cond or {{x.field}} reads
STRUCTURED_RETURNS = ("object", "array", "json", "number", "boolean")


def tested_step(cond: Element) -> Element | None:
    """The step whose output a cond inside a sequential tests (None when unknown or at top level)."""
    index = step_index(cond)
    return runnable_children(cond.parent)[index - 2] if index and index > 1 else None


def step_of(element: Element) -> Element | None:
    """The nearest step (a child of a <steps>) holding element (itself included)."""
    seen = 0
    while element is not None and seen < 1000:
        seen += 1
        if element.parent is not None and element.parent.tag == "steps" and element.tag in RUNNABLE_TAGS:
            return element
        element = element.parent
    return None


def output_step(step: Element) -> Element | None:
    """What produces a step's output: an atomic or script task (a sequential's last step, a reduce's
    reduction_task, followed down), or a `<call>` / `<task ref>` whose output is its target's; None
    when unknown (a cond, an empty sequential, a type version 1 does not know)."""
    seen = 0
    while step is not None and seen < 100:
        seen += 1
        if step.tag == "call" or is_ref(step):
            return step
        if step.tag not in TASK_TAGS:
            return None
        kind = task_type(step)
        if kind == "sequential":
            items = steps(step)
            step = items[-1] if items else None
        elif kind == "reduce":
            step = step.child("reduction_task")
        elif kind in ("atomic", "script"):
            return step
        else:
            return None
    return None


def declared_output(task: Element) -> str:
    """"structured" when an atomic or script task declares `<output_format type="json"/>` (or xml,
    read into fields), else "text"."""
    output_format = task.child("output_format")
    if output_format is not None and enum_value(output_format.get("type"), "outputType") in ("json", "xml"):
        return "structured"
    return "text"


def target_name(step: Element) -> str | None:
    """The name a `<call template>` or `<task ref>` step names (as written, collapsed)."""
    written = step.get("template") if step.tag == "call" else step.get("ref")
    return collapse(written or "") or None


def output_kind(step: Element, resolve=None) -> str | None:
    """The kind of a step's output: "structured" (declared JSON or XML), "text" (declared as
    nothing: plain text) or None (unknown). A call or a ref is its target's kind, which
    `resolve(name)` answers from the library (`Definition.output`); None without it."""
    producer = output_step(step)
    if producer is None:
        return None
    if producer.tag == "call" or is_ref(producer):
        name = target_name(producer)
        return resolve(name) if resolve is not None and name else None
    return declared_output(producer)


def definition_output(task: Element | None, returns: str | None = None) -> str | None:
    """The output kind of a library task or template (what a call or ref of it produces): its
    task's declared output, or "structured" when the template's `returns` promises an object,
    array, number or boolean; None when unknown (it ends in another call or ref)."""
    kind = output_kind(task) if task is not None else None
    if kind != "structured" and collapse(returns or "").lower() in STRUCTURED_RETURNS:
        return "structured"
    return kind
