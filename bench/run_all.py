"""Every benchmark in one command; each figure is printed beside its floor and its goal.

    .venv/bin/python bench/run_all.py            # full: 3 runs of the server benchmark, soak 2,000 edits / 200 documents
    .venv/bin/python bench/run_all.py --quick    # one run of each, fewer samples, a short soak (~1 min)
    .venv/bin/python bench/run_all.py --markdown # the table as Markdown (docs/performance.md)

Each script runs in its own process (bench_server.py, bench_library.py, bench_evaluator.py, bench_batch.py,
bench_latency.py, soak_server.py) and hands its rows back as JSON. With --repeat N a script runs N times and every
value and floor is the median of the runs (the machine is shared: figures are noisy).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from report import Row, read, table  # noqa: E402


def scripts(quick: bool) -> list[tuple[str, list[str]]]:
    return [
        ("bench_server.py", ["--quick"] if quick else []),
        ("bench_library.py", ["--runs", "5" if quick else "20"]),
        ("bench_evaluator.py", ["--nodes", "50" if quick else "200"]),
        ("bench_latency.py", ["--quick"] if quick else []),
        ("bench_batch.py", ["--rows", "96" if quick else "320"]),
        ("soak_server.py", ["--edits", "200", "--documents", "50"] if quick else []),
    ]


def run(script: str, arguments: list[str], verbose: bool) -> list[Row]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = handle.name
    try:
        completed = subprocess.run([sys.executable, os.path.join(HERE, script), *arguments, "--json", out],
                                   capture_output=True, text=True)
        if verbose or completed.returncode:
            sys.stderr.write(completed.stdout + completed.stderr)
        if completed.returncode:
            raise SystemExit(f"{script} failed (exit {completed.returncode})")
        return read(out)
    finally:
        os.unlink(out)


def median_rows(runs: list[list[Row]]) -> list[Row]:
    """Row by row (same names, same order), the median value and floor; met is re-judged."""
    if len(runs) == 1:
        return runs[0]
    merged = []
    for rows in zip(*runs):
        first = rows[0]
        value = statistics.median(r.value for r in rows)
        floors = [r.floor for r in rows if r.floor is not None]
        floor = statistics.median(floors) if floors else None
        met = first.met
        if first.goal:
            met = judge(first.goal, value, floor)
        note = first.note if len(rows) == 1 else f"median of {len(rows)} runs" + (f"; run 1: {first.note}" if first.note else "")
        merged.append(Row(first.group, first.name, value, first.unit, floor, first.floor_name, first.goal, met, note))
    return merged


def judge(goal: str, value: float, floor: float | None) -> bool | None:
    sign, number = goal.split()[0], float(goal.split()[1].rstrip("x"))
    measured = value / floor if goal.endswith("floor") and floor else value
    return measured < number if sign == "<" else measured <= number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, one run each, a short soak")
    parser.add_argument("--repeat", type=int, help="runs of the server and library benchmarks (default 3, quick 1)")
    parser.add_argument("--only", help="comma-separated script names (e.g. bench_server,soak_server)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--verbose", action="store_true", help="also show each script's own output")
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    only = set(args.only.replace(".py", "").split(",")) if args.only else None
    rows: list[Row] = []
    started = time.perf_counter()
    for script, arguments in scripts(args.quick):
        if only and script.removesuffix(".py") not in only:
            continue
        times = repeat if script in ("bench_server.py", "bench_library.py") else 1
        print(f"running {script} {' '.join(arguments)} ×{times} …", file=sys.stderr, flush=True)
        rows += median_rows([run(script, arguments, args.verbose) for _ in range(times)])
    print(table(rows, markdown=args.markdown))
    missed = [r for r in rows if r.met is False]
    print(f"\n{len(rows)} figures, {sum(r.met is True for r in rows)} goals met, {len(missed)} missed "
          f"({time.perf_counter() - started:.0f} s; machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
