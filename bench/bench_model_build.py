"""Where a check's time goes, per phase, beside the floor (lxml parse + XSD of the same text), and
what an lxml-first document model would cost.

    .venv/bin/python bench/bench_model_build.py [--templates 3000] [--lines 2000] [--rounds 5]

On the workspace `bench_library.py` generates (3,000 templates) and on the 2,000-line template of
`bench_server.py`, in one process, each phase timed as CPU time, best of ``--rounds`` rounds (the
phases alternate inside every round, so a load change on the shared machine hits them alike):

- floor: lxml parse + XSD validation (what the goals are measured against);
- scanner: the tolerant scanner (`document.parse`), the document model every rule reads;
- lxml-first, no offsets: an lxml parse and a walk that builds one object per element with its
  tag, attributes, text and source line — the least an lxml-backed model must do (no spans);
- lxml-first, with offsets: the same plus each element's start offset, found from its source line
  by searching the start tag (what a model needs to underline anything; attributes, end tags and
  text runs would cost more again);
- the checker's other phases on the scanned document: well-formedness (lxml parse), the schema
  check, the rules, the library index of the file.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from lxml import etree  # noqa: E402

# taskdsl as installed, or from the tree PYTHONPATH names (compare_trees.py), imported before
# bench_library, which puts this checkout's server/ first on sys.path
from taskdsl.language import schema_check  # noqa: E402
from taskdsl.language.document import gc_paused, parse  # noqa: E402
from taskdsl.rules import run_rules  # noqa: E402
from taskdsl.language.safexml import parser as safe_parser, wellformedness  # noqa: E402
from taskdsl.language.schema import lxml_schema  # noqa: E402
from taskdsl.project.settings import Settings  # noqa: E402

try:
    from taskdsl.library.definitions import index_document  # noqa: E402
except ImportError:  # an older tree, before the library package
    from taskdsl.library import index_document  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from bench_library import generate  # noqa: E402
from bench_server import template_of_lines  # noqa: E402


class LxmlElement:
    """One element of an lxml-first model: what rules read, without spans."""

    __slots__ = ("tag", "attrs", "text", "line", "children", "start")

    def __init__(self, tag, attrs, text, line):
        self.tag, self.attrs, self.text, self.line, self.children, self.start = tag, attrs, text, line, [], -1


def lxml_model(data: bytes, offsets: str | None = None) -> list[LxmlElement]:
    """Walk lxml's tree into LxmlElements; with ``offsets`` (the text), find each start offset."""
    root = etree.fromstring(data, safe_parser())
    line_starts = None
    if offsets is not None:
        line_starts = [0] + [m.end() for m in re.finditer("\n", offsets)]
    built = []
    stack = [(root, None)]
    while stack:
        node, parent = stack.pop()
        if not isinstance(node.tag, str):
            continue
        element = LxmlElement(node.tag, dict(node.attrib), node.text, node.sourceline)
        if line_starts is not None:
            element.start = offsets.find("<" + node.tag, line_starts[node.sourceline - 1])
        if parent is not None:
            parent.children.append(element)
        built.append(element)
        stack.extend((child, element) for child in reversed(node))
    return built


_fresh = itertools.count(1)


def phases(texts: list[str]) -> dict[str, float]:
    """CPU seconds of each phase over all texts (one round)."""
    encoded = [t.encode() for t in texts]
    schema = lxml_schema()
    timings: dict[str, float] = {}

    def timed(name, function):
        started = time.process_time()
        with gc_paused():
            result = function()
        timings[name] = time.process_time() - started
        return result

    timed("floor: lxml parse + XSD", lambda: [schema.validate(etree.fromstring(b, safe_parser())) for b in encoded])
    unique = [t + " " * next(_fresh) for t in texts]  # texts the parse cache has not seen
    documents = timed("scanner (document.parse)", lambda: [parse(t) for t in unique])
    timed("lxml-first model, no offsets", lambda: [lxml_model(b) for b in encoded])
    timed("lxml-first model, element start offsets", lambda: [lxml_model(b, t) for b, t in zip(encoded, texts)])
    roots = timed("well-formedness (lxml parse)", lambda: [wellformedness(d)[0] for d in documents])
    timed("schema check (TD1xx)", lambda: [schema_check.validate(d, r) for d, r in zip(documents, roots)])
    settings = Settings()
    timed("rules (run_rules, no library)", lambda: [run_rules(d, settings=settings) for d in documents])
    timed("library index of the file", lambda: [index_document(d, f"/w/{i}.task.xml") for i, d in enumerate(documents)])
    return timings


def report(title: str, texts: list[str], rounds: int) -> None:
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, seconds in phases(texts).items():
            best[name] = min(best.get(name, seconds), seconds)
    floor = best["floor: lxml parse + XSD"]
    load = os.getloadavg()[0]
    print(f"\n{title} ({len(texts)} texts; CPU time per text, best of {rounds} rounds; load {load:.2f})")
    for name, seconds in best.items():
        print(f"  {name:45} {seconds / len(texts) * 1e6:9.1f} µs  {seconds / floor:6.2f}x floor")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", type=int, default=3000)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    report(f"one template of {args.lines:,} lines", [template_of_lines(args.lines)] * 3, args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, args.templates)
        texts = [p.read_text(encoding="utf-8") for p in sorted(Path(tmp).rglob("*.xml"))]
    report(f"workspace of {args.templates:,} templates", texts, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
