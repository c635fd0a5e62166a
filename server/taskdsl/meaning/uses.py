"""Every use of every name in one document: where it is written, exactly, and what it means there.

Definition, references, rename and prepareRename are views over this one list (see
``features/navigation.py``); nothing else finds names. Three sorts of names:

- variables. Declared by an ``<input name=>`` of a task (``input``) or an entry of a template's
  ``params=`` (``param``); used as ``{{x}}`` / ``{{x.field}}`` (``placeholder``), an argument of an
  inline call ``{{fn(x)}}`` (``call-arg``), an ``<arg>`` whose whole text is a name (``arg``) and
  ``from="x"`` (``from``). Each carries the ``scope.Binding`` it resolves to, as ``scope.Scopes``
  says; ``None`` when nothing visible declares it. An ``<arg>`` word that names nothing visible is
  the word itself at run time: it is listed (with no binding) because a rename must not capture it.
- task and template names: the ``name=`` of what a file registers (``definition``), ``ref=``,
  ``<call template=>``, ``{{fn(…)}}`` (``inline``) and a test file's ``<test task=>`` (``test``).
- params bound by a caller: a ref's or a test's ``<input name=p>`` (``ref-input``) and a call's
  ``<arg name=p>`` (``arg-name``) name the param p of their target, which may be in another file.

``symbol()`` says which uses mean the same thing (what references lists and rename edits): a param of
something the library registers (a template's param, an input of a named task) is one symbol across
files, ``("param", owner, name)``; any other variable is its binding; a task is its resolved name.
``workspace_uses()`` gathers a symbol's uses in every file of the library that can hold one, and
``rename_edits()`` turns them into edits after refusing what would change what a template computes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from taskdsl.language.document import Attr, Document, Element, Span, parse
from taskdsl.language.names import file_stem
from taskdsl.meaning.facts import LAST_OUTPUT, inputs as input_elements, short_from
from taskdsl.meaning.scope import TASK_TAGS, Binding, Scopes, param_list
from taskdsl.language.templating import find_placeholders

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TASK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
TASK_REF = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(?::[A-Za-z_][A-Za-z0-9_.\-]*)?")  # a name or a type:subtype key

DECLARATIONS = frozenset(("input", "param", "definition"))
VARIABLE_FORMS = frozenset(("input", "param", "placeholder", "call-arg", "arg", "from"))
TASK_FORMS = frozenset(("definition", "ref", "call", "inline", "test"))
PARAM_FORMS = frozenset(("ref-input", "arg-name"))


class RenameError(ValueError):
    """A rename that is refused, with the reason for the user."""


@dataclass(frozen=True, slots=True)
class Use:
    name: str
    span: Span  # exactly the name as written
    form: str  # one of the forms above
    element: Element  # the element the name is written in (or on)
    binding: Binding | None = None  # variables: what the name resolves to here
    target: str | None = None  # param forms: the ref/call target as written

    @property
    def declaration(self) -> bool:
        return self.form in DECLARATIONS

    @property
    def literal(self) -> bool:
        """An <arg> word that names nothing visible: text, not a use."""
        return self.form == "arg" and self.binding is None


# -- one document ---------------------------------------------------------------------------------


def document_uses(doc: Document, settings=None, *, names: Iterable[str] | None = None,
                  scopes: Scopes | None = None) -> list[Use]:
    """Every use of every name in doc (of `names` only, when given), in document order."""
    wanted = frozenset(names) if names is not None else None
    scopes = scopes or Scopes(settings)
    found: list[Use] = []

    def add(name: str, span: Span | None, form: str, element: Element, binding=None, target=None) -> None:
        if span is not None and (wanted is None or name in wanted):
            found.append(Use(name, span, form, element, binding, target))

    def variable(name: str, span: Span | None, form: str, element: Element) -> None:
        if span is not None and (wanted is None or name in wanted):
            found.append(Use(name, span, form, element, scopes.visible(element).get(name)))

    for element in doc.iter():
        tag = element.tag
        if _defines_task(element):
            add(*_attr_name(element.attr("name"), TASK_NAME), "definition", element)
        if tag == "template" or (tag == "task" and element.parent is None and element.get("parameters") is not None):
            attr_name = "params" if tag == "template" else "parameters"
            declared = scopes.visible(element)
            for name, span in param_list(element, attr_name):
                add(name, span, "param", element, _own(declared.get(name), element, span)
                    or Binding("param", name, element, element.attr(attr_name), span))
        if tag in TASK_TAGS and element.attr("ref") is not None:
            target = _attr_name(element.attr("ref"), TASK_REF)
            add(*target, "ref", element)
            for item in _inputs(element):
                add(*_attr_name(item.attr("name"), IDENT), "ref-input", item, target=target[0])
        elif tag == "test" and element.parent is not None and element.parent.tag == "tests":
            target = _attr_name(element.attr("task"), TASK_REF)  # resolved like a ref (library.definitions)
            add(*target, "test", element)
            for item in element.children_named("input"):
                add(*_attr_name(item.attr("name"), IDENT), "ref-input", item, target=target[0])
        elif tag == "call":
            target = _attr_name(element.attr("template") or element.attr("task"), TASK_REF)
            add(*target, "call", element)
            for arg in element.children_named("arg"):
                add(*_attr_name(arg.attr("name"), IDENT), "arg-name", arg, target=target[0])
        elif tag == "input":
            owner = _input_owner(element)
            if owner is not None and owner.attr("ref") is None:
                name, span = _attr_name(element.attr("name"), IDENT)
                if span is not None:
                    add(name, span, "input", element, _own(scopes.visible(owner).get(name), element, span)
                        or Binding("input", name, element, element.attr("name"), span))
            source = element.attr("from")
            if source is None and short_from(element):  # <input name="p"/> on a ref: from="p"
                source = element.attr("name")
            if source is not None:
                variable(*_attr_name(source, IDENT, prefix=True), "from", element)
        elif tag == "arg" and not element.children:
            name, span = _word(element)
            if span is not None:
                variable(name, span, "arg", element)
        for piece in element.text_pieces:
            if "{{" in piece.raw:
                _placeholder_uses(piece.raw, piece.start, element, add, variable)
    found.sort(key=lambda use: (use.span.start, use.span.end))
    return found


def use_at(doc: Document, offset: int, settings=None) -> Use | None:
    """The use whose name the offset touches (its start, inside or its end)."""
    for use in document_uses(doc, settings):
        if use.span.start <= offset <= use.span.end and not use.literal:
            return use
    return None


def _placeholder_uses(raw: str, base: int, element: Element, add, variable) -> None:
    for placeholder in find_placeholders(raw):
        if placeholder.kind not in ("var", "call") or not placeholder.name:
            continue
        after = placeholder.start + 2
        start = base + after + len(raw[after:]) - len(raw[after:].lstrip())
        span = Span(start, start + len(placeholder.name))
        if placeholder.kind == "var":
            variable(placeholder.name, span, "placeholder", element)
            continue
        add(placeholder.name, span, "inline", element)
        for arg in placeholder.args:
            if arg.kind == "var" and arg.name:
                at = base + arg.offset
                variable(arg.name, Span(at, at + len(arg.name)), "call-arg", element)


def _defines_task(element: Element) -> bool:
    """Does this element's ``name`` register a library name (a template, a root or library task)?"""
    if element.tag == "template":
        return element.parent is None or element.parent.tag == "library"
    return element.tag == "task" and (element.parent is None or element.parent.tag == "library")


def _input_owner(item: Element) -> Element | None:
    inputs = item.parent
    owner = inputs.parent if inputs is not None and inputs.tag == "inputs" else None
    return owner if owner is not None and owner.tag in TASK_TAGS else None


def _inputs(task: Element) -> list[Element]:
    return input_elements(task)


def _own(binding: Binding | None, element: Element, span: Span) -> Binding | None:
    """The scope's binding when it is this very declaration (a duplicate gets its own)."""
    return binding if binding is not None and binding.element is element and binding.span == span else None


def _attr_name(attr: Attr | None, pattern: re.Pattern, prefix: bool = False) -> tuple[str, Span | None]:
    """The name an attribute value holds (surrounding blanks trimmed) and its exact span; with
    prefix, the name that starts the value (``from="x.field"`` names x). No span when there is no
    name, or when entities make the written text differ from the value."""
    if attr is None or attr.value_span is None:
        return "", None
    value = attr.value.strip()
    match = pattern.match(value) if prefix else pattern.fullmatch(value)
    if match is None:
        return value, None
    name = match.group(0)
    if len(attr.value_span) == len(attr.value):
        start = attr.value_span.start + len(attr.value) - len(attr.value.lstrip())
        return name, Span(start, start + len(name))
    return name, attr.value_span if name == attr.value else None


def _word(arg: Element) -> tuple[str, Span | None]:
    """An <arg> whose whole text is one identifier: the identifier and where it is written."""
    text = arg.text.strip()
    if not IDENT.fullmatch(text):
        return text, None
    for piece in arg.text_pieces:
        if piece.value.strip() == text:
            raw = piece.raw.strip()
            start = piece.start + len(piece.raw) - len(piece.raw.lstrip())
            return text, Span(start, start + len(raw))
    return text, None


# -- what a use means ------------------------------------------------------------------------------


Resolve = Callable[[str], str]


def symbol(use: Use, path: str | None = None, resolve: Resolve | None = None) -> tuple | None:
    """What the use names, the same for every use of the same thing (across files for a task and a
    param of something the library registers); None for an <arg> word that is text."""
    resolve = resolve or (lambda written: written)
    if use.form in TASK_FORMS:
        if ":" in use.name:
            return ("key", use.name)  # a ref by type:subtype names the key, not the task's name
        return ("task", resolve(use.name))
    if use.form in PARAM_FORMS:
        return ("param", resolve(use.target), use.name) if use.target else None
    binding = use.binding
    if binding is None:
        return None if use.literal else ("unbound", use.name)
    owner = param_owner(binding, path)
    if owner is not None:
        return ("param", owner, binding.name)
    return ("variable", binding.kind, binding.name, binding.element)


def param_owner(binding: Binding, path: str | None) -> str | None:
    """The library name whose param a binding is: a template's param, or an input of a named root
    or library task (a named task's params are its own inputs)."""
    element = binding.element
    if element is None:
        return None
    if binding.kind == "param":
        return element.get("name") if _defines_task(element) else None
    if binding.kind == "input" and element.tag == "input":
        task = _input_owner(element)
        if task is None or task.tag != "task" or task.get("ref") is not None or not _defines_task(task):
            return None
        return task.get("name") or (file_stem(path) if task.parent is None else None)
    return None


def library_resolver(library) -> Resolve:
    """A written ref → the definition name the library resolves it to (by name, then key)."""
    def resolve(written: str) -> str:
        found = library.definition(written) if library is not None else None
        return found.name if found is not None else written
    return resolve


# -- across files ---------------------------------------------------------------------------------


def workspace_uses(wanted: tuple, here: str, doc: Document, *, library=None,
                   document_of: Callable[[str], Document | None] | None = None,
                   settings=None) -> dict[str, list[Use]]:
    """path → the uses of the symbol `wanted` in it: this document (as it is now) and, for a task
    or a param of a registered name, every file that defines the name or refers to it."""
    resolve = library_resolver(library)
    paths = [here]
    if wanted[0] in ("task", "param", "key") and library is not None and document_of is not None:
        name = wanted[1] if wanted[0] != "key" else resolve(wanted[1])
        related = {d.path for d in library.definitions(name) if d.path} | set(library.dependents(name))
        paths.extend(sorted(related - {here}))
    names = _written_names(wanted, library)
    found: dict[str, list[Use]] = {}
    for path in paths:
        file_doc = doc if path == here else document_of(path)
        if file_doc is None:
            continue
        uses = [use for use in document_uses(file_doc, settings, names=names)
                if symbol(use, path, resolve) == wanted]
        if uses:
            found[path] = uses
    return found


def _written_names(wanted: tuple, library) -> set[str]:
    """The names a use of the symbol may be written as (a task also by its type:subtype keys)."""
    if wanted[0] == "param":
        return {wanted[2]}
    if wanted[0] == "variable":
        return {wanted[2]}
    return {wanted[1]}


# -- the three questions, for a point of a document -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Site:
    """The name under the cursor: the use, and what it means."""

    use: Use
    symbol: tuple


class Workspace:
    """This document as it is now, the library it belongs to, and a way to read any other file."""

    def __init__(self, doc: Document, path: str, *, library=None,
                 document_of: Callable[[str], Document | None] | None = None, settings=None):
        self.doc, self.path, self.library, self.settings = doc, path, library, settings
        self.document_of = document_of
        self.resolve = library_resolver(library)

    def site(self, offset: int) -> Site | None:
        use = use_at(self.doc, offset, self.settings)
        if use is None:
            return None
        found = symbol(use, self.path, self.resolve)
        return Site(use, found) if found is not None else None

    def uses(self, wanted: tuple) -> dict[str, list[Use]]:
        return workspace_uses(wanted, self.path, self.doc, library=self.library,
                              document_of=self.document_of, settings=self.settings)

    def document(self, path: str) -> Document | None:
        return self.doc if path == self.path else (self.document_of(path) if self.document_of else None)

    def definitions(self, offset: int) -> list[tuple[str, Span]]:
        """Where the name under the cursor is declared: a variable's binding, a param's entry in its
        template (or its named task's input), a task's definition. (path, span of the name)."""
        site = self.site(offset)
        if site is None:
            return []
        use, wanted = site.use, site.symbol
        if wanted[0] == "key":
            wanted = ("task", self.resolve(wanted[1]))  # the task the key resolves to
        if wanted[0] in ("task", "param") and self.library is not None:
            entry = self.library.definition(wanted[1])
            if entry is not None and entry.path and entry.path != self.path:
                if wanted[0] == "task":  # a root task named after its file: its tag name
                    return [(entry.path, entry.name_span or Span(entry.span.start + 1, entry.span.start + 5))]
                declared = [(path, u.span) for path, uses in self.uses(wanted).items() for u in uses if u.declaration]
                if declared:
                    return declared
        if use.binding is not None:
            binding = use.binding
            if binding.span is not None:
                return [(self.path, binding.span)]
            if binding.element is not None:  # bound by the reduce operator: the inner/reduction task
                return [(self.path, binding.element.name_span)]
            return []
        return [(path, u.span) for path, uses in self.uses(wanted).items() for u in uses if u.declaration]

    def references(self, offset: int, include_declaration: bool = True) -> dict[str, list[Span]]:
        """Every place that names what the cursor names (the very places a rename edits)."""
        site = self.site(offset)
        if site is None:
            return {}
        found = {path: [u.span for u in uses if include_declaration or not u.declaration]
                 for path, uses in self.uses(site.symbol).items()}
        return {path: spans for path, spans in found.items() if spans}

    def rename_target(self, offset: int) -> Use | None:
        """The use a rename at offset would start from; RenameError when the name cannot be renamed."""
        site = self.site(offset)
        if site is None:
            return None
        refusal = _unrenameable(site)
        if refusal:
            raise RenameError(refusal)
        return site.use

    def rename(self, offset: int, new: str) -> dict[str, list[Span]]:
        """path → the spans to replace with `new`; RenameError when the rename would break a
        reference or change what a template computes."""
        site = self.site(offset)
        if site is None:
            return {}
        refusal = _unrenameable(site)
        if refusal:
            raise RenameError(refusal)
        old, wanted = _old_name(site), site.symbol
        if wanted[0] == "task":
            self._check_task_name(old, new)
        elif not IDENT.fullmatch(new):
            raise RenameError(f"'{new}' is not a valid name: use letters, digits and '_', not starting with a digit")
        found = self.uses(wanted)
        if new != old and wanted[0] != "task":
            for path, uses in found.items():
                self._check_capture(path, uses, wanted, old, new)
        return {path: [u.span for u in uses] for path, uses in found.items()}

    # -- refusals ------------------------------------------------------------------------------

    def _check_task_name(self, old: str, new: str) -> None:
        if self.library is not None and self.library.named(old):
            self.library.check_rename(old, new)  # valid, free, every definition renameable
            return
        if not TASK_NAME.fullmatch(new):
            raise RenameError(f"'{new}' is not a valid task name: use letters, digits, '_', '.' and '-', "
                              "starting with a letter or '_'")
        if new != old and any(u.form == "definition" for u in document_uses(self.doc, names=(new,))):
            raise RenameError(f"'{new}' is already defined in this file")

    def _check_capture(self, path: str, uses: list[Use], wanted: tuple, old: str, new: str) -> None:
        doc = self.document(path)
        if doc is None:
            return
        scopes = Scopes(self.settings)
        renamed = {u.binding for u in uses if u.binding is not None}
        for use in uses:
            if use.form in PARAM_FORMS:
                siblings = use.element.parent.children if use.element.parent is not None else []
                if any(s is not use.element and s.get("name") == new for s in siblings):
                    raise RenameError(f"'{new}' is already bound beside '{old}' at line {_line(doc, use.span)}")
                continue
            scope = _input_owner(use.element) if use.form == "input" else use.element
            other = scopes.visible(scope).get(new) if scope is not None else None
            if other is not None and other not in renamed:
                raise RenameError(f"'{new}' is already visible at line {_line(doc, use.span)}: "
                                  f"{describe(other, doc)}; choose another name")
        _verify(doc, path, uses, wanted, old, new, self.settings, self.resolve)


def _old_name(site: Site) -> str:
    return site.symbol[2] if site.symbol[0] == "param" else site.use.name


def _unrenameable(site: Site) -> str | None:
    use, wanted = site.use, site.symbol
    if wanted[0] == "key":
        return (f"'{use.name}' is a type:subtype key, not a name: rename the task it resolves to at its "
                "definition, or change its type or subtype")
    if wanted[0] == "unbound" and use.name == LAST_OUTPUT:  # built in, even where no previous step exists
        return f"'{use.name}' is built in: it cannot be renamed"
    if wanted[0] == "unbound":
        return f"'{use.name}' names nothing visible here: nothing to rename"
    if wanted[0] == "variable":
        kind = wanted[1]
        if kind == "builtin":
            return f"'{use.name}' is built in: it cannot be renamed"
        if kind == "global":
            return f"'{use.name}' is a global: rename it in the taskdsl.globals setting"
        if kind == "reduce":
            return f"'{use.name}' is bound by the reduce operator: it cannot be renamed"
    return None


def describe(binding: Binding, doc: Document) -> str:
    if binding.kind == "builtin":
        return f"the built-in {binding.name}"
    if binding.kind == "global":
        return f"the global {binding.name}"
    if binding.kind == "reduce":
        return f"{binding.name}, bound by the reduce operator"
    where = f" (line {_line(doc, binding.span)})" if binding.span is not None else ""
    if binding.kind == "param":
        return f"param {binding.name} of {binding.element.get('name') or 'the template'}{where}"
    return f"input {binding.name}{where}"


def _line(doc: Document, span: Span) -> int:
    return doc.position(span.start)[0] + 1


def _verify(doc: Document, path: str, uses: list[Use], wanted: tuple, old: str, new: str, settings,
            resolve: Resolve) -> None:
    """Rename in a copy of the text and check that every use of either name means what it meant:
    nothing captured (an inner declaration, an <arg> word that would become a variable), nothing
    escaping to an outer declaration."""
    edits = sorted((u.span for u in uses), key=lambda span: span.start)
    text, pos, shifted = [], 0, []
    for span in edits:
        text.append(doc.text[pos:span.start])
        text.append(new)
        pos = span.end
        shifted.append((span.end, len(new) - len(span)))
    text.append(doc.text[pos:])
    after_doc = parse("".join(text))

    def moved(offset: int) -> int:
        return offset + sum(delta for end, delta in shifted if end <= offset)

    def meaning(use: Use, position: Callable[[int], int], renamed: bool) -> tuple:
        if use.literal:
            return ("text",)
        binding = use.binding
        if binding is None:
            return ("unbound", new if renamed else use.name)
        at = binding.span.start if binding.span is not None else (binding.element.start if binding.element else -1)
        return ("bound", binding.kind, new if renamed else binding.name, position(at) if at >= 0 else None)

    names = (old, new)
    before = [u for u in document_uses(doc, settings, names=names) if u.form in VARIABLE_FORMS]
    after = {u.span.start: u for u in document_uses(after_doc, settings, names=names) if u.form in VARIABLE_FORMS}
    for use in before:
        renamed = symbol(use, path, resolve) == wanted
        expected = meaning(use, moved, renamed)
        now = after.get(moved(use.span.start))
        got = meaning(now, lambda offset: offset, False) if now is not None else ("text",)
        if got != expected:
            written = new if renamed else use.name
            raise RenameError(f"renaming '{old}' to '{new}' would change what '{written}' at line "
                              f"{_line(doc, use.span)} refers to: choose another name")
