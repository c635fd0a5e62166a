"""bench/bench_batch.py runs and reports its figures (a tiny run: the figures themselves are the
benchmark's business, not a test's)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_batch.py"


def test_the_batch_bench_reports_interleaved_medians_wall_and_cpu_overhead(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--rows", "8", "--jobs", "4", "--trials", "2",
                           "--latency", "0.01", "--json", str(tmp_path / "rows.json")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("8 rows at --jobs 4, server latency 10 ms") and "2 interleaved trials, medians" in lines[0]
    starts = ["floor: litellm.acompletion directly", "batch executor, same model", "batch executor, offline echo model",
              "batch / floor: ", "overhead per row, wall: ", "overhead per row, CPU of this process: "]
    assert len(lines) == 7 and all(line.startswith(start) for line, start in zip(lines[1:], starts))
    assert "ms CPU a row" in lines[1] and "ms CPU a row" in lines[2] and "(trials: " in lines[2]
    assert (tmp_path / "rows.json").read_text().count('"group": "batch"') == 4
