"""Language-server benchmarks, each figure printed beside a floor measured in the same run.

    .venv/bin/python bench/bench_server.py [--quick]

- cold start: spawn → initialize → first diagnostics of a small template, beside a process that
  only imports pygls and lxml (goal ≤ 1.5x);
- open → diagnostics over stdio for templates of 100, 2,000 and 20,000 lines, beside lxml parse +
  XSD validation of the same text in process (goal ≤ 3x at 2,000 lines), and against a bare
  pygls server that publishes nothing (the transport alone, for scale); measured once the server
  is idle (its first diagnostics start a background import of litellm, seconds of CPU), with
  one more row for an open during that import;
- edit → re-diagnosis (debounce set to 0), completion and hover latency at the end of a
  2,000-line template (goal p95 ≤ 30 ms).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).parent))
from lsp_client import LspClient  # noqa: E402
from report import Row, limit_row, ratio_row, table, write  # noqa: E402

from taskdsl.language import schema  # noqa: E402

SMALL = """<task type="atomic" name="small">
  <description>Summarise {{text}}</description>
  <inputs><input name="text">hello</input></inputs>
</task>
"""


def template_of_lines(lines: int) -> str:
    """A valid sequential template of about `lines` lines (each step is 6 lines)."""
    head = '<task type="sequential" name="big">\n  <description>A long pipeline</description>\n  <steps>\n'
    step = (
        '    <task type="atomic">\n'
        "      <description>Step {i}: summarise {{{{{used}}}}}</description>\n"
        "      <context_management><inherit_context>full</inherit_context></context_management>\n"
        '      <inputs><input name="n{i}">value {i}</input></inputs>\n'
        "      <output_format type=\"text\"/>\n"
        "    </task>\n"
    )
    count = max(1, (lines - 5) // 6)
    # the first step has no previous output: it summarises its own input (no TD402)
    return head + "".join(step.format(i=i, used="last_output" if i else "n0") for i in range(count)) + "  </steps>\n</task>\n"


def floor_validate(text: str, repeat: int = 5) -> float:
    """Seconds for lxml parse + XSD validation of text in process (best of `repeat`)."""
    validator = schema.lxml_schema()
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        validator.validate(etree.fromstring(text.encode(), parser))
        best = min(best, time.perf_counter() - start)
    return best


def floor_cold_start(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pygls.lsp.server, lxml.etree"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cold_start(workspace: Path, repeat: int) -> float:
    times = []
    for i in range(repeat):
        client = LspClient(settings={"debounce": 0})
        client.initialize(workspace)
        uri = (workspace / f"cold{i}.task.xml").as_uri()
        client.open(uri, SMALL)
        message = client.wait_diagnostics(uri)
        times.append(message["_received"] - client.started)
        client.close()
    return statistics.median(times)


def open_to_diagnostics(client: LspClient, workspace: Path, text: str, name: str, repeat: int) -> float:
    times = []
    for i in range(repeat):
        uri = (workspace / f"{name}-{i}.task.xml").as_uri()
        unique = text.replace("</description>", f" (copy {i})</description>", 1)  # no cached parse of an earlier copy
        start = time.perf_counter()
        client.open(uri, unique)
        message = client.wait_diagnostics(uri)
        times.append(message["_received"] - start)
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return statistics.median(times)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def end_of_document_latencies(client: LspClient, workspace: Path, text: str, samples: int) -> dict[str, list[float]]:
    uri = (workspace / "latency.task.xml").as_uri()
    client.open(uri, text)
    client.wait_diagnostics(uri)
    lines = text.splitlines()
    last_step_line = max(i for i, line in enumerate(lines) if "<description>Step" in line)
    hover_position = {"line": last_step_line, "character": lines[last_step_line].index("description") + 2}
    # inside the last step's <task>, after its start tag: element completion (the children of a task)
    completion_position = {"line": last_step_line - 1, "character": len(lines[last_step_line - 1])}
    results: dict[str, list[float]] = {"edit → re-diagnosis (debounce 0)": [], "completion": [], "hover": []}
    version = 1
    for i in range(samples):
        version += 1
        change = {"range": {"start": {"line": last_step_line, "character": 19}, "end": {"line": last_step_line, "character": 19}}, "text": "x"}
        start = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        message = client.wait_diagnostics(uri, version)
        results["edit → re-diagnosis (debounce 0)"].append(message["_received"] - start)
        start = time.perf_counter()
        items = client.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": completion_position})
        assert items and items["items"], "completion answered no items"
        results["completion"].append(time.perf_counter() - start)
        start = time.perf_counter()
        assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": hover_position}), "no hover"
        results["hover"].append(time.perf_counter() - start)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    samples = 30 if args.quick else 100
    rows: list[Row] = []
    group = "server"
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        floor = floor_cold_start(repeat)
        measured = cold_start(workspace, repeat)
        rows.append(ratio_row(group, "cold start: spawn → initialize → first diagnostics", measured * 1000, floor * 1000,
                              "a process importing pygls+lxml", 1.5))

        client = LspClient(settings={"debounce": 0})
        client.initialize(workspace)
        open_to_diagnostics(client, workspace, SMALL, "warm", 1)  # first check imports the rules
        # right after the first diagnostics the server imports litellm in a background thread
        # (for the first run with a real model): an open then shares the CPU with that import
        during_import = open_to_diagnostics(client, workspace, template_of_lines(2000), "early", repeat)
        client.settle()  # the rows below are what a request costs once that start-up work is over
        for lines in (100, 2000, 20000):
            text = template_of_lines(lines)
            floor = floor_validate(text)
            measured = open_to_diagnostics(client, workspace, text, f"open{lines}", repeat if lines < 20000 else max(2, repeat // 2))
            rows.append(ratio_row(group, f"open → diagnostics, {lines:,} lines", measured * 1000, floor * 1000,
                                  "lxml parse+XSD in process", 3.0 if lines == 2000 else None))
            if lines == 2000:
                rows.append(ratio_row(group, "open → diagnostics, 2,000 lines, in the first seconds (litellm's "
                                      "background import running)", during_import * 1000, measured * 1000,
                                      "the same open once the server is idle", None))
        latencies = end_of_document_latencies(client, workspace, template_of_lines(2000), samples)
        client.close()

        # what the stdio round trip and pygls cost before any checking (not a floor for a goal)
        bare = LspClient(cmd=[sys.executable, str(Path(__file__).parent / "bare_pygls_server.py")])
        bare.initialize(workspace)
        open_to_diagnostics(bare, workspace, SMALL, "bare-warm", 1)
        for lines in (100, 2000):
            measured = open_to_diagnostics(bare, workspace, template_of_lines(lines), f"bare{lines}", repeat)
            rows.append(limit_row(group, f"transport only: open → empty diagnostics from a bare pygls server, {lines:,} lines",
                                  measured * 1000, None))
        bare.close()
    for name, values in latencies.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        rows.append(limit_row(group, f"{name} p95, end of 2,000 lines", p95 * 1000, 30.0, note=f"p50 {p50 * 1000:.1f} ms"))
    print(table(rows))
    write(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
