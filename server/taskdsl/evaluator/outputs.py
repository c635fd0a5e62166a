"""Reading an answer by its task's `output_format`: text as it is, JSON (its shape checked with
jsonschema) or XML whose top-level elements become named fields.

Answers are hostile input. XML is read by the project's one safe lxml configuration
(taskdsl.language.safexml: no DTD loaded, no entity expanded, no network, no huge trees), and before lxml
sees anything an answer that declares a DTD or an entity, or is larger than MAX_XML_ANSWER, is
refused as XML_PARSE_ERROR: nothing is expanded, read or fetched. An answer that is merely not
well-formed degrades to its whole text with a note (graceful degradation).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from taskdsl.support import jsontext
from taskdsl.evaluator.results import TaskError

MAX_XML_ANSWER = 5_000_000  # characters: far above any real answer, far below what could hurt

# JSON Schemas of the shapes output_format's `schema` names (schemas/task.xsd, outputShape)
SHAPES = {
    "object": {"type": "object"},
    "array": {"type": "array"},
    "string[]": {"type": "array", "items": {"type": "string"}},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
}

_DECLARATION = re.compile(r"<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)\b", re.I)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


@dataclass
class Reading:
    """What an answer holds for its output_format."""
    parsed: Any = None
    notes: dict[str, str] | None = None  # problems that degrade, not fail: {note name: message}
    mismatch: str | None = None  # the answer does not match the declared schema (retried, then INVALID_OUTPUT)


def strip_code_fences(text: str) -> str:
    m = re.fullmatch(r"\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*", text, re.S)
    return m.group(1) if m else text.strip()


def read_answer(text: str, output_format: dict | None) -> Reading:
    """The answer read by output_format; raises XML_PARSE_ERROR for a hostile XML answer."""
    kind = (output_format or {}).get("type")
    if kind == "json":
        return read_json(text, output_format.get("schema"))
    if kind == "xml":
        return read_xml(text)
    return Reading()


# ---------------------------------------------------------------- JSON

def read_json(text: str, shape: str | None) -> Reading:
    try:
        value = jsontext.loads(strip_code_fences(text))
    except json.JSONDecodeError as e:
        problem = f"output is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        # with a declared shape, text that is not JSON does not match it either
        return Reading(mismatch=problem) if shape else Reading(notes={"json_error": problem})
    problem = shape_problem(value, shape)
    return Reading(value, mismatch=f"output does not match schema {shape!r}: {problem}" if problem else None)


def shape_problem(value: Any, shape: str | None) -> str | None:
    """jsonschema's message for a value that is not of the declared shape, else None."""
    if not shape or shape not in SHAPES:
        return None
    import jsonschema  # only runs that declare a shape pay for the import

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SHAPES[shape]).iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{error.message}{f' (at {where})' if where else ''}"


# ---------------------------------------------------------------- XML

def read_xml(text: str) -> Reading:
    """The answer's top-level elements as fields ({name: value}); a note and no fields when it
    does not parse. A DTD, an entity declaration or an oversized answer is XML_PARSE_ERROR."""
    from lxml import etree

    from taskdsl.language.safexml import parser

    refuse_hostile_xml(text)
    body = _XML_DECLARATION.sub("", strip_code_fences(text), count=1)
    try:
        # the answer may hold several top-level elements and text around them: give it one root
        root = etree.fromstring(f"<answer>{body}</answer>", parser())
    except (etree.XMLSyntaxError, ValueError) as error:
        message = " ".join(str(error).split(", line ")[0].split())
        return Reading(notes={"xml_error": f"the answer is not well-formed XML ({message}); "
                                           "its whole text is the output"})
    fields = element_fields(root)
    if not fields:
        return Reading(notes={"xml_error": "the answer holds no XML elements; its whole text is the output"})
    return Reading(fields)


def refuse_hostile_xml(text: str, limit: int = MAX_XML_ANSWER, what: str = "an XML answer",
                       advice: str = 'ask for a shorter answer or declare output_format type="text"') -> None:
    """XML_PARSE_ERROR for a model's answer no parser may see: over `limit` characters, or declaring a
    DTD or an entity anywhere (the door to entity expansion, file reads and fetches). The one check
    for every XML answer: a task's output and a task `taskdsl ask` has a model write."""
    if len(text) > limit:
        raise TaskError("XML_PARSE_ERROR", f"the answer has {len(text):,} characters, more than the "
                        f"{limit:,} {what} may have: it was not parsed; {advice}", "too_large",
                        {"size": len(text), "limit": limit})
    found = _DECLARATION.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
        raise TaskError("XML_PARSE_ERROR", f"the answer declares a DTD or an entity (<!{found.group(1).upper()} "
                        f"at line {line} column {column}): answers may not, so it was not parsed and nothing "
                        "it names was expanded, read or fetched", "dtd",
                        {"location": f"line {line} column {column}"})


def element_fields(element) -> dict[str, Any]:
    """{name: value} of the element's child elements; a name that repeats holds the list of values."""
    from lxml import etree

    grouped: dict[str, list] = {}
    for child in element.iterchildren(tag=etree.Element):
        grouped.setdefault(etree.QName(child).localname, []).append(field_value(child))
    return {name: values[0] if len(values) == 1 else values for name, values in grouped.items()}


def field_value(element) -> Any:
    """A field's value: its text; or, for an element of elements only, their fields. Inline markup
    in text (`a <b>bold</b> word`) stays text."""
    from lxml import etree

    own_text = (element.text or "") + "".join(child.tail or "" for child in element)
    if not own_text.strip() and any(True for _ in element.iterchildren(tag=etree.Element)):
        return element_fields(element)
    return "".join(element.itertext()).strip()
