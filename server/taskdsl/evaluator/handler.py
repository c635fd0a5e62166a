"""Atomic tasks: one Handler per task execution, talking to the model only through litellm."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass

from .results import TaskError, TaskResult

DEFAULT_MODEL = "taskdsl/echo"  # offline-first: nothing leaves the machine unless a model is chosen
BASE_SYSTEM_PROMPT = "You carry out one task of a larger workflow. Answer with the task's output only."
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS", re.I)


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


def context_window(litellm, model: str) -> int | None:
    try:
        info = litellm.get_model_info(model)
    except Exception:  # unmapped models (local servers, new names): no window to enforce
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


def _credential_problem(litellm, config: HandlerConfig) -> TaskError | None:
    if config.model.startswith("taskdsl/") or config.api_key:
        return None
    missing = [k for k in litellm.validate_environment(config.model).get("missing_keys", []) if _SECRET_NAME.search(k)]
    if missing:
        return TaskError("VALIDATION_ERROR", f"model '{config.model}' needs credentials: set {' or '.join(missing)} "
                         "in the environment (or pick an offline model such as taskdsl/echo)",
                         "missing_credentials", {"model": config.model, "missing": missing})
    return None


def _check_model_name(litellm, model: str) -> None:
    try:
        litellm.get_llm_provider(model)
    except Exception:
        raise TaskError("VALIDATION_ERROR", f"model '{model}' is not known to litellm: use a name from its model "
                        "list or a provider prefix such as openai/<name> or ollama/<name>", "unknown_model",
                        {"model": model}) from None


class Handler:
    """Builds nothing itself: given the assembled prompt, enforces the limits and calls the model."""

    def __init__(self, config: HandlerConfig):
        self.config = config
        self.turns = 0

    async def execute(self, system: str, user: str, output_format: dict | None = None) -> TaskResult:
        from .providers import load_litellm

        litellm = load_litellm()
        config = self.config
        _check_model_name(litellm, config.model)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        notes: dict = {"model": config.model}
        used = litellm.token_counter(model=config.model, messages=messages)
        window = context_window(litellm, config.model)
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
        if problem := _credential_problem(litellm, config):
            raise problem
        self.turns += 1
        started = time.monotonic()
        response = await self.complete(litellm, messages)
        notes["duration_s"] = round(time.monotonic() - started, 3)
        content = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        if usage is not None:
            notes["completion_tokens"] = usage.completion_tokens
        result = TaskResult(content=content, notes=notes)
        if output_format and output_format.get("type") == "json":
            result.parsed_content, problem = parse_json_output(content, output_format.get("schema"))
            if problem:
                notes["json_error"] = problem
        return result

    async def complete(self, litellm, messages):
        config = self.config
        kwargs = {"api_base": config.api_base, "api_key": config.api_key, "timeout": config.timeout}
        if config.model.startswith("taskdsl/"):
            kwargs["metadata"] = {"replay_file": config.replay_file or os.environ.get("TASKDSL_REPLAY_FILE")}
        try:
            return await litellm.acompletion(model=config.model, messages=messages,
                                             **{k: v for k, v in kwargs.items() if v is not None})
        except litellm.AuthenticationError as e:
            missing = litellm.validate_environment(config.model).get("missing_keys") or []
            where = f" (check {', '.join(missing) or 'the API key'})"
            raise TaskError("VALIDATION_ERROR", f"model '{config.model}' rejected the credentials{where}: "
                            f"{_short(e)}", "authentication", {"model": config.model}) from None
        except litellm.ContextWindowExceededError as e:
            raise TaskError("RESOURCE_EXHAUSTION", f"model '{config.model}': {_short(e)}", "context",
                            {"resource": "context"}) from None
        except litellm.NotFoundError as e:
            raise TaskError("VALIDATION_ERROR", f"model '{config.model}' was not found: {_short(e)}",
                            "unknown_model", {"model": config.model}) from None
        except (litellm.APIError, litellm.APIConnectionError, litellm.BadRequestError, litellm.Timeout,
                litellm.RateLimitError, litellm.ServiceUnavailableError, litellm.InternalServerError) as e:
            raise TaskError("TASK_FAILURE", f"model '{config.model}' call failed: {_short(e)}", "model_error",
                            {"model": config.model}) from None


def _short(error: Exception) -> str:
    text = " ".join(str(getattr(error, "message", error)).split())
    return text[:300]
