"""Batch executor benchmark: what a batch row costs beyond the model call itself.

A loopback OpenAI-compatible server, in a process of its own (so that its work is not counted
as the client's), answers every request after a fixed latency. N rows at --jobs J (default 320
rows at 32) are run, in this process, three ways:

- floor: litellm.acompletion called directly, J at a time (the server's time as a client that
  does nothing else sees it), litellm loaded as taskdsl loads it (providers.load_litellm: its
  import-time objects frozen out of the cyclic GC, which the floor benefits from as much);
- batch: the rows through taskdsl's batch executor (evaluator/batch.py: prepare, execute, the
  results line written through the one writer), the same model and concurrency;
- echo: the same batch with the offline echo model (no network: the executor's own cost).

The machine this runs on may be shared, so one pair of timings means little: floor and batch
trials are interleaved (floor, batch, batch, floor, …) --trials times, and the report gives the
medians, the median of each pair's difference and ratio, and the same for the CPU time this
process used (time.process_time: what the client itself spent, much less sensitive to what
other processes do than the wall clock). The overhead per row is (batch − floor) / N; the goal
is ≤ 2 ms a row at --jobs 32.

    .venv/bin/python bench/bench_batch.py [--rows 320] [--jobs 32] [--latency 0.05] [--trials 5]
    .venv/bin/python bench/bench_batch.py --profile batch|floor|echo   # a sampling profile of one run (pyinstrument)

docs/scale.md ("Measuring the executor") has the last figures with the machine's load at the
time: about 1.0 ms of CPU a row beyond the floor (1.4 to 1.6 ms before the per-call work below
was cut), and a wall overhead that, on a 2-core machine at load 4.5 to 10, was 1.9 to 5.2 ms
(median 2.9: the wall clock multiplies CPU by the wait for a core). Cut per call: litellm's token counter before every
call (the prompt's tokens are the ones the model reports), get_model_info raising for an
unmapped model on every call, and the cyclic GC walking litellm's import-time objects on every
full collection.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
sys.path.insert(0, os.path.dirname(__file__))

from report import limit_row, ratio_row, write as write_rows  # noqa: E402

TEMPLATE = """<task name="classify">
  <instructions>Classify this review: {{review}}</instructions>
  <inputs><input name="review"/></inputs>
</task>
"""
ROWS = []
MODEL = "openai/bench"


def serve(latency: float) -> None:
    "The loopback server (run as `bench_batch.py --serve LATENCY`): prints its port, serves until stdin closes."
    from bench_evaluator import slow_server

    async def main() -> None:
        runner, port = await slow_server(latency)
        print(port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await runner.cleanup()

    asyncio.run(main())


def start_server(latency: float) -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(latency)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    return server, int(server.stdout.readline())


class Measured:
    "Wall and CPU seconds of one trial."

    def __init__(self):
        self.wall = self.cpu = 0.0

    def __enter__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self._wall, time.process_time() - self._cpu


PROMPTS: list[str] = []  # the user prompt of each row, as the batch sends it (made by the echo model)


async def prompts(folder: str, n: int) -> None:
    "The floor sends the very messages the batch sends: the system prompt and each row's user prompt."
    from taskdsl.evaluator import batch
    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.handler import HandlerConfig
    from taskdsl.project.config import settings_for

    path = os.path.join(folder, "classify.task.xml")
    settings, _ = settings_for(path)
    context = batch.RowContext(path, None, settings, configure(HandlerConfig(model="taskdsl/echo"), settings),
                               model="taskdsl/echo")
    PROMPTS[:] = [(await context.run(batch.Row(i + 1, {"review": f"review {i}"})))["content"] for i in range(n)]


async def floor(n: int, jobs: int) -> Measured:
    from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT
    from taskdsl.evaluator.providers import load_litellm

    litellm = load_litellm()
    gate = asyncio.Semaphore(jobs)

    async def one(i: int) -> None:
        messages = [{"role": "system", "content": BASE_SYSTEM_PROMPT}, {"role": "user", "content": PROMPTS[i]}]
        async with gate:
            await litellm.acompletion(model=MODEL, messages=messages, max_retries=0)

    await one(0)  # warm the HTTP client
    with Measured() as measured:
        await asyncio.gather(*(one(i) for i in range(n)))
    return measured


async def batch_time(folder: str, n: int, jobs: int, model: str) -> Measured:
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
    with Measured() as measured:
        summary = await run.run(context.run)
    assert summary.ok == n, summary.to_json()
    with open(out, encoding="utf-8") as f:
        assert sum(1 for line in f if json.loads(line)["status"] == "COMPLETE") == n
    os.remove(out)
    return measured


def project() -> str:
    folder = tempfile.mkdtemp(prefix="taskdsl-bench-batch-")
    with open(os.path.join(folder, "taskdsl.toml"), "w", encoding="utf-8") as f:
        f.write("")
    with open(os.path.join(folder, "classify.task.xml"), "w", encoding="utf-8") as f:
        f.write(TEMPLATE)
    return folder


async def profile(what: str, n: int, jobs: int, folder: str) -> None:
    "A sampling profile (pyinstrument: `pip install pyinstrument`) of one run, as a call tree."
    from pyinstrument import Profiler

    await floor(jobs, jobs) if what == "floor" else await batch_time(folder, jobs, jobs, MODEL)  # warm up
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    if what == "floor":
        measured = await floor(n, jobs)
    else:
        measured = await batch_time(folder, n, jobs, "taskdsl/echo" if what == "echo" else MODEL)
    profiler.stop()
    print(f"{what}: {n} rows, {measured.wall:.2f} s wall, {measured.cpu / n * 1e3:.2f} ms CPU a row (profiled)")
    print(profiler.output_text(unicode=True, color=False, show_all=False))


def median(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--jobs", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--trials", type=int, default=5, help="floor/batch pairs, interleaved (default 5)")
    parser.add_argument("--profile", choices=("batch", "floor", "echo"), help="profile one run instead")
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    n, jobs = args.rows, args.jobs
    server, port = start_server(args.latency)
    os.environ["OPENAI_API_BASE"] = f"http://127.0.0.1:{port}/v1"
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-local")
    folder = project()
    await prompts(folder, n)
    try:
        if args.profile:
            await profile(args.profile, n, jobs, folder)
            return
        await floor(jobs, jobs)
        await batch_time(folder, jobs, jobs, MODEL)  # warm up both
        floors, batches, echoes = [], [], []
        for trial in range(args.trials):
            order = (floor, batch_time) if trial % 2 == 0 else (batch_time, floor)
            for kind in order:
                if kind is floor:
                    floors.append(await floor(n, jobs))
                else:
                    batches.append(await batch_time(folder, n, jobs, MODEL))
            echoes.append(await batch_time(folder, n, jobs, "taskdsl/echo"))
    finally:
        server.stdin.close()
        server.wait(30)
    ideal = -(-n // jobs) * args.latency
    wall_over = median([(b.wall - f.wall) / n * 1e3 for f, b in zip(floors, batches)])
    cpu_over = median([(b.cpu - f.cpu) / n * 1e3 for f, b in zip(floors, batches)])
    ratio = median([b.wall / f.wall for f, b in zip(floors, batches)])
    t_floor, t_batch = median([f.wall for f in floors]), median([b.wall for b in batches])
    cpu_floor, cpu_batch = median([f.cpu for f in floors]) / n * 1e3, median([b.cpu for b in batches]) / n * 1e3
    cpu_echo, t_echo = median([e.cpu for e in echoes]) / n * 1e3, median([e.wall for e in echoes])
    print(f"{n} rows at --jobs {jobs}, server latency {args.latency * 1e3:.0f} ms (ideal {ideal:.2f} s), "
          f"{args.trials} interleaved trials, medians")
    print(f"floor: litellm.acompletion directly      {t_floor:7.2f} s wall  {cpu_floor:6.2f} ms CPU a row"
          f"   (trials: {' '.join(f'{f.wall:.2f}' for f in floors)})")
    print(f"batch executor, same model               {t_batch:7.2f} s wall  {cpu_batch:6.2f} ms CPU a row"
          f"   (trials: {' '.join(f'{b.wall:.2f}' for b in batches)})")
    print(f"batch executor, offline echo model       {t_echo:7.2f} s wall  {cpu_echo:6.2f} ms CPU a row (no network)")
    print(f"batch / floor: {ratio:.2f}x (median of the pairs)")
    print(f"overhead per row, wall: {wall_over:.2f} ms (median of the pairs; goal <= 2 ms)")
    print(f"overhead per row, CPU of this process: {cpu_over:.2f} ms (median of the pairs)")
    context = f"{n} rows at --jobs {jobs}, {args.latency * 1e3:.0f} ms server latency, median of {args.trials}"
    ROWS.append(ratio_row("batch", context, t_batch * 1e3, t_floor * 1e3,
                          "litellm.acompletion directly, same concurrency, interleaved", None,
                          note=f"overhead {wall_over:.2f} ms/row wall, {cpu_over:.2f} ms/row CPU"))
    ROWS.append(limit_row("batch", f"executor overhead per row at --jobs {jobs} (wall)", wall_over, 2.0))
    ROWS.append(limit_row("batch", f"executor overhead per row at --jobs {jobs} (CPU)", cpu_over, 2.0))
    ROWS.append(limit_row("batch", "batch row with the echo model (no network, CPU)", cpu_echo, None))
    write_rows(args.json, ROWS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]))
    else:
        asyncio.run(main())
