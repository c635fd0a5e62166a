"""The server command `taskdsl.newTask`: a checked task from a request in plain words, as `taskdsl
ask --dry-run` makes it (taskdsl.task_system.ask.decompose: a library template that fits, else a task the model
writes, checked and repaired from the checker's diagnostics). It never runs the task. A model that
may cost money is asked only after the user agreed (window/showMessageRequest, once per request,
only when no library template fits); the offline and free models ask nothing.

    {"text": "write a haiku about autumn leaves", "model"?: "taskdsl/replay", "uri"?: "file:///…/haiku.task.xml"}

`uri` is where the task will be saved (its folder's project is the library, its stem the task's
name); without it, a new `new_task.task.xml` in the first workspace folder. The model is `model`,
else the editor's and project's `model` setting (the one a run uses). The answer:

    {"xml": "<task …", "source": "model", "rounds": 2, "attempts": [{errors, answer_chars}], "match": …,
     "model": "taskdsl/replay", "path": "/…/haiku.task.xml", "error": null}

or, when no task checks, {"xml": null, …, "error": {type, reason, message, details: {diagnostics}}}.
The library the answer is checked against is read from disk apart from the editor's live index
(checking an answer adds it to the library it checks against).
"""

from __future__ import annotations

import asyncio
import logging
import os

NEW_TASK_COMMAND = "taskdsl.newTask"
DEFAULT_NAME = "new_task"
log = logging.getLogger(__name__)


def register_new_task(server, runs) -> None:
    """Register the command; `runs` (features.run.Runs) gives the settings a run reads."""

    @server.command(NEW_TASK_COMMAND)
    async def new_task(ls, *args):
        return await new_task_command(ls, runs, args)


def parse_new_task_arguments(args) -> dict:
    """{text, model, uri}; ValueError naming what is wrong."""
    from taskdsl.task_system.ask import MAX_REQUEST_CHARS
    from taskdsl.features.util import command_spec

    spec = command_spec(args, ("text", "model", "uri"))
    text, model, uri = spec.get("text"), spec.get("model"), spec.get("uri")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{NEW_TASK_COMMAND} needs the request: say in words what the task should do")
    if len(text) > MAX_REQUEST_CHARS:
        raise ValueError(f"{NEW_TASK_COMMAND}: the request is longer than {MAX_REQUEST_CHARS} characters")
    if model is not None and not (isinstance(model, str) and model):
        raise ValueError(f"{NEW_TASK_COMMAND}: model must be a model identifier such as taskdsl/echo")
    if uri is not None and not (isinstance(uri, str) and uri):
        raise ValueError(f"{NEW_TASK_COMMAND}: uri must be the file the task will be saved as")
    return {"text": text, "model": model, "uri": uri}


def new_task_path(folder: str) -> str:
    """A file name in the folder that no file has yet: new_task.task.xml, new_task_2.task.xml, …"""
    for number in range(1, 1000):
        name = DEFAULT_NAME if number == 1 else f"{DEFAULT_NAME}_{number}"
        path = os.path.join(folder, name + ".task.xml")
        if not os.path.exists(path):
            return path
    return os.path.join(folder, DEFAULT_NAME + ".task.xml")


def target_path(ls, uri: str | None) -> str | None:
    from taskdsl.features.util import uri_to_path

    if uri is not None:
        return uri_to_path(uri)
    folder = getattr(ls.workspace, "root_path", None) or os.getcwd()
    return new_task_path(folder)


async def new_task_command(ls, runs, args) -> dict:
    from taskdsl.task_system import ask
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import project_index
    from taskdsl.features.run_result import error_json, failure
    from taskdsl.support.redaction import Redactor

    def refuse(error: dict, model: str | None = None, path: str | None = None) -> dict:
        return {"xml": None, "source": None, "rounds": 0, "attempts": [], "match": None, "model": model,
                "path": path, "error": Redactor().mask(error)}

    try:
        spec = parse_new_task_arguments(args)
    except ValueError as e:
        return refuse(failure(str(e), "arguments"))
    if why := runs.untrusted():  # it would send the request, and the workspace's library, to a model
        return refuse(failure(why, "untrusted"))
    path = target_path(ls, spec["uri"])
    if path is None:
        return refuse(failure(f"the new task is saved as a file, not {spec['uri']}", "not_a_file"))
    settings = runs.settings()
    model = spec["model"] or settings.default_model
    loop = asyncio.get_running_loop()
    writer = ask.handler_ask(model)

    async def asked_first(system: str, user: str) -> str:
        """The model's answer, once the user agreed to ask a model that may cost money (asked on the
        server's loop, once, only when no library template fits and the model is really called)."""
        if not agreed:
            if not asyncio.run_coroutine_threadsafe(paid_model_question(ls, model), loop).result():
                raise TaskError("TASK_FAILURE", f"no task was written: you did not agree to ask {model}, "
                                f"{model_kind(model)}", "declined", {"model": model})
            agreed.append(True)
        return await writer(system, user)

    from taskdsl.language.models import offline

    # a model outside this machine is asked about first, free or not: the request and the workspace's template
    # names go to its provider (the model may come from a workspace's own settings)
    agreed: list[bool] = [True] if offline(model) else []
    asked_first.model = model  # type: ignore[attr-defined]

    def decompose():  # the library read from disk and the checks are blocking work: off the event loop
        library = project_index(path, settings)
        return asyncio.run(ask.decompose(spec["text"], library, path, asked_first))

    try:
        answer = await loop.run_in_executor(None, decompose)
    except TaskError as error:  # no task checks, the model call failed, or the user declined to ask it
        return refuse(error.to_json(), model, path)
    except Exception as error:  # a request never takes the server down
        log.exception("newTask failed unexpectedly")
        return refuse(error_json(error), model, path)
    return {**answer.to_json(), "model": model, "path": path, "error": None}


ASK, CANCEL = "Ask it", "Cancel"


def model_kind(model: str) -> str:
    "What the question and its refusal call a model outside this machine."
    from taskdsl.language.models import costs_money

    return "a model that may cost money" if costs_money(model) else "a model outside this machine"


async def paid_model_question(ls, model: str) -> bool:
    """Whether the user agrees to have `model` (one that may cost money) write the task: the request
    and the names and descriptions of the workspace's templates go to it, in at most one answer and
    its repairs. A dismissed question or a client without the request is a no."""
    from lsprotocol import types

    from taskdsl.task_system.ask import REPAIR_ROUNDS

    message = (f"New Task will send your request and the names and descriptions of this workspace's templates to "
               f"{model}, {model_kind(model)} (at most {REPAIR_ROUNDS + 1} calls: an answer and its repairs). Ask it?")
    params = types.ShowMessageRequestParams(type=types.MessageType.Warning, message=message,
                                            actions=[types.MessageActionItem(title=t) for t in (ASK, CANCEL)])
    try:
        answer = await ls.window_show_message_request_async(params)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.warning("window/showMessageRequest failed: no model is asked", exc_info=True)
        return False
    return getattr(answer, "title", None) == ASK
