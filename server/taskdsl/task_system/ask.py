"""A task from plain words (`taskdsl ask`): use a library template that fits the request, or have
a model write one, checked by the checker and repaired from its diagnostics.

    answer = await decompose("translate 'good morning' into French", library, path)
    answer.xml        # a task document that checks without errors
    answer.source     # "library" (a template matched) or "model" (written and checked)

A template is used when it is the best match, of kind standard, scores at least USE_THRESHOLD
(see taskdsl.task_system.matching for what the score means) and needs at most one param (the request fills
it). Otherwise the model gets the request with the grammar (generated from task.xsd), the rules
(from the rule registry) and the library's names and params; its answer is checked with the
same checker and library as `taskdsl check`, and the error diagnostics go back for repair, at
most REPAIR_ROUNDS times after the first answer.

When the run of the task fails (`--replan N`), the task and the failure go back to the model for
a different task (`replan`): checked and repaired the same way, then run under the same consent
rules, at most N times. A failure no other task can fix (the model call itself failed, the run
was cancelled) is not re-planned, nor a task that sets `manual_xml` or `disable_reparsing` to
true (or calls a template that does): the run's error stands.

The write-check-repair loop (`write_checked`) is also how a run re-plans one failed task in
place (taskdsl.task_system.replan): its prompt comes from the reparse template instead.

Every model answer is hostile. It is read only by the project's parsers (document.parse and the
safe lxml configuration behind the checker: no DTD, no entities, no network); an answer over
MAX_ANSWER_CHARS, or one that declares a DTD or an entity (the door to entity expansion and external
files), is refused at once as an XML_PARSE_ERROR, with no repair round.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from xml.sax.saxutils import escape, quoteattr

from taskdsl.language.document import parse
from taskdsl.task_system.matching import find_matching_tasks
from taskdsl.language.vocabulary import LOCKS

USE_THRESHOLD = 0.6
REPAIR_ROUNDS = 3
MAX_ANSWER_CHARS = 200_000  # far above any template; a model that sends more is refused, not parsed
MAX_REQUEST_CHARS = 20_000
MAX_REPORTED_ERRORS = 20  # per repair round: the first errors are the ones that explain the rest
MAX_FAILURE_CHARS = 2_000  # of a failed run's message in a re-plan prompt
REPLAN_ERRORS = ("RESOURCE_EXHAUSTION", "INVALID_OUTPUT", "TASK_FAILURE")  # what another task may avoid
FINAL_REASONS = ("model_error", "cancelled")  # the model could not be called, or the user stopped the run
ECHO_MODEL = "taskdsl/echo"
ECHO_CANNOT_WRITE = ("the model taskdsl/echo repeats its prompt and cannot write a task: ask with a model "
                     "(--model gpt-4o-mini, say) or write the template yourself")
NO_TASK_REASONS = ("too_large", "dtd", "not_xml", "repair_failed")  # the TaskError reasons raised here
SYSTEM_PROMPT = ("You write task templates in the taskdsl XML language. Answer with one XML document and "
                 "nothing else: no prose, no DOCTYPE, no entity declarations.")

Ask = Callable[[str, str], Awaitable[str]]  # (system, user) → the model's answer


@dataclass
class Attempt:
    """One model answer and what the checker found in it."""

    answer_chars: int
    xml: str
    errors: list[dict] = field(default_factory=list)  # {code, message, line, column}, 1-based


@dataclass
class Answer:
    xml: str
    source: str  # library | model
    match: Any = None  # the taskdsl.task_system.matching.Match used, or the best one seen
    inputs: dict = field(default_factory=dict)  # what the run binds (the request, for a matched template)
    attempts: list[Attempt] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"source": self.source, "xml": self.xml, "match": self.match.to_json() if self.match else None,
                "rounds": len(self.attempts),
                "attempts": [{"errors": a.errors, "answer_chars": a.answer_chars} for a in self.attempts]}


# --------------------------------------------------------------------------- a template that fits


def usable_match(library, request: str):
    """The library template `ask` uses for the request, or None (then a model writes one)."""
    match = best_match(library, request)
    if match is None:
        return None
    usable = match.kind == "standard" and match.score >= USE_THRESHOLD and len(match.definition.required_params) <= 1
    return match if usable else None


def best_match(library, request: str):
    found = find_matching_tasks(library, request, limit=1)
    return found[0] if found else None


def calling_task(match, request: str, name: str) -> tuple[str, dict]:
    """(task document, run inputs) that runs the matched template, the request bound to
    `request_param`. The run binds the request unchanged; the literal in the file (what a later
    `taskdsl run` of a saved file gets) has its `{{` spaced out so it is never read as a placeholder."""
    param = request_param(match.definition)
    literal = escape(_inert(request))
    step = f"    <task ref={quoteattr(match.definition.name)}/>"
    if param:
        step = (f"    <task ref={quoteattr(match.definition.name)}>\n      <inputs>\n"
                f"        <input name=\"{param}\" from=\"request\"/>\n      </inputs>\n    </task>")
    xml = "\n".join([
        f'<task type="sequential" name={quoteattr(name)}>',
        f"  <description>{escape(_inert(_one_line(request)[:200]))}</description>",
        f"  <inputs>\n    <input name=\"request\">{literal}</input>\n  </inputs>",
        f"  <steps>\n{step}\n  </steps>",
        "</task>\n"])
    return xml, {"request": request}


def request_param(definition) -> str | None:
    """The param the request fills: the one required param, else the only param there is."""
    if definition.required_params:
        return definition.required_params[0]
    return definition.param_names[0] if len(definition.params) == 1 else None


def task_name_for(path: str) -> str:
    """The name of the task `ask` writes: the file's stem when it is a valid name."""
    from taskdsl.library import TASK_NAME_RE
    from taskdsl.language.names import file_stem

    stem = file_stem(path) or ""
    return stem if TASK_NAME_RE.match(stem) else "ask_request"


def _inert(text: str) -> str:
    return text.replace("{{", "{ {").replace("}}", "} }")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- the prompt


@functools.cache
def grammar_text() -> str:
    """The elements of the language, their attributes and children, from task.xsd (one source)."""
    from taskdsl.language import schema

    model = schema.model()
    lines, seen = [], set()
    for path in model.iter_paths():
        children = model.allowed_children(path)
        attributes = model.attributes(path)
        signature = (path[-1], tuple((c.name, c.min_occurs, c.max_occurs) for c in children),
                     tuple((a.name, a.required, tuple(a.enum or ())) for a in attributes))
        if signature in seen:
            continue
        seen.add(signature)
        where = f" (in <{path[-2]}>)" if len(path) > 1 else ""
        attrs = " ".join(_attribute_text(a) for a in attributes)
        head = f"<{path[-1]}{' ' + attrs if attrs else ''}>{where}"
        if children:
            head += " children: " + ", ".join(c.name + _occurs(c) for c in children)
        elif values := [v for v, _ in model.enum_values(path)]:
            head += " text: " + " | ".join(values)
        elif model.has_simple_content(path):
            head += " text"
        doc = _first_sentence(model.documentation(path))
        lines.append(f"- {head}{' — ' + doc if doc else ''}")
    return "\n".join(lines)


def _attribute_text(attribute) -> str:
    value = "|".join(attribute.enum) if attribute.enum and not attribute.open_enum else "…"
    return f'{attribute.name}{"" if attribute.required else "?"}="{value}"'


def _occurs(child) -> str:
    if child.max_occurs is None:
        return "*" if child.min_occurs == 0 else "+"
    return "?" if child.min_occurs == 0 else ""


def _first_sentence(text: str | None) -> str:
    text = _one_line(text or "")
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


@functools.cache
def rules_text() -> str:
    """Every check the answer must pass, from the rule registry: code, severity, title."""
    from taskdsl.rules import RULES

    return "\n".join(f"- {code} {rule.severity.value}: {rule.title}" for code, rule in sorted(RULES.items()))


def library_text(library, limit: int = 200) -> str:
    """The library's callable templates and tasks: name(params) and what they do."""
    lines = []
    for definition in sorted(library.all_definitions(), key=lambda d: d.name)[:limit]:
        params = ", ".join(p.name + ("" if not p.has_default else "?") for p in definition.params)
        what = f" — {definition.description}" if definition.description else ""
        lines.append(f"- {definition.name}({params}) [{definition.type}]{what}")
    return "\n".join(lines) or "(the library is empty)"


def build_prompt(request: str, library, previous: Attempt | None = None, failed: tuple | None = None) -> str:
    """The model's prompt; `previous` is an answer the checker rejected, `failed` the
    (task xml, TaskError) of a run that failed (a re-plan)."""
    parts = [f"Request: {request}",
             "Write one taskdsl task (a <task> root element) that carries out the request. Call a library "
             "template with <call template=\"name\"> or <task ref=\"name\"> where one fits. Give every input "
             "its value in the template.",
             f"Grammar (element, attributes, children; ? optional, * any number, + one or more):\n{grammar_text()}",
             f"Rules the checker applies:\n{rules_text()}",
             f"Library:\n{library_text(library)}"]
    if failed is not None:
        xml, error = failed
        parts.append(f"This task was written for the request:\n```xml\n{xml}\n```\n"
                     f"It checks, but its run failed: {str(error)[:MAX_FAILURE_CHARS]}\n"
                     "Write a different task for the request that avoids this failure (another structure, "
                     "other inputs or files, smaller steps). Answer with the whole XML document only.")
    if previous is not None:
        parts.append(repair_text(previous))
    return "\n\n".join(parts)


def repair_text(previous: Attempt) -> str:
    """What a repair round adds to the prompt: the rejected answer and the checker's errors in it."""
    found = "\n".join(f"- line {e['line']} column {e['column']}: {e['code']} {e['message']}"
                      for e in previous.errors[:MAX_REPORTED_ERRORS])
    return (f"Your previous answer:\n```xml\n{previous.xml}\n```\n"
            f"The checker found these errors in it:\n{found}\n"
            "Answer with the whole corrected XML document only.")


# --------------------------------------------------------------------------- reading an answer


def extract_xml(answer: str) -> str:
    """The answer without code fences: the whole answer if it is one fenced block, else the first
    ```xml block in it, else the answer as it is."""
    text = answer.strip()
    whole = re.fullmatch(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```", text, re.S)
    if whole:
        return whole.group(1)
    block = re.search(r"```(?:xml)?[ \t]*\n(.*?)\n```", text, re.S)
    return block.group(1) if block else text


def refuse_hostile(answer: str) -> None:
    """Raise XML_PARSE_ERROR for an answer nobody should parse: too large, or declaring a DTD or an
    entity (the evaluator's one check for model answers in XML)."""
    from taskdsl.evaluator.outputs import refuse_hostile_xml

    refuse_hostile_xml(answer, MAX_ANSWER_CHARS, "a written task", "ask again, or write the task by hand")


def check_answer(xml: str, path: str, library, settings=None, keep: bool = True) -> list[dict]:
    """The error diagnostics of the answer: the check a run of it at `path` makes (the same
    function; the project's settings unless `settings` are given), against `library`. With
    `keep` false the answer leaves the index again once checked (a structure a run re-planned:
    it is never a file of the project)."""
    from taskdsl.project.config import settings_for
    from taskdsl.evaluator.plan import check_errors

    library.update_file(path, xml)
    try:
        document = parse(xml)
        errors = []
        for diagnostic in check_errors(document, path, library, settings or settings_for(path)[0]):
            line, column = document.position(diagnostic.span.start)
            errors.append({"code": diagnostic.code, "message": diagnostic.message, "line": line + 1,
                           "column": column + 1})
        return errors
    finally:
        if not keep:
            library.remove_file(path)


# --------------------------------------------------------------------------- the loop


def handler_ask(model: str, replay_file: str | None = None, config=None, budget=None,
                spent: list | None = None) -> Ask:
    """A model call through the evaluator's Handler: the provider path atomic tasks take. `config`:
    a run's HandlerConfig (its endpoint, key and fixture), `budget`: the run's --max-cost budget,
    charged as an atomic task's call is; each call's notes.dataUsage is appended to `spent`."""
    from dataclasses import replace

    from taskdsl.evaluator.handler import Handler, HandlerConfig

    base = config or HandlerConfig(replay_file=replay_file)

    async def ask(system: str, user: str) -> str:  # noqa: E306
        if budget is not None:
            budget.before(model, system + user)
        result = await Handler(replace(base, model=model)).execute(system, user)
        if budget is not None:
            budget.charge(model, result.notes)
        if spent is not None:
            spent.append(result.notes["dataUsage"])
        return result.content

    ask.model = model  # who would write: decompose refuses taskdsl/echo before building a prompt
    return ask


async def decompose(request: str, library, path: str, ask: Ask, failed: tuple | None = None, *,
                    index=None, settings=None) -> Answer:
    """A checked task document for the request (see the module doc); with `failed` (the task xml
    and TaskError of a failed run) always a model's new task, told why the old one failed. `library`
    is what the request is matched against and the prompt shows; `index` and `settings` are what the
    run of the answer at `path` will be checked with (the project's index and settings: one gate, so a
    task that "checks" here is never refused by the run), `library` when not given.
    Raises TaskError: XML_PARSE_ERROR (a hostile answer, or the last one is not XML),
    VALIDATION_ERROR (the last answer still has checker errors: in details["diagnostics"]), or
    the model call's own error."""
    request = request[:MAX_REQUEST_CHARS]
    checked = library if index is None else index
    match = usable_match(library, request) if failed is None else None
    if match is not None:
        xml, inputs = calling_task(match, request, task_name_for(path))
        errors = check_answer(xml, path, checked, settings)
        if not errors:
            return Answer(xml, "library", match, inputs)
    if getattr(ask, "model", None) == ECHO_MODEL:  # refused before any prompt is built (§17)
        from taskdsl.evaluator.results import TaskError

        raise TaskError("VALIDATION_ERROR", ECHO_CANNOT_WRITE, "echo_cannot_write", {"model": ECHO_MODEL})
    answer = await write_checked(ask, lambda previous: build_prompt(request, library, previous, failed), path, checked,
                                 settings=settings)
    answer.match = best_match(library, request)
    return answer


async def write_checked(ask: Ask, prompt_for: Callable[[Attempt | None], str], path: str, library, *,
                        system: str = SYSTEM_PROMPT, settings=None, keep: bool = True) -> Answer:
    """A model-written task document that checks at `path` against `library`: the model gets
    `prompt_for(None)`, then `prompt_for(the rejected attempt)` for each repair round, at most
    REPAIR_ROUNDS. Every answer is refused unparsed when hostile (refuse_hostile). `settings` and
    `keep` are check_answer's. Raises TaskError as decompose does."""
    from taskdsl.evaluator.results import TaskError

    attempts: list[Attempt] = []
    previous = None
    for _ in range(1 + REPAIR_ROUNDS):
        raw = await ask(system, prompt_for(previous))
        refuse_hostile(raw)
        xml = extract_xml(raw).strip() + "\n"
        previous = Attempt(len(raw), xml, check_answer(xml, path, library, settings, keep))
        attempts.append(previous)
        if not previous.errors:
            return Answer(xml, "model", None, {}, attempts)
    if keep:
        library.remove_file(path)
    last = previous.errors
    details = {"diagnostics": last, "rounds": len(attempts), "answer": previous.xml[:2000],
               "attempts": [{"errors": a.errors, "answer_chars": a.answer_chars} for a in attempts]}
    if all(e["code"] == "TD001" for e in last):
        raise TaskError("XML_PARSE_ERROR", f"the model's answer is not well-formed XML after {REPAIR_ROUNDS} "
                        f"repair rounds: {last[0]['message']}", "not_xml", details)
    raise TaskError("VALIDATION_ERROR", f"the model's task still has {len(last)} checker error(s) after "
                    f"{REPAIR_ROUNDS} repair rounds", "repair_failed", details)


# --------------------------------------------------------------------------- re-planning a failed run


def root_cause(error):
    """The innermost error of a failed run (a step's failure wraps the error of the step)."""
    from taskdsl.evaluator.results import ERROR_TYPES, TaskError

    inner = error.details.get("error")
    while isinstance(inner, dict) and inner.get("type") in ERROR_TYPES:
        error = TaskError(inner["type"], str(inner.get("message", "")), inner.get("reason"), inner.get("details") or {})
        inner = error.details.get("error")
    return error


def replan_refusal(answer: Answer, error) -> str | None:
    """Why a failed run of `answer` is not re-planned, or None when it may be."""
    cause = root_cause(error)
    if cause.type not in REPLAN_ERRORS or cause.reason in FINAL_REASONS:
        return f"{cause.type}{f' ({cause.reason})' if cause.reason else ''} is not a failure another task can avoid"
    lock = locked_setting(answer.xml)
    if lock is None and answer.source == "library":
        lock = locked_setting(*_definition_text(answer.match.definition))
    if lock is not None:
        return f"the task sets <{lock}>true</{lock}>: it is used as written, never replaced"
    return None


def locked_setting(text: str, offset: int | None = None) -> str | None:
    """The first of LOCKS set to true in the task at `offset` of `text` (default: the root) or
    in any task inside it."""
    doc = parse(text)
    top = doc.element_at(offset) if offset is not None else doc.root
    for element in (top.iter() if top is not None else ()):
        if element.tag in LOCKS and element.text.strip() == "true":
            return element.tag
    return None


def _definition_text(definition) -> tuple[str, int | None]:
    from taskdsl.project.workspace import MAX_FILE_BYTES
    from taskdsl.support.reading import read_bytes

    try:
        return read_bytes(definition.path, MAX_FILE_BYTES).decode("utf-8", errors="replace"), definition.span.start
    except (OSError, TypeError):
        return "", None
