"""Batch executor benchmark: what a batch row costs beyond the model call itself.

A loopback OpenAI-compatible server answers every request after a fixed latency. In the same
run, three measurements of N rows at --jobs J (default 320 rows at 32):

- floor: litellm.acompletion called directly, J at a time (the server's own time as a client
  that does nothing else sees it);
- batch: the rows through taskdsl's batch executor (evaluator/batch.py: prepare, execute, the
  results line written through the one writer), the same model and concurrency;
- echo: the same batch with the offline echo model (no network: the executor's whole cost).

The overhead per row is (batch − floor) / N; the goal is ≤ 2 ms a row at --jobs 32.

    .venv/bin/python bench/bench_batch.py [--rows 320] [--jobs 32] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
sys.path.insert(0, os.path.dirname(__file__))

from bench_evaluator import slow_server  # noqa: E402
from report import limit_row, ratio_row, write as write_rows  # noqa: E402

TEMPLATE = """<task name="classify">
  <instructions>Classify this review: {{review}}</instructions>
  <inputs><input name="review"/></inputs>
</task>
"""
ROWS = []


async def floor(n: int, jobs: int, model: str) -> float:
    from taskdsl.evaluator.providers import load_litellm

    litellm = load_litellm()
    gate = asyncio.Semaphore(jobs)

    async def one(i: int) -> None:
        async with gate:
            await litellm.acompletion(model=model, messages=[{"role": "user", "content": f"review {i}"}], max_retries=0)

    await one(-1)  # warm the HTTP client
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - started


async def batch_time(folder: str, n: int, jobs: int, model: str) -> float:
    from taskdsl.evaluator import batch
    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.handler import HandlerConfig
    from taskdsl.project.config import settings_for

    path = os.path.join(folder, "classify.task.xml")
    settings, _ = settings_for(path)
    context = batch.RowContext(path, None, settings, configure(HandlerConfig(model=model), settings), model=model)
    context.prepare({"review": "warm"})  # the template checked once, as the command does before the batch
    rows = [batch.Row(i + 1, {"review": f"review {i}"}) for i in range(n)]
    out = os.path.join(folder, f"results-{model.replace('/', '-')}.jsonl")
    run = batch.Batch(rows, jobs=jobs, out=out)
    started = time.perf_counter()
    summary = await run.run(context.run)
    elapsed = time.perf_counter() - started
    assert summary.ok == n, summary.to_json()
    with open(out, encoding="utf-8") as f:
        assert sum(1 for line in f if json.loads(line)["status"] == "COMPLETE") == n
    os.remove(out)
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--jobs", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    n, jobs = args.rows, args.jobs
    runner, port = await slow_server(args.latency)
    os.environ["OPENAI_API_BASE"] = f"http://127.0.0.1:{port}/v1"
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-local")
    try:
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "taskdsl.toml"), "w", encoding="utf-8") as f:
                f.write("")
            with open(os.path.join(folder, "classify.task.xml"), "w", encoding="utf-8") as f:
                f.write(TEMPLATE)
            t_floor = await floor(n, jobs, "openai/bench")
            await batch_time(folder, jobs, jobs, "openai/bench")  # warm up
            t_batch = await batch_time(folder, n, jobs, "openai/bench")
            t_echo = await batch_time(folder, n, jobs, "taskdsl/echo")
    finally:
        await runner.cleanup()
    ideal = -(-n // jobs) * args.latency
    per_row = (t_batch - t_floor) / n * 1e3
    print(f"{n} rows at --jobs {jobs}, server latency {args.latency * 1e3:.0f} ms (ideal {ideal:.2f} s)")
    print(f"floor: litellm.acompletion directly      {t_floor:7.2f} s  ({t_floor / n * 1e3:.2f} ms/row)")
    print(f"batch executor, same model               {t_batch:7.2f} s  ({t_batch / t_floor:.2f}x the floor)")
    print(f"batch executor, offline echo model       {t_echo:7.2f} s  ({t_echo / n * 1e3:.2f} ms/row, no network)")
    print(f"overhead per row: {per_row:.2f} ms (goal <= 2 ms)")
    ROWS.append(ratio_row("batch", f"{n} rows at --jobs {jobs}, {args.latency * 1e3:.0f} ms server latency",
                          t_batch * 1e3, t_floor * 1e3, "litellm.acompletion directly, same concurrency", None,
                          note=f"overhead {per_row:.2f} ms/row"))
    ROWS.append(limit_row("batch", f"executor overhead per row at --jobs {jobs}", per_row, 2.0))
    ROWS.append(limit_row("batch", "batch row with the echo model (no network)", t_echo / n * 1e3, None))
    write_rows(args.json, ROWS)


if __name__ == "__main__":
    asyncio.run(main())
