"""The rule registry: each check is a small unit with a code, a severity, a doc and a check.

Adding a rule touches one place: decorate its check function in its family's module.
Codes emitted by the parser and the schema stage (TD0xx, TD1xx) are registered with `check=None`
so `taskdsl rules` documents them too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterable, TypeVar

from taskdsl.language.diagnostics import Diagnostic, Severity
from taskdsl.language.document import Document, Element, Span
from taskdsl.project.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


class once(Generic[T]):
    """An attribute computed on first use and then stored on the instance: functools.cached_property
    without the lock Python 3.11 takes at every first use (a rule context serves one thread)."""

    def __init__(self, compute: Callable[[Any], T]):
        self.compute = compute
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


@dataclass
class RuleContext:
    """What a rule sees. Derived data (the elements by tag, effective settings, scopes) is computed
    once, on first use, and shared by every rule: a rule visits only the elements it concerns."""

    document: Document
    path: str | None = None
    library: Any = None  # taskdsl.library.Library, or None for a lone document
    settings: Settings = field(default_factory=Settings)
    _derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @once
    def by_tag(self) -> dict[str, list[Element]]:
        """Tag name → its elements, in document order."""
        return self._walk[1]

    @once
    def elements(self) -> list[Element]:
        """All elements, in document order."""
        return self._walk[0]

    @once
    def _walk(self) -> tuple[list[Element], dict[str, list[Element]]]:
        """The one walk of the tree: every element, and the elements by tag."""
        elements: list[Element] = []
        index: dict[str, list[Element]] = {}
        stack = self.document.roots[::-1]
        while stack:  # document order, as Document.iter(), without a generator step per element
            element = stack.pop()
            elements.append(element)
            found = index.get(element.tag)
            if found is None:
                index[element.tag] = [element]
            else:
                found.append(element)
            if element.children:
                stack.extend(reversed(element.children))
        return elements, index

    def tagged(self, *tags: str) -> list[Element]:
        """The elements named by any of tags, in document order (shared lists: do not modify them)."""
        if len(tags) == 1:
            return self.by_tag.get(tags[0], _NONE)
        found = self._derived.get(tags)
        if found is None:
            found = self._derived[tags] = self._merged(tags)
        return found

    def _merged(self, tags: tuple[str, ...]) -> list[Element]:
        present = [tag for tag in tags if tag in self.by_tag]
        if len(present) <= 1:
            return self.by_tag[present[0]] if present else _NONE
        wanted = set(present)
        return [element for element in self.elements if element.tag in wanted]

    def cached(self, compute: Callable[[RuleContext], T]) -> T:
        """compute(self), computed once per context: data that several rules of a family share."""
        try:
            return self._derived[compute]
        except KeyError:
            found = self._derived[compute] = compute(self)
            return found

    @once
    def model(self):
        """The document's semantic model (taskdsl.meaning.model): what the rules ask about meaning."""
        from taskdsl.meaning.model import model_of

        return model_of(self.document, self.settings)

    @once
    def effective(self) -> dict:
        """Element → effective context settings, for every task-like element of the document."""
        from taskdsl.meaning.context import TASK_TAGS, effective_settings_map

        return effective_settings_map(self.document, self.tagged(*TASK_TAGS), self.model.settings_of)


_NONE: list = []  # the shared empty result of tagged() (never modified)


Check = Callable[[RuleContext], Iterable[Diagnostic]]


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    title: str
    what: str
    why: str
    bad: str
    good: str
    fix: str
    check: Check | None = None
    replaces: tuple[str, ...] = ()  # schema codes this rule explains better at the same place
    tags: tuple[str, ...] = ()  # the elements the check looks at: not run on a document without any

    def doc(self) -> str:
        return (
            f"{self.code} ({self.severity.value}): {self.title}\n\n"
            f"What: {self.what}\n\nWhy: {self.why}\n\n"
            f"Bad:\n{_indent(self.bad)}\n\nGood:\n{_indent(self.good)}\n\nFix: {self.fix}\n"
        )


RULES: dict[str, Rule] = {}


def rule(code: str, severity: Severity, title: str, *, what: str, why: str, bad: str, good: str, fix: str,
         replaces: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> Callable[[Check], Check]:
    """Register a check function under a code. `tags`: the elements the check looks at (it is not
    run on a document that has none of them); empty when it looks at the whole document."""

    def register(check: Check) -> Check:
        _add(Rule(code, severity, title, what, why, bad, good, fix, check, replaces, tags))
        return check

    return register


def document_code(code: str, severity: Severity, title: str, *, what: str, why: str, bad: str, good: str, fix: str) -> None:
    """Register the doc of a code that another stage (parser, schema) emits."""
    _add(Rule(code, severity, title, what, why, bad, good, fix, None))


def _add(new: Rule) -> None:
    if new.code in RULES:
        raise ValueError(f"rule {new.code} is registered twice")
    RULES[new.code] = new


_failed_once: set[str] = set()

#: the checks of where a {{…}} may stand in a <command>: when one raises, every command is reported TD804
FAIL_CLOSED = frozenset({"TD801", "TD803", "TD804", "TD805"})
UNCHECKED_MESSAGE = "the command is too deeply nested to check: simplify it"


def _unchecked(context: "RuleContext") -> list[Diagnostic]:
    found = []
    for command in context.tagged("command"):
        span = command.name_span or Span(0, 0)
        if not any(d.code == "TD804" and d.span == span for d in found):
            found.append(Diagnostic("TD804", Severity.ERROR, span, UNCHECKED_MESSAGE, [], []))
    return found


def run_rules(document: Document, *, path: str | None = None, library: Any = None,
              settings: Settings | None = None, codes: Iterable[str] | None = None) -> list[Diagnostic]:
    """Run every registered check. A rule that raises is logged once and the others still run."""
    context = RuleContext(document, path, library, settings or Settings())
    wanted = set(codes) if codes is not None else None
    diagnostics: list[Diagnostic] = []
    present = context.by_tag.keys()
    for code, check, tags in _checks():
        if (tags is not None and present.isdisjoint(tags)) or (wanted is not None and code not in wanted):
            continue  # none of the elements the rule looks at, or not asked for
        try:
            diagnostics.extend(check(context))
        except Exception:  # a broken rule must never take the checker down
            if code in FAIL_CLOSED:  # … but a security check that cannot finish is an error, not silence
                diagnostics.extend(d for d in _unchecked(context) if d not in diagnostics)
            if code not in _failed_once:
                _failed_once.add(code)
                log.exception("rule %s failed; it is skipped for this document", code)
    return diagnostics


_ordered: tuple[int, list] = (-1, [])


def _checks() -> list[tuple[str, Check, frozenset[str] | None]]:
    """(code, check, tags or None) of every rule with a check, in code order (sorted again when
    RULES changes)."""
    global _ordered
    if _ordered[0] != len(RULES):
        _ordered = (len(RULES), [(code, RULES[code].check, frozenset(RULES[code].tags) or None)
                                 for code in sorted(RULES) if RULES[code].check is not None])
    return _ordered[1]


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.strip("\n").splitlines())
