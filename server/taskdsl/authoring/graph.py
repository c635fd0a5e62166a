"""Pictures of a run: the plan's task tree (`Prepared.node`, refs and calls resolved by the run's
library) as Mermaid or Graphviz DOT text, and SVG through Graphviz's `dot` when it is installed.

The tree is the compiled plan a run executes, so the picture shows what runs: a sequential's
numbered steps, a cond's cases (labelled with their tests) and default, a reduce's inner and
reduction tasks, nested input tasks, and each ref or call with a dashed edge to the definition it
resolves to (drawn once, however often it is called).

After a run, `run_statuses` puts the run's steps on the picture: each step's path (the evaluator's
`Ctx.at` segments: `steps[2]`, `case[1]`, `default`, `inner_task[3]`, `inputs/NAME`, `call:NAME`,
`ref:NAME`) is followed along the routes `plan_graph` records beside the edges, so a step lands
on the node that drew it (`node_for_step`, the one mapping).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("mermaid", "dot", "svg")


@dataclass
class Graph:
    nodes: list[tuple[str, str, str]] = field(default_factory=list)  # (id, label, kind)
    edges: list[tuple[str, str, str, bool]] = field(default_factory=list)  # (from, to, label, is a reference)
    routes: dict[tuple[str, str], str] = field(default_factory=dict)  # (node, a run path's segment) → node
    definitions: dict[str, str] = field(default_factory=dict)  # a called name → its definition's node
    root: str = ""


#: the kinds of node a run reports a step for (a ref, call or template passes its path on)
STEP_KINDS = ("atomic", "sequential", "reduce", "script", "cond")


def short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plan_graph(node: Any, library: Any) -> Graph:
    """The graph of a run of `node`; references are looked up in `library` (the run's)."""
    from taskdsl.evaluator import ast

    graph = Graph()
    ids: dict[int, str] = {}
    definitions: dict[str, str] = {}  # a referenced name → its node id

    def add(n: Any, label: str, kind: str) -> str:
        ids[id(n)] = f"n{len(ids) + 1}"
        graph.nodes.append((ids[id(n)], label, kind))
        return ids[id(n)]

    def edge(parent: str, child: Any, label: str = "", segment: str | None = None) -> None:
        if child is not None:
            graph.edges.append((parent, visit(child), label, False))
            if segment is not None:
                graph.routes[(parent, segment)] = ids[id(child)]

    def definition(name: str) -> str | None:
        if name not in definitions:
            try:
                target = library.get_task(name)
            except Exception:  # unknown: the check reports it; the picture shows the call alone
                return None
            definitions[name] = ""  # a recursive reference ends here
            definitions[name] = graph.definitions[name] = visit(target.ast_node)
        return definitions[name] or None

    def parameters(name: str) -> list[str]:
        try:
            return list(library.get_task(name).metadata.get("parameters", []))
        except Exception:
            return []

    def visit(n: Any) -> str:
        if id(n) in ids:
            return ids[id(n)]
        if isinstance(n, ast.Template):
            me = add(n, f"template {n.name}({', '.join(n.params)})", "template")
            edge(me, n.body, segment="")  # the body runs at the template's own path
            return me
        if isinstance(n, ast.FunctionCall):
            me = add(n, f"{n.kind} {n.func_name}", "reference")
            target = definition(n.func_name)
            positional = iter(parameters(n.func_name))  # the run names a positional argument by its param
            for name, arg in n.args:
                bound = name or next(positional, None)
                if isinstance(arg, ast.TaskArg):
                    edge(me, arg.node, f"arg {name}" if name else "arg", f"inputs/{bound}" if bound else None)
            if target:
                graph.edges.append((me, target, "", True))
            return me
        if isinstance(n, ast.Cond):
            me = add(n, "cond", "cond")
            for number, case in enumerate(n.cases, 1):
                edge(me, case.body, short(case.test_text), f"case[{number}]")
            edge(me, n.default, "default", "default")
            return me
        label = n.name.rsplit("/", 1)[-1]
        if getattr(n, "description", ""):  # what the task is for, as its <description> says
            label += f"\n{short(n.description)}"
        if isinstance(n, ast.Script):
            me = add(n, f"{label}\nscript: {short(n.command)}", "script")
        elif isinstance(n, ast.Atomic):
            me = add(n, f"{label}\natomic" + (f" ({n.model})" if n.model else ""), "atomic")
        else:
            me = add(n, f"{label}\n{n.kind}", n.kind)
        for inp in n.inputs:
            if isinstance(inp.source, ast.TaskArg):
                edge(me, inp.source.node, f"input {inp.name}", f"inputs/{inp.name}")
        if isinstance(n, ast.Sequential):
            for number, step in enumerate(n.steps, 1):
                edge(me, step, str(number), f"steps[{number}]")
        elif isinstance(n, ast.Reduce):
            edge(me, n.inner_task, "inner_task", "inner_task")
            edge(me, n.reduction_task, "reduction_task", "reduction_task")
        return me

    graph.root = visit(node)
    return graph


# ---------------------------------------------------------------------------------------------
# a run on the picture

_SEGMENT = re.compile(r"inputs/[^/]+|[^/]+")
_ITEM = re.compile(r"^(inner_task|reduction_task)\[\d+\]$")  # a reduce's part, once per item


def _entered(graph: Graph, node: str) -> str:
    "The node a path arriving at `node` names: a template's body runs at the template's path."
    seen = set()
    while (node, "") in graph.routes and node not in seen:
        seen.add(node)
        node = graph.routes[(node, "")]
    return node


def node_for_step(graph: Graph, path: str) -> str | None:
    """The node of the run step at `path` (a path of the run of the graph's root), or None when
    the picture has no such step (the template changed since the run)."""
    segments = _SEGMENT.findall(path)
    if not segments:
        return None
    node = _entered(graph, graph.root)
    for segment in segments[1:]:  # the first segment is the run's label: the root
        segment = _ITEM.sub(r"\1", segment)
        if segment.startswith(("call:", "ref:")):
            found = graph.definitions.get(segment.split(":", 1)[1])
        else:
            found = graph.routes.get((node, segment))
        if found is None:
            return None
        node = _entered(graph, found)
    return node


@dataclass
class NodeRun:
    """What a run did at one node: its worst status over every step it ran as, their time."""

    status: str
    duration_s: float = 0.0
    count: int = 0


#: how bad a step's status is: a node run several times shows its worst
SEVERITY = {"COMPLETE": 0, "RUNNING": 1, "CANCELLED": 2, "DEGRADED": 3, "FAILED": 4}


def run_statuses(graph: Graph, steps: list[dict]) -> tuple[dict[str, NodeRun], list[str]]:
    """({node id: NodeRun}, the paths of steps the picture has no node for) of a run's steps
    (`taskdsl run --json`'s or the run command's: `path`, `status`, `duration_s`)."""
    runs: dict[str, NodeRun] = {}
    unmapped: list[str] = []
    for step in steps:
        path, status = step.get("path"), step.get("status")
        node = node_for_step(graph, path) if isinstance(path, str) else None
        if node is None or status not in SEVERITY:
            unmapped.append(str(path))
            continue
        seen = runs.setdefault(node, NodeRun(status))
        if SEVERITY[status] > SEVERITY[seen.status]:
            seen.status = status
        duration = step.get("duration_s")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool):
            seen.duration_s = round(seen.duration_s + max(float(duration), 0.0), 3)
        seen.count += 1
    return runs, unmapped


STATUS_MARKS = {"COMPLETE": "✓ ok", "FAILED": "✗ error", "DEGRADED": "⚠ degraded", "CANCELLED": "• cancelled",
                "RUNNING": "• cancelled", None: "not run"}
STATUS_COLOURS = {"COMPLETE": "#c8e6c9", "FAILED": "#ffcdd2", "DEGRADED": "#ffe0b2", "CANCELLED": "#e0e0e0",
                  "RUNNING": "#e0e0e0", None: "#f5f5f5"}


def with_run(graph: Graph, runs: dict[str, NodeRun]) -> tuple[Graph, dict[str, str]]:
    """The graph with each step node's label ending in its run (mark, count, duration), and the
    fill colour of each step node: a node the run did not reach says "not run"."""
    nodes, colours = [], {}
    for node_id, label, kind in graph.nodes:
        if kind in STEP_KINDS:
            run = runs.get(node_id)
            line = STATUS_MARKS[run.status if run else None]
            if run:
                line += (f" ×{run.count}" if run.count > 1 else "") + f" {run.duration_s:.2f} s"
            label = f"{label}\n{line}"
            colours[node_id] = STATUS_COLOURS[run.status if run else None]
        nodes.append((node_id, label, kind))
    return Graph(nodes, graph.edges, graph.routes, graph.definitions, graph.root), colours


# `#` first: the other codes contain it. `<`/`>` so a label's text is never HTML; a backtick would
# start a Markdown string.
MERMAID_ENTITIES = (("#", "#35;"), ('"', "#quot;"), ("|", "#124;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;"))
MERMAID_SHAPES = {"cond": ('{"', '"}'), "reference": ('(["', '"])'), "template": ('[["', '"]]')}


def mermaid(graph: Graph, colours: dict[str, str] | None = None) -> str:
    def text(label: str) -> str:  # a quoted Mermaid string: entity codes for what its parser or HTML would read
        for char, code in MERMAID_ENTITIES:
            label = label.replace(char, code)
        return label.replace("\n", "<br/>")

    lines = ["flowchart TD"]
    for node_id, label, kind in graph.nodes:
        left, right = MERMAID_SHAPES.get(kind, ('["', '"]'))
        lines.append(f"  {node_id}{left}{text(label)}{right}")
    for source, target, label, reference in graph.edges:
        arrow = "-.->" if reference else "-->"
        edge_label = f'|"{text(label)}"|' if label else ""
        lines.append(f"  {source} {arrow}{edge_label} {target}")
    lines += [f"  style {node_id} fill:{colour}" for node_id, colour in (colours or {}).items()]
    return "\n".join(lines) + "\n"


DOT_SHAPES = {"cond": "diamond", "reference": "box, style=rounded", "template": "box, peripheries=2"}


def dot(graph: Graph, colours: dict[str, str] | None = None) -> str:
    def text(label: str) -> str:
        return '"' + label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["digraph taskdsl {", "  node [shape=box, fontname=Helvetica];"]
    for node_id, label, kind in graph.nodes:
        fill = f", style=filled, fillcolor={text(colours[node_id])}" if colours and node_id in colours else ""
        lines.append(f"  {node_id} [label={text(label)}, shape={DOT_SHAPES.get(kind, 'box')}{fill}];")
    for source, target, label, reference in graph.edges:
        attrs = [f"label={text(label)}"] if label else []
        attrs += ["style=dashed"] if reference else []
        lines.append(f"  {source} -> {target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    return "\n".join(lines + ["}"]) + "\n"


class NoGraphviz(RuntimeError):
    """SVG needs Graphviz's `dot` program."""


def svg(graph: Graph, colours: dict[str, str] | None = None) -> str:
    program = shutil.which("dot")
    if program is None:
        raise NoGraphviz("--format svg needs Graphviz's `dot` program on PATH: install Graphviz "
                         "(apt install graphviz, brew install graphviz), or print --format dot or mermaid")
    done = subprocess.run([program, "-Tsvg"], input=dot(graph, colours), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise NoGraphviz(f"Graphviz's dot failed: {done.stderr.strip()}")
    return done.stdout


def draw(graph: Graph, fmt: str, colours: dict[str, str] | None = None) -> str:
    return {"mermaid": mermaid, "dot": dot, "svg": svg}[fmt](graph, colours)
