"""Completion at a point of a template.

What is offered depends on where the cursor is (``Document.locate`` plus the text just before):

- after ``</``: the end tag of the innermost open element;
- after ``<`` or on a tag name: the elements the schema allows in the parent, leaving out the
  ones already present that may appear once;
- in whitespace of element-only content: the same elements, with their ``<``;
- in a start tag: the attributes not yet written;
- in an attribute value: its enumeration values; for ``ref``/``template`` the library's names
  with their descriptions; for ``from`` the variables in scope; for ``<arg name>`` of a call and
  ``<input name>`` of a ref task the target's params not yet bound (required first, with their
  defaults); after ``output.`` in a ``<case test>`` the fields the tested output is known to have
  (see ``output_fields``);
- in the text of an element: its enumeration values (``inherit_context``…), model identifiers in
  ``<model>`` (litellm's map, loaded on first use; the default model and the models the workspace
  already uses first, then popular providers' current chat models, then the rest), and inside
  ``{{`` the variables in scope and the templates that can be called inline.

Child elements of a task are filtered by its type (``rules.util.kind``): ``<steps>`` only in a
sequential, ``<command>`` only in a script, the reduce parts only in a reduce, and a ``ref`` task
offers only what it may hold (``<inputs>``, ``<context_management>``).

Snippets (tab stops) only when the client supports them; plain text otherwise. Every item
carries a ``textEdit`` over exactly the text it replaces.
"""

from __future__ import annotations

import re

from lsprotocol import types

from taskdsl.language.document import Document, Element, Span
from taskdsl.features import libview
from taskdsl.features.util import ClientFeatures, Positions

MAX_ITEMS = 300
K = types.CompletionItemKind
_NAME_BEFORE = re.compile(r"[A-Za-z0-9_.\-:]*$")
_VAR_BEFORE = re.compile(r"[A-Za-z0-9_]*$")


def _schema():
    from taskdsl.language import schema

    return schema.model()


def _doc(text: str | None, client: ClientFeatures) -> types.MarkupContent | str | None:
    """Markdown where the client takes it for completion items, else plain text."""
    if not text:
        return None
    if "markdown" in client.completion_formats:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
    if "plaintext" in client.completion_formats:
        return types.MarkupContent(kind=types.MarkupKind.PlainText, value=text)
    return text


def complete(doc: Document, offset: int, positions: Positions, *, client: ClientFeatures | None = None,
             library=None, settings=None, path: str | None = None) -> types.CompletionList:
    client = client or ClientFeatures()
    items = _items(doc, offset, positions, client, library, settings, path)
    incomplete = len(items) > MAX_ITEMS
    return types.CompletionList(is_incomplete=incomplete, items=items[:MAX_ITEMS])


def _items(doc, offset, positions, client, library, settings, path=None) -> list[types.CompletionItem]:
    text = doc.text
    if doc.in_comment(offset):
        return []
    before = text[max(0, offset - 200):offset]
    location = doc.locate(offset)
    element = location.element

    # </ → close the innermost open element
    end_match = re.search(r"</([A-Za-z0-9_.\-:]*)$", before)
    if end_match:
        start = offset - len(end_match.group(0))
        return _closing(doc, start, offset, positions)

    if location.kind == "attr_value" and location.attr is not None:
        return _attribute_values(doc, element, location.attr, offset, positions, client, library, settings, path)

    if location.kind == "tag_name" and element is not None:
        start = element.start_tag.start
        return _elements(doc, element.parent, Span(start, element.name_span.end), positions, client,
                         exclude=element, with_bracket=True)

    if location.kind in ("start_tag", "attr_name") and element is not None:
        if location.kind == "start_tag" and offset > 0 and not text[offset - 1].isspace():
            return []  # right after a quote or '/': not a place for a new attribute
        span = location.attr.name_span if location.attr is not None else Span(offset, offset)
        return _attributes(element, span, positions, client, editing=location.attr)

    container = element if location.kind == "content" else None
    if location.kind == "outside":
        container = None
    elif location.kind == "end_tag":
        return []

    # a lone '<' (or '<' + partial name the scanner did not take as a tag)
    lt_match = re.search(r"<([A-Za-z_][A-Za-z0-9_.\-]*)?$", before)
    if lt_match:
        start = offset - len(lt_match.group(0))
        return _elements(doc, container, Span(start, offset), positions, client, with_bracket=True)

    if container is None:
        if doc.root is None and not text[:offset].strip(" \t\r\n").endswith(">") and not before.strip():
            return _elements(doc, None, Span(offset, offset), positions, client, with_bracket=True)
        return []

    # inside {{ … in text
    open_braces = before.rfind("{{")
    if open_braces != -1 and "}}" not in before[open_braces:] and "\n" not in before[open_braces:]:
        prefix = _VAR_BEFORE.search(before).group(0)
        span = Span(offset - len(prefix), offset)
        if re.fullmatch(r"\s*[A-Za-z0-9_]*", before[open_braces + 2:]):
            return _variables(doc, container, span, positions, client, library, settings)
        return []

    path = container.path
    try:
        model = _schema()
    except Exception:
        return []
    if model.has_simple_content(path):
        word = _text_word(doc, container, offset)
        if container.tag == "model":
            return _models(word, doc.text[word.start:offset], positions, doc, library, settings)
        values = model.enum_values(path)
        return [
            types.CompletionItem(label=value, kind=K.EnumMember, documentation=_doc(documentation, client),
                                 text_edit=types.TextEdit(positions.range(word), value))
            for value, documentation in values
        ]
    if not container.has_text or model.allowed_children(path):
        if container.has_text and not model.is_mixed(path):
            return []
        if _within_text_run(container, offset):
            return []
        return _elements(doc, container, Span(offset, offset), positions, client, with_bracket=True)
    return []


def _within_text_run(element: Element, offset: int) -> bool:
    """Inside non-whitespace text (not between tags)?"""
    for piece in element.text_pieces:
        if piece.span.start < offset < piece.span.end and piece.raw.strip():
            stripped_start = piece.span.start + len(piece.raw) - len(piece.raw.lstrip())
            stripped_end = piece.span.end - (len(piece.raw) - len(piece.raw.rstrip()))
            if stripped_start <= offset <= stripped_end:
                return True
    return False


def _text_word(doc: Document, element: Element, offset: int) -> Span:
    """The trimmed text of a simple element around the offset (what a value replaces)."""
    content = element.content
    if content is None:
        return Span(offset, offset)
    start, end = content.start, content.end
    while start < offset and doc.text[start].isspace():
        start += 1
    while end > offset and doc.text[end - 1].isspace():
        end -= 1
    return Span(start, max(end, offset))


# -- elements ----------------------------------------------------------------------------------


def allowed_elements(doc: Document, parent: Element | None, exclude: Element | None = None):
    """ChildInfo of each element allowed in ``parent`` (None = top level), singletons present left out."""
    model = _schema()
    if parent is None:
        others = [root for root in doc.roots if root is not exclude]
        return [] if others else model.allowed_children(())
    infos = model.allowed_children(parent.path)
    present = {child.tag for child in parent.children if child is not exclude}
    fits = _fits_task(parent)
    return [info for info in infos if not (info.max_occurs == 1 and info.name in present) and fits(info.name)]


# children that belong to one operator only (the structure rules TD201-TD203 and TD205 say why)
_OPERATOR_ONLY = {"steps": "sequential", "command": "script",
                  **{tag: "reduce" for tag in ("initial_value", "inner_task", "reduction_task")}}
_REF_TASK_CHILDREN = ("inputs", "context_management")


def _fits_task(parent: Element):
    """Which child tags a task-like parent takes, by its type; everything for other elements and
    for a type version 1 does not know."""
    from taskdsl.rules.util import TASK_TAGS, is_ref, kind

    if parent.tag not in TASK_TAGS:
        return lambda tag: True
    if is_ref(parent):
        return lambda tag: tag in _REF_TASK_CHILDREN
    operator = kind(parent)
    if operator is None:
        return lambda tag: True
    return lambda tag: _OPERATOR_ONLY.get(tag, operator) == operator


def _elements(doc: Document, parent: Element | None, span: Span, positions: Positions, client: ClientFeatures,
              *, exclude: Element | None = None, with_bracket: bool = True) -> list[types.CompletionItem]:
    try:
        infos = allowed_elements(doc, parent, exclude)
        model = _schema()
    except Exception:
        return []
    items = []
    parent_path = parent.path if parent is not None else ()
    for index, info in enumerate(infos):
        path = parent_path + (info.name,)
        required = [a for a in model.attributes(path) if a.required]
        empty = model.is_empty(path)
        if client.snippets:
            attrs = "".join(f' {a.name}="${i + 1}"' for i, a in enumerate(required))
            body = "/>" if empty else (">$0</" + info.name + ">")
            new_text = f"<{info.name}{attrs}{body}"
            fmt = types.InsertTextFormat.Snippet
        else:
            attrs = "".join(f' {a.name}=""' for a in required)
            new_text = f"<{info.name}{attrs}{'/>' if empty else '>'}"
            fmt = types.InsertTextFormat.PlainText
        items.append(types.CompletionItem(
            label=info.name, kind=K.Class if info.name in ("task", "template") else K.Property,
            detail=_occurs(info), documentation=_doc(info.documentation, client),
            filter_text=f"<{info.name}", sort_text=f"{index:03d}",
            text_edit=types.TextEdit(positions.range(span), new_text), insert_text_format=fmt,
        ))
    return items


def _occurs(info) -> str:
    if info.min_occurs >= 1:
        return "required" + (", repeatable" if info.max_occurs is None or info.max_occurs > 1 else "")
    return "optional" + (", repeatable" if info.max_occurs is None or info.max_occurs > 1 else "")


def _closing(doc: Document, start: int, offset: int, positions: Positions) -> list[types.CompletionItem]:
    element = doc.element_at(start)
    # the scanner may have read '</' as a stray end tag of the element itself: find the open one
    while element is not None and element.end_tag is not None and element.end_tag.start < start:
        element = element.parent
    if element is None:
        return []
    end = offset
    if end < len(doc.text) and doc.text[end] == ">":
        end += 1
    new_text = f"</{element.tag}>"
    return [types.CompletionItem(label=new_text, kind=K.Property, filter_text=new_text,
                                 detail=f"close <{element.tag}>",
                                 text_edit=types.TextEdit(positions.range(Span(start, end)), new_text))]


# -- attributes --------------------------------------------------------------------------------


def _attributes(element: Element, span: Span, positions: Positions, client: ClientFeatures,
                editing=None) -> list[types.CompletionItem]:
    try:
        infos = _schema().attributes(element.path)
    except Exception:
        return []
    present = {a.name for a in element.attrs if a is not editing}
    items = []
    for info in infos:
        if info.name in present:
            continue
        if client.snippets:
            new_text, fmt = f'{info.name}="$1"', types.InsertTextFormat.Snippet
        else:
            new_text, fmt = f'{info.name}=""', types.InsertTextFormat.PlainText
        if editing is not None and editing.value_span is not None:
            new_text = info.name  # keep the value already written
            fmt = types.InsertTextFormat.PlainText
        detail = "required" if info.required else (f"default: {info.default}" if info.default else "optional")
        items.append(types.CompletionItem(
            label=info.name, kind=K.Field, detail=detail, documentation=_doc(info.documentation, client),
            sort_text=("0" if info.required else "1") + info.name,
            text_edit=types.TextEdit(positions.range(span), new_text), insert_text_format=fmt,
        ))
    return items


def _attribute_values(doc, element, attr, offset, positions, client, library, settings, path=None):
    span = attr.value_span
    if element.tag in ("task", "inner_task", "reduction_task") and attr.name == "ref":
        return _library_names(library, span, positions, client, kinds=None, here=path)
    if element.tag == "call" and attr.name in ("template", "task"):
        return _library_names(library, span, positions, client, kinds=None, here=path)
    if element.tag == "input" and attr.name == "from":
        return _variables(doc, element, span, positions, client, None, settings, calls=False)
    if attr.name == "name" and element.tag in ("arg", "input"):
        reference = binding_reference(doc, element, path)
        if reference is not None:
            return _unbound_params(library, reference, attr, span, positions, client)
    if element.tag == "case" and attr.name == "test":
        return _output_field_items(doc, element, attr, offset, positions)
    try:
        values = _schema().enum_values(element.path, attr.name)
    except Exception:
        return []
    return [
        types.CompletionItem(label=value, kind=K.EnumMember, documentation=_doc(documentation, client),
                             text_edit=types.TextEdit(positions.range(span), value))
        for value, documentation in values
    ]


# -- arguments ------------------------------------------------------------------------------------


def _binding_owner(element: Element) -> Element | None:
    parent = element.parent
    if element.tag == "arg" and parent is not None and parent.tag == "call":
        return parent
    owner = parent.parent if parent is not None and parent.tag == "inputs" else None
    if element.tag == "input" and owner is not None and owner.tag == "task" and owner.get("ref") is not None:
        return owner
    return None


def binding_reference(doc: Document, element: Element, path: str | None):
    """The library's reading of the call (for an ``<arg>``) or ref task (for an ``<input>``) whose
    params the element binds, or None."""
    from taskdsl.library import _call_reference, _ref_reference

    owner = _binding_owner(element)
    if owner is None:
        return None
    return (_call_reference if owner.tag == "call" else _ref_reference)(doc, owner, path, None)


def _unbound_params(library, reference, editing, span, positions, client) -> list[types.CompletionItem]:
    """The target's params that no other argument binds yet (positional args bind in order)."""
    entry = libview.definition(library, reference.name)
    if entry is None:
        return []
    params = libview.param_info(entry)
    bound = {p.name for p in params[:len(reference.positional)]}
    bound |= {name for name, where in reference.named if where != editing.value_span}
    items = []
    for index, param in enumerate(params):
        if param.name in bound:
            continue
        detail = "required" if param.required else (
            f"default: {param.default}" if param.default is not None else "has a default")
        items.append(types.CompletionItem(
            label=param.name, kind=K.Variable, detail=f"{detail} · param of {entry.name}",
            sort_text=f"{0 if param.required else 1}{index:03d}",
            text_edit=types.TextEdit(positions.range(span), param.name)))
    return items


# -- output fields in a cond test -----------------------------------------------------------------

_OUTPUT_DOT = re.compile(r"\boutput\.([A-Za-z0-9_]*)$")
_FIELD_USE = re.compile(r"\boutput\.([A-Za-z_][A-Za-z0-9_]*)")
_JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
_PROMPT_TAGS = ("description", "instructions", "system")


def output_fields(case: Element) -> list[tuple[str, str]]:
    """(field, where it comes from) for ``output.`` in a case's test. What is knowable: the
    ``output_format schema`` is only a shape (``object``, ``array``…) and names no field, so the
    fields are the keys of the JSON objects the tested task's prompt shows (``{"valid": …}`` in its
    description, instructions or system text) and the fields the cond's other cases already test.
    Nothing is offered when the tested task declares a schema that is not an object."""
    from taskdsl.rules.conditions import _output_task, _tested_task

    cond = case.parent
    if cond is None or cond.tag != "cond":
        return []
    fields: dict[str, str] = {}
    step = _tested_task(cond)
    task = _output_task(step) if step is not None else None
    if task is not None:
        output_format = task.child("output_format")
        shape = (output_format.get("schema") or "object").strip() if output_format is not None else "object"
        if shape != "object":
            return []
        for tag in _PROMPT_TAGS:
            prompt = task.child(tag)
            for key in _JSON_KEY.findall(prompt.text if prompt is not None else ""):
                fields.setdefault(key, f"in the prompt of the tested <{task.tag}>")
    for other in cond.children_named("case"):
        if other is not case:
            for key in _FIELD_USE.findall(other.get("test") or ""):
                fields.setdefault(key, "tested by another case")
    return list(fields.items())


def _output_field_items(doc, case, attr, offset, positions) -> list[types.CompletionItem]:
    if attr.value_span is None:
        return []
    match = _OUTPUT_DOT.search(doc.text[attr.value_span.start:offset])
    if match is None:
        return []
    span = Span(offset - len(match.group(1)), offset)
    return [types.CompletionItem(label=name, kind=K.Field, detail=where, sort_text=f"{index:03d}",
                                 text_edit=types.TextEdit(positions.range(span), name))
            for index, (name, where) in enumerate(output_fields(case))]


# -- names ----------------------------------------------------------------------------------------


def _library_names(library, span, positions, client, kinds, here=None) -> list[types.CompletionItem]:
    """Library names, without the definitions of the document itself (a task does not call itself)."""
    import os

    here = os.path.normpath(here) if here else None
    items = []
    seen = set()
    for entry in libview.entries(library):
        if entry.name in seen or (kinds and entry.kind not in kinds):
            continue
        if here and entry.path and os.path.normpath(entry.path) == here:
            continue
        seen.add(entry.name)
        detail = f"{entry.kind}({', '.join(entry.params)})" if entry.kind == "template" else (
            f"task · {entry.type or 'atomic'}" + (f" · params: {', '.join(entry.params)}" if entry.params else ""))
        items.append(types.CompletionItem(
            label=entry.name, kind=K.Function if entry.kind == "template" else K.Module, detail=detail,
            documentation=_doc(entry.description, client),
            text_edit=types.TextEdit(positions.range(span), entry.name),
        ))
    items.sort(key=lambda item: item.label)
    return items


def _variables(doc, element, span, positions, client, library, settings, calls: bool = True):
    from taskdsl.meaning.model import model_of

    items = []
    for name, binding in model_of(doc, settings).scopes.visible(element).items():
        items.append(types.CompletionItem(
            label=name, kind=K.Variable, detail=binding.kind,
            sort_text=f"{ {'input': 0, 'param': 0, 'reduce': 1, 'global': 2, 'builtin': 3}.get(binding.kind, 4)}{name}",
            text_edit=types.TextEdit(positions.range(span), name),
        ))
    if calls and library is not None:
        known = {item.label for item in items}
        for entry in libview.entries(library):
            if entry.kind != "template" or entry.name in known:
                continue
            known.add(entry.name)
            items.append(types.CompletionItem(
                label=entry.name, kind=K.Function, detail=f"template({', '.join(entry.params)})",
                documentation=_doc(entry.description, client), sort_text=f"5{entry.name}",
                text_edit=types.TextEdit(positions.range(span), entry.name),
            ))
    return items


def _models(word: Span, typed: str, positions: Positions, doc: Document | None = None, library=None,
            settings=None) -> list[types.CompletionItem]:
    from taskdsl.language import models

    typed = typed.strip().lower()
    first = [settings.default_model] if settings is not None else []
    first += used_models(doc, library)
    names = [name for name in models.known_models() if typed in name.lower()]
    rank = model_rank(first)
    names.sort(key=lambda name: (rank(name), name))
    items = []
    for index, name in enumerate(names):
        items.append(types.CompletionItem(label=name, kind=K.Value, sort_text=f"{index:05d}",
                                          text_edit=types.TextEdit(positions.range(word), name)))
    return items


# providers whose current chat models come right after the models the workspace uses
POPULAR_PROVIDERS = ("openai", "anthropic", "gemini", "mistral", "deepseek", "xai")
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$")


def model_rank(preferred: list[str]):
    """Sort key of a model name: 0 the default model and the workspace's models (in that order),
    1 a popular provider's current chat model (no dated snapshot, not deprecated), 2 the rest."""
    import datetime

    from taskdsl.language import models

    order = {name: index for index, name in reversed(list(enumerate(preferred)))}
    today = datetime.date.today().isoformat()
    table = models.model_map()

    def rank(name: str) -> tuple:
        if name in order:
            return (0, order[name])
        entry = table.get(name) or {}
        current = (entry.get("litellm_provider") in POPULAR_PROVIDERS and entry.get("mode") == "chat"
                   and not _SNAPSHOT.search(name) and str(entry.get("deprecation_date") or "9999") > today)
        return (1, 0) if current else (2, 0)

    return rank


_MODEL_TEXT = re.compile(r"<model>\s*([^<\s]+)\s*</model>")
_models_of_file: dict[str, tuple[tuple, tuple[str, ...]]] = {}  # path → (stamp, models), re-read on change
MAX_SCANNED_FILES = 2000


def used_models(doc: Document | None, library) -> list[str]:
    """The models the document and the workspace's files name in ``<model>``, most used first."""
    from collections import Counter

    from taskdsl.library import _stamp, read_text

    counts: Counter[str] = Counter()
    if doc is not None:
        counts.update(el.text.strip() for el in doc.iter() if el.tag == "model" and el.text.strip())
    for path in sorted(getattr(library, "workspace_files", ()))[:MAX_SCANNED_FILES]:
        stamp = _stamp(path)
        cached = _models_of_file.get(path)
        if cached is None or cached[0] != stamp:
            text = read_text(path) if stamp is not None else None
            cached = _models_of_file[path] = (stamp, tuple(_MODEL_TEXT.findall(text or "")))
        counts.update(cached[1])
    return [name for name, _ in counts.most_common()]
