"""Run a task from the editor: the `taskdsl.runTask` command, its code lens and code action.

The pure parts (what is runnable, which shell commands a run may execute, which inputs are
missing, the result document) are plain functions over the document model and the evaluator's
AST, tested without a server. ``register_run(server)`` wires them to the pygls server: the run
goes to the background (an asyncio task) with work-done progress and cancellation, asks before
running shell commands, logs each step as it ends, writes a Markdown result document and returns
the structured result. See docs/run.md for the decisions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from taskdsl import names
from taskdsl.document import Document, Element
from taskdsl.library import bad_byte_offset
from taskdsl.templating import find_placeholders

log = logging.getLogger("taskdsl.run")

COMMAND = "taskdsl.runTask"
RUN_TITLE = "▶ Run task"
STATUS_COMPLETE, STATUS_FAILED, STATUS_CANCELLED = "COMPLETE", "FAILED", "CANCELLED"
PREVIEW = 200  # characters of a step's output in a log line


# ---------------------------------------------------------------------------------------------
# where runs are offered: the root, and each named task / template of a library file


@dataclass(frozen=True)
class RunTarget:
    """Something runnable in a file: ``name`` is what the command's ``task`` argument gets
    (None for the file's root entry), ``element`` where the lens goes."""

    name: str | None
    element: Element
    label: str  # what the user sees: the task's name, or the file stem


def file_stem(path: str | None) -> str:
    return names.file_stem(path) or "task"


def runnable_targets(document: Document, path: str | None = None) -> list[RunTarget]:
    """The root task, template, call or cond of a file; each template and named task of a
    library (a library itself is not runnable: it holds several entries)."""
    root = document.root
    if root is None:
        return []
    if root.tag == "task":
        return [RunTarget(None, root, root.get("name") or file_stem(path))]
    if root.tag == "template":
        return [RunTarget(None, root, root.get("name") or file_stem(path))]
    if root.tag in ("call", "cond"):
        return [RunTarget(None, root, file_stem(path))]
    if root.tag == "library":
        targets = []
        for child in root.children:
            name = child.get("name")
            if child.tag in ("template", "task") and name:
                targets.append(RunTarget(name, child, name))
        return targets
    return []


def _arguments(uri: str, target: RunTarget) -> list[Any]:
    return [uri] if target.name is None else [uri, target.name]


def run_command(uri: str, target: RunTarget, title: str = RUN_TITLE) -> types.Command:
    return types.Command(title=title, command=COMMAND, arguments=_arguments(uri, target))


def run_code_lenses(document: Document, uri: str, positions, path: str | None = None) -> list[types.CodeLens]:
    """A "▶ Run task" lens on the start tag of each runnable target."""
    lenses = []
    for target in runnable_targets(document, path):
        title = RUN_TITLE if target.name is None else f"{RUN_TITLE} '{target.name}'"
        lenses.append(types.CodeLens(range=positions.range(target.element.name_span),
                                     command=run_command(uri, target, title)))
    return lenses


def run_code_actions(document: Document, uri: str, range: types.Range, positions=None,
                     path: str | None = None, only: list[str] | None = None) -> list[types.CodeAction]:
    """"Run task" code actions (offered everywhere: Neovim 0.10 has no code lens). In a library
    file, the entry around the range; outside any, one action per entry. A request filtered by
    ``only`` (the client wants specific kinds) gets none: these actions have no kind."""
    if only:
        return []
    targets = runnable_targets(document, path)
    if not targets:
        return []
    if len(targets) > 1 or targets[0].name is not None:
        if positions is None:
            from taskdsl.features.util import Positions
            positions = Positions(document)
        offset = positions.offset(range.start)
        around = [t for t in targets if t.element.span.start <= offset <= t.element.span.end]
        targets = around or targets
    actions = []
    for target in targets:
        title = "Run task" if target.name is None else f"Run task '{target.name}'"
        actions.append(types.CodeAction(title=title, command=run_command(uri, target, title)))
    return actions


# ---------------------------------------------------------------------------------------------
# inputs: the command's arguments, then the template's literal inputs


@dataclass(frozen=True)
class InputPlan:
    values: dict[str, Any]  # what to pass to the run
    missing: list[str]  # required inputs with no value
    target: str  # the task's name for messages


def find_target(document: Document, task: str | None, path: str | None = None) -> Element | None:
    """The element a run of ``task`` starts from in this document (None: not defined here)."""
    for target in runnable_targets(document, path):
        if target.name == task or (task is not None and target.name is None and target.label == task):
            return target.element
    return None


def _literal(element: Element) -> str | None:
    """The literal value of an <input>: its text when it has no `from` and no nested task."""
    if element.get("from") or any(c.tag in ("task", "call", "cond") for c in element.children):
        return None
    return element.text.strip() if element.has_text else None


def _has_value(element: Element) -> bool:
    return bool(element.get("from")) or any(c.tag in ("task", "call", "cond") for c in element.children) \
        or element.has_text


def plan_inputs(target: Element | None, given: dict[str, Any] | None, label: str = "") -> InputPlan:
    """Inputs for a run of ``target`` (a <task> or a <template>).

    - a task: its inputs with a literal, a ``from`` or a nested task have a value; empty ones
      (placeholders) must come from ``given``;
    - a template: each param comes from ``given``, else from the literal <input> of the same
      name in its task (a default), else it is missing.
    Values of ``given`` are passed through; for a template, literal defaults are added."""
    given = dict(given or {})
    if target is None:
        return InputPlan(given, [], label)
    name = target.get("name") or label
    if target.tag == "template":
        body = target.child("task")
        literals: dict[str, str] = {}
        inputs_el = body.child("inputs") if body is not None else None
        for inp in (inputs_el.children_named("input") if inputs_el is not None else []):
            value = _literal(inp)
            if inp.get("name") and value is not None and "{{" not in value:
                literals[inp.get("name")] = value
        values, missing = dict(given), []
        for param in names.split_params(target.get("params")):
            if param in values:
                continue
            if param in literals:
                values[param] = literals[param]
            else:
                missing.append(param)
        return InputPlan(values, missing, name)
    if target.tag == "task":
        inputs_el = target.child("inputs")
        missing = [inp.get("name") for inp in (inputs_el.children_named("input") if inputs_el is not None else [])
                   if inp.get("name") and not _has_value(inp) and inp.get("name") not in given]
        return InputPlan(given, missing, name)
    return InputPlan(given, [], name)


def missing_inputs_message(plan: InputPlan) -> str:
    names = ", ".join(f"'{m}'" for m in plan.missing)
    noun = "input" if len(plan.missing) == 1 else "inputs"
    example = ", ".join(f'"{m}": "…"' for m in plan.missing)
    return (f"cannot run '{plan.target}': {noun} {names} {'has' if len(plan.missing) == 1 else 'have'} no value; "
            f"pass {'it' if len(plan.missing) == 1 else 'them'} in the command's inputs argument ({{{example}}})")


# ---------------------------------------------------------------------------------------------
# safety: the shell commands a run may execute (script tasks, file_paths source="command"),
# reachable through steps, inputs, conds, refs, calls and inline {{fn(…)}} calls


def script_commands(node: Any, library: Any = None) -> list[str]:
    """Every shell command the evaluation of ``node`` (an evaluator AST node) may run, in the
    order met, each once; refs and calls are followed through ``library`` (a TaskLibrary). A cond's
    every branch counts: which one runs is only known at run time. Commands keep their {{…}}."""
    return reach(node, library)[0]


def reach(node: Any, library: Any = None) -> tuple[list[str], bool]:
    """(shell commands, whether any atomic task may call a model) of a run of ``node``."""
    from taskdsl.evaluator import ast

    commands: list[str] = []
    atomic = [False]
    seen_nodes: set[int] = set()
    seen_names: set[str] = set()

    def add(command: str) -> None:
        command = command.strip()
        if command and command not in commands:
            commands.append(command)

    def call(name: str | None) -> None:
        if not name or name in seen_names or library is None:
            return
        seen_names.add(name)
        try:
            definition = library.get_task(name)
        except Exception:  # unknown: the run fails on it before anything runs there
            return
        visit(definition.ast_node)

    def text(value: str | None) -> None:
        for placeholder in find_placeholders(value or ""):
            if placeholder.kind == "call":
                call(placeholder.name)

    def arg(value: Any) -> None:
        if isinstance(value, ast.TaskArg):
            visit(value.node)
        elif isinstance(value, ast.TextArg):
            text(value.text)

    def visit(n: Any) -> None:
        if n is None or id(n) in seen_nodes:
            return
        seen_nodes.add(id(n))
        if isinstance(n, ast.Template):
            visit(n.body)
        elif isinstance(n, ast.FunctionCall):
            for _, value in n.args:
                arg(value)
            call(n.func_name)
        elif isinstance(n, ast.Cond):
            for case in n.cases:
                visit(case.body)
            visit(n.default)
        elif isinstance(n, ast.TaskNode):
            for inp in n.inputs:
                arg(inp.source)
            text(n.description)
            if n.file_paths is not None:
                if n.file_paths.source == "command":
                    add(n.file_paths.text)
                text(n.file_paths.text)
                for p in n.file_paths.paths:
                    text(p)
            if isinstance(n, ast.Script):
                text(n.command)
                add(n.command)
            elif isinstance(n, ast.Atomic):
                atomic[0] = True
                text(n.instructions)
                text(n.system)
            elif isinstance(n, ast.Sequential):
                for step in n.steps:
                    visit(step)
            elif isinstance(n, ast.Reduce):
                text(n.initial_value)
                visit(n.inner_task)
                visit(n.reduction_task)

    visit(node)
    return commands, atomic[0]


def consent_message(label: str, commands: list[str], limit: int = 10) -> str:
    shown = [f"  $ {' '.join(c.split())[:160]}" for c in commands[:limit]]
    more = [f"  … and {len(commands) - limit} more"] if len(commands) > limit else []
    noun = "this shell command" if len(commands) == 1 else f"these {len(commands)} shell commands"
    return "\n".join([f"Running '{label}' executes {noun}:", *shown, *more,
                      "Run it? (set taskdsl.run.allowScripts to skip this question)"])


# ---------------------------------------------------------------------------------------------
# what happened: steps recorded from the evaluator's events, and the result document


@dataclass
class StepRecord:
    path: str
    kind: str
    name: str
    status: str = "RUNNING"  # RUNNING | COMPLETE | FAILED | CANCELLED
    content: str = ""
    duration_s: float | None = None
    tokens: dict[str, int] | None = None
    error: dict | None = None
    started: float = 0.0

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "name": self.name, "status": self.status,
                "content": self.content, "duration_s": self.duration_s, "tokens": self.tokens,
                "error": self.error}


def _tokens(notes: dict | None) -> dict[str, int] | None:
    notes = notes or {}
    prompt, completion = notes.get("prompt_tokens"), notes.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return {"prompt": prompt if isinstance(prompt, int) else 0,
            "completion": completion if isinstance(completion, int) else 0}


class StepRecorder:
    """Turns the evaluator's begin/end/error events into StepRecords (in begin order)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.steps: list[StepRecord] = []
        self._open: dict[str, list[StepRecord]] = {}

    def on_event(self, event: dict) -> StepRecord | None:
        kind = event.get("event")
        path = str(event.get("path") or "")
        if kind == "begin":
            step = StepRecord(path, str(event.get("kind") or ""), str(event.get("name") or ""), started=self.clock())
            self.steps.append(step)
            self._open.setdefault(path, []).append(step)
            return step
        if kind in ("end", "error"):
            stack = self._open.get(path)
            if not stack:
                return None
            step = stack.pop()
            step.duration_s = round(self.clock() - step.started, 3)
            if kind == "end":
                result = event.get("result")
                step.status = "COMPLETE"
                step.content = getattr(result, "content", "") if result is not None else ""
                step.tokens = _tokens(getattr(result, "notes", None))
            else:
                step.status = "FAILED"
                step.error = jsonable(event.get("error"))
            return step
        return None

    def cancel_open(self) -> None:
        for step in self.steps:
            if step.status == "RUNNING":
                step.status = STATUS_CANCELLED
                step.duration_s = round(self.clock() - step.started, 3)

    def total_tokens(self) -> dict[str, int] | None:
        leaves = [s.tokens for s in self.steps if s.tokens]
        if not leaves:
            return None
        return {"prompt": sum(t["prompt"] for t in leaves), "completion": sum(t["completion"] for t in leaves)}


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


@dataclass
class RunReport:
    """Everything the result document and the command's answer say about one run."""

    file: str
    label: str
    task: str | None
    model: str
    status: str
    content: str = ""
    parsed_content: Any = None
    steps: list[StepRecord] = field(default_factory=list)
    error: dict | None = None
    duration_s: float = 0.0
    tokens: dict[str, int] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    result_uri: str | None = None
    trace_uri: str | None = None

    def to_json(self) -> dict:
        return jsonable({
            "status": self.status, "content": self.content, "parsed_content": self.parsed_content,
            "steps": [s.to_json() for s in self.steps], "error": self.error, "duration_s": self.duration_s,
            "tokens": self.tokens, "task": self.task, "label": self.label, "model": self.model,
            "result_uri": self.result_uri, "trace_uri": self.trace_uri,
        })


def fence(text: str, info: str = "text") -> str:
    """A fenced code block that no backtick run inside ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def _tokens_text(tokens: dict[str, int] | None) -> str | None:
    if not tokens:
        return None
    return f"{tokens['prompt']} prompt + {tokens['completion']} completion"


def render_result(report: RunReport) -> str:
    """The Markdown result document of a run."""
    lines = [f"# {report.label}: {report.status}", ""]
    lines.append(f"- File: `{report.file}`")
    if report.task:
        lines.append(f"- Task: `{report.task}`")
    lines.append(f"- Model: `{report.model}`")
    lines.append(f"- Duration: {_seconds(report.duration_s)}")
    if tokens := _tokens_text(report.tokens):
        lines.append(f"- Tokens: {tokens}")
    if report.inputs:
        lines.append("- Inputs: " + ", ".join(f"`{k}`" for k in report.inputs))
    if report.trace_uri:
        lines.append(f"- Trace: {report.trace_uri}")
    if report.error:
        lines += ["", "## Error", "", _error_text(report.error)]
    lines += ["", "## Output", ""]
    lines.append(fence(report.content) if report.content else "_(empty)_")
    if report.steps:
        lines += ["", "## Steps"]
        for number, step in enumerate(report.steps, 1):
            facts = [step.kind or "step", step.status, _seconds(step.duration_s)]
            if tokens := _tokens_text(step.tokens):
                facts.append(f"tokens {tokens}")
            lines += ["", f"### {number}. `{step.path}`", "", " · ".join(facts), ""]
            if step.error:
                lines.append(_error_text(step.error))
            elif step.status == "COMPLETE":
                lines.append(fence(step.content) if step.content else "_(empty output)_")
            else:
                lines.append(f"_({step.status.lower()})_")
    return "\n".join(lines) + "\n"


def _error_text(error: dict) -> str:
    head = f"**{error.get('type') or 'ERROR'}**" + (f" ({error['reason']})" if error.get("reason") else "")
    text = f"{head}: {error.get('message') or ''}"
    details = error.get("details") or {}
    if isinstance(details, dict) and details.get("step_path"):
        text += f"\n\nFailed step: `{details['step_path']}`"
    return text


def step_log_line(step: StepRecord) -> str:
    mark = {"COMPLETE": "✓", "FAILED": "✗"}.get(step.status, "•")
    head = f"{mark} {step.path} ({step.kind}, {_seconds(step.duration_s)}"
    if tokens := _tokens_text(step.tokens):
        head += f", {tokens} tokens"
    head += ")"
    if step.error:
        return f"{head}: {step.error.get('message') or step.error}"
    preview = " ".join(step.content.split())
    if len(preview) > PREVIEW:
        preview = preview[:PREVIEW] + "…"
    return f"{head}: {preview}" if preview else head


def error_json(error: BaseException) -> dict:
    """The structured error of any failure (TaskError, TemplateErrors, CompileError, other)."""
    to_json = getattr(error, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    diagnostics = getattr(error, "diagnostics", None)
    if diagnostics is not None:  # runner.TemplateErrors
        return {"type": "VALIDATION_ERROR", "reason": "template_errors",
                "message": template_errors_message(error), "details": {"count": len(diagnostics)}}
    code = getattr(error, "code", None)
    if code:  # compiler.CompileError
        return {"type": "VALIDATION_ERROR", "reason": code, "message": f"{code}: {getattr(error, 'message', error)}",
                "details": {}}
    return {"type": "TASK_FAILURE", "reason": "internal_error",
            "message": f"{type(error).__name__}: {error}", "details": {}}


def template_errors_message(error: Any, text: str | None = None) -> str:
    """One line for runner.TemplateErrors: the count and the first errors with line:column."""
    diagnostics = list(getattr(error, "diagnostics", []))
    document = _parse(text) if text is not None else None
    first = []
    for d in diagnostics[:3]:
        where = ""
        if document is not None and getattr(d, "span", None) is not None:
            line, col = document.position(d.span.start)
            where = f"{line + 1}:{col + 1} "
        first.append(f"{where}{d.code} {d.message}")
    more = f" (and {len(diagnostics) - 3} more)" if len(diagnostics) > 3 else ""
    return f"the template has {len(diagnostics)} error(s); fix them before running: " + "; ".join(first) + more


# ---------------------------------------------------------------------------------------------
# the command inside the server


def parse_arguments(args: tuple | list) -> dict:
    """taskdsl.runTask arguments: positional ``[uri, task?, inputs?, model?, options?]`` or one
    object ``{uri, task?, inputs?, model?, wait?}``. Raises ValueError naming what is wrong."""
    args = list(args)
    if len(args) == 1 and isinstance(args[0], dict):
        spec = dict(args[0])
    else:
        names = ["uri", "task", "inputs", "model", "options"]
        if len(args) > len(names):
            raise ValueError(f"taskdsl.runTask takes at most {len(names)} arguments (uri, task, inputs, model, "
                             f"options), got {len(args)}")
        spec = dict(zip(names, args))
        options = spec.pop("options", None)
        if options is not None and not isinstance(options, dict):
            raise ValueError("taskdsl.runTask: options must be an object such as {\"wait\": false}")
        spec.update(options or {})
    uri, task, inputs, model = spec.get("uri"), spec.get("task"), spec.get("inputs"), spec.get("model")
    if not isinstance(uri, str) or not uri:
        raise ValueError("taskdsl.runTask needs the document's uri as its first argument")
    if task is not None and not (isinstance(task, str) and task):
        raise ValueError("taskdsl.runTask: task must be a task or template name (or null for the root task)")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, dict) or not all(isinstance(k, str) for k in inputs):
        raise ValueError("taskdsl.runTask: inputs must be an object of input names to values")
    if model is not None and not (isinstance(model, str) and model):
        raise ValueError("taskdsl.runTask: model must be a model identifier such as taskdsl/echo")
    wait = spec.get("wait")
    if wait is not None and not isinstance(wait, bool):
        raise ValueError("taskdsl.runTask: wait must be true or false")
    return {"uri": uri, "task": task, "inputs": dict(inputs), "model": model, "wait": wait}


def _failure(message: str, reason: str, type_: str = "VALIDATION_ERROR", **details) -> dict:
    return {"type": type_, "reason": reason, "message": message, "details": jsonable(details)}


def results_folder(trace_dir: str | None) -> str:
    folder = trace_dir or os.path.join(tempfile.gettempdir(), "taskdsl-runs")
    os.makedirs(folder, exist_ok=True)
    return folder


class Runs:
    """The runs of one server: each is an asyncio task, several may overlap."""

    def __init__(self, server):
        self.server = server
        self.ids = itertools.count(1)
        self.active: dict[int, asyncio.Task] = {}

    # -- server state, read defensively (the server module owns it) --------------------------

    def settings(self):
        state = getattr(self.server, "state", None)
        settings = getattr(state, "settings", None)
        if settings is None:
            from taskdsl.settings import Settings

            settings = Settings()
        return settings

    def capabilities(self) -> types.ClientCapabilities:
        try:
            return self.server.client_capabilities or types.ClientCapabilities()
        except Exception:
            return types.ClientCapabilities()

    def supports_progress(self) -> bool:
        window = self.capabilities().window
        return bool(window and window.work_done_progress)

    def supports_show_document(self) -> bool:
        window = self.capabilities().window
        return bool(window and window.show_document and window.show_document.support)

    def waits_by_default(self) -> bool:
        """Whether the command answers when the run ends (the structured result) or at once.
        Emacs' eglot executes commands with a blocking jsonrpc-request (10 s timeout): it gets
        an immediate answer and the result through the log, messages and the result document."""
        state = getattr(self.server, "state", None)
        name = str(getattr(state, "client_name", None) or "")
        return "eglot" not in name.lower()

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.server.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:
            log.debug("logMessage failed", exc_info=True)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.server.window_show_message(types.ShowMessageParams(type=kind, message=message))
        except Exception:
            log.debug("showMessage failed", exc_info=True)

    def document_text(self, uri: str, path: str) -> str:
        try:
            if uri in self.server.workspace.text_documents:
                return self.server.workspace.get_text_document(uri).source
        except Exception:
            pass
        # as the index reads it (one reader), but a byte that is not UTF-8 is an error here
        with open(path, encoding="utf-8-sig", newline="") as f:
            return f.read()

    # -- the command ---------------------------------------------------------------------------

    async def command(self, args: tuple) -> dict:
        try:
            spec = parse_arguments(args)
        except ValueError as e:
            self.show(str(e), types.MessageType.Error)
            return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None,
                    "error": _failure(str(e), "arguments")}
        outer = self._request_future()
        run_id = next(self.ids)
        task = asyncio.ensure_future(self.execute(run_id, spec["uri"], spec["task"], spec["inputs"], spec["model"]))
        self.active[run_id] = task
        task.add_done_callback(lambda _: self.active.pop(run_id, None))
        if outer is not None:  # $/cancelRequest of this executeCommand cancels the run
            loop = asyncio.get_running_loop()

            def on_outer_done(future) -> None:
                if future.cancelled():
                    loop.call_soon_threadsafe(task.cancel)

            outer.add_done_callback(on_outer_done)
        wait = spec["wait"] if spec["wait"] is not None else self.waits_by_default()
        if not wait:
            return {"status": "RUNNING", "run": run_id, "content": "", "steps": [], "error": None, "result_uri": None}
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:  # the request itself was cancelled (or the server shuts down)
            task.cancel()
            raise

    def _request_future(self):
        """The future pygls keeps for the executeCommand request being handled: cancelled by
        $/cancelRequest. (pygls runs the command's coroutine as a separate task that the cancel
        does not reach, so the run watches this future.)"""
        protocol = getattr(self.server, "protocol", None)
        try:
            return protocol._request_futures.get(protocol.msg_id)
        except Exception:
            return None

    async def execute(self, run_id: int, uri: str, task: str | None, inputs: dict, model: str | None) -> dict:
        try:
            return await self._execute(run_id, uri, task, inputs, model)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a failing run never takes the server down
            log.exception("run %s of %s failed unexpectedly", run_id, uri)
            failure = error_json(error)
            self.show(f"taskdsl: the run failed: {failure['message']}", types.MessageType.Error)
            return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None, "error": failure}

    async def _execute(self, run_id: int, uri: str, task: str | None, inputs: dict, model: str | None) -> dict:
        from taskdsl.evaluator import runner
        from taskdsl.features.util import uri_to_path

        settings = self.settings()
        path = uri_to_path(uri)

        def refuse(message: str, reason: str, status: str = STATUS_FAILED, **details) -> dict:
            kind = types.MessageType.Error if status == STATUS_FAILED else types.MessageType.Warning
            self.show(f"taskdsl: {message}", kind)
            self.log(f"[run {run_id}] {message}", kind)
            return {"status": status, "content": "", "steps": [], "result_uri": None,
                    "error": _failure(message, reason, **details)}

        if path is None:
            return refuse(f"only files can be run, not {uri}", "not_a_file")
        try:
            text = self.document_text(uri, path)
        except OSError as e:
            return refuse(f"cannot read {path}: {e.strerror}", "unreadable")
        except UnicodeDecodeError as e:
            return refuse(f"cannot run {os.path.basename(path)}: it is not UTF-8 text (byte {bad_byte_offset(path, e)})", "unreadable")
        document = _parse(text)
        target = find_target(document, task, path)
        label = task or (runnable_targets(document, path)[0].label if runnable_targets(document, path) else file_stem(path))
        if task is None and document.root is not None and document.root.tag == "library":
            names = [t.name for t in runnable_targets(document, path)]
            return refuse(f"{os.path.basename(path)} is a library: choose one of its tasks to run "
                          f"({', '.join(names) or 'it defines none'})", "no_entry", tasks=names)
        plan = plan_inputs(target, inputs, label)
        if plan.missing:
            if getattr(getattr(self.server, "state", None), "client_prompts_for_inputs", False):
                # the client (the VS Code extension) asks for them and runs again: no error toast
                return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None,
                        "error": _failure(missing_inputs_message(plan), "missing_input", missing=plan.missing)}
            return refuse(missing_inputs_message(plan), "missing_input", missing=plan.missing)

        # what would run: check, compile, collect the shell commands (off the event loop)
        loop = asyncio.get_running_loop()
        library_paths = tuple(settings.library_paths) + runner.env_library_paths()
        errors = await loop.run_in_executor(None, runner.check_errors, text, path)
        if errors:
            return refuse(template_errors_message(runner.TemplateErrors(path, errors), text), "template_errors",
                          count=len(errors))
        try:
            library, root, compiler = await loop.run_in_executor(None, runner.build_library, path, text, library_paths)
            node, _ = runner.entry_node(root, compiler, library, task, plan.values)
        except Exception as error:
            failure = error_json(error)
            return refuse(failure["message"], failure.get("reason") or "compile_error")
        commands, calls_models = reach(node, library)
        if commands and not settings.run_allow_scripts:
            if not await self.consent(label, commands):
                return refuse(f"the run of '{label}' was not started: its shell commands were declined",
                              "scripts_declined", STATUS_CANCELLED, commands=commands)
        if calls_models:  # litellm's first import takes seconds: never on the event loop
            from taskdsl.evaluator.providers import load_litellm

            await loop.run_in_executor(None, load_litellm)
        return await self.run(run_id, path, text, label, task, plan.values, model, settings, library_paths)

    async def consent(self, label: str, commands: list[str]) -> bool:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=consent_message(label, commands),
            actions=[types.MessageActionItem(title="Run"), types.MessageActionItem(title="Cancel")])
        try:
            answer = await self.server.window_show_message_request_async(params)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("window/showMessageRequest failed: the scripts do not run", exc_info=True)
            return False
        return answer is not None and answer.title == "Run"

    async def run(self, run_id: int, path: str, text: str, label: str, task: str | None, inputs: dict,
                  model: str | None, settings, library_paths: tuple[str, ...]) -> dict:
        from taskdsl.evaluator import runner
        from taskdsl.evaluator.handler import HandlerConfig
        from taskdsl.features.util import path_to_uri

        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = f"{file_stem(path)}{'-' + re.sub(r'[^A-Za-z0-9_.-]', '_', task) if task else ''}-{stamp}-{os.getpid()}-{run_id}"
        trace_path = None
        if settings.trace_dir:
            try:
                trace_path = os.path.join(results_folder(settings.trace_dir), base + ".trace.jsonl")
            except OSError as e:
                self.log(f"[run {run_id}] cannot write a trace in {settings.trace_dir}: {e.strerror}",
                         types.MessageType.Warning)
        recorder = StepRecorder()
        token = await self.begin_progress(run_id, label)
        this = asyncio.current_task()
        if token is not None:
            future = self.server.work_done_progress.tokens.get(token)
            if future is not None:  # the client's progress UI cancels the run
                future.add_done_callback(lambda f: f.cancelled() and this is not None and this.cancel())

        def on_event(event: dict) -> None:
            step = recorder.on_event(event)
            if step is None:
                return
            if event.get("event") == "begin":
                if token is not None:
                    self.server.work_done_progress.report(token, types.WorkDoneProgressReport(
                        message=step.path, cancellable=True))
            else:
                kind = types.MessageType.Error if step.status == "FAILED" else types.MessageType.Info
                self.log(f"[run {run_id}] {step_log_line(step)}", kind)

        self.log(f"[run {run_id}] running '{label}' ({path})")
        config = HandlerConfig(model=settings.default_model, timeout=settings.run_timeout)
        # the editor's buffer, saved or not; already checked above (off the event loop)
        kwargs = dict(task=task, inputs=inputs, model=model, trace=trace_path, on_event=on_event,
                      library_paths=library_paths, config=config, check=False, text=text,
                      globals=dict(settings.global_values))
        started = time.monotonic()
        status, content, parsed, error = STATUS_COMPLETE, "", None, None
        try:
            result = await asyncio.wait_for(runner.run_file(path, **kwargs), settings.run_timeout)
            content, parsed = result.content, result.parsed_content
            status = STATUS_FAILED if result.status == STATUS_FAILED else STATUS_COMPLETE
        except asyncio.TimeoutError:
            status = STATUS_FAILED
            error = _failure(f"the run took longer than taskdsl.run.timeout ({settings.run_timeout:g} s) and was "
                             "stopped", "timeout", "TASK_FAILURE", timeout=settings.run_timeout)
        except asyncio.CancelledError:
            status = STATUS_CANCELLED
            error = _failure("the run was cancelled", "cancelled", "TASK_FAILURE")
        except Exception as e:  # TaskError, TemplateErrors, CompileError, or a bug
            status = STATUS_FAILED
            error = error_json(e)
            if getattr(e, "diagnostics", None) is not None:
                error["message"] = template_errors_message(e, text)
        recorder.cancel_open()
        report = RunReport(file=path, label=label, task=task, model=model or settings.default_model, status=status,
                           content=content, parsed_content=parsed, steps=recorder.steps, error=error,
                           duration_s=round(time.monotonic() - started, 3), tokens=recorder.total_tokens(),
                           inputs=inputs, trace_uri=path_to_uri(trace_path) if trace_path else None)
        try:
            result_path = os.path.join(results_folder(settings.trace_dir), base + ".md")
            with open(result_path, "w", encoding="utf-8") as f:
                f.write(render_result(report))
            report.result_uri = path_to_uri(result_path)
        except OSError as e:
            self.log(f"[run {run_id}] cannot write the result document: {e}", types.MessageType.Warning)
        self.end_progress(token, status)
        summary = {STATUS_COMPLETE: "finished", STATUS_FAILED: "failed", STATUS_CANCELLED: "was cancelled"}[status]
        message = f"run of '{label}' {summary} in {report.duration_s:.2f} s"
        if error:
            message += f": {error.get('message')}"
        self.log(f"[run {run_id}] {message}" + (f" (result: {report.result_uri})" if report.result_uri else ""),
                 types.MessageType.Error if status == STATUS_FAILED else types.MessageType.Info)
        if status == STATUS_FAILED:
            self.show(f"taskdsl: {message}", types.MessageType.Error)
        if status != STATUS_CANCELLED and report.result_uri:
            await self.open_result(report.result_uri, message)
        return report.to_json()

    async def begin_progress(self, run_id: int, label: str) -> str | None:
        if not self.supports_progress():
            return None
        token = f"taskdsl-run-{os.getpid()}-{run_id}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:
            log.warning("window/workDoneProgress/create failed: no progress for this run", exc_info=True)
            return None
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=f"taskdsl: {label}", message="starting", cancellable=True))
        return token

    def end_progress(self, token: str | None, status: str) -> None:
        if token is None:
            return
        message = {STATUS_COMPLETE: "done", STATUS_FAILED: "failed", STATUS_CANCELLED: "cancelled"}[status]
        try:
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        finally:
            self.server.work_done_progress.tokens.pop(token, None)

    async def open_result(self, result_uri: str, message: str) -> None:
        if self.supports_show_document():
            try:
                await self.server.window_show_document_async(types.ShowDocumentParams(uri=result_uri, take_focus=False))
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("window/showDocument failed", exc_info=True)
        self.show(f"taskdsl: {message}; result: {result_uri}")


def _parse(text: str) -> Document:
    from taskdsl.document import parse

    return parse(text)


def register_run(server) -> Runs:
    """Register the taskdsl.runTask command and the code lens with ``server`` (once)."""
    runs = Runs(server)

    @server.command(COMMAND)
    async def run_task(ls, *args):
        return await runs.command(args)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls, params: types.CodeLensParams):
        try:
            analysis = ls.analysis(params.text_document.uri)
            return run_code_lenses(analysis.document, params.text_document.uri, analysis.positions, analysis.path)
        except Exception:
            log.exception("code lens failed")
            return []

    return runs
