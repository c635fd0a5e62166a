"""taskdsl.runTask through the server, under the recorded capabilities of VS Code, Neovim and
Emacs: progress, result, consent, cancellation, failure, and a server that keeps answering.

The models are the offline `taskdsl/echo`; slow work is a script that sleeps. A script writes its
shell's PID (the leader of its process group) to a file so the tests can prove no process is left.
No assertion is on time: a cancelled run must end CANCELLED with its process group gone while the
script alone would still sleep (60 s); the waits' timeouts only turn a hang into a failure.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException



def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is left in the process group."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False

TRACE_DIR = tempfile.mkdtemp(prefix="taskdsl-run-tests-")
SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": TRACE_DIR}}

FILES = {
    "pipeline.task.xml": """\
<task type="sequential" name="pipeline">
  <description>Write and shout</description>
  <inputs>
    <input name="topic">rain</input>
  </inputs>
  <steps>
    <task>
      <description>Write a haiku about {{topic}}</description>
    </task>
    <task type="script">
      <description>Shout it</description>
      <command>tr a-z A-Z</command>
    </task>
  </steps>
</task>
""",
    "hello.task.xml": """\
<task name="hello">
  <description>Say hello to {{who}}</description>
  <inputs>
    <input name="who">Ada</input>
  </inputs>
</task>
""",
    "touch.task.xml": """\
<task type="script" name="touch">
  <description>Leave a mark</description>
  <command>touch ran.marker</command>
</task>
""",
    "fail.task.xml": """\
<task type="sequential" name="fail">
  <description>Fail in the second step</description>
  <steps>
    <task>
      <description>First</description>
    </task>
    <task type="script">
      <description>Break</description>
      <command>echo boom >&amp;2; exit 3</command>
    </task>
  </steps>
</task>
""",
    "lib.task.xml": """\
<library>
  <template name="slow" params="tag">
    <task type="script">
      <description>Sleep for a long time</description>
      <command>echo $$ > {{tag}}.pid; sleep 60; echo late</command>
    </task>
  </template>
  <template name="greet" params="who">
    <task>
      <description>Greet {{who}} warmly</description>
    </task>
  </template>
</library>
""",
}

RUN = "taskdsl.runTask"
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def run_client(client, ws):
    """The client, answering consent requests with ``client.consent`` ("Run" unless a test says
    otherwise) and recording them; fresh message lists for each test."""
    if not hasattr(client, "consent_requests"):
        client.consent_requests = []

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams):
            client.consent_requests.append(params)
            for action in params.actions or []:
                if action.title == client.consent:
                    return action
            return None

    client.consent = "Run"
    client.consent_requests.clear()
    client.messages.clear()
    client.log_messages.clear()
    client.shown_documents.clear()
    return client


def unique(prefix: str) -> str:
    "A fresh name per test and client (the workspace folder is shared by the three clients)."
    return f"{prefix}{time.monotonic_ns()}"


def uri_of(ws: Path, name: str) -> str:
    return (ws / name).as_uri()


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def run_tokens(client) -> set:
    return {t for t in client.progress_reports if str(t).startswith("taskdsl-run-")}


async def execute(client, *arguments, msg_id=None):
    params = types.ExecuteCommandParams(command=RUN, arguments=list(arguments))
    if msg_id is None:
        return await client.workspace_execute_command_async(params)
    return await client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)


async def eventually(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def new_token(client, before: set) -> str:
    tokens = await eventually(lambda: run_tokens(client) - before, what="a run's progress token")
    [token] = tokens
    return token


async def pid_from(path: Path) -> int:
    text = await eventually(lambda: path.exists() and path.read_text().strip(), what=f"{path.name}")
    return int(text)


def result_messages(client) -> list[str]:
    return [m.message for m in client.log_messages if m.message.startswith("[run ")]


# -- a run: progress, logs, result --------------------------------------------------------------


async def test_run_reports_progress_per_step_and_returns_the_result(run_client, ws):
    client = run_client
    before = run_tokens(client)
    uri = uri_of(ws, "pipeline.task.xml")
    result = await execute(client, uri)

    assert result["status"] == "COMPLETE"
    assert result["content"] == "WRITE A HAIKU ABOUT RAIN"
    assert result["error"] is None
    assert [(s["path"], s["kind"], s["status"], s["content"]) for s in result["steps"]] == [
        ("pipeline", "sequential", "COMPLETE", "WRITE A HAIKU ABOUT RAIN"),
        ("pipeline/steps[1]", "atomic", "COMPLETE", "Write a haiku about rain"),
        ("pipeline/steps[2]", "script", "COMPLETE", "WRITE A HAIKU ABOUT RAIN"),
    ]
    assert result["steps"][1]["tokens"]["completion"] > 0
    assert all(s["duration_s"] >= 0 for s in result["steps"])

    # consent was asked, showing the plan: the shell command, the model
    [question] = client.consent_requests
    assert question.message.splitlines()[:4] == [
        "Running 'pipeline' (pipeline.task.xml) will:", f"  run this shell command in {os.path.realpath(ws)}:",
        "    $ tr a-z A-Z", "  call taskdsl/echo (free)"]
    assert [a.title for a in question.actions] == ["Run", "Always run this plan", "Cancel"]

    # progress: begin, one report per step with its path, end
    token = await new_token(client, before)
    assert client.progress_reports[token] == [
        types.WorkDoneProgressBegin(title="taskdsl: pipeline", message="starting", cancellable=True),
        types.WorkDoneProgressReport(message="pipeline", cancellable=True),
        types.WorkDoneProgressReport(message="pipeline/steps[1]", cancellable=True),
        types.WorkDoneProgressReport(message="pipeline/steps[2]", cancellable=True),
        types.WorkDoneProgressEnd(message="done"),
    ]

    # a log line as each step ends, then the summary
    lines = result_messages(client)
    assert [line.split("] ", 1)[1].split(" (")[0] for line in lines[1:4]] == [
        "✓ pipeline/steps[1]", "✓ pipeline/steps[2]", "✓ pipeline"]
    assert lines[0].endswith(f"running 'pipeline' ({ws / 'pipeline.task.xml'})")
    assert lines[2].endswith("): WRITE A HAIKU ABOUT RAIN")
    assert "run of 'pipeline' finished in" in lines[4]

    # the result document: written, and shown where the client can show documents
    document = path_of(result["result_uri"])
    assert document.parent == Path(TRACE_DIR)
    assert document.stat().st_mode & 0o777 == 0o600  # owner-only, as the trace
    text = document.read_text(encoding="utf-8")
    assert text.startswith(f"# pipeline: COMPLETE\n\n- File: `{ws / 'pipeline.task.xml'}`\n- Model: `taskdsl/echo`\n")
    assert "## Output\n\n```text\nWRITE A HAIKU ABOUT RAIN\n```\n" in text
    assert "### 2. `pipeline/steps[1]`\n\natomic · COMPLETE · " in text
    assert "```text\nWrite a haiku about rain\n```" in text
    caps = client.capabilities.window
    if caps.show_document and caps.show_document.support:
        assert [d.uri for d in client.shown_documents] == [result["result_uri"]]
    else:
        assert client.shown_documents == []
        [shown] = [m for m in client.messages if "result:" in m.message]
        assert shown.message.endswith(f"result: {result['result_uri']}")

    # the trace, as JSON lines, in taskdsl.trace.dir
    trace = path_of(result["trace_uri"])
    assert trace.parent == Path(TRACE_DIR)
    assert trace.stat().st_mode & 0o777 == 0o600
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert events[0]["event"] == "run"
    assert [e["path"] for e in events if e["event"] == "end"] == ["pipeline/steps[1]", "pipeline/steps[2]", "pipeline"]


async def test_a_model_only_run_asks_nothing_and_takes_inputs_and_model_from_arguments(run_client, ws):
    client = run_client
    result = await execute(client, uri_of(ws, "hello.task.xml"), None, {"who": "Grace"}, "taskdsl/echo")
    assert (result["status"], result["content"]) == ("COMPLETE", "Say hello to Grace")
    assert client.consent_requests == []
    result = await execute(client, uri_of(ws, "lib.task.xml"), "greet", {"who": "Linus"})
    assert (result["status"], result["content"]) == ("COMPLETE", "Greet Linus warmly")


async def test_missing_input_is_named_and_nothing_runs(run_client, ws):
    client = run_client
    before = run_tokens(client)
    result = await execute(client, uri_of(ws, "lib.task.xml"), "greet")
    message = ("cannot run 'greet': input 'who' has no value; pass it in the command's inputs argument "
               '({"who": "…"})')
    assert result == {"status": "FAILED", "content": "", "steps": [], "result_uri": None,
                      "error": {"type": "VALIDATION_ERROR", "reason": "missing_input", "message": message,
                                "details": {"missing": ["who"]}}}
    assert [(m.type, m.message) for m in client.messages] == [(types.MessageType.Error, f"taskdsl: {message}")]
    assert run_tokens(client) == before


async def test_a_failing_run_surfaces_its_error(run_client, ws):
    client = run_client
    result = await execute(client, uri_of(ws, "fail.task.xml"))
    assert result["status"] == "FAILED"
    assert result["error"]["type"] == "TASK_FAILURE"
    assert result["error"]["reason"] == "subtask_failure"
    assert result["error"]["message"] == (
        "task 'fail': step 2 of 2 failed: TASK_FAILURE (script_error): "
        "task 'fail/steps[2]': script exited with code 3: boom")
    assert [(s["path"], s["status"]) for s in result["steps"]] == [
        ("fail", "FAILED"), ("fail/steps[1]", "COMPLETE"), ("fail/steps[2]", "FAILED")]
    # one message for the failure (not an error and an info with the same text), naming where the
    # result is when the client cannot open it
    [(kind, shown)] = [(m.type, m.message) for m in client.messages]
    assert kind == types.MessageType.Error and shown.startswith("taskdsl: run of 'fail' failed in ")
    caps = client.capabilities.window
    if caps.show_document and caps.show_document.support:
        assert shown.endswith(result["error"]["message"])
        assert [d.uri for d in client.shown_documents] == [result["result_uri"]]
    else:
        assert shown.endswith(f"{result['error']['message']}; result: {result['result_uri']}")
    text = path_of(result["result_uri"]).read_text(encoding="utf-8")
    assert text.startswith("# fail: FAILED\n")
    assert f"## Error\n\n**TASK_FAILURE** (subtask_failure): {result['error']['message']}\n\n" \
           "Failed step: `fail/steps[2]`\n" in text


async def test_a_template_with_errors_does_not_run(run_client, ws, docs):
    client = run_client
    uri = await docs.open("broken.task.xml", '<task type="bogus" name="b"><description>x</description></task>\n')
    result = await execute(client, uri)
    assert result["status"] == "FAILED"
    assert result["error"]["reason"] == "template_errors"
    assert result["error"]["message"] == (
        "the template has 1 error(s); fix them before running: 1:13 TD208 type 'bogus' is not supported in "
        "version 1: use atomic, sequential, reduce or script")
    assert result["steps"] == [] and result["result_uri"] is None
    docs.close(uri)


# -- consent ------------------------------------------------------------------------------------


async def test_declining_the_scripts_runs_nothing(run_client, ws):
    client = run_client
    client.consent = "Cancel"
    (ws / "ran.marker").unlink(missing_ok=True)
    before = run_tokens(client)
    result = await execute(client, uri_of(ws, "touch.task.xml"))
    assert result["status"] == "CANCELLED"
    assert result["error"]["reason"] == "declined"
    assert result["error"]["details"]["commands"] == ["touch ran.marker"]
    assert [r.message.splitlines()[2] for r in client.consent_requests] == ["    $ touch ran.marker"]
    assert not (ws / "ran.marker").exists()
    assert run_tokens(client) == before  # no progress: nothing started


async def test_accepting_the_scripts_runs_them(run_client, ws):
    client = run_client
    (ws / "ran.marker").unlink(missing_ok=True)
    result = await execute(client, uri_of(ws, "touch.task.xml"))
    assert result["status"] == "COMPLETE"
    assert len(client.consent_requests) == 1
    assert (ws / "ran.marker").exists()


# -- cancellation -------------------------------------------------------------------------------


async def test_cancel_from_the_progress_ui_kills_the_scripts(run_client, ws):
    client = run_client
    tag = unique("progress")
    before = run_tokens(client)
    pending = asyncio.ensure_future(execute(client, uri_of(ws, "lib.task.xml"), "slow", {"tag": tag}))
    pid = await pid_from(ws / f"{tag}.pid")
    token = await new_token(client, before)
    assert group_alive(pid)
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(pending, 45)  # the script alone sleeps 60 s: this end is the cancel's
    assert result["status"] == "CANCELLED"
    assert result["error"]["reason"] == "cancelled"
    assert [(s["path"], s["kind"], s["status"], s["content"]) for s in result["steps"]] == [
        ("slow", "script", "CANCELLED", "")]
    assert not group_alive(pid)
    assert client.progress_reports[token][-1] == types.WorkDoneProgressEnd(message="cancelled")
    assert client.shown_documents == []


async def test_cancel_request_of_the_command_kills_the_scripts(run_client, ws):
    client = run_client
    tag = unique("request")
    msg_id = f"run-cancel-{time.monotonic_ns()}"
    pending = asyncio.ensure_future(
        execute(client, uri_of(ws, "lib.task.xml"), "slow", {"tag": tag}, msg_id=msg_id))
    pid = await pid_from(ws / f"{tag}.pid")
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(pending, 45)
    # the script alone sleeps 60 s: a group gone before then was killed by the cancel
    await eventually(lambda: not group_alive(pid), timeout=45, what="the script's process group to end")
    await eventually(lambda: any("was cancelled" in m for m in result_messages(client)), timeout=5,
                     what="the cancelled run's summary")


# -- the server keeps answering -----------------------------------------------------------------


async def test_diagnostics_and_hover_are_answered_while_a_slow_run_is_in_flight(run_client, ws, docs):
    client = run_client
    tag = unique("busy")
    before = run_tokens(client)
    slow = asyncio.ensure_future(execute(client, uri_of(ws, "lib.task.xml"), "slow", {"tag": tag}))
    pid = await pid_from(ws / f"{tag}.pid")
    token = await new_token(client, before)

    uri = await docs.open("other.task.xml", '<task type="bogus" name="o"><description>x</description></task>\n')
    diagnostics = await asyncio.wait_for(docs.diagnostics(uri), 30)
    assert [d.code for d in diagnostics] == ["TD208"]
    await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(0, 2)))
    # and another run overlaps the slow one, to its end
    quick = await asyncio.wait_for(execute(client, uri_of(ws, "hello.task.xml")), 30)
    assert quick["content"] == "Say hello to Ada"
    assert not slow.done() and group_alive(pid)  # all of it answered while the slow run was in flight

    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    assert (await asyncio.wait_for(slow, 45))["status"] == "CANCELLED"
    assert not group_alive(pid)
    docs.close(uri)


async def test_without_waiting_the_command_answers_at_once(run_client, ws):
    client = run_client
    result = await execute(client, uri_of(ws, "hello.task.xml"), None, None, None, {"wait": False})
    assert result["status"] == "RUNNING" and isinstance(result["run"], int)
    line = await eventually(lambda: [m for m in result_messages(client) if "run of 'hello' finished" in m],
                            what="the detached run's summary")
    assert line


# -- where runs are offered ---------------------------------------------------------------------


async def test_code_lens_on_each_runnable_entry(run_client, ws):
    client = run_client
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri_of(ws, "lib.task.xml"))))
    assert [(lens.range.start.line, lens.command.title, list(lens.command.arguments)) for lens in lenses] == [
        (1, "▶ Run task 'slow'", [uri_of(ws, "lib.task.xml"), "slow"]),
        (7, "▶ Run task 'greet'", [uri_of(ws, "lib.task.xml"), "greet"]),
    ]
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri_of(ws, "hello.task.xml"))))
    assert [(lens.command.title, lens.command.command, list(lens.command.arguments)) for lens in lenses] == [
        ("▶ Run task", RUN, [uri_of(ws, "hello.task.xml")])]


async def test_a_run_uses_the_editor_buffer_saved_or_not(run_client, ws, docs):
    client = run_client
    uri = await docs.open("hello.task.xml", FILES["hello.task.xml"].replace(">Ada<", ">Unsaved<"))
    result = await execute(client, uri)
    assert (result["status"], result["content"]) == ("COMPLETE", "Say hello to Unsaved")
    docs.close(uri)


async def test_run_task_code_action_everywhere(run_client, ws, docs):
    client = run_client
    uri = await docs.open("hello.task.xml")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(types.Position(1, 5), types.Position(1, 5)),
        context=types.CodeActionContext(diagnostics=[])))
    docs.close(uri)
    runs = []
    for action in actions or []:
        # lsprotocol's client-side converter reads a CodeAction carrying a command as a Command
        # whose `command` is the nested command's repr: undo that to see what the server sent
        if isinstance(action, types.Command) and action.command.startswith("{"):
            nested = ast.literal_eval(action.command)
            runs.append((action.title, nested["command"], list(nested.get("arguments") or [])))
        elif isinstance(action, types.CodeAction) and action.command is not None:
            runs.append((action.title, action.command.command, list(action.command.arguments or [])))
    runs = [r for r in runs if r[0].startswith("Run task")]
    assert runs == [("Run task", RUN, [uri])]


async def test_a_library_file_needs_a_task_name(run_client, ws):
    result = await execute(run_client, uri_of(ws, "lib.task.xml"))
    assert result["status"] == "FAILED"
    assert result["error"]["message"] == "lib.task.xml is a library: choose one of its tasks to run (slow, greet)"


async def test_a_file_that_is_not_utf8_is_refused_clearly(run_client, ws):
    (ws / "latin1.task.xml").write_bytes('<task name="l"><description>caf\xe9</description></task>\n'.encode("latin-1"))
    result = await execute(run_client, uri_of(ws, "latin1.task.xml"))
    assert result["status"] == "FAILED"
    assert result["error"]["message"] == "cannot run latin1.task.xml: not valid UTF-8 at byte 31 (0xe9): templates are UTF-8"


async def test_the_bad_byte_is_counted_from_the_start_of_the_file_with_a_bom(run_client, ws):
    (ws / "bom.task.xml").write_bytes(b"\xef\xbb\xbf" + '<task name="l"><description>caf\xe9</description></task>\n'.encode("latin-1"))
    result = await execute(run_client, uri_of(ws, "bom.task.xml"))
    assert result["status"] == "FAILED"
    assert result["error"]["message"] == "cannot run bom.task.xml: not valid UTF-8 at byte 34 (0xe9): templates are UTF-8"


async def test_an_input_named_like_a_secret_is_masked_in_the_result_and_its_document(run_client, ws):
    client = run_client
    stem = unique("secret_echo")
    name = stem + ".task.xml"
    (ws / name).write_text(f'<task type="script" name="{stem}"><inputs><input name="api_token"/></inputs>'
                           '<command>echo "tok={{api_token}}"</command></task>\n', encoding="utf-8")
    result = await execute(client, uri_of(ws, name), None, {"api_token": "supersecret123"})
    assert (result["status"], result["content"]) == ("COMPLETE", "tok=***")
    document = path_of(result["result_uri"]).read_text(encoding="utf-8")
    assert "tok=***" in document and "supersecret123" not in document
    assert "supersecret123" not in json.dumps(result)
