"""The words of the language, as ``schemas/task.xsd`` says them: enumerations of its named simple
types (read from the XSD, once), the task-like tags, and how a value is read.

Enumerations in the XSD are ``xs:token`` restrictions, so a value is compared after XSD whitespace
collapsing (``type=" sequential "`` is ``sequential``): :func:`collapse` is that rule, and
:func:`enum_value` applies it for checking and running alike.
"""

from __future__ import annotations

import functools

#: elements that are tasks (a task, or the two tasks of a reduce)
TASK_TAGS = ("task", "inner_task", "reduction_task")
#: what may stand as a step, an input's value, an arg's value or a case's body
RUNNABLE_TAGS = ("task", "call", "cond")
#: what a case, a default, an input or an arg may hold: exactly one of these (XSD group "branch")
BRANCH_TAGS = ("task", "call")
#: the booleans that keep a task as written: true on a task (or around it) and no model replaces it
LOCKS = ("manual_xml", "disable_reparsing")
#: the roots a document may have
ROOT_TAGS = ("task", "template", "library", "call", "cond")


#: (element, attribute) → the XSD enumeration (an xs:token type) its value belongs to
ENUM_ATTRIBUTES = {
    **{(tag, "type"): "taskKind" for tag in TASK_TAGS},
    ("output_format", "type"): "outputType",
    ("output_format", "schema"): "outputShape",
    ("file_paths", "source"): "pathSource",
    ("command", "fail_on_error"): "strictBoolean",
}


def collapse(value: str) -> str:
    """XSD whitespace="collapse": runs of whitespace become one space, leading/trailing are dropped."""
    return " ".join(value.split())


@functools.cache
def _simple_type(type_name: str):
    from lxml import etree

    from taskdsl.language.schema import XS, xsd_path

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    found = etree.parse(str(xsd_path()), parser).getroot().find(f"{XS}simpleType[@name='{type_name}']")
    if found is None:
        raise KeyError(f"task.xsd has no simple type '{type_name}'")
    return found


@functools.cache
def enumeration(type_name: str) -> tuple[str, ...]:
    """The enumeration values of the XSD's named simple type (e.g. ``taskKind``), in XSD order."""
    from taskdsl.language.schema import XS

    return tuple(e.get("value") for e in _simple_type(type_name).iter(f"{XS}enumeration"))


@functools.cache
def _pattern(type_name: str):
    import re

    from taskdsl.language.schema import XS

    found = _simple_type(type_name).find(f".//{XS}pattern")
    return re.compile(found.get("value")) if found is not None else None


def matches(value: str, type_name: str) -> bool:
    """Whether value is valid for the XSD's named pattern type (``taskName``, ``taskRef`` …); an XSD
    pattern matches the whole value."""
    pattern = _pattern(type_name)
    return pattern is None or pattern.fullmatch(value) is not None


def task_types() -> tuple[str, ...]:
    """atomic, sequential, reduce, script (the XSD's taskKind)."""
    return enumeration("taskKind")


def enum_value(value: str | None, type_name: str) -> str | None:
    """The collapsed value when the XSD type allows it, else None (absent or not understood)."""
    if value is None:
        return None
    if value in enumeration(type_name):  # already collapsed: an enumeration value has no spaces to fold
        return value
    collapsed = collapse(value)
    return collapsed if collapsed in enumeration(type_name) else None


def boolean(value: str | None, default: bool) -> bool | None:
    """An XSD strictBoolean: ``true``/``false`` after collapsing; the default when absent; None when
    the text is neither."""
    if value is None:
        return default
    read = enum_value(value, "strictBoolean")
    return None if read is None else read == "true"


#: Every reason a run's error (TaskError) carries, and what it means: the one list the checker asks
#: (TD704: an `<expect_error reason>` no error carries) and the run's errors are held to (a test
#: reads every reason the code raises and finds it here).
ERROR_REASONS = {
    "TD801": "a {{…}} of a command in a place the shell does not read as one word or literal text (TD801)",
    "TD802": "a file read outside the project (TD802)",
    "TD803": "a {{…}} of a command that a program would parse again as code (TD803)",
    "TD804": "a command the shell grammar cannot parse (TD804)",
    "TD805": "a {{…}} of a command where a program whose options run commands reads a leading '-' as an option "
             "(TD805)",
    "ambiguous_task": "a name or type:subtype key that several tasks share",
    "arguments": "a call's arguments do not fit the target's params (or an editor command's arguments are wrong)",
    "authentication": "the model's provider refused the credentials",
    "call_depth": "refs and calls nested deeper than the limit (a recursion that does not end)",
    "cancelled": "the run was cancelled",
    "cond_error": "a cond test could not be evaluated",
    "context": "the prompt does not fit the model's context window",
    "cost": "the run would cost more than its --max-cost",
    "dtd": "an answer to be parsed as XML declares a DTD",
    "declined": "the user answered no to the editor's question (a run's plan, a paid model writing a New Task)",
    "duplicate_task": "two definitions of one name in the run's library",
    "echo_cannot_write": "`taskdsl ask` or re-planning with taskdsl/echo, which cannot write a task",
    "file_paths": "a file_paths entry cannot be read (or is outside the project)",
    "invalid_json": "a cond tests an output that is not JSON",
    "litellm_unavailable": "a real model needs litellm, which is not installed",
    "memory_matcher": "the memory's model matcher could not be used (two project matchers, a model the plan did not call, a failed call)",
    "missing_credentials": "the model's provider needs an API key that is not set",
    "missing_input": "an input or param has no value",
    "missing_variable": "a {{name}} names no variable the task sees",
    "model_not_agreed": "a model (a fallback included) the agreed plan did not show would be called",
    "model_error": "the model call failed",
    "no_entry": "a library file run without --task",
    "no_output": "a cond with no output to test (not after a step, no last_output given)",
    "plan_changed": "--agree DIGEST names a plan other than the one the run would carry out (it changed since --plan)",
    "not_agreed": "a run the project's own configuration widens (allow_read, trace_dir, library_paths outside it) that "
                  "nobody agreed to",
    "not_a_file": "the editor asked to run, preview or draw something that is not a file",
    "not_runnable": "a task written by `taskdsl ask` that cannot run",
    "not_xml": "an answer to be parsed as XML is not XML",
    "reads": "a run read more files or bytes than its read limits allow ([run] max_read_files, max_read_bytes)",
    "repair_failed": "a task written by `taskdsl ask` still does not check after repair",
    "reparse_template": "a re-planned structure that does not check or cannot run",
    "replan_values": "a re-planned structure runs a command with values, standard input or a folder the agreed plan did not run it with",
    "replay_fixture": "taskdsl/replay has no fixture, or it does not read as one",
    "row_error": "a batch row that could not be run (its inputs, or an unexpected error)",
    "schema_mismatch": "a JSON answer that does not have the declared shape",
    "script_error": "a script exited with a non-zero code",
    "subtask_failure": "a step, case, input task or reduce part failed",
    "template": "a malformed {{…}} met by the run",
    "timeout": "a script or the whole run took longer than its limit",
    "too_large": "an answer too large to parse",
    "turns": "a task called its model more times than its turn limit",
    "unchanged_accumulator": "a reduce step left its accumulator unchanged",
    "unknown_entry": "--task names no task of the file",
    "unknown_input": "an --input the entry task does not take",
    "unknown_model": "a model the provider does not know",
    "unknown_task": "a ref or call to a task that is not in the library",
    "untrusted": "the editor's workspace is not trusted: no template runs and no model is asked there",
    "worker": "a Ray worker running a batch row failed",
}
