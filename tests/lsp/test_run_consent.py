"""Consent in the editor, under the recorded capabilities of VS Code, Neovim and Emacs: the question
shows the plan, and what runs is exactly the plan agreed to. A template changed while the
question is open (on disk, through didChange, or a library file it reaches) is asked about again
and never runs unseen; a plan that changes under every answer is refused."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from taskdsl.lsp.run import ALWAYS, PLAN_CHANGED, PLAN_CHANGED_HEADER

SETTINGS = {"model": "taskdsl/echo", "trace": {"dir": tempfile.mkdtemp(prefix="taskdsl-consent-tests-")}}

LIBRARY = """\
<library>
  <template name="mark" params="name">
    <task type="script">
      <description>Leave a mark</description>
      <command>touch {{name}}.lib.marker</command>
    </task>
  </template>
</library>
"""

FILES = {
    "lib.task.xml": LIBRARY,
    "calls.task.xml": '<call template="mark"><arg>called</arg></call>\n',
}

RUN = "taskdsl.runTask"
pytestmark = pytest.mark.asyncio(loop_scope="module")


def script(marker: str, name: str = "touch") -> str:
    return (f'<task type="script" name="{name}">\n  <description>Leave a mark</description>\n'
            f'  <inputs><input name="extra">0</input></inputs>\n'  # an input a run may set (extra=1)
            f"  <command>touch {marker}</command>\n</task>\n")


async def execute(client, *arguments):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=RUN, arguments=list(arguments)))


def fresh(ws: Path, stem: str) -> tuple[Path, Path, Path]:
    """A script template of its own (the three clients share the folder; task names are unique in
    the project) and its two markers. Rewrite it with ``rewrite(path, marker)``."""
    (ws / f"{stem}.old.marker").unlink(missing_ok=True)
    (ws / f"{stem}.new.marker").unlink(missing_ok=True)
    path = ws / f"{stem}.task.xml"
    rewrite(path, ws / f"{stem}.old.marker")
    return path, ws / f"{stem}.old.marker", ws / f"{stem}.new.marker"


def task_name(path: Path) -> str:
    return "t_" + path.name.split(".")[0].replace("-", "_")


def rewrite(path: Path, marker: Path) -> None:
    path.write_text(script(marker.name, task_name(path)), encoding="utf-8")


def commands_shown(question: types.ShowMessageRequestParams) -> list[str]:
    return [line.strip() for line in question.message.splitlines() if line.strip().startswith("$ ")]


async def test_an_unchanged_plan_runs_after_consent_and_the_question_shows_it(asked, ws):
    client = asked
    path, old, _ = fresh(ws, f"same-{id(client)}")
    client.answers = [lambda: "Run"]
    result = await execute(client, path.as_uri())
    assert result["status"] == "COMPLETE"
    assert old.exists()
    [question] = client.questions
    assert [a.title for a in question.actions] == ["Run", ALWAYS, "Cancel"]
    lines = question.message.splitlines()
    assert lines[0] == f"Running '{task_name(path)}' ({path.name}) will:"
    assert lines[1:3] == [f"  run this shell command in {os.path.realpath(ws)}:", f"    $ touch {old.name}"]
    assert lines[-3] == "Asked because it executes shell commands."
    assert lines[-2].startswith("Plan ") and len(lines[-2]) == len("Plan ") + 32
    assert lines[-1] == "Run it? (set taskdsl.run.allowScripts in your user settings to skip this question)"


async def test_a_file_changed_on_disk_while_asked_is_asked_again_and_never_runs_unseen(asked, ws):
    client = asked
    path, old, new = fresh(ws, f"disk-{id(client)}")

    def edit_then_agree():
        rewrite(path, new)
        return "Run"

    client.answers = [edit_then_agree, lambda: "Cancel"]
    result = await execute(client, path.as_uri())
    assert result["status"] == "CANCELLED"
    assert result["error"]["reason"] == "declined"
    assert not old.exists() and not new.exists()
    first, second = client.questions
    assert commands_shown(first) == [f"$ touch {old.name}"]
    assert second.message.splitlines()[0] == PLAN_CHANGED_HEADER
    assert commands_shown(second) == [f"$ touch {new.name}"]


async def test_an_edit_in_the_editor_while_asked_runs_only_the_plan_agreed_to_next(asked, ws, docs):
    client = asked
    path, old, new = fresh(ws, f"buffer-{id(client)}")
    uri = await docs.open(path.name)

    def type_then_agree():
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=script(new.name, task_name(path)))]))
        return "Run"

    client.answers = [type_then_agree, lambda: "Run"]
    result = await execute(client, uri)
    docs.close(uri)
    assert result["status"] == "COMPLETE"
    assert not old.exists()  # the plan first agreed to never ran: the buffer had changed
    assert new.exists()  # the new plan ran once it was agreed to
    assert [commands_shown(q) for q in client.questions] == [[f"$ touch {old.name}"], [f"$ touch {new.name}"]]


async def test_a_library_file_changed_on_disk_while_asked_does_not_run(asked, ws):
    client = asked
    library = ws / "lib.task.xml"
    marker = ws / "called.lib.marker"
    marker.unlink(missing_ok=True)

    def edit_library_then_agree():
        library.write_text(LIBRARY.replace("{{name}}.lib.marker", "{{name}}.lib.marker; true"), encoding="utf-8")
        return "Run"

    client.answers = [edit_library_then_agree, lambda: "Cancel"]
    try:
        result = await execute(client, (ws / "calls.task.xml").as_uri())
    finally:
        library.write_text(LIBRARY, encoding="utf-8")
    assert result["status"] == "CANCELLED"
    assert not marker.exists()
    first, second = client.questions
    assert commands_shown(first) == ['$ touch "${TASKDSL_SUB_1}".lib.marker']
    assert commands_shown(second) == ['$ touch "${TASKDSL_SUB_1}".lib.marker; true']
    assert "        TASKDSL_SUB_1 = the value of {{name}}" in first.message.splitlines()


async def test_a_plan_that_changes_under_every_answer_is_refused(asked, ws):
    client = asked
    path, old, _ = fresh(ws, f"restless-{id(client)}")
    markers = [ws / f"restless-{id(client)}.{n}.marker" for n in range(4)]

    def edit_then_agree(n):
        def answer():
            rewrite(path, markers[n])
            return "Run"
        return answer

    client.answers = [edit_then_agree(n) for n in range(4)]
    result = await execute(client, path.as_uri())
    assert result["status"] == "CANCELLED"
    assert result["error"]["reason"] == "plan_changed"
    assert result["error"]["message"] == PLAN_CHANGED
    assert len(client.questions) == 3
    assert not old.exists() and not any(m.exists() for m in markers)
    assert any(m.message == f"taskdsl: {PLAN_CHANGED}" for m in client.messages)


async def test_always_run_this_plan_is_remembered_for_that_plan_only(asked, ws):
    client = asked
    path, old, new = fresh(ws, f"always-{id(client)}")
    client.answers = [lambda: ALWAYS]
    assert (await execute(client, path.as_uri()))["status"] == "COMPLETE"
    old.unlink()
    assert (await execute(client, path.as_uri()))["status"] == "COMPLETE"
    assert old.exists() and len(client.questions) == 1  # the same plan: not asked again
    rewrite(path, new)
    result = await execute(client, path.as_uri())  # a different plan: asked (and declined)
    assert result["status"] == "CANCELLED" and not new.exists()
    assert len(client.questions) == 2
    # the remembered plan comes with its inputs: other inputs are another plan
    rewrite(path, old)
    result = await execute(client, path.as_uri(), None, {"extra": "1"})
    assert result["status"] == "CANCELLED"
    assert len(client.questions) == 3


async def test_a_model_that_costs_money_asks_and_a_declined_run_calls_nothing(asked, ws):
    client = asked
    path = ws / f"paid-{id(client)}.task.xml"
    path.write_text(f'<task name="{task_name(path)}">\n  <description>Say hi</description>\n  <model>gpt-4o</model>\n</task>\n',
                    encoding="utf-8")
    result = await execute(client, path.as_uri())
    assert result["status"] == "CANCELLED" and result["steps"] == []
    [question] = client.questions
    assert "  call gpt-4o (priced)" in question.message.splitlines()
    assert any(line.startswith("    estimated cost: about $") for line in question.message.splitlines())
    assert "Asked because it calls a model that may cost money." in question.message.splitlines()
