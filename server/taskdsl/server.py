"""`taskdsl serve`: the pygls language server. One thin module: it keeps the open documents,
settings and library, and wires each LSP method to a pure function of ``taskdsl.features``.

Decisions (see docs/server.md):
- diagnostics are pushed (open and save at once, change debounced per document by
  ``taskdsl.debounce``) unless the client supports pull diagnostics, then only pulled;
- a result is published only for the document version it was computed from, and never over a
  newer one;
- a feature that raises is logged once (per feature) and answered with an empty result.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import importlib
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec

from taskdsl import __version__, config
from taskdsl.document import Document, Span, parse
from taskdsl.features import actions  # light; its command is registered below
from taskdsl.features.util import ClientFeatures, Positions, path_to_uri, uri_to_path
from taskdsl.workspace import read_text  # the one way a template is read from disk (same offsets as the index)
from taskdsl.settings import Settings, overlay

if TYPE_CHECKING:
    from taskdsl.checker import CheckResult
    from taskdsl.diagnostics import Diagnostic

log = logging.getLogger("taskdsl.server")


class _OnFirstUse:
    """A module imported when first used. initialize is answered before the checker, the rules
    and the features are imported (the client waits for that answer); `initialized` imports them
    at once (import_features), before the first document arrives."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        return getattr(importlib.import_module(self._name), attribute)


completion, formatting, hover, inlay, navigation, symbols = (
    _OnFirstUse(f"taskdsl.features.{name}")
    for name in ("completion", "formatting", "hover", "inlay", "navigation", "symbols"))
checker = _OnFirstUse("taskdsl.checker")


def import_features() -> None:
    """What the first diagnostic and the first requests need; then keep the cyclic GC off it."""
    from taskdsl.gc_tuning import freeze_imports

    for name in ("taskdsl.checker", *(f"taskdsl.features.{m}" for m in (
            "completion", "formatting", "hover", "inlay", "navigation", "symbols"))):
        importlib.import_module(name)
    freeze_imports()


def _severity(severity) -> types.DiagnosticSeverity:
    return {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint,
            }.get(getattr(severity, "value", severity), types.DiagnosticSeverity.Error)
DSL_ROOTS = ("task", "template", "library", "call", "cond")
RUN_TASK_COMMAND = "taskdsl.runTask"  # issue 7: features/run.py


class JsonRpcRequestFailed(JsonRpcException):
    """LSP RequestFailed: the request was valid but cannot be done (the message says why)."""

    CODE = -32803
    MESSAGE = "Request failed"


@dataclass
class Analysis:
    """One version of one document: parsed at once, checked on demand (cached)."""

    uri: str
    version: int | None
    document: Document
    positions: Positions
    path: str | None
    _result: CheckResult | None = None
    generation: int = -1  # server generation (settings/library) the result was computed under


@dataclass
class State:
    settings: Settings = field(default_factory=Settings)  # the project's configuration with the editor's over it
    editor_settings: Settings = field(default_factory=Settings)  # the editor's alone
    config: Any = None  # taskdsl.config.Config of the first workspace folder's project
    config_published: str | None = None  # uri of the config file whose problems were last published
    client: ClientFeatures = field(default_factory=ClientFeatures)
    pull: bool = False
    library: Any = None
    generation: int = 0  # bumped when settings or the library change: cached checks are stale
    analyses: dict[str, Analysis] = field(default_factory=dict)
    published: dict[str, int | None] = field(default_factory=dict)  # uri -> version published
    pending: dict[str, asyncio.Task] = field(default_factory=dict)  # uri -> debounced check
    rechecks: dict[str, None] = field(default_factory=dict)  # open documents to re-check, oldest first
    recheck_worker: asyncio.Task | None = None
    failed: set[str] = field(default_factory=set)  # features that raised once already
    client_name: str | None = None  # clientInfo.name (eglot blocks on commands: runs answer at once)
    client_prompts_for_inputs: bool = False  # the client asks the user for missing run inputs itself
    warm_up: asyncio.Future | None = None  # the grammar model and litellm, built once diagnostics are out


class TaskdslProtocol(LanguageServerProtocol):
    """pygls 2.1 files the future of every notification whose handler is a generator (its own
    didOpen/didChange/didClose wrappers), a coroutine or a thread under a fresh uuid in
    ``_request_futures`` and never removes it: one finished Future (with its Condition and
    RLock) per edit, for the life of the server (bench/soak_server.py). Drop the finished ones
    after each notification; a request's own result callback still runs (it is on the future)."""

    def _handle_notification(self, method_name, params):
        super()._handle_notification(method_name, params)
        futures = self._request_futures
        for key in [key for key, future in futures.items() if future.done()]:
            futures.pop(key, None)


# LSP line breaks are \n, \r\n and \r only. pygls splits documents with str.splitlines, which
# also breaks at \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029: after an incremental edit below such
# a character, the server's copy of the document drifted from the editor's.
_LSP_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


class LspTextDocument(TextDocument):
    @property
    def lines(self):
        return tuple(_LSP_LINES.findall(self.source))


class LspWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self._position_codec)


class TaskdslServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("taskdsl", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=TaskdslProtocol)
        self.state = State()

    # -- documents -----------------------------------------------------------------------

    def codec(self) -> PositionCodec:
        try:
            return self.workspace.position_codec
        except Exception:  # before initialize
            return PositionCodec()

    def analysis(self, uri: str) -> Analysis:
        text_document = self.workspace.get_text_document(uri)
        try:
            source = text_document.source  # read from disk when the document is not open
        except OSError as error:
            raise DocumentUnavailable(f"{uri}: {error.strerror or error}") from None
        version = text_document.version
        cached = self.state.analyses.get(uri)
        if cached is not None and cached.version == version and cached.document.text == source:
            return cached
        document = parse(source)
        analysis = Analysis(uri, version, document, Positions(document, self.codec()), uri_to_path(uri))
        self.state.analyses[uri] = analysis
        return analysis

    def check(self, analysis: Analysis) -> CheckResult:
        if analysis._result is None or analysis.generation != self.state.generation:
            analysis._result = checker.check_document(
                analysis.document, path=analysis.path, library=self.state.library, settings=self.state.settings,
            )
            analysis.generation = self.state.generation
        return analysis._result

    def positions_for(self, path: str) -> Positions | None:
        """Positions of any file: the open document when it is open, else the file on disk."""
        uri = path_to_uri(path)
        if uri in self.workspace.text_documents:
            return self.analysis(uri).positions
        text = read_text(path)
        if text is None:
            return None
        document = parse(text)
        return Positions(document, self.codec())

    def is_open(self, uri: str) -> bool:
        return uri in self.workspace.text_documents

    # -- diagnostics ---------------------------------------------------------------------

    def lsp_diagnostics(self, analysis: Analysis) -> list[types.Diagnostic]:
        diagnostics = [to_lsp_diagnostic(d, analysis, self.positions_for, self.state.settings.rules_url)
                       for d in self.check(analysis).diagnostics]
        if self.state.warm_up is None:
            self.state.warm_up = asyncio.get_running_loop().create_future()  # once
            asyncio.get_running_loop().call_soon(self._start_warm_up)  # after this answer is out
        return diagnostics

    def _start_warm_up(self) -> None:
        """What a later request or run would otherwise wait for, built in a background thread:
        the grammar model (completion and hover) and litellm's import (runs with real models).
        Requests never wait for litellm; one that needs the grammar model while it is being built
        waits for that build only."""
        from taskdsl.evaluator import providers

        # a run that waits for litellm says so in the client's output, not on stderr (shown as errors)
        providers.wait_reporter = lambda message: self.window_log_message(
            types.LogMessageParams(types.MessageType.Info, f"taskdsl: {message}"))
        done = self.state.warm_up
        future = asyncio.get_running_loop().run_in_executor(None, warm_up)
        future.add_done_callback(lambda f: done.done() or done.set_result(f.exception() is None))

    def publish(self, uri: str, version: int | None) -> None:
        """Publish diagnostics of ``version`` — only if it is still the document's version."""
        if self.state.pull or not self.is_open(uri) or is_config_uri(uri):
            return
        analysis = self.analysis(uri)
        if version is not None and analysis.version != version:
            return  # a newer version is on its way
        last = self.state.published.get(uri)
        if last is not None and analysis.version is not None and analysis.version < last:
            return
        diagnostics = self.lsp_diagnostics(analysis)
        if self.analysis(uri) is not analysis:
            return
        self.state.published[uri] = analysis.version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=analysis.version)
        )

    def schedule(self, uri: str, version: int | None) -> None:
        """Debounced publish for an edit; a newer edit cancels the pending one."""
        pending = self.state.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        if self.state.pull:
            return
        delay = self.state.settings.debounce_ms / 1000

        async def later() -> None:
            try:
                await asyncio.sleep(delay)
                self.state.pending.pop(uri, None)
                self.publish(uri, version)
            except asyncio.CancelledError:
                pass
            except Exception:
                self.log_failure("diagnostics")

        self.state.pending[uri] = asyncio.get_running_loop().create_task(later())

    def recheck_open(self, uris: list[str] | None = None) -> None:
        """After a settings or library change: re-publish (push) or ask for a refresh (pull).

        Pushed re-checks are queued, never done here: the handler that changed a definition
        answers (and the document it concerns is published) first; the queue then re-checks one
        document per turn of the event loop, so a request that arrives meanwhile is not held up
        by all of them. A document queued twice is checked once, at its newest version."""
        if self.state.pull:
            workspace = self.client_capabilities.workspace
            if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)
            return
        for uri in uris if uris is not None else list(self.workspace.text_documents):
            self.state.rechecks[uri] = None
        worker = self.state.recheck_worker
        if self.state.rechecks and (worker is None or worker.done()):
            self.state.recheck_worker = asyncio.get_running_loop().create_task(self._run_rechecks())

    async def _run_rechecks(self) -> None:
        await asyncio.sleep(self.state.settings.debounce_ms / 1000)  # a burst of edits is re-checked once
        rechecks = self.state.rechecks
        while rechecks:
            uri = next(iter(rechecks))
            del rechecks[uri]
            try:
                if self.is_open(uri):
                    self.publish(uri, None)
            except Exception:
                self.log_failure("diagnostics")
            await asyncio.sleep(0)  # let waiting requests and notifications in between documents

    # -- library -------------------------------------------------------------------------

    def roots(self) -> list[str]:
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return [f for f in folders if f]

    def update_library(self, path: str | None, text: str | None, *, removed: bool = False) -> list[str]:
        """Update one file's entries; the open documents (uris) whose references changed."""
        library = self.state.library
        if library is None or path is None:
            return []
        try:
            affected = library.remove_file(path) if removed else library.update_file(path, text)
        except Exception:
            self.log_failure("library")
            return []
        self.state.generation += 1
        affected_uris = {path_to_uri(str(p)) for p in (affected or [])}
        return [uri for uri in self.workspace.text_documents if uri in affected_uris]

    # -- project configuration (taskdsl.toml / [tool.taskdsl]) ------------------------------

    def set_editor_settings(self, editor: Settings) -> None:
        self.state.editor_settings = editor
        self.state.settings = overlay(config.project_settings(self.state.config), editor) \
            if self.state.config is not None else editor

    def load_config(self, unsaved: dict[str, str] | None = None) -> bool:
        """(Re)read the project's configuration (an open buffer wins over the file) and publish its
        problems. True when the settings changed."""
        roots = self.roots()
        if not roots:
            return False
        try:
            self.state.config = config.load_config(config.project_root(roots[0]), unsaved)
        except Exception:
            self.log_failure("configuration")
            return False
        before = self.state.settings
        self.set_editor_settings(self.state.editor_settings)
        self.publish_config()
        changed = self.state.settings != before
        if changed:
            self.state.generation += 1
        return changed

    def publish_config(self) -> None:
        """The config file's problems, always pushed (a client pulls only for templates)."""
        current = self.state.config
        uri = path_to_uri(str(current.path)) if current is not None and current.path is not None else None
        if self.state.config_published and self.state.config_published != uri:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=self.state.config_published, diagnostics=[]))
        self.state.config_published = uri
        if uri is None:
            return
        document = Document(current.text)  # positions only: the file is TOML
        analysis = Analysis(uri, None, document, Positions(document, self.codec()), str(current.path))
        diagnostics = [to_lsp_diagnostic(d, analysis, self.positions_for) for d in current.problems]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def config_edited(self, uri: str, text: str | None) -> None:
        """A config file was opened, edited, saved or closed: read it again, re-check what it changes."""
        path = uri_to_path(uri)
        roots = self.roots()
        if not path or not roots or os.path.dirname(path) != str(config.project_root(roots[0])):
            return  # another folder's file: not this project's configuration
        before = self.state.settings
        self.load_config({path: text} if text is not None else None)
        if self.state.settings != before:
            library_inputs = ("files", "library_paths", "exclude")
            if any(getattr(before, k) != getattr(self.state.settings, k) for k in library_inputs):
                asyncio.ensure_future(build_library(self))
            else:
                self.recheck_open()

    # -- failures ------------------------------------------------------------------------

    def log_failure(self, feature: str) -> None:
        if feature in self.state.failed:
            log.debug("%s failed again", feature, exc_info=True)
            return
        self.state.failed.add(feature)
        log.exception("%s failed; it answers empty and the server keeps running", feature)


server = TaskdslServer()


def warm_up() -> None:
    from taskdsl import schema
    from taskdsl.evaluator import providers

    try:
        schema.model()
    except Exception:
        log.warning("the grammar model could not be built ahead of time", exc_info=True)
    providers.preload_litellm()
    providers.wait_for_litellm()
    # litellm's ~100k import-time objects live as long as the server: keep the cyclic GC off them
    # (the checker's and the library's are frozen the same way)
    gc.freeze()


class DocumentUnavailable(Exception):
    """A request about a document that is neither open nor readable: answered empty, not a fault."""


def guarded(feature: str, empty: Any = None) -> Callable:
    """An exception in a feature is logged once and answered with ``empty``."""

    def wrap(handler: Callable) -> Callable:
        if asyncio.iscoroutinefunction(handler):
            @functools.wraps(handler)
            async def run_async(ls: TaskdslServer, params):
                try:
                    return await handler(ls, params)
                except JsonRpcException:
                    raise
                except DocumentUnavailable as gone:
                    log.info("%s: %s", feature, gone)
                    return empty() if callable(empty) else empty
                except Exception:
                    ls.log_failure(feature)
                    return empty() if callable(empty) else empty

            return run_async

        @functools.wraps(handler)
        def run(ls: TaskdslServer, params):
            try:
                return handler(ls, params)
            except JsonRpcException:
                raise  # a deliberate error answer (a refused rename)
            except DocumentUnavailable as gone:
                log.info("%s: %s", feature, gone)
                return empty() if callable(empty) else empty
            except Exception:
                ls.log_failure(feature)
                return empty() if callable(empty) else empty

        return run

    return wrap


# -- conversions -------------------------------------------------------------------------------


def is_config_uri(uri: str) -> bool:
    """taskdsl.toml or pyproject.toml: never checked as a template."""
    path = uri_to_path(uri)
    return bool(path) and config.is_config_file(path)


def to_lsp_diagnostic(d: Diagnostic, analysis: Analysis, positions_for, rules_url: str | None = None) -> types.Diagnostic:
    positions = analysis.positions
    related = []
    for item in d.related:
        if item.path is None and item.span is not None:
            related.append(types.DiagnosticRelatedInformation(
                types.Location(analysis.uri, positions.range(item.span)), item.message))
        elif item.path is not None:
            other = positions_for(item.path)
            if item.span is not None and other is not None:
                range_ = other.range(item.span)
            elif item.range is not None and other is not None:
                (l1, c1), (l2, c2) = item.range
                range_ = other.range(Span(other.doc.offset(l1, c1), other.doc.offset(l2, c2)))
            else:
                range_ = types.Range(types.Position(0, 0), types.Position(0, 0))
            related.append(types.DiagnosticRelatedInformation(types.Location(path_to_uri(item.path), range_), item.message))
    data = None
    if d.fixes:
        data = {"fixes": [
            {"title": fix.title, "edits": [
                {"range": _range_json(positions.range(e.span)), "newText": e.new_text} for e in fix.edits]}
            for fix in d.fixes]}
    return types.Diagnostic(
        range=positions.range(d.span),
        message=d.message,
        severity=_severity(d.severity),
        code=d.code,
        code_description=_code_description(d.code, rules_url),
        source="taskdsl",
        related_information=related or None,
        data=data,
    )


def _code_description(code: str, rules_url: str | None) -> types.CodeDescription | None:
    """The link to the code's rule page (``docs.rulesUrl``, else the pages installed with taskdsl)."""
    from taskdsl import rule_pages  # imports the rules: not before the first check needs them

    href = rule_pages.href(code, rules_url)
    return types.CodeDescription(href=href) if href else None


def _range_json(r: types.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


# -- lifecycle ---------------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def initialize(ls: TaskdslServer, params: types.InitializeParams) -> None:
    ls.workspace.__class__ = LspWorkspace  # pygls built it just before this handler; same state
    ls.state.client = ClientFeatures.from_capabilities(params.capabilities)
    ls.state.pull = bool(params.capabilities.text_document and params.capabilities.text_document.diagnostic)
    ls.state.client_name = params.client_info.name if params.client_info else None
    options = params.initialization_options
    if isinstance(options, dict):
        ls.set_editor_settings(ls.state.editor_settings.updated(options.get("taskdsl", options)))
        client_options = options.get("client")
        if isinstance(client_options, dict):
            ls.state.client_prompts_for_inputs = client_options.get("promptsForMissingInputs") is True


@server.feature(types.INITIALIZED)
async def initialized(ls: TaskdslServer, params: types.InitializedParams) -> None:
    import_features()
    await pull_settings(ls)
    ls.load_config()
    await register_watchers(ls)
    await build_library(ls)


async def pull_settings(ls: TaskdslServer) -> bool:
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return False
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="taskdsl")]))
    except Exception:
        log.warning("workspace/configuration failed; keeping the current settings", exc_info=True)
        return False
    section = result[0] if result else None
    editor = ls.state.editor_settings.updated(section) if isinstance(section, dict) else ls.state.editor_settings
    before = ls.state.settings
    ls.set_editor_settings(editor)
    return ls.state.settings != before


async def register_watchers(ls: TaskdslServer) -> None:
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in ls.state.settings.files]
    watchers += [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in config.CONFIG_NAMES]
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
            id="taskdsl-watch-templates", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception:
        log.warning("the client refused the file watcher; the library follows open documents only")


async def build_library(ls: TaskdslServer) -> None:
    try:
        from taskdsl import library as library_module
    except ImportError:
        return
    window = ls.client_capabilities.window
    token = None
    if window and window.work_done_progress:
        token = f"taskdsl-index-{id(ls)}-{ls.state.generation}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="taskdsl: indexing templates", percentage=0))
        except Exception:
            token = None
    try:
        roots = ls.roots()  # discovery adds the settings' libraryPaths (workspace.discover)
        loop = asyncio.get_running_loop()
        ls.state.library = await loop.run_in_executor(
            None, functools.partial(library_module.Library.from_paths, roots, settings=ls.state.settings))
        for uri in list(ls.workspace.text_documents):  # open documents win over their files on disk
            path = uri_to_path(uri)
            if path and not config.is_config_file(path):
                ls.state.library.update_file(path, ls.workspace.get_text_document(uri).source)
        ls.state.generation += 1
        # The index lives as long as the server: keep the cyclic GC from walking it on every full
        # collection (a 5,000-template index is most of the heap). It holds no reference cycles,
        # and reference counting still frees whatever a later update replaces.
        gc.collect()
        gc.freeze()
    except Exception:
        ls.log_failure("library")
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="indexed"))
    ls.recheck_open()


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
    affected = ls.update_library(uri_to_path(uri), params.text_document.text)
    ls.publish(uri, params.text_document.version)
    ls.recheck_open([u for u in affected if u != uri]) if affected else None


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TaskdslServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_config_uri(uri):
        return ls.config_edited(uri, ls.workspace.get_text_document(uri).source)
    affected = ls.update_library(uri_to_path(uri), ls.workspace.get_text_document(uri).source)
    ls.schedule(uri, params.text_document.version)
    others = [u for u in affected if u != uri]
    if others:
        ls.recheck_open(others)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TaskdslServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if is_config_uri(uri):
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
def document_diagnostic(ls: TaskdslServer, params: types.DocumentDiagnosticParams):
    if is_config_uri(params.text_document.uri):  # its problems are pushed (publish_config)
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    analysis = ls.analysis(params.text_document.uri)
    ls.check(analysis)
    result_id = f"{analysis.version}:{ls.state.generation}"
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


# -- features ----------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=["<", "/", " ", '"', "{", "."]))
@guarded("completion", lambda: types.CompletionList(is_incomplete=False, items=[]))
def on_completion(ls: TaskdslServer, params: types.CompletionParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return completion.complete(analysis.document, offset, analysis.positions, client=ls.state.client,
                               library=ls.state.library, settings=ls.state.settings, path=analysis.path)


@server.feature(types.TEXT_DOCUMENT_HOVER)
@guarded("hover")
def on_hover(ls: TaskdslServer, params: types.HoverParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return hover.hover(analysis.document, offset, analysis.positions, client=ls.state.client,
                       library=ls.state.library, settings=ls.state.settings, positions_for=ls.positions_for)


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
@guarded("definition")
def on_definition(ls: TaskdslServer, params: types.DefinitionParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return navigation.definition(analysis.document, offset, analysis.uri, analysis.positions,
                                 library=ls.state.library, positions_for=ls.positions_for,
                                 settings=ls.state.settings) or None


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
@guarded("references")
def on_references(ls: TaskdslServer, params: types.ReferenceParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    return navigation.references(analysis.document, offset, analysis.uri, analysis.positions,
                                 include_declaration=params.context.include_declaration,
                                 library=ls.state.library, positions_for=ls.positions_for,
                                 settings=ls.state.settings) or None


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
@guarded("prepareRename")
def on_prepare_rename(ls: TaskdslServer, params: types.PrepareRenameParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    try:
        return navigation.prepare_rename(analysis.document, offset, analysis.positions, library=ls.state.library,
                                         settings=ls.state.settings, uri=analysis.uri,
                                         positions_for=ls.positions_for)
    except navigation.RenameError as refused:
        raise JsonRpcRequestFailed(str(refused)) from None


@server.feature(types.TEXT_DOCUMENT_RENAME)
@guarded("rename")
def on_rename(ls: TaskdslServer, params: types.RenameParams):
    analysis = ls.analysis(params.text_document.uri)
    offset = analysis.positions.offset(params.position)
    try:
        return _rename(ls, analysis, offset, params)
    except navigation.RenameError as refused:
        raise JsonRpcRequestFailed(str(refused)) from None


def _rename(ls: TaskdslServer, analysis: Analysis, offset: int, params: types.RenameParams):
    return navigation.rename(analysis.document, offset, params.new_name, analysis.uri, analysis.positions,
                             client=ls.state.client, library=ls.state.library, positions_for=ls.positions_for,
                             settings=ls.state.settings,
                             version_of=lambda uri: ls.workspace.get_text_document(uri).version if ls.is_open(uri) else None)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@guarded("documentSymbol", list)
def on_document_symbol(ls: TaskdslServer, params: types.DocumentSymbolParams):
    analysis = ls.analysis(params.text_document.uri)
    if ls.state.client.hierarchical_symbols:
        return symbols.document_symbols(analysis.document, analysis.positions)
    return symbols.flat_symbols(analysis.document, analysis.positions, analysis.uri)


@server.feature(types.WORKSPACE_SYMBOL)
@guarded("workspaceSymbol", list)
def on_workspace_symbol(ls: TaskdslServer, params: types.WorkspaceSymbolParams):
    return symbols.workspace_symbols(ls.state.library, params.query, ls.positions_for)


@server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
@guarded("foldingRange", list)
def on_folding_range(ls: TaskdslServer, params: types.FoldingRangeParams):
    analysis = ls.analysis(params.text_document.uri)
    return symbols.folding_ranges(analysis.document, ls.state.client.line_folding_only)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
@guarded("documentLink", list)
def on_document_link(ls: TaskdslServer, params: types.DocumentLinkParams):
    analysis = ls.analysis(params.text_document.uri)
    return symbols.document_links(analysis.document, analysis.positions, analysis.path, ls.state.client.link_tooltips)


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix,
                                                           types.CodeActionKind.RefactorExtract,
                                                           actions.FIX_ALL_KIND]))
@guarded("codeAction", list)
def on_code_action(ls: TaskdslServer, params: types.CodeActionParams):
    analysis = ls.analysis(params.text_document.uri)
    result = ls.check(analysis)
    return actions.code_actions(analysis.document, analysis.positions, analysis.uri, params.range,
                                result.diagnostics, params.context, client=ls.state.client,
                                version=analysis.version, path=analysis.path, library=ls.state.library,
                                settings=ls.state.settings,
                                lsp_of=lambda d: to_lsp_diagnostic(d, analysis, ls.positions_for, ls.state.settings.rules_url))


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
        with open(plan.path, "x", encoding="utf-8") as handle:  # never over an existing file
            handle.write(plan.text)
        ls.update_library(plan.path, plan.text)
        edit = navigation.workspace_edit(
            {uri: [types.TextEdit(analysis.positions.range(plan.replace), plan.replacement)]}, ls.state.client,
            lambda _: analysis.version)
        await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=actions.EXTRACT_TITLE))
        return plan.path
    except Exception:
        ls.log_failure("extractTask")
        return None


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
@guarded("inlayHint", list)
def on_inlay_hint(ls: TaskdslServer, params: types.InlayHintParams):
    analysis = ls.analysis(params.text_document.uri)
    return inlay.inlay_hints(analysis.document, analysis.positions, analysis.positions.span(params.range))


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
@guarded("formatting", list)
def on_formatting(ls: TaskdslServer, params: types.DocumentFormattingParams):
    analysis = ls.analysis(params.text_document.uri)
    return formatting.format_document(analysis.document, analysis.positions, params.options)


@server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)
@guarded("rangeFormatting", list)
def on_range_formatting(ls: TaskdslServer, params: types.DocumentRangeFormattingParams):
    analysis = ls.analysis(params.text_document.uri)
    return formatting.format_range(analysis.document, analysis.positions, params.range, params.options)


@server.command("taskdsl.revalidateAll")
async def revalidate_all(ls: TaskdslServer, *args: Any):
    """Re-read the settings, re-index the workspace library and re-check every open document."""
    await pull_settings(ls)
    await build_library(ls)
    return {"documents": len(ls.workspace.text_documents)}


# -- run (issue 7): the taskdsl.runTask command and its code lens ----------------------------------

from taskdsl.features.run import register_run  # noqa: E402
from taskdsl.authoring.preview_lsp import register_preview  # noqa: E402

register_preview(server, register_run(server))

from taskdsl.features.match import register_match  # noqa: E402  (taskdsl.matchTasks)

register_match(server)


# -- entry point -------------------------------------------------------------------------------


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    return host or "127.0.0.1", int(port)


def main(args: Any = None) -> int:
    """Run the server: stdio by default, ``args.tcp`` / ``args.ws`` = "HOST:PORT"."""
    level = str(getattr(args, "log_level", None) or "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="taskdsl %(levelname)s %(name)s: %(message)s")
    if level != "DEBUG":
        # clients cancel requests all the time; pygls warns about each one it already answered,
        # and every client shows the server's stderr as errors
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.ERROR)
    from taskdsl import redaction, remote

    redaction.mask_logs()
    if getattr(args, "tcp", None):  # a socket: only a client holding the token is served (taskdsl.remote)
        remote.serve_tcp(server, *_host_port(args.tcp))
    elif getattr(args, "ws", None):
        remote.serve_ws(server, *_host_port(args.ws))
    else:
        server.start_io()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
