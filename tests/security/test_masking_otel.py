"""OpenTelemetry span attributes are JSON text: every secret is masked in their parts before they
are encoded, through the real command line and the loopback OTLP receiver."""

import json

import pytest

from evaluator_helpers import taskdsl_async
from test_masking_before_encoding import NOTES_FLOW, PEM, QUOTED, shows

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is installed by `bash scripts/test`")
from test_scale_otel import attributes, otlp_receiver  # noqa: E402,F401 (the loopback OTLP receiver)


async def test_otel_span_attributes_hold_no_escaped_secret(tmp_path, otlp_receiver, monkeypatch):
    """The notes of a script step holding a PEM key and a quoted password reach the next prompt,
    which the span's gen_ai.input.messages records as JSON: masked before it is encoded."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver["endpoint"])
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    monkeypatch.setenv("DB_PASSWORD", QUOTED)
    monkeypatch.setenv("MY_API_KEY", PEM)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "flow.task.xml").write_text(NOTES_FLOW, encoding="utf-8")
    code, out, err = await taskdsl_async(tmp_path, "run", "flow.task.xml", "--model", "taskdsl/echo", "--json")
    assert code == 0, err
    json.loads(out)
    spans = {span.name: span for span in otlp_receiver["spans"]}
    chat = attributes(spans["chat say"])
    assert "[step 1] notes: {\"stdout\": \"conn ok ***" in json.loads(chat["gen_ai.input.messages"])[0]["parts"][0][
        "content"] + json.loads(chat.get("gen_ai.system_instructions", "[{\"content\": \"\"}]"))[0]["content"]
    bodies = b"".join(otlp_receiver["bodies"]).decode("utf-8", "replace")
    assert bodies and shows(bodies, QUOTED) == [] and shows(bodies, PEM) == []
