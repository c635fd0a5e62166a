"""Document symbols (the task tree), workspace symbols (the library), folding ranges and
document links (``file_paths`` entries)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from taskdsl.language.document import Document, Element
from taskdsl.features.util import Positions, path_to_uri, stripped_span, task_type

K = types.SymbolKind
SYMBOL_KINDS = {
    "library": K.Module,
    "template": K.Class,
    "task": K.Function,
    "inner_task": K.Function,
    "reduction_task": K.Function,
    "call": K.Event,
    "cond": K.Operator,
    "case": K.EnumMember,
    "default": K.EnumMember,
    "input": K.Variable,
    "arg": K.Variable,
}


def symbol_name(element: Element) -> str:
    tag = element.tag
    if tag == "template":
        return element.get("name") or "template"
    if tag in ("task", "inner_task", "reduction_task"):
        if element.get("ref"):
            return f"→ {element.get('ref')}"
        return element.get("name") or tag
    if tag == "call":
        return f"call {element.get('template') or element.get('task') or '?'}"
    if tag == "case":
        return f"case {element.get('test') or ''}".strip()
    if tag in ("input", "arg"):
        return element.get("name") or tag
    return tag


def symbol_detail(element: Element) -> str | None:
    tag = element.tag
    if tag in ("task", "inner_task", "reduction_task"):
        if element.get("ref"):
            return "ref"
        detail = task_type(element)
        if element.get("subtype"):
            detail += f" · {element.get('subtype')}"
        if tag != "task":
            detail = f"{tag} · {detail}"
        return detail
    if tag == "template":
        return f"template({element.get('params') or ''})"
    if tag == "input" and element.get("from"):
        return f"from {element.get('from')}"
    return None


def _symbol_children(element: Element) -> list[Element]:
    """The nearest descendants that are symbols (steps/inputs containers are looked through)."""
    found: list[Element] = []
    stack = list(reversed(element.children))
    while stack:
        child = stack.pop()
        if child.tag in SYMBOL_KINDS:
            found.append(child)
        else:
            stack.extend(reversed(child.children))
    return found


def _selection(element: Element):
    for attr_name in ("name", "ref", "template"):
        attr = element.attr(attr_name)
        if attr is not None and attr.value_span is not None and attr.value:
            return attr.value_span
    return element.name_span


def document_symbols(doc: Document, positions: Positions) -> list[types.DocumentSymbol]:
    def build(element: Element) -> types.DocumentSymbol:
        return types.DocumentSymbol(
            name=symbol_name(element) or element.tag,
            kind=SYMBOL_KINDS.get(element.tag, K.Object),
            range=positions.range(element.span),
            selection_range=positions.range(_selection(element)),
            detail=symbol_detail(element),
            children=[build(child) for child in _symbol_children(element)],
        )

    roots = [root for root in doc.roots]
    return [build(root) if root.tag in SYMBOL_KINDS else _wrap(root, build, positions) for root in roots]


def _wrap(root: Element, build, positions: Positions) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=root.tag, kind=K.Object, range=positions.range(root.span),
        selection_range=positions.range(root.name_span),
        children=[build(child) for child in _symbol_children(root)],
    )


def flat_symbols(doc: Document, positions: Positions, uri: str) -> list[types.SymbolInformation]:
    """For clients without hierarchical symbol support: the same tree, flattened."""
    flat: list[types.SymbolInformation] = []

    def walk(symbols: list[types.DocumentSymbol], container: str | None) -> None:
        for symbol in symbols:
            flat.append(types.SymbolInformation(
                name=symbol.name, kind=symbol.kind,
                location=types.Location(uri, symbol.range), container_name=container,
            ))
            walk(symbol.children or [], symbol.name)

    walk(document_symbols(doc, positions), None)
    return flat


# -- folding -------------------------------------------------------------------------------


def folding_ranges(doc: Document, line_folding_only: bool = True) -> list[types.FoldingRange]:
    """Elements that span lines (up to the line before their end tag), and multi-line comments."""
    ranges: list[types.FoldingRange] = []
    for element in doc.iter():
        start_line = doc.position(element.start_tag.start)[0]
        if element.end_tag is not None:
            end_line = doc.position(element.end_tag.start)[0] - 1
        else:
            end_line = doc.position(element.end)[0]
        if end_line > start_line:
            ranges.append(types.FoldingRange(start_line=start_line, end_line=end_line))
    for comment in doc.comments:
        start_line, end_line = doc.position(comment.start)[0], doc.position(comment.end)[0]
        if end_line > start_line:
            ranges.append(types.FoldingRange(start_line=start_line, end_line=end_line,
                                             kind=types.FoldingRangeKind.Comment))
    ranges.sort(key=lambda r: (r.start_line, -r.end_line))
    return ranges


# -- document links ------------------------------------------------------------------------


def document_links(doc: Document, positions: Positions, path: str | None,
                   tooltips: bool = False) -> list[types.DocumentLink]:
    """Each literal ``<file_paths><path>`` entry, resolved relative to the template's folder."""
    if not path:
        return []
    folder = Path(path).parent
    links: list[types.DocumentLink] = []
    for element in doc.iter():
        if element.tag != "path" or element.parent is None or element.parent.tag != "file_paths":
            continue
        if (element.parent.get("source") or "literal") != "literal" or element.content is None:
            continue
        if len(element.text_pieces) != 1 or element.children:
            continue  # split by a comment or CDATA: no single range to link
        piece = element.text_pieces[0]
        span = stripped_span(doc.text, piece.span)
        target = piece.value.strip()
        if not target or "{{" in target:
            continue
        resolved = Path(target).expanduser()
        if not resolved.is_absolute():
            resolved = folder / resolved
        links.append(types.DocumentLink(
            range=positions.range(span), target=path_to_uri(str(resolved)), tooltip=str(resolved) if tooltips else None,
        ))
    return links


# -- workspace symbols ---------------------------------------------------------------------


def workspace_symbols(library, query: str, positions_for) -> list[types.WorkspaceSymbol]:
    """Every library definition whose name contains the query (case-insensitively).

    ``positions_for(path)`` gives the Positions of a file (open or on disk), or None."""
    from taskdsl.features import libview

    wanted = query.lower()
    symbols: list[types.WorkspaceSymbol] = []
    for entry in libview.entries(library):
        if wanted and wanted not in entry.name.lower():
            continue
        location = libview.location(entry, positions_for)
        if location is None:
            continue
        symbols.append(types.WorkspaceSymbol(
            name=entry.name,
            kind=K.Class if entry.kind == "template" else K.Function,
            location=location,
            container_name=Path(entry.path).name if entry.path else None,
        ))
    return symbols
