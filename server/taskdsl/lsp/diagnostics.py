"""Diagnostics out of the server: pushed (open and save at once, an edit debounced per document),
published only for the version they were computed from and never over a newer one; the
re-check queue after a settings or library change (one document per turn of the event loop);
the project configuration's problems (always pushed); the background warm-up that follows the
first diagnostics; and the conversion of a ``taskdsl.language.diagnostics.Diagnostic`` into LSP's
(``to_lsp_diagnostic``). ``Publishing`` is a part of ``TaskdslServer``; the pulled diagnostics'
handlers are in ``documents``."""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING

from lsprotocol import types

from taskdsl.project import config
from taskdsl.language.document import Document, Span
from taskdsl.features.util import Positions, path_to_uri, uri_to_path
from taskdsl.lsp.state import is_memory_index_uri as is_index_uri
from taskdsl.lsp.state import Analysis, log

if TYPE_CHECKING:
    from taskdsl.language.diagnostics import Diagnostic


class Publishing:
    """The diagnostics half of ``TaskdslServer`` (it holds the state, documents and checks)."""

    def lsp_diagnostics(self, analysis: Analysis) -> list[types.Diagnostic]:
        from taskdsl.lsp.tests import test_diagnostics

        found = self.check(analysis).diagnostics
        if self.state.indexing:  # what the library decides (TD5xx) waits for the index: no false TD501
            found = [d for d in found if not d.code.startswith("TD5")]
        shown = capped(found)
        diagnostics = [to_lsp_diagnostic(d, analysis, self.positions_for, self.state.settings.rules_url)
                       for d in shown] + test_diagnostics(self, analysis)
        if len(shown) < len(found):
            diagnostics.append(more_diagnostic(len(found) - len(shown), analysis))
        if self.state.warm_up is None:
            self.state.warm_up = asyncio.get_running_loop().create_future()  # once
            asyncio.get_running_loop().call_soon(self._start_warm_up)  # after this answer is out
        return diagnostics

    def _start_warm_up(self) -> None:
        """What a later request or run would otherwise wait for, built in a background thread:
        the grammar model (completion and hover) and litellm's import (runs with real models).
        Requests never wait for litellm; one that needs the grammar model while it is being built
        waits for that build only."""
        self.report_litellm_waits()
        done = self.state.warm_up
        future = asyncio.get_running_loop().run_in_executor(None, warm_up)
        future.add_done_callback(lambda f: done.done() or done.set_result(f.exception() is None))

    def report_litellm_waits(self) -> None:
        """A run that waits for litellm says so in the client's output, not on stderr (shown as errors)."""
        from taskdsl.evaluator import providers

        providers.wait_reporter = lambda message: self.window_log_message(
            types.LogMessageParams(types.MessageType.Info, f"taskdsl: {message}"))

    def publish(self, uri: str, version: int | None) -> None:
        """Publish diagnostics of ``version`` — only if it is still the document's version."""
        if self.state.pull or not self.is_open(uri) or is_config_uri(uri) or is_index_uri(self, uri):
            return
        if not self.checked_already(uri):  # a large document: parsed and checked off the event loop first
            asyncio.get_running_loop().create_task(self._publish_when_checked(uri, version))
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

    async def _publish_when_checked(self, uri: str, version: int | None) -> None:
        try:
            analysis = await self.checked(uri)
        except Exception:
            self.log_failure("diagnostics")
            return
        if self.is_open(uri) and (version is None or analysis.version == version) and self.checked_already(uri):
            self.publish(uri, version)

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


def warm_up() -> None:
    from taskdsl.language import schema
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


# -- conversions -------------------------------------------------------------------------------


def _severity(severity) -> types.DiagnosticSeverity:
    return {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint,
            }.get(getattr(severity, "value", severity), types.DiagnosticSeverity.Error)


def is_config_uri(uri: str) -> bool:
    """taskdsl.toml or pyproject.toml: never checked as a template."""
    path = uri_to_path(uri)
    return bool(path) and config.is_config_file(path)


MAX_DIAGNOSTICS = 500  # per document: an editor cannot show more usefully, and each costs the server work


def capped(found: list) -> list:
    """At most MAX_DIAGNOSTICS of found, errors first, each kept in document order."""
    if len(found) <= MAX_DIAGNOSTICS:
        return list(found)
    ranked = sorted(range(len(found)), key=lambda i: (found[i].severity.value != "error", i))[:MAX_DIAGNOSTICS]
    return [found[i] for i in sorted(ranked)]


def more_diagnostic(count: int, analysis: Analysis) -> types.Diagnostic:
    """The last diagnostic of a capped list: how many more there are and where to see them all."""
    return types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        message=f"{count:,} more diagnostics are not shown (at most {MAX_DIAGNOSTICS} per document); "
                f"`taskdsl check` lists them all",
        severity=types.DiagnosticSeverity.Information, source="taskdsl")


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
    from taskdsl.rules import pages as rule_pages  # imports the rules: not before the first check needs them

    href = rule_pages.href(code, rules_url)
    return types.CodeDescription(href=href) if href else None


def _range_json(r: types.Range) -> dict:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}
