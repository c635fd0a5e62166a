"""The evaluator: compile a template to an AST and run it (SPEC §7). litellm is imported lazily."""

from .results import TaskError, TaskResult  # noqa: F401
