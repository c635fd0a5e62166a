"""The workspace task library: every task and template definition, and every reference to one.

The editor and the checker see the library through this index (the evaluator compiles its own
runtime `TaskLibrary` from the files this index resolves to). It is built from the files
`workspace.discover` finds (the project folders and `settings.library_paths`), and kept per file: one changed,
created, deleted or renamed file replaces only its own entries, and each update returns the
paths whose diagnostics may have changed (the server re-checks the open ones).

Registered (SPEC §6): each root `<task>` (by `name`, else by file stem), each `<template>`, and
each `<template>` / named `<task>` of a `<library>` — under its name and, when it has a
`subtype`, under its `type:subtype` key. A ref resolves by name first, then by key.

References: every `<task ref>` (also on `inner_task`/`reduction_task`), `<call template>` (and
the legacy `<call task>`), and inline `{{fn(…)}}` call, with the span of the name as written.

Files are read by `workspace.read_text` (UTF-8, errors replaced) and scanned with the tolerant `document.parse`:
a file that does not parse contributes what the scanner recovers, and a definition that vanishes
while its file is broken (mid-edit) is retained from the last clean version until the file scans
cleanly again. The index is not thread-safe: the server serialises calls. It imports no
checker: the checks read it (`checker.check_index` checks the files of a project through it).
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator

from taskdsl.document import Document, Element, Span, gc_paused, parse
from taskdsl.names import file_stem, split_params
from taskdsl.semantics_uses import RenameError  # noqa: F401 (raised by check_rename; importers name it here)
from taskdsl.facts import inputs as input_elements, literal_default, subtype, task_kind
from taskdsl.settings import Settings
from taskdsl.templating import find_placeholders
from taskdsl.workspace import belongs, discover, read_source, read_text

log = logging.getLogger(__name__)

Range = tuple[tuple[int, int], tuple[int, int]]  # 0-based (line, code-point column), end exclusive

IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
TASK_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
TASK_REF_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(:[A-Za-z_][A-Za-z0-9_.\-]*)?\Z")
from taskdsl.vocabulary import TASK_TAGS  # noqa: E402
TEMPLATE_SUFFIX = ".task.xml"


# --------------------------------------------------------------------------- data


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    default: str | None = None  # a literal input's text
    has_default: bool = False  # the input's literal text is a default (semantics.literal_default)


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    kind: str  # task | template | library-task
    type: str
    subtype: str | None
    params: tuple[Param, ...]
    description: str | None
    path: str | None
    span: Span  # the whole defining element
    name_span: Span | None  # the `name` value; None for a root task named after its file
    range: Range  # of name_span, or of the root's tag name when named after the file
    returns: str | None = None
    effective: Any = field(default=None, compare=False)  # context.effective_settings, when available
    criteria: str | None = field(default=None, compare=False)  # what `taskdsl match` ranks, with description
    instructions: str | None = field(default=None, compare=False)

    @property
    def key(self) -> str | None:
        return f"{self.type}:{self.subtype}" if self.subtype else None

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def required_params(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if not p.has_default)

    @property
    def signature(self) -> tuple:
        """What a referring file's diagnostics depend on (not the location)."""
        return (self.name, self.kind, self.type, self.subtype, self.params)


@dataclass(frozen=True, slots=True)
class Reference:
    name: str  # as written: a name or a type:subtype key
    kind: str  # ref | call | inline
    path: str | None
    span: Span  # the name as written (attribute value, or the name inside the placeholder)
    range: Range
    owner: str | None  # the definition whose body holds the reference
    site: Span  # the referring element's tag name, or the whole placeholder
    positional: tuple[Span, ...] = ()  # positional args: <arg> tag names, or the placeholder per inline arg
    named: tuple[tuple[str, Span], ...] = ()  # <arg name=> / a ref's <input name=>: (name, value span)

    @property
    def is_key(self) -> bool:
        return ":" in self.name


@dataclass(slots=True)
class FileIndex:
    """What one document contributes: its definitions and its references."""

    path: str | None
    definitions: list[Definition]
    references: list[Reference]
    clean: bool  # the scanner found no well-formedness problem
    digest: int = 0  # hash of the text indexed
    edges: frozenset[tuple[str, str]] = frozenset()  # (owner, name as written) of the owned references

    def __post_init__(self) -> None:
        self.edges = frozenset((r.owner, r.name) for r in self.references if r.owner is not None)


@dataclass(slots=True)
class _Entry:
    index: FileIndex
    stamp: tuple  # (mtime_ns, size) from disk, or ("buffer", digest) for an editor's text
    retained: list[Definition] = field(default_factory=list)  # kept while the file does not parse

    @property
    def definitions(self) -> list[Definition]:
        return self.index.definitions + self.retained if self.retained else self.index.definitions


# --------------------------------------------------------------------------- extraction


def index_document(doc: Document, path: str | None) -> FileIndex:
    """The definitions and references of one parsed document."""
    definitions: list[tuple[Element, Element | None, Definition]] = []
    for position, root in enumerate(doc.roots):
        definitions.extend(_root_definitions(doc, root, path, first=position == 0))
    owner_of = {id(element): definition.name for element, _, definition in definitions}
    references = _references(doc, path, owner_of)
    finished = [definition for _, _, definition in definitions]
    return FileIndex(path, finished, references, clean=not doc.problems, digest=hash(doc.text))


def _root_definitions(doc: Document, root: Element, path: str | None, first: bool):
    if root.tag == "task":
        if root.get("parameters") is not None and root.get("name"):  # legacy template form
            yield root, root, _template(doc, root, path, params_attr="parameters", task=root)
        else:
            definition = _task(doc, root, path, "task", stem=file_stem(path) if first else None)
            if definition:
                yield root, root, definition
    elif root.tag == "template":
        task = root.child("task")
        if root.get("name"):
            yield root, task, _template(doc, root, path, params_attr="params", task=task)
    elif root.tag == "library":
        for child in root.children:
            if child.tag == "template" and child.get("name"):
                task = child.child("task")
                yield child, task, _template(doc, child, path, params_attr="params", task=task)
            elif child.tag == "task" and child.get("name") and child.get("parameters") is not None:  # legacy form
                yield child, child, _template(doc, child, path, params_attr="parameters", task=child)
            elif child.tag == "task" and child.get("name"):
                yield child, child, _task(doc, child, path, "library-task", stem=None)


def _task(doc: Document, task: Element, path: str | None, kind: str, stem: str | None) -> Definition | None:
    name_attr = task.attr("name")
    if name_attr is not None and name_attr.value and name_attr.value_span is not None:
        name, name_span = name_attr.value, name_attr.value_span
    elif stem:
        name, name_span = stem, None
    else:
        return None
    return Definition(
        name=name,
        kind=kind,
        type=task_kind(task),
        subtype=subtype(task),
        params=_input_params(task),
        description=_description(task),
        path=path,
        span=task.span,
        name_span=name_span,
        range=_range(doc, name_span or task.name_span),
        effective=_effective(task),
        criteria=_description(task, "criteria"),
        instructions=_description(task, "instructions"),
    )


def _template(doc: Document, template: Element, path: str | None, params_attr: str, task: Element | None) -> Definition:
    name_attr = template.attr("name")
    name_span = name_attr.value_span or name_attr.name_span
    return Definition(
        name=name_attr.value,
        kind="template",
        type=task_kind(task) if task is not None else "atomic",
        subtype=subtype(task) if task is not None else None,
        params=tuple(Param(p) for p in split_params(template.get(params_attr) or "")),
        description=_description(task) if task is not None else None,
        path=path,
        span=template.span,
        name_span=name_span,
        range=_range(doc, name_span),
        returns=template.get("returns"),
        effective=_effective(task),
        criteria=_description(task, "criteria") if task is not None else None,
        instructions=_description(task, "instructions") if task is not None else None,
    )


def _input_params(task: Element) -> tuple[Param, ...]:
    params = []
    for element in input_elements(task):
        name = element.get("name")
        if not name:
            continue
        literal = literal_default(element)  # only a literal is a default a ref may leave unbound
        params.append(Param(name, literal, literal is not None))
    return tuple(params)


def _description(task: Element, tag: str = "description") -> str | None:
    element = task.child(tag)
    if element is None:
        return None
    return " ".join(element.text.split()) or None


def _range(doc: Document, span: Span) -> Range:
    return doc.position(span.start), doc.position(span.end)


SETTING_TAGS = {"context_management", "inherit_context", "accumulate_data", "accumulation_format", "fresh_context"}
_DEFAULT_EFFECTIVE: dict[tuple, Any] = {}  # a task that sets nothing gets its operator's defaults


def _effective(task: Element | None) -> Any:
    """context.effective_settings of a definition's task, without references to the tree."""
    compute = _effective_settings_function()
    if compute is None or task is None:
        return None
    plain = not any(child.tag in SETTING_TAGS for child in task.children)
    key = (task.tag, task.get("type"), task.get("subtype"))
    if plain and key in _DEFAULT_EFFECTIVE:
        return _DEFAULT_EFFECTIVE[key]
    try:
        effective = compute(task)
    except Exception:  # a bad definition must not break the index
        return None
    if getattr(effective, "elements", None):
        effective = replace(effective, elements={})  # Elements would keep the whole tree alive
    if plain:
        _DEFAULT_EFFECTIVE[key] = effective
    return effective


_EFFECTIVE: list = []


def _effective_settings_function():
    """context.effective_settings, once context.py exists (it is written by another module)."""
    if not _EFFECTIVE:
        try:
            from taskdsl.context import effective_settings
        except ImportError:
            effective_settings = None
        _EFFECTIVE.append(effective_settings)
    return _EFFECTIVE[0]


def _references(doc: Document, path: str | None, owner_of: dict[int, str]) -> list[Reference]:
    found: list[Reference] = []
    text = doc.text
    inline = "{{" in text and "(" in text
    if not inline and "ref" not in text and "<call" not in text:
        return found
    stack: list[tuple[Element, str | None]] = [(root, None) for root in reversed(doc.roots)]
    while stack:
        element, owner = stack.pop()
        owner = owner_of.get(id(element), owner)
        if element.tag in TASK_TAGS:
            reference = _ref_reference(doc, element, path, owner)
            if reference:
                found.append(reference)
        elif element.tag == "call":
            reference = _call_reference(doc, element, path, owner)
            if reference:
                found.append(reference)
        if inline:
            for piece in element.text_pieces:
                if "{{" in piece.raw and "(" in piece.raw:
                    found.extend(_inline_references(doc, piece.raw, piece.span.start, path, owner))
        stack.extend((child, owner) for child in reversed(element.children))
    return found


def _name_value(element: Element, attribute: str) -> tuple[str, Span] | None:
    attr = element.attr(attribute)
    if attr is None or attr.value_span is None:
        return None
    value = attr.value.strip()
    if not TASK_REF_RE.match(value):  # empty or malformed: the schema reports it
        return None
    start = attr.value_span.start + attr.value.index(value)
    return value, Span(start, start + len(value))


def _ref_reference(doc: Document, task: Element, path: str | None, owner: str | None) -> Reference | None:
    found = _name_value(task, "ref")
    if found is None:
        return None
    name, span = found
    named = []
    for element in input_elements(task):
        attr = element.attr("name")
        if attr is not None and attr.value and attr.value_span is not None:
            named.append((attr.value, attr.value_span))
    return Reference(name, "ref", path, span, _range(doc, span), owner, task.name_span, named=tuple(named))


def _call_reference(doc: Document, call: Element, path: str | None, owner: str | None) -> Reference | None:
    found = _name_value(call, "template") or _name_value(call, "task")  # `task=` is the legacy form
    if found is None:
        return None
    name, span = found
    positional, named = [], []
    for arg in call.children_named("arg"):
        attr = arg.attr("name")
        if attr is None:
            positional.append(arg.name_span)
        elif attr.value_span is not None:
            named.append((attr.value, attr.value_span))
    return Reference(name, "call", path, span, _range(doc, span), owner, call.name_span,
                     positional=tuple(positional), named=tuple(named))


def _inline_references(doc: Document, raw: str, base: int, path: str | None, owner: str | None) -> Iterator[Reference]:
    for placeholder in find_placeholders(raw):
        if placeholder.kind != "call" or not placeholder.name:
            continue
        start = raw.index(placeholder.name, placeholder.start + 2) + base
        span = Span(start, start + len(placeholder.name))
        site = Span(base + placeholder.start, base + placeholder.end)
        yield Reference(placeholder.name, "inline", path, span, _range(doc, span), owner, site,
                        positional=tuple(site for _ in placeholder.args))


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


def suggest(name: str, candidates: list[str], limit: int = 3) -> list[str]:
    """Did-you-mean: a case-insensitive match first, then the closest spellings."""
    lowered = name.lower()
    exact = [c for c in candidates if c.lower() == lowered and c != name]
    close = difflib.get_close_matches(name, candidates, n=limit + len(exact), cutoff=0.6)
    ordered = exact + [c for c in close if c not in exact and c != name]
    return ordered[:limit]


class _Graph:
    """Reference edges between definition names (counted: several files may hold the same edge),
    and the strongly connected components of two or more names, for cycle checks.

    The components are computed once, on the first cycle query (so a bulk build pays nothing per
    file), then kept current edge by edge: an added edge u → v merges the components on the paths
    v →* u (found within u's ancestors); a removed edge re-splits only its own component."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, int]] = defaultdict(dict)
        self.into: dict[str, dict[str, int]] = defaultdict(dict)
        self.component: dict[str, int] | None = None  # None until the first query
        self.members: dict[int, frozenset[str]] = {}
        self._next = 0

    # -- queries

    def on_cycle(self, source: str, target: str) -> bool:
        """Whether an edge source → target closes a cycle."""
        if source == target:
            return True
        component = self._components().get(source)
        return component is not None and component == self.component.get(target)

    def cycle_path(self, source: str, target: str) -> list[str]:
        """source → target → … → source (the shortest way back), for the message."""
        if source == target:
            return [source, source]
        component = self._components().get(source)
        previous: dict[str, str | None] = {target: None}
        queue = [target]
        for node in queue:
            if node == source:
                break
            for following in sorted(self.out.get(node, ())):
                if following not in previous and self.component.get(following) == component:
                    previous[following] = node
                    queue.append(following)
        path, node = [], source
        while node is not None:
            path.append(node)
            node = previous.get(node)
        return [source] + list(reversed(path))

    def _components(self) -> dict[str, int]:
        if self.component is None:
            self.component, self.members = {}, {}
            for group in _components(self.out, list(self.out)):
                self._add_component(group)
        return self.component

    def _add_component(self, names: Iterable[str]) -> None:
        group = frozenset(names)
        if len(group) < 2:
            return
        self._next += 1
        self.members[self._next] = group
        for name in group:
            self.component[name] = self._next

    def _drop_component(self, component: int) -> frozenset[str]:
        group = self.members.pop(component)
        for name in group:
            del self.component[name]
        return group

    # -- updates

    def apply(self, delta: dict[tuple[str, str], int]) -> set[str]:
        """Apply edge count changes; return the names whose cycle membership changed."""
        changed: set[str] = set()
        tracking = self.component is not None
        for (source, target), step in sorted(delta.items(), key=lambda item: item[1]):  # removals first
            if step == 0:
                continue
            count = self.out[source].get(target, 0)
            new_count = max(count + step, 0)
            if new_count:
                self.out[source][target] = new_count
                self.into[target][source] = new_count
            else:
                self.out[source].pop(target, None)
                self.into[target].pop(source, None)
            if not tracking or (count > 0) == (new_count > 0):
                continue
            if new_count == 0:
                changed |= self._removed(source, target)
            else:
                changed |= self._added(source, target)
        return changed

    def _removed(self, source: str, target: str) -> set[str]:
        if source == target:
            return {source}
        component = self.component.get(source)
        if component is None or component != self.component.get(target):
            return set()
        group = self._drop_component(component)
        for part in _components(self.out, sorted(group), within=group):
            self._add_component(part)
        return set(group)

    def _added(self, source: str, target: str) -> set[str]:
        if source == target:
            return {source}
        component = self.component.get(source)
        if component is not None and component == self.component.get(target):
            return set()
        ancestors = _reach(self.into, source)  # names that reach source
        if target not in ancestors:
            return set()
        on_paths = _reach(self.out, target, within=ancestors)  # target →* source
        merged = set(on_paths)
        for name in on_paths:
            existing = self.component.get(name)
            if existing is not None:
                merged |= self._drop_component(existing)
        self._add_component(merged)
        return merged


def _reach(adjacency: dict[str, dict[str, int]], start: str, within: set[str] | None = None) -> set[str]:
    """start and every name reachable from it (optionally only through names in `within`)."""
    seen = {start}
    stack = [start]
    while stack:
        for following in adjacency.get(stack.pop(), ()):
            if following not in seen and (within is None or following in within):
                seen.add(following)
                stack.append(following)
    return seen


def _defined_names(entry: _Entry | None) -> set[str]:
    """The names and keys an entry defines (what written references may resolve to)."""
    if entry is None:
        return set()
    names = {d.name for d in entry.definitions}
    names.update(d.key for d in entry.definitions if d.key)
    return names

def _components(edges: dict[str, dict[str, int]], starts: list[str],
                within: frozenset[str] | None = None) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the strongly connected components of two or more names
    reachable from starts (only through names in `within`, when given)."""
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0

    def children(node: str) -> Iterator[str]:
        following = edges.get(node, ())
        return iter(following if within is None else [n for n in following if n in within])

    for start in starts:
        if start in index_of:
            continue
        work = [(start, children(start))]
        index_of[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            advanced = False
            for child in pending:
                if child not in index_of:
                    index_of[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, children(child)))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index_of[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    groups.append(members)
    return groups
