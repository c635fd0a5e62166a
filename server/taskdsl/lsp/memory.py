"""The memory index in the editor: the project's index file (`.taskdsl/memory.json`, or `[memory]
index`) is checked as the configuration is (taskdsl.project.memory_index: TD906 not an object of
strings, TD907 a path naming no file, TD908 a path outside the project) and its problems are always
pushed; when the index appears or goes, the open templates are checked again (TD308)."""

from __future__ import annotations

from lsprotocol import types

from taskdsl.features.util import Positions, path_to_uri
from taskdsl.language.document import Document
from taskdsl.project import memory_index

from taskdsl.lsp.state import memory_index_location as location  # noqa: F401  (asked here too)
from taskdsl.lsp.state import is_memory_index_uri as is_index_uri  # noqa: F401


def publish_index(ls, text: str | None = None) -> None:
    """The index file's problems (an open buffer's `text` over the file on disk), always pushed;
    an empty list when there is no index."""
    from taskdsl.lsp.diagnostics import to_lsp_diagnostic
    from taskdsl.lsp.state import Analysis

    found = location(ls)
    if found is None:
        return
    root, path = found
    index = memory_index.load(path, root, text)
    exists = index.exists
    if getattr(ls.state, "memory_index_exists", None) not in (None, exists):
        ls.state.generation += 1
        ls.recheck_open()  # TD308 depends on whether the index exists
    ls.state.memory_index_exists = exists
    uri = path_to_uri(path)
    document = Document(index.text)  # positions only: the file is JSON
    analysis = Analysis(uri, None, document, Positions(document, ls.codec()), path)
    diagnostics = [to_lsp_diagnostic(d, analysis, ls.positions_for, ls.state.settings.rules_url)
                   for d in index.problems]
    if diagnostics or exists or ls.state.memory_index_published:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        ls.state.memory_index_published = bool(diagnostics)
