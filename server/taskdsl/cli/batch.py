"""`taskdsl run FILE --data ROWS.jsonl|ROWS.csv [--jobs N] [--out RESULTS.jsonl] [--resume]
[--fail-fast] [--executor local|ray]`: the template over every row (evaluator/batch.py).

One plan for the batch (`--plan` prints it: its digest covers the data file), a progress bar
on a terminal (rich) or one plain line a row otherwise, one JSON line a row in --out (stdout
without it), a summary on stderr (stdout with --json). Exit 0 when every row completed, 1 when
any failed, 2 when the batch cannot start, 130 when stopped by Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys


def add_batch_options(p) -> None:
    p.add_argument("--data", metavar="ROWS", help="run once per row of a .jsonl (objects) or .csv (with a header) file")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, metavar="N", help="rows run at a time (default 4)")
    p.add_argument("--out", metavar="RESULTS.jsonl", help="append one JSON line per finished row (with --data)")
    p.add_argument("--resume", action="store_true", help="skip the rows already in --out")
    p.add_argument("--fail-fast", action="store_true", help="start no new row after one fails")
    p.add_argument("--ignore-extra-columns", action="store_true",
                   help="leave out the data's columns (JSONL keys) the task does not take, instead of refusing the batch")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="run the rows here (default) or as Ray tasks on RAY_ADDRESS (needs taskdsl[ray])")


def _jobs(value: str) -> int:
    import argparse

    if not value.isdigit() or not 1 <= int(value) <= 1024:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 1024, got {value!r}")
    return int(value)


class Progress:
    """Count, failures, cost and ETA: a rich bar on a terminal, one plain line a row otherwise."""

    def __init__(self, total: int, quiet: bool = False, stream=None):
        self.stream = stream or sys.stderr
        self.quiet, self.total, self.bar = quiet, total, None
        if not quiet and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

            self.bar = Bar(TextColumn("rows"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                           TimeRemainingColumn(), console=Console(file=self.stream), transient=False)
            self.task = self.bar.add_task("rows", total=total, status="")
            self.bar.start()

    def start(self, summary) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=summary.skipped)

    def __call__(self, summary, record) -> None:
        if self.quiet:
            return
        status = f"{summary.failed} failed · ${summary.cost:.4f}"
        if self.bar is not None:
            self.bar.update(self.task, completed=summary.skipped + summary.done, status=status)
            return
        eta = summary.eta()
        failed = record["status"] == "FAILED"
        why = f" · {one_line((record.get('error') or {}).get('message') or '')}" if failed else ""
        print(f"{'✗' if failed else '✓'} row {record['row']} · {summary.skipped + summary.done}/{summary.rows} · "
              f"{status}{f' · ETA {eta:.0f}s' if eta is not None else ''}{why}", file=self.stream, flush=True)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def one_line(text: str, width: int = 120) -> str:
    """A failed row's reason on its progress line: the first line, cut to `width` characters, its
    control characters escaped (a model's answer may hold terminal escapes)."""
    from taskdsl.support.terminal import shown

    first = shown(text.strip().splitlines()[0]) if text.strip() else "failed"
    return first if len(first) <= width else first[:width - 1] + "…"


def batch_command(args, project, config, global_values: dict, inputs: dict) -> int:
    from taskdsl.cli.run import check_agreed_plan, masked, print_plan, refused, span_export, usage_error
    from taskdsl.evaluator import batch, cost
    from taskdsl.evaluator import plan as batch_plan
    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError
    from taskdsl.task_system.replan import recover

    if not args.data:  # --out or --resume alone: they belong to a batch run
        from taskdsl.cli.run import batch_only_options

        given = " and ".join(batch_only_options(args))
        return usage_error("run", f"{given} {'need' if ' and ' in given else 'needs'} --data ROWS.jsonl|ROWS.csv (a "
                                  "batch run); a single run prints its result (--json for JSON)", args.json)
    if inputs:
        return usage_error("run", "--input/--inputs and --data do not go together: put the inputs in the rows",
                           args.json)
    if getattr(args, "trace", None):  # one trace file is one run's: never silently not written
        return usage_error("run", "--trace and --data do not go together: a batch writes each row's result to --out "
                                  "and each row's spans with --otel", args.json)
    try:
        rows, digest = batch.read_rows(args.data)
    except batch.BadRows as e:
        return usage_error("run", str(e), args.json)
    if args.out and os.path.isdir(args.out):
        return usage_error("run", f"--out {args.out} is a folder: give the file the results go to "
                                  "(RESULTS.jsonl)", args.json)
    if args.out and not args.resume and os.path.exists(args.out) and os.path.getsize(args.out) > 0:
        return usage_error("run", f"{args.out} already holds results: --resume to finish it, or remove it", args.json)
    default = project.model or default_model()
    handler = configure(HandlerConfig(model=default), project, retries=args.retries, cache=args.cache)
    limit = args.max_cost if args.max_cost is not None else project.run_max_cost
    budget = cost.Budget(limit) if limit is not None else None
    timeout = (args.timeout if args.timeout is not None else config.get("run", "timeout", default=3600.0)) or None
    if args.executor == "local":
        spans, problem = span_export(args)  # OpenTelemetry, a trace per row
        worker_otel = None
    else:  # each Ray worker exports its rows' spans itself, with this process's OTEL_* settings
        spans, (worker_otel, problem) = None, ray_otel(args)
    if problem is not None:
        return problem
    try:
        context = batch.RowContext(args.file, args.task, project, handler, model=args.model,
                                   allow_read=tuple(args.allow_read), global_values=global_values, budget=budget,
                                   timeout=timeout, recover=recover, on_event=spans)
        context.prepare({})  # checks and compiles the template: once for the batch
        extra = extra_columns(context, rows)
        if extra and not args.ignore_extra_columns:
            accepted, shared = batch_plan.accepted_inputs(context.compiled)
            return usage_error("run", batch.extra_columns_message(args.data, extra, context.compiled.label,
                                                                  batch_plan.takes_words(accepted, shared)), args.json)
        if extra:
            rows = batch.without(rows, extra)
            what = "column" if args.data.lower().endswith(".csv") else "key"
            print(f"taskdsl run: leaving out the {what}{'s' if len(extra) > 1 else ''} "
                  f"{', '.join(repr(n) for n in extra)} of {args.data} "
                  f"({'not an input' if len(extra) == 1 else 'not inputs'} of '{context.compiled.label}'; "
                  "--ignore-extra-columns)", file=sys.stderr)
        first = context.prepare(rows[0].inputs if rows else {})
    except (OSError, UnreadableTemplate, TemplateErrors, CompileError) as e:
        return refused("run", args.file, e, args.json)
    except TaskError as e:
        print(masked(f"taskdsl run: {e}"), file=sys.stderr)
        if args.json:
            from taskdsl.cli.run import masked_json

            print(masked_json({"error": e.to_json()}))
        return 2
    # the plan names every input a row gives, not only the first row's (an optional one some rows set)
    planned = (args.data, digest, len(rows), tuple(sorted({name for row in rows for name in row.inputs})))
    if args.plan:
        try:
            print_plan(first, default, args.model, cache=handler.cache is not None, data=planned, as_json=args.json)
        except TaskError as e:  # a run the plan shows would be refused (an unusable memory matcher)
            print(masked(f"taskdsl run: {e}"), file=sys.stderr)
            return 1
        return 0
    try:  # what the project's own configuration widens: agreed once for the batch (--yes), else no row runs
        from taskdsl.evaluator.runner import refuse_unagreed

        check_agreed_plan(first, args, default, args.model, data=planned)  # --agree DIGEST
        refuse_unagreed(first)
    except TaskError as e:
        print(masked(f"taskdsl run: {e.message}"), file=sys.stderr)
        return 2
    if limit is not None:
        try:
            expected = cost.check_estimate(first.node, first.library, default, args.model, limit / max(1, len(rows)))
        except TaskError:
            expected = cost.estimate(cost.plan_calls(first.node, first.library, default, args.model))
            print(f"taskdsl run: the batch is estimated to cost at least ${expected * len(rows):.4f} "
                  f"({len(rows)} rows), over its budget of ${cost.dollars(limit)}: raise --max-cost", file=sys.stderr)
            return 1
    try:
        run = batch.Batch(rows, jobs=args.jobs or batch.DEFAULT_JOBS, out=args.out, resume=args.resume,
                          fail_fast=args.fail_fast)
    except OSError as e:
        print(f"taskdsl run: cannot write --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    progress = Progress(len(rows), quiet=args.quiet)
    run.on_progress = progress
    progress.start(run.summary)
    if args.executor == "ray":
        from taskdsl.evaluator import ray_batch

        try:
            summary = ray_batch.run(run, context, otel=worker_otel)
        except ray_batch.RayUnavailable as e:
            progress.stop()
            print(f"taskdsl run: {e}", file=sys.stderr)
            return 2
    else:
        summary = asyncio.run(_local(run, context))
        if spans is not None:
            spans.close()
    progress.stop()
    if not args.out:
        for record in run.records:
            print(json.dumps(record, ensure_ascii=False, default=str))
    if args.json:
        print(json.dumps({"summary": summary.to_json()}))
    print(summary.text(args.out), file=sys.stderr)
    if summary.cancelled:
        return 130
    return 1 if summary.failed else 0


def extra_columns(context, rows) -> list[str]:
    "The data's input names the batch's entry does not take (none when it takes any name)."
    from taskdsl.evaluator.batch import columns
    from taskdsl.evaluator.plan import accepted_inputs

    accepted = accepted_inputs(context.compiled)
    if accepted is None:
        return []
    return [name for name in columns(rows) if name not in accepted[0]]


def ray_otel(args) -> tuple[dict | None, int | None]:
    """(the OTEL_* settings the Ray workers export spans with, or None when export is off; an exit
    code when it cannot start), as span_export decides for a local run."""
    from taskdsl.evaluator import otel

    if args.plan or not otel.wanted(args.otel):
        return None, None
    try:
        otel.require()
    except otel.OtelUnavailable as e:
        print(f"taskdsl run: {e}", file=sys.stderr)
        return None, (2 if args.otel else None)
    return otel.settings(), None


async def _local(run, context):
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # stop cleanly: rows in flight are dropped, whole lines stay
        loop.add_signal_handler(sig, task.cancel)
    try:
        return await run.run(context.run)
    except asyncio.CancelledError:
        run.summary.cancelled = True
        return run.summary
