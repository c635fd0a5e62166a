"""OpenTelemetry export of runs (extra `taskdsl[otel]`): one span per task, over OTLP/HTTP.

On when `--otel` is given or OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set; the
exporter reads the standard OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout) and
OTEL_SERVICE_NAME (default `taskdsl`). The spans are made from the run's step events (the same
ones the progress lines and the editor's results come from), so they follow its task tree: a
step's span is the child of the span of the task around it.

Attributes follow the OpenTelemetry GenAI semantic conventions:
- an atomic task: span `chat MODEL`, `gen_ai.operation.name = chat`, `gen_ai.request.model`
  (the model asked), `gen_ai.response.model` (the one that answered: a fallback's name when one
  did), `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.provider.name`;
- a script task: span `execute_tool NAME`, `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`;
- every other task: span `invoke_workflow NAME`, `gen_ai.operation.name = invoke_workflow`;
- on every span: `taskdsl.task.path`, `taskdsl.task.kind`, `taskdsl.task.status`, and on a
  failure `error.type` with the span's status set to ERROR; `taskdsl.cached` when the answer came
  from the answer cache.
The prompt (`gen_ai.system_instructions`, `gen_ai.input.messages`) and the answer
(`gen_ai.output.messages`) are added, as the conventions' JSON message parts, only when
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (the conventions' opt-in). Every string attribute is masked as
every output is (taskdsl.support.redaction): a secret value never leaves the machine.
"""

from __future__ import annotations

import os
from typing import Any


class OtelUnavailable(RuntimeError):
    pass


def wanted(flag: bool = False) -> bool:
    return flag or bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def capture_content() -> bool:
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def require() -> None:
    "Raise OtelUnavailable (its message says what to install) when the otel extra is missing."
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise OtelUnavailable("OpenTelemetry export needs taskdsl's otel extra: from a checkout, "
                              "pip install './taskdsl[otel]' (see the install guide)") from None


def settings() -> dict[str, str]:
    """The OTEL_* variables of this process but the headers: what a Ray worker sets before
    making its own exporter, so that its spans go where the driver's would (endpoint, service
    name, content capture). The headers (OTEL_EXPORTER_OTLP_HEADERS, ..._TRACES_HEADERS) often
    hold a backend's key: they are not shipped, the workers' own environment gives them."""
    return {name: value for name, value in os.environ.items()
            if name.startswith("OTEL_") and not name.endswith("_HEADERS")}


class SpanExport:
    """An on_event listener that turns a run's step events into spans; `close()` flushes them."""

    def __init__(self):
        require()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from taskdsl.support.redaction import Redactor

        service = os.environ.get("OTEL_SERVICE_NAME") or "taskdsl"
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.runs = [RunSpans(self.provider.get_tracer("taskdsl"), Redactor(), capture_content())]

    def __call__(self, event: dict) -> None:
        self.runs[0](event)

    def for_run(self) -> "RunSpans":
        "A listener for one of several runs at once (a batch's rows): its own task tree, the same exporter."
        first = self.runs[0]
        self.runs.append(RunSpans(first.tracer, first.redactor, first.content))
        return self.runs[-1]

    def close(self) -> None:
        for run in self.runs:
            run.end_open()
        self.provider.shutdown()  # flushes the batch processor


class RunSpans:
    """The spans of one run, made from its step events."""

    def __init__(self, tracer, redactor, content: bool):
        self.tracer, self.redactor, self.content = tracer, redactor, content
        self.open: dict[str, list] = {}

    def end_open(self) -> None:
        for stack in self.open.values():
            for span in stack:
                span.end()
        self.open.clear()

    def _parent(self, path: str):
        from opentelemetry import trace

        while "/" in path:
            path = path.rsplit("/", 1)[0]
            if self.open.get(path):
                return trace.set_span_in_context(self.open[path][-1])
        return None

    def __call__(self, event: dict) -> None:
        kind = event.get("event")
        path = str(event.get("path") or "")
        if kind == "begin":
            task_kind, name = str(event.get("kind") or ""), str(event.get("name") or path)
            operation = {"atomic": "chat", "script": "execute_tool"}.get(task_kind, "invoke_workflow")
            span = self.tracer.start_span(f"{operation} {name}", context=self._parent(path))
            span.set_attribute("gen_ai.operation.name", operation)
            if operation == "execute_tool":
                span.set_attribute("gen_ai.tool.name", self._text(name))
            self._set(span, {"taskdsl.task.path": path, "taskdsl.task.kind": task_kind})
            self.open.setdefault(path, []).append(span)
        elif kind == "prompt":  # an atomic task's messages, built: only with content capture on
            stack = self.open.get(path)
            if stack and self.content:
                self._set(stack[-1], input_attributes(str(event.get("system") or ""), str(event.get("user") or ""),
                                                           self.redactor))
        elif kind in ("end", "error"):
            stack = self.open.get(path)
            if not stack:
                return
            span = stack.pop()
            if kind == "end":
                self._finished(span, event)
            else:
                from opentelemetry.trace import Status, StatusCode

                error = event.get("error") or {}
                span.set_attribute("error.type", self._text(str(error.get("type") or "error")))
                span.set_attribute("taskdsl.task.status", "FAILED")
                span.set_status(Status(StatusCode.ERROR, self._text(str(error.get("message") or ""))[:500]))
            span.end()

    def _finished(self, span, event: dict) -> None:
        result = event.get("result")
        notes = getattr(result, "notes", None) or {}
        span.set_attribute("taskdsl.task.status", str(getattr(result, "status", "COMPLETE")))
        if event.get("kind") == "atomic":
            answered = notes.get("model")
            asked = notes.get("fallback_from") or answered
            attributes = {"gen_ai.request.model": asked, "gen_ai.response.model": answered,
                          "gen_ai.usage.input_tokens": notes.get("prompt_tokens"),
                          "gen_ai.usage.output_tokens": notes.get("completion_tokens"),
                          "gen_ai.provider.name": provider_of(answered) if answered else None}
            if notes.get("cached"):
                attributes["taskdsl.cached"] = True
            if self.content:
                attributes["gen_ai.output.messages"] = self.redactor.json(  # masked before it is encoded
                    [{"role": "assistant", "parts": _text_parts(str(getattr(result, "content", "") or ""))}],
                    ensure_ascii=False)
            self._set(span, attributes)

    def _text(self, value: str) -> str:
        return self.redactor.text(value)

    def _set(self, span, attributes: dict[str, Any]) -> None:
        for key, value in attributes.items():
            if value is None:
                continue
            span.set_attribute(key, self._text(value) if isinstance(value, str) else value)

def _text_parts(text: str) -> list[dict]:
    return [{"type": "text", "content": text}]


def input_attributes(system: str, user: str, redactor=None) -> dict[str, str]:
    """The prompt as the GenAI conventions record it: `gen_ai.system_instructions` (the system
    prompt's parts, when there is one) and `gen_ai.input.messages` (the user message), JSON text;
    every secret masked in the parts before they are encoded (`redactor`)."""
    if redactor is None:
        from taskdsl.support.redaction import Redactor

        redactor = Redactor(())
    attributes = {"gen_ai.input.messages": redactor.json([{"role": "user", "parts": _text_parts(user)}],
                                                         ensure_ascii=False)}
    if system:
        attributes["gen_ai.system_instructions"] = redactor.json(_text_parts(system), ensure_ascii=False)
    return attributes


def provider_of(model: str) -> str:
    "The GenAI provider name of a model: its litellm prefix (openai/…), else litellm's map, else the name."
    if "/" in model:
        return model.split("/", 1)[0]
    from taskdsl.language.models import model_map

    entry = model_map().get(model) or {}
    return str(entry.get("litellm_provider") or "unknown")
