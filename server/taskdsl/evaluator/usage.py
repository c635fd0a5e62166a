"""notes.dataUsage: what went into a result and what it took.

Every result carries it: the task's inputs (names), the files it read (`files`; `memory`: those
the memory system matched for its fresh context, when there are any), how much inherited and
accumulated context it was given (characters), and the model calls, tokens and cost (dollars,
from litellm's price map; 0 for the offline models and for a model the map does not price) of
the result and everything run to make it. A sequential, a reduce or a call sums its parts.
Calls answered from the answer cache are counted apart (`cached`, present only when some were):
they cost nothing and are not in `model_calls`.
"""

from __future__ import annotations

from typing import Any, Iterable

COUNTS = ("model_calls", "prompt_tokens", "completion_tokens", "cost")


def of_call(model: str, calls: int, prompt_tokens: int, completion_tokens: int, cached: bool = False) -> dict[str, Any]:
    """The counts of one atomic task's model calls. Answered from the answer cache (`cached`), the
    calls are counted as `cached` (a count present only when some were) and cost nothing."""
    from taskdsl.language.models import price_of

    if cached:
        return {"model_calls": 0, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "cost": 0.0, "cached": calls}
    return {"model_calls": calls, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "cost": price_of(model, prompt_tokens, completion_tokens)}


def summed(parts: Iterable[Any]) -> dict[str, Any]:
    """Counts and files of results (TaskResult or their notes.dataUsage) added up."""
    total: dict[str, Any] = {name: 0 for name in COUNTS}
    files: list[str] = []
    memory: list[str] = []  # the files the memory system matched and read (fresh_context)
    for part in parts:
        usage = part if isinstance(part, dict) else (part.notes.get("dataUsage") or {})
        for name in COUNTS:
            total[name] += usage.get(name) or 0
        if usage.get("cached"):
            total["cached"] = total.get("cached", 0) + usage["cached"]
        files += [f for f in usage.get("files", ()) if f not in files]
        memory += [f for f in usage.get("memory", ()) if f not in memory]
    total["cost"] = round(total["cost"], 8)
    return {**total, "files": files, **({"memory": memory} if memory else {})}


def data_usage(inputs: list[str], inherited: str | None, accumulated: str | None, own: dict | None) -> dict[str, Any]:
    """The full dataUsage of a task: its own inputs and context around the counts `own` holds."""
    counts = summed([own or {}])
    memory = {"memory": counts.pop("memory")} if "memory" in counts else {}
    return {"inputs": list(inputs), "files": counts.pop("files"), **memory, "inherited_context": len(inherited or ""),
            "accumulated_context": len(accumulated or ""), **counts}
