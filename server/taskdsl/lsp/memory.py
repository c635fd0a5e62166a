"""The memory index in the editor: the project's index file (`.taskdsl/memory.json`, or `[memory]
index`) is checked as the configuration is (taskdsl.project.memory_index: TD906 not an object of
strings, TD907 a path naming no file, TD908 a path outside the project) and its problems are always
pushed; when the index appears or goes, the open templates are checked again (TD308)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types

from taskdsl.features.util import Positions, path_to_uri, uri_to_path
from taskdsl.language.document import Document
from taskdsl.project import memory_index

if TYPE_CHECKING:
    from taskdsl.lsp.server import TaskdslServer


def location(ls: TaskdslServer) -> tuple[str, str] | None:
    """(project root, index file) of the workspace's project."""
    from taskdsl.project.workspace import project_root

    roots = ls.roots()
    if not roots:
        return None
    root = ls.state.settings.project_root or project_root(roots[0])
    return root, memory_index.index_path(root, ls.state.settings)


def is_index_uri(ls: TaskdslServer, uri: str) -> bool:
    path = uri_to_path(uri)
    found = location(ls) if path else None
    return found is not None and os.path.abspath(path) == found[1]


def publish_index(ls: TaskdslServer, text: str | None = None) -> None:
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
