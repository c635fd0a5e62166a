"""The server command `taskdsl.graph`: the picture `taskdsl graph` draws, over the editor's live
index and open buffers (what the run command would prepare), optionally with a run's steps on it.

    {"uri": …, "task"?: name, "position"?: {line, character}, "format"?: "svg"|"dot"|"mermaid",
     "steps"?: [{path, status, duration_s}, …]}   (or positional [uri, task?, format?])

`task` picks an entry of a library file; without it, `position` picks the entry around the cursor
(the first entry when the cursor is outside every entry); `steps` are a run's (the run command's
answer carries them) and colour the picture (graph.run_statuses). The answer:

    {"format": "svg", "text": "<svg…", "task": "summarise", "hint": null, "unmapped": [], "error": null}

`format` "svg" (the default) falls back to "dot" when Graphviz's `dot` is not installed, with a
`hint` that says so. Never raises: a template that does not prepare answers
{"format": null, "text": "", "error": {type, reason, message}}.
"""

from __future__ import annotations

import asyncio
import logging
import shutil

GRAPH_COMMAND = "taskdsl.graph"
NO_SVG_HINT = ("This is the picture's Graphviz DOT text: install Graphviz (apt install graphviz, brew install "
               "graphviz, or graphviz.org/download) so that its `dot` program is on the server's PATH to see it drawn.")
log = logging.getLogger(__name__)


def register_graph(server, runs) -> None:
    """Register the command; `runs` (features.run.Runs) gives the live index, buffers and settings."""

    @server.command(GRAPH_COMMAND)
    async def graph(ls, *args):
        return await graph_command(ls, runs, args)


def parse_graph_arguments(args) -> dict:
    """{uri, task, position, format, steps}; ValueError naming what is wrong."""
    from taskdsl.authoring.graph import FORMATS
    from taskdsl.features.util import command_spec

    spec = command_spec(args, ("uri", "task", "format"))
    uri, task, fmt = spec.get("uri"), spec.get("task"), spec.get("format") or "svg"
    position, steps = spec.get("position"), spec.get("steps")
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"{GRAPH_COMMAND} needs the document's uri")
    if task is not None and not (isinstance(task, str) and task):
        raise ValueError(f"{GRAPH_COMMAND}: task must be a task or template name (or null for the file's task)")
    if fmt not in FORMATS:
        raise ValueError(f"{GRAPH_COMMAND}: format must be one of {', '.join(FORMATS)}")
    if position is not None and not (isinstance(position, dict) and all(
            isinstance(position.get(k), int) and not isinstance(position.get(k), bool) and position[k] >= 0
            for k in ("line", "character"))):
        raise ValueError(f"{GRAPH_COMMAND}: position must be {{\"line\": N, \"character\": N}}")
    if steps is not None and not (isinstance(steps, list) and all(isinstance(s, dict) for s in steps)):
        raise ValueError(f"{GRAPH_COMMAND}: steps must be a list of a run's steps ({{path, status, duration_s}})")
    return {"uri": uri, "task": task, "format": fmt, "position": position, "steps": steps or []}


def task_at(ls, uri: str, position: dict | None) -> str | None:
    """The entry of the file around the position (None: the file's root task)."""
    from lsprotocol import types

    from taskdsl.evaluator.plan import runnable_targets

    analysis = ls.analysis(uri)
    targets = runnable_targets(analysis.document, analysis.path)
    if not targets:
        return None
    if position is not None:
        offset = analysis.positions.offset(types.Position(position["line"], position["character"]))
        around = [t for t in targets if t.element.span.start <= offset <= t.element.span.end]
        targets = around or targets
    return targets[0].name


async def graph_command(ls, runs, args) -> dict:
    from taskdsl.authoring.graph import plan_graph, run_statuses, with_run
    from taskdsl.evaluator.plan import prepare
    from taskdsl.features.run_result import error_json, failure
    from taskdsl.features.util import uri_to_path

    def refuse(error: dict) -> dict:
        return {"format": None, "text": "", "task": None, "hint": None, "unmapped": [], "error": error}

    try:
        spec = parse_graph_arguments(args)
    except ValueError as e:
        return refuse(failure(str(e), "arguments"))
    path = uri_to_path(spec["uri"])
    if path is None:
        return refuse(failure(f"only files can be drawn, not {spec['uri']}", "not_a_file"))
    try:
        task = spec["task"] if spec["task"] is not None else task_at(ls, spec["uri"], spec["position"])
        prepared = prepare(runs.index(), path, task, {}, text=runs.document_text(spec["uri"], path),
                           read=runs.reader(), settings=runs.settings())
        graph = plan_graph(prepared.node, prepared.library)
    except Exception as error:  # a picture never takes the server down
        if not hasattr(error, "to_json") and not hasattr(error, "diagnostics") and not hasattr(error, "code"):
            log.exception("graph of %s failed unexpectedly", spec["uri"])
        return refuse(error_json(error))
    colours, unmapped = None, []
    if spec["steps"]:
        statuses, unmapped = run_statuses(graph, spec["steps"])
        graph, colours = with_run(graph, statuses)
    # Graphviz runs off the event loop: a large picture takes it a moment
    fmt, text, hint = await asyncio.get_running_loop().run_in_executor(None, picture, graph, spec["format"], colours)
    return {"format": fmt, "text": text, "task": prepared.label, "hint": hint, "unmapped": unmapped, "error": None}


def picture(graph, fmt: str, colours: dict | None = None) -> tuple[str, str, str | None]:
    """(format, text, hint): SVG falls back to the DOT text, with a hint, when Graphviz cannot draw it."""
    from taskdsl.authoring.graph import NoGraphviz, draw

    try:
        return fmt, draw(graph, fmt, colours), None
    except NoGraphviz as e:
        return "dot", draw(graph, "dot", colours), NO_SVG_HINT if shutil.which("dot") is None else f"{e}. {NO_SVG_HINT}"
