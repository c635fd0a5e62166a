"""Rank 6, evaluator: what a run does — the plan (`plan.prepare`), the compiler from the model,
`Env` and one `eval` per form (lis.py style), providers, consent, cost, safe script execution,
memory, traces (SPEC §7). litellm is imported lazily. Re-planning is handed in as a hook
(`runner.execute(recover=…)`), never imported.
May import: support, language, project, meaning, library, rules."""

from taskdsl.evaluator.results import TaskError, TaskResult  # noqa: F401
