"""check: text → diagnostics. Parse, then well-formedness, schema, rules and library rules.

A document that is not well-formed gets only its TD001 diagnostics: schema and rule findings on a
half-parsed tree would be noise. Rule diagnostics that explain a schema error better (a legacy
value, say) replace the schema error reported for the same place.
"""

from __future__ import annotations

import bisect
import logging
from dataclasses import dataclass, field

from taskdsl.language.diagnostics import Diagnostic
from taskdsl.language.document import Document, parse
from taskdsl.language.safexml import wellformedness
from taskdsl.project.settings import Settings
from taskdsl.rules.suppression import visible

log = logging.getLogger(__name__)


@dataclass
class CheckResult:
    document: Document
    diagnostics: list[Diagnostic] = field(default_factory=list)
    well_formed: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]


def check_document(doc: Document, *, path: str | None = None, library=None, settings: Settings | None = None) -> CheckResult:
    settings = settings or Settings()
    lxml_root, diagnostics = wellformedness(doc)
    if diagnostics:
        shown = visible(doc, diagnostics, path=path, settings=settings, well_formed=False)
        return CheckResult(doc, _sorted(shown), well_formed=False)
    from taskdsl.language import schema_check
    from taskdsl.rules import run_rules

    schema_diagnostics = schema_check.validate(doc, lxml_root)
    rule_diagnostics = run_rules(doc, path=path, library=library, settings=settings)
    merged = _drop_superseded(schema_diagnostics, rule_diagnostics) + rule_diagnostics
    # rule selection and inline suppression: the one place, for the CLI, the server and the run
    shown = visible(doc, merged, path=path, settings=settings, well_formed=True)
    return CheckResult(doc, _sorted(shown), well_formed=True)


def check_text(text: str, *, path: str | None = None, library=None, settings: Settings | None = None) -> CheckResult:
    return check_document(parse(text), path=path, library=library, settings=settings)


def _drop_superseded(schema_diagnostics: list[Diagnostic], rule_diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A rule that declares `replaces` silences the schema codes it explains at overlapping spans."""
    from taskdsl.rules.registry import RULES

    # per replaced schema code: the rule spans sorted by start, with the largest end so far, so
    # "does any span overlap [a, b]" is one bisect (a large file has thousands of each)
    spans: dict[str, list] = {}
    for rule_diagnostic in rule_diagnostics:
        for code in getattr(RULES.get(rule_diagnostic.code), "replaces", ()):
            spans.setdefault(code, []).append(rule_diagnostic.span)
    index = {}
    for code, found in spans.items():
        found.sort(key=lambda span: span.start)
        starts, max_ends, largest = [], [], -1
        for span in found:
            largest = max(largest, span.end)
            starts.append(span.start)
            max_ends.append(largest)
        index[code] = (starts, max_ends)

    def superseded(diagnostic: Diagnostic) -> bool:
        if diagnostic.code not in index:
            return False
        starts, max_ends = index[diagnostic.code]
        last = bisect.bisect_right(starts, diagnostic.span.end) - 1
        return last >= 0 and max_ends[last] >= diagnostic.span.start

    return [d for d in schema_diagnostics if not superseded(d)]


def _sorted(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.span.start, d.span.end, d.code))


def check_index(library, paths=None) -> dict[str, CheckResult]:
    """Check files against a project's index: {path: CheckResult}, in path order. `paths`
    defaults to the project files the index was built from (library-path files are not checked).
    Each file is parsed once: the document parsed while indexing is reused when it is there."""
    from taskdsl.language.document import gc_paused

    results = {}
    # every document is kept until the end, so the cyclic GC has nothing to free meanwhile:
    # pausing it saves the repeated walks over the growing heap (~20% of the time)
    with gc_paused():
        for path in sorted(library.workspace_files if paths is None else paths):
            doc = library.document(path)
            if doc is not None:
                results[path] = check_document(doc, path=path, library=library, settings=library.settings)
    library.release_documents()
    return results
