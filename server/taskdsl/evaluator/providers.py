"""Model providers: the one interface an atomic task talks to, and its two implementations.

A ``Provider`` answers four questions about one model — is it usable (``check``), how many
tokens a prompt takes (``count_messages``), how large its input window is (``context_window``)
— and makes the call (``complete``: the answer, with the prompt's and the answer's tokens as the
model reports them). The handler enforces the limits and builds results, notes and traces from
those answers alone, so a run through the offline models and a run through litellm look the same.

Counting a prompt's tokens is a tokenizer pass (litellm's ``token_counter``), so it is not done
for every call: a prompt's tokens in the notes are the ones the model reports with its answer
(counted only when it reports none), and the context-window check first asks
``prompt_token_bound``, an upper bound found without tokenizing; only a prompt whose bound comes
near the window is counted for real.

- ``OfflineProvider``: the built-in models ``taskdsl/echo`` and ``taskdsl/replay``. They never
  import litellm (its import takes ~2 s).
  echo   answers with the user prompt it received (system prompt left out), for dry runs.
  replay answers from a fixture file of recorded answers, for tests and demos. The file is
         JSON: {"answers": [{"contains": "text in the prompt", "answer": "…" | any JSON}, …]}
         (a bare list of entries also works). Entries are tried in order; the first whose
         `contains` (a string or a list of strings, all required) occurs in the user prompt
         answers; an entry without `contains` matches every prompt. A non-string answer is sent
         as its JSON text. The file is the run's `replay_file` setting or the
         TASKDSL_REPLAY_FILE environment variable. A fixture may set "context_window": N
         (tokens) to have replay claim a smaller window (a demo of what overflows it).
  Their tokens are counted by ``count_tokens`` below (deterministic, documented in
  docs/evaluator.md), and they claim a window of CONTEXT_WINDOW tokens.
- ``LitellmProvider``: every other model, through litellm (its token counter, model map and
  ``acompletion``). litellm is imported once, in a background thread (``preload_litellm``), as
  early as a run may need it; a run that reaches a model before the import is done waits for it
  without blocking the event loop, and says so ("loading litellm…").
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import re
import sys
import threading
from typing import Callable, Protocol

from taskdsl.support import jsontext
from taskdsl.evaluator.results import TaskError
from taskdsl.support import reading

PROVIDER = "taskdsl"
MODELS = ("echo", "replay")
CONTEXT_WINDOW = 128_000  # what the offline models claim, so window checks behave as for a real model
LOADING_MESSAGE = "loading litellm…"


from taskdsl.evaluator.results import Completion  # noqa: E402,F401  (a provider's answer; the cache builds it too)


class Provider(Protocol):
    model: str

    def check(self) -> None:
        """Raise TaskError (VALIDATION_ERROR) when the model cannot be called at all."""

    def count_messages(self, messages: list[dict]) -> int: ...

    def context_window(self) -> int | None: ...

    def credential_problem(self) -> TaskError | None: ...

    async def complete(self, messages: list[dict]) -> Completion: ...


def is_offline(model: str | None) -> bool:
    from taskdsl.language.models import offline

    return offline(model)


# --------------------------------------------------------------------------- offline models

# One token per run of up to 4 letters or digits, and one per other non-space character; each
# message adds 4 (its role and delimiters) and a conversation 3 (the answer's priming), as
# OpenAI's chat format counts them. Close to a BPE tokenizer on English prose, never below it by
# much, and the same on every machine.
_TOKEN = re.compile(r"\w{1,4}|[^\w\s]")
MESSAGE_OVERHEAD, REPLY_OVERHEAD = 4, 3


def count_tokens(text: str) -> int:
    """Tokens of a text as the offline models count them."""
    return sum(1 for _ in _TOKEN.finditer(text))


def count_message_tokens(messages: list[dict]) -> int:
    return sum(count_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD for m in messages) + REPLY_OVERHEAD


MESSAGE_MARGIN = 16  # a message's delimiters and the special tokens a tokenizer adds (litellm's add 3 to 9)
NFKC_EXPANSION = 11  # the most UTF-8 bytes NFKC normalization makes of one byte (Unicode UAX #15)


def prompt_token_bound(messages: list[dict]) -> int | None:
    """An upper bound of the tokens of these messages by every counter a provider uses, found
    without tokenizing (None when a message holds anything but text): litellm's tokenizers are
    byte-level (tiktoken's BPE, HuggingFace's BPE for Claude 2, Llama, Cohere, DeepSeek), so a
    token is at least one UTF-8 byte of the text they encode, which NFKC normalization (the Claude
    2 tokenizer's) makes at most NFKC_EXPANSION times longer, and never longer for ASCII; the
    offline models' tokens are at least one character each. Every value of a message is encoded
    (its role too), plus MESSAGE_MARGIN a message and once for the reply."""
    bound = MESSAGE_MARGIN
    for message in messages:
        bound += MESSAGE_MARGIN
        for value in message.values():
            if not isinstance(value, str):
                return None
            bound += len(value) if value.isascii() else NFKC_EXPANSION * len(value.encode("utf-8", "surrogatepass"))
    return bound


def user_prompt(messages: list) -> str:
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


MAX_FIXTURE_BYTES = 50_000_000  # a replay fixture


ENTRY_KEYS = ("contains", "answer", "test")  # what replay reads of an answer entry


def read_fixture(path: str, text: str | None = None) -> list[dict]:
    """The answers of a replay fixture: from text when it was pinned (read into the plan), else read."""
    try:
        if text is None:
            text = reading.read_bytes(path, MAX_FIXTURE_BYTES).decode("utf-8")
        data = jsontext.loads(text)
    except FileNotFoundError:
        raise ValueError(f"replay fixture {path!r} does not exist") from None
    except reading.ReadRefused as e:
        raise ValueError(f"replay fixture {e}: give a regular JSON file") from None
    except OSError as e:
        raise ValueError(f"replay fixture {path!r} cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"replay fixture {path!r} is not UTF-8 text: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"replay fixture {path!r} is not valid JSON: {e}") from None
    entries = data.get("answers") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "answer" in e for e in entries):
        raise ValueError(f"replay fixture {path!r} must be {{\"answers\": [{{\"contains\": …, \"answer\": …}}]}}")
    for number, entry in enumerate(entries, 1):  # a misspelt `contains` would make the entry match every prompt
        unknown = sorted(k for k in entry if k not in ENTRY_KEYS)
        if unknown:
            from taskdsl.language.names import nearest

            guess, _ = nearest(unknown[0], list(ENTRY_KEYS))
            hint = f"; did you mean '{guess}'?" if guess else ""
            raise ValueError(f"replay fixture {path!r}: answer {number} has the key '{unknown[0]}', which replay "
                             f"does not read{hint} (an answer takes {', '.join(ENTRY_KEYS)})")
    return entries


def fixture_window(path: str) -> int:
    """The window a replay fixture claims ("context_window", a whole number of tokens), else CONTEXT_WINDOW;
    a fixture that cannot be read claims the default (its answers' reading says what is wrong)."""
    try:
        data = jsontext.loads(reading.read_bytes(path, MAX_FIXTURE_BYTES))
    except (OSError, ValueError):
        return CONTEXT_WINDOW
    window = data.get("context_window") if isinstance(data, dict) else None
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else CONTEXT_WINDOW


def replay_answer(entries: list[dict], prompt: str, scope: str | None = None) -> str:
    """The first entry whose `contains` all occur in the prompt. An entry naming a `test` answers
    only that test's calls (scope); without a scope (a plain run) every entry is tried."""
    for entry in entries:
        if scope is not None and entry.get("test", scope) != scope:
            continue
        needles = entry.get("contains", [])
        needles = [needles] if isinstance(needles, str) else needles
        if all(n in prompt for n in needles):
            answer = entry["answer"]
            return answer if isinstance(answer, str) else json.dumps(answer)
    preview = " ".join(prompt.split())[:80]
    raise ValueError(f"no recorded answer matches the prompt {preview!r}")


class OfflineProvider:
    def __init__(self, model: str, replay_file: str | None = None, replay_scope: str | None = None,
                 replay_text: str | None = None):
        self.model, self.replay_file, self.replay_scope = model, replay_file, replay_scope
        self.replay_text = replay_text  # the fixture as the agreed plan read it (never read again)

    @property
    def name(self) -> str:
        return self.model.removeprefix(f"{PROVIDER}/")

    def check(self) -> None:
        if self.name not in MODELS:
            raise TaskError("VALIDATION_ERROR", f"model '{self.model}' was not found: the offline models are "
                            f"{' and '.join(f'{PROVIDER}/{m}' for m in MODELS)}", "unknown_model", {"model": self.model})

    def count_messages(self, messages: list[dict]) -> int:
        return count_message_tokens(messages)

    def context_window(self) -> int | None:
        path = self.fixture_path() if self.name == "replay" else None
        return fixture_window(path) if path else CONTEXT_WINDOW

    def credential_problem(self) -> TaskError | None:
        return None

    def fixture_path(self) -> str | None:
        return self.replay_file or os.environ.get("TASKDSL_REPLAY_FILE")

    def answer(self, messages: list[dict]) -> str:
        prompt = user_prompt(messages)
        if self.name == "echo":
            return prompt
        path = self.fixture_path()
        if not path:
            raise ValueError("taskdsl/replay needs a fixture: set TASKDSL_REPLAY_FILE")
        return replay_answer(read_fixture(path, self.replay_text), prompt, self.replay_scope)

    async def complete(self, messages: list[dict]) -> Completion:
        try:
            text = self.answer(messages)
        except ValueError as e:
            message = str(e) if str(e).startswith(self.model) else f"{self.model}: {e}"
            raise TaskError("TASK_FAILURE", f"model '{self.model}' call failed: {message}", "model_error",
                            {"model": self.model}) from None
        return Completion(text, count_tokens(text), prompt_tokens=count_message_tokens(messages))


# --------------------------------------------------------------------------- litellm

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS", re.I)
_lock = threading.Lock()
_import_thread: threading.Thread | None = None
_import_error: BaseException | None = None
_configured = False
_module = None  # litellm, once imported and configured
_wait_reported = False  # "loading litellm…" said (once, however many runs wait)


def load_litellm():
    """Import litellm (slow: ~2 s) the one way the project does: local model map, quiet logs."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import logging

    import litellm

    global _configured, _module
    with _lock:
        if not _configured:
            litellm.suppress_debug_info = True
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)  # its warnings would clutter `taskdsl run`
            litellm.drop_params = True
            _module, _configured = litellm, True
            # litellm's ~400k import-time objects live as long as the process: keep the cyclic GC
            # from walking them on every full collection (at 32 calls at a time, a batch's
            # garbage set one off every few hundred rows, each ~0.3 s of CPU). They hold no
            # garbage (a collection right after the import frees nothing); reference counting
            # still frees whatever is dropped later.
            gc.freeze()
    return litellm


def _import_in_background() -> None:
    global _import_error
    try:
        load_litellm()
    except BaseException as error:  # reported by the run that needs it
        _import_error = error


def preload_litellm() -> None:
    """Start importing litellm in a background thread (once); returns at once."""
    global _import_thread
    with _lock:
        if _import_thread is None and not _configured:
            _import_thread = threading.Thread(target=_import_in_background, name="taskdsl-litellm-import", daemon=True)
            _import_thread.start()


def wait_for_litellm() -> None:
    """Block until a started background import is over (for threads; a run awaits litellm_module)."""
    thread = _import_thread
    if thread is not None:
        thread.join()


def litellm_loaded() -> bool:
    return _configured


def _report_wait(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


#: who hears that a run waits for litellm's import (the CLI: stderr; the server replaces it)
wait_reporter: Callable[[str], None] | None = _report_wait


async def litellm_module():
    """litellm, once imported; the event loop keeps running while the import finishes."""
    global _wait_reported
    if _configured:
        return _module  # every call of a batch's rows asks: no import machinery, no lock
    preload_litellm()
    if wait_reporter is not None and not _wait_reported:  # once, not once per row waiting
        _wait_reported = True
        wait_reporter(LOADING_MESSAGE)
    thread = _import_thread
    if thread is not None:
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
    if _import_error is not None:
        raise TaskError("VALIDATION_ERROR", f"litellm could not be imported ({_import_error}): reinstall taskdsl, whose "
                        "dependencies include it, or run with an offline model (taskdsl/echo, taskdsl/replay)",
                        "litellm_unavailable")
    return load_litellm()


_known_models: set[str] = set()  # names litellm routes (check)
_unmapped: dict[str, int] = {}  # model → the size of litellm's model map when it had no window for it


class LitellmProvider:
    def __init__(self, litellm, model: str, api_base: str | None = None, api_key: str | None = None,
                 timeout: float = 600.0):
        self.litellm, self.model = litellm, model
        self.api_base, self.api_key, self.timeout = api_base, api_key, timeout

    def check(self) -> None:
        if self.model in _known_models:  # litellm's routing of a name does not change in a process
            return
        try:
            self.litellm.get_llm_provider(self.model)
            _known_models.add(self.model)
        except Exception:
            from taskdsl.language.models import suggest

            near = suggest(self.model)
            meant = f" (did you mean {' or '.join(repr(n) for n in near[:2])}?)" if near else ""
            raise TaskError("VALIDATION_ERROR", f"model '{self.model}' is not known to litellm{meant}: use a name from "
                            "its model list or a provider prefix such as openai/<name> or ollama/<name>",
                            "unknown_model", {"model": self.model, "suggestions": near}) from None

    def count_messages(self, messages: list[dict]) -> int:
        return self.litellm.token_counter(model=self.model, messages=messages)

    def context_window(self) -> int | None:
        known = len(self.litellm.model_cost)  # grows when a model is registered (litellm.register_model)
        if _unmapped.get(self.model) == known:  # asked before (an unmapped name costs a raised exception)
            return None
        try:
            info = self.litellm.get_model_info(self.model)
        except Exception:  # unmapped models (local servers, new names): no window to enforce
            _unmapped[self.model] = known
            return None
        return info.get("max_input_tokens") or info.get("max_tokens")

    def credential_problem(self) -> TaskError | None:
        if self.api_key:
            return None
        missing = [k for k in self.litellm.validate_environment(self.model).get("missing_keys", [])
                   if _SECRET_NAME.search(k)]
        if missing:
            return TaskError("VALIDATION_ERROR", f"model '{self.model}' needs credentials: set {' or '.join(missing)} "
                             "in the environment (or pick an offline model such as taskdsl/echo)",
                             "missing_credentials", {"model": self.model, "missing": missing})
        return None

    async def complete(self, messages: list[dict]) -> Completion:
        litellm, model = self.litellm, self.model
        kwargs = {"api_base": self.api_base, "api_key": self.api_key, "timeout": self.timeout}
        try:  # max_retries=0: retries are taskdsl's own (calls.py), each one seen in the notes and the trace
            response = await litellm.acompletion(model=model, messages=messages, max_retries=0,
                                                 **{k: v for k, v in kwargs.items() if v is not None})
        except litellm.AuthenticationError as e:
            missing = litellm.validate_environment(model).get("missing_keys") or []
            where = f" (check {', '.join(missing) or 'the API key'})"
            raise TaskError("VALIDATION_ERROR", f"model '{model}' rejected the credentials{where}: "
                            f"{_short(e)}", "authentication", {"model": model}) from None
        except litellm.ContextWindowExceededError as e:
            raise TaskError("RESOURCE_EXHAUSTION", f"model '{model}': {_short(e)}", "context",
                            {"resource": "context"}) from None
        except litellm.NotFoundError as e:
            raise TaskError("VALIDATION_ERROR", f"model '{model}' was not found: {_short(e)}",
                            "unknown_model", {"model": model}) from None
        except (litellm.APIError, litellm.APIConnectionError, litellm.BadRequestError, litellm.Timeout,
                litellm.RateLimitError, litellm.ServiceUnavailableError, litellm.InternalServerError) as e:
            raise TaskError("TASK_FAILURE", f"model '{model}' call failed: {_short(e)}", "model_error",
                            {"model": model, **failure_kind(litellm, e)}) from None
        usage = getattr(response, "usage", None)
        return Completion(response.choices[0].message.content or "", reported(usage, "completion_tokens"),
                          prompt_tokens=reported(usage, "prompt_tokens") or None)  # a prompt is never 0 tokens


def reported(usage, name: str) -> int | None:
    "A count the model reported in its answer's usage (None when it reported none)."
    value = getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def failure_kind(litellm, error: Exception) -> dict:
    """status, whether another try may succeed (429, timeout, connection, 5xx) and the wait the
    server asked for (Retry-After) of a failed call."""
    from taskdsl.evaluator.calls import parse_retry_after

    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else None
    transient = (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError, litellm.ServiceUnavailableError,
                 litellm.InternalServerError)
    retryable = isinstance(error, transient) or (status is not None and (status == 429 or status >= 500))
    if isinstance(error, litellm.BadRequestError) or (status is not None and 400 <= status < 500 and status != 429
                                                      and status != 408):
        retryable = False
    headers = getattr(error, "litellm_response_headers", None) or getattr(getattr(error, "response", None), "headers", None)
    kind = {"status": status, "retryable": retryable}
    after = parse_retry_after(headers) if retryable else None
    if after is not None:
        kind["retry_after"] = after
    return kind


def _short(error: Exception) -> str:
    text = " ".join(str(getattr(error, "message", error)).split())
    return text[:300]


async def provider_for(config, output_format: dict | None = None) -> Provider:
    """The provider of config.model (a HandlerConfig): offline models never import litellm."""
    if is_offline(config.model):
        return OfflineProvider(config.model, config.replay_file, config.replay_scope, config.replay_text)
    if config.replay_real_models and config.replay_file:
        return OfflineProvider(f"{PROVIDER}/replay", config.replay_file, config.replay_scope, config.replay_text)
    litellm = await litellm_module()

    def make(model: str) -> Provider:
        if is_offline(model):
            return OfflineProvider(model, config.replay_file, config.replay_scope, config.replay_text)
        made = LitellmProvider(litellm, model, config.api_base, config.api_key, config.timeout)
        return Recording(made, config.recorder) if config.recorder else made

    from taskdsl.evaluator.calls import Resilient

    cache = config.cache
    key = None
    if cache is not None:
        def key(messages: list[dict]) -> str:
            return cache.key(config.model, messages, {"api_base": config.api_base}, output_format)
    return Resilient(make(config.model), make, retries=config.retries, limits=config.limits, cache=cache, cache_key=key,
                     agreed=config.agreed_models)


class Recording:
    """A real model whose every answer is also told to `record(prompt, answer)` (`taskdsl test
    --record` writes them as a replay fixture). Only the user prompt and the answer's text are
    told: never the request's key, headers or base URL."""

    def __init__(self, provider: Provider, record: Callable[[str, str], None]):
        self.provider, self.record = provider, record
        self.model = provider.model

    def __getattr__(self, name: str):
        return getattr(self.provider, name)

    async def complete(self, messages: list[dict]) -> Completion:
        answer = await self.provider.complete(messages)
        self.record(user_prompt(messages), answer.content)
        return answer
