"""Hypothesis strategies that build small taskdsl projects from the grammar tables.

Every element, attribute and enumerated value comes from `grammar_tables.json` (what the XSD
allows); near-misses are mixed in on purpose: blank and whitespace-padded texts, CR LF line
ends, entities, CDATA, empty elements, misspelt values, children where they do not belong. A
project is an entry file (`main.task.xml`) and a library file (`lib.task.xml`) whose templates
and named tasks the entry may reach through refs, calls, inline calls and reduce parts; templates
give some params literal defaults. Shell commands come from a fixed list of harmless ones, so a
project that checks clean can be run.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

TABLES = Path(__file__).resolve().parents[1] / "server" / "taskdsl" / "language" / "grammar_tables.json"

VARIABLES = ["a", "b", "p", "current_data", "accumulator", "current_result", "last_output", "zz"]
TASK_NAMES = ["greet", "shout", "helper", "nosuch"]
#: texts: mostly plain, the rest name variables or templates (visible or not), or are near-misses
PLAIN_TEXTS = ["Say hi", "Summarise the notes", "a &amp; b &lt;c&gt;", "one\r\ntwo", "<![CDATA[raw <b>]]>", "tab\there"]
TEXTS = PLAIN_TEXTS * 3 + ["Hello {{a}}", "{{p}} and {{b}}", "{{zz}}", "{{last_output}}", "{{ a }}", "{{greet(a)}}",
                           "{{shout('x')}}", "{{nosuch(1)}}", "", "   ", "<!-- only a comment -->",
                           "{{current_data}}", "{{a"]
SAFE_COMMANDS = ["echo hi", "printf '%s' {{a}}", "true", "exit 3", "cat", "echo {{p}}", "printf 'x\\r\\ny'",
                 "cat <<EOF\r\nline\r\nEOF", "echo \"$TASKDSL_INPUT_A\""]
COMMANDS = SAFE_COMMANDS * 3 + ["", "  ", "<!-- later -->", "echo '{{a}}'"]
TESTS = ["output.ok == true", "len(output) > 0", "output.a = = 1", "foo == 1", "output.n > 1", ""]
MODELS = ["taskdsl/echo", "taskdsl/echoo", "", " taskdsl/echo "]


@lru_cache(maxsize=None)
def tables() -> dict:
    return json.loads(TABLES.read_text(encoding="utf-8"))


def declaration(name: str, parent: str | None = None) -> int:
    """The index of the first declaration of `name` (under a declaration named `parent`)."""
    data = tables()
    for index, decl in enumerate(data["declarations"]):
        if decl["name"] != name:
            continue
        if parent is None:
            return index
        for other in data["declarations"]:
            if other["name"] == parent and any(c[0] == index for c in data["types"][other["type"]].get("children", [])):
                return index
    return next(i for i, d in enumerate(data["declarations"]) if d["name"] == name)


def children_of(index: int) -> list[tuple[int, int, int | None]]:
    data = tables()
    return [tuple(c) for c in data["types"][data["declarations"][index]["type"]].get("children", [])]


def attributes_of(index: int) -> list[dict]:
    data = tables()
    return data["types"][data["declarations"][index]["type"]].get("attributes", [])


def text_values(index: int) -> list[str] | None:
    "The enumerated text values of an element (None: free text or none)."
    data = tables()
    found = data["types"][data["declarations"][index]["type"]].get("text")
    return [v[0] for v in found] if found else None


def child_index(parent: int, name: str) -> int | None:
    data = tables()
    for child, _, _ in children_of(parent):
        if data["declarations"][child]["name"] == name:
            return child
    return None


def name_of(index: int) -> str:
    return tables()["declarations"][index]["name"]


@st.composite
def near(draw, value: str) -> str:
    "A value as the XSD allows it (mostly), or a near-miss of it."
    if draw(st.integers(0, 11)):
        return value
    return draw(st.sampled_from([f" {value} ", value[:-1] or "x", value.upper()]))


@st.composite
def attribute_value(draw, attr: dict) -> str:
    values = [v[0] for v in attr.get("values") or []]
    if values:
        return draw(near(draw(st.sampled_from(values))))
    name = attr["name"]
    if name in ("ref", "template", "task"):
        return draw(st.sampled_from(TASK_NAMES + ["atomic:standard", "Bad Name"]))
    if name == "name":
        return draw(st.sampled_from(TASK_NAMES[:3] + VARIABLES[:3]))
    if name == "from":
        return draw(st.sampled_from(VARIABLES + ["a.b", "1x"]))
    if name == "params":
        return draw(st.sampled_from(["a", "a b", "a, p", "", "a,,b"]))
    if name == "test":
        return draw(st.sampled_from(TESTS))
    if name == "timeout":
        return draw(st.sampled_from(["5", "soon"]))
    return draw(st.sampled_from(["x", ""]))


def escape_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


@st.composite
def element(draw, index: int, depth: int, attrs: dict | None = None, children: list[str] | None = None,
            text: str | None = None) -> str:
    """One element of declaration `index`: given attrs/children/text, else drawn from the tables."""
    name = name_of(index)
    if attrs is None:
        attrs = {}
        for attr in attributes_of(index):
            if attr.get("required") or draw(st.integers(0, 3)) == 0:
                attrs[attr["name"]] = draw(attribute_value(attr))
    if children is None:
        children = []
        if depth < 3:
            for child, low, high in children_of(index):
                count = draw(st.integers(low, min(high or 2, low + 1))) if draw(st.integers(0, 4)) == 0 or low else 0
                children += [draw(node(child, depth + 1)) for _ in range(count)]
    if text is None:
        values = text_values(index)
        text = draw(near(draw(st.sampled_from(values)))) if values else (
            draw(st.sampled_from(COMMANDS)) if name == "command" else draw(st.sampled_from(TEXTS)))
        if not values and not children and draw(st.integers(0, 5)) == 0:
            text = ""
    shown = "".join(f' {k}="{escape_attr(v)}"' for k, v in attrs.items())
    body = text + "".join(children)
    if not body and draw(st.booleans()):
        return f"<{name}{shown}/>"
    return f"<{name}{shown}>{body}</{name}>"


@st.composite
def node(draw, index: int, depth: int) -> str:
    "Task-like declarations get a type-aware body; the rest come from the tables as they are."
    name = name_of(index)
    if name in ("task", "inner_task", "reduction_task"):
        return draw(task(index, depth))
    return draw(element(index, depth))


def text_child(parent: int, name: str, text: str) -> str:
    return f"<{name}>{text}</{name}>" if child_index(parent, name) is not None else ""


@st.composite
def inputs(draw, parent: int, depth: int, names: list[str]) -> str:
    index = child_index(parent, "inputs")
    item = child_index(index, "input")
    parts = []
    if not names:
        return "<inputs/>" if draw(st.integers(0, 9)) == 0 else ""
    for name in names:
        kind = draw(st.sampled_from(["literal", "literal", "empty", "from", "task"]))
        if kind == "literal":
            parts.append(f'<input name="{name}">{draw(st.sampled_from(PLAIN_TEXTS + ["v", "", "{{a}}"]))}</input>')
        elif kind == "empty":
            parts.append(f'<input name="{name}"/>')
        elif kind == "from":
            parts.append(f'<input name="{name}" from="{draw(st.sampled_from(VARIABLES))}"/>')
        else:
            nested = child_index(item, "task")
            parts.append(f'<input name="{name}">{draw(task(nested, depth + 2))}</input>')
    return f"<inputs>{''.join(parts)}</inputs>"


@st.composite
def task(draw, index: int, depth: int) -> str:
    """A task of one operator with the children that operator reads (and, now and then, one it
    does not); a ref now and then."""
    if draw(st.integers(0, 6)) == 0:  # a ref, binding by input name (or the short form)
        ref = draw(st.sampled_from(TASK_NAMES[:3] * 3 + TASK_NAMES + ["atomic:standard"]))
        bind = draw(st.sampled_from(["", '<inputs><input name="a">v</input></inputs>', '<inputs><input name="a"/></inputs>',
                                     '<inputs><input name="a" from="p"/></inputs>']))
        tag = name_of(index)
        return f'<{tag} ref="{ref}">{bind}</{tag}>' if bind else f'<{tag} ref="{ref}"/>'
    kinds = ["atomic", "script", "sequential", "reduce"] if depth < 3 else ["atomic", "script"]
    kind = draw(st.sampled_from(kinds))
    attrs = {}
    if kind != "atomic" or draw(st.booleans()):
        attrs["type"] = draw(near(kind))
    if draw(st.integers(0, 4)) == 0 and name_of(index) == "task":
        attrs["name"] = draw(st.sampled_from(["step", "step", "step", "main"] + TASK_NAMES[:3]))
    children = []
    if draw(st.integers(0, 7)):
        children.append(text_child(index, "description", draw(st.sampled_from(TEXTS))))
    if kind == "atomic":
        if draw(st.booleans()):
            children.append(text_child(index, "instructions", draw(st.sampled_from(TEXTS))))
        if draw(st.integers(0, 3)) == 0:
            children.append(text_child(index, "model", draw(st.sampled_from(MODELS[:1] * 6 + MODELS))))
        if draw(st.integers(0, 4)) == 0:
            fmt = child_index(index, "output_format")
            children.append(draw(element(fmt, depth + 1, children=[], text="")))
    elif kind == "script":
        if draw(st.integers(0, 8)):
            children.append(f"<command>{draw(st.sampled_from(COMMANDS))}</command>")
    elif kind == "sequential":
        steps = child_index(index, "steps")
        options = [child_index(steps, "task"), child_index(steps, "call"), child_index(steps, "cond")]
        count = draw(st.integers(0 if draw(st.integers(0, 8)) == 0 else 1, 3))
        children.append(f"<steps>{''.join(draw(step(draw(st.sampled_from(options)), depth + 1)) for _ in range(count))}</steps>")
    elif kind == "reduce":
        children.append(text_child(index, "initial_value", draw(st.sampled_from(["0", "", "{{a}}"]))))
        names = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=0 if draw(st.integers(0, 8)) == 0 else 1,
                              max_size=2, unique=True))
        children.append(draw(inputs(index, depth, names)))
        for part, binds in (("inner_task", ["current_data"]), ("reduction_task", ["current_result", "accumulator"])):
            if draw(st.integers(0, 10)):
                children.append(draw(reduce_part(child_index(index, part), depth + 1, binds)))
    if kind != "reduce" and draw(st.integers(0, 3)) == 0:
        children.append(draw(inputs(index, depth, draw(st.lists(st.sampled_from(["a", "p"]), max_size=2, unique=True)))))
    if draw(st.integers(0, 19)) == 0:  # a near-miss: a child the operator does not read, from the tables
        extra, _, _ = draw(st.sampled_from(children_of(index)))
        children.append(draw(element(extra, 3)))
    if draw(st.integers(0, 9)) == 0:
        cm = child_index(index, "context_management")
        inherit = child_index(cm, "inherit_context")
        children.append(f"<context_management>{draw(element(inherit, 3, attrs={}, children=[]))}</context_management>")
    return draw(element(index, depth, attrs=attrs, children=children, text=""))


@st.composite
def reduce_part(draw, index: int, depth: int, binds: list[str]) -> str:
    if draw(st.integers(0, 3)) == 0:  # a ref as the part (the runner used to crash on it)
        return (f'<{name_of(index)} ref="{draw(st.sampled_from(TASK_NAMES))}"><inputs><input name="a" '
                f'from="{binds[0]}"/></inputs></{name_of(index)}>')
    body = draw(task(index, depth))
    names = "".join(f'<input name="{b}"/>' for b in binds)
    if "<inputs>" in body or body.endswith("/>"):
        return body
    return body.replace(f"</{name_of(index)}>", f"<inputs>{names}</inputs></{name_of(index)}>")


@st.composite
def step(draw, index: int, depth: int) -> str:
    name = name_of(index)
    if name == "task":
        return draw(task(index, depth))
    if name == "call":
        return draw(call())
    cases = []
    case = child_index(index, "case")
    for _ in range(draw(st.integers(0 if draw(st.integers(0, 8)) == 0 else 1, 2))):
        body = draw(task(child_index(case, "task"), depth + 1))
        cases.append(f'<case test="{escape_attr(draw(st.sampled_from(TESTS)))}">{body}</case>')
    if draw(st.booleans()):
        cases.append(f"<default>{draw(task(child_index(child_index(index, 'default'), 'task'), depth + 1))}</default>")
    return f"<cond>{''.join(cases)}</cond>"


@st.composite
def call(draw) -> str:
    target = draw(st.sampled_from(TASK_NAMES[:3] * 3 + TASK_NAMES))
    args = draw(st.lists(st.sampled_from(['<arg>v</arg>', '<arg>a</arg>', '<arg name="a">x</arg>', '<arg name="p">y</arg>',
                                          '<arg name="zz">q</arg>', "<arg>{{a}}</arg>", "<arg/>"]), max_size=2))
    return f'<call template="{target}">{"".join(args)}</call>'


@st.composite
def template(draw, name: str) -> str:
    params = draw(st.sampled_from(["a", "a p", "a, p", "", "p"]))
    top = declaration("template")
    body_index = child_index(top, "task")
    body = draw(task(body_index, 2))
    defaults = draw(st.sampled_from(["", '<input name="p">dflt</input>', '<input name="a">x</input>']))
    if defaults and "<inputs>" not in body and not body.endswith("/>") and 'ref="' not in body:
        body = body.replace("</task>", f"<inputs>{defaults}</inputs></task>", 1) if body.endswith("</task>") else body
    return f'<template name="{name}" params="{params}">{body}</template>'


@st.composite
def library_file(draw) -> str:
    names = draw(st.lists(st.sampled_from(TASK_NAMES[:3]), min_size=1, max_size=3, unique=draw(st.integers(0, 9)) > 0))
    parts = []
    if not names:
        return "<inputs/>" if draw(st.integers(0, 9)) == 0 else ""
    for name in names:
        if draw(st.integers(0, 3)):
            parts.append(draw(template(name)))
        else:
            body = draw(task(declaration("task", "library"), 2))
            if body.startswith("<task") and ' name="' not in body.split(">", 1)[0]:
                body = body.replace("<task", f'<task name="{name}"', 1)
            parts.append(body)
    return f"<library>{''.join(parts)}</library>\n"


@st.composite
def entry_file(draw) -> str:
    root = draw(st.sampled_from(["task", "task", "task", "call", "cond", "template"]))
    if root == "task":
        return draw(task(declaration("task"), 0)) + "\n"
    if root == "call":
        return draw(call()) + "\n"
    if root == "cond":
        return draw(step(declaration("cond"), 1)) + "\n"
    return draw(template("main")) + "\n"


@st.composite
def projects(draw) -> dict[str, str]:
    """{relative path: text} of one project; some files get CR LF line ends."""
    files = {"main.task.xml": draw(entry_file()), "lib.task.xml": draw(library_file())}
    if draw(st.integers(0, 4)) == 0:
        files = {path: text.replace("\n", "\r\n") if draw(st.booleans()) else text for path, text in files.items()}
    return files
