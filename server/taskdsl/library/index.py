"""The `Library` index over a project's files, its per-file updates and its queries.

Built from the files `workspace.discover` finds (the project folders and `settings.library_paths`)
and kept per file: one changed, created, deleted or renamed file replaces only its own entries, and
each update returns the paths whose diagnostics may have changed (the server re-checks the open
ones). Files are read by `workspace.read_text` (UTF-8, errors replaced) and scanned with the
tolerant `document.parse`; a definition that vanishes while its file is broken (mid-edit) is
retained from the last clean version until the file scans cleanly again. Queries: definitions by
name or key, prefixes, dependents, `suggest` (did-you-mean) and the task-rename check. Not
thread-safe: the server serialises calls.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from taskdsl.language.document import Document, parse
from taskdsl.library.definitions import IDENTIFIER_RE, TASK_NAME_RE, Definition, FileIndex, index_document
from taskdsl.library.graph import _Graph
from taskdsl.meaning.uses import RenameError
from taskdsl.language.names import suggest  # noqa: F401  (re-exported: Library.suggestions)
from taskdsl.project.settings import Settings
from taskdsl.project.workspace import belongs, discover, read_source, read_text


@dataclass(slots=True)
class _Entry:
    index: FileIndex
    stamp: tuple  # (mtime_ns, size) from disk, or ("buffer", digest) for an editor's text
    retained: list[Definition] = field(default_factory=list)  # kept while the file does not parse

    @property
    def definitions(self) -> list[Definition]:
        return self.index.definitions + self.retained if self.retained else self.index.definitions


# --------------------------------------------------------------------------- files


def normalize(path: str | os.PathLike) -> str:
    return os.path.abspath(os.fspath(path))


def _stamp(path: str) -> tuple | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)


# --------------------------------------------------------------------------- the index


class Library:
    """The workspace index. Build with `Library.from_paths`, keep it current with `update_file`,
    `remove_file` and `rename_file` (each returns the paths to re-check)."""

    def __init__(self, settings: Settings | None = None, folders: Iterable[str] = ()):
        self.settings = settings or Settings()
        self.folders = [normalize(f) for f in folders]
        self.workspace_files: set[str] = set()  # the project files `checker.check_index` checks (library-path files are only indexed)
        self._entries: dict[str, _Entry] = {}
        self._by_name: dict[str, list[Definition]] = defaultdict(list)
        self._by_key: dict[str, list[Definition]] = defaultdict(list)
        self._referrers: dict[str, set[str]] = defaultdict(set)  # name as written → paths
        self._documents: dict[str, Document] = {}  # kept from the build for the checker (see `document`), then dropped
        self._sources: dict = {}  # path → the Source (or OSError) read while building, for the checker (see `take_source`)
        self._graph = _Graph()  # resolved reference edges between definition names, kept per update

    # -- building ------------------------------------------------------------------------

    @classmethod
    def from_paths(cls, paths: Iterable[str | os.PathLike], settings: Settings | None = None,
                   keep_documents: bool = False) -> Library:
        """Index what `workspace.discover` finds for these folders (files given are indexed
        whatever their name) and `settings.library_paths`. With keep_documents, `document()`
        hands the parsed documents to the checker, so each file is parsed once."""
        settings = settings or Settings()
        paths = [normalize(p) for p in paths]
        found = discover(paths, settings)
        return cls.from_discovered(found, settings, [p for p in paths if os.path.isdir(p)], keep_documents)

    @classmethod
    def from_discovered(cls, found, settings: Settings | None = None, folders: Iterable[str] = (),
                        keep_documents: bool = False) -> Library:
        """Index what discovery found (a `workspace.Discovered`) for these project folders."""
        library = cls(settings, folders)
        library.workspace_files = set(found.project_files)
        for path in found.all:
            library._index_from_disk(path, keep_documents, report=False)
        return library

    def matches(self, path: str) -> bool:
        """Whether a path belongs in the index (discovery would find it, or it is indexed)."""
        path = normalize(path)
        return path in self._entries or belongs(path, self.folders, self.settings)

    def _index_from_disk(self, path: str, keep_document: bool = False, report: bool = True) -> set[str]:
        stamp = _stamp(path)
        if not keep_document:
            text = read_text(path, stamp[1]) if stamp else None
        else:  # the checker wants the whole Source (its reading problems) too: one read serves both
            try:
                source = read_source(path, stamp[1]) if stamp else None
            except OSError as error:
                source = error
            if source is not None:
                self._sources[path] = source
            text = source.text if source is not None and not isinstance(source, OSError) and not source.refused else None
        if text is None:
            return self.remove_file(path)
        return self._replace(path, text, stamp, keep_document, report)

    # -- incremental updates ---------------------------------------------------------------

    def update_file(self, path: str | os.PathLike, text: str | None = None) -> set[str]:
        """Re-index one file: from `text` (an editor buffer, which overrides the disk) or from disk.
        Returns the paths whose diagnostics may have changed (this one included)."""
        path = normalize(path)
        if text is None:
            entry = self._entries.get(path)
            stamp = _stamp(path)
            if entry is not None and stamp is not None and entry.stamp == stamp:
                return set()
            return self._index_from_disk(path)
        entry = self._entries.get(path)
        if entry is not None and entry.index.digest == hash(text) and entry.stamp[0] == "buffer":
            return set()
        return self._replace(path, text, ("buffer", hash(text)))

    def remove_file(self, path: str | os.PathLike) -> set[str]:
        path = normalize(path)
        self.workspace_files.discard(path)
        self._documents.pop(path, None)
        old = self._entries.get(path)
        if old is None:
            return set()
        return self._affected(path, old, None, self._swap(path, old, None))

    def rename_file(self, old_path: str | os.PathLike, new_path: str | os.PathLike, text: str | None = None) -> set[str]:
        old_path, new_path = normalize(old_path), normalize(new_path)
        in_workspace = old_path in self.workspace_files
        affected = self.remove_file(old_path)
        if in_workspace or self.matches(new_path):
            self.workspace_files.add(new_path)
        affected |= self.update_file(new_path, text)
        affected.discard(old_path)
        return affected

    def refresh(self) -> set[str]:
        """Re-discover the workspace; re-index changed files (by mtime and size), drop deleted ones."""
        found = discover(self.folders, self.settings)
        current, library_files = set(found.project_files), set(found.library_files)
        affected: set[str] = set()
        for path in set(self._entries) - current - library_files:
            if self._entries[path].stamp[0] != "buffer":
                affected |= self.remove_file(path)
        self.workspace_files = (self.workspace_files & set(self._entries)) | current
        for path in sorted(current | library_files):
            affected |= self.update_file(path)
        return affected

    def _replace(self, path: str, text: str, stamp: tuple | None, keep_document: bool = False,
                 report: bool = True) -> set[str]:
        doc = parse(text)
        if keep_document:
            self._documents[path] = doc
        else:
            self._documents.pop(path, None)
        index = index_document(doc, path)
        old = self._entries.get(path)
        retained: list[Definition] = []
        if old is not None and not index.clean:
            present = {d.name for d in index.definitions}
            retained = [d for d in old.definitions if d.name not in present]
        new = _Entry(index, stamp or ("buffer", index.digest), retained)
        cycle_names = self._swap(path, old, new)
        return self._affected(path, old, new, cycle_names) if report else set()

    def _swap(self, path: str, old: _Entry | None, new: _Entry | None) -> set[str]:
        """Replace a file's entry; keep the resolved edge graph in step (its own edges, and other
        files' edges whose written name now resolves differently). Returns the names whose cycle
        membership changed."""
        delta: dict[tuple[str, str], int] = defaultdict(int)
        if old is not None:
            self._edge_delta(old.index.edges, delta, -1)
        watched = _defined_names(old) | _defined_names(new)
        before = {name: self._resolve(name) for name in watched}
        if old is not None:
            self._unregister(path, old)
            del self._entries[path]
        if new is not None:
            self._entries[path] = new
            self._register(path, new)
        for name in watched:
            after = self._resolve(name)
            if after == before[name]:
                continue
            for other in self._referrers.get(name, ()):
                if other == path:
                    continue
                for owner, written in self._entries[other].index.edges:
                    if written == name:
                        if before[name] is not None:
                            delta[(owner, before[name])] -= 1
                        if after is not None:
                            delta[(owner, after)] += 1
        if new is not None:
            self._edge_delta(new.index.edges, delta, +1)
        return self._graph.apply(delta)

    def _edge_delta(self, edges: frozenset[tuple[str, str]], delta: dict, sign: int) -> None:
        for owner, written in edges:
            target = self._resolve(written)
            if target is not None:
                delta[(owner, target)] += sign

    def _resolve(self, written: str) -> str | None:
        """The definition name a written ref resolves to (by name, then by a unique key)."""
        if self._by_name.get(written):
            return written
        if ":" in written:
            found = self._by_key.get(written)
            if found and len(found) == 1:
                return found[0].name
        return None

    def _register(self, path: str, entry: _Entry) -> None:
        for definition in entry.definitions:
            self._by_name[definition.name].append(definition)
            if definition.key:
                self._by_key[definition.key].append(definition)
        for reference in entry.index.references:
            self._referrers[reference.name].add(path)

    def _unregister(self, path: str, entry: _Entry) -> None:
        for definition in entry.definitions:
            _remove_from(self._by_name, definition.name, definition)
            if definition.key:
                _remove_from(self._by_key, definition.key, definition)
        for reference in entry.index.references:
            paths = self._referrers.get(reference.name)
            if paths is not None:
                paths.discard(path)
                if not paths:
                    del self._referrers[reference.name]

    def _affected(self, path: str, old: _Entry | None, new: _Entry | None, cycle_names: set[str]) -> set[str]:
        """This file, the files referring to a name whose signature changed, the other definers
        of a changed name (duplicates), and the files whose reference cycles changed."""
        affected = {path} if new is not None else set()
        old_defs = old.definitions if old else []
        new_defs = new.definitions if new else []
        changed_names = _changed(old_defs, new_defs, lambda d: d.signature)
        located_names = _changed(old_defs, new_defs, lambda d: (d.signature, d.range))
        for name in changed_names:
            affected |= self._referrers.get(name, set())
        for key in _changed_keys(old_defs, new_defs):
            affected |= self._referrers.get(key, set())
        for name in located_names:
            affected.update(d.path for d in self._by_name.get(name, ()) if d.path)
        for name in cycle_names:
            affected.update(d.path for d in self._by_name.get(name, ()) if d.path)
        affected.discard(None)
        return affected

    # -- queries -------------------------------------------------------------------------

    @property
    def files(self) -> list[str]:
        return sorted(self._entries)

    def file_index(self, path: str | os.PathLike) -> FileIndex | None:
        entry = self._entries.get(normalize(path))
        return entry.index if entry else None

    def all_definitions(self) -> list[Definition]:
        return [d for path in sorted(self._entries) for d in self._entries[path].definitions]

    def definitions(self, name: str) -> list[Definition]:
        """Every definition a name (or, failing that, a type:subtype key) resolves to."""
        found = self._by_name.get(name)
        if found:
            return sorted(found, key=_order)
        if ":" in name:
            return sorted(self._by_key.get(name, ()), key=_order)
        return []

    def definition(self, name: str) -> Definition | None:
        """Resolve a ref: by name first, then by type:subtype key (only when the key is unique)."""
        found = self.definitions(name)
        if len(found) == 1 or (found and name in self._by_name):
            return found[0]
        return None

    def named(self, name: str) -> list[Definition]:
        """The definitions registered under exactly this name (no key fallback)."""
        return sorted(self._by_name.get(name, ()), key=_order)

    def keyed(self, key: str) -> list[Definition]:
        return sorted(self._by_key.get(key, ()), key=_order)

    def names(self) -> list[str]:
        return sorted(name for name, defs in self._by_name.items() if defs)

    def keys(self) -> list[str]:
        return sorted(key for key, defs in self._by_key.items() if defs)

    def names_matching(self, prefix: str) -> list[Definition]:
        """Definitions whose name starts with prefix (case-insensitive), by name then path."""
        lowered = prefix.lower()
        found = [d for name, defs in self._by_name.items() if name.lower().startswith(lowered) for d in defs]
        return sorted(found, key=lambda d: (d.name.lower(), d.name, d.path or ""))

    def suggestions(self, name: str, limit: int = 3) -> list[str]:
        """Close names (or keys) for a name that resolves to nothing."""
        return suggest(name, self.keys() if ":" in name else self.names(), limit)

    def dependents(self, name: str) -> set[str]:
        """Files whose references mention a name (as written) or one of its definitions' keys."""
        paths = set(self._referrers.get(name, ()))
        for definition in self._by_name.get(name, ()):
            if definition.key:
                paths |= self._referrers.get(definition.key, set())
        return paths

    def check_rename(self, old: str, new: str) -> None:
        """Refuse (RenameError, saying why) to rename the task or template `old` to `new` across the
        workspace: an invalid or taken name, a definition named after its file or in a file that
        does not parse. Where the name is written is semantics_uses' answer, not the index's."""
        definitions = self._by_name.get(old, [])
        if not definitions:
            raise RenameError(f"'{old}' is not a task or template in the library")
        inline = any(r.kind == "inline" and r.name == old
                     for path in self._referrers.get(old, ()) for r in self._entries[path].index.references)
        needs_identifier = inline or any(d.kind == "template" for d in definitions)
        if needs_identifier and not IDENTIFIER_RE.match(new):
            raise RenameError(f"'{new}' is not a valid template name: use letters, digits and '_', "
                              "not starting with a digit")
        if not TASK_NAME_RE.match(new):
            raise RenameError(f"'{new}' is not a valid task name: use letters, digits, '_', '.' and '-', "
                              "starting with a letter or '_'")
        if new != old and self._by_name.get(new):
            other = sorted(self._by_name[new], key=_order)[0]
            raise RenameError(f"'{new}' is already defined in {other.path}:{other.range[0][0] + 1}")
        for definition in sorted(definitions, key=_order):
            entry = self._entries.get(definition.path or "")
            if entry is not None and definition in entry.retained:
                raise RenameError(f"{definition.path} does not parse; fix it before renaming '{old}'")
            if definition.name_span is None:
                raise RenameError(f"'{old}' is named after its file {os.path.basename(definition.path or '')}: "
                                  "rename the file, or give the task a name attribute first")

    # -- cycles --------------------------------------------------------------------------

    def graph(self) -> _Graph:
        """The resolved reference graph between definition names (kept current by every update)."""
        return self._graph

    def graph_with(self, index: FileIndex) -> _Graph:
        """The graph as it is when `index` replaces its file's entry: the live one when the entry
        already says the same (after `update_file` with the same text), else a one-off copy."""
        entry = self._entries.get(index.path or "")
        if entry is not None and entry.index.edges == index.edges and \
                [d.signature for d in entry.definitions] == [d.signature for d in index.definitions]:
            return self._graph
        local = {d.name for d in index.definitions}
        graph = _Graph()
        delta: dict[tuple[str, str], int] = defaultdict(int)
        sources = [e.index for p, e in self._entries.items() if p != index.path] + [index]
        for file_index in sources:
            for owner, written in file_index.edges:
                target = written if written in local else self._resolve(written)
                if target is not None:
                    delta[(owner, target)] += 1
        graph.apply(delta)
        return graph

    # -- checking ------------------------------------------------------------------------

    def document(self, path: str) -> Document | None:
        """A parsed document for an indexed file (kept from the build, else read and parsed)."""
        path = normalize(path)
        doc = self._documents.pop(path, None)
        if doc is not None:
            return doc
        text = read_text(path)
        return parse(text) if text is not None else None

    def take_document(self, path: str, text: str) -> Document | None:
        """The document parsed while indexing, if it was parsed from this very text (given once)."""
        doc = self._documents.pop(normalize(path), None)
        return doc if doc is not None and doc.text == text else None

    def take_source(self, path: str):
        """The `workspace.Source` read while indexing (or the OSError reading raised), given once;
        None when the file was not read by a build with keep_documents."""
        return self._sources.pop(normalize(path), None)

    def release_documents(self) -> None:
        """Drop the documents (and sources) kept from the build (after the check that wanted them)."""
        self._documents.clear()
        self._sources.clear()

    def __len__(self) -> int:
        return sum(len(e.definitions) for e in self._entries.values())


def _remove_from(table: dict[str, list[Definition]], name: str, definition: Definition) -> None:
    found = table.get(name)
    if not found:
        return
    for index, candidate in enumerate(found):
        if candidate is definition:
            del found[index]
            break
    if not found:
        del table[name]


def _changed(old: list[Definition], new: list[Definition], facet) -> set[str]:
    """Names whose definitions (as seen through facet) differ between two versions of a file."""
    before, after = defaultdict(list), defaultdict(list)
    for definition in old:
        before[definition.name].append(facet(definition))
    for definition in new:
        after[definition.name].append(facet(definition))
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def _changed_keys(old: list[Definition], new: list[Definition]) -> set[str]:
    before = {(d.key, d.signature) for d in old if d.key}
    after = {(d.key, d.signature) for d in new if d.key}
    return {key for key, _ in before ^ after}


def _order(definition: Definition) -> tuple:
    return (definition.path or "", definition.span.start)


def _defined_names(entry: _Entry | None) -> set[str]:
    """The names and keys an entry defines (what written references may resolve to)."""
    if entry is None:
        return set()
    names = {d.name for d in entry.definitions}
    names.update(d.key for d in entry.definitions if d.key)
    return names


def reached_files(index, path: str, document: Document | None = None) -> list[str]:
    """The entry and every file it reaches through refs, calls, inline calls, reduce parts and a
    test's task, transitively: the files the run's gate checks, and `taskdsl check FILE` with
    it. Every file defining a reached name counts: two definitions of one name are both reached
    (the checker's TD502 is then among their diagnostics). Without a document, the entry's
    references are the ones the index holds for it."""
    files = [path]
    if index is None:
        return files
    if document is not None:
        pending = [r.name for r in index_document(document, path).references]
    else:
        entry = index.file_index(path)
        pending = [r.name for r in (entry.references if entry else ())]
    seen_names: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen_names:
            continue
        seen_names.add(name)
        for definition in index.definitions(name):
            other = definition.path and os.path.abspath(definition.path)
            if not other or other in files:
                continue
            files.append(other)
            file_index = index.file_index(other)
            pending += [r.name for r in (file_index.references if file_index else ())]
    return files
