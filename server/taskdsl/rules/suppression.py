"""Which diagnostics the user sees: rule selection and inline suppression, applied in one place
(`visible`, called by checker.check_document) so the command line and the editor agree.

Selection is ruff's: `select` (default: every rule) and `ignore` take codes or code prefixes
("TD3", "TD402", "ALL"); the most specific selector that matches a code decides, and at equal
length `ignore` wins. `per-file-ignores` maps a glob to selectors removed for the files it matches;
a glob is matched (fnmatch, `*` crossing folders) against the path relative to the project root,
the absolute path and the file name, and a leading `!` negates it. TD001 (the file does not
parse) is always shown.

Suppression: `<!-- taskdsl: ignore[TD302, TD402] -->` silences those codes for diagnostics that
start in the next element (which must begin on the line after the comment, or on its line): in
its start tag, its own text or its end tag, not in its child elements. A code that silences
nothing is TD904 (its fix removes it); a `taskdsl:` comment that is not a suppression is TD905.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from taskdsl.language.diagnostics import Diagnostic, Fix, Severity, TextEdit
from taskdsl.language.document import Document, Element, Span
from taskdsl.project.settings import Settings

ALWAYS_SHOWN = frozenset({"TD001"})
_DIRECTIVE = re.compile(r"\s*taskdsl\s*:")
_IGNORE = re.compile(r"\s*taskdsl\s*:\s*ignore\s*\[([^\]]*)\]\s*\Z")
_CODE = re.compile(r"[^,\s]+")


# --------------------------------------------------------------------------- selection


def _specificity(code: str, selectors) -> int:
    """Length of the longest selector matching code (ALL counts 0); -1 when none does."""
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


def rule_enabled(code: str, select, ignore) -> bool:
    selected = _specificity(code, ("ALL",) if select is None else select)
    return selected >= 0 and selected > _specificity(code, ignore)


def _glob_matches(pattern: str, path: str, root: str | None) -> bool:
    negated = pattern.startswith("!")
    pattern = pattern[1:] if negated else pattern
    absolute = os.path.abspath(path)
    candidates = [absolute.replace(os.sep, "/"), os.path.basename(absolute)]
    if root:
        relative = os.path.relpath(absolute, root)
        if not relative.startswith(".."):
            candidates.append(relative.replace(os.sep, "/"))
    found = any(fnmatchcase(candidate, pattern) for candidate in candidates)
    return found != negated


def file_ignores(path: str | None, settings: Settings) -> tuple[str, ...]:
    """The selectors per-file-ignores removes for path."""
    if not path:
        return ()
    ignored: list[str] = []
    for pattern, selectors in settings.lint_per_file_ignores:
        if _glob_matches(pattern, path, settings.project_root):
            ignored.extend(selectors)
    return tuple(ignored)


def selector(path: str | None, settings: Settings):
    """code → shown? for one file (None when every code is shown: the common case, no cost)."""
    ignore = settings.lint_ignore + file_ignores(path, settings)
    if settings.lint_select is None and not ignore:
        return None
    cache: dict[str, bool] = {}

    def shown(code: str) -> bool:
        if code not in cache:
            cache[code] = code in ALWAYS_SHOWN or rule_enabled(code, settings.lint_select, ignore)
        return cache[code]

    return shown


# --------------------------------------------------------------------------- suppression


@dataclass
class Suppression:
    comment: Span
    codes: list[tuple[str, Span]]
    element: Element
    used: set[str] = field(default_factory=set)


def suppressions(document: Document) -> tuple[list[Suppression], list[Diagnostic]]:
    """The suppression comments of a document, and TD905 for the `taskdsl:` comments that are not."""
    found: list[Suppression] = []
    problems: list[Diagnostic] = []
    text = document.text
    directives = [span for span in document.comments if _DIRECTIVE.match(text, span.start + 4, span.end - 3)]
    if not directives:
        return found, problems
    elements = list(document.iter())
    starts = [element.start for element in elements]
    from taskdsl.rules import RULES

    for comment in directives:
        body = text[comment.start + 4 : comment.end - 3]
        match = _IGNORE.match(body)
        if match is None:
            problems.append(_malformed(comment, "not a suppression: write <!-- taskdsl: ignore[TD302] --> "
                                                "(codes comma-separated) on the line before the element"))
            continue
        offset = comment.start + 4 + match.start(1)
        codes = [(m.group(), Span(offset + m.start(), offset + m.end())) for m in _CODE.finditer(match.group(1))]
        if not codes:
            problems.append(_malformed(comment, "no code in the suppression: name codes as `taskdsl rules` lists them, "
                                                "e.g. ignore[TD302]"))
            continue
        known = [(code, span) for code, span in codes if code in RULES]
        if len(known) < len(codes):  # the known codes still silence what they name (and are TD904 when unused)
            problems.append(_unknown_codes(document, comment, codes, known, RULES))
            if not known:
                continue
            codes = known
        index = bisect.bisect_left(starts, comment.end)
        element = elements[index] if index < len(elements) else None
        comment_line = document.position(comment.end)[0]
        if element is None or document.position(element.start)[0] not in (comment_line, comment_line + 1):
            problems.append(_malformed(comment, "the suppression is not followed by an element on the next line: "
                                                "put it on the line just before the element it silences"))
            continue
        found.append(Suppression(comment, codes, element))
    return found, problems


def _malformed(comment: Span, message: str, fixes=()) -> Diagnostic:
    return Diagnostic("TD905", Severity.WARNING, comment, message, fixes=list(fixes))


def _unknown_codes(document: Document, comment: Span, codes, known, rules) -> Diagnostic:
    """TD905 for the codes no rule has, with the fix that removes them (the comment, when none is known)."""
    import difflib

    unknown = [code for code, _ in codes if code not in rules]
    named = ", ".join(f"'{code}'" for code in unknown)
    message = (f"unknown code{'s' if len(unknown) > 1 else ''} {named} in the suppression: name codes as "
               "`taskdsl rules` lists them, e.g. ignore[TD302]")
    close = difflib.get_close_matches(unknown[0], list(rules), n=1)
    if close:
        message += f" (did you mean {close[0]}?)"
    if known:
        title = f"Remove {', '.join(unknown)} from the suppression"
        edit = TextEdit(Span(codes[0][1].start, codes[-1][1].end), ", ".join(code for code, _ in known))
    else:
        title = "Remove the suppression"
        edit = TextEdit(_whole_lines(document.text, comment), "")
    return _malformed(comment, message, [Fix(title, (edit,))])


def _in_own_part(element: Element, offset: int) -> bool:
    """offset is in the element but not in one of its child elements."""
    if not element.start <= offset < max(element.span.end, element.start_tag_end):
        return False
    return not any(child.start <= offset < child.span.end for child in element.children)


def _unused(document: Document, suppression: Suppression, remaining: list[Diagnostic], shown) -> Diagnostic:
    unused = [code for code, _ in suppression.codes if code not in suppression.used]
    element = suppression.element
    disabled = [code for code in unused if shown is not None and not shown(code)]
    inside = min((d for d in remaining if d.code in unused and element.start <= d.span.start < element.span.end),
                 key=lambda d: d.span.start, default=None)
    comment = suppression.comment
    if len(unused) == len(suppression.codes):
        title = "Remove the unused suppression"
        edit = TextEdit(_whole_lines(document.text, comment), "")
    else:
        title = f"Remove {', '.join(unused)} from the suppression"
        kept = ", ".join(code for code, _ in suppression.codes if code in suppression.used)
        first, last = suppression.codes[0][1], suppression.codes[-1][1]
        edit = TextEdit(Span(first.start, last.end), kept)
    message = (f"unused suppression: {', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not reported on "
               f"<{element.tag}> here; remove {'it' if len(unused) == 1 else 'them'}")
    if disabled:
        message += f" ({', '.join(disabled)} {'is' if len(disabled) == 1 else 'are'} not enabled for this file by the lint settings)"
    elif inside is not None:
        child = document.element_at(inside.span.start)
        message += (f" ({inside.code} is reported inside <{child.tag if child else '?'}>: a suppression "
                    "covers its element, not the children; put it before that element)")
    return Diagnostic("TD904", Severity.WARNING, comment, message, fixes=[Fix(title, (edit,))])


def _whole_lines(text: str, span: Span) -> Span:
    """The comment with its line when nothing else is on the line; else the comment alone."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line_end = len(text) if line_end < 0 else line_end + 1
    before, after = text[line_start : span.start], text[span.end : line_end]
    if before.strip() or after.strip():
        return span
    return Span(line_start, line_end)


# --------------------------------------------------------------------------- the one place




def _kept_error(diagnostic: Diagnostic, how: str) -> Diagnostic:
    "An error a selector or a suppression names, kept (SPEC §17: the run's only gate is the checker)."
    from dataclasses import replace

    return replace(diagnostic, message=f"{diagnostic.message} ({how} does not hide errors: the run refuses them; "
                                       "fix it, or exclude the file)")


def visible(document: Document, diagnostics: list[Diagnostic], *, path: str | None, settings: Settings,
            well_formed: bool) -> list[Diagnostic]:
    """The diagnostics the user sees: selected, not suppressed, plus TD904/TD905 (selected too).
    Selection and suppression choose among warnings: an error is never hidden (the run refuses
    every error the checker reports, so a hidden one would make `check` pass a template the run
    refuses); one they name says so."""
    shown = selector(path, settings)
    kept = diagnostics if shown is None else [
        d if shown(d.code) else _kept_error(d, "[lint] selection") for d in diagnostics if shown(d.code) or d.is_error]
    if not well_formed:
        return kept
    found, problems = suppressions(document)
    if found:
        by_start = sorted(found, key=lambda s: s.element.start)
        remaining = []
        for diagnostic in kept:
            silencing = next((s for s in by_start if _silences(s, diagnostic)), None)
            if silencing is None:
                remaining.append(diagnostic)
            elif diagnostic.is_error:  # named by the suppression (not unused), but not hidden
                silencing.used.add(diagnostic.code)
                remaining.append(_kept_error(diagnostic, "a suppression comment"))
            else:
                silencing.used.add(diagnostic.code)
        kept = remaining
        problems += [_unused(document, s, remaining, shown) for s in found if len(s.used) < len({code for code, _ in s.codes})]
    if problems:
        kept = kept + [d for d in problems if shown is None or shown(d.code)]
    return kept


def _silences(suppression: Suppression, diagnostic: Diagnostic) -> bool:
    return any(code == diagnostic.code for code, _ in suppression.codes) and \
        _in_own_part(suppression.element, diagnostic.span.start)
