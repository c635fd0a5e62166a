"""The grammar model the server asks at run time: tables generated from ``task.xsd``.

``grammar_tables.json`` (shipped in the package) is written by ``python -m taskdsl.language.schema
--write-tables`` from the xmlschema model (``schema.xsd_model().tables()``), and a test fails
while regenerating it would give a different file: the XSD stays the one source. Loading it
takes a few milliseconds and imports no xmlschema, so the first hover or completion after start
does not wait ~0.2 s for xmlschema's import and content-model build.

The tables hold one entry per element declaration (its name, documentation and type) and one
per type (children in order with effective occurrences, attributes, the values of its text, its
content kind). A path resolves from the roots through the children, as in the XSD model.
The answers' shapes (``ChildInfo``, ``AttrInfo``) and the queries both models share
(``GrammarQueries``) live here, so that ``schema`` imports this module and not the reverse.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ElementPath = tuple[str, ...]

TABLES_FILE = Path(__file__).with_name("grammar_tables.json")


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class ChildInfo:
    """A child element allowed under some parent; occurrences are effective ones
    (a choice of several makes each optional; a repeating group makes each unbounded)."""

    name: str
    min_occurs: int
    max_occurs: int | None  # None = unbounded
    documentation: str | None


@dataclass(frozen=True)
class AttrInfo:
    name: str
    required: bool
    default: str | None
    documentation: str | None
    enum: list[str] | None  # allowed (or, if open_enum, suggested) values
    pattern: str | None  # XSD regex the value must match (implicitly anchored)
    open_enum: bool = False  # True: enum lists known values, but any text is valid
    type_name: str | None = None  # the named simple type, e.g. "identifier", "taskKind"


class GrammarQueries:
    """What every grammar model answers from the other queries (the XSD one and the tables)."""

    def max_occurs(self, path: ElementPath) -> int | None:
        """How often the last element of ``path`` may appear under its parent:
        an int, None for unbounded, 0 where it is not allowed at all."""
        path = tuple(path)
        if not path:
            return 0
        for info in self.allowed_children(path[:-1]):
            if info.name == path[-1]:
                return info.max_occurs
        return 0

    def iter_paths(self) -> Iterator[ElementPath]:
        """A path to every element declaration and reference, each once, breadth first
        (so the shortest); a type already walked is not walked again (types recurse)."""
        seen_declarations: set[int] = set()
        walked_types: set[int] = set()
        queue = deque((info.name,) for info in self.allowed_children(()))
        while queue:
            path = queue.popleft()
            declaration, kind = self._identity(path)
            if declaration in seen_declarations:
                continue
            seen_declarations.add(declaration)
            yield path
            if kind not in walked_types:
                walked_types.add(kind)
                queue.extend(path + (info.name,) for info in self.allowed_children(path))

    def _identity(self, path: ElementPath) -> tuple[int, int]:
        """(declaration, type) of an allowed path, as keys that tell them apart."""
        raise NotImplementedError




def serialise(tables: dict) -> str:
    """The file's exact text: one declaration or type per line, so a change to the XSD shows as
    a readable diff (nothing sorted: the XSD's order is the order of every answer)."""

    def dumps(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = ["{", f' "roots": {dumps(tables["roots"])},']
    for key in ("declarations", "types"):
        entries = [f"  {dumps(entry)}" for entry in tables[key]]
        lines += [f' "{key}": [', ",\n".join(entries), " ]" + ("," if key == "declarations" else "")]
    return "\n".join(lines + ["}"]) + "\n"


def write(tables: dict, path: Path = TABLES_FILE) -> Path:
    from taskdsl.support import files

    files.write_text(str(path), serialise(tables), mode=0o644, keep_mode=True)
    return path


class TableModel(GrammarQueries):
    """The grammar model's queries, answered from the generated tables."""

    def __init__(self, tables: dict) -> None:
        self._declarations = tables["declarations"]
        self._types = tables["types"]
        self._roots = {self._declarations[i]["name"]: i for i in tables["roots"]}
        # per type: child name -> (declaration, ChildInfo), first declaration of a name wins
        self._children_of = [self._child_table(kind) for kind in self._types]
        self._attributes_of = [[_attr_info(a) for a in kind["attributes"]] for kind in self._types]
        self._root_children = [ChildInfo(name, 0, 1, self._declarations[i]["documentation"])
                               for name, i in self._roots.items()]

    @classmethod
    def load(cls, path: Path = TABLES_FILE) -> TableModel:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def _child_table(self, kind: dict) -> dict[str, tuple[int, ChildInfo]]:
        table: dict[str, tuple[int, ChildInfo]] = {}
        for declaration, low, high in kind["children"]:
            entry = self._declarations[declaration]
            table.setdefault(entry["name"], (declaration, ChildInfo(entry["name"], low, high, entry["documentation"])))
        return table

    # -- resolution -------------------------------------------------------------------

    @functools.lru_cache(maxsize=4096)
    def _resolve(self, path: ElementPath) -> int | None:
        """The declaration at ``path`` (an index into the tables), None where it is not allowed."""
        if not path:
            return None
        if len(path) == 1:
            return self._roots.get(path[0])
        parent = self._resolve(path[:-1])
        if parent is None:
            return None
        found = self._children_of[self._declarations[parent]["type"]].get(path[-1])
        return found[0] if found is not None else None

    def _type(self, path: ElementPath) -> int | None:
        declaration = self._resolve(tuple(path))
        return None if declaration is None else self._declarations[declaration]["type"]

    def _attribute(self, path: ElementPath, attr: str) -> dict | None:
        kind = self._type(path)
        if kind is None:
            return None
        return next((a for a in self._types[kind]["attributes"] if a["name"] == attr), None)

    # -- queries ----------------------------------------------------------------------

    def exists(self, path: ElementPath) -> bool:
        return path == () or self._resolve(tuple(path)) is not None

    def allowed_children(self, path: ElementPath) -> list[ChildInfo]:
        """Elements allowed directly under ``path``, in schema order ([] for text/empty)."""
        path = tuple(path)
        if path == ():
            return list(self._root_children)
        kind = self._type(path)
        return [] if kind is None else [info for _, info in self._children_of[kind].values()]

    def attributes(self, path: ElementPath) -> list[AttrInfo]:
        kind = self._type(path)
        return [] if kind is None else list(self._attributes_of[kind])

    def enum_values(self, path: ElementPath, attr: str | None = None) -> list[tuple[str, str | None]]:
        """(value, documentation) of the element's text, or of attribute ``attr``."""
        if attr is not None:
            attribute = self._attribute(path, attr)
            return [] if attribute is None else [tuple(v) for v in attribute["values"]]
        kind = self._type(path)
        return [] if kind is None else [tuple(v) for v in self._types[kind]["text"] or ()]

    def documentation(self, path: ElementPath, attr: str | None = None, value: str | None = None) -> str | None:
        """Hover text of an element, one of its attributes, or one enumeration value."""
        if value is not None:
            return dict(self.enum_values(path, attr)).get(value)
        if attr is not None:
            attribute = self._attribute(path, attr)
            return attribute["documentation"] if attribute is not None else None
        declaration = self._resolve(tuple(path))
        return self._declarations[declaration]["documentation"] if declaration is not None else None

    def is_mixed(self, path: ElementPath) -> bool:
        kind = self._type(path)
        return kind is not None and self._types[kind]["mixed"]

    def is_empty(self, path: ElementPath) -> bool:
        """True for an element that must have neither text nor children (output_format)."""
        kind = self._type(path)
        return kind is not None and self._types[kind]["empty"]

    def has_simple_content(self, path: ElementPath) -> bool:
        """True for an element whose content is text only (description, inherit_context, command)."""
        kind = self._type(path)
        return kind is not None and self._types[kind]["text"] is not None

    def _identity(self, path: ElementPath) -> tuple[int, int]:
        declaration = self._resolve(path)
        return declaration, self._declarations[declaration]["type"]


def _attr_info(attribute: dict) -> AttrInfo:
    return AttrInfo(name=attribute["name"], required=attribute["required"], default=attribute["default"],
                    documentation=attribute["documentation"], enum=[v for v, _ in attribute["values"]] or None,
                    pattern=attribute["pattern"], open_enum=attribute["open_enum"], type_name=attribute["type_name"])
