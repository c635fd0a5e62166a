"""Compile `taskdsl.document` Elements into AST nodes, and the TaskLibrary they register into.

What cannot compile raises CompileError carrying the checker's rule code; a run checks the
template first, so these are the last line of defence, not the user's usual message.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from taskdsl import expr as cond_expr
from taskdsl.document import Element, parse
from taskdsl.names import file_stem, split_params

from . import ast
from .ast import ContextSettings
from .results import TaskError



class CompileError(Exception):
    def __init__(self, code: str, message: str, element: Element | None = None, path: str | None = None):
        super().__init__(message)
        self.code, self.message, self.element, self.path = code, message, element, path

    def where(self) -> str:
        return f"{self.path or '<template>'}:{self.element.name_span.start if self.element else 0}"


# ---------------------------------------------------------------- effective context settings

def effective_settings(element: Element) -> ContextSettings:
    """SPEC §4 defaults merged with the element's <context_management>, from the one shared
    table (taskdsl.context), reduced to what the evaluator needs."""
    from taskdsl.context import effective_settings as shared

    s = shared(element)
    return ContextSettings(s.inherit_context, bool(s.accumulate_data), s.accumulation_format or "notes_only",
                           s.fresh_context, frozenset(s.explicit))


# ---------------------------------------------------------------- the library

@dataclass
class TaskDefinition:
    name: str
    type: str
    subtype: str | None
    metadata: dict = field(default_factory=dict)  # parameters, kind (task|template), path, description
    ast_node: object = None


class TaskLibrary:
    """Definitions by name, and by `type:subtype` key (SPEC §6: a ref resolves by name first)."""

    def __init__(self):
        self.by_name: dict[str, TaskDefinition] = {}
        self.by_key: dict[str, list[TaskDefinition]] = {}

    def register_task(self, definition: TaskDefinition) -> None:
        if definition.name in self.by_name:
            other = self.by_name[definition.name].metadata.get("path")
            raise TaskError("VALIDATION_ERROR", f"task '{definition.name}' is already registered"
                            + (f" (from {other})" if other else ""), "duplicate_task", {"name": definition.name})
        self.by_name[definition.name] = definition
        if definition.subtype:
            self.by_key.setdefault(f"{definition.type}:{definition.subtype}", []).append(definition)

    def get_task(self, name: str) -> TaskDefinition:
        if name in self.by_name:
            return self.by_name[name]
        if self.by_key.get(name):
            return self.by_key[name][0]
        near = difflib.get_close_matches(name, list(self.by_name) + list(self.by_key), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else (
            f"; known: {', '.join(sorted(self.by_name)[:10])}" if self.by_name else "; the library is empty")
        raise TaskError("VALIDATION_ERROR", f"task '{name}' is not in the library{hint}", "unknown_task",
                        {"name": name, "suggestions": near})

    def __contains__(self, name: str) -> bool:
        return name in self.by_name or name in self.by_key

    def names(self) -> list[str]:
        return sorted(self.by_name)

    def find_matching_tasks(self, text: str, limit: int = 5) -> list[tuple]:
        """(TaskDefinition, score, kind) by relevance to `text`, best first (taskdsl.matching)."""
        from taskdsl.matching import find_in_task_library

        return find_in_task_library(self, text, limit)


# ---------------------------------------------------------------- compiler

def _text(element: Element | None) -> str | None:
    return None if element is None else element.text.strip()


class Compiler:
    def __init__(self, path: str | None):
        self.path = path
        self.folder = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()

    def fail(self, code: str, message: str, element: Element):
        raise CompileError(code, message, element, self.path)

    # -- tasks, calls, conds (anything that may stand as a step, an input or a case body)

    def node(self, el: Element, label: str):
        if el.tag == "call":
            return self.call(el, label)
        if el.tag == "cond":
            return self.cond(el, label)
        if el.tag in ("task", "inner_task", "reduction_task"):
            return self.task(el, label)
        self.fail("TD101", f"<{el.tag}> cannot be run: expected <task>, <call> or <cond>", el)

    def only_child(self, el: Element, what: str):
        runnable = [c for c in el.children if c.tag in ("task", "call", "cond")]
        if len(runnable) != 1:
            self.fail("TD206", f"<{el.tag}> needs exactly one task or call, found {len(runnable)}", el)
        return self.node(runnable[0], what)

    def task(self, el: Element, label: str):
        name = el.get("name") or label
        if el.get("ref"):
            return self.ref(el, name)
        kind = el.get("type") or "atomic"
        common = dict(name=name, kind=kind, settings=effective_settings(el), folder=self.folder,
                      inputs=self.inputs(el, name), description=_text(el.child("description")) or "",
                      file_paths=self.file_paths(el))
        if kind == "atomic":
            instructions, description = _text(el.child("instructions")), common["description"]
            if not instructions and not description:
                self.fail("TD204", f"atomic task '{name}' has neither <description> nor <instructions>", el)
            return ast.Atomic(**common, instructions=instructions, system=_text(el.child("system")),
                              model=_text(el.child("model")) or None, output_format=self.output_format(el))
        if kind == "sequential":
            steps_el = el.child("steps")
            steps = [c for c in (steps_el.children if steps_el is not None else []) if c.tag in ("task", "call", "cond")]
            if not steps:
                self.fail("TD201", f"sequential task '{name}' has no <steps>", el)
            return ast.Sequential(**common, steps=[self.node(s, f"{name}/steps[{i}]") for i, s in enumerate(steps, 1)])
        if kind == "reduce":
            inner, reduction = el.child("inner_task"), el.child("reduction_task")
            if inner is None or reduction is None or el.child("inputs") is None:
                self.fail("TD202", f"reduce task '{name}' needs <inputs>, <inner_task> and <reduction_task>", el)
            return ast.Reduce(**common, initial_value=_text(el.child("initial_value")) or "",
                              inner_task=self.task(inner, f"{name}/inner_task"),
                              reduction_task=self.task(reduction, f"{name}/reduction_task"))
        if kind == "script":
            command = el.child("command")
            if command is None or not command.text.strip():
                self.fail("TD203", f"script task '{name}' has no <command>", el)
            timeout = command.get("timeout") or "60"
            try:
                seconds = float(timeout)
            except ValueError:
                self.fail("TD105", f"timeout '{timeout}' is not a number of seconds", command)
            return ast.Script(**common, command=command.text.strip(), timeout=seconds,
                              fail_on_error=(command.get("fail_on_error") or "true") != "false",
                              output_format=self.output_format(el))
        if kind == "director_evaluator_loop":
            self.fail("TD208", "type 'director_evaluator_loop' is not in version 1: use a sequential with a script step", el)
        self.fail("TD105", f"unknown task type '{kind}': expected atomic, sequential, reduce or script", el)

    def ref(self, el: Element, name: str) -> ast.FunctionCall:
        args = [(i.name, i.source) for i in self.inputs(el, name) if i.source is not None]
        cm = el.child("context_management")
        settings = effective_settings(el) if cm is not None else None
        return ast.FunctionCall(el.get("ref"), args, settings, label=name)

    def call(self, el: Element, label: str) -> ast.FunctionCall:
        target = el.get("template") or el.get("task")
        if not target:
            self.fail("TD104", "<call> needs a template attribute", el)
        args = []
        for arg in el.children_named("arg"):
            nested = [c for c in arg.children if c.tag in ("task", "call", "cond")]
            if nested:
                source = ast.TaskArg(self.node(nested[0], f"{label}/arg"))
            else:
                text = arg.text.strip()
                source = ast.NameArg(text) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else ast.TextArg(text)
            args.append((arg.get("name"), source))
        return ast.FunctionCall(target, args, label=label)

    def cond(self, el: Element, label: str) -> ast.Cond:
        cases = []
        for number, case in enumerate(el.children_named("case"), 1):
            test = case.get("test")
            if test is None:
                self.fail("TD206", "<case> needs a test attribute", case)
            try:
                parsed = cond_expr.parse_expr(test)
            except cond_expr.ExprSyntaxError as e:
                self.fail("TD701", f"cond test {test!r} does not parse: {e.message}", case)
            except cond_expr.ExprForbidden as e:
                self.fail("TD702", f"cond test {test!r}: {e.message}", case)
            cases.append(ast.Case(test, parsed, self.only_child(case, f"{label}/case[{number}]")))
        if not cases:
            self.fail("TD206", "<cond> needs at least one <case>", el)
        default = el.child("default")
        return ast.Cond(cases, self.only_child(default, f"{label}/default") if default is not None else None, label)

    def inputs(self, el: Element, task_name: str) -> list[ast.Input]:
        inputs_el = el.child("inputs")
        result = []
        for inp in (inputs_el.children_named("input") if inputs_el is not None else []):
            name = inp.get("name") or ""
            nested = [c for c in inp.children if c.tag in ("task", "call", "cond")]
            if inp.get("from"):
                source = ast.VarArg(inp.get("from"))
            elif nested:
                source = ast.TaskArg(self.node(nested[0], f"{task_name}/inputs/{name}"))
            elif inp.text.strip():
                source = ast.TextArg(inp.text.strip())
            else:
                source = None  # a placeholder: bound by the reduce operator or a caller
            result.append(ast.Input(name, source, inp.get("from")))
        return result

    def output_format(self, el: Element) -> dict | None:
        fmt = el.child("output_format")
        return None if fmt is None else {"type": fmt.get("type") or "text", "schema": fmt.get("schema")}

    def file_paths(self, el: Element) -> ast.FilePaths | None:
        fp = el.child("file_paths")
        if fp is None:
            return None
        source = fp.get("source") or "literal"
        if source == "literal":
            return ast.FilePaths(source, [p.text.strip() for p in fp.children_named("path")])
        inner = fp.child(source)
        return ast.FilePaths(source, text=_text(inner) or "")

    # -- definitions

    def definitions(self, root: Element) -> list[TaskDefinition]:
        """What a file registers: its root task (by name, else the file stem), its template,
        or each template and named task of a library."""
        if root.tag == "task":
            return [self.task_definition(root, root.get("name") or file_stem(self.path) or "task")]
        if root.tag == "template":
            return [self.template_definition(root)]
        if root.tag == "library":
            defs = []
            for child in root.children:
                if child.tag == "template":
                    defs.append(self.template_definition(child))
                elif child.tag == "task" and child.get("name"):
                    defs.append(self.task_definition(child, child.get("name")))
            return defs
        return []

    def task_definition(self, el: Element, name: str) -> TaskDefinition:
        node = self.task(el, name)
        params = [i.name for i in node.inputs] if isinstance(node, ast.TaskNode) else []
        return TaskDefinition(name, el.get("type") or "atomic", el.get("subtype"),
                              {"parameters": params, "kind": "task", "path": self.path,
                               "description": _text(el.child("description")) or ""}, node)

    def template_definition(self, el: Element) -> TaskDefinition:
        name = el.get("name")
        if not name:
            self.fail("TD207", "<template> needs a name", el)
        params = split_params(el.get("params"))
        body = [c for c in el.children if c.tag == "task"]
        if len(body) != 1:
            self.fail("TD207", f"template '{name}' needs exactly one <task>, found {len(body)}", el)
        node = ast.Template(name, params, self.task(body[0], name))
        return TaskDefinition(name, body[0].get("type") or "atomic", body[0].get("subtype"),
                              {"parameters": params, "kind": "template", "path": self.path,
                               "returns": el.get("returns"), "description": _text(body[0].child("description")) or ""},
                              node)


def compile_text(text: str, path: str | None = None):
    """(document root, Compiler) for text; raises CompileError if the text has no root element."""
    doc = parse(text)
    if doc.root is None:
        raise CompileError("TD001", "the file holds no element", None, path)
    return doc.root, Compiler(path)
