"""Batch runs (SPEC §18) through the real command line against the loopback OpenAI-compatible
server (tests/loopback_openai.py): bounded concurrency, whole lines, Ctrl-C and --resume, failures."""

import asyncio
import json
import os
import signal
import stat
import sys

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)
from test_scale_calls import MODEL, project

ROWS = 40


def rows_file(folder, count=ROWS, name="rows.jsonl"):
    (folder / name).write_text("".join(json.dumps({"text": f"row {n}"}) + "\n" for n in range(1, count + 1)),
                               encoding="utf-8")
    return name


def results(folder, name="results.jsonl"):
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]


async def test_40_rows_with_jobs_8_give_40_results_with_at_most_8_calls_in_flight(tmp_path, loopback):
    fake = await loopback(delay=0.3)
    folder = project(tmp_path)
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", rows_file(folder),
                                         "--jobs", "8", "--out", "results.jsonl", "--json")
    assert code == 0, err
    found = results(folder)
    assert sorted(r["row"] for r in found) == list(range(1, ROWS + 1))
    assert all(r["status"] == "COMPLETE" and r["content"] == f"local-model says: Say row {r['row']}"
               and r["inputs"] == {"text": f"row {r['row']}"} and r["error"] is None for r in found)
    assert fake.count() == ROWS
    assert fake.max_in_flight == 8  # 8 at a time, never more
    summary = json.loads(out)["summary"]
    assert (summary["rows"], summary["ok"], summary["failed"]) == (ROWS, ROWS, 0)
    assert "40 rows: 40 ok, 0 failed" in err
    assert err.count("✓ row ") == ROWS  # not a terminal: a plain line a row
    assert stat.S_IMODE(os.stat(folder / "results.jsonl").st_mode) == 0o600


async def test_the_per_model_limit_holds_under_more_jobs(tmp_path, loopback):
    fake = await loopback(delay=0.2)
    folder = project(tmp_path, f'[models."{MODEL}"]\nmax_concurrency = 3\n')
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data",
                                         rows_file(folder, 12), "--jobs", "8", "-q")
    assert code == 0, err
    assert fake.max_in_flight == 3 and fake.count() == 12
    assert len(out.splitlines()) == 12  # without --out the lines go to stdout


async def test_ctrl_c_leaves_only_whole_lines_and_resume_finishes_without_redoing_rows(tmp_path, loopback):
    fake = await loopback(delay=0.5)
    folder = project(tmp_path)
    rows = rows_file(folder)
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskdsl", "run", "say.task.xml", "--model", MODEL, "--data", rows, "--jobs", "4",
        "--out", "results.jsonl", cwd=folder, env=environment, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out_file = folder / "results.jsonl"
    for _ in range(1200):  # until some rows are written (at most a minute)
        await asyncio.sleep(0.05)
        if out_file.exists() and out_file.read_text(encoding="utf-8").count("\n") >= 6:
            break
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 130, err.decode()
    assert "cancelled after" in err.decode()
    text = out_file.read_text(encoding="utf-8")
    assert text.endswith("\n")
    first = [json.loads(line) for line in text.splitlines()]  # every line whole
    done = {r["row"] for r in first}
    assert 6 <= len(done) < ROWS
    left = ROWS - len(done)  # the summary says what is left and how to finish it
    assert f", {left} not run · " in err.decode()
    assert err.decode().rstrip().endswith(
        f"the {left} rows not run: run the same command with --resume (results in results.jsonl)")
    asked_before = fake.count()

    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", rows, "--jobs",
                                         "4", "--out", "results.jsonl", "--resume")
    assert code == 0, err
    final = results(folder)
    assert sorted(r["row"] for r in final) == list(range(1, ROWS + 1))  # each row once
    asked = [r["body"]["messages"][-1]["content"] for r in fake.requests[asked_before:]]
    assert not any(prompt == f"Say row {n}" for n in done for prompt in asked)  # no row written before was redone
    assert len(asked) == ROWS - len(done)
    assert f"{len(done)} already done" in err


async def test_a_failed_row_exits_1_and_fail_fast_stops_scheduling(tmp_path, loopback):
    fake = await loopback(answer=lambda model, prompt: prompt, always={})
    folder = project(tmp_path)
    (folder / "rows.jsonl").write_text('{"text": "a"}\n{}\n{"text": "c"}\n', encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", "rows.jsonl",
                                         "--out", "results.jsonl", "--jobs", "1")
    assert code == 1
    by_row = {r["row"]: r for r in results(folder)}
    assert [by_row[n]["status"] for n in (1, 2, 3)] == ["COMPLETE", "FAILED", "COMPLETE"]
    assert by_row[2]["error"]["reason"] == "missing_input" and by_row[2]["content"] is None
    assert "3 rows: 2 ok, 1 failed · " in err and "rows not run" not in err
    [failed_line] = [line for line in err.splitlines() if line.startswith("✗ row 2 ")]
    reason = by_row[2]["error"]["message"]  # the reason, on the row's line (its first 120 characters)
    assert failed_line.endswith(" · " + (reason if len(reason) <= 120 else reason[:119] + "…"))

    os.remove(folder / "results.jsonl")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", MODEL, "--data", "rows.jsonl",
                                         "--out", "results.jsonl", "--jobs", "1", "--fail-fast")
    assert code == 1 and [r["row"] for r in results(folder)] == [1, 2]
    assert "3 rows: 1 ok, 1 failed, 1 not run · " in err
    assert err.rstrip().endswith("the 1 rows not run: run the same command with --resume (results in results.jsonl)")
    assert fake.count() == 3  # 2 in the first batch, 1 in the second


async def test_bad_data_and_usage_are_one_line_refusals(tmp_path):
    folder = project(tmp_path)
    (folder / "rows.jsonl").write_text('{"text": "a"}\n[1, 2]\n', encoding="utf-8")
    (folder / "rows.txt").write_text("text\n", encoding="utf-8")
    (folder / "bad.csv").write_text("text,\na,b\n", encoding="utf-8")
    (folder / "done.jsonl").write_text('{"row": 1}\n', encoding="utf-8")
    cases = [
        (["--data", "rows.jsonl"], "taskdsl run: rows.jsonl:2: expected a JSON object of inputs, e.g. {\"text\": \"…\"}"),
        (["--data", "rows.txt"], "taskdsl run: rows.txt: the data must be a .jsonl file (one JSON object a line) or a "
                                 ".csv file with a header"),
        (["--data", "bad.csv"], "taskdsl run: bad.csv:1: the first line must name every column (the inputs), e.g. "
                                "text,language"),
        (["--data", "missing.jsonl"], "taskdsl run: missing.jsonl: no such file"),
        (["--data", "done.jsonl", "--out", "done.jsonl"], "taskdsl run: done.jsonl already holds results: --resume to "
                                                          "finish it, or remove it"),
        (["--data", "done.jsonl", "--input", "text=x"], "taskdsl run: --input/--inputs and --data do not go together: "
                                                        "put the inputs in the rows"),
        (["--data", "done.jsonl", "--trace", "t.jsonl"], "taskdsl run: --trace and --data do not go together: a batch "
                                                         "writes each row's result to --out and each row's spans "
                                                         "with --otel"),
        (["--out", "x.jsonl"], "taskdsl run: --out needs --data ROWS.jsonl|ROWS.csv (a batch run); a single run "
                               "prints its result (--json for JSON)"),
    ]
    for extra, message in cases:
        code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", *extra)
        assert (code, err) == (2, message + "\n"), extra


async def test_the_batch_plan_covers_the_data_and_max_cost_covers_the_batch(tmp_path, loopback):
    fake = await loopback()
    folder = project(tmp_path)
    rows = rows_file(folder)
    code, plan, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "gpt-4o-mini", "--data", rows,
                                          "--plan")
    assert code == 0, err
    assert plan.startswith(f"Running 'say' (say.task.xml) for each of the {ROWS} rows of rows.jsonl will:")
    assert "text = (each row's)" in plan
    digest = plan.rsplit("Plan ", 1)[1]
    with open(folder / rows, "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "row 41"}) + "\n")
    code, again, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "gpt-4o-mini", "--data", rows,
                                           "--plan")
    assert again.rsplit("Plan ", 1)[1] != digest  # the digest covers the data file

    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "gpt-4o-mini", "--data", rows,
                                         "--max-cost", "0.001")
    assert code == 1 and fake.count() == 0
    assert "over its budget of $0.001: raise --max-cost" in err


async def test_results_never_go_through_a_link_and_secret_inputs_are_masked(tmp_path):
    folder = project(tmp_path)
    (folder / "rows.jsonl").write_text('{"text": "hi", "password": "hunter2-very-long"}\n', encoding="utf-8")
    (folder / "say.task.xml").write_text(SAY_WITH_PASSWORD, encoding="utf-8")
    victim = folder / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    os.symlink(victim, folder / "results.jsonl")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", "--data",
                                         "rows.jsonl", "--out", "results.jsonl", "--resume")
    assert code == 2 and "taskdsl run: cannot write --out results.jsonl" in err
    assert victim.read_text(encoding="utf-8") == "keep me\n"

    os.remove(folder / "results.jsonl")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", "--data",
                                         "rows.jsonl", "--out", "results.jsonl")
    assert code == 0, err
    text = (folder / "results.jsonl").read_text(encoding="utf-8")
    assert "hunter2-very-long" not in text
    assert json.loads(text)["inputs"] == {"text": "hi", "password": "***"}


SAY_WITH_PASSWORD = """<task name="say">
  <instructions>Say {{text}}</instructions>
  <inputs><input name="text"/><input name="password"/></inputs>
</task>
"""


def test_on_a_terminal_the_progress_is_a_bar_with_count_failures_and_cost(tmp_path):
    """stderr is a pseudo-terminal: rich draws the bar (count, failures, cost, time left)."""
    import pty
    import subprocess

    folder = project(tmp_path)
    rows_file(folder, 3)
    main, side = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k != "TASKDSL_MODEL"}
    environment.update(COLUMNS="120", TERM="xterm")
    process = subprocess.Popen([sys.executable, "-m", "taskdsl", "run", "say.task.xml", "--model", "taskdsl/echo",
                                "--data", "rows.jsonl", "--out", "results.jsonl"], cwd=folder, env=environment,
                               stdout=subprocess.DEVNULL, stderr=side, stdin=subprocess.DEVNULL)
    os.close(side)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(120) == 0
    os.close(main)
    text = shown.decode("utf-8", "replace")
    assert "rows" in text and "3/3" in text and "0 failed · $0.0000" in text
    assert "━" in text  # the bar itself
    assert "✓ row " not in text  # not the plain lines
    assert len(results(folder)) == 3


async def test_rows_bind_their_own_inputs_to_the_template_compiled_once(tmp_path):
    from taskdsl.evaluator import batch
    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.handler import HandlerConfig
    from taskdsl.evaluator.results import TaskError
    from taskdsl.project.config import settings_for

    folder = project(tmp_path)
    settings, _ = settings_for(folder / "say.task.xml")
    context = batch.RowContext(str(folder / "say.task.xml"), None, settings,
                               configure(HandlerConfig(model="taskdsl/echo"), settings), model="taskdsl/echo")
    first, second = context.prepare({"text": "one"}), context.prepare({"text": "two"})
    assert first.node is second.node  # compiled once for the batch
    assert (first.inputs, second.inputs) == ({"text": "one"}, {"text": "two"})
    assert context.prepare({}).missing == ["text"]
    try:
        context.prepare({"txt": "x"})
        raise AssertionError("an unknown input must be refused")
    except TaskError as error:
        assert error.reason == "unknown_input"
        assert error.message == "cannot run 'say': unknown input 'txt'; it takes 'text'; did you mean 'text'?"
    records = await asyncio.gather(*(context.run(batch.Row(n, {"text": f"row {n}"})) for n in range(1, 9)))
    assert [r["content"] for r in records] == [f"Say row {n}" for n in range(1, 9)]  # concurrent rows, one tree


async def test_a_column_the_task_does_not_take_refuses_the_batch_up_front_unless_ignored(tmp_path):
    """A real dataset has id and label columns: the batch says so before any row runs, naming the
    columns and the option, and --ignore-extra-columns leaves them out of every row."""
    folder = project(tmp_path)
    (folder / "rows.csv").write_text("id,text,label\n1,hello,a\n2,bye,b\n", encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", "--data", "rows.csv")
    assert (code, out) == (2, "")
    assert err == ("taskdsl run: rows.csv: the columns 'id', 'label' are not inputs of 'say' (it takes 'text'): remove "
                   "them from the data, or run with --ignore-extra-columns to leave them out of every row\n")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", "--data", "rows.csv",
                             "--ignore-extra-columns", "-q")
    assert code == 0, err
    assert err.splitlines()[0] == ("taskdsl run: leaving out the columns 'id', 'label' of rows.csv (not inputs of "
                                   "'say'; --ignore-extra-columns)")
    assert [(r["row"], r["inputs"], r["status"]) for r in map(json.loads, out.splitlines())] == [
        (1, {"text": "hello"}, "COMPLETE"), (2, {"text": "bye"}, "COMPLETE")]
    # a JSONL key in any row counts, said as a key
    (folder / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b", "stars": 5}\n', encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "say.task.xml", "--model", "taskdsl/echo", "--data", "rows.jsonl")
    assert code == 2 and err.startswith("taskdsl run: rows.jsonl: the key 'stars' is not an input of 'say' (it takes "
                                        "'text'): remove it from the data")


async def test_a_batch_takes_global_values_as_a_single_run_does(tmp_path):
    """--global reaches every row of a batch through the settings merge a single run uses
    (runner.command_line_settings): the checker knows the name, the prompt has the value."""
    (tmp_path / "taskdsl.toml").write_text('globals = { owner = "ann", region = "north" }\n', encoding="utf-8")
    (tmp_path / "g.task.xml").write_text('<task name="g"><instructions>{{owner}} on {{text}} ({{region}})'
                                         '</instructions><inputs><input name="text"/></inputs></task>\n',
                                         encoding="utf-8")
    rows_file(tmp_path, count=3)
    flags = ("--model", "taskdsl/echo", "-q", "--global", "owner=bo")
    code, out, err = await taskdsl_async(tmp_path, "run", "g.task.xml", "--input", "text=row 1", *flags)
    assert (code, err) == (0, "")
    code, _, err = await taskdsl_async(tmp_path, "run", "g.task.xml", "--data", "rows.jsonl", "--out",
                                       "results.jsonl", *flags)
    assert code == 0, err
    assert [r["content"] for r in results(tmp_path)] == [out.strip(), "bo on row 2 (north)", "bo on row 3 (north)"]
    assert out.strip() == "bo on row 1 (north)"


async def test_the_batch_plan_names_an_optional_input_only_a_later_row_gives(tmp_path):
    """The plan is made from the first row; an input with a default the first row leaves out but another row
    gives is still an input of the run, and the plan (whose digest --agree pins) names it."""
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "say.task.xml").write_text(
        '<task name="say"><instructions>Say {{text}} {{tone}}</instructions>'
        '<inputs><input name="text"/><input name="tone">neutral</input></inputs></task>\n', encoding="utf-8")
    (tmp_path / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b", "tone": "warm"}\n', encoding="utf-8")
    code, plan, err = await taskdsl_async(tmp_path, "run", "say.task.xml", "--model", "taskdsl/echo",
                                          "--data", "rows.jsonl", "--plan")
    assert code == 0, err
    assert "  with the inputs:\n    text = (each row's)\n    tone = (each row's)\n" in plan
