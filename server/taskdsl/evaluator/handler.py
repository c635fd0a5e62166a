"""Atomic tasks: one Handler per task execution; it talks to the model only through a provider
(providers.py: the offline models, or litellm)."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass

from .results import TaskError, TaskResult

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
    timeout: float = 600.0


def strip_code_fences(text: str) -> str:
    m = re.fullmatch(r"\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*", text, re.S)
    return m.group(1) if m else text.strip()


def parse_json_output(text: str, schema: str | None) -> tuple[object, str | None]:
    """(parsed value, problem) for output_format type="json"; problem is None when all is well."""
    try:
        value = json.loads(strip_code_fences(text))
    except json.JSONDecodeError as e:
        return None, f"output is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
    expected = {"object": dict, "array": list, "string[]": list, "number": (int, float), "boolean": bool}.get(schema or "")
    if expected and (not isinstance(value, expected) or (schema == "number" and isinstance(value, bool))
                     or (schema == "string[]" and not all(isinstance(v, str) for v in value))):
        return value, f"output is valid JSON but not of schema {schema!r}"
    return value, None


class Handler:
    """Builds nothing itself: given the assembled prompt, enforces the limits and calls the model."""

    def __init__(self, config: HandlerConfig):
        self.config = config
        self.turns = 0

    async def execute(self, system: str, user: str, output_format: dict | None = None) -> TaskResult:
        from .providers import provider_for

        config = self.config
        provider = await provider_for(config)
        provider.check()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        notes: dict = {"model": config.model}
        used = provider.count_messages(messages)
        window = provider.context_window()
        notes["prompt_tokens"] = used
        if window:
            limit = int(window * config.max_context_window_fraction)
            notes["context_limit"] = limit
            if used > limit:
                raise TaskError("RESOURCE_EXHAUSTION", f"the prompt needs {used} tokens but model '{config.model}' "
                                f"allows {limit} ({config.max_context_window_fraction:.0%} of its {window}-token window)",
                                "context", {"resource": "context", "metrics": {"used": used, "limit": limit}})
            if used > config.warning_threshold * limit:
                notes["warning"] = f"the prompt uses {used / limit:.0%} of the usable context window ({used}/{limit} tokens)"
        if self.turns >= config.max_turns:
            raise TaskError("RESOURCE_EXHAUSTION", f"turn limit of {config.max_turns} reached", "turns",
                            {"resource": "turns", "metrics": {"used": self.turns, "limit": config.max_turns}})
        if problem := provider.credential_problem():
            raise problem
        self.turns += 1
        started = time.monotonic()
        answer = await provider.complete(messages)
        notes["duration_s"] = round(time.monotonic() - started, 3)
        if answer.completion_tokens is not None:
            notes["completion_tokens"] = answer.completion_tokens
        result = TaskResult(content=answer.content, notes=notes)
        if output_format and output_format.get("type") == "json":
            result.parsed_content, problem = parse_json_output(answer.content, output_format.get("schema"))
            if problem:
                notes["json_error"] = problem
        return result
