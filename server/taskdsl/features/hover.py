"""Hover: what the thing under the cursor means.

- a tag name: the XSD documentation of the element; for a task also its effective context
  settings (which came from the operator's defaults), for a ``ref`` task the target;
- an attribute name or an enumeration value (attribute or element text): its documentation;
- a ``ref``/``template`` value or an inline ``{{fn(…)}}`` call: the target's description,
  params (each required or with its default) and location;
- the ``name`` of a call's ``<arg>`` or a ref's ``<input>``: the target's param it binds;
- a ``{{var}}`` or a ``from`` value: where the variable comes from, and an input's default (the
  literal value its task gives it);
- a model identifier: its context window (from litellm's model map).

Markdown when the client takes it, plain text otherwise.
"""

from __future__ import annotations

from lsprotocol import types

from taskdsl.language.document import Document, Element, Span
from taskdsl.features import libview
from taskdsl.features.util import TASK_TAGS, ClientFeatures, Positions, stripped_span


class _Text:
    """Builds hover text as Markdown or plain text."""

    def __init__(self, markdown: bool):
        self.markdown = markdown
        self.parts: list[str] = []

    def code(self, text: str) -> str:
        return f"`{text}`" if self.markdown else text

    def title(self, text: str) -> None:
        self.parts.append(f"**{text}**" if self.markdown else text)

    def para(self, text: str | None) -> None:
        if text:
            self.parts.append(text)

    def value(self) -> str:
        return "\n\n".join(self.parts)


def hover(doc: Document, offset: int, positions: Positions, *, client: ClientFeatures | None = None,
          library=None, settings=None, positions_for=None, path: str | None = None) -> types.Hover | None:
    client = client or ClientFeatures()
    found = describe_at(doc, offset, client.markdown, library, settings, positions_for, path)
    if found is None:
        return None
    text, span = found
    kind = types.MarkupKind.Markdown if client.markdown else types.MarkupKind.PlainText
    return types.Hover(contents=types.MarkupContent(kind=kind, value=text), range=positions.range(span))


def describe_at(doc: Document, offset: int, markdown: bool = True, library=None, settings=None,
                positions_for=None, path: str | None = None) -> tuple[str, Span] | None:
    """(hover text, span hovered) at an offset, or None. `path`: the document's file (what the
    memory system would match for a <fresh_context> is the project's)."""
    location = doc.locate(offset)
    element = location.element
    if element is None or doc.in_comment(offset):
        return None
    out = _Text(markdown)
    model = _schema()
    found = _with_memory(describe_at_element(doc, offset, location, element, out, model, library, settings,
                                             positions_for), element, path, settings, markdown)
    return found


def _with_memory(found, element: Element, path: str | None, settings, markdown: bool):
    """A <fresh_context> hover says what the memory would match now (features/memory.py)."""
    if found is None or element.tag != "fresh_context":
        return found
    from taskdsl.features.memory import fresh_context_note

    note = fresh_context_note(element, path, settings, markdown)
    return (f"{found[0]}\n\n{note}", found[1]) if note else found


def describe_at_element(doc: Document, offset: int, location, element: Element, out: _Text, model, library, settings,
                        positions_for) -> tuple[str, Span] | None:

    if location.kind in ("tag_name", "end_tag"):
        span = element.name_span if location.kind == "tag_name" else element.end_tag
        out.title(f"<{element.tag}>")
        out.para(model.documentation(element.path) if model else None)
        if element.tag in TASK_TAGS:
            if element.get("ref"):
                _target(out, element.get("ref"), library, positions_for)
            else:
                _context(out, element)
        return (out.value(), span) if len(out.parts) > 1 or model else None

    if location.kind == "attr_name" and location.attr is not None:
        attr = location.attr
        out.title(f"{attr.name}")
        documentation = model.documentation(element.path, attr.name) if model else None
        if not documentation:
            return None
        out.para(documentation)
        return out.value(), attr.name_span

    if location.kind == "attr_value" and location.attr is not None:
        attr = location.attr
        span = attr.value_span
        if (attr.name == "ref" and element.tag in TASK_TAGS or element.tag == "call" and attr.name in ("template", "task")
                or element.tag == "test" and attr.name == "task"):  # what a test runs: as a ref names it
            out.title(f"{attr.value}")
            if not _target(out, attr.value, library, positions_for):
                out.para(f"{out.code(attr.value)} is not in the library." if library is not None
                         else f"{out.code(attr.value)}: the project's library is still being indexed; hover again in a moment.")
            return out.value(), span
        if element.tag == "input" and attr.name == "from":
            return _variable(out, doc, element, attr.value.split(".")[0].split("[")[0], settings, span)
        if attr.name == "name" and element.tag in ("arg", "input"):
            found = _bound_param(out, doc, element, attr.value, library)
            if found:
                return out.value(), span
        documentation = model.documentation(element.path, attr.name, attr.value) if model else None
        if documentation:
            out.title(f"{attr.name}=\"{attr.value}\"")
            out.para(documentation)
            return out.value(), span
        return None

    if location.kind == "content":
        # a {{…}} placeholder?
        for piece in element.text_pieces:
            if piece.span.start <= offset <= piece.span.end and not piece.cdata:
                from taskdsl.language.templating import find_placeholders

                for placeholder in find_placeholders(piece.raw):
                    start, end = piece.span.start + placeholder.start, piece.span.start + placeholder.end
                    if start <= offset <= end:
                        if placeholder.kind == "var" and placeholder.name:
                            return _variable(out, doc, element, placeholder.name, settings, Span(start, end))
                        if placeholder.kind == "call" and placeholder.name:
                            out.title(f"{placeholder.name}(…)")
                            if not _target(out, placeholder.name, library, positions_for):
                                out.para(f"{out.code(placeholder.name)} is not in the library." if library is not None
                         else f"{out.code(placeholder.name)}: the project's library is still being indexed; hover again in a moment.")
                            return out.value(), Span(start, end)
                        return None
        text = element.text.strip()
        if not text or element.children:
            return None
        span = _text_span(doc, element)
        if span is None or not span.start <= offset <= span.end:
            return None
        if element.tag == "model":
            return _model(out, text), span
        documentation = model.documentation(element.path, None, text) if model else None
        if documentation:
            out.title(f"<{element.tag}>{text}")
            out.para(documentation)
            return out.value(), span
    return None


def _schema():
    try:
        from taskdsl.language import schema

        return schema.model()
    except Exception:
        return None


def _text_span(doc: Document, element: Element) -> Span | None:
    if element.content is None:
        return None
    span = stripped_span(doc.text, element.content)
    return span if span.end > span.start else None


def _context(out: _Text, element: Element) -> None:
    from taskdsl.meaning import context

    settings = context.effective_settings(element)
    out.para(f"Effective context ({settings.operator}): {out.code(context.describe(settings))}")
    lines = []
    for name in context.FIELDS:
        value = settings.value(name)
        if value is None and name not in settings.explicit:
            continue
        shown = ("true" if value else "false") if isinstance(value, bool) else str(value)
        origin = "set here" if name in settings.explicit else "default"
        lines.append(f"- {out.code(name)}: {out.code(shown)} ({origin})" if out.markdown
                     else f"  {name}: {shown} ({origin})")
    if lines:
        out.para("\n".join(lines))


def _target(out: _Text, name: str, library, positions_for) -> bool:
    entry = libview.definition(library, name)
    if entry is None:
        return False
    kind = entry.kind if entry.kind == "template" else f"task · {entry.type or 'atomic'}"
    out.para(kind + ("" if entry.params else " · no params"))
    if entry.params:
        out.para("\n".join(_param_line(out, param) for param in libview.param_info(entry)))
    out.para(entry.description)
    if positions_for is not None:
        where = libview.describe_location(entry, positions_for)
        if where:
            out.para(f"Defined in {out.code(where)}")
    return True


def _param_line(out: _Text, param) -> str:
    if param.required:
        state = "required"
    elif param.default is not None:
        state = f"default {out.code(param.default)}"
    else:
        state = "has a default"
    return f"- {out.code(param.name)}: {state}" if out.markdown else f"  {param.name}: {state}"


def _bound_param(out: _Text, doc: Document, element: Element, name: str, library) -> bool:
    """Hover on the name of a call's <arg> or a ref's <input>: the target's param it binds."""
    from taskdsl.features.completion import binding_reference

    reference = binding_reference(doc, element, None)
    entry = libview.definition(library, reference.name) if reference is not None else None
    if entry is None:
        return False
    out.title(name)
    param = next((p for p in libview.param_info(entry) if p.name == name), None)
    if param is None:
        out.para(f"{out.code(entry.name)} has no param {out.code(name)}.")
    else:
        out.para(f"Binds the param of {out.code(entry.name)}\n\n{_param_line(out, param)}")
    return True


def _variable(out: _Text, doc: Document, element: Element, name: str, settings, span: Span):
    from taskdsl.meaning.model import model_of

    binding = model_of(doc, settings).scopes.visible(element).get(name)
    out.title(name)
    if binding is None:
        out.para(f"{out.code(name)} names nothing visible here.")
    else:
        where = {
            "input": "an input of an enclosing task",
            "param": "a param of the enclosing template",
            "reduce": "bound by the reduce operator",
            "builtin": "built in: the previous output",
            "global": "a global (taskdsl.globals)",
        }.get(binding.kind, binding.kind)
        out.para(where)
        default = _literal_default(binding)
        if default is not None:
            out.para(f"Default: {out.code(default)}")
    return out.value(), span


def _literal_default(binding) -> str | None:
    """The literal text an <input> gives its name (its default when a ref leaves it unbound)."""
    from taskdsl.meaning import scope

    element = binding.element
    if binding.kind != "input" or element is None or element.tag != "input":
        return None
    if scope.is_placeholder_input(element) or element.children or element.get("from"):
        return None
    return element.text.strip() or None


def _model(out: _Text, name: str) -> str:
    from taskdsl.language import models

    out.title(name)
    if not models.is_known_model(name):
        out.para("Not a model litellm knows.")
        return out.value()
    window = models.context_window(name)
    out.para(f"Context window: {window:,} tokens" if window else "Context window: unknown")
    return out.value()
