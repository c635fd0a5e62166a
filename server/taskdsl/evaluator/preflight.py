"""Preflight: before any step of a run, every model its plan calls must be usable.

Each model the plan may call (the one set `planned_models` gives the consent and the cost
estimate) resolves (an offline model exists, litellm knows a real one), its credentials are in
the environment (litellm's `validate_environment`), and a replay model has its fixture. What is
missing is refused at once, naming what to do, so no script or earlier model call runs first.
litellm is imported only when the plan holds a model that is not offline.
"""

from __future__ import annotations

import os
from dataclasses import replace

from taskdsl.evaluator.results import TaskError

#: the reasons a preflight refusal carries (the command line exits 2 on them: nothing ran)
REASONS = ("unknown_model", "missing_credentials", "replay_fixture")
OFFLINE_HINT = "--model taskdsl/replay (answers from a fixture) or --model taskdsl/echo"


async def preflight(models, config, *, names_only: bool = False) -> None:
    """Refuse (TaskError, VALIDATION_ERROR) when a model in `models` cannot be called with
    `config` (a HandlerConfig): unknown, without credentials, or a replay without a fixture.
    `names_only` (a plan, `run --plan`): only that each name is a model (an offline one, or one
    litellm knows: asked only of a name the price map does not hold), as the run will ask first;
    credentials and fixtures are the environment's, not the plan's."""
    from taskdsl.evaluator import providers
    from taskdsl.language.models import offline, prices

    for model in sorted(models):
        if names_only and not offline(model) and prices(model) is not None:
            continue  # a model litellm prices is one it knows: no need to import it for a plan
        provider = await providers.provider_for(replace(config, model=model, recorder=None))
        provider.check()
        if names_only:
            continue
        if isinstance(provider, providers.OfflineProvider):
            if provider.name == "replay":
                fixture_problem(provider)
            continue
        problem = provider.credential_problem()
        if problem is not None:
            missing = problem.details.get("missing", [])
            exports = " and ".join(f"export {name}=…" for name in missing)
            raise TaskError("VALIDATION_ERROR", f"model '{model}' needs credentials and none are set: {exports} "
                            f"(or run offline with {OFFLINE_HINT})", "missing_credentials",
                            {"model": model, "missing": missing})


def fixture_problem(provider) -> None:
    "A replay model's fixture must exist and read as one."
    from taskdsl.evaluator.providers import read_fixture

    path = provider.fixture_path()
    if not path:
        raise TaskError("VALIDATION_ERROR", f"model '{provider.model}' answers from a replay fixture and none is "
                        "given: export TASKDSL_REPLAY_FILE=answers.json (or record one with taskdsl test --record)",
                        "replay_fixture", {"model": provider.model})
    try:
        read_fixture(path, getattr(provider, "replay_text", None))  # the pinned copy when the plan holds one
    except ValueError as error:
        where = path if os.path.isabs(path) else os.path.abspath(path)
        todo = ("fix it (or record it again with taskdsl test --record)" if os.path.exists(where) else
                "point TASKDSL_REPLAY_FILE at a fixture (or record one with taskdsl test --record)")
        raise TaskError("VALIDATION_ERROR", f"model '{provider.model}': {error} ({where}); {todo}",
                        "replay_fixture", {"model": provider.model, "fixture": path}) from None
