"""Schema diagnostics (TD100–TD107): libxml2's validation errors mapped onto the document tree.

lxml validates against ``task.xsd``; each error names an element by an XPath-like ``path``, a
line and a message. Every error kind is mapped onto the tolerant tree (document.py) to choose
the range a person should look at, lemminx-style: the start-tag name for structure errors, the
attribute name or value for attribute errors, the text for content errors.

libxml2 stops checking an element's content at the first unexpected child (and never looks
inside it), so one pass would hide the rest. Hence:

1. a walk of the tree with the grammar model finds every unknown and every repeated child
   (TD101, TD107) — libxml2 reports a repeat inside ``xs:all`` as "not expected", which would
   be the wrong code;
2. those elements are pruned from a copy of the lxml tree, which is validated again; each
   further unexpected child is pruned in turn, until libxml2 has nothing new to say (bounded).

A pruned element that is a task, call or cond is validated on its own, so the errors inside a
misplaced task are not lost. The grammar model (the tables generated from the XSD) is only
consulted when libxml2 found something: a valid template costs one libxml2 validation.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from lxml import etree

from taskdsl.language import schema
from taskdsl.language.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from taskdsl.language.document import Document, Element, Span
from taskdsl.language.names import nearest as nearest_name

log = logging.getLogger(__name__)

TEMPLATE_ROOTS = ("task", "template", "library", "call", "cond")
ROOTS = TEMPLATE_ROOTS + ("tests",)  # <tests>: the root of a *.test.xml file
MAX_PASSES = 25  # revalidations after pruning; each pass prunes at least one element

# The grammar's named value types, in words (the pattern itself helps nobody).
VALUE_IN_WORDS = {
    "identifier": "a name: an ASCII letter (a-z, A-Z) or underscore, then ASCII letters, digits or underscores "
                  "(e.g. my_input)",
    "taskName": "a task name: an ASCII letter (a-z, A-Z) or underscore, then ASCII letters, digits, '_', '.' or "
                "'-' (e.g. analyze-data.v2)",
    "taskRef": "a task name (letters, digits, '_', '.', '-') or a type:subtype key (e.g. atomic:associative_matching)",
    "variableRef": "a variable name, optionally with .member, [index] or a prefix: (e.g. analysis.target)",
    "paramList": "names separated by commas and/or spaces (e.g. dataset, config)",
    "positiveInt": "a whole number greater than zero",
}


@dataclass
class _Context:
    """Everything one validation needs: the tree, the lxml→Document map and what was found."""

    doc: Document
    mapping: dict  # lxml element (of the working copy) -> Element
    nodes: dict  # Element -> lxml element (the reverse)
    found: dict  # (code, start, end) -> Diagnostic, in order of discovery
    model: object = None
    # parents with a misplaced child: a "missing child" there would only repeat the TD101
    disturbed: set = field(default_factory=set)

    def add(self, diagnostic: Diagnostic) -> None:
        key = (diagnostic.code, diagnostic.span.start, diagnostic.span.end)
        self.found.setdefault(key, diagnostic)


def validate(doc: Document, lxml_root) -> list[Diagnostic]:
    """Every schema error of a well-formed document, as TD100–TD107 diagnostics."""
    if lxml_root is None or doc.root is None:
        return []
    validator = schema.lxml_schema()
    if validator.validate(lxml_root):
        return []
    root_tag = etree.QName(lxml_root).localname if etree.QName(lxml_root).namespace is None else None
    if root_tag not in ROOTS:
        return [_not_a_root(doc.root, lxml_root)]
    context = _Context(doc, {}, {}, {}, schema.model())
    working = _copy(lxml_root)
    context.mapping = _map_elements(working, doc)
    context.nodes = {element: node for node, element in context.mapping.items()}
    flagged = _walk_children(context, doc.root)
    _prune(working, context, flagged)
    _validate_until_stable(context, validator, working)
    return list(context.found.values())


# --------------------------------------------------------------------------- the tree


def _copy(lxml_root):
    """A copy we may prune; tails and comments kept so line numbers stay true."""
    import copy

    return copy.deepcopy(lxml_root)


def _elements(lxml_root):
    return [node for node in lxml_root.iter() if isinstance(node.tag, str)]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def _map_elements(lxml_root, doc: Document) -> dict:
    """Pair the lxml elements with the scanner's, both in document order."""
    lxml_elements = _elements(lxml_root)
    doc_elements = list(doc.root.iter())
    if len(lxml_elements) != len(doc_elements):
        log.warning("lxml and the scanner disagree on the element count; paths are used instead")
        return {}
    mapping = {}
    for node, element in zip(lxml_elements, doc_elements):
        if _local(node.tag) != _local(element.tag):
            log.warning("lxml and the scanner disagree at <%s>; paths are used instead", element.tag)
            return {}
        mapping[node] = element
    return mapping


def _element_for(context: _Context, tree, error) -> Element | None:
    """The Document element an lxml error is about: by path in the validated tree, else by line."""
    node = _resolve_path(tree, error.path or "")
    if node is not None and node in context.mapping:
        return context.mapping[node]
    if not context.mapping and error.path:
        found = context.doc.find_by_xpath(error.path)
        if found is not None:
            return found
    name = _local(_quoted_after(error.message, "Element") or "")
    for element in context.doc.iter():
        if _local(element.tag) == name and context.doc.position(element.start_tag.start)[0] == error.line - 1:
            return element
    return None


def _resolve_path(tree, path: str):
    """Follow a libxml2 error path (``/task/steps/task[2]``, ``/*``) from the validated root."""
    steps = [step for step in path.split("/") if step]
    if not steps:
        return None
    try:  # libxml2 resolves its own paths in C; the walk below is for what XPath refuses (prefixes)
        found = tree.getroottree().xpath(path)
    except etree.XPathError:
        found = None
    if isinstance(found, list) and found and isinstance(getattr(found[0], "tag", None), str):
        return found[0]
    current = None
    candidates = [tree]
    for step in steps:
        match = re.fullmatch(r"([^\[\]]+)(?:\[(\d+)\])?", step)
        if not match:
            return None
        name, index = match.group(1), int(match.group(2) or 1)
        same = [node for node in candidates if isinstance(node.tag, str) and (name == "*" or _local(node.tag) == _local(name))]
        if len(same) < index:
            return None
        current = same[index - 1]
        candidates = list(current)
    return current


# --------------------------------------------------------------------------- own walk (TD101, TD107)


def _walk_children(context: _Context, root: Element) -> list[Element]:
    """Report every unknown or repeated child under elements the grammar knows; return them."""
    flagged: list[Element] = []
    stack = [root]
    while stack:
        parent = stack.pop()
        path = parent.path
        if not context.model.exists(path):
            continue
        allowed = {info.name: info for info in context.model.allowed_children(path)}
        first_seen: dict[str, Element] = {}
        count: dict[str, int] = {}
        for child in parent.children:
            info = allowed.get(child.tag)
            if info is None:
                context.add(_not_allowed(context, parent, child, allowed))
                flagged.append(child)
                context.disturbed.add(parent)
                continue
            first = first_seen.setdefault(child.tag, child)
            earlier = count.get(child.tag, 0)
            count[child.tag] = earlier + 1
            if info.max_occurs is not None and earlier >= info.max_occurs:
                context.add(_repeated(context, parent, child, first))
                flagged.append(child)
            stack.append(child)
    return flagged


def _prune(working, context: _Context, elements: list[Element]) -> list:
    """Remove these elements from the working lxml tree; returns the removed lxml nodes."""
    removed = []
    for element in elements:
        node = context.nodes.get(element)
        if node is not None and node.getparent() is not None:
            _detach(node)
            removed.append(node)
    return removed


def _detach(node) -> None:
    """Remove a node but keep its tail text where it was (it belongs to the parent)."""
    parent = node.getparent()
    tail = node.tail
    previous = node.getprevious()
    parent.remove(node)
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    node.tail = None


# --------------------------------------------------------------------------- libxml2 passes


def _validate_until_stable(context: _Context, validator, working) -> None:
    pending = [working]
    passes = 0
    while pending and passes < MAX_PASSES:
        tree = pending.pop(0)
        passes += 1
        if validator.validate(tree):
            continue
        unexpected: list = []
        for error in validator.error_log:
            element = _element_for(context, tree, error)
            if element is None:
                continue
            for diagnostic in _diagnostics_for(context, element, error):
                context.add(diagnostic)
            if _is_unexpected(error):
                unexpected.append(element)
                context.disturbed.add(element.parent)
        if not unexpected:
            continue
        removed = _prune(tree, context, unexpected)
        if removed:
            pending.append(tree)
            # a misplaced task, call or cond still deserves a check of its own content
            for node in removed:
                pending.extend(_standalone_parts(node))


def _standalone_parts(node) -> list:
    """The node itself when it is a task, call or cond; else the outermost ones inside it."""
    if _local(node.tag) in ("task", "call", "cond"):
        return [node]
    return [part for child in node if isinstance(child.tag, str) for part in _standalone_parts(child)]


def _is_unexpected(error) -> bool:
    return error.type_name == "SCHEMAV_ELEMENT_CONTENT" and "not expected" in error.message


def _diagnostics_for(context: _Context, element: Element, error) -> list[Diagnostic]:
    kind, message = error.type_name, error.message
    attribute = _quoted_after(message, "attribute")
    if kind == "SCHEMAV_CVC_ELT_1":
        return [_not_a_root(element, None)]
    if kind == "SCHEMAV_ELEMENT_CONTENT":
        if "not expected" in message:
            return [_unexpected(context, element, message)]
        if "Missing child" in message:
            return [] if element in context.disturbed else [_missing_child(element, message)]
    if kind in ("SCHEMAV_CVC_COMPLEX_TYPE_3_2_1", "SCHEMAV_CVC_COMPLEX_TYPE_3_2_2", "SCHEMAV_CVC_TYPE_3_1_1"):
        return [_attribute_not_allowed(context, element, attribute or "")]
    if kind == "SCHEMAV_CVC_COMPLEX_TYPE_4":
        return [_attribute_missing(element, attribute or "")]
    if kind in ("SCHEMAV_CVC_COMPLEX_TYPE_2_3", "SCHEMAV_CVC_COMPLEX_TYPE_2_1", "SCHEMAV_CVC_COMPLEX_TYPE_2_4"):
        if "Element content is not allowed" in message:
            return [_not_allowed(context, element, child, {}) for child in element.children]
        return _text_not_allowed(context, element)
    if kind == "SCHEMAV_CVC_TYPE_3_1_2":  # children inside a text-only element
        return [_not_allowed(context, element, child, {}) for child in element.children]
    if kind.endswith("_VALID") or "_VALID_" in kind:
        return [_invalid_value(context, element, attribute, message)]
    log.info("unmapped libxml2 error %s: %s", kind, message)
    return [Diagnostic("TD105", Severity.ERROR, element.name_span, _tidy(message))]


# --------------------------------------------------------------------------- the diagnostics


def _not_a_root(element: Element, lxml_root) -> Diagnostic:
    namespace = etree.QName(lxml_root).namespace if lxml_root is not None else None
    roots = ", ".join(f"<{name}>" for name in TEMPLATE_ROOTS)
    if namespace is not None and _local(element.tag) in ROOTS:
        message = (f"<{element.tag}> is in namespace '{namespace}': taskdsl elements have no namespace; "
                   f"remove the xmlns declaration (a template's root is one of {roots})")
    else:
        message = f"<{element.tag}> is not a taskdsl root element{_did_you_mean(element.tag, ROOTS, '<', '>')}; " \
                  f"a template's root is one of {roots}"
    return Diagnostic("TD100", Severity.ERROR, element.name_span, message)


def _allowed_here(context: _Context, parent: Element) -> list[str]:
    """Children the parent may still take: those allowed, minus once-only ones already present."""
    present = {child.tag for child in parent.children}
    return [info.name for info in context.model.allowed_children(parent.path)
            if not (info.max_occurs == 1 and info.name in present)]


def _not_allowed(context: _Context, parent: Element, child: Element, allowed: dict) -> Diagnostic:
    """TD101 for a child the grammar does not know under this parent."""
    path = parent.path
    if context.model.is_empty(path):
        message = f"<{child.tag}> is not allowed in <{parent.tag}>: <{parent.tag}> must be empty"
    elif context.model.has_simple_content(path) or not (allowed or context.model.allowed_children(path)):
        message = f"<{child.tag}> is not allowed in <{parent.tag}>: <{parent.tag}> holds text only"
    else:
        names = [info.name for info in context.model.allowed_children(path)]
        hint = _did_you_mean(child.tag, names, "<", ">")
        still = _allowed_here(context, parent)
        listed = ", ".join(still) if still else "nothing more"
        if context.model.is_mixed(path):
            listed = "text, " + listed if still else "text"
        message = f"<{child.tag}> is not allowed in <{parent.tag}>{hint}; allowed here: {listed}"
        command = _command_of(parent) if child.tag == "timeout" else None
        if command is not None:  # a script's timeout is an attribute of its command
            seconds = " ".join(child.text.split()) or "60"
            message = (f"<timeout> is not allowed in <{parent.tag}>: a script's timeout is the attribute of its "
                       f"command, <command timeout=\"{seconds}\"> (seconds); allowed here: {listed}")
            return Diagnostic("TD101", Severity.ERROR, child.name_span, message,
                              fixes=_timeout_fixes(context.doc, child, command))
        return Diagnostic("TD101", Severity.ERROR, child.name_span, message,
                          fixes=_rename_fixes(context.doc, child, still))
    return Diagnostic("TD101", Severity.ERROR, child.name_span, message)


def _command_of(task: Element) -> Element | None:
    "The <command> of a task (a script's), when it has one."
    return next((child for child in task.children if child.tag == "command"), None)


_SECONDS = re.compile(r"\d+(\.\d+)?\Z")


def _timeout_fixes(doc: Document, timeout: Element, command: Element) -> list[Fix]:
    """Move a script task's `<timeout>N</timeout>` to its command's `timeout="N"` attribute: offered
    when N is a number of seconds and the command has no timeout yet (safe: what was written, where
    it means that)."""
    seconds = timeout.text.strip()
    if not _SECONDS.match(seconds) or command.attr("timeout") is not None or timeout.end_tag is None:
        return []
    start, end = timeout.span.start, timeout.span.end
    line_start = doc.text.rfind("\n", 0, start) + 1
    line_end = doc.text.find("\n", end)
    line_end = len(doc.text) if line_end == -1 else line_end
    if not doc.text[line_start:start].strip() and not doc.text[end:line_end].strip():
        start, end = line_start, min(line_end + 1, len(doc.text))  # the element's whole line
    edits = (TextEdit(Span(command.name_span.end, command.name_span.end), f' timeout="{seconds}"'),
             TextEdit(Span(start, end), ""))
    return [Fix(f'Move the timeout to <command timeout="{seconds}">', edits, safe=True)]


def _rename_fixes(doc: Document, element: Element, allowed: list[str]) -> list[Fix]:
    """Rename a misspelt element, start and end tag together, to the nearest element still allowed
    in its parent: safe when that is the only close match."""
    nearest, sure = nearest_name(element.tag, allowed)
    if nearest is None:
        return []
    edits = [TextEdit(element.name_span, nearest)]
    end = element.end_tag
    if end is not None:
        name_start = end.start + 2  # after "</"
        if doc.text[name_start:name_start + len(element.tag)] != element.tag:
            return []  # an end tag the scanner matched loosely: do not guess where its name is
        edits.append(TextEdit(Span(name_start, name_start + len(element.tag)), nearest))
    return [Fix(f"Rename <{element.tag}> to <{nearest}>", tuple(edits), safe=sure)]


def _unexpected(context: _Context, element: Element, message: str) -> Diagnostic:
    """TD101 for a known child in the wrong place (order, or a choice already made)."""
    parent = element.parent
    if parent is None:
        return _not_a_root(element, None)
    known = {info.name for info in context.model.allowed_children(parent.path)}
    if element.tag not in known:
        return _not_allowed(context, parent, element, {})
    expected = _expected_list(message)
    if expected:
        text = f"<{element.tag}> is not allowed at this place in <{parent.tag}>; expected here: {', '.join(expected)}"
    else:
        before = _previous_sibling(element)
        after = f" after <{before.tag}>" if before is not None else ""
        text = f"<{element.tag}> is not allowed in <{parent.tag}>{after}; nothing more is allowed there"
    return Diagnostic("TD101", Severity.ERROR, element.name_span, text)


def _repeated(context: _Context, parent: Element, child: Element, first: Element) -> Diagnostic:
    line = context.doc.position(first.name_span.start)[0] + 1
    return Diagnostic(
        "TD107",
        Severity.ERROR,
        child.name_span,
        f"<{child.tag}> may appear only once in <{parent.tag}>; the first one is on line {line}: merge them or remove this one",
        [Related(f"first <{child.tag}> is here", span=first.name_span)],
    )


def _missing_child(element: Element, message: str) -> Diagnostic:
    expected = _expected_list(message)
    if len(expected) > 1:
        wanted = "one of " + ", ".join(f"<{name}>" for name in expected)
    elif expected:
        wanted = f"<{expected[0]}>"
    else:
        wanted = "a child element"
    return Diagnostic("TD102", Severity.ERROR, element.name_span,
                      f"<{element.tag}> is missing a required child: add {wanted}")


def _attribute_not_allowed(context: _Context, element: Element, name: str) -> Diagnostic:
    attribute = _attribute(element, name)
    span = attribute.name_span if attribute is not None else element.name_span
    shown = attribute.name if attribute is not None else _local(name)
    allowed = [info.name for info in context.model.attributes(element.path)]
    present = {a.name for a in element.attrs}
    if not allowed:
        message = f"attribute '{shown}' is not allowed on <{element.tag}>: it takes no attributes"
    else:
        still = [a for a in allowed if a not in present]
        hint = _did_you_mean(shown, allowed, "'", "'")
        listed = ", ".join(still) if still else "none besides those already set"
        message = f"attribute '{shown}' is not allowed on <{element.tag}>{hint}; allowed: {listed}"
        if attribute is not None:
            return Diagnostic("TD103", Severity.ERROR, span, message, fixes=_attribute_rename_fixes(attribute, still))
    return Diagnostic("TD103", Severity.ERROR, span, message)


def _attribute_rename_fixes(attribute, still: list[str]) -> list[Fix]:
    """Rename a misspelt attribute to the nearest one the element takes and does not have yet
    (never to one already set: that would repeat it): safe when that is the only close match."""
    nearest, sure = nearest_name(attribute.name, still)
    if nearest is None:
        return []
    return [Fix(f"Rename attribute '{attribute.name}' to '{nearest}'", (TextEdit(attribute.name_span, nearest),),
                safe=sure)]


def _attribute_missing(element: Element, name: str) -> Diagnostic:
    return Diagnostic("TD104", Severity.ERROR, element.name_span,
                      f"<{element.tag}> is missing the required attribute '{name}'")


def _text_not_allowed(context: _Context, element: Element) -> list[Diagnostic]:
    if context.model.is_empty(element.path):
        why = f"<{element.tag}> must be empty"
    else:
        names = [info.name for info in context.model.allowed_children(element.path)]
        why = f"<{element.tag}> holds only elements ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})"
        if "description" in names:
            why += "; put text in <description> or <instructions>" if "instructions" in names else "; put text in <description>"
    spans = [_trimmed(piece.span, context.doc.text) for piece in element.text_pieces if piece.value.strip()]
    if not spans:
        spans = [element.content or element.name_span]
    return [Diagnostic("TD106", Severity.ERROR, span, f"text is not allowed here: {why}") for span in spans]


def _invalid_value(context: _Context, element: Element, attribute_name: str | None, message: str) -> Diagnostic:
    value = _value_in(message)
    if attribute_name:
        attribute = _attribute(element, attribute_name)
        span = _attribute_value_span(element, attribute)
        subject = f"attribute '{attribute.name if attribute else attribute_name}' of <{element.tag}>"
        info = next((a for a in context.model.attributes(element.path) if a.name == _local(attribute_name)), None)
        values = info.enum if info is not None and not info.open_enum else None
        type_name = info.type_name if info is not None else None
        if value is None and attribute is not None:
            value = attribute.value
    else:
        span = _text_span(context.doc, element)
        subject = f"<{element.tag}>"
        values = [v for v, _ in context.model.enum_values(element.path)] or None
        type_name = None
        if value is None:
            value = element.text.strip()
    type_name = type_name or _type_in(message)
    shown = f"'{value}'" if value else "an empty value"
    fixes: list[Fix] = []
    if values:
        hint = _did_you_mean(value or "", values, "'", "'")
        expected = " or ".join(values) if len(values) == 2 else "one of " + ", ".join(values)
        text = f"{shown} is not valid for {subject}{hint}; expected {expected}"
        nearest, sure = nearest_name(value or "", values)
        if nearest is not None and span != element.name_span:  # the value itself is underlined
            fixes.append(Fix(f"Replace '{value}' with '{nearest}'", (TextEdit(span, nearest),), safe=sure))
    elif type_name in VALUE_IN_WORDS:
        text = f"{shown} is not valid for {subject}; expected {VALUE_IN_WORDS[type_name]}"
    else:
        text = f"{shown} is not valid for {subject}: {_tidy(message.split(':', 1)[-1])}"
    return Diagnostic("TD105", Severity.ERROR, span, text, fixes=fixes)


# --------------------------------------------------------------------------- helpers


def _did_you_mean(word: str, candidates, left: str, right: str) -> str:
    nearest, _ = nearest_name(word, candidates)
    return f" (did you mean {left}{nearest}{right}?)" if nearest else ""


def _quoted_after(message: str, word: str) -> str | None:
    match = re.search(rf"{word} '([^']*)'", message)
    return match.group(1) if match else None


def _value_in(message: str) -> str | None:
    match = re.search(r"The value '([^']*)'", message) or re.search(r": '([^']*)' is not a valid value", message)
    return match.group(1) if match else None


def _type_in(message: str) -> str | None:
    match = re.search(r"of the (?:atomic|list|union) type '([^']*)'", message)
    return match.group(1) if match else None


def _expected_list(message: str) -> list[str]:
    match = re.search(r"Expected is (?:one of )?\( ([^)]*) \)", message)
    if not match:
        return []
    return [_local(name.strip()) for name in match.group(1).split(",") if name.strip()]


def _attribute(element: Element, name: str):
    exact = element.attr(name)
    if exact is not None:
        return exact
    local = _local(name)
    return next((a for a in element.attrs if _local(a.name) == local), None)


def _attribute_value_span(element: Element, attribute) -> Span:
    if attribute is None:
        return element.name_span
    if attribute.value_span is None or len(attribute.value_span) == 0:
        return attribute.name_span
    return attribute.value_span


def _text_span(doc: Document, element: Element) -> Span:
    """The element's text without the surrounding blanks; its name when it has no text."""
    pieces = [piece for piece in element.text_pieces if piece.value.strip()]
    if not pieces:
        return element.name_span
    first = _trimmed(pieces[0].span, doc.text)
    last = _trimmed(pieces[-1].span, doc.text)
    return Span(first.start, last.end)


def _trimmed(span: Span, text: str) -> Span:
    raw = text[span.start : span.end]
    start = span.start + (len(raw) - len(raw.lstrip()))
    end = span.end - (len(raw) - len(raw.rstrip()))
    return Span(start, end) if end > start else span


def _previous_sibling(element: Element) -> Element | None:
    if element.parent is None:
        return None
    siblings = element.parent.children
    index = siblings.index(element)
    return siblings[index - 1] if index > 0 else None


def _tidy(message: str) -> str:
    message = re.sub(r"^Element '[^']*'(, attribute '[^']*')?: ", "", message.strip())
    message = message.replace("[facet 'enumeration'] ", "").replace("[facet 'pattern'] ", "")
    return message.rstrip(".")
