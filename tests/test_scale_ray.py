"""`--executor ray`: the same batch as Ray tasks on a real local Ray cluster (started by the run,
RAY_ADDRESS unset), against the loopback OpenAI-compatible server: the same results as the local
executor, the per-model limit held across the cluster's workers, and --resume."""

import asyncio
import json
import os
import signal
import sys

import pytest

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)
from test_scale_batch import results, rows_file
from test_evaluator_models import SECRET
from test_scale_calls import MODEL, project
from test_scale_otel import attributes, otlp_receiver  # noqa: F401 (the fixture)

pytest.importorskip("ray", reason="the ray extra is installed by `bash scripts/test` (taskdsl[test] pulls it in)")


def comparable(records):
    return sorted((r["row"], r["status"], r["content"], json.dumps(r["inputs"])) for r in records)


async def test_the_ray_batch_equals_the_local_one_holds_the_limits_and_resumes(tmp_path, loopback, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    fake = await loopback(delay=0.3)
    folder = project(tmp_path, f'[models."{MODEL}"]\nmax_concurrency = 1\n')
    rows = rows_file(folder, 8)
    (folder / "rows-bad.jsonl").write_text((folder / rows).read_text() + '{}\n', encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", "rows-bad.jsonl",
                                         "--jobs", "2", "--out", "local.jsonl")
    assert code == 1, err
    local = results(folder, "local.jsonl")

    # the first three rows were done before: the Ray run resumes after them
    (folder / "ray.jsonl").write_text("".join(json.dumps(r) + "\n" for r in local if r["row"] <= 3), encoding="utf-8")
    asked = fake.count()
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", "rows-bad.jsonl",
                                         "--jobs", "2", "--out", "ray.jsonl", "--resume", "--executor", "ray")
    assert code == 1, err  # the row without its input failed there too
    assert comparable(results(folder, "ray.jsonl")) == comparable(local)
    assert fake.count() - asked == 5  # rows 4–8; the bad row never reaches the model
    assert fake.max_in_flight == 1  # max_concurrency = 1 across both workers
    assert "9 rows: 5 ok, 1 failed, 3 already done" in err


async def test_ray_workers_export_every_rows_spans_with_the_prompt_and_no_secret(tmp_path, loopback, otlp_receiver,
                                                                                monkeypatch):
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is installed by `bash scripts/test`")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver["endpoint"])
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "ray-batch")
    await loopback()
    folder = project(tmp_path)
    (folder / "rows.jsonl").write_text("".join(json.dumps({"text": f"row {n} {SECRET}"}) + "\n" for n in range(1, 5)),
                                       encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", "rows.jsonl",
                                         "--jobs", "2", "--out", "ray.jsonl", "--executor", "ray")
    assert code == 0, err
    spans = otlp_receiver["spans"]
    assert sorted(span.name for span in spans) == ["chat say"] * 4  # every row's span, from the workers
    assert len({span.trace_id for span in spans}) == 4  # a trace per row
    prompts = sorted(json.loads(attributes(span)["gen_ai.input.messages"])[0]["parts"][0]["content"] for span in spans)
    assert prompts == [f"Say row {n} ***" for n in range(1, 5)]
    assert {attributes(span)["gen_ai.request.model"] for span in spans} == {MODEL}
    assert all(SECRET.encode() not in body for body in otlp_receiver["bodies"])
    assert all(b"ray-batch" in body for body in otlp_receiver["bodies"])  # the driver's OTEL_SERVICE_NAME


async def test_ctrl_c_under_ray_leaves_only_whole_lines_and_resume_finishes_without_redoing_rows(tmp_path, loopback,
                                                                                                monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    fake = await loopback(delay=0.5)
    folder = project(tmp_path)
    rows = rows_file(folder, 24)
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    # its own process group, signalled as a terminal's Ctrl-C signals the foreground group
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskdsl", "run", "say.task.xml", "--model", MODEL, "--data", rows, "--jobs", "2",
        "--out", "results.jsonl", "--executor", "ray", cwd=folder, env=environment, start_new_session=True,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out_file = folder / "results.jsonl"
    for _ in range(2400):  # until some rows are written (Ray starts in seconds; at most two minutes)
        await asyncio.sleep(0.05)
        if out_file.exists() and out_file.read_text(encoding="utf-8").count("\n") >= 4:
            break
    os.killpg(process.pid, signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 130, err.decode()
    assert "cancelled after" in err.decode()
    text = out_file.read_text(encoding="utf-8")
    assert text.endswith("\n")
    first = [json.loads(line) for line in text.splitlines()]  # every line whole
    done = {r["row"] for r in first}
    assert len(first) == len(done) and 4 <= len(done) < 24
    assert all(r["status"] == "COMPLETE" for r in first)  # no row written as failed by the stop
    asked_before = fake.count()

    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", rows, "--jobs",
                                         "2", "--out", "results.jsonl", "--resume", "--executor", "ray")
    assert code == 0, err
    final = results(folder)
    assert sorted(r["row"] for r in final) == list(range(1, 25))  # each row once
    asked = [r["body"]["messages"][-1]["content"] for r in fake.requests[asked_before:]]
    assert not any(prompt == f"Say row {n}" for n in done for prompt in asked)  # no row written before was redone
    assert len(asked) == 24 - len(done)
    assert f"{len(done)} already done" in err
