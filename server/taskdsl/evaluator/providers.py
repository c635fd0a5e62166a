"""The offline models `taskdsl/echo` and `taskdsl/replay`, registered as a litellm custom provider
so a run through them takes litellm's own path (acompletion, token counting, model info).

echo   answers with the user prompt it received (system prompt left out), for dry runs.
replay answers from a fixture file of recorded answers, for tests and demos. The file is
       JSON: {"answers": [{"contains": "text in the prompt", "answer": "…" | any JSON}, …]}
       (a bare list of entries also works). Entries are tried in order; the first whose
       `contains` (a string or a list of strings, all required) occurs in the user prompt
       answers; an entry without `contains` matches every prompt. A non-string answer is sent
       as its JSON text. The file comes from metadata["replay_file"] of the call (the runner
       passes the TASKDSL_REPLAY_FILE setting) or the TASKDSL_REPLAY_FILE environment variable.
"""

from __future__ import annotations

import json
import os

PROVIDER = "taskdsl"
MODELS = ("echo", "replay")
CONTEXT_WINDOW = 128_000  # what the offline models claim, so window checks behave as for a real model

_registered = False


def load_litellm():
    """Import litellm (slow: ~3 s) the one way the project does, with the offline providers registered."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import logging

    import litellm

    global _registered
    if not _registered:
        litellm.suppress_debug_info = True
        logging.getLogger("LiteLLM").setLevel(logging.ERROR)  # its warnings would clutter `taskdsl run`
        litellm.drop_params = True
        handler = _make_handler(litellm)
        if not any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
            litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": PROVIDER, "custom_handler": handler}]
        litellm.register_model({
            f"{PROVIDER}/{name}": {"max_input_tokens": CONTEXT_WINDOW, "max_tokens": CONTEXT_WINDOW,
                                   "max_output_tokens": 8192, "input_cost_per_token": 0.0,
                                   "output_cost_per_token": 0.0, "litellm_provider": PROVIDER, "mode": "chat"}
            for name in MODELS})
        _registered = True
    return litellm


def user_prompt(messages: list) -> str:
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


def read_fixture(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"replay fixture {path!r} does not exist") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"replay fixture {path!r} is not valid JSON: {e}") from None
    entries = data.get("answers") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "answer" in e for e in entries):
        raise ValueError(f"replay fixture {path!r} must be {{\"answers\": [{{\"contains\": …, \"answer\": …}}]}}")
    return entries


def replay_answer(entries: list[dict], prompt: str) -> str:
    for entry in entries:
        needles = entry.get("contains", [])
        needles = [needles] if isinstance(needles, str) else needles
        if all(n in prompt for n in needles):
            answer = entry["answer"]
            return answer if isinstance(answer, str) else json.dumps(answer)
    preview = " ".join(prompt.split())[:80]
    raise ValueError(f"no recorded answer matches the prompt {preview!r}")


def _make_handler(litellm):
    from litellm import CustomLLM
    from litellm.llms.custom_llm import CustomLLMError

    class OfflineModels(CustomLLM):
        def answer(self, model: str, messages: list, litellm_params: dict | None) -> str:
            prompt = user_prompt(messages)
            if model == "echo":
                return prompt
            if model == "replay":
                metadata = (litellm_params or {}).get("metadata") or {}
                path = metadata.get("replay_file") or os.environ.get("TASKDSL_REPLAY_FILE")
                if not path:
                    raise CustomLLMError(400, "taskdsl/replay needs a fixture: set TASKDSL_REPLAY_FILE")
                try:
                    return replay_answer(read_fixture(path), prompt)
                except ValueError as e:
                    raise CustomLLMError(400, f"taskdsl/replay: {e}") from None
            raise CustomLLMError(404, f"unknown offline model 'taskdsl/{model}': use taskdsl/echo or taskdsl/replay")

        def response(self, model, messages, litellm_params):
            text = self.answer(model, messages, litellm_params)
            prompt_tokens = litellm.token_counter(model=f"{PROVIDER}/{model}", messages=messages)
            completion_tokens = litellm.token_counter(model=f"{PROVIDER}/{model}", text=text)
            return litellm.ModelResponse(
                model=f"{PROVIDER}/{model}",
                choices=[{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                       "total_tokens": prompt_tokens + completion_tokens})

        def completion(self, model, messages, *args, litellm_params=None, **kwargs):
            return self.response(model, messages, litellm_params)

        async def acompletion(self, model, messages, *args, litellm_params=None, **kwargs):
            return self.response(model, messages, litellm_params)

    return OfflineModels()
