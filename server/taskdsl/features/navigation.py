"""Definition, references and rename.

Two kinds of names:

- task and template names (``name=``, ``ref=``, ``<call template=>``, inline ``{{fn(…)}}``):
  resolved through the workspace library, across files;
- variables: an ``<input name=>`` or a template param, and their uses — ``{{name…}}`` in text
  and ``from="name…"`` — resolved lexically with ``taskdsl.scope`` inside one document.

Renames come back as one ``WorkspaceEdit``: ``documentChanges`` (versioned for open documents)
when the client supports them, ``changes`` otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from lsprotocol import types

from taskdsl.document import Document, Element, Span
from taskdsl.features import libview
from taskdsl.features.util import TASK_TAGS, ClientFeatures, Positions, path_to_uri, uri_to_path

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TASK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


class RenameRefused(ValueError):
    """A rename that cannot be done, with the reason for the user."""


@dataclass(frozen=True)
class Target:
    kind: str  # task | variable
    name: str
    span: Span  # the name under the cursor
    element: Element | None = None  # where it is used or declared
    binding: Any = None  # scope.Binding for variables


def _defines_task(element: Element) -> bool:
    """Does this element's ``name`` attribute register a library name?"""
    if element.tag == "template":
        return True
    if element.tag == "task":
        return element.parent is None or element.parent.tag == "library"
    return False


def target_at(doc: Document, offset: int, settings=None) -> Target | None:
    from taskdsl import scope

    location = doc.locate(offset)
    element = location.element
    if element is None:
        return None
    if location.kind == "attr_value" and location.attr is not None and location.attr.value_span is not None:
        attr = location.attr
        vspan = attr.value_span
        if (attr.name == "ref" and element.tag in TASK_TAGS) or (element.tag == "call" and attr.name in ("template", "task")) \
                or (attr.name == "name" and _defines_task(element)):
            name = attr.value.strip()
            return Target("task", name, vspan, element) if name else None
        if element.tag == "input" and attr.name == "name":
            match = IDENT.fullmatch(attr.value)
            if match:
                binding = scope.Binding("input", attr.value, element, attr, vspan)
                return Target("variable", attr.value, vspan, element, binding)
            return None
        if element.tag == "input" and attr.name == "from":
            match = IDENT.match(attr.value)
            if match and offset <= vspan.start + match.end():
                name = match.group(0)
                binding = scope.visible_names(element, settings).get(name)
                return Target("variable", name, Span(vspan.start, vspan.start + match.end()), element, binding)
            return None
        if attr.name in ("params", "parameters") and element.tag in ("template", "task"):
            for name, span in scope.param_list(element, attr.name):
                if span is not None and span.start <= offset <= span.end:
                    binding = scope.Binding("param", name, element, attr, span)
                    return Target("variable", name, span, element, binding)
        return None
    if location.kind == "content":
        from taskdsl.templating import find_placeholders

        for piece in element.text_pieces:
            if piece.cdata or not piece.span.start <= offset <= piece.span.end:
                continue
            for placeholder in find_placeholders(piece.raw):
                start = piece.span.start + placeholder.start
                if not start <= offset <= piece.span.start + placeholder.end or not placeholder.name:
                    continue
                inner = piece.raw.find(placeholder.name, placeholder.start)
                span = Span(piece.span.start + inner, piece.span.start + inner + len(placeholder.name))
                if placeholder.kind == "call":
                    return Target("task", placeholder.name, span, element)
                if placeholder.kind == "var":
                    binding = scope.visible_names(element, settings).get(placeholder.name)
                    return Target("variable", placeholder.name, span, element, binding)
    return None


# -- variables ---------------------------------------------------------------------------------


def _same_binding(a, b) -> bool:
    return a is not None and b is not None and a.kind == b.kind and a.name == b.name and a.element is b.element


def variable_uses(doc: Document, binding, settings=None) -> list[Span]:
    """Every place that names the variable ``binding`` declares: the declaration and the uses."""
    from taskdsl import scope
    from taskdsl.templating import find_placeholders

    found: list[Span] = []
    if binding.span is not None and binding.kind in ("input", "param"):
        found.append(binding.span)
    for element in doc.iter():
        source = element.attr("from") if element.tag == "input" else None
        if source is not None and source.value_span is not None:
            match = IDENT.match(source.value)
            if match and match.group(0) == binding.name and \
                    _same_binding(scope.visible_names(element, settings).get(binding.name), binding):
                found.append(Span(source.value_span.start, source.value_span.start + match.end()))
        for piece in element.text_pieces:
            if piece.cdata or "{{" not in piece.raw:
                continue
            for placeholder in find_placeholders(piece.raw):
                if placeholder.kind != "var" or placeholder.name != binding.name:
                    continue
                if not _same_binding(scope.visible_names(element, settings).get(binding.name), binding):
                    continue
                inner = piece.raw.find(placeholder.name, placeholder.start)
                found.append(Span(piece.span.start + inner, piece.span.start + inner + len(placeholder.name)))
    return sorted(set(found), key=lambda s: (s.start, s.end))


# -- tasks ---------------------------------------------------------------------------------------


def _local_definitions(doc: Document, name: str) -> list[Span]:
    spans = []
    for element in doc.iter():
        attr = element.attr("name")
        if attr is not None and attr.value == name and attr.value_span is not None and _defines_task(element):
            spans.append(attr.value_span)
    return spans


def _local_references(doc: Document, name: str) -> list[Span]:
    from taskdsl.templating import find_placeholders

    spans = []
    for element in doc.iter():
        for attr_name in ("ref", "template", "task"):
            attr = element.attr(attr_name)
            if attr is None or attr.value_span is None or attr.value.strip() != name:
                continue
            if attr_name == "ref" and element.tag in TASK_TAGS or attr_name != "ref" and element.tag == "call":
                spans.append(attr.value_span)
        for piece in element.text_pieces:
            if piece.cdata or "{{" not in piece.raw:
                continue
            for placeholder in find_placeholders(piece.raw):
                if placeholder.kind == "call" and placeholder.name == name:
                    inner = piece.raw.find(name, placeholder.start)
                    spans.append(Span(piece.span.start + inner, piece.span.start + inner + len(name)))
    return spans


def definition(doc: Document, offset: int, uri: str, positions: Positions, *, library=None,
               positions_for: Callable[[str], Positions | None] | None = None, settings=None) -> list[types.Location]:
    target = target_at(doc, offset, settings)
    if target is None:
        return []
    if target.kind == "variable":
        binding = target.binding
        if binding is None or binding.span is None:
            return []
        return [types.Location(uri, positions.range(binding.span))]
    entry = libview.definition(library, target.name)
    if entry is not None and positions_for is not None:
        location = libview.location(entry, positions_for)
        if location is not None:
            return [location]
    return [types.Location(uri, positions.range(span)) for span in _local_definitions(doc, target.name)]


def references(doc: Document, offset: int, uri: str, positions: Positions, *, include_declaration: bool = True,
               library=None, positions_for=None, settings=None) -> list[types.Location]:
    target = target_at(doc, offset, settings)
    if target is None:
        return []
    if target.kind == "variable":
        if target.binding is None:
            return []
        spans = variable_uses(doc, target.binding, settings)
        if not include_declaration and target.binding.span is not None:
            spans = [s for s in spans if s != target.binding.span]
        return [types.Location(uri, positions.range(s)) for s in spans]
    by_path = _task_occurrences(doc, uri, target.name, library, include_declaration)
    locations = []
    for path, spans in by_path.items():
        file_positions = positions if path == uri_to_path(uri) or path == uri else (
            positions_for(path) if positions_for else None)
        if file_positions is None:
            continue
        file_uri = uri if file_positions is positions else path_to_uri(path)
        locations.extend(types.Location(file_uri, file_positions.range(s)) for s in spans)
    return locations


def _task_occurrences(doc: Document, uri: str, name: str, library, include_declaration: bool) -> dict[str, list[Span]]:
    """path → spans of the name (references, and the definition when asked), this file included."""
    here = uri_to_path(uri) or uri
    found: dict[str, set[Span]] = {}
    if library is not None:
        for ref in libview.references(library, name):
            if ref.path:
                found.setdefault(ref.path, set()).add(ref.span)
        entry = libview.definition(library, name) if include_declaration else None
        if entry is not None and entry.path and entry.name_span is not None:
            found.setdefault(entry.path, set()).add(entry.name_span)
    # the document as it is now (the library may lag behind the last keystroke)
    found[here] = set(_local_references(doc, name))
    if include_declaration:
        found[here] |= set(_local_definitions(doc, name))
    return {path: sorted(spans, key=lambda s: (s.start, s.end)) for path, spans in found.items() if spans}


# -- rename ----------------------------------------------------------------------------------------


def prepare_rename(doc: Document, offset: int, positions: Positions, *, library=None, settings=None):
    target = target_at(doc, offset, settings)
    if target is None or (target.kind == "variable" and (target.binding is None or target.binding.span is None)):
        return None
    if target.kind == "variable" and target.binding.kind not in ("input", "param"):
        return None
    return types.PrepareRenamePlaceholder(range=positions.range(target.span), placeholder=target.name)


def rename(doc: Document, offset: int, new_name: str, uri: str, positions: Positions, *,
           client: ClientFeatures | None = None, library=None, positions_for=None, settings=None,
           version_of: Callable[[str], int | None] | None = None) -> types.WorkspaceEdit | None:
    client = client or ClientFeatures()
    target = target_at(doc, offset, settings)
    if target is None:
        return None
    edits: dict[str, list[types.TextEdit]] = {}
    if target.kind == "variable":
        if target.binding is None or target.binding.kind not in ("input", "param"):
            return None
        if not IDENT.fullmatch(new_name):
            raise RenameRefused(f"'{new_name}' is not a valid name: letters, digits and '_', not starting with a digit")
        edits[uri] = [types.TextEdit(positions.range(s), new_name) for s in variable_uses(doc, target.binding, settings)]
        # callers that bind the param by name (<arg name=>, a ref's <input name=>) follow, in every file
        owner = _param_owner(target.binding, uri_to_path(uri))
        if owner is not None and library is not None and hasattr(library, "named_arguments"):
            here_path = uri_to_path(uri) or uri
            for path, spans in library.named_arguments(owner, target.name).items():
                here = path == here_path
                file_positions = positions if here else (positions_for(path) if positions_for else None)
                if file_positions is None:
                    continue
                file_edits = edits.setdefault(uri if here else path_to_uri(path), [])
                known = [e.range for e in file_edits]
                for span in spans:
                    edit_range = file_positions.range(span)
                    if edit_range not in known:
                        file_edits.append(types.TextEdit(edit_range, new_name))
    else:
        if not TASK_NAME.fullmatch(new_name):
            raise RenameRefused(f"'{new_name}' is not a valid task name: letters, digits, '_', '.' and '-'")
        occurrences = _task_occurrences(doc, uri, target.name, library, True)
        if library is not None and libview.definition(library, target.name) is not None:
            try:
                occurrences = {path: [span for span, _ in found]
                               for path, found in libview.rename_edits(library, target.name, new_name).items()}
            except ValueError as error:  # the library's RenameError says why
                raise RenameRefused(str(error)) from error
        for path, spans in occurrences.items():
            here = path == (uri_to_path(uri) or uri)
            file_positions = positions if here else (positions_for(path) if positions_for else None)
            if file_positions is None:
                continue
            file_uri = uri if here else path_to_uri(path)
            edits[file_uri] = [types.TextEdit(file_positions.range(s), new_name) for s in spans]
    return workspace_edit(edits, client, version_of)


def _param_owner(binding, path: str | None) -> str | None:
    """The library name whose param this binding is: a template's param, or an input of a named
    root or library task (a named task's params are its own inputs)."""
    from taskdsl.names import file_stem

    element = binding.element
    if binding.kind == "param" and element.tag == "template":
        return element.get("name")
    if binding.kind == "input" and element.tag == "input":
        inputs = element.parent
        task = inputs.parent if inputs is not None else None
        if task is None or task.tag != "task" or task.get("ref") is not None:
            return None
        if task.parent is None:
            return task.get("name") or file_stem(path)
        if task.parent.tag == "library":
            return task.get("name")
    return None


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
