"""Re-planning at run time: a task that failed in a way another structure may avoid is replaced.

When an atomic task fails with RESOURCE_EXHAUSTION, INVALID_OUTPUT or NO_PROGRESS (a reduce that
makes no progress counts too), `recover` asks the reparse template for another structure for it:
the failed task's XML, its inputs' sizes (an input too large for the window is offered in parts,
`NAME_part1` …), the error and the model's context window go in. The answer is written, checked
and repaired by `taskdsl.task_system.ask.write_checked` (the loop `taskdsl ask` uses, its hostile-answer
refusals included), prepared by `plan.prepare` (the one run path) and evaluated in the failed
task's place, with the failed task's bindings (and the parts) visible. A structure that fails
may be re-planned once more inside (MAX_DEPTH levels); then the error stands.

The reparse template is the built-in `templates/reparse.task.xml`, unless the project's library
has an atomic task or template with subtype="reparse": the one whose words best match the failed
task (taskdsl.task_system.matching), the first by name when none shares a word. The model is the failed
task's, unless that template names one (--model wins over both, as for every task); the offline
taskdsl/echo cannot write XML, so with it nothing is re-planned (the error says so).

What never happens: a task that sets <disable_reparsing>true</disable_reparsing> (or runs inside
one that does) is not re-planned at all; under <manual_xml>true</manual_xml> the structure is asked
for but never run (the error carries it as details.proposal); a structure that runs a shell command
the run's own plan did not hold is not run (the run's consent covers exactly its plan's commands);
a structure that reads a file outside the template's folder the plan did not list, or files chosen
only when it runs where the plan had none, is not run (the consent saw the plan's reads); what it
reads is confined as any run's (the same RunState).
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from taskdsl.evaluator import usage
from taskdsl.evaluator.env import Env
from taskdsl.evaluator.results import TaskError, TaskResult

REPLANNED_ERRORS = ("RESOURCE_EXHAUSTION", "INVALID_OUTPUT", "NO_PROGRESS")
FINAL_REASONS = ("cost", "timeout", "call_depth", "cancelled")  # limits of the run itself: no structure avoids them
MAX_DEPTH = 2
PART_SHARE = 0.5  # of the usable window: the most one part of a split input may take
HOSTILE_REASONS = ("too_large", "dtd")  # a reparse answer refused unparsed: the run fails with it
BUILTIN = Path(__file__).resolve().parent.parent / "templates" / "reparse.task.xml"
ECHO = "taskdsl/echo"  # answers with its prompt: it cannot write a structure
SHOWN_XML = 20_000  # characters of the failed task's XML in the reparse prompt


def replannable(node, error: TaskError) -> bool:
    from taskdsl.evaluator.ast import Atomic, Reduce

    if error.reason in FINAL_REASONS or error.type not in REPLANNED_ERRORS:
        return False
    return isinstance(node, Atomic) or (isinstance(node, Reduce) and error.type == "NO_PROGRESS")


async def recover(node, error: TaskError, scope: Env, ctx, names: list[str]) -> TaskResult:
    """The result of a structure run in the failed `node`'s place; raises (the original error,
    with details saying why, or the reparse's hostile answer) when there is none."""
    if not replannable(node, error):
        raise error
    run = ctx.run
    if "disable_reparsing" in ctx.locks:
        raise stands(error, "the task or a task around it sets <disable_reparsing>true</disable_reparsing>")
    depth = len(ctx.replans) + 1
    if depth > MAX_DEPTH:
        raise stands(error, f"at most {MAX_DEPTH} levels of re-planning", replans=list(ctx.replans))
    index = project_index(scope)
    try:
        template, template_path = reparse_template(index, node, error)
        refuse_unplanned_commands(template, scope, run)
        model = template.model_for(run) if template.model else failed_model(node, run)
        if template.model and unagreed_models([model], run):
            raise TaskError("VALIDATION_ERROR", f"the reparse template names the model {model}, which the run's plan "
                            "did not call: it may cost money and the run's consent did not cover it", "reparse_template")
        if unagreed_models([model], run):  # the run's default (the project's `model`) when no task the plan lists uses it
            raise TaskError("VALIDATION_ERROR", f"the model {model}, which would write the structure, is not one the "
                            "run's plan calls: it may cost money and the run's consent did not cover it",
                            "model_not_agreed", {"model": model})
        window, count = await window_and_counter(run, model) if model != ECHO else (None, None)
    except TaskError as unusable:  # a reparse template that does not compile, a model that cannot be reached
        raise stands(error, f"no structure: {unusable}", replan_error=unusable.to_json()) from None
    if model == ECHO:
        raise stands(error, "the model taskdsl/echo repeats its prompt and cannot write a structure; "
                            "run with a model (--model) to re-plan")
    values = {name: scope.lookup(name) for name in used_names(node, names) if scope.is_bound(name)}
    parts = split_inputs(values, window, count, run.config.max_context_window_fraction)
    where = os.path.join(node.folder, f".taskdsl-replan-{uuid.uuid4().hex}.task.xml")  # never a project file
    settings = bound_settings(index, where, [*values, *parts])
    xml = node_xml(node, ctx)
    args = {"task_xml": xml[:SHOWN_XML], "error": str(error), "inputs": inputs_text(values, parts, count),
            "context_window": str(window or "unknown"), "grammar": _grammar()}
    from taskdsl.task_system import ask

    def prompt_for(previous):
        return first if previous is None else f"{first}\n\n{ask.repair_text(previous)}"

    attempt: dict[str, Any] = {"task": ctx.path, "error": error.type, "reason": error.reason, "depth": depth,
                               "model": model, "template": template_path}
    spent: list[dict] = []  # the reparse calls' usage: the result's dataUsage counts them
    try:
        system, first = await template_prompt(template, args, scope, ctx)
        writer = ask.handler_ask(model, config=run.config, budget=run.budget, spent=spent)
        answer = await ask.write_checked(writer, prompt_for, where, index, system=system, settings=settings,
                                         keep=False)
    except TaskError as refused:
        if refused.reason in HOSTILE_REASONS:
            refused.details["replan_of"] = {"task": ctx.path, "error": error.to_json()}
            raise refused from None
        raise stands(error, f"no structure: {refused}", replan_error=refused.to_json()) from None
    structure = answer.xml
    if "manual_xml" in ctx.locks:
        raise stands(error, "the task or a task around it sets <manual_xml>true</manual_xml>: it is used as "
                            "written, never replaced", proposal=structure)
    prepared = prepare_structure(index, where, structure, settings, error)
    extra = [c for c in prepared.commands if c not in run.allowed_commands]
    if extra:
        shown = "; ".join(" ".join(c.split())[:160] for c in extra)
        raise stands(error, f"the structure runs shell commands the run was not allowed to run ($ {shown}): a run "
                            "may execute only the commands of the plan it was started with; write the structure "
                            "into the template to run it", proposal=structure, commands=extra)
    unlisted = unagreed_reads(prepared, run)
    if unlisted:
        raise stands(error, f"the structure reads files the run's plan did not list ({'; '.join(unlisted)}): the run's "
                            "consent did not cover them; write the structure into the template to read them",
                     proposal=structure, files=unlisted)
    from taskdsl.evaluator import cost

    from taskdsl.language.models import offline

    agreed = run.agreed_models() if run.agreed_models else frozenset()
    called = cost.plan_calls(prepared.node, prepared.library, model, run.model_override)
    # the model chose these: any model the plan did not call is refused, free or not (a call sends the prompt,
    # files included, to that model's provider), but taskdsl's own offline ones
    models = [name for name in dict.fromkeys(name for name, _ in called) if name not in agreed and not offline(name)]
    if models:
        raise stands(error, f"the structure calls models the run's plan did not ({', '.join(models)}): each call "
                            "sends its prompt to that model's provider and may cost money, and the run's consent did "
                            "not cover them", proposal=structure, models=models)
    attempt["structure"] = structure
    run.sources.update(prepared.sources)  # a task of it that fails in turn is shown to the model as written
    run.replans.append(attempt)
    first_after = len(run.replans)
    run.trace.write(event="replan", path=ctx.path, error=error.to_json(), depth=depth, model=model,
                    structure=structure)
    run.emit(event="replan", path=ctx.path, error=error.type, depth=depth, structure=structure)
    env = Env({"taskLibrary": prepared.library, **parts}, outer=scope)
    inner = replace(ctx.at("replan"), replans=(*ctx.replans, attempt))
    try:
        result = await prepared.node.eval(env, inner)
    except TaskError as failed:
        attempt["failure"] = {"type": failed.type, "reason": failed.reason, "message": failed.message}
        beneath = [attempt] + [a for a in run.replans[first_after:] if a["task"].startswith(inner.path + "/")]
        raise stands(error, f"the re-planned structure failed too: {failed}", replans=beneath,
                     replan_error=failed.to_json()) from None
    notes = {k: v for k, v in result.notes.items() if k != "replanned"}
    notes["dataUsage"] = usage.summed([result.notes.get("dataUsage") or {}, *spent])
    inside = result.notes.get("replanned")
    return TaskResult(result.content, result.status, {**notes, "replanned": {
        "task": ctx.path, "error": error.type, "reason": error.reason, "depth": depth, "structure": structure,
        "model": model, "template": template_path, **({"inside": inside} if inside else {})}}, result.parsed_content)


def stands(error: TaskError, why: str, **details) -> TaskError:
    """The original error, told why it was not re-planned (details.not_replanned) and what more."""
    error.details.update({"not_replanned": why, **details})
    return error


def refuse_unplanned_commands(template, scope: Env, run) -> None:
    """The reparse template is chosen only when a task fails, so the run's consent never saw it:
    a shell command its inputs or {{fn(…)}} calls would run that the plan did not hold is refused."""
    from taskdsl.evaluator.plan import script_commands

    library = scope.root.get("taskLibrary")  # where its calls resolve (template.bind)
    extra = [c for c in script_commands(template, library) if c not in run.allowed_commands]
    if extra:
        raise TaskError("VALIDATION_ERROR", "the reparse template runs shell commands the run was not allowed to "
                        f"run ($ {'; '.join(' '.join(c.split())[:160] for c in extra)})", "reparse_template")


def unagreed_reads(prepared, run) -> list[str]:
    """What a structure reads that would have made the plan ask, and that the plan did not list: a file outside the
    template's folder the plan did not name, files chosen only when it runs (a command's output, a description,
    the memory) where the plan had none. Reads inside the folder need no consent, as in any plan."""
    from taskdsl.evaluator import consent

    if run.agreed_reads is None:
        return []
    folder, agreed = run.agreed_reads()
    reads = consent.with_memory(consent.read_files(prepared.node, prepared.library), prepared)
    found = [path for path in reads.paths if consent.outside(path, folder) and path not in agreed.paths]
    if not agreed.unknown:
        found += list(reads.unknown)
    return found


def unagreed_models(models, run) -> list[str]:
    """Those of `models` that may cost money and that the run's plan did not call: its consent never
    saw them (offline models and models the plan already calls are free to use)."""
    from taskdsl.evaluator.consent import costs_money

    agreed = run.agreed_models() if run.agreed_models else frozenset()
    return [name for name in dict.fromkeys(models) if name not in agreed and costs_money(name)]


def failed_model(node, run) -> str:
    model_for = getattr(node, "model_for", None)
    return model_for(run) if model_for else (run.model_override or run.config.model)


# ------------------------------------------------------------------------------------ the template


def project_index(scope: Env):
    """The project's index the run resolved against (the run's library keeps it); an empty one
    for a run without a project."""
    from taskdsl.library import Library

    library = scope.find("taskLibrary")["taskLibrary"]
    return getattr(library, "index", None) or Library()


def reparse_template(index, node, error: TaskError):
    """(the reparse template's atomic task node, its path): the library's best-matching
    subtype="reparse" definition, else the built-in one."""
    from taskdsl.task_system.matching import find_matching_tasks, kind_of

    builtin = os.path.abspath(BUILTIN)
    candidates = [d for d in index.all_definitions() if kind_of(d) == "reparse" and d.path
                  and os.path.abspath(d.path) != builtin]
    chosen = None
    if candidates:
        ranked = find_matching_tasks(index, f"{node.description} {error.message}", limit=1, definitions=candidates)
        chosen = ranked[0].definition if ranked else sorted(candidates, key=lambda d: (d.name, d.path))[0]
    path, name = (chosen.path, chosen.name) if chosen else (builtin, "reparse")
    return atomic_of(path, name), path


def atomic_of(path: str, name: str):
    """The reparse template's atomic task (a template's body) defined as `name` in the file at `path`."""
    from taskdsl.evaluator.compiler import atomic_of as compiled_atomic

    return compiled_atomic(path, name, "the reparse template", "reparse_template")


async def template_prompt(template, args: dict, scope: Env, ctx) -> tuple[str, str]:
    """(system, user) of the reparse template with `args` bound: the prompt an atomic task builds."""
    wanted = {i.name for i in template.inputs} | set(args)
    bound = {k: v for k, v in args.items() if k in wanted}
    call_scope, call_ctx, names = await template.bind(Env(outer=scope.root), replace(ctx, inherited="",
                                                      accumulated=None), bound, template.settings)
    system, user, _ = await template.prompt(call_scope, call_ctx, template.settings, names)
    return system, user


def _grammar() -> str:
    from taskdsl.task_system.ask import grammar_text

    return grammar_text()


# ------------------------------------------------------------------------------------ the inputs


async def window_and_counter(run, model: str):
    """(the model's context window or None, a function counting a text's tokens as its provider does)."""
    from taskdsl.evaluator.providers import provider_for

    provider = await provider_for(replace(run.config, model=model))
    try:
        window = provider.context_window()
    except Exception:  # an unknown model: no window to split for
        window = None

    overhead = provider.count_messages([{"role": "user", "content": ""}])

    def count(text: str) -> int:  # a text's own tokens: the message's overhead left out, so counts add up
        return provider.count_messages([{"role": "user", "content": text}]) - overhead

    return window, count


def used_names(node, names: list[str]) -> list[str]:
    """The names the failed task works on: its inputs, and the variables its texts use (a step
    may use its parent's inputs without declaring them)."""
    from taskdsl.language.templating import find_placeholders

    texts = (getattr(node, "instructions", None), node.description, getattr(node, "system", None))
    used = [ph.name for text in texts for ph in find_placeholders(text or "") if ph.kind == "var"]
    return list(dict.fromkeys([*names, *used]))


def split_inputs(values: dict, window: int | None, count, fraction: float) -> dict[str, str]:
    """NAME_part1 … for each input too large for a part (PART_SHARE of the usable window): the
    text cut at line ends, each part within the budget (a longer line is cut where it must)."""
    from taskdsl.evaluator.ast import as_text

    if not window:
        return {}
    budget = max(1, int(window * fraction * PART_SHARE))
    parts: dict[str, str] = {}
    for name, value in values.items():
        text = as_text(value)
        if count(text) <= budget:
            continue
        for number, part in enumerate(cut(text, budget, count), 1):
            parts[f"{name}_part{number}"] = part
    return parts


def cut(text: str, budget: int, count) -> list[str]:
    """The text in consecutive pieces of at most about `budget` tokens: whole paragraphs where they
    fit, else lines, else characters."""
    pieces, current, used = [], "", 0
    for unit in units(text, budget, count):
        size = count(unit)
        if current and used + size > budget:
            pieces.append(current)
            current, used = "", 0
        current, used = current + unit, used + size
    if current:
        pieces.append(current)
    return pieces


def units(text: str, budget: int, count):
    for paragraph in re.split(r"(?<=\n\n)", text):
        if count(paragraph) <= budget:
            yield paragraph
            continue
        for line in paragraph.splitlines(keepends=True):
            while count(line) > budget:  # one line longer than a part: cut it by characters
                size = max(1, len(line) * budget // count(line))
                yield line[:size]
                line = line[size:]
            if line:
                yield line


def inputs_text(values: dict, parts: dict, count) -> str:
    from taskdsl.evaluator.ast import as_text

    lines = []
    for name, value in values.items():
        text = as_text(value)
        line = f"- {name}: {len(text):,} characters, {count(text):,} tokens"
        own = [p for p in parts if p.startswith(f"{name}_part")]
        if own:
            line += f"; too large for one prompt, also bound in {len(own)} parts: " + ", ".join(
                f"{p} ({count(parts[p]):,} tokens)" for p in own)
        lines.append(line)
    return "\n".join(lines) or "(no inputs)"


def bound_settings(index, where: str, names: list[str]):
    """The project's settings with the names bound in the failed task's place as globals: the
    structure may use them everywhere, and the checker knows it."""
    from taskdsl.project.config import settings_for

    settings = getattr(index, "settings", None) or settings_for(where)[0]
    return replace(settings, globals=tuple(dict.fromkeys((*settings.globals, *names))))


def node_xml(node, ctx) -> str:
    """The failed task's XML as written: the compiler keeps where each task came from, the run the
    texts it compiled."""
    if node.origin is not None:
        path, start, end = node.origin
        text = ctx.run.sources.get(os.path.abspath(path)) if path else None
        if text:
            return text[start:end]
    return f"<task>\n  <description>{node.description}</description>\n</task>"


def prepare_structure(index, where: str, xml: str, settings, error: TaskError):
    """The structure prepared as any run is (plan.prepare, already checked): its library, node
    and commands. A structure that cannot be prepared is not run."""
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, prepare

    try:
        return prepare(index, where, text=xml, settings=settings, check=False)
    except TemplateErrors as refused:  # what the compiler cannot build: the checker's words
        first = refused.diagnostics[0]
        raise stands(error, f"the structure cannot run: {first.code} {first.message}", proposal=xml) from None
    except (CompileError, TaskError) as refused:
        raise stands(error, f"the structure cannot run: {getattr(refused, 'message', refused)}",
                     proposal=xml) from None
