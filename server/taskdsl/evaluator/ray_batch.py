"""The Ray executor of a batch (`taskdsl run FILE --data ROWS --executor ray`, extra `taskdsl[ray]`).

The rows run as Ray actor tasks on the cluster at RAY_ADDRESS (a local cluster, started here and
stopped at the end, when it is unset or `local`). The driver (this process) keeps everything
else the local executor does, through the same `batch.Batch`: which rows are left (--resume),
at most --jobs rows in flight across the cluster, the results file written line by line (only
the driver writes it: whole lines, never torn), progress, --fail-fast, the summary and Ctrl-C.

- `--jobs N` workers (Ray actors, one process each, asking for no CPU: model calls wait on the
  network); each prepares rows through the one run path (`batch.RowContext`: the project's
  index built once per worker, `plan.prepare`, `runner.execute`) in its own event loop.
- The per-model limits of `[models."NAME"]` (max_concurrency, rpm, tpm) are held by one Ray
  actor that every worker asks before each call, so they hold across the cluster as they do in
  one process.
- `--max-cost` covers the batch: the driver adds up each finished row's cost and schedules no
  new row past the budget (a row in flight may still finish over it).
- The workers read the template, its project and the data's rows from the driver's messages and
  the files at the same paths: on a multi-machine cluster the project must be at the same path
  on every node (or shipped with Ray's `runtime_env`), and the provider's API key set in the
  workers' environment. Nothing else is scheduled by taskdsl across machines.
"""

from __future__ import annotations

import os
from typing import Any


class RayUnavailable(RuntimeError):
    pass


def _ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--executor ray needs taskdsl's ray extra: from a checkout, "
                             "pip install './taskdsl[ray]' (see the install guide)") from None
    return ray


def connect(ray) -> bool:
    """Join RAY_ADDRESS's cluster, or start a local one (unset or `local`); whether we started it."""
    if ray.is_initialized():
        return False
    address = os.environ.get("RAY_ADDRESS", "").strip()
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    if not address or address == "local":
        os.environ.pop("RAY_ADDRESS", None)  # ray.init would read "local" as an address
        ray.init(_node_ip_address="127.0.0.1", **quiet)
        return True
    try:
        ray.init(address=address, **quiet)
    except Exception as error:  # ConnectionError and Ray's own
        raise RayUnavailable(f"cannot join the Ray cluster at RAY_ADDRESS={address}: {error}") from None
    return False


class SharedLimits:
    """calls.Limits for a worker: the policies are read locally, the semaphores and rate limiters
    live in one actor shared by every worker."""

    def __init__(self, policies: dict, actor: Any):
        from taskdsl.evaluator.calls import Limits

        self.local = Limits(policies)
        self.actor = actor

    def policy(self, model: str):
        return self.local.policy(model)

    def fallbacks(self, model: str):
        return self.local.fallbacks(model)

    async def acquire(self, model: str, tokens: int):
        policy = self.local.policy(model)
        if not (policy.max_concurrency or policy.rpm or policy.tpm):
            return None  # no limit for this model: no round trip
        await self.actor.acquire.remote(model, tokens)
        return model

    def release(self, model: str, held: Any) -> None:
        if held is not None:
            self.actor.release.remote(model)


def run(batch: Any, context: Any, otel: dict | None = None) -> Any:
    """Run `batch`'s rows left to do on Ray; returns its Summary. `otel`: the OTEL_* settings
    each worker exports its rows' spans with (evaluator/otel.py), None for no export."""
    ray = _ray()
    started = connect(ray)
    try:
        return _drive(ray, batch, context, otel)
    finally:
        if started:
            ray.shutdown()


def _spec(context: Any, limits_actor: Any, otel: dict | None = None) -> dict:
    from dataclasses import replace

    config = context.config
    policies = dict(config.limits.policies) if config.limits is not None else {}
    shipped = replace(config, limits=None)  # the worker makes its SharedLimits
    return {"path": context.path, "task": context.task, "settings": context.settings, "config": shipped,
            "model": context.model, "timeout": context.timeout, "policies": policies, "limits": limits_actor,
            "recover": context.recover, "otel": otel}


def _drive(ray, batch: Any, context: Any, otel: dict | None = None) -> Any:
    import time

    @ray.remote(num_cpus=0)
    class LimitsActor:
        def __init__(self, policies: dict):
            from taskdsl.evaluator.calls import Limits

            self.limits = Limits(policies)
            self.held: dict[str, list] = {}

        async def acquire(self, model: str, tokens: int) -> None:
            held = await self.limits.acquire(model, tokens)
            self.held.setdefault(model, []).append(held)

        async def release(self, model: str) -> None:
            self.limits.release(model, self.held[model].pop())

    @ray.remote(num_cpus=0)
    class RowWorker:
        def __init__(self, spec: dict):
            from dataclasses import replace

            from taskdsl.evaluator.batch import RowContext

            config = replace(spec["config"], limits=SharedLimits(spec["policies"], spec["limits"]))
            self.context = RowContext(spec["path"], spec["task"], spec["settings"], config, model=spec["model"],
                                      timeout=spec["timeout"], recover=spec["recover"])
            self.context.checked = True  # the driver checked the template before the batch
            self.spans = None
            if spec["otel"] is not None:  # the driver's OTEL_* settings: the same receiver, the same capture
                from taskdsl.evaluator.otel import SpanExport

                os.environ.update(spec["otel"])
                self.spans = self.context.on_event = SpanExport()

        async def run(self, row):
            return await self.context.run(row)

        def flush(self) -> None:
            "Export the spans still buffered (before the driver ends this worker)."
            if self.spans is not None:
                self.spans.close()
                self.spans = self.context.on_event = None

    todo = iter(batch.todo)
    limit = context.budget.limit if context.budget is not None else None
    policies = dict(context.config.limits.policies) if context.config.limits is not None else {}
    limits_actor = LimitsActor.remote(policies)
    spec = _spec(context, limits_actor, otel)
    workers = [RowWorker.remote(spec) for _ in range(min(batch.jobs, len(batch.todo)))]
    idle, pending = list(workers), {}
    stop = False
    try:
        while True:
            while idle and not stop:
                row = next(todo, None)
                if row is None:
                    break
                worker = idle.pop()
                pending[worker.run.remote(row)] = (worker, row)
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                worker, row = pending.pop(ref)
                try:
                    record = ray.get(ref)
                except Exception as error:  # the worker died (out of memory, a node lost): that row failed
                    from taskdsl.evaluator.batch import record_of
                    from taskdsl.evaluator.results import TaskError

                    record = record_of(row, error=TaskError("TASK_FAILURE", f"row {row.number}: the Ray worker "
                                                            f"failed: {str(error).splitlines()[0][:300]}", "worker"))
                batch.finish(record)
                idle.append(worker)
                failed = record["status"] == "FAILED"
                if (failed and batch.fail_fast) or (limit is not None and batch.summary.cost > limit):
                    batch.summary.stopped = stop = True
    except KeyboardInterrupt:
        batch.summary.cancelled = True
        for ref in pending:
            ray.cancel(ref, force=False)
    finally:
        if otel is not None:  # the workers' buffered spans, exported before they end (a stuck one is not waited for)
            flushed = [worker.flush.remote() for worker in workers]
            try:
                ray.wait(flushed, num_returns=len(flushed), timeout=30)
            except Exception:  # a worker already gone (Ctrl-C, a lost node): its spans with it
                pass
        for worker in workers:
            ray.kill(worker)
        ray.kill(limits_actor)
        batch.summary.seconds = time.monotonic() - batch.summary.started
        batch.close()
    return batch.summary
