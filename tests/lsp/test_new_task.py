"""taskdsl.newTask through the server, under the recorded capabilities of VS Code, Neovim and Emacs:
a checked task from plain words, as `taskdsl ask --dry-run` makes it. The model is the offline
replay model with the example fixture: its first answer has checker errors, the repaired second
answer is the one returned. Nothing runs and nothing is written."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsprotocol import types

from tests.paths import REPO

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPLAY = REPO / "examples" / "ask" / "replay.json"
SETTINGS = {"model": "taskdsl/replay"}  # the editor's setting: what a request without a model uses
REQUEST = "write a haiku about autumn leaves"

FILES = {
    "word_count.task.xml": """<task name="word_count" type="script">
  <description>Count the words of a text</description>
  <criteria>count, words, length</criteria>
  <inputs><input name="text">one two</input></inputs>
  <command>printf '%s' "$TASKDSL_INPUT_TEXT" | wc -w</command>
</task>
""",
}


@pytest.fixture(scope="module", autouse=True)
def replay_fixture():
    """The server (started after this, it inherits the environment) answers from the fixture."""
    before = os.environ.get("TASKDSL_REPLAY_FILE")
    os.environ["TASKDSL_REPLAY_FILE"] = str(REPLAY)
    yield
    if before is None:
        os.environ.pop("TASKDSL_REPLAY_FILE", None)
    else:
        os.environ["TASKDSL_REPLAY_FILE"] = before


async def new_task(client, *arguments):
    return await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="taskdsl.newTask", arguments=list(arguments))), 120)


async def test_the_command_is_advertised(client):
    assert "taskdsl.newTask" in client.init_result.capabilities.execute_command_provider.commands


async def test_the_repaired_answer_is_returned_with_its_rounds(client, ws):
    before = sorted(p.name for p in ws.iterdir())
    answer = await new_task(client, {"text": REQUEST})
    assert answer["error"] is None
    assert (answer["source"], answer["rounds"], answer["model"]) == ("model", 2, "taskdsl/replay")
    assert [e["code"] for e in answer["attempts"][0]["errors"]] != [] and answer["attempts"][1]["errors"] == []
    assert answer["xml"].startswith('<task name="autumn_haiku">\n  <description>Write a haiku about autumn leaves')
    assert answer["path"] == str(ws / "new_task.task.xml")
    assert sorted(p.name for p in ws.iterdir()) == before  # nothing written


async def test_the_named_file_is_where_the_task_is_checked(client, ws):
    answer = await new_task(client, REQUEST, "taskdsl/replay", (ws / "sub" / "haiku.task.xml").as_uri())
    assert answer["error"] is None and answer["path"] == str(ws / "sub" / "haiku.task.xml")
    assert not (ws / "sub").exists()


async def test_a_template_that_fits_is_used_without_the_model(client, ws):
    answer = await new_task(client, {"text": "count the words", "model": "taskdsl/echo"})
    assert (answer["error"], answer["source"], answer["rounds"]) == (None, "library", 0)
    assert '<task ref="word_count">' in answer["xml"] and answer["match"]["name"] == "word_count"


async def test_the_echo_model_cannot_write_a_task_and_is_refused_at_once(client):
    """SPEC §17: with taskdsl/echo nothing fits and nothing is asked: one sentence, no repair rounds."""
    from taskdsl.task_system.ask import ECHO_CANNOT_WRITE

    answer = await new_task(client, {"text": "translate this into Klingon", "model": "taskdsl/echo"})
    assert answer["xml"] is None
    assert (answer["error"]["type"], answer["error"]["reason"]) == ("VALIDATION_ERROR", "echo_cannot_write")
    assert answer["error"]["message"] == ECHO_CANNOT_WRITE


@pytest.mark.parametrize(("arguments", "message"), [
    ([], "taskdsl.newTask needs the request: say in words what the task should do"),
    ([{"text": "   "}], "taskdsl.newTask needs the request: say in words what the task should do"),
    ([{"text": "x" * 20_001}], "taskdsl.newTask: the request is longer than 20000 characters"),
    ([{"text": "hi", "model": 3}], "taskdsl.newTask: model must be a model identifier such as taskdsl/echo"),
    ([{"text": "hi", "uri": "untitled:Untitled-1"}], "the new task is saved as a file, not untitled:Untitled-1"),
])
async def test_bad_arguments_get_a_message_not_a_traceback(client, arguments, message):
    answer = await new_task(client, *arguments)
    assert answer["xml"] is None and answer["error"]["message"] == message


async def test_a_free_remote_model_is_asked_about_too(asked):
    """A price of zero is not this machine: the request still goes to the model's provider (and the model may come
    from a workspace's own settings)."""
    client = asked
    client.answers = ["Cancel"]
    answer = await new_task(client, {"text": "translate this into Klingon", "model": "gemini/gemma-3-27b-it"})
    assert (answer["xml"], answer["error"]["reason"]) == (None, "declined")
    assert answer["error"]["message"] == ("no task was written: you did not agree to ask gemini/gemma-3-27b-it, a "
                                          "model outside this machine")
    [question] = client.questions
    assert question.message == (
        "New Task will send your request and the names and descriptions of this workspace's templates to "
        "gemini/gemma-3-27b-it, a model outside this machine (at most 4 calls: an answer and its repairs). Ask it?")
    client.questions.clear()


async def test_a_model_that_may_cost_money_is_asked_only_after_the_user_agreed(asked):
    client = asked
    client.answers = ["Cancel"]
    answer = await new_task(client, {"text": "translate this into Klingon", "model": "madeup/paid-model"})
    assert (answer["xml"], answer["error"]["reason"]) == (None, "declined")
    assert answer["error"]["message"] == ("no task was written: you did not agree to ask madeup/paid-model, a model "
                                          "that may cost money")
    [question] = client.questions
    assert question.message == (
        "New Task will send your request and the names and descriptions of this workspace's templates to "
        "madeup/paid-model, a model that may cost money (at most 4 calls: an answer and its repairs). Ask it?")
    client.questions.clear()
    client.answers = ["Ask it"]
    answer = await new_task(client, {"text": "translate this into Klingon", "model": "madeup/paid-model"})
    assert answer["error"]["reason"] != "declined"  # asked: the made-up model then fails by itself
    assert len(client.questions) == 1
    client.questions.clear()
    answer = await new_task(client, {"text": "count the words", "model": "madeup/paid-model"})
    assert answer["source"] == "library" and client.questions == []  # a template fits: no model, no question
