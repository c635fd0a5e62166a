"""The editor's Run task shows "cached" and the fallback that answered: the result document and
the output-channel lines (features/run_result.py) of real runs through litellm against the
loopback OpenAI-compatible server, with the configuration the language server builds
(calls.configure over the project's settings, as lsp/run.py does)."""

from taskdsl.evaluator.calls import configure
from taskdsl.evaluator.handler import HandlerConfig
from taskdsl.evaluator.runner import run_file
from taskdsl.features import run_result
from taskdsl.project.config import settings_for
from loopback_openai import loopback  # noqa: F401 (the fixture)
from test_scale_calls import MODEL, SAY


async def run_and_record(folder):
    settings, _ = settings_for(folder / "say.task.xml")
    recorder = run_result.StepRecorder()
    result = await run_file(str(folder / "say.task.xml"), inputs={"text": "hello"}, model=MODEL, settings=settings,
                            on_event=recorder.on_event, config=configure(HandlerConfig(), settings))
    report = run_result.RunReport(file="say.task.xml", label="say", task=None, model=MODEL, status=result.status,
                                  content=result.content, steps=recorder.steps)
    return recorder, run_result.render_result(report)


async def test_the_run_result_says_which_fallback_answered_and_when_the_answer_was_cached(tmp_path, loopback):
    fake = await loopback(failures={"local-model": [(503, {"Retry-After": "0"})] * 4})
    (tmp_path / "taskdsl.toml").write_text(f'[models."{MODEL}"]\nfallbacks = ["openai/backup"]\n[run]\ncache = true\n',
                                           encoding="utf-8")
    (tmp_path / "say.task.xml").write_text(SAY, encoding="utf-8")

    recorder, document = await run_and_record(tmp_path)
    step = recorder.steps[0]
    assert f"answered by fallback openai/backup (for {MODEL})" in document
    assert run_result.step_log_line(step).startswith(f"✓ say (atomic, ")
    assert f", answered by fallback openai/backup (for {MODEL}))" in run_result.step_log_line(step)
    assert recorder.summary()[0]["fallback"] == {"asked": MODEL, "answered": "openai/backup"}
    assert "cached" not in recorder.summary()[0]

    recorder, document = await run_and_record(tmp_path)  # the same request again: from the cache
    assert fake.count() == 5
    assert " · cached · answered by fallback openai/backup" in document
    assert recorder.summary()[0]["cached"] is True
