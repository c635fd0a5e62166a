"""Evaluator benchmark: overhead per node with the offline echo model, and concurrency of a
step's input tasks against a model with fixed latency (a loopback OpenAI-compatible server).

    .venv/bin/python bench/bench_evaluator.py [--inputs 8] [--latency 0.2] [--nodes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))

from aiohttp import web  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from report import limit_row, ratio_row, write as write_rows  # noqa: E402

from taskdsl.evaluator.providers import OfflineProvider  # noqa: E402
from taskdsl.evaluator.runner import run_file  # noqa: E402


def write(folder: str, name: str, xml: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(xml)
    return path


async def slow_server(latency: float):
    async def handle(request):
        body = await request.json()
        await asyncio.sleep(latency)
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "ok"}}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]


async def timed(path: str, repeat: int, **kwargs) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await run_file(path, check=False, **kwargs)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


ROWS = []


async def overhead(folder: str, nodes: int) -> None:
    echo = OfflineProvider("taskdsl/echo")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]
    started = time.perf_counter()
    for _ in range(nodes):
        echo.count_messages(messages)
        await echo.complete(messages)
    raw = (time.perf_counter() - started) / nodes

    steps = "".join(f"<task><instructions>step {i}: {{{{last_output}}}}</instructions></task>" for i in range(nodes))
    seq = write(folder, "seq.task.xml", f"""<task type="sequential" name="seq"><description>d</description>
        <inputs><input name="last_output">start</input></inputs><steps>{steps}</steps></task>""")
    per_atomic = await timed(seq, 3, model="taskdsl/echo") / nodes

    script_steps = "".join("<task type='script'><command>:</command></task>" for _ in range(50))
    scripts = write(folder, "scripts.task.xml", f"""<task type="sequential" name="sh"><description>d</description>
        <steps>{script_steps}</steps></task>""")
    per_script = await timed(scripts, 3) / 50

    inputs = "".join(f"<input name='i{i}'>{i}</input>" for i in range(nodes))
    reduce = write(folder, "reduce.task.xml", f"""<task type="reduce" name="r"><description>d</description>
        <initial_value>0</initial_value><inputs>{inputs}</inputs>
        <inner_task><instructions>{{{{current_data}}}}</instructions></inner_task>
        <reduction_task><instructions>{{{{current_result}}}}</instructions></reduction_task></task>""")
    per_reduce_item = await timed(reduce, 3, model="taskdsl/echo") / nodes

    print(f"raw echo provider (count + complete):      {raw * 1e3:7.2f} ms/call")
    print(f"atomic step in a sequential (echo):         {per_atomic * 1e3:7.2f} ms/node  "
          f"(evaluator overhead {max(per_atomic - raw, 0) * 1e3:.2f} ms, {per_atomic / raw:.2f}x raw)")
    print(f"reduce item (inner + reduction, echo):      {per_reduce_item * 1e3:7.2f} ms/item")
    print(f"script step (/bin/sh -c ':'):               {per_script * 1e3:7.2f} ms/node")
    ROWS.append(ratio_row("evaluator", "atomic step in a sequential, echo model (per node)", per_atomic * 1e3, raw * 1e3,
                          "raw echo provider call", None,
                          note=f"evaluator overhead {max(per_atomic - raw, 0) * 1e3:.2f} ms/node"))
    ROWS.append(limit_row("evaluator", "reduce item (inner + reduction), echo (per item)", per_reduce_item * 1e3, None))
    ROWS.append(limit_row("evaluator", "script step, /bin/sh -c ':' (per node)", per_script * 1e3, None))


async def concurrency(folder: str, n: int, latency: float) -> None:
    runner, port = await slow_server(latency)
    os.environ["OPENAI_API_BASE"] = f"http://127.0.0.1:{port}/v1"
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-local")
    try:
        one = write(folder, "one.task.xml", "<task name='one'><instructions>hi</instructions></task>")
        inputs = "".join(f"<input name='x{i}'><task><instructions>input {i}</instructions></task></input>"
                         for i in range(n))
        many = write(folder, "many.task.xml", f"""<task type="sequential" name="fan"><description>d</description>
            <steps><task type="script"><command>echo done</command><inputs>{inputs}</inputs></task></steps></task>""")
        await timed(one, 1, model="openai/bench")  # warm up the HTTP client
        t_one = await timed(one, 3, model="openai/bench")
        t_many = await timed(many, 3, model="openai/bench")
    finally:
        await runner.cleanup()
    print(f"one call at {latency * 1e3:.0f} ms latency:               {t_one * 1e3:7.1f} ms")
    ROWS.append(ratio_row("evaluator", f"{n} input tasks of one step at {latency * 1e3:.0f} ms model latency", t_many * 1e3,
                          t_one * 1e3, "one call", 1.5, note=f"sequential would be ~{n}x"))
    print(f"{n} input tasks of one step (gathered):       {t_many * 1e3:7.1f} ms  "
          f"= {t_many / t_one:.2f}x one call (sequential would be ~{n}x)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--json", help="also write the rows to this file (for run_all.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        await overhead(folder, args.nodes)
        await concurrency(folder, args.inputs, args.latency)
    write_rows(args.json, ROWS)


if __name__ == "__main__":
    asyncio.run(main())
