"""The editor's Run task: the `taskdsl.runTask` command, its code lens and code action.

A thin LSP view. What a run will do comes from `evaluator.plan.prepare` over the server's live
index (the same call `taskdsl run` makes, with `libraryPaths` and `globals` honoured); the run is
`evaluator.runner.execute` of that prepared value; what it did is rendered by `run_result`. Here:
the arguments, the lens and actions, and the wiring — the background asyncio task with
work-done progress and cancellation, the consent question (evaluator/consent.py: the plan and its digest), the log lines, the
result document. See docs/run.md for the decisions.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from taskdsl.language.document import Document
from taskdsl.support.lazy import OnFirstUse
from taskdsl.support.redaction import Redactor, open_private
from taskdsl.features.run_result import (
    STATUS_CANCELLED, STATUS_COMPLETE, STATUS_FAILED, RunReport, StepRecorder, error_json, failure,
    render_result, step_log_line, template_errors_message)

if TYPE_CHECKING:
    from taskdsl.evaluator.plan import RunTarget

log = logging.getLogger("taskdsl.run")


from taskdsl.features.run import (  # noqa: F401  (the command's name, lenses and actions)
    COMMAND, RUN_TITLE, plan_module, run_code_actions, run_code_lenses, run_command)

RUN, ALWAYS, CANCEL = "Run", "Always run this plan", "Cancel"  # the consent question's answers
MAX_QUESTIONS = 3  # a plan that changes under every answer is refused after this many
UNTRUSTED = ("this workspace is not trusted, so its tasks do not run and no model is asked (checking still works); "
             "trust the workspace to run them")
PLAN_CHANGED_HEADER = "The template changed after you agreed; this is the new plan."
PLAN_CHANGED = "the template changed after you agreed: run it again to review the new plan"


# ---------------------------------------------------------------------------------------------
# the command inside the server


def parse_arguments(args: tuple | list, command: str = COMMAND) -> dict:
    """The arguments of taskdsl.runTask (and of `command`, which takes the same): positional
    ``[uri, task?, inputs?, model?, options?]`` or one
    object ``{uri, task?, inputs?, model?, wait?}``. Raises ValueError naming what is wrong."""
    args = list(args)
    if len(args) == 1 and isinstance(args[0], dict):
        spec = dict(args[0])
    else:
        names = ["uri", "task", "inputs", "model", "options"]
        if len(args) > len(names):
            raise ValueError(f"{command} takes at most {len(names)} arguments (uri, task, inputs, model, "
                             f"options), got {len(args)}")
        spec = dict(zip(names, args))
        options = spec.pop("options", None)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"{command}: options must be an object such as {{\"wait\": false}}")
        spec.update(options or {})
    uri, task, inputs, model = spec.get("uri"), spec.get("task"), spec.get("inputs"), spec.get("model")
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"{command} needs the document's uri as its first argument")
    if task is not None and not (isinstance(task, str) and task):
        raise ValueError(f"{command}: task must be a task or template name (or null for the root task)")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, dict) or not all(isinstance(k, str) for k in inputs):
        raise ValueError(f"{command}: inputs must be an object of input names to values")
    if model is not None and not (isinstance(model, str) and model):
        raise ValueError(f"{command}: model must be a model identifier such as taskdsl/echo")
    wait = spec.get("wait")
    if wait is not None and not isinstance(wait, bool):
        raise ValueError(f"{command}: wait must be true or false")
    return {"uri": uri, "task": task, "inputs": dict(inputs), "model": model, "wait": wait}


def results_folder(trace_dir: str | None) -> str:
    """taskdsl.trace.dir, or the user's own state folder: 0700, owner checked (taskdsl.support.files)."""
    from taskdsl.support import files

    return files.private_folder(trace_dir) if trace_dir else files.state_folder("runs")


class Runs:
    """The runs of one server: each is an asyncio task, several may overlap."""

    def __init__(self, server):
        self.server = server
        self.ids = itertools.count(1)
        self.active: dict[int, asyncio.Task] = {}
        self.agreed: set[str] = set()  # digests of the plans answered "Always run this plan"

    # -- server state, read defensively (the server module owns it) --------------------------

    def settings(self):
        state = getattr(self.server, "state", None)
        settings = getattr(state, "settings", None)
        if settings is None:
            from taskdsl.project.settings import Settings

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
            self.server.window_log_message(types.LogMessageParams(type=kind, message=Redactor().text(message)))
        except Exception:
            log.debug("logMessage failed", exc_info=True)

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        try:
            self.server.window_show_message(types.ShowMessageParams(type=kind, message=Redactor().text(message)))
        except Exception:
            log.debug("showMessage failed", exc_info=True)

    def document_text(self, uri: str, path: str) -> str:
        """The editor's buffer when the file is open, else the file through the one reader (a
        file that is not UTF-8 text raises plan.UnreadableTemplate)."""
        from taskdsl.evaluator.plan import read_entry

        try:
            if uri in self.server.workspace.text_documents:
                return self.server.workspace.get_text_document(uri).source
        except Exception:
            pass
        return read_entry(path)

    def reader(self):
        """How a run reads the other files it reaches: open buffers first, then the disk."""
        from taskdsl.features.util import uri_to_path
        from taskdsl.project.workspace import read_text

        try:
            workspace = self.server.workspace
            open_paths = {uri_to_path(uri): uri for uri in workspace.text_documents}
        except Exception:
            workspace, open_paths = None, {}

        def read(path: str) -> str | None:
            uri = open_paths.get(path)
            if uri is not None:
                try:
                    return workspace.get_text_document(uri).source
                except Exception:
                    pass
            return read_text(path)

        return read

    def index(self):
        """The server's live index (the workspace folders and libraryPaths), None before it is built."""
        return getattr(getattr(self.server, "state", None), "library", None)

    # -- the command ---------------------------------------------------------------------------

    def untrusted(self) -> str | None:
        """Why nothing may run or ask a model here (the client said its workspace is not trusted), or
        None: runTask, runTest and newTask refuse with it, whatever the client itself does."""
        if getattr(getattr(self.server, "state", None), "workspace_untrusted", False):
            return UNTRUSTED
        return None

    async def command(self, args: tuple) -> dict:
        try:
            spec = parse_arguments(args)
        except ValueError as e:
            self.show(str(e), types.MessageType.Error)
            return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None,
                    "error": failure(str(e), "arguments")}
        if why := self.untrusted():
            self.show(f"taskdsl: {why}", types.MessageType.Warning)
            return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None,
                    "error": failure(why, "untrusted")}
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
                    "error": failure(message, reason, **details)}

        if path is None:
            return refuse(f"only files can be run, not {uri}", "not_a_file")
        prepared = self.prepare(path, uri, task, inputs, settings, refuse)
        if isinstance(prepared, dict):
            return prepared
        prepared = await self.agree(prepared, model, settings, lambda: self.prepare(path, uri, task, inputs, settings,
                                                                                  refuse), refuse)
        if isinstance(prepared, dict):
            return prepared
        if runner.calls_real_models(prepared, settings.default_model, model):
            # litellm's first import takes seconds: never on the event loop, never for offline models
            from taskdsl.evaluator.providers import litellm_module
            from taskdsl.evaluator.results import TaskError

            self.server.report_litellm_waits()
            try:
                await litellm_module()
            except TaskError as error:
                return refuse(error.message, error.reason or "litellm_unavailable")
        return await self.run(run_id, prepared, model, settings)

    def prepare(self, path: str, uri: str, task: str | None, inputs: dict, settings, refuse):
        """What a run of the document would do now (its buffer, the live index), or the refusal
        answer when it cannot run (unreadable, a library without a task, errors, missing inputs)."""
        from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate, prepare

        try:
            text = self.document_text(uri, path)
        except OSError as e:
            return refuse(f"cannot read {path}: {e.strerror}", "unreadable")
        except UnreadableTemplate as e:
            return refuse(f"cannot run {os.path.basename(path)}: {e.reason}", "unreadable")
        document = _parse(text)
        if task is None and document.root is not None and document.root.tag == "library":
            entries = [t.name for t in plan_module.runnable_targets(document, path)]
            return refuse(f"{os.path.basename(path)} is a library: choose one of its tasks to run "
                          f"({', '.join(entries) or 'it defines none'})", "no_entry", tasks=entries)
        # what would run, from the live index (on the event loop: the index is not thread-safe,
        # and checking one file against it is what every keystroke does)
        try:
            prepared = prepare(self.index(), path, task, inputs, text=text, read=self.reader(), settings=settings,
                               trace_dir=self.project_trace_dir(settings))
        except TemplateErrors as error:
            return refuse(template_errors_message(error, text), "template_errors", count=len(error.diagnostics))
        except Exception as error:
            found = error_json(error)
            return refuse(found["message"], found.get("reason") or "compile_error")
        if prepared.missing:
            plan = plan_module.InputPlan(prepared.inputs, prepared.missing, prepared.label)
            if getattr(getattr(self.server, "state", None), "client_prompts_for_inputs", False):
                # the client (the VS Code extension) asks for them and runs again: no error toast
                return {"status": STATUS_FAILED, "content": "", "steps": [], "result_uri": None,
                        "error": failure(plan_module.missing_inputs_message(plan), "missing_input", missing=plan.missing)}
            return refuse(plan_module.missing_inputs_message(plan), "missing_input", missing=plan.missing)
        return prepared

    def project_trace_dir(self, settings) -> str | None:
        """The folder a run writes its trace and result document to when the project's `[run] trace_dir`
        chose it (None when the editor's own taskdsl.trace.dir did, or none is set): outside the
        project that is a widening the run's question shows (plan.project_widening)."""
        editor = getattr(getattr(self.server, "state", None), "editor_settings", None)
        if not settings.trace_dir or (editor is not None and editor.trace_dir):
            return None
        return settings.trace_dir

    async def agree(self, prepared, model: str | None, settings, prepare_again, refuse):
        """The prepared run the user agreed to (itself when it needs no question), or the refusal.
        The question shows the plan; after the answer the run is prepared again, and only a plan
        with the same digest runs: an edit while the question was open asks again."""
        from taskdsl.evaluator import consent

        view = consent.plan_view(prepared, settings.default_model, model, cache=bool(settings.run_cache))
        why = consent.reasons(view, settings.run_allow_scripts)
        asked = 0
        while why and view.digest not in self.agreed:
            if asked == MAX_QUESTIONS:
                return refuse(PLAN_CHANGED, "plan_changed", STATUS_CANCELLED, digest=view.digest)
            answer = await self.consent(view, why, changed=asked > 0)
            asked += 1
            if answer is None:
                return refuse(f"the run of '{prepared.label}' was not started: you did not agree to its plan",
                              "declined", STATUS_CANCELLED, commands=prepared.commands, digest=view.digest)
            found = prepare_again()
            if isinstance(found, dict):
                return found
            again = consent.plan_view(found, settings.default_model, model, cache=bool(settings.run_cache))
            prepared = found
            if again.digest == view.digest:
                if answer == ALWAYS:
                    self.agreed.add(view.digest)
                break
            view, why = again, consent.reasons(again, settings.run_allow_scripts)
        # what the project's configuration widens is among the reasons: a plan with it got here through the question
        prepared.agreed = True
        return prepared

    async def consent(self, view, why: list[str], changed: bool = False) -> str | None:
        """Ask with the rendered plan: RUN, ALWAYS, or None (declined, dismissed, a client error)."""
        from taskdsl.evaluator.consent import REASON_SCRIPTS, render_plan

        lines = [PLAN_CHANGED_HEADER] if changed else []
        lines += [render_plan(view, why), "Run it?"]
        if why == [REASON_SCRIPTS]:
            lines[-1] += " (set taskdsl.run.allowScripts in your user settings to skip this question)"
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=Redactor().text("\n".join(lines)),
            actions=[types.MessageActionItem(title=title) for title in (RUN, ALWAYS, CANCEL)])
        try:
            answer = await self.server.window_show_message_request_async(params)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("window/showMessageRequest failed: the run does not start", exc_info=True)
            return None
        title = getattr(answer, "title", None)
        return title if title in (RUN, ALWAYS) else None

    async def run(self, run_id: int, prepared, model: str | None, settings) -> dict:
        """Execute a prepared run: progress, log lines, the result document, the answer."""
        from taskdsl.evaluator import runner
        from taskdsl.task_system import replan
        from taskdsl.evaluator.handler import HandlerConfig
        from taskdsl.features.util import path_to_uri

        path, label, task, inputs = prepared.path, prepared.label, prepared.task, prepared.inputs
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = f"{plan_module.file_stem(path)}{'-' + re.sub(r'[^A-Za-z0-9_.-]', '_', task) if task else ''}-{stamp}-{os.getpid()}-{run_id}"
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
        from taskdsl.evaluator.calls import configure

        # retries, [models."NAME"] fallbacks and limits, [run] cache: as `taskdsl run` takes them
        config = configure(HandlerConfig(model=settings.default_model, timeout=settings.run_timeout), settings)
        started = time.monotonic()
        status, content, parsed, error = STATUS_COMPLETE, "", None, None
        try:
            result = await asyncio.wait_for(runner.execute(prepared, model=model, trace=trace_path, on_event=on_event,
                                                           config=config, recover=replan.recover),
                                           settings.run_timeout)
            content, parsed = result.content, result.parsed_content
            status = STATUS_FAILED if result.status == STATUS_FAILED else STATUS_COMPLETE
        except asyncio.TimeoutError:
            status = STATUS_FAILED
            error = failure(f"the run took longer than taskdsl.run.timeout ({settings.run_timeout:g} s) and was "
                             "stopped", "timeout", "TASK_FAILURE", timeout=settings.run_timeout)
        except asyncio.CancelledError:
            status = STATUS_CANCELLED
            error = failure("the run was cancelled", "cancelled", "TASK_FAILURE")
        except Exception as e:  # TaskError, or a bug
            status = STATUS_FAILED
            error = error_json(e)
        recorder.cancel_open()
        report = RunReport(file=path, label=label, task=task, model=model or settings.default_model, status=status,
                           content=content, parsed_content=parsed, steps=recorder.steps, error=error,
                           duration_s=round(time.monotonic() - started, 3), tokens=recorder.total_tokens(),
                           inputs=inputs, trace_uri=path_to_uri(trace_path) if trace_path else None)
        try:
            from taskdsl.support import files

            handle, result_path = files.create(results_folder(settings.trace_dir), base + ".md")
            with handle as f:  # a new owner-only file (taskdsl.support.files), secrets masked (…redaction)
                f.write(Redactor(extra=[config.api_key]).with_inputs(inputs).text(render_result(report)))
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
        opened = status != STATUS_CANCELLED and bool(report.result_uri) and await self.open_result(report.result_uri)
        where = f"; result: {report.result_uri}" if report.result_uri and not opened else ""
        if status == STATUS_FAILED:  # one message: the failure, with where its result is unless it is open
            self.show(f"taskdsl: {message}{where}", types.MessageType.Error)
        elif status != STATUS_CANCELLED and where:
            self.show(f"taskdsl: {message}{where}")
        return Redactor(extra=[config.api_key]).with_inputs(inputs).mask(report.to_json())

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

    async def open_result(self, result_uri: str) -> bool:
        """Open the result document beside the template; False when the client cannot."""
        if self.supports_show_document():
            try:
                await self.server.window_show_document_async(types.ShowDocumentParams(uri=result_uri, take_focus=False))
                return True
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("window/showDocument failed", exc_info=True)
        return False


def _parse(text: str) -> Document:
    from taskdsl.language.document import parse

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
            from taskdsl.lsp.tests import test_code_lenses

            analysis, uri = ls.analysis(params.text_document.uri), params.text_document.uri
            return (run_code_lenses(analysis.document, uri, analysis.positions, analysis.path)
                    + test_code_lenses(analysis.document, uri, analysis.positions, analysis.path))
        except Exception:
            log.exception("code lens failed")
            return []

    return runs
