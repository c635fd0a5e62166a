"""Tests in the editor, under the recorded capabilities of VS Code, Neovim and Emacs: "▶ Run test"
lenses on each <test> and "▶ Run all tests" on <tests>, the taskdsl.runTest command (the code of
`taskdsl test`), its failures as diagnostics on the failing <expect> published with the
checker's, cleared when the test passes again or the file changes, and consent before a test
that runs a script."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import encoding, pos, pull_client

SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": tempfile.mkdtemp(prefix="taskdsl-test-lens-")}}

LIBRARY = """<library>
  <task name="say">
    <description>Say {{word}}</description>
    <inputs><input name="word"/></inputs>
    <model>taskdsl/echo</model>
  </task>
  <task name="judge">
    <description>Judge {{claim}}</description>
    <inputs><input name="claim"/></inputs>
    <model>openai/gpt-4o-mini</model>
  </task>
  <task name="shout" type="script">
    <description>Upper-case a word</description>
    <command>printf '%s' "$TASKDSL_INPUT_WORD" | tr '[:lower:]' '[:upper:]'</command>
    <inputs><input name="word"/></inputs>
  </task>
</library>
"""

TESTS = """<tests>
  <test name="says hi" task="say">
    <input name="word">hi</input>
    <expect test='"Say" in output'/>
    <expect test='output == "Say HI"'/>
  </test> <!-- taskdsl: ignore[TD402] -->
  <test name="warned" task="say">
    <input name="word">nothing</input>
    <expect test='"Say" in output'/>
  </test>
  <test name="shouts" task="shout">
    <input name="word">hi</input>
    <expect test='output == "HI"'/>
  </test>
</tests>
"""

JUDGED = """<tests>
  <test name="judged" task="judge">
    <input name="claim">the sky is green</input>
    <expect test='output == "false"'/>
  </test>
</tests>
"""

FILES = {"lib.task.xml": LIBRARY, "calc.test.xml": TESTS, "judge.test.xml": JUDGED,
         "judge.replay.json": json.dumps({"answers": [{"answer": "true"}]})}
RUN_TEST = "taskdsl.runTest"
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def answering(client):
    """The client answers consent questions with ``client.consent`` and records them."""
    if not hasattr(client, "questions"):
        client.questions = []

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams):
            client.questions.append(params)
            if getattr(client, "on_question", None):
                client.on_question()
            return next((a for a in params.actions or [] if a.title == client.consent), None)

    client.questions.clear()
    client.consent = "Cancel"
    client.on_question = None
    return client


async def run_test(client, uri: str, name: str | None = None) -> dict:
    argument = {"uri": uri} if name is None else {"uri": uri, "name": name}
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=RUN_TEST,
                                                                                   arguments=[argument]))


def span(text: str, start: str, end: str, enc: str, after: int = 0) -> types.Range:
    first = text.index(start, after)
    last = text.index(end, first) + len(end)
    return types.Range(pos(text, first, enc), pos(text, last, enc))


async def close(client, docs, uri: str) -> None:
    """Close, and with a pushing client wait for the empty publish the close sends (so the next
    test's first diagnostics are its own)."""
    seen = len([p for p in client.published if p.uri == uri])
    docs.close(uri)
    if pull_client(client):
        return
    while len([p for p in client.published if p.uri == uri]) == seen:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    client.diagnostics.pop(uri, None)


def of_tests(diagnostics) -> list[types.Diagnostic]:
    return [d for d in diagnostics if d.source == "taskdsl test"]


async def test_lenses_on_tests_and_each_test(answering, docs, ws):
    client, enc = answering, encoding(answering)
    uri = await docs.open("calc.test.xml")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    found = [(lens.range, lens.command.title, lens.command.command, list(lens.command.arguments)) for lens in lenses]
    name = lambda line, start, end: types.Range(types.Position(line, start), types.Position(line, end))  # noqa: E731
    assert found == [
        (name(0, 1, 6), "▶ Run all tests", RUN_TEST, [{"uri": uri}]),
        (name(1, 3, 7), "▶ Run test", RUN_TEST, [{"uri": uri, "name": "says hi"}]),
        (name(6, 3, 7), "▶ Run test", RUN_TEST, [{"uri": uri, "name": "warned"}]),
        (name(10, 3, 7), "▶ Run test", RUN_TEST, [{"uri": uri, "name": "shouts"}]),
    ]
    assert enc  # ASCII lines: the same columns in every encoding
    await close(client, docs, uri)


async def test_a_failing_test_is_a_diagnostic_on_its_expect_with_the_checkers_then_cleared_by_an_edit(
        answering, docs, ws):
    client, enc = answering, encoding(answering)
    uri = await docs.open("calc.test.xml")
    before = await docs.diagnostics(uri)
    assert [d.code for d in before] == ["TD904"]  # the checker's warning: an unused suppression
    result = await run_test(client, uri, "says hi")
    assert (result["passed"], result["failed"], result["errors"], result["not_run"]) == (0, 1, 0, [])
    assert client.questions == []  # an offline model and no script: no question
    after = await docs.diagnostics(uri)
    assert [d.code for d in after if d.source != "taskdsl test"] == ["TD904"]
    [failure] = of_tests(after)
    assert failure.range == span(TESTS, """<expect test='output == "Say HI"'""", "/>", enc)
    assert failure.severity == types.DiagnosticSeverity.Error
    assert failure.message == "test 'says hi': expect 'output == \"Say HI\"' does not hold; output: 'Say hi'"
    # what the Test Explorer shows: the condition expected, where it is, and the actual output
    [shown] = result["tests"]
    assert (shown["expected"], shown["output"]) == ('output == "Say HI"', "Say hi")
    where = span(TESTS, """<expect test='output == "Say HI"'""", "/>", enc)
    assert (shown["expect_range"]["start"]["line"], shown["expect_range"]["start"]["character"]) == (
        where.start.line, where.start.character)

    fixed = TESTS.replace('output == "Say HI"', 'output == "Say hi"')
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    assert of_tests(await docs.diagnostics(uri)) == []  # the file changed: the failure is gone
    result = await run_test(client, uri, "says hi")
    assert (result["passed"], result["failed"]) == (1, 0)
    assert of_tests(await docs.diagnostics(uri)) == []
    await close(client, docs, uri)


async def test_a_test_that_passes_again_loses_its_diagnostic(answering, docs, ws):
    """The same version of the file: only the replay fixture beside it changes."""
    client, enc = answering, encoding(answering)
    fixture = ws / "judge.replay.json"
    fixture.write_text(json.dumps({"answers": [{"answer": "true"}]}), encoding="utf-8")
    uri = await docs.open("judge.test.xml")
    await docs.diagnostics(uri)
    result = await run_test(client, uri)
    assert (result["failed"], client.questions) == (1, [])  # the replay answers: no paid call, no question
    [failure] = of_tests(await docs.diagnostics(uri))
    assert failure.range == span(JUDGED, "<expect", "/>", enc)
    assert failure.message == "test 'judged': expect 'output == \"false\"' does not hold; output: 'true'"
    fixture.write_text(json.dumps({"answers": [{"answer": "false"}]}), encoding="utf-8")
    result = await run_test(client, uri, "judged")
    assert (result["passed"], result["failed"]) == (1, 0)
    assert of_tests(await docs.diagnostics(uri)) == []
    await close(client, docs, uri)


async def opened(client, docs, relative: str, consent: str = "Cancel") -> str:
    """Open the file and take its first diagnostics; consent questions get `consent`."""
    uri = await docs.open(relative)
    await docs.diagnostics(uri)
    client.consent = consent
    return uri


async def test_a_test_that_runs_a_script_asks_first(answering, docs, ws):
    client = answering
    uri = await opened(client, docs, "calc.test.xml")
    result = await run_test(client, uri, "shouts")
    assert (result["passed"], result["failed"], result["not_run"]) == (0, 0, ["shouts"])
    [question] = client.questions
    assert """$ printf '%s' "$TASKDSL_INPUT_WORD" | tr '[:lower:]' '[:upper:]'""" in question.message
    assert [a.title for a in question.actions] == ["Run", "Always run this plan", "Cancel"]
    client.consent = "Run"
    result = await run_test(client, uri, "shouts")
    assert (result["passed"], result["failed"], result["not_run"]) == (1, 0, [])
    assert result["tests"][0]["output"] == "HI"
    assert len(client.questions) == 2
    await close(client, docs, uri)


async def test_run_all_tests_and_bad_arguments(answering, docs, ws):
    client = answering
    uri = await opened(client, docs, "calc.test.xml")
    result = await run_test(client, uri)
    assert [(t["name"], t["status"]) for t in result["tests"]] == [("says hi", "failed"), ("warned", "passed")]
    assert result["not_run"] == ["shouts"]
    missing = await run_test(client, uri, "nope")
    assert missing["error"]["message"] == f"no test named 'nope' in {Path(ws, 'calc.test.xml')}"
    bad = await client.workspace_execute_command_async(types.ExecuteCommandParams(command=RUN_TEST, arguments=[42]))
    assert bad["error"]["reason"] == "arguments"
    await close(client, docs, uri)


async def test_a_pulling_client_with_the_last_result_id_gets_the_failure(answering, docs, ws):
    """The pulled result id changes with the test results: the client's cached report is stale."""
    client = answering
    if not pull_client(client):
        pytest.skip("the client is sent its diagnostics (push)")
    uri = await opened(client, docs, "calc.test.xml")
    first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        types.TextDocumentIdentifier(uri)))
    await run_test(client, uri, "says hi")
    again = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        types.TextDocumentIdentifier(uri), previous_result_id=first.result_id))
    assert again.kind == "full" and again.result_id != first.result_id
    assert [d.source for d in again.items if d.source == "taskdsl test"] == ["taskdsl test"]
    await close(client, docs, uri)


async def test_without_waiting_the_answer_is_at_once_and_the_failure_arrives_as_a_diagnostic(answering, docs, ws):
    client = answering
    uri = await opened(client, docs, "calc.test.xml")
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=RUN_TEST, arguments=[{"uri": uri, "name": "says hi", "wait": False}]))
    assert answer == {"status": "RUNNING"}
    async def the_tests_diagnostics():  # pushed when the run ends; a pulling client asks until it is there
        while not (found := of_tests(await docs.diagnostics(uri))):
            await asyncio.sleep(0.05)
        return found

    found = await asyncio.wait_for(the_tests_diagnostics(), 120)  # the timeout only turns a hang into a failure
    assert [d.message for d in found] == [
        "test 'says hi': expect 'output == \"Say HI\"' does not hold; output: 'Say hi'"]
    await close(client, docs, uri)


PINNED = """<tests>
  <test name="judged from the fixture" task="judge">
    <input name="claim">the sky is green</input>
    <expect test='output == "false"'/>
  </test>
  <test name="shouts" task="shout">
    <input name="word">hi</input>
    <expect test='output == "HI"'/>
  </test>
</tests>
"""


async def test_a_fixture_deleted_while_another_test_asks_is_still_the_one_answering(answering, docs, ws):
    """The plan pins the replay fixture: deleting it while the user answers another test's question
    does not turn the planned offline call into a call to the paid model."""
    client = answering
    fixture = ws / "pinned.replay.json"
    fixture.write_text(json.dumps({"answers": [{"answer": "false"}]}), encoding="utf-8")
    (ws / "pinned.test.xml").write_text(PINNED, encoding="utf-8")
    uri = await opened(client, docs, "pinned.test.xml", consent="Run")
    client.on_question = lambda: fixture.unlink(missing_ok=True)
    result = await run_test(client, uri)
    assert not fixture.exists() and len(client.questions) == 1
    [judged] = [t for t in result["tests"] if t["name"] == "judged from the fixture"]
    assert judged["status"] == "passed", judged
    assert judged["output"] == "false"
    await close(client, docs, uri)
