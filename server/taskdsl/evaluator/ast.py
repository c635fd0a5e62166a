"""AST node classes. Each node evaluates itself: `await node.eval(env, ctx) -> TaskResult`.

`env` is the lexical environment (Env); `ctx` carries what flows along the run rather than by
name: the run's shared state, the step path, the previous step's result (stdin of a script, the
tested output of a cond), accumulated step outputs and the inherited context text.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from taskdsl.support import jsontext
from taskdsl.language import cond as cond_expr
from taskdsl.project import confine
from taskdsl.language import shell
from taskdsl.support.reading import ReadBudget, ReadRefused, read_bytes
from taskdsl.support.redaction import Redactor
from taskdsl.language.templating import Placeholder, find_placeholders

from taskdsl.evaluator.dry import DryRun, RunOnlyNotes, Sent, described, holds_marker, is_optional, joined, mark, optional
from taskdsl.evaluator.env import Env, UnboundVariable
from taskdsl.evaluator.handler import Handler, HandlerConfig
from taskdsl.evaluator.memory import ContextGenerationInput, FilesRead, MemorySystem, fresh_context
from taskdsl.evaluator.outputs import read_answer
from taskdsl.evaluator import usage
from taskdsl.evaluator.results import COMPLETE, TaskError, TaskResult, failure
from taskdsl.evaluator.script import run_script
from taskdsl.evaluator.trace import Trace


# ---------------------------------------------------------------- run context

@dataclass
class RunState:
    """Shared by every node of one run."""
    config: HandlerConfig
    global_env: Env
    model_override: str | None = None  # --model: wins over a task's <model>
    memory: MemorySystem = field(default_factory=MemorySystem)
    trace: Trace = field(default_factory=lambda: Trace(None))
    on_event: Callable[[dict], Any] | None = None
    on_script_start: Callable[[int], Any] | None = None  # pid of each script's process group
    root: str = ""  # the project root: what a run may read (taskdsl.project.confine), with allow_read
    allow_read: tuple[str, ...] = ()
    redactor: Redactor = field(default_factory=lambda: Redactor(()))  # masks secrets in what is shown
    budget: Any = None  # taskdsl.evaluator.cost.Budget of --max-cost, or None
    reads: Any = None  # taskdsl.support.reading.ReadBudget: the files and bytes file_paths may read in all
    rendered: set = field(default_factory=set)  # Execution.key() of every command the plan itself ran
    dry: DryRun | None = None  # a dry run (taskdsl render, the preview): prompts recorded, nothing called (dry.py)
    script_env: dict[str, str] = field(default_factory=dict)  # added to every script's environment (a test's TMPDIR)
    allowed_commands: tuple[str, ...] = ()  # the shell commands of the plan the run was started with (its consent)
    agreed_models: Callable[[], frozenset[str]] | None = None  # the models of that plan (asked for when a re-plan needs it)
    agreed_reads: Callable[[], Any] | None = None  # (folder, consent.ReadFiles) of that plan (asked for by a re-plan)
    sources: dict[str, str | None] = field(default_factory=dict)  # path → the text each template was compiled from
    replans: list[dict] = field(default_factory=list)  # every re-planning of the run (taskdsl.task_system.replan)
    recover: Callable[..., Any] | None = None  # replan.recover for a run (a preview re-plans nothing)
    # the debugger (taskdsl debug): awaited before and after each task, ref, call and cond runs, as
    # on_step(phase "before"|"after", node, scope, ctx, detail); it may pause the run there
    on_step: Callable[..., Any] | None = None

    @property
    def preview(self) -> bool:
        "A dry run: no model is called, no script started; what only a run knows is a {{run: …}} placeholder."
        return self.dry is not None

    def emit(self, **event) -> None:
        "Tell the caller (progress, logs): secrets masked, as everything the run shows."
        if self.on_event is None:
            return
        if self.redactor.secrets:
            result, mask = event.get("result"), self.redactor.mask
            event = mask(event)
            if isinstance(result, TaskResult):
                event["result"] = replace(result, content=mask(result.content), notes=mask(result.notes),
                                          parsed_content=mask(result.parsed_content))
        self.on_event(event)

    async def step(self, phase: str, node: Any, scope: Any, ctx: Any, **detail) -> None:
        """The one hook of the debugger: before a node runs (its scope bound; an atomic task's
        prompt built) and after it (its result or error). Nothing when no debugger listens."""
        if self.on_step is not None:
            await self.on_step(phase, node, scope, ctx, detail)


MAX_CALL_DEPTH = 50  # well under Python's recursion limit at a few frames per level
#: failures of the whole run, not of one step: passed up unwrapped (a sequential's "step 1 failed: …"
#: at each of 50 nested levels made a recursion's message kilobytes long)
UNWRAPPED_REASONS = ("call_depth",)


def call_cycle(chain: tuple[str, ...]) -> list[str]:
    """The cycle a chain of calls ends in, each name once, in the order met from the first one the
    run reached, closed: ping → pong → ping."""
    last = chain[-1]
    start = max((i for i, name in enumerate(chain[:-1]) if name == last), default=None)
    if start is None:
        return []  # a deep chain that names no template twice: no cycle
    loop = list(chain[start:-1]) or [last]
    first = next(name for name in chain if name in loop)
    at = loop.index(first)
    return loop[at:] + loop[:at] + [first]


@dataclass(frozen=True)
class Ctx:
    run: RunState
    path: str = ""
    previous: TaskResult | None = None  # the previous step's result inside a sequential
    accumulated: str | None = None  # history passed on by an accumulating sequential
    inherited: str = ""  # context text inherited from the parent task
    calls: int = 0  # nested refs and calls on the way here (MAX_CALL_DEPTH bounds recursion)
    chain: tuple[str, ...] = ()  # the names called on the way here, outermost first (a cycle's message)
    locks: frozenset = frozenset()  # manual_xml / disable_reparsing set true by this task or one around it
    replans: tuple[dict, ...] = ()  # the re-plannings this structure runs inside (outermost first)
    exploring: bool = False  # a dry run inside a <cond> whose tested output only a run knows (every case shown)

    def at(self, segment: str, **changes) -> Ctx:
        return replace(self, path=f"{self.path}/{segment}" if self.path else segment, **changes)


def join_parts(ctx: Ctx, parts: list[str], separator: str) -> str:
    """The non-empty parts joined; in a dry run a block the run may leave out is glued to its
    neighbour (dry.joined), so its placeholder stands for the block and its separator, or nothing."""
    if ctx.run.preview:
        return joined(parts, separator)
    return separator.join(p for p in parts if p)


def wrapped(ctx: Ctx, tag: str, text: str) -> str:
    "`<tag>…</tag>` around text; in a dry run, text the run may leave out makes the block one it may leave out."
    if ctx.run.preview and is_optional(text):
        return optional(f"a <{tag}> block holding {described(text)}")
    return f"<{tag}>\n{text}\n</{tag}>"


# ---------------------------------------------------------------- values and {{…}}

def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, TaskResult):
        return value.content
    return json.dumps(value, ensure_ascii=False)


def follow(value: Any, path: tuple, shown: str) -> Any:
    "Apply .field / [index] accessors; a JSON string is parsed first. Raises KeyError(message)."
    for step in path:
        if isinstance(value, str):
            try:
                value = jsontext.loads(value)
            except json.JSONDecodeError:
                raise KeyError(f"'{shown}' is text, not JSON: it has no member {step!r}") from None
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict) and isinstance(step, str):
            has, near = cond_expr.members_instead(value, step)
            raise KeyError(f"'{shown}' has no member {step!r} ({has})" + (f": did you mean {near!r}?" if near else ""))
        else:
            raise KeyError(f"'{shown}' has no member {step!r}")
    return value


def lookup(env: Env, name: str, path: tuple, shown: str, task: str, dry: bool = False) -> Any:
    try:
        value = env.lookup(name)
    except UnboundVariable:
        visible = sorted(n for n in env.names() if n != "taskLibrary")
        raise failure(f"task '{task}': variable '{name}' is not defined (in {{{{{shown}}}}})"
                      + (f"; visible here: {', '.join(visible)}" if visible else ""),
                      "missing_variable", variable=name, task=task) from None
    if dry and path and holds_marker(value if isinstance(value, str) else None):  # a part of a value only a run has
        return mark(f"{shown}, from {described(value)}")
    try:
        return follow(value, path, name)
    except KeyError as e:
        raise failure(f"task '{task}': {e.args[0]} (in {{{{{shown}}}}})", "missing_variable",
                      variable=name, task=task) from None


async def placeholder_value(ph: Placeholder, env: Env, ctx: Ctx, task: str) -> Any:
    if ph.kind == "malformed":
        raise TaskError("VALIDATION_ERROR", f"task '{task}': malformed {{{{{ph.expr_text}}}}}: {ph.error}", "template")
    if ph.kind == "var":
        return lookup(env, ph.name, ph.path, ph.expr_text, task, ctx.run.preview)
    args = [(None, LiteralArg(a.value) if a.kind == "literal" else VarArg(a.name, a.path, a.text)) for a in ph.args]
    # FunctionCall adds the call:/ref: segment itself: adding one here too repeated it (call:x/call:x)
    result = await FunctionCall(ph.name, args, label=f"{{{{{ph.expr_text}}}}}").eval(env, ctx)
    return result.value


async def render(text: str, env: Env, ctx: Ctx, task: str) -> str:
    "Substitute every {{…}} of text."
    out, pos = [], 0
    for ph in find_placeholders(text):
        out += [text[pos:ph.start], as_text(await placeholder_value(ph, env, ctx, task))]
        pos = ph.end
    return "".join(out) + text[pos:]


@dataclass(frozen=True)
class Execution:
    """Everything a template gives the process of one of its commands: the script after
    substitution, the folder it runs in, every variable the template adds to its environment
    (TASKDSL_SUB_<n>, TASKDSL_INPUT_<NAME>) and its standard input. Built by `prepare_script`
    alone and started by `start_script` alone; a re-planned structure is held to the plan's
    executions by `key`, all of these fields, so a field added here is compared too."""
    script: str
    folder: str
    variables: tuple[tuple[str, str], ...]
    stdin: str  # what the process reads ("" when nothing comes before it)
    shown: str  # the script with each value shown in place (traces, messages)

    def key(self) -> tuple:
        return tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "shown")


async def prepare_script(command: str, env: Env, ctx: Ctx, task: str, folder: str,
                         exported: dict[str, str] | None = None, stdin: str | None = None) -> Execution:
    """The exact process a command starts: each {{…}} becomes a reference to a variable holding its
    value (taskdsl.language.shell), so no value is ever shell syntax. A placeholder no reference can stand
    for (TD801), or whose value a program would parse again (TD803), is refused before any value is computed.
    The plan's own executions are recorded; a re-planned structure may start only one of them, the same in
    every field (its script after substitution, folder, variables and standard input)."""
    unsafe = shell.unsafe_sites(command)
    if unsafe:
        raise TaskError("VALIDATION_ERROR", f"task '{task}': {shell.unsafe_message(unsafe[0])}", unsafe[0].code,
                        {"code": unsafe[0].code, "placeholder": unsafe[0].placeholder.expr_text})
    values = [as_text(await placeholder_value(site.placeholder, env, ctx, task)) for site in shell.sites(command)]
    rendered = shell.substitute(command, values)
    variables = {**(exported or {}), **rendered.env}
    execution = Execution(rendered.text, folder, tuple(sorted(variables.items())), stdin or "", rendered.shown())
    if not ctx.replans:
        ctx.run.rendered.add(execution.key())
    elif execution.key() not in ctx.run.rendered:  # a re-planned structure: held to what the plan ran
        raise TaskError("VALIDATION_ERROR", f"task '{task}': the re-planned structure runs `{rendered.text}` with "
                        "values, standard input or folder the run's plan did not run it with; the consent covered "
                        "only those", "replan_values", {"command": command})
    return execution


async def start_script(execution: Execution, ctx: Ctx, timeout: float, fail_on_error: bool) -> TaskResult:
    "Start what `prepare_script` built, and nothing else: the machine's additions (ctx.run.script_env) under it."
    return await run_script(execution.script, execution.folder, {**ctx.run.script_env, **dict(execution.variables)},
                            execution.stdin, timeout, fail_on_error, ctx.run.on_script_start)


# ---------------------------------------------------------------- arguments and inputs

@dataclass
class LiteralArg:
    value: Any

    async def eval(self, env: Env, ctx: Ctx, task: str = "") -> Any:
        return self.value


@dataclass
class TextArg:
    "Literal text that may hold {{…}}."
    text: str

    async def eval(self, env: Env, ctx: Ctx, task: str = "") -> Any:
        return await render(self.text, env, ctx, task)


@dataclass
class VarArg:
    name: str
    path: tuple = ()
    shown: str = ""

    async def eval(self, env: Env, ctx: Ctx, task: str = "") -> Any:
        return lookup(env, self.name, self.path, self.shown or self.name, task, ctx.run.preview)


@dataclass
class TaskArg:
    "A nested task or call: its result's value (parsed JSON if any, else text)."
    node: Any

    async def eval(self, env: Env, ctx: Ctx, task: str = "") -> Any:
        return (await self.node.eval(env, ctx)).value


@dataclass
class Input:
    name: str
    source: Any | None  # an *Arg, or None for an empty placeholder input
    from_name: str | None = None


async def gather_values(pairs: list[tuple[str, Any]], env: Env, ctx: Ctx, task: str) -> dict[str, Any]:
    "Evaluate named arguments concurrently (SPEC §7: a step's input tasks run with asyncio.gather)."
    values = await asyncio.gather(*(arg.eval(env, ctx.at(f"inputs/{name}"), task) for name, arg in pairs))
    return dict(zip((name for name, _ in pairs), values))


# ---------------------------------------------------------------- tasks

@dataclass(frozen=True)
class ContextSettings:
    inherit_context: str = "full"
    accumulate_data: bool = False
    accumulation_format: str = "notes_only"
    fresh_context: str = "disabled"
    explicit: frozenset = frozenset()


@dataclass
class FilePaths:
    source: str  # literal | command | description
    paths: list[str] = field(default_factory=list)
    text: str = ""  # the command or the description


@dataclass
class TaskNode:
    name: str  # for messages: the task's name, or its step path
    kind: str  # atomic | sequential | reduce | script
    settings: ContextSettings
    folder: str  # the template's directory (scripts run there, paths resolve there)
    inputs: list[Input] = field(default_factory=list)
    description: str = ""
    file_paths: FilePaths | None = None
    origin: tuple[str | None, int, int] | None = None  # (file, start, end) of the task's XML
    locks: frozenset = frozenset()  # the LOCKS this task sets to true

    async def eval(self, env: Env, ctx: Ctx, args: dict | None = None, settings: ContextSettings | None = None) -> TaskResult:
        settings = settings or self.settings
        if self.locks:
            ctx = replace(ctx, locks=ctx.locks | self.locks)
        ctx.run.emit(event="begin", path=ctx.path, kind=self.kind, name=self.name)
        started = time.monotonic()
        scope = None
        try:
            scope, ctx, names = await self.bind(env, ctx, args, settings)
            if self.kind != "atomic":  # an atomic task's "before" is when its prompt is built (Atomic.run)
                await ctx.run.step("before", self, scope, ctx)
            try:
                result = await self.run(scope, ctx, settings, names)
            except TaskError as error:  # another structure may avoid it (replan.recover), else it stands
                if ctx.run.recover is None:
                    raise
                result = await ctx.run.recover(self, error, scope, ctx, names)
            inherited = ctx.inherited if settings.inherit_context != "none" else ""
            result.notes["dataUsage"] = usage.data_usage(names, inherited, ctx.accumulated,
                                                         result.notes.get("dataUsage"))
        except TaskError as error:
            ctx.run.emit(event="error", path=ctx.path, kind=self.kind, name=self.name, error=error.to_json())
            ctx.run.trace.write(event="error", path=ctx.path, error=error.to_json(),
                                duration_s=round(time.monotonic() - started, 3))
            await ctx.run.step("after", self, scope, ctx, error=error)
            raise
        await ctx.run.step("after", self, scope, ctx, result=result)
        ctx.run.emit(event="end", path=ctx.path, kind=self.kind, name=self.name, result=result)
        ctx.run.trace.write(event="end", path=ctx.path, kind=self.kind, output=result.content,
                            duration_s=round(time.monotonic() - started, 3))
        return result

    async def bind(self, env: Env, ctx: Ctx, args: dict | None, settings: ContextSettings) -> tuple[Env, Ctx, list[str]]:
        """(scope, ctx, input names) the task runs with: its inputs evaluated in the caller's env,
        the args bound over them (a dry run binds them as the run does: a nested task's output is
        its {{run: …}} placeholder)."""
        scope = self.scope(env, settings)
        scope.update(args or {})
        todo = []
        for i in self.inputs:
            if i.name in (args or {}):
                continue
            if i.source is None:
                raise failure(f"task '{self.name}': input '{i.name}' has no value: pass it from the caller "
                              f"or with --input {i.name}=…", "missing_input", input=i.name, task=self.name)
            elif isinstance(i.source, VarArg) and not ctx.run.preview and not env.is_bound(i.source.name):
                # only an entry's from can name what nothing binds (elsewhere the checker's TD403
                # refuses the run): run directly, the task's caller is the run
                raise failure(f"task '{self.name}': input '{i.name}' has no value: from=\"{i.source.shown or i.source.name}\" "
                              f"names nothing the caller gives: pass it from the caller, or run with --input "
                              f"{i.source.name}=… (or --input {i.name}=…)", "missing_input",
                              input=i.name, task=self.name)
            else:
                todo.append((i.name, i.source))
        scope.update(await gather_values(todo, env, ctx, self.name))
        if settings.inherit_context == "none":
            ctx = replace(ctx, inherited="")
        declared = [i.name for i in self.inputs]
        names = declared + [n for n in (args or {}) if n not in declared]
        if isinstance(args, OperatorBindings):  # a script still gets them all as TASKDSL_INPUT_*
            names = InputNames(names, appended=declared)
        return scope, ctx, names

    def scope(self, env: Env, settings: ContextSettings) -> Env:
        "SPEC §4: full → child of the parent; none → child of the global env; subset → the `from` names only."
        global_env = env.root
        if settings.inherit_context == "full":
            return Env(outer=env)
        if settings.inherit_context == "subset":
            wanted = {i.from_name for i in self.inputs if i.from_name}
            return Env({n: env.lookup(n) for n in wanted if env.is_bound(n)}, outer=global_env)
        return Env(outer=global_env)

    async def own_context(self, scope: Env, ctx: Ctx, settings: ContextSettings, task_text: str) -> tuple[str, list[str]]:
        """Context this task works with (inherited text, file contents, fresh memory matches), and
        the paths of the files read."""
        parts = [ctx.inherited] if ctx.inherited and settings.inherit_context != "none" else []
        files = FilesRead()
        if self.file_paths:
            text, read = await self.read_files(scope, ctx)
            parts.append(text)
            files.extend(read)
        if settings.fresh_context == "enabled" and ctx.run.preview and holds_marker(task_text):
            parts.append(optional(f"the memory's matches for the text of {ctx.path}"))  # matched on what only a run knows
        elif settings.fresh_context == "enabled":  # the memory system (memory.py): matched files, read
            files.memory = await fresh_context(ctx, task_text)
            parts.append(files.memory.text)
        return join_parts(ctx, parts, "\n\n"), files

    async def read_files(self, scope: Env, ctx: Ctx) -> tuple[str, list[str]]:
        fp = self.file_paths
        if fp.source == "literal":
            paths = [await render(p, scope, ctx, self.name) for p in fp.paths]
        elif fp.source == "command":
            execution = await prepare_script(fp.text, scope, ctx, self.name, self.folder)
            if ctx.run.preview:  # a dry run starts no script
                return optional(f"the files listed by the file_paths command of {ctx.path}"), []
            out = await start_script(execution, ctx, 60, True)
            paths = [line.strip() for line in out.content.splitlines() if line.strip()]
        else:
            text = await render(fp.text, scope, ctx, self.name)
            if ctx.run.preview and holds_marker(text):
                return optional(f"the memory's files for the file_paths description of {ctx.path}"), []
            memory = ctx.run.memory
            found = await memory.get_relevant_context_for(ContextGenerationInput(text), ctx)
            # the index's paths (from the project root) as the template's own: relative to its folder
            paths = [os.path.relpath(os.path.join(memory.root or self.folder, p), self.folder) for p, _ in found.matches]
        blocks = []
        for path in paths:
            if ctx.run.preview and holds_marker(path):
                blocks.append(mark(f"the file block of the path {described(path)}"))
                continue
            full = os.path.join(self.folder, path)
            refusal = confine.read_refusal(full, ctx.run.root or self.folder, ctx.run.allow_read)
            if refusal:
                raise TaskError("VALIDATION_ERROR", f"task '{self.name}': file_paths: {refusal}", confine.READ_CODE,
                                {"code": confine.READ_CODE, "path": path})
            reads = ctx.run.reads or ReadBudget()
            try:  # opened once, checked on what was opened (taskdsl.support.reading), bounded by the run's budget
                limit = reads.next_limit(full)
                data = read_bytes(full, min(FILE_CHARS, limit), root=ctx.run.root or self.folder,
                                  allowed=ctx.run.allow_read, truncate=limit > FILE_CHARS)
                reads.took(len(data))
            except ReadRefused as e:
                if e.kind in ("size", "budget"):
                    if e.kind == "size":
                        e.why = f"would pass the {reads.total:,} bytes the run may read ([run] max_read_bytes)"
                    raise TaskError("RESOURCE_EXHAUSTION", f"task '{self.name}': file_paths: {e}", "reads",
                                    {"resource": "reads", "path": path}) from None
                raise TaskError("VALIDATION_ERROR", f"task '{self.name}': file_paths: {e}", confine.READ_CODE,
                                {"code": confine.READ_CODE, "path": path}) from None
            except OSError as e:
                raise failure(f"task '{self.name}': cannot read file_paths entry '{path}': {e.strerror}",
                              "file_paths", path=path) from None
            blocks.append(f'<file path="{path}">\n{data.decode("utf-8", errors="replace")}\n</file>')
        return "\n".join(blocks), paths

    async def run(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]) -> TaskResult:
        raise NotImplementedError


def input_blocks(names: list[str], scope: Env, quoted_text: str) -> str:
    """The inputs as tagged blocks, except those the prompt text already holds through {{…}}: as
    a variable ({{name}}, {{name.field}}) or as an inline call's argument ({{fn(name)}})."""
    names = getattr(names, "appended", names)
    quoted = set()
    for ph in find_placeholders(quoted_text or ""):
        if ph.kind == "var":
            quoted.add(ph.name)
        elif ph.kind == "call":
            quoted.update(arg.name for arg in ph.args if arg.kind == "var")
    return "\n".join(f'<input name="{n}">\n{as_text(scope[n])}\n</input>' for n in names if n not in quoted)


FILE_CHARS = 200_000  # the bytes of one file_paths file a prompt holds (the rest is cut)


FORMAT_INSTRUCTIONS = {
    "json": "Answer with JSON only{shape}.",
    "xml": "Answer in XML: put each part of the answer in its own element, e.g. <summary>…</summary>.",
}


@dataclass
class Atomic(TaskNode):
    instructions: str | None = None
    system: str | None = None
    model: str | None = None
    output_format: dict | None = None

    async def prompt(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]
                     ) -> tuple[str, str, list[str]]:
        """(system, user, files read): the messages this task sends, assembled once for runs and
        previews, and the paths of the files their context holds."""
        task_text = await render(self.instructions or self.description, scope, ctx, self.name)
        blocks = input_blocks(names, scope, self.instructions or self.description)
        user = task_text + ("\n\n" + blocks if blocks else "")
        context, files = await self.own_context(scope, ctx, settings, task_text)
        system_parts = [ctx.run.config.system_prompt]
        if self.system:
            system_parts.append(await render(self.system, scope, ctx, self.name))
        if self.output_format and self.output_format.get("type") in FORMAT_INSTRUCTIONS:
            schema = self.output_format.get("schema")
            system_parts.append(FORMAT_INSTRUCTIONS[self.output_format["type"]].format(
                shape=f" (a JSON {schema})" if schema else ""))
        if context:
            system_parts.append(wrapped(ctx, "context", context))
        if ctx.accumulated:
            system_parts.append(wrapped(ctx, "previous_steps", ctx.accumulated))
        return join_parts(ctx, system_parts, "\n\n"), user, files

    def dry_notes(self, ctx: Ctx, settings: ContextSettings, files: Any) -> dict:
        """The notes a dry run's answer has as far as an accumulating sequential passes them on: the
        memory's (known unless matched on a run-only text); a json_error or xml_error note only if
        the answer does not parse, so a placeholder the run may leave out."""
        kind = (self.output_format or {}).get("type")
        may_fail = kind == "xml" or (kind == "json" and not self.output_format.get("schema"))
        memory_unknown = settings.fresh_context == "enabled" and files.memory is None
        if memory_unknown or (may_fail and files.memory is not None):
            return RunOnlyNotes(mark(f"the notes of {ctx.path} as JSON"))
        if may_fail:
            return RunOnlyNotes(optional(f"the {kind}_error note of {ctx.path}"))  # if its answer does not parse
        return {"memory": files.memory.notes} if files.memory is not None else {}

    def model_for(self, run: RunState) -> str:
        "--model, else the task's <model>, else the configured model."
        return self.model_given(run.model_override, run.config.model)

    def model_given(self, override: str | None, default: str) -> str:
        "The model this task calls with `override` (--model) and `default` (the run's configured model)."
        return override or self.model or default

    async def run(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]) -> TaskResult:
        system, user, files = await self.prompt(scope, ctx, settings, names)
        run = ctx.run
        model = self.model_for(run)
        if run.dry is not None:  # the messages are the run's; the answer only a run has
            run.dry.sent.append(Sent(ctx.path, model, system, user))
            return TaskResult(mark(f"the output of {ctx.path}"), COMPLETE, self.dry_notes(ctx, settings, files))
        handler = Handler(replace(run.config, model=model))
        if run.budget is not None:  # --max-cost (taskdsl.evaluator.cost)
            run.budget.before(model, system + user)
        await run.step("before", self, scope, ctx, prompt={"system": system, "user": user}, model=model)
        run.emit(event="prompt", path=ctx.path, kind=self.kind, name=self.name, model=model, system=system, user=user)
        started = time.monotonic()
        try:
            result = await handler.execute(system, user, self.output_format)
        except TaskError as error:
            run.trace.write(event="model_call", path=ctx.path, model=model, prompt={"system": system, "user": user},
                            error=error.to_json(), duration_s=round(time.monotonic() - started, 3),
                            retries=error.details.get("retries") or [])
            raise
        run.trace.write(event="model_call", path=ctx.path, model=result.notes.get("model", model),
                        prompt={"system": system, "user": user}, output=result.content,
                        tokens={"prompt": result.notes.get("prompt_tokens"),
                                "completion": result.notes.get("completion_tokens")},
                        duration_s=round(time.monotonic() - started, 3),
                        **{k: result.notes[k] for k in CALL_NOTES if k in result.notes})  # calls.py: how it answered
        if run.budget is not None:
            run.budget.charge(result.notes.get("model", model), result.notes)
        result.notes["dataUsage"]["files"] = list(files)
        if files.memory is not None:  # what came from the memory system, and what matching cost
            result.notes["dataUsage"] = usage.summed([result.notes["dataUsage"], files.memory.usage,
                                                      {"memory": files.memory.read}])
            result.notes["memory"] = files.memory.notes
        return result


@dataclass
class Script(TaskNode):
    command: str = ""
    timeout: float = 60.0
    fail_on_error: bool = True
    output_format: dict | None = None

    async def run(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]) -> TaskResult:
        exported = {shell.INPUT_PREFIX + n.upper(): as_text(scope[n]) for n in names}
        stdin = ctx.previous.content if ctx.previous is not None else None
        execution = await prepare_script(self.command, scope, ctx, self.name, self.folder, exported, stdin)
        if ctx.run.dry is not None:  # refused as the run refuses it, but not started
            return TaskResult(mark(f"the output of the script {ctx.path}"), COMPLETE,
                              RunOnlyNotes(mark(f"the notes of the script {ctx.path} as JSON")))
        ctx.run.trace.write(event="script", path=ctx.path, command=execution.shown, cwd=self.folder)
        try:
            result = await start_script(execution, ctx, self.timeout, self.fail_on_error)
        except TaskError as error:
            error.message = f"task '{self.name}': {error.message}"
            raise
        reading = read_answer(result.content, self.output_format)
        if reading.mismatch:  # no model to ask again: a script's output is what it is
            raise TaskError("INVALID_OUTPUT", f"task '{self.name}': {reading.mismatch}", "schema_mismatch",
                            {"violations": [reading.mismatch], "schema": self.output_format.get("schema")})
        result.parsed_content = reading.parsed
        result.notes.update(reading.notes or {})
        return result


# about the call, not the output: never passed on (`warning`: the window nearly full; `retried`: the first answer's fault)
BOOKKEEPING_NOTES = {"model", "prompt_tokens", "completion_tokens", "context_limit", "duration_s", "dataUsage",
                     "fallback_from", "cached", "retries", "warning", "retried"}
CALL_NOTES = ("fallback_from", "cached", "retries")  # how a model call answered (evaluator/calls.py)


def history_text(history: list[dict], fmt: str, redactor: Redactor | None = None) -> str:
    """What an accumulating sequential passes on: notes only, or content and notes. The notes are
    JSON: every secret is masked in them before they are encoded (`redactor`), as JSON escaping would
    hide a secret holding a quote, a backslash or a line break from masking the prompt later."""
    redactor = redactor or Redactor(())
    lines = []
    for entry in history:
        notes = {k: v for k, v in entry["notes"].items() if k not in BOOKKEEPING_NOTES}
        head = f"[step {entry['step']}]"
        if fmt == "full_output":
            lines.append(f"{head} output:\n{entry['content']}")
        if isinstance(entry["notes"], RunOnlyNotes) and entry["notes"].optional:  # a dry step's, maybe none
            lines.append(optional(f"the line '{head} notes: …' with {described(entry['notes'].marker)}"))
        elif isinstance(entry["notes"], RunOnlyNotes):  # a dry step's: what the run writes here
            lines.append(f"{head} notes: {entry['notes'].marker}")
        elif notes:
            lines.append(f"{head} notes: {redactor.json(notes, ensure_ascii=False, default=str)}")
    if any(isinstance(entry["notes"], RunOnlyNotes) for entry in history):  # a dry run's (dry.joined)
        return joined(lines, "\n")
    return "\n".join(lines)


@dataclass
class Sequential(TaskNode):
    steps: list = field(default_factory=list)

    async def run(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]) -> TaskResult:
        context, files = await self.own_context(scope, ctx, settings, await render(self.description, scope, ctx, self.name))
        history: list[dict] = []
        previous = ctx.previous
        for number, step in enumerate(self.steps, 1):
            accumulated = history_text(history, settings.accumulation_format, ctx.run.redactor) if settings.accumulate_data else None
            step_ctx = ctx.at(f"steps[{number}]", previous=previous, accumulated=accumulated or None, inherited=context)
            try:
                previous = await step.eval(scope, step_ctx)
            except TaskError as error:
                if error.reason in UNWRAPPED_REASONS:
                    raise
                raise failure(f"task '{self.name}': step {number} of {len(self.steps)} failed: {error}",
                              "subtask_failure", step=number, step_path=step_ctx.path, error=error.to_json(),
                              partial_results=history) from None
            scope["last_output"] = previous.value
            history.append({"step": number, "content": previous.content, "notes": previous.notes,
                            "timestamp": time.time()})
        final = previous or TaskResult()
        # the history is dropped here (SPEC §7); only a step count and the summed usage stay in the notes
        own = [{"files": list(files)}] + ([files.memory.usage, {"memory": files.memory.read}] if files.memory else [])
        spent = usage.summed(own + [entry["notes"].get("dataUsage") or {} for entry in history])
        notes = {**final.notes, "steps": len(history), "dataUsage": spent}
        if isinstance(final.notes, RunOnlyNotes):  # a dry run's last step was a script: so are these notes
            notes, known = RunOnlyNotes(mark(f"the notes of {ctx.path} as JSON")), notes
            notes.update(known)
        if files.memory is not None:
            notes["memory"] = files.memory.notes
        return TaskResult(final.content, COMPLETE, notes, final.parsed_content)


class InputNames(list):
    "A task's input names, with the ones a prompt may append as <input> blocks (`appended`)."

    def __init__(self, names, appended):
        super().__init__(names)
        self.appended = list(appended)


class OperatorBindings(dict):
    """The names a reduce gives its parts (current_data, the item's name, current_result,
    accumulator, original_input): bound, but appended to a prompt only where the part declares
    them as inputs (an undeclared one is not the part's input: the item is not sent twice)."""


NO_PROGRESS_REPEATS = 2  # an answer that repeats its input unchanged this many times in a row stops the reduce


def model_answered(result: TaskResult) -> bool:
    "Whether a model call (answered by the model or the answer cache) made this result."
    counts = result.notes.get("dataUsage") or {}
    return bool(counts.get("model_calls") or counts.get("cached"))


@dataclass
class Reduce(TaskNode):
    initial_value: str = ""
    inner_task: TaskNode | None = None
    reduction_task: TaskNode | None = None

    async def run(self, scope: Env, ctx: Ctx, settings: ContextSettings, names: list[str]) -> TaskResult:
        accumulator: Any = await render(self.initial_value, scope, ctx, self.name)
        items = [(i.name, scope[i.name]) for i in self.inputs]
        # its own context (fresh_context: the memory's matches) is what both parts inherit
        context, files = await self.own_context(scope, ctx, settings, await render(self.description, scope, ctx, self.name))
        ctx = replace(ctx, inherited=context)
        own = [{"files": list(files)}] + ([files.memory.usage, {"memory": files.memory.read}] if files.memory else [])
        parts: list = list(own)  # every inner and reduction result: their usage is the reduce's
        unchanged = 0  # reductions in a row that answered with the accumulator they were given
        for index, (name, value) in enumerate(items, 1):  # 1-based, as steps[n] and case[n]
            inner_args = {"current_data": value, name: value}
            # a ref (FunctionCall) binds its target's params through its own <inputs>: no placeholders
            inner_args.update({i.name: value for i in getattr(self.inner_task, "inputs", ()) if i.source is None})
            # the operator's names are visible in the inner task's own <inputs> too
            try:
                inner = await self.inner_task.eval(Env(dict(inner_args), outer=scope), ctx.at(f"inner_task[{index}]"),
                                                   OperatorBindings(inner_args))
            except TaskError as error:
                if error.reason in UNWRAPPED_REASONS:
                    raise
                raise failure(f"task '{self.name}': inner_task failed on input {index} ('{name}'): {error}",
                              "subtask_failure", input_index=index, input_name=name,
                              accumulator=as_text(accumulator), error=error.to_json()) from None
            reduction_args = {"current_result": inner.value, "accumulator": accumulator, "original_input": value}
            try:
                reduced = await self.reduction_task.eval(Env(dict(reduction_args), outer=scope),
                                                         ctx.at(f"reduction_task[{index}]"),
                                                         OperatorBindings(reduction_args))
            except TaskError as error:
                if error.reason in UNWRAPPED_REASONS:
                    raise
                raise failure(f"task '{self.name}': reduction_task failed on input {index} ('{name}') with "
                              f"accumulator {as_text(accumulator)[:200]!r}: {error}", "subtask_failure",
                              input_index=index, input_name=name, accumulator=as_text(accumulator),
                              error=error.to_json()) from None
            parts += [inner, reduced]
            # SPEC §15: a model's *answer* that repeats its input twice is no progress; a reduction
            # no model answered (a script: the largest, the first match) keeps its accumulator on purpose
            repeated = model_answered(reduced) and as_text(reduced.value).strip() == as_text(accumulator).strip()
            unchanged = unchanged + 1 if repeated else 0
            if unchanged == NO_PROGRESS_REPEATS:
                raise TaskError("NO_PROGRESS", f"task '{self.name}': the reduction_task's model answered with the "
                                f"accumulator it was given, unchanged, {unchanged} times in a row (inputs "
                                f"{index - unchanged + 1} to {index}): the reduce is making no progress; a fold "
                                "that keeps its accumulator on purpose (the largest, a filter) decides in a "
                                "script reduction_task, which this rule does not hold",
                                "unchanged_accumulator",
                                {"input_index": index, "input_name": name, "accumulator": as_text(accumulator),
                                 "repeats": unchanged, "dataUsage": usage.summed(parts)})
            accumulator = reduced.value
        parsed = accumulator if not isinstance(accumulator, str) else None
        notes = {"inputs": len(items), "dataUsage": usage.summed(parts)}
        if files.memory is not None:
            notes["memory"] = files.memory.notes
        return TaskResult(as_text(accumulator), COMPLETE, notes, parsed)


# ---------------------------------------------------------------- cond

@dataclass
class Case:
    test_text: str
    test: cond_expr.Expr
    body: Any


@dataclass
class Cond:
    cases: list[Case]
    default: Any | None = None
    name: str = "cond"
    origin: tuple[str | None, int, int] | None = None  # (file, start, end) of the <cond>

    async def eval(self, env: Env, ctx: Ctx, args: dict | None = None, settings=None) -> TaskResult:
        ctx.run.emit(event="begin", path=ctx.path, kind="cond", name=self.name)
        try:
            await ctx.run.step("before", self, env, ctx)
            result = await self.choose(env, ctx)
        except TaskError as error:
            ctx.run.emit(event="error", path=ctx.path, kind="cond", name=self.name, error=error.to_json())
            await ctx.run.step("after", self, env, ctx, error=error)
            raise
        await ctx.run.step("after", self, env, ctx, result=result)
        ctx.run.emit(event="end", path=ctx.path, kind="cond", name=self.name, result=result)
        return result

    async def choose(self, env: Env, ctx: Ctx) -> TaskResult:
        if ctx.run.preview and holds_marker(env.lookup("last_output") if env.is_bound("last_output") else None):
            return await self.every_case(env, ctx)
        output = self.tested_output(env, ctx)
        for number, case in enumerate(self.cases, 1):
            try:
                chosen = cond_expr.holds(case.test, output)
            except cond_expr.ExprEvalError as e:
                raise failure(f"cond case {number} (test {case.test_text!r}): {e}", "cond_error",
                              case=number) from None
            if chosen:
                ctx.run.trace.write(event="cond", path=ctx.path, chosen=f"case[{number}]", test=case.test_text)
                return await case.body.eval(env, ctx.at(f"case[{number}]"))
            self.note_why_not(number, case, output, ctx)
        if self.default is not None:
            ctx.run.trace.write(event="cond", path=ctx.path, chosen="default")
            return await self.default.eval(env, ctx.at("default"))
        return TaskResult("", COMPLETE, {"cond": "no case matched", "dataUsage": usage.data_usage([], "", "", None)})

    def note_why_not(self, number: int, case: Case, output: Any, ctx: Ctx) -> None:
        """A case that did not hold because of what looks like a mistake (a member the output does not
        have, text compared with a number) is said, not only skipped: the run goes on as written."""
        hint = cond_expr.why_not(case.test_text, output)
        if hint:
            message = f"cond case {number} (test {case.test_text!r}) did not hold: {hint}"
            ctx.run.trace.write(event="note", path=ctx.path, message=message)
            ctx.run.emit(event="note", path=ctx.path, message=message)

    async def every_case(self, env: Env, ctx: Ctx) -> TaskResult:
        """A dry run's <cond> whose tested output only a run knows: every case and the default, each at
        its own path (the run takes one); its output is a placeholder."""
        exploring = replace(ctx, exploring=True)
        for number, case in enumerate(self.cases, 1):
            await case.body.eval(env, exploring.at(f"case[{number}]"))
        if self.default is not None:
            await self.default.eval(env, exploring.at("default"))
        where = ctx.path or "cond"
        return TaskResult(mark(f"the output of the case {where} chooses"), COMPLETE,
                          RunOnlyNotes(optional(f"the notes of the case {where} chooses as JSON")))

    def tested_output(self, env: Env, ctx: Ctx) -> Any:
        """The variable last_output: the previous step's output inside a sequential (bound from its
        second step on), an input of the run for a root <cond> (the checker's visibility, scope.py)."""
        if env.is_bound("last_output"):
            value = env.lookup("last_output")
        else:
            raise failure("cond has no output to test: it must follow a step in a sequential, "
                          "or be given last_output (e.g. --input last_output='{\"ok\": true}')", "no_output")
        if isinstance(value, TaskResult):
            value = value.value
        if isinstance(value, str):
            try:
                return jsontext.loads(value.strip())
            except json.JSONDecodeError:
                preview = " ".join(value.split())[:80]
                raise failure(f"output must be valid JSON for conditionals; got {preview!r}", "invalid_json") from None
        return value


# ---------------------------------------------------------------- calls and templates

@dataclass
class FunctionCall:
    """`<task ref>` and `<call>`: look the task up through env.find("taskLibrary"), evaluate the
    arguments in the caller's environment, bind them in a child environment, evaluate the body."""
    func_name: str
    args: list  # [(param name or None for positional, *Arg)]
    settings: ContextSettings | None = None  # a ref's own <context_management>
    label: str = ""
    kind: str = "call"  # ref (a <task ref>: binds by input name) | call (<call>, {{fn(…)}})
    origin: tuple[str | None, int, int] | None = None  # (file, start, end) of the <task ref>/<call>; None inline

    async def eval(self, env: Env, ctx: Ctx, args: dict | None = None, settings=None) -> TaskResult:
        if ctx.calls >= MAX_CALL_DEPTH:
            cycle = call_cycle((*ctx.chain, self.func_name))
            through = f"through the cycle {' → '.join(cycle)}" if cycle else f"(the last to '{self.func_name}')"
            segments = ctx.path.split("/")
            if not cycle:
                shown = " → ".join((*ctx.chain[:2], "…", *ctx.chain[-1:], self.func_name))
                through = f"in a chain that calls no template twice ({shown})"
                advice = "call fewer templates inside each other (the limit bounds any chain, not only a recursion)"
            elif any(seg.startswith("case[") or seg == "default" for seg in segments):  # the recursion is guarded
                advice = ("the <cond> around the recursive step took it every time: check its tests (the case "
                          "that ends the recursion never held)")
            else:
                advice = "guard the recursive step with a <cond>, or break the cycle"
            raise TaskError("RESOURCE_EXHAUSTION", f"more than {MAX_CALL_DEPTH} nested calls {through}: {advice}",
                            "call_depth", {"resource": "call_depth", "metrics": {"limit": MAX_CALL_DEPTH},
                                           "cycle": cycle})
        if ctx.exploring and self.func_name in ctx.chain:  # a dry run does not follow a guarded cycle round again
            again = f"{ctx.path}/{self.func_name}, called again"
            return TaskResult(mark(f"the output of {again}"), COMPLETE, RunOnlyNotes(optional(f"the notes of {again}")))
        library = env.find("taskLibrary")["taskLibrary"]
        definition = library.get_task(self.func_name)
        params = definition.metadata.get("parameters", [])
        positional = [a for n, a in self.args if n is None]
        # arguments that do not fit the params are the checker's TD503: the gate (and the compiler's
        # link()) refused them before any step, so they are not decided again here
        named: list[tuple[str, Any]] = list(zip(params, positional))
        named += [(name, arg) for name, arg in self.args if name is not None]
        values = await gather_values(named, env, ctx, self.label or self.func_name)
        call_ctx = ctx.at(f"{'call' if definition.metadata.get('kind') == 'template' else 'ref'}:{self.func_name}",
                          calls=ctx.calls + 1, chain=(*ctx.chain, self.func_name))
        bound = Env(dict(values), outer=env)  # what the debugger shows: the arguments over the caller's names
        await ctx.run.step("before", self, bound, ctx)
        try:
            result = await definition.ast_node.eval(env, call_ctx, values, self.settings)
        except TaskError as error:
            await ctx.run.step("after", self, bound, ctx, error=error)
            raise
        await ctx.run.step("after", self, bound, ctx, result=result)
        return result


@dataclass
class Template:
    name: str
    params: list[str]
    body: TaskNode
    defaults: tuple[str, ...] = ()  # params its task gives a literal default: a caller may leave them out

    async def eval(self, env: Env, ctx: Ctx, args: dict | None = None, settings=None) -> TaskResult:
        args = args or {}
        # a call that leaves a param unbound is the checker's TD503 (refused before any step); what is
        # left here is a run's inputs: a test's task run without one of its params
        missing = [p for p in self.params if p not in args and p not in self.defaults]
        if missing:
            given = " ".join(f"--input {p}=…" for p in missing)
            raise TaskError("VALIDATION_ERROR", f"template '{self.name}' is missing argument(s): {', '.join(missing)}: "
                            f"pass {'it' if len(missing) == 1 else 'them'} from the caller or with {given}",
                            "arguments", {"missing": missing})
        # a template runs isolated: only its params and the globals; no caller history, no
        # inherited context (the caller's file_paths included), no previous output (empty stdin)
        isolated = replace(ctx, previous=None, accumulated=None, inherited="")
        return await self.body.eval(Env(args, outer=env.root), isolated, args)
