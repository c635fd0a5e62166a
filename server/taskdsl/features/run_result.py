"""What a run did, as the editor shows it: step records from the evaluator's events, the
Markdown result document, log lines and structured errors. Pure functions
and plain data, tested without a server; `features/run.py` wires them to the LSP.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from taskdsl.evaluator.results import output_problem

STATUS_COMPLETE, STATUS_FAILED, STATUS_CANCELLED = "COMPLETE", "FAILED", "CANCELLED"
STATUS_DEGRADED = "DEGRADED"  # completed, but its output did not parse as its output_format says
MARKS = {STATUS_COMPLETE: "✓", STATUS_FAILED: "✗", STATUS_DEGRADED: "⚠"}  # "•": running or cancelled
PREVIEW = 200  # characters of a step's output in a log line


# ---------------------------------------------------------------------------------------------
# what happened: steps recorded from the evaluator's events, and the result document


@dataclass
class StepRecord:
    path: str
    kind: str
    name: str
    status: str = "RUNNING"  # RUNNING | COMPLETE | DEGRADED | FAILED | CANCELLED
    content: str = ""
    duration_s: float | None = None
    tokens: dict[str, int] | None = None
    error: dict | None = None
    started: float = 0.0
    cached: bool = False  # a model call answered from the answer cache (evaluator/calls.py)
    fallback: tuple[str, str] | None = None  # (the model asked, the fallback that answered)
    notes: tuple[str, ...] = ()  # what the run said of the step as it went (a cond case that held by a likely mistake)

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "name": self.name, "status": self.status,
                "content": self.content, "duration_s": self.duration_s, "tokens": self.tokens,
                "error": self.error, **self.call_facts()}

    def call_facts(self) -> dict:
        """How its model call answered, when it was not the plain way: cached, or by a fallback; and
        what the run noted of it."""
        return {**({"cached": True} if self.cached else {}),
                **({"fallback": {"asked": self.fallback[0], "answered": self.fallback[1]}} if self.fallback else {}),
                **({"notes": list(self.notes)} if self.notes else {})}

    def call_words(self) -> list[str]:
        words = ["cached"] if self.cached else []
        if self.fallback:
            words.append(f"answered by fallback {self.fallback[1]} (for {self.fallback[0]})")
        return words


def _tokens(notes: dict | None) -> dict[str, int] | None:
    notes = notes or {}
    prompt, completion = notes.get("prompt_tokens"), notes.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return {"prompt": prompt if isinstance(prompt, int) else 0,
            "completion": completion if isinstance(completion, int) else 0}


class StepRecorder:
    """Turns the evaluator's begin/end/error events into StepRecords (in begin order)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.steps: list[StepRecord] = []
        self._open: dict[str, list[StepRecord]] = {}

    def on_event(self, event: dict) -> StepRecord | None:
        kind = event.get("event")
        path = str(event.get("path") or "")
        if kind == "begin":
            step = StepRecord(path, str(event.get("kind") or ""), str(event.get("name") or ""), started=self.clock())
            self.steps.append(step)
            self._open.setdefault(path, []).append(step)
            return step
        if kind == "note":
            stack = self._open.get(path)
            if stack:
                stack[-1].notes += (str(event.get("message") or ""),)
            return None
        if kind in ("end", "error"):
            stack = self._open.get(path)
            if not stack:
                return None
            step = stack.pop()
            step.duration_s = round(self.clock() - step.started, 3)
            if kind == "end":
                result = event.get("result")
                notes = getattr(result, "notes", None)
                step.status = STATUS_COMPLETE
                step.content = getattr(result, "content", "") if result is not None else ""
                # only a model call's own tokens: a sequential's result carries its last step's notes
                step.tokens = _tokens(notes) if step.kind == "atomic" else None
                if step.kind == "atomic" and notes:
                    step.cached = bool(notes.get("cached"))
                    if notes.get("fallback_from"):
                        step.fallback = (str(notes["fallback_from"]), str(notes.get("model")))
                if problem := output_problem(notes):
                    step.status = STATUS_DEGRADED
                    step.error = {"type": "INVALID_OUTPUT", "reason": "output_format", "message": problem,
                                  "details": {}}
            else:
                step.status = "FAILED"
                step.error = jsonable(event.get("error"))
            return step
        return None

    def cancel_open(self) -> None:
        for step in self.steps:
            if step.status == "RUNNING":
                step.status = STATUS_CANCELLED
                step.duration_s = round(self.clock() - step.started, 3)

    def summary(self) -> list[dict]:
        "Every step in begin order, as `taskdsl run --json` prints them."
        return [{"path": s.path, "type": s.kind, "status": s.status, "duration_s": s.duration_s,
                 **({"tokens": s.tokens} if s.tokens else {}), **s.call_facts(),
                 **({"problem": s.error.get("message")} if s.error else {})} for s in self.steps]

    def totals(self) -> dict:
        "The whole run's totals: model tokens summed over every model call, the run's wall time, the step count."
        tokens = self.total_tokens() or {"prompt": 0, "completion": 0}
        roots = [s.duration_s for s in self.steps if "/" not in s.path and s.duration_s is not None]
        return {"prompt_tokens": tokens["prompt"], "completion_tokens": tokens["completion"],
                "duration_s": round(sum(roots), 3), "steps": len(self.steps)}

    def total_tokens(self) -> dict[str, int] | None:
        leaves = [s.tokens for s in self.steps if s.tokens]
        if not leaves:
            return None
        return {"prompt": sum(t["prompt"] for t in leaves), "completion": sum(t["completion"] for t in leaves)}


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


@dataclass
class RunReport:
    """Everything the result document and the command's answer say about one run."""

    file: str
    label: str
    task: str | None
    model: str
    status: str
    content: str = ""
    parsed_content: Any = None
    steps: list[StepRecord] = field(default_factory=list)
    error: dict | None = None
    duration_s: float = 0.0
    tokens: dict[str, int] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    result_uri: str | None = None
    trace_uri: str | None = None

    def to_json(self) -> dict:
        return jsonable({
            "status": self.status, "content": self.content, "parsed_content": self.parsed_content,
            "steps": [s.to_json() for s in self.steps], "error": self.error, "duration_s": self.duration_s,
            "tokens": self.tokens, "task": self.task, "label": self.label, "model": self.model,
            "result_uri": self.result_uri, "trace_uri": self.trace_uri,
        })


def fence(text: str, info: str = "text") -> str:
    """A fenced code block that no backtick run inside ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def _tokens_text(tokens: dict[str, int] | None) -> str | None:
    if not tokens:
        return None
    return f"{tokens['prompt']} prompt + {tokens['completion']} completion"


def render_result(report: RunReport) -> str:
    """The Markdown result document of a run."""
    lines = [f"# {report.label}: {report.status}", ""]
    lines.append(f"- File: `{report.file}`")
    if report.task:
        lines.append(f"- Task: `{report.task}`")
    lines.append(f"- Model: `{report.model}`")
    lines.append(f"- Duration: {_seconds(report.duration_s)}")
    if tokens := _tokens_text(report.tokens):
        lines.append(f"- Tokens: {tokens}")
    if report.inputs:
        lines.append("- Inputs: " + ", ".join(f"`{k}`" for k in report.inputs))
    if report.trace_uri:
        lines.append(f"- Trace: {report.trace_uri}")
    if report.error:
        lines += ["", "## Error", "", _error_text(report.error)]
    lines += ["", "## Output", ""]
    lines.append(fence(report.content) if report.content else "_(empty)_")
    if report.steps:
        lines += ["", "## Steps"]
        for number, step in enumerate(report.steps, 1):
            facts = [step.kind or "step", step.status, _seconds(step.duration_s)]
            if tokens := _tokens_text(step.tokens):
                facts.append(f"tokens {tokens}")
            facts += step.call_words()
            lines += ["", f"### {number}. `{step.path}`", "", " · ".join(facts), ""]
            if step.error:
                lines.append(_error_text(step.error))
            if step.status in (STATUS_COMPLETE, STATUS_DEGRADED):
                lines += [""] * bool(step.error) + [fence(step.content) if step.content else "_(empty output)_"]
            elif not step.error:
                lines.append(f"_({step.status.lower()})_")
    return "\n".join(lines) + "\n"


def _error_text(error: dict) -> str:
    head = f"**{error.get('type') or 'ERROR'}**" + (f" ({error['reason']})" if error.get("reason") else "")
    text = f"{head}: {error.get('message') or ''}"
    details = error.get("details") or {}
    if isinstance(details, dict) and details.get("step_path"):
        text += f"\n\nFailed step: `{details['step_path']}`"
    return text


def step_log_line(step: StepRecord) -> str:
    mark = MARKS.get(step.status, "•")
    head = f"{mark} {step.path} ({step.kind}, {_seconds(step.duration_s)}"
    if tokens := _tokens_text(step.tokens):
        head += f", {tokens} tokens"
    head += "".join(f", {words}" for words in step.call_words()) + ")"
    if step.error:
        return f"{head}: {step.error.get('message') or step.error}"
    preview = " ".join(step.content.split())
    if len(preview) > PREVIEW:
        preview = preview[:PREVIEW] + "…"
    return f"{head}: {preview}" if preview else head


def error_json(error: BaseException) -> dict:
    """The structured error of any failure (TaskError, TemplateErrors, CompileError, other)."""
    to_json = getattr(error, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    diagnostics = getattr(error, "diagnostics", None)
    if diagnostics is not None:  # runner.TemplateErrors
        return {"type": "VALIDATION_ERROR", "reason": "template_errors",
                "message": template_errors_message(error), "details": {"count": len(diagnostics)}}
    code = getattr(error, "code", None)
    if code:  # compiler.CompileError
        return {"type": "VALIDATION_ERROR", "reason": code, "message": f"{code}: {getattr(error, 'message', error)}",
                "details": {}}
    return {"type": "TASK_FAILURE", "reason": "internal_error",
            "message": f"{type(error).__name__}: {error}", "details": {}}


def template_errors_message(error: Any, text: str | None = None) -> str:
    """One line for runner.TemplateErrors: the count and the first errors with line:column."""
    from taskdsl.language.document import parse

    diagnostics = list(getattr(error, "diagnostics", []))
    files = getattr(error, "files", None)
    if files and len(files) > 1:  # errors in files the entry reaches: each with its path
        import os

        shown = error.located(lambda path: os.path.basename(path))
        more = f" (and {len(shown) - 3} more)" if len(shown) > 3 else ""
        return (f"the template or a file it reaches has {len(diagnostics)} error(s); fix them before running: "
                + "; ".join(shown[:3]) + more)
    text = text if text is not None else getattr(error, "text", None)
    document = parse(text) if text is not None else None
    first = []
    for d in diagnostics[:3]:
        where = ""
        if document is not None and getattr(d, "span", None) is not None:
            line, col = document.position(d.span.start)
            where = f"{line + 1}:{col + 1} "
        first.append(f"{where}{d.code} {d.message}")
    more = f" (and {len(diagnostics) - 3} more)" if len(diagnostics) > 3 else ""
    return f"the template has {len(diagnostics)} error(s); fix them before running: " + "; ".join(first) + more



def failure(message: str, reason: str, type_: str = "VALIDATION_ERROR", **details) -> dict:
    """A structured error the run command answers with."""
    return {"type": type_, "reason": reason, "message": message, "details": jsonable(details)}
