"""The grammar: where ``task.xsd`` lives, its compiled lxml validator, and a content model.

``lxml_schema()`` validates (fast, libxml2). ``model()`` answers what completion, hover,
formatting and the schema diagnostics ask — which children and attributes an element may have,
their enumeration values and their documentation — from tables generated from the XSD at build
time (``grammar_tables``: loaded in ~2 ms, no xmlschema). ``xsd_model()`` answers the same by
reading the XSD through xmlschema; it writes the tables (``python -m taskdsl.language.schema
--write-tables``) and a test proves both answer alike. Nothing here restates the element list:
every answer comes from the XSD.

Elements are addressed by *path*: the tag names from the root down, e.g.
``("task", "steps", "task", "context_management")``. ``()`` is the document level, where the
five roots are allowed. A path the grammar does not allow resolves to nothing: queries return
``None``/empty results and never raise.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from taskdsl.language.grammar_tables import AttrInfo, ChildInfo, ElementPath, GrammarQueries, TableModel  # noqa: F401

XS = "{http://www.w3.org/2001/XMLSchema}"

# Seconds spent loading the model, set by model() (reported by benchmarks).
model_build_seconds: float | None = None


# --------------------------------------------------------------------------- locating


def xsd_path() -> Path:
    """The installed ``task.xsd``: inside the wheel, else the source tree's ``schemas/``."""
    from taskdsl.support.resources import installed

    return installed("schemas/task.xsd", "schemas/task.xsd")


@functools.cache
def lxml_schema() -> etree.XMLSchema:
    """The compiled validator (once per process)."""
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    return etree.XMLSchema(etree.parse(str(xsd_path()), parser))


# --------------------------------------------------------------------------- answers


def _doc(elem: Any) -> str | None:
    """Text of the xs:annotation/xs:documentation directly under an XSD element."""
    if elem is None:
        return None
    texts = [
        "".join(d.itertext())
        for a in elem.findall(f"{XS}annotation")
        for d in a.findall(f"{XS}documentation")
    ]
    text = " ".join(" ".join(t.split()) for t in texts if t.strip())
    return text or None


def _enumerations(simple_type: Any) -> tuple[list[tuple[str, str | None]], bool]:
    """(value, documentation) pairs of a simple type, and whether other text is valid too.

    A restriction that lists no enumeration of its own inherits its base's; a union of an
    enumeration with xs:string is an *open* enumeration (values are suggestions)."""
    if simple_type is None or not simple_type.is_simple():
        return [], False
    if simple_type.is_union():
        values: list[tuple[str, str | None]] = []
        is_open = False
        for member in simple_type.member_types:
            member_values, member_open = _enumerations(member)
            values += member_values
            is_open = is_open or member_open or not member_values
        return values, is_open
    if simple_type.target_namespace == XS[1:-1] or simple_type.elem is None:  # a built-in type
        return [], True
    # A restriction component's elem is the xs:restriction element itself.
    own = simple_type.elem.findall(f"{XS}enumeration")
    if own:
        return [(e.get("value"), _doc(e)) for e in own], False
    base = getattr(simple_type, "base_type", None)
    if simple_type.is_restriction() and base is not None and base.is_simple() and base is not simple_type:
        return _enumerations(base)
    return [], True


def _pattern(simple_type: Any) -> str | None:
    """The pattern facet of a simple type or its nearest restricted base."""
    while simple_type is not None and simple_type.is_simple() and not simple_type.is_union():
        patterns = getattr(simple_type, "patterns", None)
        if patterns is not None and patterns.regexps:
            return "|".join(patterns.regexps)
        base = getattr(simple_type, "base_type", None)
        if base is simple_type:
            break
        simple_type = base
    return None


def _type_name(simple_type: Any) -> str | None:
    name = getattr(simple_type, "local_name", None)
    return name if getattr(simple_type, "name", None) else None


def _mul(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def _particles(group: Any, min_factor: int, max_factor: int | None) -> Iterator[tuple[Any, int, int | None]]:
    """Element particles of a content model in schema order, with effective occurrences."""
    group_min = group.min_occurs * min_factor
    group_max = _mul(group.max_occurs, max_factor)
    if group.model == "choice" and len(group) > 1:
        group_min = 0  # any one alternative may be absent
    for item in group:
        if hasattr(item, "model"):  # a nested group
            yield from _particles(item, group_min, group_max)
        elif item.name is not None:  # an element (wildcards have no name)
            yield item, item.min_occurs * group_min, _mul(item.max_occurs, group_max)


class GrammarModel(GrammarQueries):
    """Content-model and documentation queries over the XSD read by xmlschema, by element path.
    Slow to import and build (~0.2 s): the tables generated from it (``grammar_tables``) answer
    at run time; this model generates them and proves them equal."""

    def __init__(self, schema: Any) -> None:
        self._schema = schema
        self._roots = dict(schema.elements)  # declaration order

    # -- resolution -------------------------------------------------------------------

    @functools.lru_cache(maxsize=4096)
    def _children(self, path: ElementPath) -> tuple[tuple[Any, ChildInfo], ...]:
        """(declaration, ChildInfo) for each element allowed directly under ``path``."""
        if path == ():
            return tuple(
                (el, ChildInfo(name, 0, 1, self._element_doc(el))) for name, el in self._roots.items()
            )
        decl = self._resolve(path)
        return () if decl is None else self.particles_under(decl)

    @classmethod
    def particles_under(cls, decl: Any) -> tuple[tuple[Any, ChildInfo], ...]:
        """(declaration, ChildInfo) for each element allowed directly under the declaration
        ``decl`` (a function of its type alone)."""
        if decl.type.is_simple() or decl.type.has_simple_content():
            return ()
        content = decl.type.content
        if content is None or not hasattr(content, "model"):
            return ()
        seen: dict[str, tuple[Any, ChildInfo]] = {}
        for particle, lo, hi in _particles(content, 1, 1):
            if particle.local_name not in seen:  # first declaration wins; names are unique here
                seen[particle.local_name] = (
                    particle,
                    ChildInfo(particle.local_name, lo, hi, cls._element_doc(particle)),
                )
        return tuple(seen.values())

    def _resolve(self, path: ElementPath) -> Any | None:
        """The element declaration (a particle, possibly a reference) at ``path``."""
        if not path:
            return None
        if len(path) == 1:
            return self._roots.get(path[0])
        for particle, _ in self._children(path[:-1]):
            if particle.local_name == path[-1]:
                return particle
        return None

    @staticmethod
    def _element_doc(particle: Any) -> str | None:
        """A reference's own annotation (what it means in that place), else its target's."""
        doc = _doc(particle.elem)
        if doc is None and particle.ref is not None:
            doc = _doc(particle.ref.elem)
        return doc

    def _attribute(self, path: ElementPath, attr: str) -> Any | None:
        decl = self._resolve(path)
        if decl is None or decl.type.is_simple():
            return None
        return decl.type.attributes.get(attr)

    def _text_type(self, path: ElementPath) -> Any | None:
        decl = self._resolve(path)
        return None if decl is None else self.text_type(decl)

    @staticmethod
    def text_type(decl: Any) -> Any | None:
        """The simple type of an element's text (simple type or simple content)."""
        if decl.type.is_simple():
            return decl.type
        if decl.type.has_simple_content():
            return decl.type.content
        return None

    @staticmethod
    def attribute_infos(decl: Any) -> list[AttrInfo]:
        """The attributes the declaration ``decl`` allows (a function of its type alone)."""
        if decl.type.is_simple():
            return []
        infos = []
        for name, attribute in decl.type.attributes.items():
            if name is None:  # an attribute wildcard, not a declaration
                continue
            values, is_open = _enumerations(attribute.type)
            infos.append(
                AttrInfo(
                    name=name,
                    required=attribute.use == "required",
                    default=attribute.default,
                    documentation=_doc(attribute.elem),
                    enum=[v for v, _ in values] or None,
                    pattern=_pattern(attribute.type),
                    open_enum=bool(values) and is_open,
                    type_name=_type_name(attribute.type),
                )
            )
        return infos

    # -- queries ----------------------------------------------------------------------

    def exists(self, path: ElementPath) -> bool:
        return path == () or self._resolve(path) is not None

    def allowed_children(self, path: ElementPath) -> list[ChildInfo]:
        """Elements allowed directly under ``path``, in schema order ([] for text/empty)."""
        return [info for _, info in self._children(tuple(path))]

    def attributes(self, path: ElementPath) -> list[AttrInfo]:
        decl = self._resolve(tuple(path))
        return [] if decl is None else self.attribute_infos(decl)

    def enum_values(self, path: ElementPath, attr: str | None = None) -> list[tuple[str, str | None]]:
        """(value, documentation) of the element's text, or of attribute ``attr``."""
        path = tuple(path)
        if attr is None:
            simple_type = self._text_type(path)
        else:
            attribute = self._attribute(path, attr)
            simple_type = attribute.type if attribute is not None else None
        return _enumerations(simple_type)[0]

    def documentation(self, path: ElementPath, attr: str | None = None, value: str | None = None) -> str | None:
        """Hover text of an element, one of its attributes, or one enumeration value."""
        path = tuple(path)
        if value is not None:
            return dict(self.enum_values(path, attr)).get(value)
        if attr is not None:
            attribute = self._attribute(path, attr)
            return _doc(attribute.elem) if attribute is not None else None
        decl = self._resolve(path)
        return self._element_doc(decl) if decl is not None else None

    def is_mixed(self, path: ElementPath) -> bool:
        decl = self._resolve(tuple(path))
        return bool(decl is not None and not decl.type.is_simple() and decl.type.mixed)

    def is_empty(self, path: ElementPath) -> bool:
        """True for an element that must have neither text nor children (output_format)."""
        decl = self._resolve(tuple(path))
        return bool(decl is not None and not decl.type.is_simple() and decl.type.is_empty())

    def has_simple_content(self, path: ElementPath) -> bool:
        """True for an element whose content is text only (description, inherit_context, command)."""
        return self._text_type(tuple(path)) is not None

    def _identity(self, path: ElementPath) -> tuple[int, int]:
        decl = self._resolve(path)
        return id(decl), id(decl.type)

    # -- the tables -------------------------------------------------------------------

    def tables(self) -> dict:
        """Everything the queries above answer, as plain data: one entry per element declaration
        (name, documentation, type) and per type (children, attributes, text values, content
        kind). The run-time model (``grammar_tables``) answers from it without xmlschema."""
        declarations: list[dict | None] = []
        types: list[dict | None] = []
        declaration_ids: dict[int, int] = {}
        type_ids: dict[int, int] = {}

        def declare(decl: Any) -> int:
            if id(decl) not in declaration_ids:
                declaration_ids[id(decl)] = len(declarations)
                declarations.append(None)
                entry = {"name": decl.local_name, "documentation": self._element_doc(decl), "type": type_of(decl)}
                declarations[declaration_ids[id(decl)]] = entry
            return declaration_ids[id(decl)]

        def type_of(decl: Any) -> int:
            if id(decl.type) not in type_ids:  # types recurse: the id is taken before the children
                type_ids[id(decl.type)] = len(types)
                types.append(None)
                types[type_ids[id(decl.type)]] = self._type_table(decl, declare)
            return type_ids[id(decl.type)]

        roots = [declare(decl) for decl in self._roots.values()]
        return {"roots": roots, "declarations": declarations, "types": types}

    def _type_table(self, decl: Any, declare) -> dict:
        complex_type = not decl.type.is_simple()
        text_type = self.text_type(decl)
        attributes = []
        for info in self.attribute_infos(decl):
            values, _ = _enumerations(decl.type.attributes[info.name].type)
            attributes.append({"name": info.name, "required": info.required, "default": info.default,
                               "documentation": info.documentation, "values": [list(v) for v in values],
                               "open_enum": info.open_enum, "pattern": info.pattern, "type_name": info.type_name})
        return {
            "children": [[declare(particle), info.min_occurs, info.max_occurs]
                         for particle, info in self.particles_under(decl)],
            "attributes": attributes,
            "text": None if text_type is None else [list(v) for v in _enumerations(text_type)[0]],
            "mixed": bool(complex_type and decl.type.mixed),
            "empty": bool(complex_type and decl.type.is_empty()),
        }


_model: Any = None
_model_lock = threading.Lock()


def model() -> GrammarQueries:
    """The grammar model completion, hover, formatting and the schema diagnostics ask: the tables
    generated from ``task.xsd`` at build time (``grammar_tables.json``, loaded in a few ms, no
    xmlschema). Loaded once per process, also when several threads ask together."""
    global _model, model_build_seconds
    if _model is not None:
        return _model
    with _model_lock:
        if _model is None:
            started = time.perf_counter()
            _model = TableModel.load()
            model_build_seconds = time.perf_counter() - started
    return _model


def model_ready() -> bool:
    return _model is not None


@functools.cache
def xsd_model() -> GrammarModel:
    """The grammar model read from ``task.xsd`` by xmlschema (~0.2 s to import and build): what
    generates the tables and proves them equal, not what a request waits for."""
    import xmlschema

    source = xsd_path().read_text(encoding="utf-8")
    return GrammarModel(xmlschema.XMLSchema10(source, base_url=str(xsd_path().parent), allow="sandbox"))


def main(argv: list[str] | None = None) -> int:
    """``python -m taskdsl.language.schema --write-tables``: regenerate grammar_tables.json from task.xsd
    (run after every change to the XSD; a test fails while the two differ)."""
    import argparse

    from taskdsl.language import grammar_tables

    parser = argparse.ArgumentParser(prog="python -m taskdsl.language.schema", description=main.__doc__.splitlines()[0])
    parser.add_argument("--write-tables", nargs="?", const=grammar_tables.TABLES_FILE, type=Path, metavar="PATH",
                        help="write the tables from task.xsd (to the package's grammar_tables.json unless PATH)")
    args = parser.parse_args(argv)
    if args.write_tables is None:
        parser.print_help()
        return 2
    path = grammar_tables.write(xsd_model().tables(), args.write_tables)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
