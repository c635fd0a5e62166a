"""How one model call is made for real: the answer cache, retries, fallbacks and per-model limits.

`provider_for` (providers.py) wraps every litellm model's provider in `Resilient`; the offline
models are never wrapped (nothing to retry, nothing worth caching). For one call:

1. the answer cache (taskdsl.evaluator.cache), when the run has one: a hit is the answer, nothing
   is sent and nothing is charged;
2. the model, under its limits (`max_concurrency`, `rpm`, `tpm` of `[models."NAME"]` in
   taskdsl.toml; shared by every run of a process, a batch's rows too), retried by tenacity when
   the failure is worth another try (a 429, a timeout, a connection error, a 5xx): up to
   `retries` times (`[run] retries`, `--retries`; 3 by default, 0 for none) with exponential
   backoff and full jitter, or after exactly the wait the server's `Retry-After` asks for
   (capped at MAX_RETRY_AFTER seconds). Other 4xx answers are final;
3. when the model still fails, each of its `fallbacks` in order, with the same retries.

The answer says which model answered, whether it came from the cache and every retry made
(`Completion.model`, `.cached`, `.retries`): the handler puts them in the step's notes and the
trace. Why tenacity and not litellm's `num_retries`: litellm retries inside one call and tells
no one, so the trace and the notes could not show a retry, and its wait ignores `Retry-After`
for most providers; the OpenAI SDK's own retries are turned off (max_retries=0) for the same
reason.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from taskdsl.evaluator.results import TaskError

DEFAULT_RETRIES = 3
BACKOFF_START = 0.5  # seconds before the first retry (doubled each time, with full jitter)
BACKOFF_MAX = 20.0
MAX_RETRY_AFTER = 60.0  # a server asking for a longer wait gets this much


@dataclass(frozen=True)
class ModelPolicy:
    """`[models."NAME"]` of taskdsl.toml."""

    fallbacks: tuple[str, ...] = ()
    max_concurrency: int | None = None
    rpm: int | None = None  # requests a minute
    tpm: int | None = None  # prompt tokens a minute


class Limits:
    """The per-model limits of a process: one semaphore and rate limiter per model, made on first
    use and shared by every call to that model (a batch's rows included)."""

    def __init__(self, policies: dict[str, ModelPolicy] | None = None):
        self.policies = dict(policies or {})
        self._made: dict[tuple[int, str], tuple[Any, Any, Any]] = {}
        self.in_flight: dict[str, int] = {}

    def policy(self, model: str) -> ModelPolicy:
        return self.policies.get(model) or ModelPolicy()

    def fallbacks(self, model: str) -> tuple[str, ...]:
        return self.policy(model).fallbacks

    def _parts(self, model: str):
        key = (id(asyncio.get_running_loop()), model)  # asyncio objects belong to one loop
        if key not in self._made:
            from aiolimiter import AsyncLimiter

            policy = self.policy(model)
            self._made[key] = (asyncio.Semaphore(policy.max_concurrency) if policy.max_concurrency else None,
                               AsyncLimiter(policy.rpm, 60) if policy.rpm else None,
                               AsyncLimiter(policy.tpm, 60) if policy.tpm else None)
        return self._made[key]

    async def acquire(self, model: str, tokens: int) -> Any:
        semaphore, rpm, tpm = self._parts(model)
        if tpm is not None:
            await tpm.acquire(min(max(tokens, 1), tpm.max_rate))
        if rpm is not None:
            await rpm.acquire()
        if semaphore is not None:
            await semaphore.acquire()
        self.in_flight[model] = self.in_flight.get(model, 0) + 1
        return semaphore

    def release(self, model: str, semaphore: Any) -> None:
        self.in_flight[model] -= 1
        if semaphore is not None:
            semaphore.release()


NO_LIMITS = Limits()


def chain(model: str, limits: Limits | None) -> list[str]:
    """The model and its fallbacks, in the order they are tried (each once; a fallback's own
    fallbacks are not followed)."""
    found = [model]
    for fallback in (limits.fallbacks(model) if limits else ()):
        if fallback not in found:
            found.append(fallback)
    return found


def retry_wait(error: TaskError, attempt: int) -> float:
    "Seconds before retry number `attempt` (1-based): the server's Retry-After, else backoff with jitter."
    after = error.details.get("retry_after")
    if isinstance(after, (int, float)) and after >= 0:
        return min(float(after), MAX_RETRY_AFTER)
    return random.uniform(0, min(BACKOFF_MAX, BACKOFF_START * 2 ** (attempt - 1)))


def retryable(error: BaseException) -> bool:
    return isinstance(error, TaskError) and bool(error.details.get("retryable"))


class Resilient:
    """A provider whose `complete` goes through the cache, the limits, retries and fallbacks."""

    def __init__(self, provider: Any, make: Callable[[str], Any], retries: int = DEFAULT_RETRIES,
                 limits: Limits | None = None, cache: Any = None, cache_key: Callable[[list[dict]], Any] | None = None,
                 sleep: Callable[[float], Any] = asyncio.sleep, agreed: frozenset[str] | None = None):
        self.provider, self.make = provider, make
        self.agreed = agreed  # the models the run's plan showed: a fallback outside them is never called
        self.model = provider.model
        self.retries, self.limits, self.cache, self.cache_key = max(0, int(retries)), limits or NO_LIMITS, cache, cache_key
        self.sleep = sleep

    def __getattr__(self, name: str):
        return getattr(self.provider, name)

    async def complete(self, messages: list[dict]):
        key = self.cache_key(messages) if self.cache is not None and self.cache_key else None
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        retries: list[dict] = []
        failures: list[TaskError] = []
        for model in chain(self.model, self.limits):
            provider = self.provider if model == self.model else self.make(model)
            if model != self.model and self.agreed is not None and model not in self.agreed:
                failures.append(TaskError("VALIDATION_ERROR", f"the fallback {model} is not in the run's plan: its "
                                          "consent did not cover it", "model_not_agreed", {"model": model}))
                continue
            if model != self.model:
                problem = provider.credential_problem()
                if problem is not None:
                    failures.append(problem)
                    continue
            try:
                answer = await self._with_retries(provider, model, messages, retries)
            except TaskError as error:
                failures.append(error)
                continue
            answer = replace(answer, model=model, retries=tuple(retries))
            if key is not None:
                self.cache.put(key, answer)
            return answer
        last = failures[-1]
        if len(failures) > 1:
            tried = ", ".join(f"{model} ({error.message})" for model, error in zip(chain(self.model, self.limits), failures))
            last = TaskError(last.type, f"model '{self.model}' and its fallbacks failed: {tried}", last.reason,
                             {**last.details, "tried": chain(self.model, self.limits)})
        last.details["retries"] = retries
        raise last

    async def _with_retries(self, provider: Any, model: str, messages: list[dict], retries: list[dict]):
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

        tokens = provider.count_messages(messages) if self.limits.policy(model).tpm else 0

        def wait(state) -> float:
            return retry_wait(state.outcome.exception(), state.attempt_number)

        def note(state) -> None:
            error = state.outcome.exception()
            retries.append({"model": model, "attempt": state.attempt_number, "status": error.details.get("status"),
                            "error": error.message, "wait_s": round(state.next_action.sleep, 3)})

        async for attempt in AsyncRetrying(stop=stop_after_attempt(self.retries + 1), wait=wait,
                                           retry=retry_if_exception(retryable), before_sleep=note,
                                           sleep=self.sleep, reraise=True):
            with attempt:
                held = await self.limits.acquire(model, tokens)
                try:
                    return await provider.complete(messages)
                finally:
                    self.limits.release(model, held)
        raise AssertionError("unreachable: tenacity reraises the last error")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds a `Retry-After` (or `retry-after-ms`) header asks for: a number or an HTTP date."""
    if not headers:
        return None
    get = headers.get
    millis = get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = get("retry-after") or get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def policies_from(settings: Any) -> dict[str, ModelPolicy]:
    """The [models."NAME"] tables of a project's settings."""
    found = {}
    for name, items in getattr(settings, "model_policies", ()) or ():
        values = dict(items)
        found[name] = ModelPolicy(tuple(values.get("fallbacks", ())), values.get("max_concurrency"),
                                  values.get("rpm"), values.get("tpm"))
    return found


def fallbacks_of(settings: Any) -> dict[str, tuple[str, ...]]:
    return {name: policy.fallbacks for name, policy in policies_from(settings).items() if policy.fallbacks}


def configure(config: Any, settings: Any, *, retries: int | None = None, cache: bool | None = None,
              default_cache: bool = False, limits: Limits | None = None) -> Any:
    """`config` (a HandlerConfig) with the project's and the command line's call settings: retries
    (--retries over [run] retries over 3), the per-model limits and fallbacks, and the answer
    cache (--cache/--no-cache over [run] cache over `default_cache`: on for `taskdsl test`)."""
    from taskdsl.evaluator import cache as answers

    configured = getattr(settings, "run_retries", None)
    use_cache = cache if cache is not None else getattr(settings, "run_cache", None)
    use_cache = default_cache if use_cache is None else use_cache
    return replace(config, retries=retries if retries is not None else configured if configured is not None
                   else DEFAULT_RETRIES, limits=limits or Limits(policies_from(settings)),
                   cache=answers.for_run(getattr(settings, "project_root", None), use_cache,
                                         (getattr(config, "api_key", None),)))
