"""Run a template file: prepare it against its project, then execute exactly what was prepared.

    result = await run_file("examples/word_count.task.xml", inputs={"intro": "…"})

`run_file` indexes the file's project (`workspace.project_root`, `workspace.discover`: the same
files `taskdsl check FILE` indexes) plus the library paths (the settings', TASKDSL_LIBRARY_PATH,
or `library_paths`), then `plan.prepare` checks, compiles and plans the run from that index, and
`execute` runs the `Prepared` value. The editor calls `prepare` with its live index and then
`execute`: one run path.
"""

from __future__ import annotations

import asyncio
import functools
import os
from dataclasses import replace
from typing import Any, Callable

from taskdsl.project import confine
from taskdsl.support.reading import ReadBudget
from taskdsl.support.redaction import Redactor

from taskdsl.evaluator.ast import Ctx, RunState
from taskdsl.evaluator.dry import DryRun, Sent
from taskdsl.evaluator.env import Env
from taskdsl.evaluator.handler import HandlerConfig, default_model
from taskdsl.evaluator import consent
from taskdsl.evaluator.memory import MemorySystem, refuse_echo_matcher
from taskdsl.evaluator.preflight import preflight
from taskdsl.evaluator.plan import Prepared, TemplateErrors, prepare  # noqa: F401  (TemplateErrors: the run's refusal)
from taskdsl.evaluator.results import TaskError, TaskResult
from taskdsl.evaluator.trace import Trace


def project_index(path: str, settings=None):
    """The index a run of `path` resolves against: its project and the library paths."""
    from taskdsl.library import Library
    from taskdsl.project.workspace import project_root

    return Library.from_paths([project_root(path), path], settings)


def prepare_file(path: str, task: str | None = None, inputs: dict | None = None, *, text: str | None = None,
                 library_paths: tuple[str, ...] | None = None, settings=None, check: bool = True,
                 allow_read: tuple[str, ...] = (), global_values: dict[str, str] | None = None) -> Prepared:
    """`prepare` for the command line: the project's settings (taskdsl.toml) and index built from
    disk, with what the command line adds over them (library paths, --allow-read, --global)."""
    from taskdsl.project.config import settings_for

    settings = command_line_settings(settings or settings_for(path)[0], library_paths=library_paths,
                                     allow_read=allow_read, global_values=global_values)
    return prepare(project_index(path, settings), path, task, inputs, text=text, settings=settings, check=check,
                   granted=tuple(allow_read))


def command_line_settings(settings, *, library_paths: tuple[str, ...] | None = None, allow_read: tuple[str, ...] = (),
                          global_values: dict[str, str] | None = None):
    """The project's settings with what the command line adds over them, for a run and a batch
    alike: library paths (replacing the project's), --allow-read folders (after the project's;
    the checker's TD802 sees them too) and --global values (over the project's globals)."""
    changes: dict[str, Any] = {}
    if library_paths is not None:
        changes["library_paths"] = tuple(library_paths)
    if allow_read:
        changes["run_allow_read"] = tuple(dict.fromkeys((*settings.run_allow_read, *allow_read)))
    if global_values:
        changes["global_values"] = tuple({**dict(settings.global_values), **global_values}.items())
        changes["globals"] = tuple(dict.fromkeys((*settings.globals, *global_values)))
    return replace(settings, **changes) if changes else settings


async def run_file(path: str, task: str | None = None, inputs: dict | None = None, model: str | None = None,
                   trace: str | None = None, on_event: Callable[[dict], Any] | None = None,
                   cancel: asyncio.Event | None = None, library_paths: tuple[str, ...] | None = None,
                   config: HandlerConfig | None = None, check: bool = True,
                   on_script_start: Callable[[int], Any] | None = None, text: str | None = None,
                   allow_read: tuple[str, ...] = (), max_cost: float | None = None,
                   timeout: float | None = None, globals: dict[str, str] | None = None, settings=None,
                   recover: Callable[..., Any] | None = None) -> TaskResult:
    """Run the template at path. Raises TemplateErrors (does not check), CompileError, or
    TaskError (the run failed); cancelling the asyncio task (or setting `cancel`) stops model
    calls and kills scripts' process groups. `text` overrides the file's content on disk.
    `allow_read`: folders outside the project the run may read (taskdsl.project.confine); `max_cost`: the
    dollars model calls may cost (taskdsl.evaluator.cost); `timeout`: seconds the whole run may take;
    `globals` (name → value, `--global`) over the project's globals, visible everywhere;
    `settings`: the project's (read from its taskdsl.toml when None); `recover`: see `execute`."""

    prepared = prepare_file(path, task, inputs, text=text, library_paths=library_paths, check=check,
                            settings=settings, allow_read=tuple(allow_read), global_values=globals)
    return await execute(prepared, model=model, trace=trace, on_event=on_event, cancel=cancel, config=config,
                         on_script_start=on_script_start, max_cost=max_cost, timeout=timeout, recover=recover)


def run_label(prepared: Prepared) -> str:
    """The name a run of `prepared` gives its root step: the --task, the root task's name, else its tag."""
    root = prepared.document.root
    return prepared.task or (root.get("name") if root.tag == "task" else None) or root.tag


def run_state(config: HandlerConfig, *, root: str, library: Any, settings: Any = None,
              globals: dict | None = None, model: str | None = None, allow_read: tuple[str, ...] = (),
              read_limits: tuple[int, int] | None = None, commands: tuple[str, ...] | list[str] = (),
              sources: dict | None = None, trace: str | None = None, dry: bool = False,
              redactor: Redactor | None = None, **hooks: Any) -> RunState:
    """The one constructor of a run's shared state, for a run, a dry run (`taskdsl render`, the
    preview) and the memory's model matcher alike: the project's root and memory, what may be read
    (`allow_read`, the read budget), the commands consented to, the secrets masked (`redactor`: a
    batch's rows share one; by default the environment's and the configured key). `hooks` are
    RunState's callbacks (on_event, on_script_start, recover, on_step, budget, agreed_models,
    script_env)."""
    redactor = redactor or Redactor(extra=[config.api_key])
    return RunState(config=config, global_env=Env({**(globals or {}), "taskLibrary": library}), model_override=model,
                    memory=MemorySystem.for_project(root, settings), trace=Trace(trace, redactor), root=root,
                    allow_read=tuple(allow_read), redactor=redactor,
                    reads=ReadBudget(*read_limits) if read_limits else ReadBudget(),
                    allowed_commands=tuple(commands), sources=dict(sources or {}),
                    dry=DryRun() if dry else None, **hooks)


def prepared_state(prepared: Prepared, config: HandlerConfig, model: str | None = None,
                   allow_read: tuple[str, ...] | None = None, **options: Any) -> RunState:
    """`run_state` of a run of `prepared` (options: trace, dry, hooks; `allow_read` narrower than the plan's).
    Its secrets: the environment's, the configured key and the value of each input named like a secret."""
    options["redactor"] = (options.get("redactor") or Redactor(extra=[config.api_key])).with_inputs(
        {**(getattr(prepared, "globals", None) or {}), **prepared.inputs})  # a global named like a secret is one
    return run_state(config, root=confine.project_root(prepared.path), library=prepared.library,
                     settings=prepared.settings, globals=prepared.globals, model=model,
                     allow_read=prepared.allow_read if allow_read is None else allow_read, read_limits=prepared.read_limits, commands=prepared.commands,
                     sources=prepared.sources, **options)


def start(prepared: Prepared, state: RunState):
    """The evaluation of `prepared`'s entry under `state` (a coroutine): the one way a run and a
    dry run begin, so both walk the same nodes from the same environments."""
    run_env = Env(prepared.inputs, outer=state.global_env)  # --input values: seen by the entry and its calls
    label = run_label(prepared)
    node, args = prepared.node, prepared.args
    ctx = Ctx(state, path=label, chain=(label,) if args is not None else ())  # a task or template entry: a name
    return node.eval(run_env, ctx, args) if args is not None else node.eval(run_env, ctx)


async def dry_run(prepared: Prepared, model: str | None = None, default: str | None = None) -> list[Sent]:
    """The messages a run of `prepared` sends, each at its step path, from a dry run: the run's own
    evaluation with no model called and no script started (taskdsl.evaluator.dry). `model` is
    `--model`; `default` the model of a task without one (else TASKDSL_MODEL). Raises TaskError
    where the run would fail before sending them (a file it may not read, a value not there)."""
    state = prepared_state(prepared, HandlerConfig(model=default or default_model()), model,
                           allow_read=readable(prepared), dry=True)
    await start(prepared, state)
    return list(state.dry.sent)


def refuse_unusable_matcher(prepared: Prepared, default_model: str, model: str | None) -> None:
    """A run whose tasks ask the memory, with `[memory] matcher = "model"` on taskdsl/echo, is
    refused before anything runs (and so is its --plan): the matcher could only fail every
    fresh-context task (taskdsl.evaluator.memory.refuse_echo_matcher says why)."""
    if not consent.memory_index_of(prepared)[0]:
        return
    memory = MemorySystem.for_project(confine.project_root(prepared.path), prepared.settings)  # the run's memory
    refuse_echo_matcher(memory, prepared.library, model, default_model)


def planned_models(prepared: Prepared, default_model: str, model: str | None):
    """The models the run's plan calls (what its consent showed), computed once when first asked."""
    @functools.cache
    def models() -> frozenset[str]:
        from taskdsl.evaluator import cost

        key = (default_model, model)  # the runs of one compiled template (a batch's rows) share the answer
        if key not in prepared.calls:
            prepared.calls[key] = [name for name, _ in cost.plan_calls(prepared.node, prepared.library, default_model,
                                                                       model)]
        called = prepared.calls[key]
        return frozenset([*called, *(f for name in called for f in prepared.fallbacks.get(name, ()))])

    return models


def calls_real_models(prepared: Prepared, default_model: str, model: str | None) -> bool:
    """Whether the run may call a model that is not offline (and so needs litellm)."""
    from taskdsl.evaluator.providers import is_offline

    return prepared.calls_models and not all(map(is_offline, planned_models(prepared, default_model, model)()))


def readable(prepared: Prepared) -> tuple[str, ...]:
    """The folders outside the project a dry run (render, the preview) may read: the user's own,
    never those only the project's configuration allows (plan.project_widening) until a run's
    consent agreed to them: a preview asks nothing."""
    if prepared.agreed:
        return tuple(prepared.allow_read)
    widened = {os.path.normpath(folder) for key, folder in prepared.widened if key == "[run] allow_read"}
    return tuple(f for f in prepared.allow_read if os.path.normpath(f) not in widened)


def refuse_unagreed(prepared: Prepared) -> None:
    """A run the project's own configuration widens (plan.project_widening) executes only once the user
    agreed to it: `--yes`, the terminal's question or the editor's consent, each after showing it."""
    if not prepared.widened or prepared.agreed:
        return
    from taskdsl.project.config import find_config

    config = find_config(prepared.path)
    shown = "; ".join(f"{key} {folder}" for key, folder in prepared.widened)
    yourself = ", or give a folder to read yourself with --allow-read" if any(
        key.endswith("allow_read") for key, _ in prepared.widened) else ""  # it widens nothing else
    if getattr(prepared, "declined", False):  # asked on the terminal, and the answer was not yes
        raise TaskError("VALIDATION_ERROR", f"not run: you did not agree to its plan, which the project's "
                        f"{config.name if config else 'configuration'} widens ({shown}){yourself}", "not_agreed",
                        {"widened": [list(w) for w in prepared.widened]})
    raise TaskError("VALIDATION_ERROR", f"not run: the project's {config.name if config else 'configuration'} widens "
                    f"what this run may do ({shown}); read the plan (taskdsl run --plan), then agree with --yes "
                    f"(or --agree DIGEST, that plan only){yourself}", "not_agreed",
                    {"widened": [list(w) for w in prepared.widened]})


def planned_reads(prepared: Prepared) -> tuple[str, Any]:
    """(the folder where "outside" starts, the files the plan lists): what the run's consent saw it read."""
    from taskdsl.evaluator import consent

    return (os.path.dirname(os.path.realpath(prepared.path)),
            consent.with_memory(consent.read_files(prepared.node, prepared.library), prepared))


async def execute(prepared: Prepared, model: str | None = None, trace: str | None = None,
                  on_event: Callable[[dict], Any] | None = None, cancel: asyncio.Event | None = None,
                  config: HandlerConfig | None = None, on_script_start: Callable[[int], Any] | None = None,
                  max_cost: float | None = None, timeout: float | None = None,
                  script_env: dict[str, str] | None = None,
                  recover: Callable[..., Any] | None = None, budget: Any = None,
                  on_step: Callable[..., Any] | None = None, redactor: Redactor | None = None) -> TaskResult:
    """Run what `prepare` decided. Raises TaskError when the run fails; cancelling the asyncio
    task (or setting `cancel`) stops model calls and kills scripts' process groups. `script_env`
    is added to every script's environment. `recover` (a failed task, its error, … → a result) is
    how a task that failed may be re-planned: the caller hands in `task_system.replan.recover`
    (the evaluator never imports the layer above it); None re-plans nothing. `budget`: a
    cost.Budget shared with other runs (a batch's), instead of one of `max_cost`. `on_step` is the
    debugger's hook (RunState.on_step: awaited before and after each node; `taskdsl debug`).
    `redactor`: the secrets to mask, when the caller already knows them (a batch's rows share
    one); by default those of the environment and the configured key."""
    path, task, inputs = prepared.path, prepared.task, prepared.inputs
    refuse_unagreed(prepared)
    config = config or HandlerConfig(model=default_model())
    # budget: a cost.Budget shared by several runs (a batch's rows: --max-cost covers the batch)
    if budget is None and max_cost is not None:
        from taskdsl.evaluator import cost

        cost.check_estimate(prepared.node, prepared.library, config.model, model, max_cost)
        budget = cost.Budget(max_cost)
    refuse_unusable_matcher(prepared, config.model, model)
    models = planned_models(prepared, config.model, model)
    await preflight(models(), config)  # every model usable before any step runs
    config = replace(config, agreed_models=models())  # a fallback the plan did not show is never called
    state = prepared_state(prepared, config, model, trace=trace, on_event=on_event, on_script_start=on_script_start,
                           budget=budget, agreed_models=models, agreed_reads=lambda: planned_reads(prepared),
                           recover=recover, on_step=on_step, script_env=script_env or {}, redactor=redactor)
    state.trace.write(event="run", file=os.path.abspath(path), task=task, inputs=inputs,
                      model=model or config.model)
    work = asyncio.ensure_future(start(prepared, state))
    stopper = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    try:
        done, _ = await asyncio.wait({work} | ({stopper} if stopper else set()), timeout=timeout or None,
                                     return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            return work.result()
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        if stopper is not None and stopper in done:
            raise TaskError("TASK_FAILURE", "the run was cancelled", "cancelled")
        raise TaskError("RESOURCE_EXHAUSTION", f"the run took longer than {timeout:g} s and was stopped: allow more "
                        "with --timeout SECONDS (or timeout in the [run] table of taskdsl.toml)", "timeout",
                        {"resource": "time", "metrics": {"limit": timeout}})
    except TaskError as error:
        state.trace.write(event="failed", error=error.to_json())
        raise
    finally:
        if stopper is not None:
            stopper.cancel()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
        state.trace.close()
