"""A run's cost budget (`--max-cost`, `[run] max_cost`): estimated before the run from litellm's
prices (read from its bundled map by taskdsl.language.models, never by importing litellm), and enforced
while it runs from the tokens each model call really used.

The estimate counts each atomic task of the plan once (refs and calls followed), with its prompt's
own text at about four characters a token and ANSWER_TOKENS for the answer; inputs, files and
loops are known only when the run gets there, so the estimate is a floor. The guarantee is the
enforcement: before each call, the spending so far plus this prompt's price must fit the budget;
after it, the tokens used are charged. Past the budget the run stops with RESOURCE_EXHAUSTION,
resource `cost`. A model litellm does not price (a local server's) costs nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from taskdsl.language.models import price_of

CHARS_PER_TOKEN = 4
ANSWER_TOKENS = 500
HOW_TO_ALLOW = "raise --max-cost (or max_cost in the [run] table of taskdsl.toml)"


def dollars(amount: float) -> str:
    "A limit as the user wrote it, never in exponent form: 1e-07 is 0.0000001, 2.0 is 2."
    from decimal import Decimal

    return format(Decimal(repr(float(amount))).normalize(), "f")


def prompt_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate(calls: Iterable[tuple[str, str]]) -> float:
    """Dollars for (model, prompt text) calls, each with an answer of ANSWER_TOKENS."""
    return sum(price_of(model, prompt_tokens(text), ANSWER_TOKENS) for model, text in calls)


def exhausted(message: str, spent: float, limit: float, **metrics) -> Exception:
    from taskdsl.evaluator.results import TaskError

    return TaskError("RESOURCE_EXHAUSTION", f"{message}: {HOW_TO_ALLOW}", "cost",
                     {"resource": "cost", "metrics": {"spent": round(spent, 6), "limit": limit, **metrics}})


@dataclass
class Budget:
    """Dollars a run may spend on model calls, and what it has spent."""
    limit: float
    spent: float = 0.0

    def before(self, model: str, prompt: str) -> None:
        "Refuse a call whose prompt alone would take the spending past the limit."
        next_call = price_of(model, prompt_tokens(prompt), 0)
        if self.spent + next_call > self.limit:
            raise exhausted(f"a call to '{model}' would take the run's cost past ${dollars(self.limit)} "
                            f"(spent ${self.spent:.4f}, this prompt ${next_call:.4f})", self.spent, self.limit)

    def charge(self, model: str, notes: dict) -> None:
        "Add what a finished call used; past the limit the run stops here. A cached answer costs nothing."
        if notes.get("cached"):
            return
        used_in = notes.get("prompt_tokens") or 0
        used_out = notes.get("completion_tokens") or 0
        self.spent += price_of(model, int(used_in), int(used_out))
        if self.spent > self.limit:
            raise exhausted(f"the run has spent ${self.spent:.4f}, over its budget of ${dollars(self.limit)}",
                            self.spent, self.limit)


def plan_calls(node: Any, library: Any, default_model: str, override: str | None) -> list[tuple[str, str]]:
    """(model, prompt's own text) of every atomic task a run of node may reach, each once."""
    from taskdsl.evaluator.handler import BASE_SYSTEM_PROMPT
    from taskdsl.evaluator.plan import reach

    atomics: list = []
    reach(node, library, on_atomic=atomics.append)
    return [(override or a.model or default_model,
             BASE_SYSTEM_PROMPT + (a.system or "") + (a.instructions or a.description or "")) for a in atomics]


def check_estimate(node: Any, library: Any, default_model: str, override: str | None, limit: float) -> float:
    """The estimate of a run of node; RESOURCE_EXHAUSTION before anything runs when it is over limit."""
    expected = estimate(plan_calls(node, library, default_model, override))
    if expected > limit:
        raise exhausted(f"the run is estimated to cost at least ${expected:.4f}, over its budget of ${dollars(limit)}",
                        0.0, limit, estimated=round(expected, 6))
    return expected
