"""The plan a user agrees to before a run: what it shows, why it is asked, and the digest that pins it.

`plan_view(prepared, …)` reads a `plan.Prepared` (never a second walk of the tree: `plan.reach`
and `cost.plan_calls` answer) into a `PlanView`: every shell command as it will run
(`shell.planned`: each value a variable whose placeholder is shown), the models it calls with an
estimated cost from litellm's price map, the files its `file_paths` read, the inputs (secrets
masked) and the template files compiled for it. `render_plan` is the one text of it: the
editor's question and `taskdsl run --plan` print the same thing.

The digest is a sha256 over a canonical JSON of the plan: the entry and its task, the text of
every template file compiled for the run, the commands, the models, the files, the inputs and
globals (unmasked) and the folders it may read outside the project. A consent is valid for one
digest: the editor prepares the run again after the answer and runs it only when the digest is
the same (see features/run.py).

A run needs the question when it executes a shell command, calls a model that may cost money
(one litellm does not price counts: it may), reads files outside the entry template's folder
(a path not known before the run counts: it may), or when the project's own configuration widens
what it may do (`plan.project_widening`: `[run] allow_read`, `[run] trace_dir`, `library_paths` outside the project;
the run path refuses such a plan until it is agreed to).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from taskdsl.evaluator import cost

from taskdsl.language import shell
from taskdsl.project.confine import within
from taskdsl.language.models import costs_money, prices  # noqa: F401  (costs_money is asked here too)
from taskdsl.support.redaction import SECRET_NAME, Redactor, secret_values

LIST_LIMIT = 10  # files in the folder and inputs shown; the rest are counted (commands, outside reads: all)
VALUE_LIMIT = 80  # characters of an input's value shown
# hex digits of the plan's sha256 shown and required by --agree: 128 bits, so two plans an author
# crafts to share them cost ~2^64 hashes (12 digits, 48 bits, were a birthday search of minutes)
PLAN_DIGITS = 32

REASON_SCRIPTS = "scripts"
REASON_COST = "cost"
REASON_FILES = "files"
FILES_CHOSEN_AT_RUN = "it reads files chosen only when it runs (listed above)"  # memory, commands, descriptions
REASON_WORDS = {
    REASON_SCRIPTS: "it executes shell commands",
    REASON_COST: "it calls a model that may cost money",
    REASON_FILES: "it reads files outside the template's folder",
    "widened": "the project's configuration widens what it may read, write or run (allow_read, trace_dir, "
               "library_paths)",
}


@dataclass(frozen=True)
class PlannedCommand:
    text: str  # what /bin/sh -c runs
    values: tuple[tuple[str, str], ...] = ()  # (variable, the placeholder whose value it holds)


@dataclass(frozen=True)
class ReadFiles:
    """What the run's file_paths read: resolved paths, and what is only known when it runs."""
    paths: tuple[str, ...] = ()  # absolute, symbolic links resolved
    unknown: tuple[str, ...] = ()  # "{{…}}" paths, commands' output, files found by a description


@dataclass(frozen=True)
class PlanView:
    label: str
    path: str  # the entry template
    folder: str  # where scripts run and where "outside" starts
    commands: tuple[PlannedCommand, ...]
    models: tuple[tuple[str, bool], ...]  # (model, priced by litellm's map)
    estimate: float  # dollars for the priced models' calls (a floor: see taskdsl.evaluator.cost)
    files: ReadFiles
    inputs: tuple[tuple[str, str], ...]  # (name, value as shown: secrets masked, long values cut)
    templates: tuple[str, ...]  # the template files compiled for the run
    missing: tuple[str, ...] = ()  # required inputs with no value yet
    fallbacks: tuple[tuple[str, tuple[str, ...], float], ...] = ()  # (model, its fallbacks, their estimate if used)
    cache: bool = False  # answers already in the answer cache are reused (and cost nothing)
    data: str | None = None  # a batch's rows file (its digest is in the plan's)
    rows: int | None = None
    read_limits: tuple[int, int] = (1_000, 50_000_000)  # files and bytes file_paths may read in all
    allow_read: tuple[str, ...] = ()  # folders outside the project the run may read
    config_files: tuple[str, ...] = ()  # the configuration files the plan was made with
    widened: tuple[tuple[str, str], ...] = ()  # (key, folder) the project's own configuration widens (asked)
    root: str = ""  # the project: a listed file outside it (and the allowed folders) is refused when it runs
    digest: str = field(default="", compare=False)


def planned_command(command: str) -> PlannedCommand:
    try:
        rendered = shell.planned(command)
    except shell.UnsafeCommand:  # the checker refuses it first (TD801); show it as written
        return PlannedCommand(command)
    return PlannedCommand(rendered.text, tuple(rendered.env.items()))


def read_files(node: Any, library: Any) -> ReadFiles:
    """The files the file_paths of every task the run may reach read (each task's folder is
    where its relative paths start)."""
    from taskdsl.evaluator.plan import reach
    from taskdsl.language.templating import find_placeholders

    paths: list[str] = []
    unknown: list[str] = []

    def on_task(task: Any) -> None:
        found = task.file_paths
        if found is None:
            return
        if found.source == "command":
            unknown.append(f"the files printed by: {' '.join(found.text.split())}")
        elif found.source == "description":
            unknown.append(f"the files found for: {' '.join(found.text.split())}")
        for written in found.paths if found.source == "literal" else ():
            if find_placeholders(written):
                unknown.append(written)
            else:
                paths.append(os.path.realpath(os.path.join(task.folder, written)))

    reach(node, library, on_task=on_task)
    return ReadFiles(tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(unknown)))


def memory_index_of(prepared: Any) -> tuple[list[str], str | None, str | None]:
    """(the tasks whose fresh context asks the memory, the project's index file, its text) of a run:
    what it may read through the memory system (taskdsl.evaluator.memory)."""
    from taskdsl.evaluator.plan import reach
    from taskdsl.project import memory_index
    from taskdsl.project.workspace import project_root

    asking: list[str] = []
    reach(prepared.node, prepared.library,
          on_task=lambda task: asking.append(task.name) if task.settings.fresh_context == "enabled" else None)
    if not asking:
        return [], None, None
    root = project_root(prepared.path)
    where = memory_index.index_path(root, getattr(prepared, "settings", None))
    index = memory_index.load(where, root)
    return asking, where, index.text if index.exists else None


def with_memory(files: ReadFiles, prepared: Any) -> ReadFiles:
    """The files a run reads, with those its tasks' fresh context may get from the memory index
    (known when it runs); nothing when the project has no index."""
    asking, where, text = memory_index_of(prepared)
    if text is None:
        return files
    shown = os.path.relpath(where, os.path.dirname(os.path.realpath(prepared.path)))
    found = [f"the files the memory index ({shown}) matches for '{name}'" for name in dict.fromkeys(asking)]
    return ReadFiles(files.paths, tuple(dict.fromkeys((*files.unknown, *found))))


def shown_inputs(inputs: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Inputs as the question shows them: a secret (by its name or by its value) as ***."""
    texts = {name: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
             for name, value in inputs.items()}
    redactor = Redactor(extra=secret_values(texts))
    shown = []
    for name, text in sorted(texts.items()):
        text = "***" if SECRET_NAME.search(name) else redactor.text(text)
        # every control written as its escape (a\nb is not a b), runs of spaces and tabs as one space
        from taskdsl.support.terminal import shown as escaped

        one_line = " ".join(escaped(text).split())
        shown.append((name, one_line if len(one_line) <= VALUE_LIMIT else one_line[:VALUE_LIMIT - 1] + "…"))
    return tuple(shown)


def plan_view(prepared: Any, default_model: str, model: str | None = None, *, cache: bool = False,
              data: tuple | None = None) -> PlanView:
    """The plan of a prepared run whose atomic tasks default to `default_model`, every one of
    them using `model` when it is given (the run's override). `cache`: the run reuses cached
    answers; `data`: a batch's (rows file, its sha256, number of rows[, the names of the inputs the rows
    give]): one plan for every row."""
    calls = cost.plan_calls(prepared.node, prepared.library, default_model, model)
    primaries = list(dict.fromkeys(name for name, _ in calls))
    fallbacks = tuple((name, prepared.fallbacks[name],
                       cost.estimate((f, text) for f in prepared.fallbacks[name] if prices(f) is not None
                                     for called, text in calls if called == name))
                      for name in primaries if getattr(prepared, "fallbacks", {}).get(name))
    every = dict.fromkeys([*primaries, *(f for _, chain, _ in fallbacks for f in chain)])
    models = tuple((name, prices(name) is not None) for name in every)
    rows = data[2] if data else 1
    view = PlanView(
        label=prepared.label, path=prepared.path, folder=os.path.dirname(os.path.realpath(prepared.path)),
        commands=tuple(planned_command(c) for c in prepared.commands), models=models,
        estimate=cost.estimate((name, text) for name, text in calls if prices(name) is not None),
        files=with_memory(read_files(prepared.node, prepared.library), prepared), inputs=shown_inputs(prepared.inputs),
        templates=tuple(prepared.files), missing=tuple(prepared.missing), fallbacks=fallbacks, cache=cache,
        data=data[0] if data else None, rows=data[2] if data else None,
        read_limits=tuple(getattr(prepared, "read_limits", (1_000, 50_000_000))),
        allow_read=tuple(getattr(prepared, "allow_read", ()) or ()), config_files=_config_files(prepared.path),
        widened=tuple(getattr(prepared, "widened", ()) or ()), root=_project_root(prepared.path))
    if data:  # a batch: every row brings its own values (any row's input, not only the first row's)
        per_row = set(data[3]) if len(data) > 3 else {name for name, _ in view.inputs}
        given = {name: "(each row's)" for name in per_row}
        given.update((name, shown) for name, shown in view.inputs if name not in per_row)  # the same for every row
        view = PlanView(**{**view.__dict__, "inputs": tuple(sorted(given.items()))})
    if rows != 1:
        view = PlanView(**{**view.__dict__, "estimate": view.estimate * rows,
                           "fallbacks": tuple((m, c, e * rows) for m, c, e in view.fallbacks)})
    return PlanView(**{**view.__dict__, "digest": plan_digest(prepared, view, data[1] if data else None)})


def _project_root(path: str) -> str:
    from taskdsl.project.confine import project_root

    return str(project_root(path))


def read_lines(view: PlanView) -> list[str]:
    """The files a run reads, a line each, as the plan shows them (and `taskdsl ask` before it runs a
    task): those in the template's folder may be counted, those outside it are each shown with what the
    run will do with them, and those known only when it runs are said so."""
    return [*_capped([_shown_path(p, view.folder) for p in view.files.paths if not outside(p, view.folder)], ""),
            *[f"{p}{_read_note(p, view)}" for p in view.files.paths if outside(p, view.folder)],
            *[f"{u} (known when it runs)" for u in view.files.unknown]]


def _read_note(path: str, view: PlanView) -> str:
    """What the run will do with a listed file outside the template's folder that it cannot read: the plan says
    it (a file the run refuses is not one it reads)."""
    from taskdsl.project.confine import read_refusal

    if not view.root:  # a plan made by hand (no project): nothing to say
        return ""
    granted = (*view.allow_read, *(folder for key, folder in view.widened if key.endswith("allow_read")))
    if read_refusal(path, view.root, granted) is not None:
        return " (refused when it runs: outside the project; --allow-read lets it)"
    return "" if os.path.exists(path) else " (not found)"


def _config_files(path: str) -> tuple[str, ...]:
    from taskdsl.project.config import find_config

    found = find_config(path)
    return (str(found),) if found is not None else ()


def plan_digest(prepared: Any, view: PlanView, data_digest: str | None = None) -> str:
    """sha256 of the plan's canonical JSON: what runs, with what, reading what (a batch: and the
    rows file's own sha256)."""
    canonical = {
        "entry": prepared.path, "task": prepared.task,
        "sources": {path: prepared.sources.get(path) for path in sorted(prepared.sources)},
        "commands": [[c.text, list(map(list, c.values))] for c in view.commands],
        "models": [name for name, _ in view.models],
        "files": {"paths": list(view.files.paths), "unknown": list(view.files.unknown)},
        "inputs": prepared.inputs, "args": prepared.args, "globals": prepared.globals,
        "allow_read": list(prepared.allow_read), "read_limits": list(view.read_limits),
        "widened": [list(w) for w in view.widened],
        "replay": list(getattr(prepared, "replay", None) or ()),  # the fixture's text: changed, asked again
    }
    _, _, index_text = memory_index_of(prepared)
    if index_text is not None:  # what the memory may match: another index is another plan
        canonical["memory_index"] = hashlib.sha256(index_text.encode("utf-8", "surrogatepass")).hexdigest()
    if view.fallbacks:
        canonical["fallbacks"] = [[name, list(chain)] for name, chain, _ in view.fallbacks]
    if data_digest is not None:
        canonical["data"] = data_digest
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()




def outside(path: str, folder: str) -> bool:
    return not within(path, folder)


def _reads_outside(view: PlanView) -> bool:
    "The plan lists a file outside the template's folder."
    return any(outside(p, view.folder) for p in view.files.paths)


def reasons(view: PlanView, allow_scripts: bool = False) -> list[str]:
    """Why the run needs the user's consent (empty: it runs without the question).
    `allow_scripts` (the user's machine setting) waives only the shell commands."""
    found = []
    if view.commands and not allow_scripts:
        found.append(REASON_SCRIPTS)
    if any(costs_money(name) for name, _ in view.models):
        found.append(REASON_COST)
    if view.files.unknown or _reads_outside(view):
        found.append(REASON_FILES)
    if view.widened:
        found.append("widened")  # a repository's own allow_read / library_paths take effect only once shown
    return found


# ---------------------------------------------------------------------------------------------
# the one text of a plan


def _shown_path(path: str, folder: str) -> str:
    if outside(path, folder):
        return path
    relative = os.path.relpath(path, folder)
    # a folder named `~` or `$HOME` is read as written (no shell expands it): shown so it cannot read as the home
    return "./" + relative if relative[:1] in ("~", "$") else relative


def _capped(lines: list[str], indent: str = "    ") -> list[str]:
    if len(lines) <= LIST_LIMIT:
        return lines
    return lines[:LIST_LIMIT] + [f"{indent}… and {len(lines) - LIST_LIMIT} more"]


def _dollars(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def terminal_text(lines: list) -> str:
    """The one place a plan becomes text for a terminal: each line's characters that a terminal would
    act on are written as escapes (\x1b, \r, \n, \u202e), whatever field they came from (a file or
    folder name, a template's, a model's, a command, an input), so no part of the plan can move the
    cursor, erase, overwrite or start a line of its own. A tuple is one entry shown on several lines
    (a command's lines)."""
    from taskdsl.support.terminal import shown

    return "\n".join("\n".join(shown(part) for part in line) if isinstance(line, tuple) else shown(line)
                     for line in lines)


def render_plan(view: PlanView, why: list[str] | None = None) -> str:
    """The plan as the user reads it before agreeing (the editor's question, `taskdsl run --plan`)."""
    batch = f" for each of the {view.rows} rows of {_shown_path(view.data, view.folder)}" if view.data else ""
    lines = [f"Running '{view.label}' ({_shown_path(view.path, view.folder)}){batch} will:"]
    if view.commands:
        noun = "this shell command" if len(view.commands) == 1 else f"these {len(view.commands)} shell commands"
        lines.append(f"  run {noun} in {view.folder}:")
        shown = []
        for command in view.commands:
            first, *more = command.text.strip().split("\n")  # each line's controls escaped by terminal_text
            shown.append(("    $ " + first, *("      " + line for line in more)))
            shown += [f"        {variable} = the value of {placeholder}" for variable, placeholder in command.values]
        lines += shown  # every command, never "… and N more": an agreed plan runs nothing it did not show
    if view.models:
        lines.append("  call " + ", ".join(
            f"{name} ({'free' if not costs_money(name) else 'priced' if known else 'price unknown'})"
            for name, known in view.models))
        unpriced = [name for name, known in view.models if not known]
        if any(costs_money(name) for name, _ in view.models):
            estimate = f"about {_dollars(view.estimate)} or more"
            if unpriced:
                estimate += f", plus what {', '.join(unpriced)} cost{'s' if len(unpriced) == 1 else ''}"
            lines.append(f"    estimated cost: {estimate}")
    for name, chain, if_used in view.fallbacks:
        lines.append(f"    if {name} still fails after its retries: {', then '.join(chain)} "
                     f"(about {_dollars(if_used)} more if used)")
    if view.models and view.cache:
        lines.append("    answers already in the cache are reused: cached calls cost nothing")
    if view.files.paths or view.files.unknown:
        lines.append("  read these files:")
        lines += [f"    {line}" for line in read_lines(view)]
        files, total = view.read_limits
        lines.append(f"    (at most {files:,} files and {total:,} bytes in all)")
        if view.allow_read:
            lines.append("  may read outside the project, in:")
            lines += [f"    {folder}" for folder in view.allow_read]
    if view.inputs:
        lines.append("  with the inputs:")
        lines += _capped([f"    {name} = {value}" for name, value in view.inputs])
    if view.missing:
        lines.append("  once given the inputs: " + ", ".join(view.missing))
    others = [t for t in view.templates if os.path.realpath(t) != os.path.realpath(view.path)]
    if others:
        lines.append("  using the templates of:")
        lines += [f"    {_shown_path(os.path.realpath(t), view.folder)}" for t in others]
    if view.widened:
        lines.append("  with what the project's configuration widens (it applies only if you agree):")
        lines += ([f"    {key} = {folder}" + (" (templates from there are compiled for this run)"
                                                     if key == "library_paths" else
                                                     " (a link inside the project to this file outside it)"
                                                     if key == "a linked template" else
                                                     " (the run writes its trace and result document there)"
                                                     if key == "[run] trace_dir" else "")
                          for key, folder in view.widened])
    if view.config_files:
        lines.append("  with the configuration of: " + ", ".join(_shown_path(c, view.folder) for c in view.config_files))
    if not (view.commands or view.models):
        lines.append("  run nothing that executes or calls a model")
    if why:
        words = [REASON_WORDS[r] if r != REASON_FILES or _reads_outside(view) else FILES_CHOSEN_AT_RUN for r in why]
        lines.append("Asked because " + (", ".join(words[:-1]) + " and " if len(words) > 1 else "") + words[-1] + ".")
    lines.append(f"Plan {view.digest[:PLAN_DIGITS]}")
    return terminal_text(lines)
