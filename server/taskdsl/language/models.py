"""Model identifiers, checked against litellm's bundled model map without importing litellm.

litellm ships ``model_prices_and_context_window_backup.json`` (the model map) and
``provider_endpoints_support_backup.json`` (its providers) inside its package directory. They are
found with ``importlib.util.find_spec`` (which does not import the package) and read once, on
first use: the check costs one JSON load, never litellm's ~3 s import.

A name is known when:
- it is a key of the map (``gpt-4o-mini``), or ``provider/key`` / ``key`` with that provider
  (``anthropic/claude-sonnet-4-5``, ``openai/gpt-4o``);
- its prefix is a provider that serves any model name (self-hosted, gateways and deployments:
  ``ollama/…``, ``openai/…`` for OpenAI-compatible servers, ``hosted_vllm/…``, ``azure/…`` …);
- it is one of taskdsl's own offline models (``taskdsl/echo``, ``taskdsl/replay``).
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
from functools import lru_cache
from pathlib import Path


#: under taskdsl/ only these exist: the offline models (SPEC §7)
BUILTIN_MODELS = ("taskdsl/echo", "taskdsl/replay")


def offline(model: str | None) -> bool:
    """One of taskdsl's own models: nothing leaves the machine. Any other model sends its prompt to a
    provider, whatever litellm says it costs (a free remote model too)."""
    return bool(model) and model.startswith("taskdsl/")


def builtin_model_problem(name: str) -> str | None:
    """Under taskdsl/ only the built-in offline models exist (TD601, an error: the run refuses)."""
    from difflib import get_close_matches

    if not name.startswith("taskdsl/") or name in BUILTIN_MODELS:
        return None
    guess = get_close_matches(name, BUILTIN_MODELS, n=1, cutoff=0.6)
    hint = f": did you mean '{guess[0]}'?" if guess else f": taskdsl's own models are {', '.join(BUILTIN_MODELS)}"
    return f"model '{name}' is not one of taskdsl's offline models{hint}"


#: providers whose model part is free: litellm passes any name through to the server or deployment
OPEN_PROVIDERS = frozenset({
    "ollama", "ollama_chat", "openai", "openai_like", "custom_openai", "custom",
    "hosted_vllm", "vllm", "lm_studio", "llamafile", "litellm_proxy", "xinference", "oobabooga",
    "triton", "docker_model_runner", "lemonade", "sagemaker", "sagemaker_chat", "azure",
    "azure_ai", "huggingface", "openrouter", "text-completion-openai", "petals",
})


def _litellm_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=1)
def model_map() -> dict[str, dict]:
    """litellm's bundled model map (empty when litellm is not installed)."""
    override = os.environ.get("TASKDSL_MODEL_MAP")  # a file to use instead (tests, pinned maps)
    path = Path(override) if override else (_litellm_dir() or Path("/nonexistent")) / "model_prices_and_context_window_backup.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and k != "sample_spec"}


@lru_cache(maxsize=1)
def providers() -> frozenset[str]:
    """Provider names litellm knows (its endpoint table, plus those the model map names)."""
    names = set(OPEN_PROVIDERS)
    directory = _litellm_dir()
    if directory is not None:
        try:
            data = json.loads((directory / "provider_endpoints_support_backup.json").read_text(encoding="utf-8"))
            names.update(k for k in data.get("providers", {}) if isinstance(k, str))
        except (OSError, ValueError, AttributeError):
            pass
    for entry in model_map().values():
        provider = entry.get("litellm_provider")
        if isinstance(provider, str):
            names.add(provider)
    return frozenset(names)


@lru_cache(maxsize=1)
def known_models() -> frozenset[str]:
    """Every model key of the map, plus taskdsl's built-in models."""
    return frozenset(model_map()) | frozenset(BUILTIN_MODELS)


def _entry(name: str) -> dict | None:
    models = model_map()
    if name in models:
        return models[name]
    provider, _, rest = name.partition("/")
    if rest and rest in models:
        entry_provider = str(models[rest].get("litellm_provider", ""))
        if entry_provider == provider or entry_provider.startswith(provider + "-") or entry_provider.startswith(provider + "_"):
            return models[rest]
    return None


def is_known_model(name: str) -> bool:
    name = name.strip()
    if not name:
        return False
    if name in BUILTIN_MODELS or _entry(name) is not None:
        return True
    provider, slash, rest = name.partition("/")
    return bool(slash and rest and provider in OPEN_PROVIDERS)


def suggest(name: str, limit: int = 3) -> list[str]:
    """Known names close to ``name`` (same provider prefix first), best first."""
    return list(_suggested(name.strip(), limit))


@lru_cache(maxsize=1024)
def _suggested(name: str, limit: int) -> tuple[str, ...]:
    provider, slash, rest = name.partition("/")
    candidates = known_models()
    matches = difflib.get_close_matches(name, candidates, n=limit, cutoff=0.75)
    if slash and rest:
        # anthropic/claude-3-sonet → anthropic/<close name of that provider>
        same = [k for k, v in model_map().items() if str(v.get("litellm_provider", "")) == provider]
        close = difflib.get_close_matches(rest, same, n=limit, cutoff=0.75)
        prefixed = [f"{provider}/{c}" if not c.startswith(provider + "/") else c for c in close]
        matches = prefixed + [m for m in matches if m not in prefixed]
    return tuple(matches[:limit])


def context_window(name: str) -> int | None:
    """The model's input window in tokens, when litellm's map knows it."""
    entry = _entry(name.strip())
    if entry is None:
        return None
    for key in ("max_input_tokens", "max_tokens"):
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def prices(name: str) -> tuple[float, float] | None:
    """(dollars per input token, per output token) from litellm's map; (0, 0) for taskdsl's own
    offline models; None when the map does not price the model."""
    name = name.strip()
    if name in BUILTIN_MODELS:
        return 0.0, 0.0
    entry = _entry(name)
    if entry is None:
        return None
    cost_in, cost_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(cost_in, (int, float)) or not isinstance(cost_out, (int, float)):
        return None
    return float(cost_in), float(cost_out)


def price_of(model: str, prompt_tokens: int, answer_tokens: int) -> float:
    """Dollars of a call by prices(); a model the map does not price costs nothing here."""
    cost_in, cost_out = prices(model) or (0.0, 0.0)
    return prompt_tokens * cost_in + answer_tokens * cost_out


def costs_money(model: str) -> bool:
    """A model litellm prices above zero, or does not price at all (it may cost money)."""
    found = prices(model)
    return found is None or any(found)
