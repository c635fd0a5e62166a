"""The rule registry: each check is a small unit with a code, a severity, a doc and a check.

Adding a rule touches one place: decorate its check function in its family's module.
Codes emitted by the parser and the schema stage (TD0xx, TD1xx) are registered with `check=None`
so `taskdsl rules` documents them too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable

from taskdsl.diagnostics import Diagnostic, Severity
from taskdsl.document import Document
from taskdsl.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class RuleContext:
    """What a rule sees. Derived data (effective settings, scopes) is computed once, on first use."""

    document: Document
    path: str | None = None
    library: Any = None  # taskdsl.library.Library, or None for a lone document
    settings: Settings = field(default_factory=Settings)

    @cached_property
    def effective(self) -> dict:
        """Element → effective context settings, for every task-like element of the document."""
        from taskdsl.context import effective_settings_map

        return effective_settings_map(self.document)


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

    def doc(self) -> str:
        return (
            f"{self.code} ({self.severity.value}): {self.title}\n\n"
            f"What: {self.what}\n\nWhy: {self.why}\n\n"
            f"Bad:\n{_indent(self.bad)}\n\nGood:\n{_indent(self.good)}\n\nFix: {self.fix}\n"
        )


RULES: dict[str, Rule] = {}


def rule(code: str, severity: Severity, title: str, *, what: str, why: str, bad: str, good: str, fix: str,
         replaces: tuple[str, ...] = ()) -> Callable[[Check], Check]:
    """Register a check function under a code."""

    def register(check: Check) -> Check:
        _add(Rule(code, severity, title, what, why, bad, good, fix, check, replaces))
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


def run_rules(document: Document, *, path: str | None = None, library: Any = None,
              settings: Settings | None = None, codes: Iterable[str] | None = None) -> list[Diagnostic]:
    """Run every registered check. A rule that raises is logged once and the others still run."""
    context = RuleContext(document, path, library, settings or Settings())
    wanted = set(codes) if codes is not None else None
    diagnostics: list[Diagnostic] = []
    for code in sorted(RULES):
        current = RULES[code]
        if current.check is None or (wanted is not None and code not in wanted):
            continue
        try:
            diagnostics.extend(current.check(context))
        except Exception:  # a broken rule must never take the checker down
            if code not in _failed_once:
                _failed_once.add(code)
                log.exception("rule %s failed; it is skipped for this document", code)
    return diagnostics


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.strip("\n").splitlines())
