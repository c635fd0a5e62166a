"""Compile `taskdsl.language.document` Elements into AST nodes, and the TaskLibrary they register into.

What cannot compile raises CompileError carrying the checker's rule code; a run checks the
template first, so these are the last line of defence, not the user's usual message.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from taskdsl.language import cond as cond_expr
from taskdsl.meaning import facts
from taskdsl.meaning import model as semantics
from taskdsl.language.document import Element, parse
from taskdsl.language.names import file_stem
from taskdsl.language.templating import parse_placeholder
from taskdsl.language.vocabulary import BRANCH_TAGS, LOCKS, TASK_TAGS, boolean, collapse, enum_value, matches

from taskdsl.evaluator import ast
from taskdsl.evaluator.ast import ContextSettings
from taskdsl.evaluator.results import TaskError


class CompileError(Exception):
    def __init__(self, code: str, message: str, element: Element | None = None, path: str | None = None):
        super().__init__(message)
        self.code, self.message, self.element, self.path = code, message, element, path

    def where(self) -> str:
        return f"{self.path or '<template>'}:{self.element.name_span.start if self.element else 0}"


# ---------------------------------------------------------------- effective context settings

def effective_settings(element: Element) -> ContextSettings:
    """SPEC §4 defaults merged with the element's <context_management>, from the one shared
    table (taskdsl.meaning.context), reduced to what the evaluator needs."""
    from taskdsl.meaning.context import effective_settings as shared

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

    def lookup(self, name: str) -> list[TaskDefinition]:
        """By name first, then by type:subtype key (several when a key is shared: ambiguous)."""
        if name in self.by_name:
            return [self.by_name[name]]
        return list(self.by_key.get(name, ()))

    def get_task(self, name: str) -> TaskDefinition:
        found = self.lookup(name)
        if len(found) > 1:
            raise TaskError("VALIDATION_ERROR", semantics.ambiguous_key_message(name, [d.name for d in found]),
                            "ambiguous_task", {"name": name})
        if found:
            return found[0]
        near = difflib.get_close_matches(name, list(self.by_name) + list(self.by_key), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else (
            f"; known: {', '.join(sorted(self.by_name)[:10])}" if self.by_name else "; the library is empty")
        raise TaskError("VALIDATION_ERROR", f"task '{name}' is not in the library{hint}", "unknown_task",
                        {"name": name, "suggestions": near})

    def missing_message(self, name: str, exclude: str | None = None) -> str:
        """TD501's words for a target this library does not hold (`exclude`: never suggested)."""
        return semantics.unknown_target_message(name, sorted(self.by_name) + sorted(self.by_key), exclude=exclude)

    def __contains__(self, name: str) -> bool:
        return name in self.by_name or name in self.by_key

    def names(self) -> list[str]:
        return sorted(self.by_name)

    def load_atomic(self, path: str, name: str, role: str, reason: str):
        """The atomic task a built-in or project template plays `role` with (see `atomic_of`)."""
        return atomic_of(path, name, role, reason)



# ---------------------------------------------------------------- compiler

def _text(element: Element | None) -> str | None:
    return None if element is None else element.text.strip()


class Compiler:
    def __init__(self, path: str | None, settings=None):
        self.path = path
        self.settings = settings
        self.folder = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
        self.calls: list[tuple[ast.FunctionCall, Element]] = []  # every ref and call compiled, for link()
        self._models: dict[Element, semantics.FileModel] = {}

    def fail(self, code: str, message: str, element: Element):
        raise CompileError(code, message, element, self.path)

    # -- tasks, calls, conds (anything that may stand as a step, an input or a case body)

    def node(self, el: Element, label: str):
        if el.tag == "call":
            return self.call(el, label)
        if el.tag == "cond":
            return self.cond(el, label)
        if el.tag in TASK_TAGS:
            return self.task(el, label)
        self.fail("TD101", f"<{el.tag}> cannot be run: expected <task>, <call> or <cond>", el)

    def only_child(self, el: Element, what: str):
        """The one task or call of a case or default (the grammar's "branch")."""
        value = self.value_child(el)
        if value is None:
            self.fail("TD206", f"<{el.tag}> has no task: add one <task> or <call>", el)
        return self.node(value, what)

    def value_child(self, el: Element) -> Element | None:
        """The one task or call a case, default, input or arg may hold; what else the grammar
        refuses is refused with its codes (TD101 not allowed here, TD107 repeated)."""
        runnable = semantics.runnable_children(el)
        if not runnable and el.children and el.tag in ("case", "default"):  # a misspelt <task>
            child = el.children[0]
            self.fail("TD101", f"<{child.tag}> is not allowed in <{el.tag}>: it holds one task or call", child)
        for child in runnable:
            if child.tag not in BRANCH_TAGS:
                self.fail("TD101", f"<{child.tag}> is not allowed in <{el.tag}>: it holds one task or call", child)
        if len(runnable) > 1:
            second = runnable[1]
            code = "TD107" if second.tag == runnable[0].tag else "TD101"
            self.fail(code, f"<{el.tag}> holds exactly one task or call, found {len(runnable)}", second)
        return runnable[0] if runnable else None

    def task(self, el: Element, label: str):
        name = el.get("name") or label
        if semantics.is_ref(el):
            if not matches(el.get("ref"), "taskRef"):
                self.fail("TD105", f"'{el.get('ref')}' is not valid for attribute 'ref': expected a task name or a "
                          "type:subtype key", el)
            return self.ref(el, name)
        kind = semantics.task_type(el)
        if kind is None:
            self.fail(*semantics.unknown_type(el), el)
        common = dict(name=name, kind=kind, settings=effective_settings(el), folder=self.folder,
                      inputs=self.inputs(el, name), description=_text(el.child("description")) or "",
                      file_paths=self.file_paths(el), origin=(self.path, el.start, el.span.end),
                      locks=frozenset(lock for lock in LOCKS if boolean(_text(el.child(lock)), False)))
        if kind == "atomic":
            instructions, description = _text(el.child("instructions")), common["description"]
            if not instructions and not description:
                self.fail("TD204", f"atomic task '{name}' has neither <description> nor <instructions>", el)
            return ast.Atomic(**common, instructions=instructions, system=_text(el.child("system")),
                              model=self.model(el), output_format=self.output_format(el))
        if kind == "sequential":
            steps = semantics.steps(el)
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
            fail_on_error = boolean(command.get("fail_on_error"), True)
            if fail_on_error is None:
                self.fail("TD105", f"fail_on_error '{command.get('fail_on_error')}' is not true or false", command)
            return ast.Script(**common, command=command.text.strip(), timeout=seconds,
                              fail_on_error=fail_on_error, output_format=self.output_format(el))
        raise AssertionError(kind)  # task_type answers one of the four

    def model(self, el: Element) -> str | None:
        """The task's <model>: absent is the default model; empty or an unknown taskdsl/ model is refused."""
        element = el.child("model")
        if element is None:
            return None
        name = element.text.strip()
        if not name:
            self.fail("TD105", "<model> is empty: name a model (e.g. gpt-4o-mini) or remove the element", element)
        problem = semantics.builtin_model_problem(name)
        if problem:
            self.fail("TD601", problem, element)
        return name

    def ref(self, el: Element, name: str) -> ast.FunctionCall:
        args = [(i.name, i.source) for i in self.inputs(el, name) if i.source is not None]
        cm = el.child("context_management")
        settings = effective_settings(el) if cm is not None else None
        return self.linked(ast.FunctionCall(collapse(el.get("ref")), args, settings, label=name, kind="ref"), el)

    def call(self, el: Element, label: str) -> ast.FunctionCall:
        target = el.get("template")
        if target is not None and not matches(target, "taskName"):
            self.fail("TD105", f"'{target}' is not valid for attribute 'template' of <call>: expected a task name", el)
        if target is None and el.get("task") is not None:  # the legacy form: the checker's TD209
            legacy = el.get("task")
            self.fail("TD209", f"legacy <call task=\"{legacy}\">: version 1 writes <call template=\"{legacy}\">", el)
        if not target:
            self.fail("TD104", "<call> needs a template attribute", el)
        args = []
        model = self.file_model(el)
        for arg in el.children_named("arg"):
            nested = self.value_child(arg)
            if nested is not None:
                source = ast.TaskArg(self.node(nested, f"{label}/arg"))
            elif model.arg_is_variable(arg):
                source = ast.VarArg(arg.text.strip())
            else:  # literal as written (entities decoded, trimmed), with {{…}} substituted
                source = ast.TextArg(arg.text.strip())
            args.append((arg.get("name"), source))
        return self.linked(ast.FunctionCall(collapse(target), args, label=label), el)

    def file_model(self, el: Element) -> semantics.FileModel:
        """The semantic model of the file el belongs to (one per root this compiler compiles)."""
        top = semantics.top_of(el)
        model = self._models.get(top)
        if model is None:
            model = self._models[top] = semantics.FileModel(roots=[top], settings=self.settings)
        return model

    def linked(self, call: ast.FunctionCall, el: Element) -> ast.FunctionCall:
        """Remember where each call is written: link() resolves them against the library."""
        call.origin = (self.path, el.start, el.span.end)
        self.calls.append((call, el))
        return call

    def link(self, library: "TaskLibrary") -> None:
        """Refuse what the library decides before anything runs: an unknown or ambiguous target
        (TD501) and arguments that do not bind the target's params (TD503)."""
        for call, el in self.calls:
            found = library.lookup(call.func_name)
            if not found:
                self.fail("TD501", library.missing_message(call.func_name, exclude=self.owner_name(el)), el)
            if len(found) > 1:
                self.fail("TD501", semantics.ambiguous_key_message(call.func_name, [d.name for d in found]), el)
            definition = found[0]
            named = [n for n, _ in call.args if n is not None]
            positional = sum(1 for n, _ in call.args if n is None)
            problems = semantics.argument_problems(definition.name, definition.metadata.get("params", []),
                                                   positional, named, call.kind)
            if problems:
                self.fail("TD503", problems[0].message, el)

    def link_inline(self, root: Element, library: "TaskLibrary") -> None:
        """link() for the inline calls {{fn(…)}} of the file (compiled when their text renders)."""
        for element, ph in self.file_model(root).inline_calls():
            self.calls.append((ast.FunctionCall(ph.name, [(None, None)] * len(ph.args), label=ph.name), element))

    @staticmethod
    def owner_name(el: Element) -> str | None:
        for ancestor in el.ancestors():
            if ancestor.tag == "template" or (ancestor.tag == "task" and semantics.is_named_definition(ancestor)):
                return ancestor.get("name")
        return None

    def prepare(self, root: Element, library: "TaskLibrary") -> None:
        """What the template decides, refused before anything runs (the checker reports the same
        codes at the same places): names nothing binds, unknown targets, unbound params."""
        self.refuse_unresolved(root)
        self.link_inline(root, library)
        self.link(library)

    def refuse_unresolved(self, root: Element) -> None:
        """Refuse a file whose text uses a name nothing can bind (TD402 errors: a template's
        unknown variable, last_output outside a sequential's later steps)."""
        model = self.file_model(root)
        for problem in model.variable_problems():
            if problem.error:
                self.fail("TD402", problem.message, problem.use.element)
        for problem in model.from_problems():
            if problem.error:
                self.fail("TD403", problem.message, problem.item)

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
            if el.children:  # a misspelt <case>: the grammar's TD101
                self.fail("TD101", f"<{el.children[0].tag}> is not allowed in <cond>: expected <case>", el.children[0])
            self.fail("TD206", "<cond> needs at least one <case>", el)
        default = el.child("default")
        return ast.Cond(cases, self.only_child(default, f"{label}/default") if default is not None else None, label,
                        origin=(self.path, el.start, el.span.end))

    def inputs(self, el: Element, task_name: str) -> list[ast.Input]:
        result = []
        for inp in semantics.inputs(el):
            name = inp.get("name") or ""
            kind = semantics.input_source(inp)
            if kind == "from":  # a variable, with accessors: from="report.summary", from="rows[0]"
                written = facts.from_name(inp)
                ph = parse_placeholder(written)
                source = ast.VarArg(ph.name, ph.path, written) if ph.kind == "var" else ast.VarArg(written)
            elif kind == "task":
                source = ast.TaskArg(self.node(self.value_child(inp), f"{task_name}/inputs/{name}"))
            elif kind == "text":
                source = ast.TextArg(inp.text.strip())
            elif semantics.unbound_placeholder(inp):
                self.fail("TD202", semantics.unbound_placeholder(inp), inp)
            elif semantics.empty_input_is_text(inp):
                source = ast.TextArg("")  # nothing could bind it: the empty literal
            else:
                source = None  # a placeholder: bound by the reduce operator or a caller
            result.append(ast.Input(name, source, source.name if isinstance(source, ast.VarArg) else None))
        return result

    def output_format(self, el: Element) -> dict | None:
        fmt = el.child("output_format")
        if fmt is None:
            return None
        schema = collapse(fmt.get("schema") or "") or None
        return {"type": enum_value(fmt.get("type"), "outputType") or "text", "schema": schema}

    def file_paths(self, el: Element) -> ast.FilePaths | None:
        fp = el.child("file_paths")
        if fp is None:
            return None
        source = enum_value(fp.get("source"), "pathSource") or "literal"
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
        defaults = [(i.get("name"), semantics.literal_default(i) is not None) for i in semantics.inputs(el) if i.get("name")]
        return TaskDefinition(name, semantics.task_kind(el), semantics.subtype(el),
                              {"parameters": params, "params": defaults, "kind": "task", "path": self.path,
                               "description": _text(el.child("description")) or ""}, node)

    def template_definition(self, el: Element) -> TaskDefinition:
        name = el.get("name")
        if not name:
            self.fail("TD207", "<template> needs a name", el)
        params = semantics.template_params(el)
        body = [c for c in el.children if c.tag == "task"]
        if not body:
            self.fail("TD102", f"<template> '{name}' is missing a required child: add <task>", el)
        if len(body) > 1:
            self.fail("TD107", f"<task> may appear only once in <template> '{name}'", body[1])
        defaults = facts.template_defaults(el)
        node = ast.Template(name, params, self.task(body[0], name), defaults=tuple(defaults))
        return TaskDefinition(name, semantics.task_kind(body[0]), semantics.subtype(body[0]),
                              {"parameters": params, "params": [(p, p in defaults) for p in params], "kind": "template",
                               "path": self.path,
                               "returns": el.get("returns"), "description": _text(body[0].child("description")) or ""},
                              node)


def refuse_malformed(doc, path: str | None = None) -> None:
    """Refuse (TD001, the checker's first message) a text that is not well-formed XML: a
    half-parsed tree would run something the author did not write."""
    from taskdsl.language.safexml import wellformedness

    _, problems = wellformedness(doc)
    if problems or len(doc.roots) > 1 or doc.root is None:
        message = problems[0].message if problems else (
            "the file holds no element" if doc.root is None else "a template file holds exactly one root element")
        raise CompileError("TD001", message, None, path)


def parse_entry(text: str, path: str | None = None) -> Element:
    """The root of the text a run starts from (refuse_malformed)."""
    doc = parse(text)
    refuse_malformed(doc, path)
    return doc.root


def compile_text(text: str, path: str | None = None):
    """(document root, Compiler) for text; raises CompileError if the text has no root element."""
    doc = parse(text)
    if doc.root is None:
        raise CompileError("TD001", "the file holds no element", None, path)
    return doc.root, Compiler(path)


def atomic_of(path: str, name: str, role: str, reason: str):
    """The atomic task (a template's body) defined as `name` in the file at `path`: the task a
    built-in or project template plays `role` with (the reparse template, the memory's matcher).
    TaskError (VALIDATION_ERROR, `reason`) when it cannot be read, does not compile or is not atomic."""
    from taskdsl.evaluator.ast import Atomic, Template
    from taskdsl.evaluator.results import TaskError
    from taskdsl.project.workspace import read_text

    text = read_text(path)
    if text is None:
        raise TaskError("VALIDATION_ERROR", f"{role} {path} cannot be read", reason)
    from taskdsl.rules.checker import check_text

    # a project's own template for a role is compiled outside a run's gate: the checker is its gate
    # (the compiler decides nothing of its own), and the refusal is the checker's first error
    result = check_text(text, path=path)
    errors = result.errors if result.well_formed else result.diagnostics
    if errors:
        first = errors[0]
        line, column = result.document.position(first.span.start)
        raise TaskError("VALIDATION_ERROR", f"{role} {path}:{line + 1}:{column + 1} does not check: {first.code} "
                        f"{first.message}", reason)
    try:
        definitions = Compiler(path).definitions(parse_entry(text, path))
    except CompileError as broken:
        raise TaskError("VALIDATION_ERROR", f"{role} {path} does not compile: {broken.code} {broken.message}",
                        reason) from None
    for definition in definitions:
        if definition.name == name:
            node = definition.ast_node
            node = node.body if isinstance(node, Template) else node
            if isinstance(node, Atomic):
                return node
    raise TaskError("VALIDATION_ERROR", f"{role} '{name}' ({path}) must be an atomic task or a template whose "
                    "task is atomic", reason)
