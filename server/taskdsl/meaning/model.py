"""What one file means: the single place checking, running and the editor's features ask.

Element-level answers (a task's type, whether an input has a value, the steps of a sequential,
the params of a template) are plain functions of an element; :class:`FileModel` holds what is
computed once per text (effective settings, scopes and visibility, the uses of variables and what
is wrong with them). The rules read ``RuleContext.model``; the compiler and the runner ask
:func:`model_of` for the document they compile, so a template means the same thing in both;
:func:`model_of` builds one model per parsed text, which the rules, hover and completion share.
"""

from __future__ import annotations

import re
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from taskdsl.language.document import Document, Element, Span
from taskdsl.meaning.facts import (  # noqa: F401  (the model's element facts, importable from here too)
    from_attr,
    from_name,
    short_from,
    IDENT_RE,
    LAST_OUTPUT,
    INNER_BOUND,
    REDUCTION_BOUND,
    TEXT_TAGS,
    is_ref,
    task_type,
    task_kind,
    raw_type,
    UNSUPPORTED_HINTS,
    unknown_type,
    subtype,
    runnable_children,
    steps,
    inputs,
    input_source,
    input_has_value,
    literal_default,
    unbound_placeholder,
    empty_input_is_text,
    template_params,
    is_named_definition,
    enclosing,
    step_index,
)
from taskdsl.language.names import split_params
from taskdsl.language.vocabulary import RUNNABLE_TAGS, TASK_TAGS, collapse, enum_value


# ------------------------------------------------------------------ the file model

@dataclass(frozen=True, slots=True, init=False)
class VariableUse:
    """A name a text or a cond uses: `{{x}}`, an inline call's variable argument, or the output a
    cond tests (``last_output``)."""

    element: Element  # the element holding the text (or the <cond>)
    name: str
    span: Span  # the whole {{…}} (the cond's tag name for a cond)
    kind: str  # var | call-arg | cond

    def __init__(self, element: Element, name: str, span: Span, kind: str) -> None:
        # the slot setters directly, as document.Span does: one VariableUse per {{…}} of the file
        _use_element(self, element)
        _use_name(self, name)
        _use_span(self, span)
        _use_kind(self, kind)


_use_element, _use_name, _use_span, _use_kind = (
    getattr(VariableUse, field).__set__ for field in ("element", "name", "span", "kind"))


@dataclass(frozen=True, slots=True)
class VariableProblem:
    use: VariableUse
    message: str
    error: bool  # always an error (§17): nothing can supply a name no input, param, reduce binding,
    # last_output or declared global binds — not even a caller's variables or an undeclared --input
    guess: str | None
    visible: frozenset[str]


@dataclass(frozen=True, slots=True)
class FromProblem:
    item: Element  # the <input from=…>
    name: str | None  # the variable named (None when the value is not a variable name)
    message: str
    error: bool
    guess: str | None


IDENT_RE_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ACCESSORS_RE = re.compile(r"(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*")
MAX_LISTED = 6


def listed(names: Iterable[str]) -> str:
    names = sorted(names)
    if len(names) > MAX_LISTED:
        return ", ".join(names[:MAX_LISTED]) + ", …"
    return ", ".join(names) or "nothing"


def last_output_message(use: VariableUse) -> str:
    if use.kind == "cond":
        return ("this cond has no output to test: a cond tests the previous step's output, so it must "
                "be a second or later step of a sequential (or the root of its file, given last_output)")
    return ("{{last_output}} names nothing here: last_output is the previous step's output, visible only "
            "in a sequential's second and later steps")


MODELS_KEPT = 8  # the documents asked about last: the editor's open ones, not a whole workspace
_models: "weakref.WeakKeyDictionary[Document, FileModel]" = weakref.WeakKeyDictionary()
_kept: deque = deque()  # weak references to their Documents, oldest first


def model_of(document: Document, settings=None) -> FileModel:
    """The model of a parsed text, built once and shared by everyone who asks about the same
    Document (which is never modified after the scan) with the same settings: the rules, hover
    and completion of one version share its scopes. Kept while the Document lives, for the last
    MODELS_KEPT documents (a check of thousands of files keeps each file's model only while its
    rules run)."""
    found = _models.get(document)
    if found is None or found.settings is not settings:
        found = _models[document] = FileModel(document, settings)
        _kept.append(weakref.ref(document))
        while len(_kept) > MODELS_KEPT:
            oldest = _kept.popleft()()
            if oldest is not None and oldest is not document:
                _models.pop(oldest, None)
    return found


def misplaced(element: Element) -> Element | None:
    """The outermost element at or above `element` the grammar does not allow where it stands
    (`<reduce_task>` for `<reduction_task>`: TD101 reports it). What is written inside has no
    scope the grammar knows, so the names it uses are not reported (TD402, TD403) until the tag
    is fixed: a follow-on of the typo, not an error of its own."""
    from taskdsl.language.schema import model as grammar

    chain = [*reversed(list(element.ancestors())), element]
    tables = grammar()
    for depth in range(1, len(chain) + 1):
        if not tables.exists(tuple(e.tag for e in chain[:depth])):
            return chain[depth - 1]
    return None


class FileModel:
    """The meaning of one parsed text, computed on first use and kept for the text's lifetime."""

    def __init__(self, document: Document | None = None, settings=None, roots: list[Element] | None = None):
        self.roots = list(document.roots) if document is not None else list(roots or ())
        self.settings = settings
        self._scopes = None
        self._uses: list[VariableUse] | None = None
        self._placeholders: list | None = None

    @property
    def root(self) -> Element | None:
        return self.roots[0] if self.roots else None

    @property
    def scopes(self):
        if self._scopes is None:
            from taskdsl.meaning.scope import Scopes

            self._scopes = Scopes(self.settings)
        return self._scopes

    def settings_of(self, task: Element):
        """The effective context settings of a task-like element, read once per text (the rules
        and the scopes both ask for every task; the scopes keep them)."""
        return self.scopes.settings_of(task)

    def elements(self, *tags: str) -> Iterable[Element]:
        wanted = set(tags)
        return (e for root in self.roots for e in root.iter() if e.tag in wanted)

    def placeholders(self, text_elements: Iterable[Element] | None = None) -> list[tuple[Element, object, Span]]:
        """(element, Placeholder, span in the text) of every {{…}} in text that may hold one, in
        document order (the caller may pass the elements it has listed already)."""
        if self._placeholders is None:
            from taskdsl.language.templating import find_placeholders

            found = []
            texts = text_elements if text_elements is not None else self.elements(*TEXT_TAGS)
            for element in texts:
                for piece in element.text_pieces:
                    if "{{" in piece.raw:
                        base = piece.span.start
                        found.extend((element, ph, Span(base + ph.start, base + ph.end))
                                     for ph in find_placeholders(piece.raw))
            self._placeholders = found
        return self._placeholders

    def inline_calls(self) -> list[tuple[Element, object]]:
        """(element, Placeholder) of every inline call {{fn(…)}}."""
        return [(element, ph) for element, ph, _ in self.placeholders() if ph.kind == "call"]

    def variable_uses(self, text_elements: Iterable[Element] | None = None,
                      conds: Iterable[Element] | None = None) -> list[VariableUse]:
        """Every {{…}} variable, inline-call variable argument, and cond test (a use of last_output)."""
        if self._uses is None:
            found = []
            for element, ph, span in self.placeholders(text_elements):
                if ph.kind == "var" and ph.name:
                    found.append(VariableUse(element, ph.name, span, "var"))
                elif ph.kind == "call":
                    found.extend(VariableUse(element, a.name, span, "call-arg") for a in ph.args if a.kind == "var" and a.name)
            for cond in (conds if conds is not None else self.elements("cond")):
                found.append(VariableUse(cond, LAST_OUTPUT, cond.name_span, "cond"))
            found.sort(key=lambda use: use.span.start)
            self._uses = found
        return self._uses

    def variable_problems(self, **listed_elements) -> list[VariableProblem]:
        """The uses of names nothing visible binds: what TD402 reports and a run refuses (errors)."""
        scopes = self.scopes
        everywhere = scopes.everywhere_names()
        problems = []
        for use in self.variable_uses(**listed_elements):
            if use.name in everywhere or scopes.sees(use.element, use.name):
                continue
            if misplaced(use.element) is not None:
                continue  # inside a misspelt element (TD101): its scope is unknown until the tag is fixed
            problems.append(self._problem(use, scopes.names(use.element)))
        return problems

    def _problem(self, use: VariableUse, visible: frozenset[str]) -> VariableProblem:
        from difflib import get_close_matches

        template = enclosing(use.element, "template")
        closed = self.scopes.closed(use.element)
        if use.name == LAST_OUTPUT:
            return VariableProblem(use, last_output_message(use), True, None, visible)
        guesses = get_close_matches(use.name, list(visible), n=1, cutoff=0.7)
        guess = guesses[0] if guesses else None
        if template is not None:
            where = f"template '{template.get('name') or '?'}' sees only its params and globals"
        elif closed:
            where = "this task does not inherit its caller's variables (inherit_context)"
        else:
            where = "nothing here declares it"
        message = f"{{{{{use.name}}}}} names nothing visible: {where} (visible: {listed(visible)})"
        if guess:
            message += f"; did you mean '{guess}'?"
        return VariableProblem(use, message, True, guess, visible)

    def from_problems(self, items: Iterable[Element] | None = None) -> list[FromProblem]:
        """The `from` attributes that name nothing visible (TD403): errors where the scope is closed
        (nothing outside the file could bind the name), warnings elsewhere."""
        from difflib import get_close_matches

        problems = []
        for item in (items if items is not None else self.elements("input")):
            attr = from_attr(item)
            owner = item.parent.parent if item.parent is not None else None
            if attr is None and owner is not None and owner.tag == "task" and owner.parent is not None \
                    and owner.parent.tag == "template" and not input_has_value(item) and misplaced(item) is None:
                # an empty input of a template's task takes the call's argument of that name: a call binds
                # only the template's params, so any other name is bound by nothing (the run would fail)
                name, params = (item.get("name") or "").strip(), template_params(owner.parent)
                if name and name not in params:
                    problems.append(FromProblem(item, None, (
                        f"<input name=\"{name}\"/> takes the call's argument '{name}', and template "
                        f"'{owner.parent.get('name') or ''}' has no param '{name}' (params: {listed(params)}): "
                        f"add it to params=\"…\" or give the input a value"), True, None))
                continue
            if attr is None or attr.value_span is None or owner is None or is_named_definition(owner):
                continue  # a named task's inputs are its params: its caller's environment supplies them
            if misplaced(item) is not None:
                continue  # inside a misspelt element (TD101): its scope is unknown until the tag is fixed
            value = attr.value.strip()
            match = IDENT_RE_PREFIX.match(value)
            visible = self.scopes.names(item)
            closed = self.scopes.closed(item)
            if not match or not ACCESSORS_RE.fullmatch(value, match.end()):
                problems.append(FromProblem(item, None, f"from=\"{value}\" is not a variable name: from names a "
                                            f"variable visible here (visible: {listed(visible)})", True, None))
                continue
            name = match.group(0)
            if name in visible:
                continue
            previous = name in ("previous_step", "previous_output", "prev", "previous") and LAST_OUTPUT in visible
            guesses = [LAST_OUTPUT] if previous else get_close_matches(name, list(visible), n=1, cutoff=0.7)
            written = f"from=\"{value}\"" if item.attr("from") is not None else (
                f"<input name=\"{value}\"/> (short for from=\"{value}\")")
            message = f"{written} names nothing visible here (visible: {listed(visible)})"
            if guesses:
                message += f"; did you mean '{guesses[0]}'?"
            problems.append(FromProblem(item, name, message, True, guesses[0] if guesses else None))
        return problems

    def arg_is_variable(self, arg: Element) -> bool:
        """`<arg>x</arg>` is the variable x when x is visible there; any other text is literal."""
        text = arg.text.strip()
        return bool(IDENT_RE.match(text)) and not runnable_children(arg) and text in self.scopes.names(arg)


def top_of(element: Element) -> Element:
    while element.parent is not None:
        element = element.parent
    return element


# ------------------------------------------------------------------ models, references, arguments

from taskdsl.language.models import BUILTIN_MODELS, builtin_model_problem  # noqa: E402,F401  (asked here too)


def ambiguous_key_message(key: str, names: list[str]) -> str:
    names = sorted(set(names))
    return f"the key '{key}' matches {len(names)} definitions ({', '.join(names)}): ref one of them by name"


def unknown_target_message(name: str, options: list[str], exclude: str | None = None, where: str = "the library") -> str:
    """TD501: `name` is not defined; did-you-mean never offers `exclude` (the enclosing definition:
    calling it would make a cycle)."""
    from taskdsl.language.names import suggest

    guesses = [o for o in suggest(name, [o for o in options if o != exclude])]
    hint = f"; did you mean '{guesses[0]}'?" if guesses else ""
    if ":" in name and hint:
        return f"no task or template has the type:subtype key '{name}' in {where}{hint}"
    if ":" in name:  # nothing close: most often the tasks meant do not write subtype= at all
        return (f"no task or template has the type:subtype key '{name}' in {where}; a key counts only "
                f"the tasks and templates that write subtype= (<task name=\"…\" subtype=\"{name.split(':', 1)[1]}\">): "
                "add it to the one meant, or ref it by name")
    return f"'{name}' is not a task or template in {where}{hint}"


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    kind: str  # too-many | unknown | twice | missing
    message: str
    name: str | None = None  # the named argument concerned
    missing: tuple[str, ...] = ()  # kind "missing": the params left unbound, in order


def _count_text(target: str, params: list[tuple[str, bool]]) -> str:
    total = len(params)
    required = max((i + 1 for i, (_, has_default) in enumerate(params) if not has_default), default=0)
    names = ", ".join(p for p, _ in params)
    if total == 0:
        return f"'{target}' takes no arguments"
    counted = f"{required} to {total}" if required < total else f"{total}"
    plural = "" if counted == "1" else "s"
    return f"'{target}' takes {counted} argument{plural} ({names})"


def _params_text(params: list[tuple[str, bool]]) -> str:
    return "its parameters: " + ", ".join(p for p, _ in params) if params else "it takes no parameters"


def _quoted(names: list[str]) -> str:
    quoted = ", ".join(f"'{n}'" for n in names)
    return f"its parameter {quoted}" if len(names) == 1 else f"its parameters {quoted}"


def argument_problems(target: str, params: list[tuple[str, bool]], positional: int, named: list[str],
                      kind: str) -> list[ArgumentProblem]:
    """TD503: how a ref (`kind="ref"`: named inputs only) or a call/inline call binds the target's
    params `(name, has a literal default)`. Every param must be bound unless it has a default; a test
    case (`kind="test"`) names inputs like a ref but may leave params to the test's model."""
    known = [p for p, _ in params]
    problems: list[ArgumentProblem] = []
    if positional > len(params):
        problems.append(ArgumentProblem("too-many", f"{_count_text(target, params)}; this call passes {positional}"))
    bound = set(known[:positional])
    for name in named:
        if name not in known:
            problems.append(ArgumentProblem("unknown", f"'{target}' has no parameter '{name}' ({_params_text(params)})", name))
        elif name in bound and kind not in ("ref", "test"):
            problems.append(ArgumentProblem("twice", f"parameter '{name}' of '{target}' is bound twice (by position and by name)", name))
        bound.add(name)
    missing = [p for p, has_default in params if p not in bound and not has_default]
    if missing and positional <= len(params) and kind != "test":
        if kind == "ref":
            message = (f"ref to '{target}' does not bind {_quoted(missing)}: add an <input name=…> for each "
                       "(they have no default)")
        elif not named:
            message = f"{_count_text(target, params)}; this call passes {positional}"
        else:
            message = f"call to '{target}' does not bind {_quoted(missing)}"
        problems.append(ArgumentProblem("missing", message, missing=tuple(missing)))
    return problems
