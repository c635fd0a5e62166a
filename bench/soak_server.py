"""Soak: typing into one large document, then many documents open at once.

    .venv/bin/python bench/soak_server.py [--edits 2000] [--documents 200] [--interval 0.05]

1. `--edits` single-character edits at typing speed (`--interval` seconds apart, debounce 0) at
   the end of a 2,000-line template: edit → diagnostics latency of the first and the last tenth
   of the run (flat means the last is not slower than the first), and the server's memory.
2. `--documents` templates opened at once, then closed: the server's resident memory before,
   with them open, and after closing (it should come back near where it started).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_server import template_of_lines  # noqa: E402
from lsp_client import LspClient  # noqa: E402
from report import Row, limit_row, write  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def settled_rss(client, workspace: Path, timeout: float = 30.0) -> float:
    """The server's RSS once its start-up work is done: the first diagnostics start a background
    import of litellm (~190 MB, once), which is not what the edits cost, so the baseline is taken
    after it, when RSS stops moving (less than 1 MB over 2 s)."""
    uri = (workspace / "warm.task.xml").as_uri()
    client.open(uri, "<task>\n  <description>warm up</description>\n</task>\n")
    client.wait_diagnostics(uri)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    deadline = time.monotonic() + timeout
    last = rss_mb(client.proc.pid)
    while time.monotonic() < deadline:
        time.sleep(2.0)
        now = rss_mb(client.proc.pid)
        if abs(now - last) < 1.0:
            return now
        last = now
    return last


def typing(client: LspClient, workspace: Path, edits: int, interval: float) -> list[float]:
    text = template_of_lines(2000)
    uri = (workspace / "typing.task.xml").as_uri()
    client.open(uri, text)
    client.wait_diagnostics(uri)
    line = text.count("\n") - 3  # inside the last step
    latencies = []
    for version in range(2, edits + 2):
        character = (version - 2) % 40
        change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                  "text": " " if character else "\n"}
        start = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        message = client.wait_diagnostics(uri, version)
        latencies.append(message["_received"] - start)
        time.sleep(max(0.0, interval - (time.perf_counter() - start)))
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return latencies


def many_documents(client: LspClient, workspace: Path, count: int, round_: int = 0) -> tuple[float, float, float]:
    before = rss_mb(client.proc.pid)
    uris = []
    for i in range(count):
        uri = (workspace / f"doc{round_}-{i}.task.xml").as_uri()
        client.open(uri, template_of_lines(300).replace('name="big"', f'name="doc{round_}_{i}"'))
        uris.append(uri)
    for uri in uris:
        client.wait_diagnostics(uri)
    during = rss_mb(client.proc.pid)
    for uri in uris:
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    client.request("workspace/symbol", {"query": ""})  # answered after every close was handled
    time.sleep(1.0)
    after = rss_mb(client.proc.pid)
    return before, during, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=2000)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        client = LspClient(settings={"debounce": 0})
        client.initialize(workspace)
        start_rss = settled_rss(client, workspace)
        latencies = typing(client, workspace, args.edits, args.interval)
        typed_rss = rss_mb(client.proc.pid)
        tenth = max(1, len(latencies) // 10)
        first, last = latencies[:tenth], latencies[-tenth:]
        print(f"typing: {len(latencies)} edits, {args.interval * 1000:.0f} ms apart, 2,000-line template")
        print(f"  edit → diagnostics p50: first tenth {statistics.median(first) * 1000:.1f} ms, "
              f"last tenth {statistics.median(last) * 1000:.1f} ms (ratio {statistics.median(last) / statistics.median(first):.2f})")
        print(f"  server RSS: {start_rss:.0f} MB at start, {typed_rss:.0f} MB after typing")
        before, during, after = many_documents(client, workspace, args.documents)
        print(f"{args.documents} documents open at once: RSS {before:.0f} MB before, {during:.0f} MB open, {after:.0f} MB after closing")
        # CPython keeps freed memory in its arenas (and glibc in its heap) for reuse rather than
        # handing it back: the test of "returns to its level" is that a second round reuses it
        _, during2, after2 = many_documents(client, workspace, args.documents, round_=1)
        print(f"  second round: {during2:.0f} MB open, {after2:.0f} MB after closing")
        alive = client.proc.poll() is None
        client.close()
    first_p50, last_p50 = statistics.median(first) * 1000, statistics.median(last) * 1000
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))] * 1000
    rows = [
        Row("soak", f"typing: {len(latencies):,} edits {args.interval * 1000:.0f} ms apart, p50 last tenth / first tenth",
            last_p50 / first_p50, "x", goal="≤ 1.5x (flat)", met=last_p50 / first_p50 <= 1.5,
            note=f"{first_p50:.1f} → {last_p50:.1f} ms, p95 overall {p95:.1f} ms"),
        limit_row("soak", "typing: server RSS growth over the edits", typed_rss - start_rss, 50.0, unit="MB",
                  note=f"{start_rss:.0f} → {typed_rss:.0f} MB"),
        limit_row("soak", f"{args.documents} documents opened then closed: RSS after − before", after - before, None, unit="MB",
                  note=f"{before:.0f} MB before, {during:.0f} MB open, {after:.0f} MB after"),
        limit_row("soak", f"the same again: RSS after round 2 − after round 1 (memory reused, no growth)", after2 - after, 10.0,
                  unit="MB", note=f"{during2:.0f} MB open, {after2:.0f} MB after; server alive: {alive}"),
    ]
    write(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
