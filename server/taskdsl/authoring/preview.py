"""Prompt previews: the messages a run sends, recorded by a dry run of the run's `Prepared` value
(taskdsl.evaluator.dry): the run's own evaluation, from the same entry and environments, with no
model called and no script started. A value only a run can know (a model's answer, a script's
output or notes, the case a <cond> chooses on such a value) is a `{{run: …}}` placeholder naming
where it comes from; everything else (the inputs, the context a sequential or a reduce passes on,
files read) is exactly the run's. Token counts and prices are the `--max-cost` estimate's
(taskdsl.evaluator.cost).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from taskdsl.evaluator import cost


@dataclass(frozen=True)
class PromptPreview:
    task: str  # the step path of the atomic task (as the run's trace and results name it)
    model: str
    system: str
    user: str
    tokens: int  # of both messages, estimated as --max-cost estimates them
    cost: float  # dollars for the prompt and an answer of cost.ANSWER_TOKENS (0: the model is not priced)

    def to_json(self) -> dict:
        return asdict(self)


async def preview_prompts(prepared, model: str | None = None, default: str | None = None) -> list[PromptPreview]:
    """The prompts a run of `prepared` sends, in the order it sends them, from a dry run of it
    (`runner.dry_run`: the run's own evaluation, nothing called). `model` overrides every task's,
    as `taskdsl run --model`; `default` is the model of a task without one (the editor's setting;
    else TASKDSL_MODEL)."""
    from taskdsl.evaluator.runner import dry_run

    previews = []
    for sent in await dry_run(prepared, model, default):
        tokens = cost.prompt_tokens(sent.system + sent.user)
        previews.append(PromptPreview(sent.path, sent.model, sent.system, sent.user, tokens,
                                      cost.price_of(sent.model, tokens, cost.ANSWER_TOKENS)))
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
