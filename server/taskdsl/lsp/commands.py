"""The server's workspace commands: ``taskdsl.extractTask`` (extraction for clients without
CreateFile), ``taskdsl.revalidateAll`` (settings, index and open documents anew), the run
(``taskdsl.runTask`` and its code lens, registered by ``taskdsl.lsp.run``) and
``taskdsl.matchTasks`` (the library's templates ranked against a request, registered by
``taskdsl.features.match``) and ``taskdsl.previewPrompt`` (the prompts a run would send,
registered by ``taskdsl.lsp.preview`` over the run command's live index and buffers),
``taskdsl.graph`` (authoring.graph_lsp) and ``taskdsl.newTask`` (authoring.new_task_lsp)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from taskdsl.lsp.graph import register_graph
from taskdsl.lsp.new_task import register_new_task
from taskdsl.lsp.preview import register_preview
from taskdsl.lsp.tests import register_tests
from taskdsl.features import actions
from taskdsl.features.match import register_match
from taskdsl.lsp.run import register_run
from taskdsl.lsp.library import build_library, pull_settings
from taskdsl.lsp.server import TaskdslServer, navigation, server


@server.command(actions.EXTRACT_COMMAND)
async def extract_task(ls: TaskdslServer, uri: str, version: Any = None, start: Any = 0):
    """Extraction for clients without CreateFile: write the new file here, then edit the document."""
    try:
        analysis = ls.analysis(uri)
        if version is not None and analysis.version != version:
            return None  # the document changed since the action was offered
        task = actions.inline_task_at(analysis.document, int(start))
        if task is None or analysis.path is None:
            return None
        plan = actions.plan_extraction(analysis.document, task, analysis.path, ls.state.library)
        from taskdsl.project.workspace import project_root
        from taskdsl.support import files

        # the one writer: never over an existing file, never through a link on the way from the project's root
        files.create_new(plan.path, plan.text, root=project_root(analysis.path))
        ls.update_library(plan.path, plan.text)
        edit = navigation.workspace_edit(
            {uri: [types.TextEdit(analysis.positions.range(plan.replace), plan.replacement)]}, ls.state.client,
            lambda _: analysis.version)
        await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=actions.EXTRACT_TITLE))
        return plan.path
    except Exception:
        ls.log_failure("extractTask")
        return None


@server.command("taskdsl.revalidateAll")
async def revalidate_all(ls: TaskdslServer, *args: Any):
    """Re-read the settings, re-index the workspace library and re-check every open document."""
    await pull_settings(ls)
    await build_library(ls)
    return {"documents": len(ls.workspace.text_documents)}


# -- run: the taskdsl.runTask command and its code lens; the prompt preview --------------------

runs = register_run(server)
register_preview(server, runs)
register_graph(server, runs)  # taskdsl.graph: the task tree (with a run's steps on it)
register_new_task(server, runs)  # taskdsl.newTask: a checked task from plain words, not run
register_tests(server, runs)  # taskdsl.runTest: the tests of a *.test.xml file, failures as diagnostics

# -- taskdsl.matchTasks ------------------------------------------------------------------------

register_match(server)
