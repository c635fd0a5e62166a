"""Latency a user feels, each figure beside a floor measured in the same run.

    .venv/bin/python bench/bench_latency.py [--quick] [--json rows.json]

- first CLI run: `taskdsl run examples/summarise.task.xml --model taskdsl/echo` in a new process
  (goal ≤ 300 ms wall), beside a process that only imports lxml;
- first run after server start, echo model: the editor's run command once the server has been up
  5 s (goal < 300 ms), beside the second run;
- initialize: spawn → initialize answered, beside a bare pygls server (goal ≤ 1.2x);
- first hover after start: right after the first diagnostics, and after one idle second (goal
  ≤ 20 ms), beside a warm hover;
- open → its own diagnostics with 15 open documents that share its task name (each re-checked
  because of it) against one document alone (goal: p95 within 1.2x);
- side by side with a peer: yaml-language-server (bench/.peer, installed by
  bench/install_peer.sh; skipped when missing) on a comparable 2,000-line YAML document with a
  JSON Schema, driven by the same stdio client: initialize, open → diagnostics, hover p95.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_server import SMALL, percentile, template_of_lines  # noqa: E402
from lsp_client import SERVER_CMD, LspClient  # noqa: E402
from report import Row, limit_row, ratio_row, table, write  # noqa: E402

EXAMPLE = HERE.parent / "examples" / "summarise.task.xml"
BARE = [sys.executable, str(HERE / "bare_pygls_server.py")]
PEER = HERE / ".peer" / "node_modules" / ".bin" / "yaml-language-server"
GROUP = "latency"


def wall(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def first_cli_run(repeat: int) -> Row:
    floor = wall([sys.executable, "-c", "import lxml.etree"], repeat)
    measured = wall([sys.executable, "-m", "taskdsl", "run", str(EXAMPLE), "--model", "taskdsl/echo"], repeat)
    return limit_row(GROUP, "first CLI run, echo model (wall, new process)", measured * 1e3, 300.0,
                     note=f"floor: a process importing lxml {floor * 1e3:.0f} ms")


def hover_at(client: LspClient, uri: str, line: int, character: int) -> float:
    started = time.perf_counter()
    answer = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
    assert answer, "no hover"
    return time.perf_counter() - started


def initialize_time(command: list[str], workspace: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        client = LspClient(cmd=command)
        client.initialize(workspace)
        times.append(time.perf_counter() - client.started)  # initialize's answer is what the client waits for
        client.close()
    return statistics.median(times)


def first_hovers(workspace: Path, repeat: int) -> tuple[float, float, float]:
    """(first hover right after the first diagnostics, first hover after 1 s idle, warm hover)."""
    at_once, after_idle, warm = [], [], []
    for i in range(repeat):
        for delay, into in ((0.0, at_once), (1.0, after_idle)):
            client = LspClient(settings={"debounce": 0})
            client.initialize(workspace)
            uri = (workspace / f"hover{i}-{delay}.task.xml").as_uri()
            client.open(uri, SMALL)
            client.wait_diagnostics(uri)
            time.sleep(delay)
            into.append(hover_at(client, uri, 1, 4))
            if delay:
                time.sleep(3.0)  # the background work is over
                warm.append(min(hover_at(client, uri, 1, 4) for _ in range(5)))
            client.close()
    return statistics.median(at_once), statistics.median(after_idle), statistics.median(warm)


def shared_name_document(i: int, lines: int = 200) -> str:
    text = template_of_lines(lines).replace('name="big"', 'name="shared"')
    return text.replace("</description>", f" (copy {i})</description>", 1)


def drain(client: LspClient, uris: list[str]) -> None:
    for uri in uris:
        client.wait_diagnostics(uri, timeout=30)


def open_p95(client: LspClient, workspace: Path, others: list[str], samples: int, tag: str) -> float:
    times = []
    for i in range(samples):
        uri = (workspace / f"{tag}-{i}.task.xml").as_uri()
        started = time.perf_counter()
        client.open(uri, shared_name_document(1000 + i))
        client.wait_diagnostics(uri)
        times.append(time.perf_counter() - started)
        drain(client, others)  # each of the others is re-checked (it now has a duplicate)
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        client.wait_diagnostics(uri)  # the close clears its diagnostics
        drain(client, others)
    return percentile(times, 0.95)


def open_with_many(workspace: Path, samples: int) -> tuple[float, float]:
    client = LspClient(settings={"debounce": 0})
    client.initialize(workspace)
    warm = (workspace / "warm.task.xml").as_uri()
    client.open(warm, SMALL)
    client.wait_diagnostics(warm)
    client.notify("textDocument/didClose", {"textDocument": {"uri": warm}})
    client.wait_diagnostics(warm)
    alone = open_p95(client, workspace, [], samples, "alone")
    others = []
    for i in range(15):
        uri = (workspace / f"open{i}.task.xml").as_uri()
        client.open(uri, shared_name_document(i))
        others.append(uri)
        time.sleep(0.05)
    time.sleep(1.0)
    while True:  # every re-check of the 15 is out
        try:
            client.notifications.get(timeout=0.5)
        except Exception:
            break
    many = open_p95(client, workspace, others, samples, "many")
    client.close()
    return alone, many


def first_server_run(workspace: Path) -> tuple[float, float]:
    """(first run of the editor's run command 5 s after start, the second run), echo model."""
    target = workspace / "summarise.task.xml"
    shutil.copy(EXAMPLE, target)
    client = LspClient(settings={"debounce": 0})
    client.initialize(workspace)
    client.open(target.as_uri(), target.read_text(encoding="utf-8"))
    client.wait_diagnostics(target.as_uri())
    time.sleep(max(0.0, 5.0 - (time.perf_counter() - client.started)))
    times = []
    for _ in range(2):
        started = time.perf_counter()
        result = client.request("workspace/executeCommand", {"command": "taskdsl.runTask",
                                                             "arguments": [target.as_uri(), None, {}, "taskdsl/echo"]})
        times.append(time.perf_counter() - started)
        assert result and result.get("status") == "COMPLETE", result
    client.close()
    return times[0], times[1]


# --------------------------------------------------------------------------- the peer

def yaml_document(lines: int) -> str:
    """A pipeline of about `lines` lines, the same shape as template_of_lines (10 lines a step)."""
    head = "# yaml-language-server: $schema=pipeline.schema.json\nname: big\ndescription: A long pipeline\nsteps:\n"
    step = ("  - type: atomic\n"
            "    description: \"Step {i}: summarise {{{{last_output}}}}\"\n"
            "    context_management:\n"
            "      inherit_context: full\n"
            "    inputs:\n"
            "      - name: n{i}\n"
            "        value: value {i}\n"
            "    output_format:\n"
            "      type: text\n"
            "    model: gpt-4o-mini\n")
    return head + "".join(step.format(i=i) for i in range(max(1, (lines - 4) // 10)))


def yaml_schema() -> dict:
    step = {
        "type": "object", "additionalProperties": False, "required": ["type", "description"],
        "properties": {
            "type": {"enum": ["atomic", "sequential", "reduce", "script"], "description": "What kind of task."},
            "description": {"type": "string", "description": "What the task does; its prompt when there are no instructions."},
            "context_management": {"type": "object", "additionalProperties": False, "properties": {
                "inherit_context": {"enum": ["full", "none", "subset"], "description": "What the step inherits."}}},
            "inputs": {"type": "array", "items": {"type": "object", "required": ["name"], "additionalProperties": False,
                                                  "properties": {"name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                                                                 "value": {"type": "string"}}}},
            "output_format": {"type": "object", "properties": {"type": {"enum": ["text", "json"]}}},
            "model": {"type": "string", "description": "The model."},
        },
    }
    return {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": False,
            "required": ["name", "steps"],
            "properties": {"name": {"type": "string", "description": "The task's name."},
                           "description": {"type": "string"}, "steps": {"type": "array", "items": step}}}


def server_figures(command: list[str], workspace: Path, name: str, text: str, hover_line: int, hover_character: int,
                   samples: int, settings: dict | None = None) -> dict[str, float]:
    """initialize, open → diagnostics and hover p95 of one server on one 2,000-line document."""
    client = LspClient(cmd=command, settings=settings)
    client.initialize(workspace)
    initialized = time.perf_counter() - client.started
    if settings is not None:
        client.notify("workspace/didChangeConfiguration", {"settings": settings})
    uri = (workspace / name).as_uri()
    started = time.perf_counter()
    client.open(uri, text)
    client.wait_diagnostics(uri)
    opened = time.perf_counter() - started
    time.sleep(3.0)  # both servers idle: what they build after the first diagnostics is done
    hovers = [hover_at(client, uri, hover_line, hover_character) for _ in range(samples)]
    client.close()
    return {"initialize": initialized, "open": opened, "hover": percentile(hovers, 0.95)}


def peer_rows(workspace: Path, samples: int) -> list[Row]:
    if not PEER.exists():
        print("yaml-language-server is not installed (bash bench/install_peer.sh): no peer figures", file=sys.stderr)
        return []
    text = yaml_document(2000)
    (workspace / "pipeline.schema.json").write_text(json.dumps(yaml_schema()), encoding="utf-8")
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("    description:"))
    peer_settings = {"yaml": {"validate": True, "hover": True, "completion": True}}
    peer = server_figures([str(PEER), "--stdio"], workspace, "pipeline.yaml", text, last, 6, samples, peer_settings)
    template = template_of_lines(2000)
    tlines = template.splitlines()
    tlast = max(i for i, line in enumerate(tlines) if "<description>Step" in line)
    ours = server_figures(SERVER_CMD, workspace, "pipeline.task.xml", template, tlast,
                          tlines[tlast].index("description") + 2, samples)
    label = "yaml-language-server, 2,000-line YAML + JSON Schema"
    return [ratio_row(GROUP, f"peer: {what}, 2,000 lines", ours[key] * 1e3, peer[key] * 1e3, label, None)
            for key, what in (("initialize", "spawn → initialize answered"), ("open", "open → diagnostics"),
                              ("hover", "hover p95 (3 s after the open)"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    # an installed wheel has its bytecode compiled: let the first start of each module write it
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "server" / "taskdsl")], capture_output=True)
    repeat = 3 if args.quick else 7
    samples = 10 if args.quick else 30
    rows: list[Row] = [first_cli_run(repeat)]
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        first, second = first_server_run(workspace)
        rows.append(Row(GROUP, "first run after server start (up 5 s), echo model", first * 1e3, "ms", second * 1e3,
                        "the second run", "< 300 ms", first * 1e3 < 300))
        floor = initialize_time(BARE, workspace, repeat)
        measured = initialize_time(SERVER_CMD, workspace, repeat)
        rows.append(ratio_row(GROUP, "spawn → initialize answered", measured * 1e3, floor * 1e3, "a bare pygls server", 1.2))
        at_once, after_idle, warm = first_hovers(workspace, max(2, repeat // 2))
        rows.append(limit_row(GROUP, "first hover, right after the first diagnostics", at_once * 1e3, 20.0,
                              note=f"warm hover {warm * 1e3:.2f} ms"))
        rows.append(limit_row(GROUP, "first hover, 1 s after the first diagnostics", after_idle * 1e3, 20.0,
                              note=f"warm hover {warm * 1e3:.2f} ms"))
        alone, many = open_with_many(workspace, 2 * samples)  # a p95 of a few ms: more samples
        rows.append(ratio_row(GROUP, "open → own diagnostics p95, 15 open documents re-checked by it", many * 1e3,
                              alone * 1e3, "the same open with no other document", 1.2))
        rows += peer_rows(workspace, samples)
    print(table(rows))
    write(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
