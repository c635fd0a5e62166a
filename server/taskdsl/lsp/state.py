"""What the language server keeps: one ``Analysis`` per version of a document (parsed at once,
checked on demand) and the server's ``State`` (settings, client features, the library, caches of
analyses and published versions, pending and queued checks). Plain data, no LSP handlers; every
module of the server logs to the one ``taskdsl.server`` logger defined here."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from taskdsl.language.document import Document
from taskdsl.features.util import ClientFeatures, Positions
from taskdsl.project.settings import Settings

if TYPE_CHECKING:
    from taskdsl.rules.checker import CheckResult

log = logging.getLogger("taskdsl.server")


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
    config: Any = None  # taskdsl.project.config.Config of the first workspace folder's project
    config_published: str | None = None  # uri of the config file whose problems were last published
    memory_index_exists: bool | None = None  # whether the project's memory index exists (lsp/memory.py)
    memory_index_published: bool = False  # problems of the memory index were last published
    client: ClientFeatures = field(default_factory=ClientFeatures)
    pull: bool = False
    library: Any = None
    indexing: bool = True  # until the first index is built: library-dependent diagnostics (TD5xx) are held
    generation: int = 0  # bumped when settings or the library change: cached checks are stale
    analyses: dict[str, Analysis] = field(default_factory=dict)
    published: dict[str, int | None] = field(default_factory=dict)  # uri -> version published
    pending: dict[str, asyncio.Task] = field(default_factory=dict)  # uri -> debounced check
    rechecks: dict[str, None] = field(default_factory=dict)  # open documents to re-check, oldest first
    recheck_worker: asyncio.Task | None = None
    failed: set[str] = field(default_factory=set)  # features that raised once already
    client_name: str | None = None  # clientInfo.name (eglot blocks on commands: runs answer at once)
    client_prompts_for_inputs: bool = False  # the client asks the user for missing run inputs itself
    # the client said its workspace is not trusted (initializationOptions.client.workspaceTrusted = false):
    # no command runs a template or asks a model (lsp/run.py Runs.untrusted)
    workspace_untrusted: bool = False
    warm_up: asyncio.Future | None = None  # the grammar model and litellm, built once diagnostics are out
    heavy: Any = None  # the worker thread large documents are parsed and checked in (TaskdslServer.checked)


def memory_index_location(ls) -> tuple[str, str] | None:
    """(project root, memory index file) of the workspace's project (lsp/memory.py checks the index)."""
    from taskdsl.project import memory_index
    from taskdsl.project.workspace import project_root

    roots = ls.roots()
    if not roots:
        return None
    root = ls.state.settings.project_root or project_root(roots[0])
    return root, memory_index.index_path(root, ls.state.settings)


def is_memory_index_uri(ls, uri: str) -> bool:
    import os

    from taskdsl.features.util import uri_to_path

    path = uri_to_path(uri)
    found = memory_index_location(ls) if path else None
    return found is not None and os.path.abspath(path) == found[1]
