"""Atomic tasks: one Handler per task execution; it talks to the model only through a provider
(providers.py: the offline models, or litellm)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from taskdsl.evaluator.outputs import Reading, read_answer, strip_code_fences  # noqa: F401 (strip_code_fences: imported from here by others)
from taskdsl.evaluator import usage
from taskdsl.evaluator.results import TaskError, TaskResult

DEFAULT_MODEL = "taskdsl/echo"  # offline-first: nothing leaves the machine unless a model is chosen
BASE_SYSTEM_PROMPT = "You carry out one task of a larger workflow. Answer with the task's output only."


def default_model() -> str:
    return os.environ.get("TASKDSL_MODEL") or DEFAULT_MODEL


@dataclass(frozen=True)
class HandlerConfig:
    model: str = DEFAULT_MODEL
    max_turns: int = 1  # one completion per atomic task (no tool loop in version 1)
    max_context_window_fraction: float = 0.9  # keep a tenth of the window for the answer
    warning_threshold: float = 0.8  # of the usable window: past it, a warning note
    system_prompt: str = BASE_SYSTEM_PROMPT
    api_base: str | None = None
    api_key: str | None = None
    replay_file: str | None = None
    replay_scope: str | None = None  # the test whose recorded answers replay uses (taskdsl test)
    replay_text: str | None = None  # replay_file's content pinned by the agreed plan (Prepared.replay)
    replay_real_models: bool = False  # every model but an offline one answers from replay_file (taskdsl test)
    recorder: Callable[[str, str], None] | None = None  # told (prompt, answer) of each real model call
    timeout: float = 600.0
    retries: int = 3  # of a call that failed for a reason worth another try (calls.py); 0: none
    limits: Any = None  # calls.Limits: [models."NAME"] fallbacks and limits, shared by every run of a process
    cache: Any = None  # cache.AnswerCache: answers reused by digest; None sends every call
    agreed_models: frozenset[str] | None = None  # the models of the run's agreed plan (a fallback outside it is refused)


class Handler:
    """Builds nothing itself: given the assembled prompt, enforces the limits and calls the model."""

    def __init__(self, config: HandlerConfig):
        self.config = config
        self.turns = 0

    async def execute(self, system: str, user: str, output_format: dict | None = None) -> TaskResult:
        from taskdsl.evaluator.providers import provider_for

        config = self.config
        provider = await provider_for(config, output_format)
        provider.check()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        notes: dict = {"model": config.model, "prompt_tokens": None}  # the model's own count, once it answers
        counted = self.check_window(provider, messages, notes)
        if self.turns >= config.max_turns:
            raise TaskError("RESOURCE_EXHAUSTION", f"turn limit of {config.max_turns} reached", "turns",
                            {"resource": "turns", "metrics": {"used": self.turns, "limit": config.max_turns}})
        if problem := provider.credential_problem():
            raise problem
        self.turns += 1
        started = time.monotonic()
        answer = await provider.complete(messages)
        calls, first = 1, None
        notes["prompt_tokens"] = prompt_tokens(provider, messages, answer, counted)
        reading = read_answer(answer.content, output_format)
        if reading.mismatch:
            # the answer is not of the declared shape: tell the model why, once (then INVALID_OUTPUT)
            messages += [{"role": "assistant", "content": answer.content},
                         {"role": "user", "content": retry_prompt(reading.mismatch)}]
            first = answer
            answer = await provider.complete(messages)
            calls = 2
            notes["prompt_tokens"] += prompt_tokens(provider, messages, answer)
            notes["retried"] = reading.mismatch
            reading = read_answer(answer.content, output_format)
            if first.completion_tokens is not None and answer.completion_tokens is not None:
                answer = replace(answer, completion_tokens=answer.completion_tokens + first.completion_tokens)
        notes["duration_s"] = round(time.monotonic() - started, 3)
        if answer.completion_tokens is not None:
            notes["completion_tokens"] = answer.completion_tokens
        answered_by(notes, answer, first, config.model)
        notes["dataUsage"] = usage.of_call(notes["model"], calls, notes["prompt_tokens"], answer.completion_tokens or 0,
                                           cached=notes.get("cached", False))
        if reading.mismatch:
            raise TaskError("INVALID_OUTPUT", f"the answer does not match the declared output after one retry: "
                            f"{reading.mismatch}", "schema_mismatch",
                            {"violations": [reading.mismatch], "schema": (output_format or {}).get("schema"),
                             "answer": answer.content[:2000], "notes": notes})
        return TaskResult(content=answer.content, notes={**notes, **(reading.notes or {})}, parsed_content=reading.parsed)


    def check_window(self, provider, messages: list[dict], notes: dict) -> int | None:
        """Refuse a prompt over the usable part of the model's window before it is sent, and note
        one past `warning_threshold` of it. The prompt is counted (a tokenizer pass) only when its
        cheap upper bound (providers.prompt_token_bound) does not already put it below the
        warning; the count, when made, is returned."""
        from taskdsl.evaluator.providers import prompt_token_bound

        config = self.config
        window = provider.context_window()
        if not window:
            return None
        limit = int(window * config.max_context_window_fraction)
        notes["context_limit"] = limit
        bound = prompt_token_bound(messages)
        if bound is not None and bound <= config.warning_threshold * limit:
            return None  # far from the limit whatever the tokenizer says
        used = provider.count_messages(messages)
        if used > limit:
            raise TaskError("RESOURCE_EXHAUSTION", f"the prompt needs {used} tokens but model '{config.model}' "
                            f"allows {limit} ({config.max_context_window_fraction:.0%} of its {window}-token window)",
                            "context", {"resource": "context", "metrics": {"used": used, "limit": limit}})
        if used > config.warning_threshold * limit:
            notes["warning"] = f"the prompt uses {used / limit:.0%} of the usable context window ({used}/{limit} tokens)"
        return used


def prompt_tokens(provider, messages: list[dict], answer, counted: int | None = None) -> int:
    "The prompt's tokens: as the model reported them with its answer, else counted (once)."
    if answer.prompt_tokens is not None:
        return answer.prompt_tokens
    return counted if counted is not None else provider.count_messages(messages)


def answered_by(notes: dict, answer, first, model: str) -> None:
    """Notes of how the answer came (calls.py): the model that answered (`fallback_from` the one
    asked when a fallback did), `cached` when every call came from the answer cache, `retries`."""
    answers = [a for a in (first, answer) if a is not None]
    if answer.model and answer.model != model:
        notes["model"], notes["fallback_from"] = answer.model, model
    if all(a.cached for a in answers):
        notes["cached"] = True
    retries = [r for a in answers for r in a.retries]
    if retries:
        notes["retries"] = retries


def retry_prompt(problem: str) -> str:
    return (f"Your answer cannot be used: {problem}. Answer the same task again, with the output in "
            "the declared format only.")
