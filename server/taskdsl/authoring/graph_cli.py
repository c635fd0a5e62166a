"""`taskdsl graph FILE [--task NAME] [--format mermaid|dot|svg]`: the picture of a run's task tree
(graph.py). Exit 0; 2 when the file does not check or cannot be read, or svg without Graphviz."""

from __future__ import annotations

import argparse
import sys


def add_graph_parser(commands) -> argparse.ArgumentParser:
    from taskdsl.authoring.graph import FORMATS

    p = commands.add_parser("graph", help="draw a template's task tree (Mermaid, DOT or SVG)",
                            description="Draw the task tree a run of FILE executes: steps, cond branches, reduce "
                                        "parts, nested tasks, and refs and calls to other templates.")
    p.add_argument("file", help="the template file (*.task.xml)")
    p.add_argument("--task", help="a named task or template of a library file (default: the root task)")
    p.add_argument("--format", choices=FORMATS, default="mermaid",
                   help="mermaid (default), dot (Graphviz), or svg (needs Graphviz's dot)")
    p.set_defaults(func=graph_command)
    return p


def graph_command(args) -> int:
    from taskdsl.authoring.graph import NoGraphviz, draw, plan_graph
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import prepare_file
    from taskdsl.run_cli import refused

    try:
        prepared = prepare_file(args.file, args.task)
    except (OSError, UnreadableTemplate, TemplateErrors, CompileError) as e:
        return refused("graph", args.file, e)
    except TaskError as e:  # a library without --task, an unknown --task
        print(f"taskdsl graph: {args.file}: {e.message}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(draw(plan_graph(prepared.node, prepared.library), args.format))
    except NoGraphviz as e:
        print(f"taskdsl graph: {e}", file=sys.stderr)
        return 2
    return 0
