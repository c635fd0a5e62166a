"""Definition, references, prepareRename and rename: LSP views over ``taskdsl.meaning.uses``.

Every use of every name (``{{x}}``, ``{{fn(x)}}``, ``<arg>x</arg>``, ``from="x"``, a ref's
``<input name=>``, ``<arg name=>``, ``ref=``, ``<call template=>``, the declarations) and what it
resolves to come from that one module; this one turns (path, span) into LSP locations and edits.
References and rename return the same places. Renames come back as one ``WorkspaceEdit``:
``documentChanges`` (versioned for open documents) when the client supports them, ``changes``
otherwise.
"""

from __future__ import annotations

from typing import Callable

from lsprotocol import types

from taskdsl.language.document import Document, Span
from taskdsl.features.util import ClientFeatures, Positions, path_to_uri, uri_to_path
from taskdsl.meaning.uses import RenameError, Workspace

__all__ = ["RenameError", "definition", "names_library_entry", "INDEXING", "references", "prepare_rename", "rename", "workspace_edit"]

PositionsFor = Callable[[str], Positions | None]


class _View:
    """The semantic workspace of a request, and the positions of each file it answers in."""

    def __init__(self, doc: Document, uri: str, positions: Positions, library, positions_for: PositionsFor | None,
                 settings):
        self.uri, self.positions, self.positions_for = uri, positions, positions_for
        self.here = uri_to_path(uri) or uri
        self._positions: dict[str, Positions | None] = {self.here: positions}
        self.workspace = Workspace(doc, self.here, library=library, document_of=self._document, settings=settings)

    def _document(self, path: str) -> Document | None:
        found = self.file_positions(path)
        return found.doc if found is not None else None

    def file_positions(self, path: str) -> Positions | None:
        if path not in self._positions:
            self._positions[path] = self.positions_for(path) if self.positions_for else None
        return self._positions[path]

    def file_uri(self, path: str) -> str:
        return self.uri if path == self.here else path_to_uri(path)

    def locations(self, spans: list[tuple[str, Span]]) -> list[types.Location]:
        found = []
        for path, span in spans:
            positions = self.file_positions(path)
            if positions is not None:
                found.append(types.Location(self.file_uri(path), positions.range(span)))
        return found


def definition(doc: Document, offset: int, uri: str, positions: Positions, *, library=None,
               positions_for: PositionsFor | None = None, settings=None) -> list[types.Location]:
    view = _View(doc, uri, positions, library, positions_for, settings)
    return view.locations(view.workspace.definitions(offset))


#: what go-to-definition says when the name under the cursor is the library's and the library is
#: not indexed yet (the server shows it; hover says the same in its own words)
INDEXING = "taskdsl: the project's library is still being indexed; go to the definition again in a moment."


def names_library_entry(doc: Document, offset: int, uri: str, positions: Positions, *, settings=None) -> bool:
    """Whether the name under the cursor is one the library answers for: a task or template (a
    ref, a call, a key) or a param of one. Without an index such a name has no definition yet."""
    view = _View(doc, uri, positions, None, None, settings)
    site = view.workspace.site(offset)
    return site is not None and site.symbol[0] in ("task", "param", "key")


def references(doc: Document, offset: int, uri: str, positions: Positions, *, include_declaration: bool = True,
               library=None, positions_for: PositionsFor | None = None, settings=None) -> list[types.Location]:
    view = _View(doc, uri, positions, library, positions_for, settings)
    found = view.workspace.references(offset, include_declaration)
    return view.locations([(path, span) for path, spans in found.items() for span in spans])


def prepare_rename(doc: Document, offset: int, positions: Positions, *, library=None, settings=None,
                   uri: str = "", positions_for: PositionsFor | None = None):
    """The name's range and text, None where there is no name; RenameError for a name that exists
    but cannot be renamed (a built-in, a global, a key), so the editor says why."""
    view = _View(doc, uri, positions, library, positions_for, settings)
    use = view.workspace.rename_target(offset)
    if use is None:
        return None
    return types.PrepareRenamePlaceholder(range=positions.range(use.span), placeholder=use.name)


def rename(doc: Document, offset: int, new_name: str, uri: str, positions: Positions, *,
           client: ClientFeatures | None = None, library=None, positions_for: PositionsFor | None = None,
           settings=None, version_of: Callable[[str], int | None] | None = None) -> types.WorkspaceEdit | None:
    view = _View(doc, uri, positions, library, positions_for, settings)
    found = view.workspace.rename(offset, new_name)
    if not found:
        return None
    edits: dict[str, list[types.TextEdit]] = {}
    for path, spans in found.items():
        file_positions = view.file_positions(path)
        if file_positions is None:
            raise RenameError(f"{path} cannot be read: nothing was renamed")
        edits[view.file_uri(path)] = [types.TextEdit(file_positions.range(span), new_name) for span in spans]
    return workspace_edit(edits, client or ClientFeatures(), version_of)


def workspace_edit(edits: dict[str, list[types.TextEdit]], client: ClientFeatures,
                   version_of: Callable[[str], int | None] | None = None) -> types.WorkspaceEdit:
    if client.document_changes:
        return types.WorkspaceEdit(document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=file_uri, version=version_of(file_uri) if version_of else None),
                edits=file_edits)
            for file_uri, file_edits in edits.items()
        ])
    return types.WorkspaceEdit(changes=edits)
