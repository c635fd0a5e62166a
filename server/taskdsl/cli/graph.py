"""`taskdsl graph FILE [--task NAME] [--format mermaid|dot|svg] [--run RUN.json]`: the picture of a
run's task tree (graph.py); with --run, the steps of that run (`taskdsl run --json`'s output) on it.
Exit 0; 2 when the file does not check or cannot be read, the run file is not a run, or svg
without Graphviz."""

from __future__ import annotations

import argparse
import json
import sys

from taskdsl.support import jsontext
from taskdsl.support import reading


def add_graph_parser(commands) -> argparse.ArgumentParser:
    from taskdsl.authoring.graph import FORMATS

    p = commands.add_parser("graph", help="draw a template's task tree (Mermaid, DOT or SVG)",
                            description="Draw the task tree a run of FILE executes: steps, cond branches, reduce "
                                        "parts, nested tasks, and refs and calls to other templates.")
    p.add_argument("file", help="the template file (*.task.xml)")
    p.add_argument("--task", help="a named task or template of a library file (default: the root task)")
    p.add_argument("--format", choices=FORMATS, default="mermaid",
                   help="mermaid (default), dot (Graphviz), or svg (needs Graphviz's dot)")
    p.add_argument("--run", metavar="RUN.json",
                   help="what `taskdsl run --json` printed for a run of this task: each step's status and time on the picture")
    p.set_defaults(func=graph_command)
    return p


def graph_command(args) -> int:
    from taskdsl.authoring.graph import NoGraphviz, draw, plan_graph, run_statuses, with_run
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import prepare_file, run_label
    from taskdsl.cli.run import refused

    try:
        prepared = prepare_file(args.file, args.task)
    except (OSError, UnreadableTemplate, TemplateErrors, CompileError) as e:
        return refused("graph", args.file, e)
    except TaskError as e:  # a library without --task, an unknown --task
        print(f"taskdsl graph: {args.file}: {e.message}", file=sys.stderr)
        return 2
    graph, colours = plan_graph(prepared.node, prepared.library), None
    if args.run:
        try:
            steps = run_steps(args.run)
        except ValueError as e:
            print(f"taskdsl graph: --run {args.run}: {e}", file=sys.stderr)
            return 2
        label = run_label(prepared)
        roots = sorted({str(step.get("path", "")).split("/")[0] for step in steps} - {""})
        if roots and label not in roots:  # another task's run would colour this picture wrongly
            print(f"taskdsl graph: --run {args.run} is a run of {', '.join(repr(r) for r in roots)}, not of "
                  f"'{label}': run this task with --json, or draw the task that ran", file=sys.stderr)
            return 2
        statuses, unmapped = run_statuses(graph, steps)
        graph, colours = with_run(graph, statuses)
        if unmapped:
            print(f"taskdsl graph: {len(unmapped)} step(s) of the run are not in the picture (the template changed "
                  f"since the run?): {', '.join(unmapped[:5])}", file=sys.stderr)
    try:
        sys.stdout.write(draw(graph, args.format, colours))
    except NoGraphviz as e:
        print(f"taskdsl graph: {e}", file=sys.stderr)
        return 2
    return 0


MAX_RUN_BYTES = 200_000_000  # the `taskdsl run --json` output read by --run


def run_steps(path: str) -> list[dict]:
    """The steps of `taskdsl run --json`'s output (the result's or the error's); ValueError saying why not."""
    try:
        run = jsontext.loads(reading.read_bytes(path, MAX_RUN_BYTES).decode("utf-8"))
    except reading.ReadRefused as e:
        raise ValueError(f"{e.why}: give the file `taskdsl run --json` wrote") from None
    except OSError as e:
        raise ValueError(e.strerror or str(e)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"not JSON ({e})") from None
    steps = run.get("steps") if isinstance(run, dict) else None
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise ValueError("not the output of `taskdsl run --json` (no \"steps\" list)")
    return steps
