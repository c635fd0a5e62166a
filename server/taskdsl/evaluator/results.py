"""TaskResult and the one TaskError type (SPEC §7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

COMPLETE, CONTINUATION, FAILED = "COMPLETE", "CONTINUATION", "FAILED"
ERROR_TYPES = ("TASK_FAILURE", "RESOURCE_EXHAUSTION", "INVALID_OUTPUT", "VALIDATION_ERROR", "XML_PARSE_ERROR",
               "NO_PROGRESS")


@dataclass
class TaskResult:
    content: str = ""
    status: str = COMPLETE
    notes: dict[str, Any] = field(default_factory=dict)
    parsed_content: Any = None

    @property
    def value(self) -> Any:
        "What a variable bound to this result holds: the parsed JSON when there is some, else the text."
        return self.parsed_content if self.parsed_content is not None else self.content

    def to_json(self) -> dict:
        return {"content": self.content, "status": self.status, "notes": self.notes,
                "parsed_content": self.parsed_content}


#: notes a step's output parse sets when the output does not parse: the step completed, degraded
OUTPUT_PROBLEM_NOTES = ("json_error", "xml_error")  # an answer kept as text because it did not parse


def output_problem(notes: dict | None) -> str | None:
    "Why a completed step's output is degraded (it did not parse as its output_format says), or None."
    return next((str(notes[k]) for k in OUTPUT_PROBLEM_NOTES if (notes or {}).get(k)), None)


class TaskError(Exception):
    """Every failure of a run: type (ERROR_TYPES), reason, message, details."""

    def __init__(self, type: str, message: str, reason: str | None = None, details: dict | None = None):
        assert type in ERROR_TYPES, type
        super().__init__(message)
        self.type, self.reason, self.message, self.details = type, reason, message, details or {}

    def __str__(self) -> str:
        return f"{self.type}{f' ({self.reason})' if self.reason else ''}: {self.message}"

    def to_json(self) -> dict:
        return {"type": self.type, "reason": self.reason, "message": self.message, "details": self.details}


def failure(message: str, reason: str | None = None, **details) -> TaskError:
    return TaskError("TASK_FAILURE", message, reason, details)


@dataclass(frozen=True)
class Completion:
    """A model's answer as the handler needs it."""

    content: str
    completion_tokens: int | None
    model: str | None = None  # the model that answered (a fallback's name when one did: calls.py)
    cached: bool = False  # from the answer cache: nothing was sent
    retries: tuple = ()  # every retry made before this answer (calls.py)
    prompt_tokens: int | None = None  # the prompt's tokens as the provider reported them with the answer
