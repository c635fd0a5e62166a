"""Batch runs: one template over the rows of a data file (`taskdsl run FILE --data ROWS`).

    rows, digest = read_rows("rows.jsonl")      # JSON lines of objects, or a CSV with a header
    batch = Batch(prepare_row, rows, jobs=4, out="results.jsonl", resume=False, fail_fast=False)
    summary = await batch.run(run_row)          # the local executor (Ray: evaluator/ray_batch.py)

Each row is the inputs of one run, as hostile as any input: a row goes through the one run path
(`plan.prepare`'s two halves: the template checked and compiled once against the project's
index, built once, by `plan.compile_entry`; each row's inputs bound by `plan.bind`; then
`runner.execute`), with the
batch's one configuration (retries, cache, per-model limits shared by every row) and one cost
budget (`--max-cost` covers the batch). At most `jobs` rows run at a time. Each finished row is
one JSON line appended to the results file through the one writer (support/files.py LineAppender): `row`
(1-based), `inputs`, `status`, `content`, `error`, `notes`, secrets masked. A line is written in
one `write` of the whole line, so a batch stopped by Ctrl-C leaves only whole lines; `resume`
skips the rows already in the file (a line that does not parse is not a row). `fail_fast`
schedules no new row after the first failure (the rows in flight finish and are written).
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from taskdsl.support import jsontext

DEFAULT_JOBS = 4
MAX_ROWS_BYTES = 2_000_000_000


class BadRows(ValueError):
    """The data file cannot be read as rows: the message names the file and line."""


@dataclass(frozen=True)
class Row:
    number: int  # 1-based, in the file's order
    inputs: dict[str, Any]


def read_rows(path: str) -> tuple[list[Row], str]:
    """The rows of a .jsonl (one JSON object a line; blank lines skipped) or .csv (a header line
    naming the inputs) file, and the sha256 of the bytes they were read from (the plan's digest):
    the file is opened once, by the one reader (a regular file, at most MAX_ROWS_BYTES)."""
    from taskdsl.support.reading import ReadRefused, read_bytes

    kind = os.path.splitext(path)[1].lower()
    if kind not in (".jsonl", ".csv", ".ndjson"):
        raise BadRows(f"{path}: the data must be a .jsonl file (one JSON object a line) or a .csv file with a header")
    try:
        data = read_bytes(path, MAX_ROWS_BYTES)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise BadRows(f"{path}: no such file") from None
    except UnicodeDecodeError as e:
        raise BadRows(f"{path}: not UTF-8 text (byte {e.start})") from None
    except ReadRefused as e:
        raise BadRows(f"{path}: {e.why}: give the rows as a regular file") from None
    except OSError as e:
        raise BadRows(f"{path}: {e.strerror or e}") from None
    return _rows(path, kind, text), hashlib.sha256(data).hexdigest()


def _rows(path: str, kind: str, text: str) -> list[Row]:
    rows: list[Row] = []
    if kind == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        names = reader.fieldnames or []
        if not names or any(not (n or "").strip() for n in names):
            raise BadRows(f"{path}:1: the first line must name every column (the inputs), e.g. text,language")
        try:
            for values in reader:
                if None in values:
                    raise BadRows(f"{path}:{reader.line_num}: more values than the header names")
                rows.append(Row(len(rows) + 1, {name.strip(): value for name, value in values.items()}))
        except csv.Error as e:
            raise BadRows(f"{path}:{reader.line_num}: {e}") from None
        return rows
    for line_number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = jsontext.loads(line)
        except ValueError as e:
            raise BadRows(f"{path}:{line_number}: not valid JSON: {e}") from None
        if not isinstance(value, dict):
            raise BadRows(f"{path}:{line_number}: expected a JSON object of inputs, e.g. {{\"text\": \"…\"}}")
        rows.append(Row(len(rows) + 1, value))
    return rows


def columns(rows: list[Row]) -> list[str]:
    """The input names the rows give (a CSV's header, every key of a JSONL file), in order."""
    found: dict[str, None] = {}
    for row in rows:
        found.update(dict.fromkeys(row.inputs))
    return list(found)


def extra_columns_message(path: str, extra: list[str], target: str, takes: str) -> str:
    """The refusal of a batch whose data names inputs the entry does not take (up front: no row runs)."""
    what = "column" if path.lower().endswith(".csv") else "key"
    noun = what if len(extra) == 1 else what + "s"
    names = ", ".join(repr(n) for n in extra)
    return (f"{path}: the {noun} {names} {'is not an input' if len(extra) == 1 else 'are not inputs'} of "
            f"'{target}' (it {takes}): remove {'it' if len(extra) == 1 else 'them'} from the data, or run with "
            f"--ignore-extra-columns to leave {'it' if len(extra) == 1 else 'them'} out of every row")


def without(rows: list[Row], names: list[str]) -> list[Row]:
    """The rows with these inputs left out (`--ignore-extra-columns`)."""
    dropped = set(names)
    return [Row(row.number, {k: v for k, v in row.inputs.items() if k not in dropped}) for row in rows]


def done_rows(results) -> set[int]:
    """The row numbers already in a results file (whole lines that parse; a cut last line is not one),
    read through its appender (support.files.LineAppender), which opened and checked it."""
    found: set[int] = set()
    for line in results.whole_lines():
        try:
            record = jsontext.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("row"), int):
            found.add(record["row"])
    return found


@dataclass
class Summary:
    rows: int = 0  # in the data file
    ok: int = 0
    failed: int = 0
    skipped: int = 0  # already in the results file (--resume)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0
    cancelled: bool = False
    stopped: bool = False  # --fail-fast stopped scheduling

    @property
    def done(self) -> int:
        return self.ok + self.failed

    def eta(self) -> float | None:
        "Seconds left at the pace so far (None before the first row)."
        todo = self.rows - self.skipped - self.done
        elapsed = time.monotonic() - self.started
        return None if not self.done else elapsed / self.done * todo

    @property
    def not_run(self) -> int:
        "Rows neither done now nor before (a Ctrl-C, --fail-fast or --max-cost stopped the batch)."
        return max(0, self.rows - self.skipped - self.done)

    def to_json(self) -> dict:
        return {"rows": self.rows, "ok": self.ok, "failed": self.failed, "skipped": self.skipped,
                "not_run": self.not_run, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost": round(self.cost, 8),
                "seconds": round(self.seconds, 3), "cancelled": self.cancelled}

    def text(self, out: str | None = None) -> str:
        """The summary line; `out`, the results file, when there is one: rows left are finished by
        running the same command with --resume."""
        parts = [f"{self.ok} ok", f"{self.failed} failed"]
        if self.skipped:
            parts.append(f"{self.skipped} already done")
        if self.not_run:
            parts.append(f"{self.not_run} not run")
        tokens = self.prompt_tokens + self.completion_tokens
        word = "cancelled after" if self.cancelled else "finished in"
        line = (f"{self.rows} rows: {', '.join(parts)} · {tokens:,} tokens · ${self.cost:.4f} · "
                f"{word} {self.seconds:.1f} s")
        if self.not_run and out:
            line += f"\nthe {self.not_run} rows not run: run the same command with --resume (results in {out})"
        return line


def record_of(row: Row, result: Any = None, error: Any = None) -> dict:
    """The results line of a row: what it was given and what came of it."""
    if error is not None:
        details = error.to_json() if hasattr(error, "to_json") else {"type": "TASK_FAILURE", "message": str(error)}
        return {"row": row.number, "inputs": row.inputs, "status": "FAILED", "content": None, "error": details,
                "notes": {}}
    return {"row": row.number, "inputs": row.inputs, "status": result.status, "content": result.content,
            "error": None, "notes": result.notes}


def count(summary: Summary, record: dict) -> None:
    if record["status"] == "FAILED":
        summary.failed += 1
    else:
        summary.ok += 1
    usage = (record.get("notes") or {}).get("dataUsage") or (
        ((record.get("error") or {}).get("details") or {}).get("dataUsage")) or {}
    summary.prompt_tokens += usage.get("prompt_tokens") or 0
    summary.completion_tokens += usage.get("completion_tokens") or 0
    summary.cost += usage.get("cost") or 0.0


#: one row's run: Row → its results record (a dict as record_of makes)
RowRunner = Callable[[Row], Awaitable[dict]]


class Batch:
    """The rows to run, where results go, and the bookkeeping every executor shares."""

    def __init__(self, rows: list[Row], *, jobs: int = DEFAULT_JOBS, out: str | None = None, resume: bool = False,
                 fail_fast: bool = False, on_progress: Callable[[Summary, dict | None], Any] | None = None,
                 redactor: Any = None):
        from taskdsl.support.redaction import Redactor

        self.rows, self.jobs, self.out, self.fail_fast = rows, max(1, int(jobs)), out, fail_fast
        self.on_progress = on_progress
        self.redactor = redactor or Redactor()
        self.writer = None
        if out:
            from taskdsl.support.files import LineAppender

            self.writer = LineAppender(out)  # opened and checked once: --resume reads the rows done through it
        already = done_rows(self.writer) if (self.writer and resume) else set()
        if self.writer and self.writer.ends_mid_line():  # a line cut by a crash: the next row starts a line of its own
            self.writer.write_line("")
        self.todo = [row for row in rows if row.number not in already]
        self.summary = Summary(rows=len(rows), skipped=len(rows) - len(self.todo))
        self.records: list[dict] = []  # without --out: kept for the caller

    def finish(self, record: dict) -> None:
        "A row is done: write its line (secrets masked), count it, tell the progress."
        from taskdsl.evaluator.trace import redact
        from taskdsl.support.redaction import Redactor, secret_values

        # the row's own secrets too: the value of an input named like a secret (a password column)
        given = {k: v for k, v in (record.get("inputs") or {}).items() if isinstance(k, str) and isinstance(v, str)}
        secrets = secret_values(given, extra=self.redactor.secrets)
        redactor = self.redactor if secrets == self.redactor.secrets else Redactor(secrets)
        record = redact(record, redactor)
        line = redactor.text(json.dumps(record, ensure_ascii=False, default=str))
        if self.writer is not None:
            self.writer.write_line(line)
        else:
            self.records.append(record)
        count(self.summary, record)
        if self.on_progress is not None:
            self.on_progress(self.summary, record)

    def close(self) -> None:
        self.summary.seconds = time.monotonic() - self.summary.started
        if self.writer is not None:
            self.writer.close()

    async def run(self, run_row: RowRunner) -> Summary:
        """The local executor: at most `jobs` rows at a time in this process's event loop."""
        queue = iter(self.todo)
        stop = asyncio.Event()

        async def worker() -> None:
            for row in queue:
                if stop.is_set():
                    return
                record = await run_row(row)
                self.finish(record)
                over_budget = ((record.get("error") or {}).get("reason") == "cost")  # --max-cost covers the batch
                if record["status"] == "FAILED" and (self.fail_fast or over_budget):
                    self.summary.stopped = True
                    stop.set()

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.jobs, len(self.todo)) or 1)]
        try:
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            self.summary.cancelled = True
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        finally:
            self.close()
        return self.summary


class RowContext:
    """What every row's run shares: the project's index (built once), the entry's text (read
    once), the settings, the configuration (retries, cache, limits) and the batch's budget.
    `run(row)` is one run through `plan.bind` (of the template compiled once) and `runner.execute`."""

    def __init__(self, path: str, task: str | None, settings: Any, config: Any, *, model: str | None = None,
                 allow_read: tuple[str, ...] = (), global_values: dict | None = None, budget: Any = None,
                 timeout: float | None = None, recover: Any = None, on_event: Any = None):
        from taskdsl.evaluator.plan import read_entry
        from taskdsl.evaluator.runner import command_line_settings, project_index

        self.settings = command_line_settings(settings, allow_read=allow_read, global_values=global_values)
        self.path, self.task, self.config, self.model = os.path.abspath(path), task, config, model
        self.granted = tuple(allow_read)  # the user's own --allow-read: not the project's widening
        self.budget, self.timeout, self.recover, self.on_event = budget, timeout, recover, on_event
        self.index = project_index(self.path, self.settings)
        self.text = read_entry(self.path)
        self.checked = False
        self.compiled = None
        self.redactor = None

    def prepare(self, inputs: dict):
        """One row's run: the template checked and compiled once for the batch (the same text
        checks and compiles the same), each row's inputs bound to it."""
        from taskdsl.evaluator.plan import bind, compile_entry

        if self.compiled is None:
            self.compiled = compile_entry(self.index, self.path, self.task, text=self.text, settings=self.settings,
                                          check=not self.checked, granted=self.granted)
            self.checked = True
        return bind(self.compiled, inputs)

    async def run(self, row: Row) -> dict:
        from taskdsl.evaluator.plan import InputPlan, missing_inputs_message
        from taskdsl.evaluator.results import TaskError
        from taskdsl.evaluator.runner import execute

        try:
            prepared = self.prepare(row.inputs)
            if prepared.missing:
                # the error a single run without the input fails with (TASK_FAILURE), told the batch's way
                raise TaskError("TASK_FAILURE", missing_inputs_message(
                    InputPlan(prepared.inputs, prepared.missing, prepared.label), batch=True), "missing_input",
                    {"missing": prepared.missing})
            listener = self.on_event.for_run() if hasattr(self.on_event, "for_run") else self.on_event
            if self.redactor is None:  # the environment's secrets, read once for the batch
                from taskdsl.support.redaction import Redactor

                self.redactor = Redactor(extra=[getattr(self.config, "api_key", None)])
            result = await execute(prepared, model=self.model, config=self.config, budget=self.budget,
                                   timeout=self.timeout, recover=self.recover, on_event=listener,
                                   redactor=self.redactor)
        except TaskError as error:
            return record_of(row, error=error)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a row the template cannot take (CompileError, …): that row fails
            return record_of(row, error=TaskError("TASK_FAILURE", f"row {row.number}: {error}", "row_error"))
        return record_of(row, result)
