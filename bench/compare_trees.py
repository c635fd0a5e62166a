"""Run one benchmark script on several source trees, alternately, and print each figure side by side.

    git worktree add --detach /tmp/perf-old e00959d; git worktree add --detach /tmp/perf-new HEAD
    .venv/bin/python bench/compare_trees.py --tree /tmp/perf-old --tree /tmp/perf-new --rounds 3 bench_server.py --quick

On a shared machine an absolute figure moves by ±30 % between runs; the same script run on the
old and the new code in turn, several rounds, under the same load, is the comparison that holds.
Each tree runs with ``PYTHONPATH=<tree>/server`` (so the server processes it starts import that
tree's ``taskdsl``); the benchmark script is this checkout's for every tree, so each measures the
same thing. The load average is recorded before each run. Neither tree should be one being edited
meanwhile. Prints, per figure, the median of the rounds for each tree and its ratio to the first
tree's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


BENCH = Path(__file__).resolve().parent


def run_once(tree: Path, script: str, script_args: list[str]) -> tuple[list[dict], float]:
    load = os.getloadavg()[0]
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = handle.name
    env = dict(os.environ, PYTHONPATH=str(tree / "server"))
    subprocess.run([sys.executable, str(BENCH / script), *script_args, "--json", out],
                   check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL)
    rows = json.loads(Path(out).read_text(encoding="utf-8"))
    os.unlink(out)
    return rows, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", required=True,
                        help="a source tree (e.g. a git worktree); give two or more, the first is the reference")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("script", help="a script in bench/, e.g. bench_server.py")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    trees = [(str(tree), tree.resolve()) for tree in args.tree]
    figures: dict[str, dict[str, list[float]]] = {}
    loads: list[float] = []
    for round_number in range(args.rounds):
        for label, tree in trees:
            try:
                rows, load = run_once(tree, args.script, args.script_args)
            except subprocess.CalledProcessError as failed:
                print(f"round {round_number + 1} {label}: failed ({failed})", file=sys.stderr)
                continue
            loads.append(load)
            print(f"round {round_number + 1} {label}: load {load:.2f}", file=sys.stderr)
            for row in rows:
                figures.setdefault(row["name"], {label: [] for label, _ in trees})[label].append(row["value"])
                if row.get("floor"):  # the figure's own floor, measured in the same run
                    name = f"{row['name']} ÷ floor ({row['floor_name']})"
                    figures.setdefault(name, {label: [] for label, _ in trees})[label].append(row["value"] / row["floor"])
    reference = trees[0][0]
    print("trees: " + ", ".join(f"[{i}] {label}" for i, (label, _) in enumerate(trees)))
    print(f"{'measure (median of the rounds; ratio to [0])':70} " + " ".join(f"{f'[{i}]':>18}" for i in range(len(trees))))
    for name, values in figures.items():
        if not all(values.values()):
            continue
        base = statistics.median(values[reference])
        cells = []
        for label, _ in trees:
            value = statistics.median(values[label])
            cells.append(f"{value:10.2f} ({value / base:4.2f}x)" if base else f"{value:10.2f}")
        print(f"{name[:70]:70} " + " ".join(f"{cell:>18}" for cell in cells))
    print(f"load average (1 min) per run: {', '.join(f'{load:.2f}' for load in loads)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
