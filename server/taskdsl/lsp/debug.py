"""`taskdsl debug`: a Debug Adapter Protocol server over stdio.

The run is the one run path (``evaluator.runner.execute`` of what ``plan.prepare`` decided) with
the evaluator's one debugging hook, ``RunState.on_step``: it is awaited before each task, ref,
call and cond runs (after its inputs are bound; an atomic task's once its prompt is built) and
after it (its result or error). This module decides there whether to stop, and while stopped
answers the client from what the hook handed it: the frames on the path, their variables, and
``evaluate`` of a cond expression.

No well-kept Python library implements the adapter side of DAP (debugpy's message layer is not
public API), so the framing (``Content-Length`` headers over stdin/stdout) and the few requests are
written here, after the specification.

Requests: initialize, launch, setBreakpoints, setExceptionBreakpoints, configurationDone,
threads, stackTrace, scopes, variables, evaluate, continue, next, stepIn, stepOut, pause,
terminate, disconnect. Events: initialized, stopped, output, exited, terminated.

Consent: a launch whose plan runs shell commands, calls a model that may cost money or reads
files outside the template's folder is refused, the refusal showing the plan and its digest,
unless the launch configuration's ``agreedPlan`` is that digest (the plan the user agreed to,
pinned as the editor's Run task pins it). Every value shown is masked as every output is.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable

from taskdsl.support import jsontext
from taskdsl.language.document import Document, parse
from taskdsl.meaning.facts import RUNNABLE_TAGS, runnable_children

THREAD_ID = 1
#: the elements a breakpoint may stand on: what the evaluator runs (a step, an input's task, a cond,
#: a reduce part); a <case> or <default> line stops at the task it holds
BREAKABLE_TAGS = frozenset(RUNNABLE_TAGS) | {"inner_task", "reduction_task"}
BRANCH_TAGS = frozenset(("case", "default"))
VALUE_LIMIT = 400  # characters of a value shown on one line
REDUCE_NAMES = ("current_data", "current_result", "accumulator", "original_input")
VARIABLE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*")


# -- the wire ----------------------------------------------------------------------------------------


class ProtocolError(Exception):
    """The client sent something that is not a DAP message."""


def read_message(stream: BinaryIO) -> dict | None:
    """One message: headers up to a blank line, then Content-Length bytes of JSON. None at EOF."""
    length = None
    while True:
        line = stream.readline(65536)
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue  # stray blank lines between messages
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            if not value.strip().isdigit() or int(value) > 64 * 1024 * 1024:
                raise ProtocolError(f"bad Content-Length header: {line!r}")
            length = int(value)
    body = stream.read(length)
    if len(body) < length:
        return None
    try:
        message = jsontext.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProtocolError(f"the message is not JSON: {e}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


def encode(message: dict) -> bytes:
    body = json.dumps(message, ensure_ascii=False, default=str).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


# -- frames --------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Frame:
    """A task (or ref, call, cond) on the path of the run, as the hook saw it."""
    node: Any
    scope: Any  # its Env: inputs/params bound over what it sees
    ctx: Any
    detail: dict = field(default_factory=dict)  # prompt, model (before); result or error (after)
    phase: str = "before"

    @property
    def kind(self) -> str:
        node = self.node
        if hasattr(node, "func_name"):
            return "ref" if getattr(node, "kind", "call") == "ref" else "call"
        if hasattr(node, "cases"):
            return "cond"
        return getattr(node, "kind", "task")


_frames: contextvars.ContextVar[tuple[Frame, ...]] = contextvars.ContextVar("taskdsl_debug_frames", default=())


@dataclass
class Stopped:
    frames: tuple[Frame, ...]  # outermost first
    phase: str
    reason: str


class Sources:
    """The text of each template file (as the run compiled it), for lines of offsets and breakpoints."""

    def __init__(self):
        self.texts: dict[str, str] = {}

    def text(self, path: str) -> str | None:
        key = os.path.realpath(path)
        if key not in self.texts:
            try:
                from taskdsl.project.workspace import read_text

                if not stat.S_ISREG(os.stat(key).st_mode):  # a FIFO or a device would block or never end
                    return None
                self.texts[key] = read_text(key)
            except (OSError, ValueError):
                return None
        return self.texts[key]

    def line(self, path: str, offset: int) -> int:
        """0-based line of an offset."""
        text = self.text(path) or ""
        return text.count("\n", 0, offset)


def breakable_lines(doc: Document) -> dict[int, int]:
    """0-based line written on → 0-based line the run stops at, for every element a breakpoint may
    stand on (a case or default: the line of the task it holds)."""
    lines: dict[int, int] = {}
    for element in doc.iter():
        line = doc.position(element.start)[0]
        if element.tag in BREAKABLE_TAGS:
            lines.setdefault(line, line)
        elif element.tag in BRANCH_TAGS:
            body = runnable_children(element)
            if body:
                lines.setdefault(line, doc.position(body[0].start)[0])
    return lines


# -- the adapter ---------------------------------------------------------------------------------------


class Adapter:
    def __init__(self, write: Callable[[bytes], None]):
        self._write = write
        self._seq = 0
        self.lines_start_at_1 = True
        self.sources = Sources()
        self.breakpoints: dict[str, dict[int, int]] = {}  # real path → {0-based line: breakpoint id}
        self._next_breakpoint = 0
        self.prepared = None
        self.case = None  # a launch of one <test> (authoring.testcases.TestCase)
        self.settings = None  # the project's settings, read at launch
        self.launch_args: dict = {}
        self.configured = False
        self.run_task: asyncio.Task | None = None
        self.mode = "run"  # run | entry | stepIn | next | stepOut
        self.depth = 0
        self.pause_requested = False
        self.stop_lock = asyncio.Lock()
        self.stopped: Stopped | None = None
        self.resume: asyncio.Event | None = None
        self.refs: dict[int, Any] = {}
        self.frame_ids: dict[int, Frame] = {}
        self.redactor = None
        self.done = asyncio.Event()
        self.ended = False

    # -- sending -------------------------------------------------------------------------------

    def send(self, message: dict) -> None:
        self._seq += 1
        self._write(encode({"seq": self._seq, **message}))

    def respond(self, request: dict, body: dict | None = None) -> None:
        self.send({"type": "response", "request_seq": request.get("seq", 0), "success": True,
                   "command": request.get("command"), "body": body or {}})

    def fail(self, request: dict, message: str) -> None:
        self.send({"type": "response", "request_seq": request.get("seq", 0), "success": False,
                   "command": request.get("command"), "message": message,
                   # DAP's format only substitutes {name} for the variables sent with it, and
                   # defines no escape: with no variables the text shows as it is (braces and all)
                   "body": {"error": {"id": 1, "format": message, "showUser": True}}})

    def event(self, name: str, body: dict | None = None) -> None:
        self.send({"type": "event", "event": name, "body": body or {}})

    def output(self, text: str, category: str = "console") -> None:
        self.event("output", {"category": category, "output": self.mask_text(text)})

    def mask_text(self, text: str) -> str:
        if self.redactor is not None:
            return self.redactor.text(text)
        from taskdsl.support.redaction import Redactor

        return Redactor().text(text)

    def line_out(self, line: int) -> int:
        return line + 1 if self.lines_start_at_1 else line

    def line_in(self, line: int) -> int:
        return line - 1 if self.lines_start_at_1 else line

    # -- dispatch ------------------------------------------------------------------------------

    async def handle(self, message: dict) -> None:
        if message.get("type") != "request":
            return
        command = message.get("command")
        handler = getattr(self, f"on_{command}", None) if isinstance(command, str) else None
        if handler is None:
            self.fail(message, f"taskdsl debug does not support the request {command!r}")
            return
        try:
            await handler(message, message.get("arguments") or {})
        except Exception as error:  # a bad request never takes the adapter down
            self.fail(message, f"{command}: {type(error).__name__}: {error}")

    async def on_initialize(self, request: dict, args: dict) -> None:
        self.lines_start_at_1 = args.get("linesStartAt1", True) is not False
        self.respond(request, {
            "supportsConfigurationDoneRequest": True,
            "supportsEvaluateForHovers": True,
            "supportsTerminateRequest": True,
            "supportsSingleThreadExecutionRequests": False,
            "exceptionBreakpointFilters": [],
        })
        self.event("initialized")

    async def on_launch(self, request: dict, args: dict) -> None:
        problem = self.prepare(args)
        if problem:
            self.fail(request, problem)
            self.ended = True
            self.event("terminated")  # the session is over: the client ends it, not waits on it
            return
        self.launch_args = args
        self.mode = "entry" if args.get("stopOnEntry") else "run"
        self.respond(request)
        self.start_if_ready()

    async def on_setBreakpoints(self, request: dict, args: dict) -> None:
        path = (args.get("source") or {}).get("path")
        wanted = [b.get("line") for b in args.get("breakpoints") or []] or list(args.get("lines") or [])
        text = self.sources.text(path) if isinstance(path, str) else None
        stops = breakable_lines(parse(text)) if text is not None else {}
        ordered = sorted(stops)
        placed: dict[int, int] = {}
        answer = []
        for line in wanted:
            if not isinstance(line, int):
                answer.append({"verified": False, "message": "a breakpoint needs a line"})
                continue
            asked = self.line_in(line)
            at = stops.get(asked)
            if at is None:  # the next task below the line, as debuggers move a breakpoint to code
                at = next((stops[n] for n in ordered if n > asked), None)
            if at is None:
                answer.append({"verified": False, "line": line,
                               "message": "no task, call, cond case or reduce part on or after this line"})
                continue
            self._next_breakpoint += 1
            placed.setdefault(at, self._next_breakpoint)
            answer.append({"id": placed[at], "verified": True, "line": self.line_out(at),
                           "source": {"path": path}})
        if isinstance(path, str):
            self.breakpoints[os.path.realpath(path)] = placed
        self.respond(request, {"breakpoints": answer})

    async def on_setExceptionBreakpoints(self, request: dict, args: dict) -> None:
        self.respond(request, {"breakpoints": []})

    async def on_configurationDone(self, request: dict, args: dict) -> None:
        self.configured = True
        self.respond(request)
        self.start_if_ready()

    async def on_threads(self, request: dict, args: dict) -> None:
        label = self.prepared.label if self.prepared is not None else "taskdsl"
        self.respond(request, {"threads": [{"id": THREAD_ID, "name": f"run of {label}"}]})

    async def on_stackTrace(self, request: dict, args: dict) -> None:
        if self.stopped is None:
            self.respond(request, {"stackFrames": [], "totalFrames": 0})
            return
        frames = []
        for number, frame in enumerate(reversed(self.stopped.frames), 1):
            self.frame_ids[number] = frame
            frames.append(self.describe_frame(number, frame))
        start, levels = int(args.get("startFrame") or 0), int(args.get("levels") or 0)
        shown = frames[start:start + levels] if levels else frames[start:]
        self.respond(request, {"stackFrames": shown, "totalFrames": len(frames)})

    async def on_scopes(self, request: dict, args: dict) -> None:
        frame = self.frame_ids.get(args.get("frameId"))
        if frame is None:
            self.fail(request, "no such frame: the run is not stopped there")
            return
        scopes = [{"name": "Locals", "presentationHint": "locals", "expensive": False,
                   "variablesReference": self.ref(("locals", frame))}]
        if self.step_values(frame):
            scopes.append({"name": "Step", "expensive": False, "variablesReference": self.ref(("step", frame))})
        scopes.append({"name": "Globals", "expensive": False, "variablesReference": self.ref(("globals", frame))})
        self.respond(request, {"scopes": scopes})

    async def on_variables(self, request: dict, args: dict) -> None:
        found = self.refs.get(args.get("variablesReference"))
        if found is None:
            self.respond(request, {"variables": []})
            return
        kind, what = found
        if kind == "locals":
            pairs = self.locals(what)
        elif kind == "globals":
            pairs = self.globals(what)
        elif kind == "step":
            pairs = self.step_values(what)
        else:
            pairs = list(what.items()) if isinstance(what, dict) else [(f"[{i}]", v) for i, v in enumerate(what)]
        self.respond(request, {"variables": [self.variable(name, value) for name, value in pairs]})

    async def on_evaluate(self, request: dict, args: dict) -> None:
        expression = str(args.get("expression") or "").strip()
        frame = self.frame_ids.get(args.get("frameId")) if args.get("frameId") is not None else None
        if frame is None and self.stopped is not None:
            frame = self.stopped.frames[-1]
        if frame is None:
            self.fail(request, "the run is not stopped: evaluate needs a stopped frame")
            return
        try:
            value = self.evaluate(expression, frame)
        except EvaluateError as error:
            self.fail(request, str(error))
            return
        shown = self.variable("", value)
        self.respond(request, {"result": shown["value"], "type": shown.get("type"),
                               "variablesReference": shown["variablesReference"]})

    async def on_continue(self, request: dict, args: dict) -> None:
        self.go("run")
        self.respond(request, {"allThreadsContinued": True})

    async def on_next(self, request: dict, args: dict) -> None:
        self.go("next")
        self.respond(request)

    async def on_stepIn(self, request: dict, args: dict) -> None:
        self.go("stepIn")
        self.respond(request)

    async def on_stepOut(self, request: dict, args: dict) -> None:
        self.go("stepOut")
        self.respond(request)

    async def on_pause(self, request: dict, args: dict) -> None:
        self.pause_requested = True
        self.respond(request)

    async def on_terminate(self, request: dict, args: dict) -> None:
        self.respond(request)
        await self.cancel_run()

    async def on_disconnect(self, request: dict, args: dict) -> None:
        await self.cancel_run()
        self.respond(request)
        self.done.set()

    # -- launching -------------------------------------------------------------------------------

    def prepare(self, args: dict, consent_needed: bool = True) -> str | None:
        """Prepare the run the launch configuration asks for; the reason when it cannot run (a plan
        that needs consent without `agreedPlan` naming its digest, unless `consent_needed` is False:
        `plan_answer` only shows the plan)."""
        from taskdsl.evaluator import consent
        from taskdsl.evaluator.compiler import CompileError
        from taskdsl.evaluator.handler import default_model
        from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
        from taskdsl.evaluator.results import TaskError
        from taskdsl.evaluator.runner import prepare_file
        from taskdsl.project.config import run_defaults
        from taskdsl.support.redaction import Redactor

        program = args.get("program")
        if not isinstance(program, str) or not program:
            return 'the launch configuration needs "program": the template file to run'
        inputs = args.get("inputs") or {}
        if not isinstance(inputs, dict):
            return '"inputs" must be an object of input names and values'
        task = args.get("task") or None
        model = args.get("model") or None
        self.case = None
        try:
            global_values, project, _config = run_defaults(program, [f"{k}={v}" for k, v in (args.get("globals") or {}).items()])
            if args.get("test"):
                prepared, model = self.prepare_test(program, str(args["test"]), model, project)
                if isinstance(prepared, str):
                    return prepared
            else:
                prepared = prepare_file(program, task, {str(k): v for k, v in inputs.items()}, settings=project,
                                        global_values=global_values)
        except FileNotFoundError:
            return f"{program}: no such file"
        except TemplateErrors as error:
            return refusal_text(program, error)
        except UnreadableTemplate as error:
            return f"{program}: {error.reason}"
        except CompileError as error:
            return f"{program}: {error.code} {error.message}"
        except TaskError as error:
            return str(error)
        except LookupError as error:  # a test's task that is not in the library
            return f"{program}: {error}"
        except (OSError, ValueError) as error:
            return f"{program}: {error}"
        if prepared.missing and self.case is None:  # a test's missing input is the test's business (expect_error)
            names = ", ".join(prepared.missing)
            return (f"'{prepared.label}' needs the input(s) {names}: add them to \"inputs\" in the launch "
                    "configuration")
        self.default_model = project.model or default_model()
        self.settings = project
        self.model = model
        self.max_cost = project.run_max_cost
        planned = model
        if self.case is not None:
            from taskdsl.authoring import testcases

            pinned = getattr(prepared, "replay", None)  # the copy the run answers from: one lookup, not two
            planned = testcases.planned_model(self.case, model, pinned and pinned[0])
        view = consent.plan_view(prepared, self.default_model, planned)
        why = consent.reasons(view)
        self.view, self.why = view, why
        if why and consent_needed and args.get("agreedPlan") != view.digest:
            return Redactor().text(consent.render_plan(view, why) + "\n" + (
                f'To debug it, agree to this plan: add "agreedPlan": "{view.digest}" to the launch configuration '
                "(VS Code asks you and adds it; any change to the plan asks again)."))
        prepared.agreed = consent_needed  # past here a plan with reasons was agreed to ("agreedPlan")
        self.prepared = prepared
        for path, text in prepared.sources.items():
            if text is not None:
                self.sources.texts[os.path.realpath(path)] = text
        return None

    def prepare_test(self, program: str, name: str, model: str | None, project):
        """A launch of one `<test>` of a *.test.xml file: the task under test with the test's inputs,
        its model, and the replay fixture beside the file (as `taskdsl test` runs it)."""
        from taskdsl.authoring import testcases
        from taskdsl.evaluator.runner import project_index
        from taskdsl.project.workspace import read_text

        cases = [c for c in testcases.test_cases(parse(read_text(program)), os.path.abspath(program)) if c.name == name]
        if not cases:
            return f"{program} has no <test name=\"{name}\">", model
        self.case = cases[0]
        index = project_index(program, project)
        return testcases.prepare_case(self.case, index, project), model or self.case.model

    def start_if_ready(self) -> None:
        if self.prepared is None or not self.configured or self.run_task is not None:
            return
        self.run_task = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        from taskdsl.evaluator.handler import HandlerConfig
        from taskdsl.evaluator.results import TaskError
        from taskdsl.evaluator.runner import execute
        from taskdsl.support.redaction import Redactor
        from taskdsl.task_system.replan import recover

        case = self.case
        if case is None:
            config = HandlerConfig(model=self.default_model)
        else:  # as `taskdsl test` runs it: every real model answers from the replay fixture when there is one
            from taskdsl.authoring import testcases

            config = testcases.case_config(case, self.settings, getattr(self.prepared, "replay", None))
        self.redactor = Redactor(extra=[config.api_key])
        code = 0
        scratch = tempfile.mkdtemp(prefix="taskdsl-debug-") if case is not None else None
        try:
            result = await execute(self.prepared, model=self.model, on_event=self.on_event, config=config,
                                   recover=recover, on_step=self.on_step, max_cost=self.max_cost,
                                   script_env={"TMPDIR": scratch} if scratch else None)
        except TaskError as error:
            if case is not None:
                code = self.judged(case, None, error)
            else:
                self.output(f"taskdsl debug: {error}\n", "stderr")
                code = 1
        except asyncio.CancelledError:
            self.output("taskdsl debug: the run was stopped\n", "stderr")
            code = 130
        except Exception as error:  # a crash of the run is reported, not the adapter's end
            self.output(f"taskdsl debug: the run failed: {type(error).__name__}: {error}\n", "stderr")
            code = 1
        else:
            self.output(result.content + "\n", "stdout")
            if case is not None:
                code = self.judged(case, result.value, None)
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        self.stopped = None
        self.event("exited", {"exitCode": code})
        self.event("terminated")
        self.ended = True

    def judged(self, case, output: Any, error: Any) -> int:
        """The test's verdict as output (`taskdsl test`'s judge); the exit code 0 when it passed."""
        from taskdsl.authoring import testcases

        outcome = testcases.judge(case, output, error)
        if outcome.passed:
            self.output(f"test '{case.name}' passed\n", "console")
            return 0
        self.output(f"test '{case.name}' {outcome.status}: {outcome.message}\n", "stderr")
        return 1

    async def cancel_run(self) -> None:
        task = self.run_task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def on_event(self, event: dict) -> None:
        "The run's progress (already masked): one line per finished or failed task."
        if event.get("event") == "end":
            self.output(f"✓ {event['path']} ({event['kind']})\n")
        elif event.get("event") == "error":
            self.output(f"✗ {event['path']} ({event['kind']}) — {event['error'].get('message', '')}\n")

    # -- the hook: stopping ------------------------------------------------------------------------

    async def on_step(self, phase: str, node: Any, scope: Any, ctx: Any, detail: dict) -> None:
        if phase == "before":
            frame = Frame(node, scope, ctx, dict(detail))
            stack = _frames.get() + (frame,)
            _frames.set(stack)
            await self.maybe_stop(stack, "before")
            return
        stack = _frames.get()
        if not stack or stack[-1].node is not node or stack[-1].ctx.path != ctx.path:
            return  # it failed before its "before" (its inputs, its prompt): nothing to show
        frame = stack[-1]
        frame.phase = "after"
        frame.detail.update(detail)
        try:
            await self.maybe_stop(stack, "after")
        finally:
            _frames.set(stack[:-1])

    def reason(self, stack: tuple[Frame, ...], phase: str) -> str | None:
        if self.pause_requested:
            return "pause"
        if self.mode == "entry":
            return "entry"
        if phase == "before" and self.at_breakpoint(stack[-1]):
            return "breakpoint"
        if self.mode == "stepIn":
            return "step"
        if self.mode == "next" and len(stack) <= self.depth:
            return "step"
        if self.mode == "stepOut" and len(stack) < self.depth:
            return "step"
        return None

    def at_breakpoint(self, frame: Frame) -> bool:
        where = self.where(frame)
        if where is None:
            return False
        path, line = where
        return line in self.breakpoints.get(os.path.realpath(path), {})

    async def maybe_stop(self, stack: tuple[Frame, ...], phase: str) -> None:
        async with self.stop_lock:  # one stop at a time: concurrent inputs wait their turn
            reason = self.reason(stack, phase)
            if reason is None:
                return
            self.pause_requested = False
            self.stopped = Stopped(stack, phase, reason)
            self.refs, self.frame_ids = {}, {}
            self.resume = asyncio.Event()
            body = {"reason": reason, "threadId": THREAD_ID, "allThreadsStopped": True}
            if reason == "breakpoint":
                where = self.where(stack[-1])
                body["hitBreakpointIds"] = [self.breakpoints[os.path.realpath(where[0])][where[1]]]
            if phase == "after":
                body["description"] = f"after {self.frame_name(stack[-1])}"
            self.event("stopped", body)
            await self.resume.wait()
            self.stopped = None

    def go(self, mode: str) -> None:
        if self.stopped is None:
            self.mode = mode if mode == "run" else self.mode
            return
        self.mode = mode
        self.depth = len(self.stopped.frames)
        self.refs, self.frame_ids = {}, {}
        self.resume.set()

    # -- what a stop shows ---------------------------------------------------------------------------

    def where(self, frame: Frame) -> tuple[str, int] | None:
        origin = getattr(frame.node, "origin", None)
        if not origin or not origin[0]:
            return None
        return origin[0], self.sources.line(origin[0], origin[1])

    def frame_name(self, frame: Frame) -> str:
        segment = frame.ctx.path.rsplit("/", 1)[-1] if frame.ctx.path else "run"
        if frame.kind in ("ref", "call"):
            return f"{frame.kind} {frame.node.func_name}" if frame.node.origin else f"{{{{{frame.node.label}}}}}"
        if segment.startswith(("call:", "ref:")):  # the body of what a ref or call runs: its own name
            segment = getattr(frame.node, "name", segment)
        return f"{segment} ({frame.kind})"

    def describe_frame(self, number: int, frame: Frame) -> dict:
        where = self.where(frame)
        if where is None:  # an inline call {{fn(…)}}: where the text that calls it is
            outer = next((f for f in reversed(self.stopped.frames) if self.where(f) is not None), None)
            where = self.where(outer) if outer is not None else None
        described = {"id": number, "name": self.frame_name(frame), "line": 0, "column": 0}
        if where is not None:
            described.update(line=self.line_out(where[1]), column=1,
                             source={"name": os.path.basename(where[0]), "path": where[0]})
        return described

    def ref(self, value: Any) -> int:
        number = len(self.refs) + 1
        self.refs[number] = value
        return number

    def locals(self, frame: Frame) -> list[tuple[str, Any]]:
        """Every name the frame sees but the globals, innermost binding first: inputs and params,
        last_output, the names the reduce operator binds."""
        env, seen, found = frame.scope, set(), []
        while env is not None and env.outer is not None:
            for name in env:
                if name not in seen:
                    seen.add(name)
                    found.append((name, env[name]))
            env = env.outer
        return found

    def globals(self, frame: Frame) -> list[tuple[str, Any]]:
        root = frame.scope.root if frame.scope is not None else {}
        return [(name, value) for name, value in root.items() if name != "taskLibrary"]

    def step_values(self, frame: Frame) -> list[tuple[str, Any]]:
        """An atomic step's prompt about to be sent and the answer received; any step's result or error."""
        detail, found = frame.detail, []
        if "prompt" in detail:
            found += [("model", detail.get("model")), ("prompt", detail["prompt"])]
        result = detail.get("result")
        if result is not None:
            if frame.kind == "atomic":
                found.append(("answer", result.content))
            found += [("output", result.value), ("status", result.status)]
        error = detail.get("error")
        if error is not None:
            found.append(("error", error.to_json()))
        return found

    def variable(self, name: str, value: Any) -> dict:
        from taskdsl.evaluator.results import TaskResult

        if isinstance(value, TaskResult):
            value = value.value
        if self.redactor is not None:
            value = self.redactor.mask(value)
        if isinstance(value, (dict, list)):
            text = json.dumps(value, ensure_ascii=False, default=str)
            return {"name": name, "value": text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT] + "…",
                    "type": "object" if isinstance(value, dict) else "array",
                    "variablesReference": self.ref(("value", value)) if value else 0}
        if isinstance(value, str):
            shown = json.dumps(value, ensure_ascii=False)
            return {"name": name, "value": shown if len(shown) <= VALUE_LIMIT else shown[:VALUE_LIMIT] + "…",
                    "type": "string", "variablesReference": 0}
        return {"name": name, "value": json.dumps(value, default=str), "type": type(value).__name__,
                "variablesReference": 0}

    def evaluate(self, expression: str, frame: Frame) -> Any:
        """A name the frame sees (``doc``, ``last_output.items[0]``), else a cond expression over the
        output the frame would test: its result after it ran, else last_output (as a cond reads it)."""
        from taskdsl.evaluator import ast
        from taskdsl.evaluator.results import TaskError
        from taskdsl.language import cond as cond_expr

        if not expression:
            raise EvaluateError("nothing to evaluate")
        head = re.match(r"[A-Za-z_][A-Za-z0-9_]*", expression)
        scope = frame.scope
        if (VARIABLE_PATH.fullmatch(expression) and head.group(0) != "output" and scope is not None
                and scope.is_bound(head.group(0))):
            try:
                return ast.lookup(scope, head.group(0), _accessors(expression[head.end():]), expression, "debug")
            except TaskError as error:
                raise EvaluateError(error.message) from None
        try:
            parsed = cond_expr.parse_expr(expression)
        except cond_expr.ExprError as error:
            raise EvaluateError(f"{expression!r} is not a cond expression: {error}") from None
        try:
            output = self.tested_output(frame)
            return cond_expr.evaluate(parsed, output)
        except TaskError as error:
            raise EvaluateError(error.message) from None
        except cond_expr.ExprEvalError as error:
            raise EvaluateError(str(error)) from None

    def tested_output(self, frame: Frame) -> Any:
        from taskdsl.evaluator import ast

        result = frame.detail.get("result")
        if frame.phase == "after" and result is not None:
            return result.value
        if frame.scope is None:
            raise EvaluateError("this frame has no output to test")
        return ast.Cond([]).tested_output(frame.scope, frame.ctx)  # the cond's own reading of last_output


def plan_answer(args: dict) -> dict:
    """What a launch configuration would run, for the editor's question before it starts the
    debugger: `{"reasons": [...], "plan": text, "digest": …}` (no reasons: nothing to agree to), or
    `{"error": message}` when it cannot run. Runs nothing."""
    from taskdsl.evaluator.consent import render_plan
    from taskdsl.support.redaction import Redactor

    adapter = Adapter(lambda _data: None)
    problem = adapter.prepare(args, consent_needed=False)
    if problem:
        return {"error": problem}
    return {"reasons": adapter.why, "plan": Redactor().text(render_plan(adapter.view, adapter.why)),
            "digest": adapter.view.digest}


class EvaluateError(Exception):
    pass


def _accessors(text: str) -> tuple:
    return tuple(int(index) if index else name for name, index in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]", text))


def refusal_text(program: str, error) -> str:
    """The checker's diagnostics of a template that does not check, as `taskdsl run` prints them."""
    doc = parse(error.text or "")
    lines = []
    for d in error.diagnostics:
        span = getattr(d, "span", None)
        line, col = doc.position(span.start) if span is not None else (0, 0)
        lines.append(f"{program}:{line + 1}:{col + 1}: error {d.code} {d.message}")
    return "\n".join(lines + [f"{program} does not check ({len(error.diagnostics)} error(s)); fix them first"])


# -- stdio -------------------------------------------------------------------------------------------


async def serve_streams(reader: BinaryIO, write: Callable[[bytes], None]) -> int:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    adapter = Adapter(write)

    def pump() -> None:
        while True:
            try:
                message = read_message(reader)
            except ProtocolError as error:
                loop.call_soon_threadsafe(queue.put_nowait, error)
                return
            except (OSError, ValueError):
                message = None
            loop.call_soon_threadsafe(queue.put_nowait, message)
            if message is None:
                return

    threading.Thread(target=pump, name="taskdsl-debug-stdin", daemon=True).start()
    code = 0
    while not adapter.done.is_set():
        getting = asyncio.ensure_future(queue.get())
        finished = asyncio.ensure_future(adapter.done.wait())
        done, _ = await asyncio.wait({getting, finished}, return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        if getting not in done:
            getting.cancel()
            break
        message = getting.result()
        if isinstance(message, ProtocolError):
            print(f"taskdsl debug: {message}", file=sys.stderr)
            code = 2
            break
        if message is None:  # the client went away
            break
        await adapter.handle(message)
    await adapter.cancel_run()
    return code


def stdin_reader() -> BinaryIO:
    """A private reader of the stdin descriptor for the reading thread. The thread may still be
    blocked in a read when the client disconnects and the adapter returns; were it reading
    sys.stdin, the interpreter's shutdown would close sys.stdin while the thread holds its lock
    and abort the process ("could not acquire lock ... at interpreter shutdown", signal 6)."""
    return open(os.dup(sys.stdin.fileno()), "rb", buffering=65536)


def serve_stdio() -> int:
    """Talk DAP over this process's stdin and stdout. Nothing else may write to stdout: print()
    goes to stderr while the adapter runs."""
    out = sys.stdout.buffer
    lock = threading.Lock()

    def write(data: bytes) -> None:
        with lock:
            out.write(data)
            out.flush()

    sys.stdout = sys.stderr
    try:
        return asyncio.run(serve_streams(stdin_reader(), write))
    except KeyboardInterrupt:
        return 130
