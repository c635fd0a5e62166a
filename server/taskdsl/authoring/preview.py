"""Prompt previews: the messages each atomic task of a run would send, built by the very code a
run uses (`Atomic.bind` and `Atomic.prompt`) over the run's `Prepared` value, calling nothing.

A preview runs no model, no script and no nested task: a value only a run can know (an earlier
step's output, a nested task's, an inline call's, an input nobody gave) stays as its `{{…}}`
placeholder, and files listed by a command are named by the command. The entry's own inputs are
the ones given (and the literal defaults), so an atomic entry's preview is exactly what its run
sends. Token counts and prices are the `--max-cost` estimate's (taskdsl.evaluator.cost).
"""

from __future__ import annotations

import os

from dataclasses import asdict, dataclass

from taskdsl.project import confine

from taskdsl.evaluator import cost


@dataclass(frozen=True)
class PromptPreview:
    task: str  # the atomic task's name (or its step path)
    model: str
    system: str
    user: str
    tokens: int  # of both messages, estimated as --max-cost estimates them
    cost: float  # dollars for the prompt and an answer of cost.ANSWER_TOKENS (0: the model is not priced)

    def to_json(self) -> dict:
        return asdict(self)


def readable(prepared) -> tuple[str, ...]:
    """The folders outside the project a preview may read: the user's own, never those only the
    project's configuration allows (plan.project_widening) until a run's consent agreed to them."""
    if prepared.agreed:
        return tuple(prepared.allow_read)
    widened = {os.path.normpath(folder) for key, folder in prepared.widened if key != "library_paths"}
    return tuple(f for f in prepared.allow_read if os.path.normpath(f) not in widened)


async def preview_prompts(prepared, model: str | None = None, default: str | None = None) -> list[PromptPreview]:
    """The prompts of every atomic task a run of `prepared` may reach (refs and calls followed),
    in the order the plan meets them. `model` overrides every task's, as `taskdsl run --model`;
    `default` is the model of a task without one (the editor's setting; else TASKDSL_MODEL)."""
    from taskdsl.evaluator.ast import Ctx, RunState, Template
    from taskdsl.evaluator.env import Env
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.memory import MemorySystem
    from taskdsl.evaluator.plan import reach
    from taskdsl.evaluator.runner import environments

    atomics: list = []
    reach(prepared.node, prepared.library, on_atomic=atomics.append)
    global_env, run_env = environments(prepared)
    state = RunState(config=HandlerConfig(model=default or default_model()), global_env=global_env, model_override=model,
                     memory=MemorySystem.for_project(confine.project_root(prepared.path), prepared.settings),
                     root=confine.project_root(prepared.path),
                     allow_read=readable(prepared), preview=True)
    template = prepared.node if isinstance(prepared.node, Template) else None
    entry = template.body if template is not None else prepared.node
    previews = []
    for atomic in atomics:
        args = prepared.args if atomic is entry else None
        # a template's body sees only its params and the globals (as Template.eval binds them)
        env = Env(dict(args or {}), outer=global_env) if template is not None and atomic is entry else run_env
        scope, ctx, names = await atomic.bind(env, Ctx(state, path=atomic.name), args, atomic.settings)
        system, user, _ = await atomic.prompt(scope, ctx, atomic.settings, names)
        chosen = atomic.model_for(state)
        tokens = cost.prompt_tokens(system + user)
        previews.append(PromptPreview(atomic.name, chosen, system, user, tokens,
                                      cost.price_of(chosen, tokens, cost.ANSWER_TOKENS)))
    return previews


def preview_text(previews: list[PromptPreview]) -> str:
    """The previews as a user reads them: a header per task, then each message exactly."""
    if not previews:
        return "no atomic task: this run sends no prompt to a model\n"
    parts = []
    for p in previews:
        price = f", about ${p.cost:.4f} with a {cost.ANSWER_TOKENS}-token answer" if p.cost else ""
        parts.append(f"=== {p.task} — {p.model}, about {p.tokens} prompt tokens{price}\n"
                     f"--- system\n{p.system}\n--- user\n{p.user}\n")
    return "\n".join(parts)
