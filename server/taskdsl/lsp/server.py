"""`taskdsl serve`: the pygls language server. ``TaskdslServer`` keeps the open documents,
settings and library (``Publishing`` from ``diagnostics`` and ``ProjectIndex`` from ``library``
are its parts); this module creates the one ``server``, answers initialize, wraps handlers in
``guarded``, and holds the entry point. Each LSP method is wired to a pure function of
``taskdsl.features`` in the handler modules (``documents``, ``editing``, ``commands``), which
import this module; the package's ``__init__`` imports them all, so importing any module of
``taskdsl.lsp`` registers every handler (and no module imports itself back).

Decisions (see docs/server.md):
- diagnostics are pushed (open and save at once, change debounced per document by
  ``taskdsl.debounce``) unless the client supports pull diagnostics, then only pulled;
- a result is published only for the document version it was computed from, and never over a
  newer one;
- a feature that raises is logged once (per feature) and answered with an empty result;
- initialize is answered before the checker, the rules and the features are imported
  (``taskdsl.support.lazy.OnFirstUse``); ``initialized`` imports them at once (``import_features``). No module of
  this package imports them at its top.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import re
import sys
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec

from taskdsl import __version__
from taskdsl.language.document import parse
from taskdsl.support.lazy import OnFirstUse
from taskdsl.features.util import ClientFeatures, Positions, path_to_uri, uri_to_path
from taskdsl.lsp.diagnostics import Publishing
from taskdsl.lsp.library import ProjectIndex, build_library, pull_settings, register_watchers
from taskdsl.lsp.state import Analysis, State, log
from taskdsl.project.workspace import read_text  # the one way a template is read from disk (same offsets as the index)

if TYPE_CHECKING:
    from taskdsl.rules.checker import CheckResult


# initialize is answered before the checker, the rules and the features are imported (the client
# waits for that answer); `initialized` imports them at once (import_features), before the first
# document arrives.
completion, formatting, hover, inlay, navigation, symbols = (
    OnFirstUse(f"taskdsl.features.{name}")
    for name in ("completion", "formatting", "hover", "inlay", "navigation", "symbols"))
checker = OnFirstUse("taskdsl.rules.checker")


def import_features() -> None:
    """What the first diagnostic and the first requests need; then keep the cyclic GC off it."""
    from taskdsl.support.gc_tuning import freeze_imports

    for name in ("taskdsl.rules.checker", "taskdsl.language.schema_check", *(f"taskdsl.features.{m}" for m in (
            "completion", "formatting", "hover", "inlay", "navigation", "symbols"))):
        importlib.import_module(name)
    freeze_imports()


DSL_ROOTS = ("task", "template", "library", "call", "cond")
RUN_TASK_COMMAND = "taskdsl.runTask"


class JsonRpcRequestFailed(JsonRpcException):
    """LSP RequestFailed: the request was valid but cannot be done (the message says why)."""

    CODE = -32803
    MESSAGE = "Request failed"



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


LARGE_DOCUMENT = 200_000  # characters: parsed and checked off the event loop (TaskdslServer.checked)


class TaskdslServer(Publishing, ProjectIndex, LanguageServer):
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
        if uri in self.workspace.text_documents:
            source = text_document.source
        else:  # not open: read from disk by the one reader (a link to /dev/zero is refused, never read whole)
            from taskdsl.project.workspace import read_source

            path = uri_to_path(uri)
            try:
                read = read_source(path) if path else None
            except OSError as error:
                raise DocumentUnavailable(f"{uri}: {error.strerror or error}") from None
            if read is None or read.refused:
                raise DocumentUnavailable(f"{uri}: {read.problem[1] if read else 'not a file'}")
            source = read.text
        version = text_document.version
        cached = self.state.analyses.get(uri)
        if cached is not None and cached.version == version and cached.document.text == source:
            return cached
        document = parse(source)
        analysis = Analysis(uri, version, document, Positions(document, self.codec()), uri_to_path(uri))
        self.state.analyses[uri] = analysis
        return analysis

    def checked_already(self, uri: str) -> bool:
        """Whether the document's diagnostics can be had at once: it is small, or its check is current."""
        text_document = self.workspace.get_text_document(uri)
        cached = self.state.analyses.get(uri)
        if cached is not None and cached.version == text_document.version and cached._result is not None \
                and cached.generation == self.state.generation:
            return True
        if uri not in self.workspace.text_documents:
            return True  # read from disk by the one reader, bounded: the analysis says what it found
        return len(text_document.source) < LARGE_DOCUMENT

    async def checked(self, uri: str) -> Analysis:
        """The document's analysis with its check done. A large document is parsed and checked in a
        worker thread, so the event loop keeps answering (and checking the other documents) meanwhile:
        one hostile document never holds up another's diagnostics."""
        if self.checked_already(uri):
            analysis = self.analysis(uri)
            self.check(analysis)
            return analysis
        if self.state.heavy is None:
            from concurrent.futures import ThreadPoolExecutor

            self.state.heavy = ThreadPoolExecutor(max_workers=1, thread_name_prefix="taskdsl-large")

        def work() -> Analysis:
            analysis = self.analysis(uri)
            self.check(analysis)
            return analysis

        return await asyncio.get_running_loop().run_in_executor(self.state.heavy, work)

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

    # -- failures ------------------------------------------------------------------------

    def log_failure(self, feature: str) -> None:
        if feature in self.state.failed:
            log.debug("%s failed again", feature, exc_info=True)
            return
        self.state.failed.add(feature)
        log.exception("%s failed; it answers empty and the server keeps running", feature)


server = TaskdslServer()


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
            ls.state.workspace_untrusted = client_options.get("workspaceTrusted") is False


@server.feature(types.INITIALIZED)
async def initialized(ls: TaskdslServer, params: types.InitializedParams) -> None:
    import_features()
    await pull_settings(ls)
    ls.load_config()
    await register_watchers(ls)
    await build_library(ls)



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
    from taskdsl.support import redaction
    from taskdsl.lsp import remote

    redaction.mask_logs()
    if getattr(args, "tcp", None):  # a socket: only a client holding the token is served (taskdsl.lsp.remote)
        remote.serve_tcp(server, *_host_port(args.tcp))
    elif getattr(args, "ws", None):
        remote.serve_ws(server, *_host_port(args.ws))
    else:
        server.start_io()
    return 0
