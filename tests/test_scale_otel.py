"""OpenTelemetry export through the real command line: a loopback OTLP/HTTP receiver decodes the
protobuf it is sent (opentelemetry-proto) and the spans carry the GenAI attributes, the task tree,
and no secret. The model is the loopback OpenAI-compatible server."""

import json

import pytest
from aiohttp import web

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)
from test_evaluator_models import SECRET

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is installed by `bash scripts/test`")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

PIPELINE = """<task type="sequential" name="pipeline">
  <description>Shout, then say the text</description>
  <inputs><input name="text"/></inputs>
  <steps>
    <task type="script" name="shout">
      <description>Shout</description>
      <command timeout="10">echo loud</command>
    </task>
    <task name="say"><instructions>Say {{text}}</instructions></task>
  </steps>
</task>
"""


@pytest.fixture
async def otlp_receiver():
    """POST /v1/traces on 127.0.0.1: every request body decoded as an ExportTraceServiceRequest."""
    received = {"bodies": [], "spans": []}

    async def traces(request):
        body = await request.read()
        received["bodies"].append(body)
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        for resource in message.resource_spans:
            for scope in resource.scope_spans:
                received["spans"] += list(scope.spans)
        return web.Response(status=200, content_type="application/x-protobuf", body=b"")

    app = web.Application()
    app.router.add_post("/v1/traces", traces)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    received["endpoint"] = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
    yield received
    await runner.cleanup()


def attributes(span) -> dict:
    values = {}
    for item in span.attributes:
        value = item.value
        values[item.key] = getattr(value, value.WhichOneof("value"))
    return values


async def test_spans_reach_an_otlp_receiver_with_genai_attributes_and_no_secret(tmp_path, loopback, otlp_receiver,
                                                                                monkeypatch):
    fake = await loopback()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver["endpoint"])
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    (tmp_path / "taskdsl.toml").write_text(
        '[models."openai/local-model"]\nfallbacks = ["openai/backup"]\n[run]\nretries = 0\n', encoding="utf-8")
    (tmp_path / "pipeline.task.xml").write_text(PIPELINE, encoding="utf-8")
    fake.always["local-model"] = 503
    code, out, err = await taskdsl_async(tmp_path, "run", "pipeline.task.xml", "--model", "openai/local-model",
                                         "--input", f"text=the key {SECRET}")
    assert code == 0, err
    assert out == "backup says: Say the key ***\n"
    spans = {span.name: span for span in otlp_receiver["spans"]}
    assert set(spans) == {"invoke_workflow pipeline", "execute_tool shout", "chat say"}
    chat = attributes(spans["chat say"])
    assert chat["gen_ai.operation.name"] == "chat"
    assert (chat["gen_ai.request.model"], chat["gen_ai.response.model"]) == ("openai/local-model", "openai/backup")
    assert chat["gen_ai.provider.name"] == "openai"
    assert chat["gen_ai.usage.input_tokens"] > 0 and chat["gen_ai.usage.output_tokens"] == 2
    assert chat["taskdsl.task.path"] == "pipeline/steps[2]" and chat["taskdsl.task.status"] == "COMPLETE"
    assert json.loads(chat["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "backup says: Say the key ***"}]}]
    # the prompt, as the GenAI conventions record input messages, masked like the answer
    assert json.loads(chat["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Say the key ***"}]}]
    sent_system = fake.requests[-1]["body"]["messages"][0]
    assert sent_system["role"] == "system"  # the system prompt the model got is the span's system instructions
    assert json.loads(chat["gen_ai.system_instructions"]) == [{"type": "text", "content": sent_system["content"]}]
    assert "gen_ai.input.messages" not in attributes(spans["execute_tool shout"])
    tool = attributes(spans["execute_tool shout"])
    assert (tool["gen_ai.operation.name"], tool["gen_ai.tool.name"]) == ("execute_tool", "shout")
    root = spans["invoke_workflow pipeline"]
    assert spans["chat say"].parent_span_id == root.span_id == spans["execute_tool shout"].parent_span_id
    assert all(SECRET.encode() not in body for body in otlp_receiver["bodies"])
    assert fake.count("local-model") == 1 and fake.count("backup") == 1


async def test_a_failed_task_is_an_error_span_and_content_stays_out_by_default(tmp_path, loopback, otlp_receiver,
                                                                               monkeypatch):
    await loopback(always={"local-model": 400})
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_receiver["endpoint"] + "/v1/traces")
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "pipeline.task.xml").write_text(PIPELINE.replace("Say {{text}}", "Say {{text}} now"),
                                                encoding="utf-8")
    code, out, err = await taskdsl_async(tmp_path, "run", "pipeline.task.xml", "--model", "openai/local-model",
                                         "--input", "text=hi", "--otel")
    assert code == 1
    spans = {span.name: span for span in otlp_receiver["spans"]}
    chat = spans["chat say"]
    assert attributes(chat)["error.type"] == "TASK_FAILURE"
    assert chat.status.code == chat.status.STATUS_CODE_ERROR
    assert not {"gen_ai.output.messages", "gen_ai.input.messages", "gen_ai.system_instructions"} & set(attributes(chat))
    assert attributes(spans["invoke_workflow pipeline"])["taskdsl.task.status"] == "FAILED"


async def test_a_batch_exports_the_spans_of_every_row(tmp_path, loopback, otlp_receiver, monkeypatch):
    await loopback()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver["endpoint"])
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "pipeline.task.xml").write_text(PIPELINE, encoding="utf-8")
    (tmp_path / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n', encoding="utf-8")
    code, out, err = await taskdsl_async(tmp_path, "run", "pipeline.task.xml", "--model", "openai/local-model",
                                         "--data", "rows.jsonl", "-q")
    assert code == 0, err
    names = sorted(span.name for span in otlp_receiver["spans"])
    assert names == ["chat say"] * 3 + ["execute_tool shout"] * 3 + ["invoke_workflow pipeline"] * 3
    roots = [s for s in otlp_receiver["spans"] if s.name == "invoke_workflow pipeline"]
    assert len({s.trace_id for s in roots}) == 3  # a trace per row
    for root in roots:  # each row's steps under its own root
        children = [s for s in otlp_receiver["spans"] if s.parent_span_id == root.span_id]
        assert sorted(s.name for s in children) == ["chat say", "execute_tool shout"]
        assert {s.trace_id for s in children} == {root.trace_id}


def test_the_settings_a_ray_worker_gets_leave_the_headers_out(monkeypatch):
    from taskdsl.evaluator import otel

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"api-key={SECRET}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", f"api-key={SECRET}")
    shipped = otel.settings()
    assert shipped["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:4318"
    assert not [name for name in shipped if name.endswith("_HEADERS")]
