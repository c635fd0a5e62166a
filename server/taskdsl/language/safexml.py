"""The one safe lxml configuration, and the TD001 (well-formedness) diagnostics.

Templates never need a DTD or entities: the parser loads none, expands none, reaches no network
and refuses huge trees. The scanner in document.py finds structural faults with precise spans
(unclosed and mismatched tags, several roots); lxml is the authority on everything else.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lxml import etree

from taskdsl.language.diagnostics import Diagnostic, Related, Severity
from taskdsl.language.document import MAX_DEPTH, Document, Span  # noqa: F401 (MAX_DEPTH: imported from here by others)



def parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=False,
        remove_comments=False,
        collect_ids=False,
    )


_PARSER = parser()


def blank_doctype(text: str, doc: Document) -> str:
    """Replace a DOCTYPE by spaces so lxml never sees it and every offset stays where it was."""
    if doc.doctype is None:
        return text
    span = doc.doctype
    blank = re.sub(r"[^\n]", " ", text[span.start : span.end])
    return text[: span.start] + blank + text[span.end :]


def lxml_parse(text: str, doc: Document) -> tuple[etree._Element | None, etree.XMLSyntaxError | None]:
    """Parse the text with the safe parser; returns (root, None) or (None, the first error)."""
    source = blank_doctype(text, doc)
    if source.startswith("<?xml"):
        # lxml refuses str input with an encoding declaration; the text is already decoded
        source = re.sub(r"^<\?xml[^>]*\?>", lambda m: " " * len(m.group(0)), source, count=1)
    try:
        return etree.fromstring(source, _PARSER), None
    except etree.XMLSyntaxError as error:
        return None, error
    except ValueError as error:  # e.g. NUL bytes or other characters lxml refuses in str input
        return None, etree.XMLSyntaxError(str(error), None, 1, 1)


_LXML_MESSAGE_FIXES = [
    (re.compile(r"^Opening and ending tag mismatch: (\S+) line \d+ and (\S+)"), r"end tag </\2> does not match the open element <\1>"),
    (re.compile(r"^Entity '([^']+)' not defined"), r"entity '&\1;' is not defined: only &lt; &gt; &amp; &apos; &quot; and character references are allowed"),
    (re.compile(r"^Attribute (\S+) redefined"), r"attribute '\1' appears twice: keep one"),
    (re.compile(r"^PCDATA invalid Char value (\d+)"), r"character \1 is not allowed in XML"),
    (re.compile(r"^Char 0x0 out of allowed range"), r"NUL characters are not allowed in XML"),
    (re.compile(r"^attributes construct error"), "the attribute value before this ends at its closing quote and what "
     "follows is not another attribute: write a '\"' inside a \"…\" value as '&quot;' (a backslash does not escape "
     "it in XML), or quote the value with '…' instead (test='output == \"woke\"'); attributes are separated by a space"),
    (re.compile(r"^AttValue: \" or ' expected"), "an attribute value must be quoted: name=\"value\" or name='value'"),
    (re.compile(r"^xmlParseEntityRef: no name"), r"a literal '&' must be written '&amp;'"),
    (re.compile(r"^EntityRef: expecting ';'"), r"a literal '&' must be written '&amp;' (or end the entity reference with ';')"),
]


def _tidy(message: str) -> str:
    message = " ".join(message.split(", line ")[0].split())  # one line, whatever lxml quoted
    for pattern, replacement in _LXML_MESSAGE_FIXES:
        if pattern.search(message):
            return pattern.sub(replacement, message)
    return message[0].lower() + message[1:] if message else "not well-formed XML"


def too_deep(doc: Document) -> Diagnostic | None:
    # libxml2 has its own limit of 256 without huge_tree; say so clearly instead of relying on its message
    element = doc.too_deep
    if element is None:
        return None
    return Diagnostic(
        "TD001",
        Severity.ERROR,
        element.name_span,
        f"elements are nested more than {MAX_DEPTH} deep: templates this deep are refused",
    )


#: what a shell command's '&', '<' and '>' are written as, appended to TD001 inside a <command>
COMMAND_ESCAPES = ("in a command write '&' as '&amp;', '<' as '&lt;' and '>' as '&gt;' ('2>&1' is "
                   "'2&gt;&amp;1', '&&' is '&amp;&amp;'), or wrap the whole command in <![CDATA[ … ]]>")


def _in_command(doc: Document, offset: int) -> bool:
    "Whether offset is inside the text of a <command> element (as far as the tolerant scan saw it)."
    return any(element.tag == "command" and element.span.start < offset < element.span.end
               for root in doc.roots for element in root.iter())


def _escape_hint(doc: Document, diagnostic: Diagnostic) -> Diagnostic:
    """A literal '&' or '<' inside a command: say how to write a shell's '&', '<' and '>' (the
    entities, or a CDATA section for the whole command)."""
    if ("'&amp;'" in diagnostic.message or "'&lt;'" in diagnostic.message) and \
            _in_command(doc, diagnostic.span.start):
        return replace(diagnostic, message=f"{diagnostic.message}: {COMMAND_ESCAPES}")
    return diagnostic


def wellformedness(doc: Document) -> tuple[etree._Element | None, list[Diagnostic]]:
    """TD001 diagnostics for the document, and the lxml tree when it is well-formed."""
    root, diagnostics = _wellformedness(doc)
    return root, [_escape_hint(doc, d) for d in diagnostics]


def _wellformedness(doc: Document) -> tuple[etree._Element | None, list[Diagnostic]]:
    diagnostics = [_from_problem(problem) for problem in doc.problems]
    deep = too_deep(doc)
    if deep:
        return None, diagnostics + [deep]
    if doc.problems:
        # the scanner already pinpointed the faults; lxml would only repeat the first one
        return None, diagnostics
    if doc.root is None:
        return None, [Diagnostic("TD001", Severity.ERROR, Span(0, len(doc.text)), "the file holds no element: a template needs one root element such as <task>")]
    root, error = lxml_parse(doc.text, doc)
    if error is None:
        return root, []
    line, column = error.position if error.position else (1, 1)
    offset = doc.offset(max(line - 1, 0), max(column - 1, 0))
    end = min(offset + 1, len(doc.text))
    message = _tidy(str(error.msg))
    if "&" in message:
        # libxml2 reports entity faults after the '&'; underline the reference itself
        amp = doc.text.rfind("&", max(0, offset - 64), offset + 1)
        if amp >= 0:
            semicolon = doc.text.find(";", amp, offset + 1)
            offset, end = amp, (semicolon + 1 if semicolon >= 0 else amp + 1)
    return None, [Diagnostic("TD001", Severity.ERROR, Span(offset, end), message)]


def _from_problem(problem) -> Diagnostic:
    related = []
    if problem.related is not None and problem.kind in ("unclosed", "mismatched"):
        related.append(Related(f"<{problem.related.tag}> is opened here", span=problem.related.name_span))
    return Diagnostic("TD001", Severity.ERROR, problem.span, problem.message, related)
