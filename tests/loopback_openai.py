"""A loopback OpenAI-compatible server for the scale tests (retries, fallbacks, cache, batches):
it answers per model from a script of failures (status, headers) before its answers, can answer
slowly, and counts requests and the calls in flight at once. litellm is pointed at it through
OPENAI_API_BASE (serve_chat_completions), never mocked.

    fake = await loopback(failures={"flaky": [(429, {"Retry-After": "1"})] * 2})
    fake.count("flaky"), fake.max_in_flight, fake.times("flaky")
"""

import asyncio
import time

import pytest
from aiohttp import web

from taskdsl.evaluator.providers import user_prompt

SECRET = "sk-test-very-secret-4242"  # the key serve_chat_completions sets: it must never reach a trace


class LoopbackOpenAI:
    """`answer(model, user prompt)` is each answer's text (raising ValueError: a 400 with its
    message); `status` what every model without `always` or pending `failures` is answered (200:
    its answer), `error` the message of an error answer."""

    def __init__(self, failures=None, always=None, delay=0.0, answer=None, usage=(10, 2), status=200, error=None):
        self.failures = {model: list(items) for model, items in (failures or {}).items()}  # consumed in order
        self.always = dict(always or {})  # model → status it always answers
        self.status, self.error = status, error
        self.delay, self.answer = delay, answer or (lambda model, prompt: f"{model} says: {prompt}")
        self.usage = usage  # (prompt tokens, completion tokens) each answer reports; None: no usage
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0

    def count(self, model=None) -> int:
        return sum(1 for r in self.requests if model is None or r["model"] == model)

    def times(self, model=None) -> list[float]:
        return [r["time"] for r in self.requests if model is None or r["model"] == model]

    async def handle(self, request):
        body = await request.json()
        model = body["model"]
        self.requests.append({"model": model, "body": body, "time": time.monotonic(),
                              "auth": request.headers.get("Authorization")})
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            pending = self.failures.get(model)
            status, headers = pending.pop(0) if pending else (self.always.get(model, self.status), {})
            if status != 200:
                return self.refusal(status, headers)
            try:
                answer = self.answer(model, user_prompt(body["messages"]))
            except ValueError as nothing_to_say:  # e.g. a prompt a script has no answer for
                return self.refusal(400, {}, str(nothing_to_say))
            reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                  "finish_reason": "stop"}]}
            if self.usage is not None:  # None: a server that reports no usage
                reply["usage"] = {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1],
                                  "total_tokens": sum(self.usage)}
            return web.json_response(reply)
        finally:
            self.in_flight -= 1

    def refusal(self, status: int, headers: dict, message: str | None = None) -> web.Response:
        message = message or self.error or f"status {status} from the loopback server"
        return web.json_response({"error": {"message": message,
                                            "type": "server_error" if status >= 500 else "invalid_request_error"}},
                                 status=status, headers=headers)


async def serve_chat_completions(handle, monkeypatch) -> web.AppRunner:
    """Serve POST /v1/chat/completions with `handle` on 127.0.0.1 and point litellm's OpenAI
    provider at it (with a key that must never reach a trace)."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    monkeypatch.setenv("OPENAI_API_BASE", f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return runner


@pytest.fixture
async def loopback(monkeypatch, tmp_path):
    """Start a LoopbackOpenAI (kwargs as its constructor's); the answer cache lives under tmp_path."""
    monkeypatch.setenv("TASKDSL_CACHE_DIR", str(tmp_path / "cache-home"))

    async def start(**kwargs):
        fake = LoopbackOpenAI(**kwargs)
        started.append(await serve_chat_completions(fake.handle, monkeypatch))
        return fake

    started = []
    yield start
    for runner in started:
        await runner.cleanup()
