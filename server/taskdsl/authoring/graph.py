"""Pictures of a run: the plan's task tree (`Prepared.node`, refs and calls resolved by the run's
library) as Mermaid or Graphviz DOT text, and SVG through Graphviz's `dot` when it is installed.

The tree is the compiled plan a run executes, so the picture shows what runs: a sequential's
numbered steps, a cond's cases (labelled with their tests) and default, a reduce's inner and
reduction tasks, nested input tasks, and each ref or call with a dashed edge to the definition it
resolves to (drawn once, however often it is called).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("mermaid", "dot", "svg")


@dataclass
class Graph:
    nodes: list[tuple[str, str, str]] = field(default_factory=list)  # (id, label, kind)
    edges: list[tuple[str, str, str, bool]] = field(default_factory=list)  # (from, to, label, is a reference)


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

    def edge(parent: str, child: Any, label: str = "") -> None:
        if child is not None:
            graph.edges.append((parent, visit(child), label, False))

    def definition(name: str) -> str | None:
        if name not in definitions:
            try:
                target = library.get_task(name)
            except Exception:  # unknown: the check reports it; the picture shows the call alone
                return None
            definitions[name] = ""  # a recursive reference ends here
            definitions[name] = visit(target.ast_node)
        return definitions[name] or None

    def visit(n: Any) -> str:
        if id(n) in ids:
            return ids[id(n)]
        if isinstance(n, ast.Template):
            me = add(n, f"template {n.name}({', '.join(n.params)})", "template")
            edge(me, n.body)
            return me
        if isinstance(n, ast.FunctionCall):
            me = add(n, f"{n.kind} {n.func_name}", "reference")
            for name, arg in n.args:
                if isinstance(arg, ast.TaskArg):
                    edge(me, arg.node, f"arg {name}" if name else "arg")
            target = definition(n.func_name)
            if target:
                graph.edges.append((me, target, "", True))
            return me
        if isinstance(n, ast.Cond):
            me = add(n, "cond", "cond")
            for case in n.cases:
                edge(me, case.body, short(case.test_text))
            edge(me, n.default, "default")
            return me
        label = n.name.rsplit("/", 1)[-1]
        if isinstance(n, ast.Script):
            me = add(n, f"{label}\nscript: {short(n.command)}", "script")
        elif isinstance(n, ast.Atomic):
            me = add(n, f"{label}\natomic" + (f" ({n.model})" if n.model else ""), "atomic")
        else:
            me = add(n, f"{label}\n{n.kind}", n.kind)
        for inp in n.inputs:
            if isinstance(inp.source, ast.TaskArg):
                edge(me, inp.source.node, f"input {inp.name}")
        if isinstance(n, ast.Sequential):
            for number, step in enumerate(n.steps, 1):
                edge(me, step, str(number))
        elif isinstance(n, ast.Reduce):
            edge(me, n.inner_task, "inner_task")
            edge(me, n.reduction_task, "reduction_task")
        return me

    visit(node)
    return graph


# `#` first: the other codes contain it. `<`/`>` so a label's text is never HTML; a backtick would
# start a Markdown string.
MERMAID_ENTITIES = (("#", "#35;"), ('"', "#quot;"), ("|", "#124;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;"))
MERMAID_SHAPES = {"cond": ('{"', '"}'), "reference": ('(["', '"])'), "template": ('[["', '"]]')}


def mermaid(graph: Graph) -> str:
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
    return "\n".join(lines) + "\n"


DOT_SHAPES = {"cond": "diamond", "reference": "box, style=rounded", "template": "box, peripheries=2"}


def dot(graph: Graph) -> str:
    def text(label: str) -> str:
        return '"' + label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = ["digraph taskdsl {", "  node [shape=box, fontname=Helvetica];"]
    for node_id, label, kind in graph.nodes:
        lines.append(f"  {node_id} [label={text(label)}, shape={DOT_SHAPES.get(kind, 'box')}];")
    for source, target, label, reference in graph.edges:
        attrs = [f"label={text(label)}"] if label else []
        attrs += ["style=dashed"] if reference else []
        lines.append(f"  {source} -> {target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    return "\n".join(lines + ["}"]) + "\n"


class NoGraphviz(RuntimeError):
    """SVG needs Graphviz's `dot` program."""


def svg(graph: Graph) -> str:
    program = shutil.which("dot")
    if program is None:
        raise NoGraphviz("--format svg needs Graphviz's `dot` program on PATH: install Graphviz "
                         "(apt install graphviz, brew install graphviz), or print --format dot or mermaid")
    done = subprocess.run([program, "-Tsvg"], input=dot(graph), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise NoGraphviz(f"Graphviz's dot failed: {done.stderr.strip()}")
    return done.stdout


def draw(graph: Graph, fmt: str) -> str:
    return {"mermaid": mermaid, "dot": dot, "svg": svg}[fmt](graph)
