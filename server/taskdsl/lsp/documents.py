"""Handlers that keep the server's picture current: text synchronisation (didOpen, didChange,
didSave, didClose), the configuration and watched-file notifications, and the pulled
diagnostics (a document, and the workspace's files that are not open). They hand the work to
``diagnostics`` (publishing) and ``library`` (the index and the configuration)."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from taskdsl.project import config
from taskdsl.lsp.tests import result_stamp
from taskdsl.language.document import parse
from taskdsl.features.util import Positions, path_to_uri, uri_to_path
from taskdsl.lsp import memory
from taskdsl.lsp.diagnostics import is_config_uri
from taskdsl.lsp.library import pull_settings
from taskdsl.lsp.server import TaskdslServer, guarded, server
from taskdsl.lsp.state import Analysis
from taskdsl.project.workspace import read_text  # the one way a template is read from disk (same offsets as the index)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: TaskdslServer, params: types.DidChangeConfigurationParams) -> None:
    if not await pull_settings(ls):
        settings = params.settings
        section = settings.get("taskdsl") if isinstance(settings, dict) else None
        if isinstance(section, dict):
            ls.set_editor_settings(ls.state.editor_settings.updated(section))
    ls.state.generation += 1
    ls.recheck_open()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: TaskdslServer, params: types.DidChangeWatchedFilesParams) -> None:
    affected: list[str] = []
    for change in params.changes:
        path = uri_to_path(change.uri)
        if path is None or ls.is_open(change.uri):
            continue  # an open document's own edits are authoritative
        if config.is_config_file(path):
            ls.config_edited(change.uri, None)
            continue
        if memory.is_index_uri(ls, change.uri):  # the memory index: its own problems (lsp/memory.py)
            memory.publish_index(ls)
            continue
        if change.type == types.FileChangeType.Deleted:
            affected += ls.update_library(path, None, removed=True)
        else:
            library = ls.state.library
            if library is not None and not library.matches(path):
                continue  # discovery skips it (venv/, .gitignore, exclude…): as `taskdsl check` does
            text = read_text(path)
            if text is None:
                continue
            affected += ls.update_library(path, text)
    if affected:
        ls.recheck_open(sorted(set(affected)))


# -- text synchronisation ----------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: TaskdslServer, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_config_uri(uri):
        return ls.config_edited(uri, params.text_document.text)
    if memory.is_index_uri(ls, uri):
        return memory.publish_index(ls, params.text_document.text)
    affected = ls.update_library(uri_to_path(uri), params.text_document.text)
    ls.publish(uri, params.text_document.version)
    ls.recheck_open([u for u in affected if u != uri]) if affected else None


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TaskdslServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_config_uri(uri):
        return ls.config_edited(uri, ls.workspace.get_text_document(uri).source)
    if memory.is_index_uri(ls, uri):
        return memory.publish_index(ls, ls.workspace.get_text_document(uri).source)
    affected = ls.update_library(uri_to_path(uri), ls.workspace.get_text_document(uri).source)
    ls.schedule(uri, params.text_document.version)
    others = [u for u in affected if u != uri]
    if others:
        ls.recheck_open(others)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TaskdslServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_config_uri(uri) or memory.is_index_uri(ls, uri):
        return None
    pending = ls.state.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.publish(uri, None)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TaskdslServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls.state.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.state.analyses.pop(uri, None)
    ls.state.published.pop(uri, None)
    if is_config_uri(uri):
        return ls.config_edited(uri, None)  # back to the file on disk
    if memory.is_index_uri(ls, uri):
        return memory.publish_index(ls)  # back to the file on disk
    path = uri_to_path(uri)
    if path and ls.state.library is not None:  # back to what is on disk
        text = read_text(path)
        affected = ls.update_library(path, text, removed=text is None)
        if affected:
            ls.recheck_open(affected)
    if not ls.state.pull:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


# -- pull diagnostics --------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="taskdsl", inter_file_dependencies=True, workspace_diagnostics=True))
@guarded("diagnostics", lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
async def document_diagnostic(ls: TaskdslServer, params: types.DocumentDiagnosticParams):
    if is_config_uri(params.text_document.uri) or memory.is_index_uri(ls, params.text_document.uri):  # pushed
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    analysis = await ls.checked(params.text_document.uri)  # a large document: off the event loop
    result_id = f"{analysis.version}:{ls.state.generation}:{result_stamp(ls, analysis.uri)}"  # tests' failures too
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.lsp_diagnostics(analysis), result_id=result_id)


@server.feature(types.WORKSPACE_DIAGNOSTIC)
@guarded("workspaceDiagnostics", lambda: types.WorkspaceDiagnosticReport(items=[]))
async def workspace_diagnostic(ls: TaskdslServer, params: types.WorkspaceDiagnosticParams):
    """The workspace's files that are not open (open ones are pulled one by one), each checked
    against the library; a file whose text and library are unchanged since the client's last
    report is answered unchanged without checking it again."""
    from taskdsl.library import _stamp as file_stamp

    library = ls.state.library
    previous = {item.uri: item.value for item in params.previous_result_ids or []}
    items: list = []
    for path in sorted(getattr(library, "workspace_files", ())):
        uri = path_to_uri(path)
        if ls.is_open(uri):
            continue
        stamp = file_stamp(path)  # (mtime, size): unchanged files are answered unchanged
        if stamp is None:
            continue
        result_id = f"{ls.state.generation}:{stamp[0]}:{stamp[1]}"
        if previous.get(uri) == result_id:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=None, result_id=result_id))
            continue
        text = read_text(path)
        if text is None:
            continue
        document = parse(text)
        analysis = Analysis(uri, None, document, Positions(document, ls.codec()), path)
        items.append(types.WorkspaceFullDocumentDiagnosticReport(
            uri=uri, version=None, items=ls.lsp_diagnostics(analysis), result_id=result_id))
        await asyncio.sleep(0)  # let edits and requests in between files
    return types.WorkspaceDiagnosticReport(items=items)
