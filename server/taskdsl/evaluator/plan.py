"""What a run will do, decided before it does anything: `prepare` → `Prepared`.

`taskdsl run`, the editor's Run task and the tests all go through `prepare(index, path, …)`: it
takes the project's index (the CLI builds it with `workspace.discover`; the editor passes its
live one, with `libraryPaths` and `globals` honoured), checks the file against that same index
(what `taskdsl check FILE` reports), compiles the entry file and every file its references reach
(resolved by the index, never by a second discovery), and finds the entry to evaluate, the
inputs still missing, the shell commands the run may execute and whether it calls a model.

The `Prepared` value is what consent, previews and cost estimates read; `runner.execute` runs
exactly it.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from taskdsl.meaning import facts

from taskdsl.language import names

from taskdsl.meaning import model as semantics
from taskdsl.language.document import Document, Element, parse
from taskdsl.language.templating import find_placeholders

from taskdsl.evaluator.calls import fallbacks_of
from taskdsl.evaluator.compiler import CompileError, Compiler, TaskLibrary, refuse_malformed
from taskdsl.evaluator.results import TaskError
from taskdsl.library.index import reached_files  # noqa: F401  (the one reach: the gate's and `check FILE`'s)

# where runs are offered: the root, and each named task / template of a library file


@dataclass(frozen=True)
class RunTarget:
    """Something runnable in a file: ``name`` is what the command's ``task`` argument gets
    (None for the file's root entry), ``element`` where the lens goes."""

    name: str | None
    element: Element
    label: str  # what the user sees: the task's name, or the file stem


def file_stem(path: str | None) -> str:
    return names.file_stem(path) or "task"


def runnable_targets(document: Document, path: str | None = None) -> list[RunTarget]:
    """The root task, template, call or cond of a file; each template and named task of a
    library (a library itself is not runnable: it holds several entries)."""
    root = document.root
    if root is None:
        return []
    if root.tag == "task":
        return [RunTarget(None, root, root.get("name") or file_stem(path))]
    if root.tag == "template":
        return [RunTarget(None, root, root.get("name") or file_stem(path))]
    if root.tag in ("call", "cond"):
        return [RunTarget(None, root, file_stem(path))]
    if root.tag == "library":
        targets = []
        for child in root.children:
            name = child.get("name")
            if child.tag in ("template", "task") and name:
                targets.append(RunTarget(name, child, name))
        return targets
    return []


# ---------------------------------------------------------------------------------------------
# inputs: the command's arguments, then the template's literal inputs


@dataclass(frozen=True)
class InputPlan:
    values: dict[str, Any]  # what to pass to the run
    missing: list[str]  # required inputs with no value
    target: str  # the task's name for messages
    unknown: list[str] = field(default_factory=list)  # given names the entry cannot use
    accepted: list[str] = field(default_factory=list)  # the names it can (when unknown is not empty)
    shared: list[str] = field(default_factory=list)  # the globals among them (any entry takes those)


def find_target(document: Document, task: str | None, path: str | None = None) -> Element | None:
    """The element a run of ``task`` starts from in this document (None: not defined here)."""
    for target in runnable_targets(document, path):
        if target.name == task or (task is not None and target.name is None and target.label == task):
            return target.element
    return None


def input_names(target: Element, model: semantics.FileModel) -> list[str]:
    """The names a run of ``target`` (a <task> or <template>) can take as inputs: its params or
    declared inputs, the globals, and the names its texts use that a caller may bind (what the
    checker's TD402 warns "could be bound by a caller")."""
    if target.tag == "template":
        declared = names.split_params(target.get("params"))
    else:
        declared = [inp.get("name") for inp in facts.inputs(target) if inp.get("name")]
    inside = {id(element) for element in target.iter()}
    open_uses = [p.use.name for p in model.variable_problems() if not p.error and id(p.use.element) in inside]
    asked = [needed for _, needed in entry_from_names(target)]  # what plan_inputs asks the run for
    return list(dict.fromkeys([*declared, *asked, *open_uses, *sorted(model.scopes.everywhere_names())]))


def entry_from_names(target: Element) -> list[tuple[str, str]]:
    """(input name, the name it takes) for each input of an entry task (a root, or a library task
    run with --task) that takes its value from the run: run directly, the task's caller is the run,
    so its from="x" (or a root ref's <input name="x"/>) takes `--input x=…` (a ref to the task binds
    the inputs instead)."""
    if target.tag != "task":
        return []
    found = []
    for inp in facts.inputs(target):
        source = facts.from_name(inp) if facts.input_source(inp) == "from" else None
        needed = re.match(r"[A-Za-z_][A-Za-z0-9_]*", source) if source else None
        if needed and inp.get("name"):
            found.append((inp.get("name"), needed.group(0)))
    return found


def takes_words(accepted: list[str], shared: list[str] = ()) -> str:
    """What an entry takes, for a message: its own inputs, then the project's globals apart (any
    entry takes those; they are not its inputs): "takes 'text' (and the globals 'team')"."""
    own = [n for n in accepted if n not in shared]
    globals_ = [n for n in accepted if n in shared]
    takes = f"takes {', '.join(repr(n) for n in own)}" if own else "takes no inputs"
    if globals_:
        noun = "global" if len(globals_) == 1 else "globals"
        takes += f" ({'and ' if own else 'but '}the {noun} {', '.join(repr(n) for n in globals_)})"
    return takes


def unknown_inputs_message(plan: InputPlan) -> str:
    "The refusal of input names the entry cannot use: what it takes, and the name meant if one is close."
    noun = "input" if len(plan.unknown) == 1 else "inputs"
    takes = takes_words(plan.accepted, plan.shared)
    message = f"cannot run '{plan.target}': unknown {noun} {', '.join(repr(n) for n in plan.unknown)}; it {takes}"
    guess, _ = names.nearest(plan.unknown[0], plan.accepted)
    return message + (f"; did you mean '{guess}'?" if guess else "")


def plan_inputs(target: Element | None, given: dict[str, Any] | None, label: str = "",
                model: semantics.FileModel | None = None) -> InputPlan:
    """Inputs for a run of ``target`` (a <task> or a <template>).

    - a task: its inputs with a literal, a ``from`` or a nested task have a value; empty ones
      (placeholders) must come from ``given``;
    - a template: each param comes from ``given``, else from the literal <input> of the same
      name in its task (a default), else it is missing.
    Values of ``given`` are passed through; for a template, literal defaults are added. With the
    file's semantic ``model``, given names the entry cannot use are listed in ``unknown``."""
    given = dict(given or {})
    if target is None:
        return InputPlan(given, [], label)
    name = target.get("name") or label
    if model is not None and target.tag in ("task", "template"):
        accepted = input_names(target, model)
        unknown = [n for n in given if n not in accepted]
        if unknown:
            shared = sorted(set(accepted) & set(model.scopes.everywhere_names()))
            return InputPlan(given, [], name, unknown, accepted, shared)
    if target.tag == "template":
        literals = facts.template_defaults(target)  # what a call may leave out, a direct run too
        values, missing = dict(given), []
        for param in names.split_params(target.get("params")):
            if param in values:
                continue
            if param in literals:
                values[param] = literals[param]
            else:
                missing.append(param)
        return InputPlan(values, missing, name)
    if target.tag == "cond" and target.parent is None:  # a root cond tests last_output: the run asks for it (§12)
        return InputPlan(given, [] if "last_output" in given else ["last_output"], name)
    if target.tag == "task":
        missing = [inp.get("name") for inp in facts.inputs(target)
                   if inp.get("name") and inp.get("name") not in given and not facts.input_has_value(inp)]
        everywhere = model.scopes.everywhere_names() if model is not None else set()
        for input_name, needed in entry_from_names(target):
            if input_name not in given and needed not in given and needed not in everywhere and needed not in missing:
                missing.append(needed)
        return InputPlan(given, missing, name)
    return InputPlan(given, [], name)


def missing_inputs_message(plan: InputPlan, batch: bool = False) -> str:
    """The refusal of a run whose inputs have no value, saying how to give them: in the editor's
    command's inputs argument, or (`batch`) in every row of the data file."""
    names = ", ".join(f"'{m}'" for m in plan.missing)
    one = len(plan.missing) == 1
    noun = "input" if one else "inputs"
    example = ", ".join(f'"{m}": "…"' for m in plan.missing)
    head = f"cannot run '{plan.target}': {noun} {names} {'has' if one else 'have'} no value; "
    if batch:
        return head + (f"give every row {'a value for it' if one else 'values for them'} (a key of the JSON line "
                       f"or a CSV column: {{{example}}})")
    return head + f"pass {'it' if one else 'them'} in the command's inputs argument ({{{example}}})"


# ---------------------------------------------------------------------------------------------
# safety: the shell commands a run may execute (script tasks, file_paths source="command"),
# reachable through steps, inputs, conds, refs, calls and inline {{fn(…)}} calls


def script_commands(node: Any, library: Any = None) -> list[str]:
    """Every shell command the evaluation of ``node`` (an evaluator AST node) may run, in the
    order met, each once; refs and calls are followed through ``library`` (a TaskLibrary). A cond's
    every branch counts: which one runs is only known at run time. Commands keep their {{…}}."""
    return reach(node, library)[0]


def reach(node: Any, library: Any = None, on_atomic: Any = None, on_task: Any = None) -> tuple[list[str], bool]:
    """(shell commands, whether any atomic task may call a model) of a run of ``node``;
    on_atomic(node) is told each atomic task met (the cost estimate prices them), on_task(node)
    every task (the consent plan lists their file_paths)."""
    from taskdsl.evaluator import ast

    commands: list[str] = []
    atomic = [False]
    seen_nodes: set[int] = set()
    seen_names: set[str] = set()

    def add(command: str) -> None:
        command = command.strip()
        if command and command not in commands:
            commands.append(command)

    def call(name: str | None) -> None:
        if not name or name in seen_names or library is None:
            return
        seen_names.add(name)
        try:
            definition = library.get_task(name)
        except Exception:  # unknown: the run fails on it before anything runs there
            return
        visit(definition.ast_node)

    def text(value: str | None) -> None:
        for placeholder in find_placeholders(value or ""):
            if placeholder.kind == "call":
                call(placeholder.name)

    def arg(value: Any) -> None:
        if isinstance(value, ast.TaskArg):
            visit(value.node)
        elif isinstance(value, ast.TextArg):
            text(value.text)

    def visit(n: Any) -> None:
        if n is None or id(n) in seen_nodes:
            return
        seen_nodes.add(id(n))
        if isinstance(n, ast.Template):
            visit(n.body)
        elif isinstance(n, ast.FunctionCall):
            for _, value in n.args:
                arg(value)
            call(n.func_name)
        elif isinstance(n, ast.Cond):
            for case in n.cases:
                visit(case.body)
            visit(n.default)
        elif isinstance(n, ast.TaskNode):
            if on_task is not None:
                on_task(n)
            for inp in n.inputs:
                arg(inp.source)
            text(n.description)
            if n.file_paths is not None:
                if n.file_paths.source == "command":
                    add(n.file_paths.text)
                text(n.file_paths.text)
                for p in n.file_paths.paths:
                    text(p)
            if isinstance(n, ast.Script):
                text(n.command)
                add(n.command)
            elif isinstance(n, ast.Atomic):
                atomic[0] = True
                if on_atomic is not None:
                    on_atomic(n)
                text(n.instructions)
                text(n.system)
            elif isinstance(n, ast.Sequential):
                for step in n.steps:
                    visit(step)
            elif isinstance(n, ast.Reduce):
                text(n.initial_value)
                visit(n.inner_task)
                visit(n.reduction_task)

    visit(node)
    return commands, atomic[0]




# ---------------------------------------------------------------------------------------------
# prepare: the one way from a file to a run


class TemplateErrors(Exception):
    """The template, a file it reaches or the project's config does not check (exit 2 on the
    command line): the checker's error diagnostics, file by file (`files`: (path, text,
    diagnostics), the entry first). `path`, `text` and `diagnostics` are the first failing file's
    path and text and every error of them all."""

    def __init__(self, path: str, diagnostics: list, text: str | None = None, files: list | None = None):
        self.files = files if files is not None else [(path, text, diagnostics)]
        self.path, self.text = self.files[0][0], self.files[0][1]
        self.diagnostics = [d for _, _, found in self.files for d in found]
        super().__init__(f"{self.path}: {len(self.diagnostics)} error(s)")

    def located(self, shown: Callable[[str], str] | None = None) -> list[str]:
        """`path:line:col: error CODE message` for each error (`shown(path)`: how to print a path)."""
        from taskdsl.language.document import Document

        lines = []
        for path, text, diagnostics in self.files:
            document = Document(text or "")
            for d in diagnostics:
                line, col = document.position(d.span.start) if getattr(d, "span", None) is not None else (0, 0)
                severity = getattr(getattr(d, "severity", None), "value", "error")
                lines.append(f"{shown(path) if shown else path}:{line + 1}:{col + 1}: {severity} {d.code} {d.message}")
        return lines


@dataclass
class Prepared:
    """Everything a run of one entry will do, known before it starts."""

    path: str
    text: str
    document: Document
    task: str | None  # the --task / command argument (None: the file's root entry)
    label: str  # what the user sees
    library: TaskLibrary  # the compiled definitions the run can reach
    node: Any  # the AST node to evaluate
    args: dict | None  # the params bound for a task or template entry (None: a call or cond root)
    inputs: dict[str, Any]  # the values the run starts with (given, plus a template's literal defaults)
    missing: list[str] = field(default_factory=list)  # required inputs with no value
    commands: list[str] = field(default_factory=list)  # shell commands it may run ({{…}} unrendered)
    calls_models: bool = False  # an atomic task may call a model
    files: list[str] = field(default_factory=list)  # the template files compiled for it
    globals: dict[str, Any] = field(default_factory=dict)  # the globals' values (project's, then inputs): seen everywhere
    allow_read: tuple[str, ...] = ()  # folders outside the project it may read (taskdsl.project.confine)
    replay: tuple[str, str] | None = None  # a test's replay fixture as planned: (path, text); None: none
    read_limits: tuple[int, int] = (1_000, 50_000_000)  # files and bytes the run may read ([run] max_read_*)
    sources: dict[str, str | None] = field(default_factory=dict)  # path → the text read to compile it (None: unreadable)
    settings: Any = None  # the project's settings it was prepared with (the memory system reads its [memory])
    fallbacks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # model → its fallbacks ([models."NAME"])
    # what the project's own configuration widens for this run: (key, folder), see project_widening; the run
    # executes only once the user agreed (`agreed`: --yes, the terminal's question, the editor's consent)
    widened: tuple[tuple[str, str], ...] = ()
    agreed: bool = False
    declined: bool = False  # asked on a terminal, and the answer was not yes (the refusal says so)
    calls: dict = field(default_factory=dict)  # (default model, --model) → the models it calls: shared by the runs of one Compiled


def project_widening(path: str, files: list[str], reading: bool, granted: tuple[str, ...] = (),
                     library_paths: tuple[str, ...] = (), trace_dir: str | None = None,
                     entries: tuple[tuple[str, str], ...] | None = None) -> tuple[tuple[str, str], ...]:
    """What the configuration file of `path`'s project widens for this run, (key, folder) each: its
    `[run] allow_read` folders outside the project when the run reads files at all, its
    `[run] trace_dir` outside the project when the run writes there (`trace_dir`: the folder the
    project's configuration chose for this run's trace and result document, the editor's runs; None:
    it writes none, or into a folder the user chose), its
    `library_paths` outside the project from which the run compiled a template, and a template
    compiled from outside the project through a link inside it. A folder the user gave too
    (`--allow-read`, `granted`) is the user's, not the project's; so are the run's `library_paths`
    (the settings': the project's, shown above, the editor's and TASKDSL_LIBRARY_PATH). `entries`:
    the project's `config.widening_entries`, when the caller read them already."""
    from taskdsl.project.config import load_config, project_root, widening_entries
    from taskdsl.support.reading import within

    from taskdsl.project.workspace import env_library_paths

    found_root = project_root(path)
    if entries is None:
        entries = widening_entries(load_config(found_root))
    root = os.path.realpath(found_root)
    compiled = [os.path.realpath(f) for f in files[1:]]
    given = {os.path.normpath(os.path.abspath(g)) for g in granted}
    found = []
    for key, folder in entries:
        if key == "library_paths":
            if any(within(f, os.path.realpath(folder)) for f in compiled):
                found.append((key, folder))
        elif reading and folder not in given:
            found.append((key, folder))
    if trace_dir and not within(os.path.realpath(trace_dir), root):  # links followed: a link inside leading out is out
        found.append(("[run] trace_dir", os.path.normpath(trace_dir)))
    # a template inside the project's folders that is a link to a file outside it (its real path is
    # what is compiled) is code from outside, as a library path outside would be: unless a library
    # path of the run (the user's own, or the project's shown above) holds it, it is asked for too
    known = [os.path.realpath(folder) for key, folder in entries if key == "library_paths"]
    known += [os.path.realpath(os.path.join(root, os.path.expanduser(p)))
              for p in (*library_paths, *env_library_paths())]
    for real in [os.path.realpath(f) for f in files]:  # the entry too: `taskdsl test` finds it by a test's name
        if not within(real, root) and not any(within(real, folder) for folder in known):
            found.append(("a linked template", real))
    return tuple(dict.fromkeys(found))


def walk(node: Any, library: Any) -> tuple[list[str], bool, bool]:
    """One walk of what a run of `node` may reach: (its shell commands, whether it may call a model,
    whether it reads files)."""
    found = [False]

    def on_task(task: Any) -> None:
        if task.file_paths is not None:
            found[0] = True

    commands, calls_models = reach(node, library, on_task=on_task)
    return commands, calls_models, found[0]


def read_entry(path: str) -> str:
    """The entry file's text through the one reader; a file that is not UTF-8 text is refused."""
    from taskdsl.project.workspace import read_source

    source = read_source(path)
    if source.problem is not None:
        raise UnreadableTemplate(path, source.problem[1])
    return source.text


class UnreadableTemplate(ValueError):
    """The entry file is binary, too large or not UTF-8: `reason` names the byte."""

    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def disk_reader(path: str) -> str | None:
    from taskdsl.project.workspace import read_text

    return read_text(path)


class ProjectTaskLibrary(TaskLibrary):
    """The runtime library of one run: what it reaches, compiled. A name it does not hold is
    unknown to the project too; the did-you-mean comes from the project's index, as TD501's does."""

    def __init__(self, index=None):
        super().__init__()
        self.index = index

    def get_task(self, name: str):
        if name in self or self.index is None:
            return super().get_task(name)
        near = self.index.suggestions(name)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else "; the project defines no such task"
        raise TaskError("VALIDATION_ERROR", f"task '{name}' is not in the library{hint}", "unknown_task",
                        {"name": name, "suggestions": near})

    def missing_message(self, name: str, exclude: str | None = None) -> str:
        """A target the run did not compile is unknown or ambiguous in the project's index: the
        checker's TD501 words for it."""
        if self.index is None:
            return super().missing_message(name, exclude)
        found = self.index.definitions(name)
        if len(found) > 1 and not self.index.named(name):
            return semantics.ambiguous_key_message(name, [d.name for d in found])
        return semantics.unknown_target_message(name, self.index.names() + self.index.keys(), exclude=exclude)


def compile_reachable(index, path: str, document: Document, read: Callable[[str], str | None] = disk_reader,
                      settings=None) -> tuple[TaskLibrary, Compiler, list[str]]:
    """The runtime library of a run: the entry file's definitions, then the definition each
    reference resolves to in the index (by name, then by unique type:subtype key), file by file,
    following the references of every file compiled. A name the index cannot resolve stays out
    (the checker reports it; the run fails naming it if it gets there)."""
    from taskdsl.library import index_document

    library = ProjectTaskLibrary(index)
    compiler = Compiler(path, settings)  # the settings say which names are globals
    for definition in compiler.definitions(document.root):
        library.register_task(definition)
    compiled = [os.path.abspath(path)]
    pending = [r.name for r in index_document(document, path).references]
    while pending:
        written = pending.pop()
        if written in library or index is None:
            continue
        target = index.definition(written)
        if target is None or target.path is None or target.path in compiled:
            continue
        text = read(target.path)
        root = parse(text).root if text is not None else None
        if root is None:
            continue
        compiled.append(target.path)
        for definition in Compiler(target.path, settings).definitions(root):
            if definition.name not in library.by_name:
                library.register_task(definition)
        file_index = index.file_index(target.path)
        pending += [r.name for r in (file_index.references if file_index else ())]
    return library, compiler, compiled


def _shown(path: str | None) -> str:
    "A path relative to the current folder when inside it (as the user would type it)."
    if not path:
        return "FILE"
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def entry_of(root, compiler: Compiler, library: TaskLibrary, task: str | None):
    """What to evaluate for the file, and the params it binds (None: none): --task picks a library entry."""
    if task and task not in library:  # --task (the editor's task) names what the file defines or calls
        entries = [d.name for d in compiler.definitions(root)]
        near = difflib.get_close_matches(task, entries, n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise TaskError("VALIDATION_ERROR", f"no task '{task}' in {os.path.basename(compiler.path or 'the file')}; "
                        f"{hint}it defines {', '.join(entries) or 'none'}", "unknown_entry",
                        {"name": task, "tasks": entries})
    if task or root.tag in ("task", "template"):
        definition = library.get_task(task or compiler.definitions(root)[0].name)
        node = definition.ast_node
        return node, list(definition.metadata.get("parameters", []))
    if root.tag == "call":
        return compiler.call(root, "call"), None
    if root.tag == "cond":
        return compiler.cond(root, "cond"), None
    if root.tag == "library":
        entries = [d.name for d in compiler.definitions(root)]
        raise TaskError("VALIDATION_ERROR", f"a library file holds several tasks: choose one with --task "
                        f"({', '.join(entries) or 'it defines none'})", "no_entry", {"tasks": entries})
    if root.tag == "tests":
        raise CompileError("TD100", "<tests> is a test file, not a runnable root: run its tests with "
                           f"taskdsl test {_shown(compiler.path)}",
                           root, compiler.path)
    raise CompileError("TD100", f"<{root.tag}> is not a runnable root: expected task, template, library, call or cond",
                       root, compiler.path)


def check_errors(document: Document, path: str, index, settings=None) -> list:
    """The errors `taskdsl check FILE` reports for this text against the same index."""
    from taskdsl.rules.checker import check_document

    return check_document(document, path=path, library=index, settings=settings or getattr(index, "settings", None)
                          ).errors


def config_errors(path: str, settings=None, config=None) -> list[tuple[str, str, list]]:
    """The errors of the project's configuration of `path`, each file's as (path, text, errors):
    its config file (taskdsl.toml or [tool.taskdsl]) and its memory index (TD906-TD908: what
    fresh context matches in is configuration too; `taskdsl check` reports the same). `config`:
    the project's configuration, when the caller read it already."""
    from taskdsl.project import memory_index
    from taskdsl.project.config import load_config, project_root

    root = project_root(path)
    found = []
    for where, text, problems in memory_index.configuration_problems(root, settings,
                                                                     config if config is not None else load_config(root)):
        errors = [d for d in problems if d.is_error]
        if errors:
            found.append((where, text, errors))
    return found


def gate(index, path: str, document: Document, text: str, read: Callable[[str], str | None], settings=None,
         config=None) -> None:
    """The run's only gate: the checker over every reached file and the project's config (`config`:
    as the caller read it, else read here). Raises TemplateErrors with the checker's own error
    diagnostics when any is an error."""
    failing = config_errors(path, settings, config)
    for other in reached_files(index, path, document):
        if other == path:
            other_text, other_document = text, document
        else:
            other_text = read(other)
            if other_text is None:
                continue  # unreadable: the index holds no definition from it either
            other_document = parse(other_text)
        errors = check_errors(other_document, other, index, settings)
        if errors:
            failing.append((other, other_text, errors))
    if failing:
        failing.sort(key=lambda f: f[0] != path)  # the entry's own errors first
        raise TemplateErrors(failing[0][0], failing[0][2], failing[0][1], files=failing)


#: the runtime library's refusals that are the checker's TD501/TD502 (a name it cannot link)
LINK_REASONS = frozenset({"duplicate_task", "unknown_task", "ambiguous_task"})


@dataclass(frozen=True)
class Compiled:
    """What a run of one entry is whatever its inputs: the checked, compiled template. A batch
    compiles it once and binds each row's inputs to it (`bind`); `prepare` does both."""

    path: str
    text: str
    document: Document
    task: str | None
    label: str
    library: TaskLibrary
    node: Any
    params: list[str] | None  # the entry's params (None: a call or cond root, which binds none)
    target: Element | None
    file_model: Any  # the entry file's semantic model (which input names the entry accepts)
    commands: list[str]
    calls_models: bool
    files: list[str]
    sources: dict[str, str | None]
    settings: Any
    widened: tuple[tuple[str, str], ...]  # what the project's own configuration widens (project_widening)
    allow_read: tuple[str, ...]  # the folders outside the project a run may read
    calls: dict = field(default_factory=dict)  # (default model, --model) → the models it calls (runner.planned_models)


def compile_entry(index, path: str, task: str | None = None, *, text: str | None = None,
                  read: Callable[[str], str | None] = disk_reader, settings=None, check: bool = True,
                  granted: tuple[str, ...] = (), trace_dir: str | None = None) -> Compiled:
    """The input-independent half of `prepare` (same arguments but the inputs; same errors but
    the inputs' own)."""
    from taskdsl.project.config import load_config, project_root, widening_entries

    path = os.path.abspath(path)
    text = read_entry(path) if text is None else text
    settings = settings or getattr(index, "settings", None)
    document = parse(text)
    config = load_config(project_root(path))  # read once: the gate checks it, the widening reads it
    if check:
        gate(index, path, document, text, read, settings, config)
    sources = {path: text}

    def read_and_keep(other: str) -> str | None:
        sources[other] = found = read(other)
        return found

    try:
        refuse_malformed(document, path)
        targets = runnable_targets(document, path)
        label = task or (targets[0].label if targets else file_stem(path))
        library, compiler, files = compile_reachable(index, path, document, read_and_keep, settings)
        target = find_target(document, task, path)
        file_model = compiler.file_model(target) if target is not None else None
        node, params = entry_of(document.root, compiler, library, task)
        compiler.prepare(document.root, library)
    except (CompileError, TaskError) as refused:
        # What the compiler cannot build or link (a duplicate, unknown or ambiguous name), the checker
        # decides: the refusal is always the checker's diagnostics (with the gate on they were given
        # above; with it off — a structure checked elsewhere — they are given now). What the checker
        # accepts is a bug, raised as it is; so is a usage error (several entries and no --task).
        if isinstance(refused, CompileError) or refused.reason in LINK_REASONS:
            gate(index, path, document, text, read, settings, config)
        raise
    commands, calls_models, reading = walk(node, library)  # one walk of what the run may reach
    entries = widening_entries(config)
    widened = project_widening(path, files, reading, granted, tuple(getattr(settings, "library_paths", ()) or ()),
                               trace_dir, entries)
    allow_read = tuple(getattr(settings, "run_allow_read", ()) or ())
    if not reading:  # nothing reads: the project's allow_read cannot take effect unasked (a re-plan is held to the plan)
        project_folders = {folder for key, folder in entries if key == "[run] allow_read"}
        allow_read = tuple(f for f in allow_read if os.path.normpath(f) not in project_folders)
    return Compiled(path=path, text=text, document=document, task=task, label=label, library=library, node=node,
                    params=params, target=target, file_model=file_model, commands=commands,
                    calls_models=calls_models, files=files, sources=sources, settings=settings,
                    widened=widened, allow_read=allow_read)


def accepted_inputs(compiled: Compiled) -> tuple[list[str], list[str]] | None:
    """(the names a run of the compiled entry takes as inputs, the globals among them); None when
    any name goes (a call or cond root) or it is not known."""
    target, model = compiled.target, compiled.file_model
    if target is None or model is None or target.tag not in ("task", "template"):
        return None
    accepted = input_names(target, model)
    return accepted, sorted(set(accepted) & set(model.scopes.everywhere_names()))


def bind(compiled: Compiled, inputs: dict | None = None) -> Prepared:
    """A run of `compiled` with these inputs: raises TaskError for an input name it cannot use."""
    settings = compiled.settings
    plan = plan_inputs(compiled.target, inputs, compiled.label, compiled.file_model)
    if plan.unknown:  # after the template's own refusals: those say what to fix first
        raise TaskError("VALIDATION_ERROR", unknown_inputs_message(plan), "unknown_input",
                        {"unknown": plan.unknown, "accepted": plan.accepted})
    args = {p: plan.values[p] for p in compiled.params if p in plan.values} if compiled.params is not None else None
    global_names = tuple(getattr(settings, "globals", ()) or ())
    global_values = dict(getattr(settings, "global_values", ()) or ())  # taskdsl.toml's, --global over them
    global_values.update((name, plan.values[name]) for name in global_names if name in plan.values)
    return Prepared(path=compiled.path, text=compiled.text, document=compiled.document, task=compiled.task,
                    label=compiled.label, library=compiled.library, node=compiled.node, args=args,
                    inputs=plan.values, missing=plan.missing, commands=list(compiled.commands),
                    calls_models=compiled.calls_models, files=list(compiled.files), globals=global_values,
                    allow_read=compiled.allow_read, sources=dict(compiled.sources),
                    widened=compiled.widened, agreed=bool(getattr(settings, "run_agreed", False)),
                    settings=settings, fallbacks=fallbacks_of(settings),
                    read_limits=(int(getattr(settings, "run_max_read_files", 1_000)),
                                 int(getattr(settings, "run_max_read_bytes", 50_000_000))),
                    calls=compiled.calls)


def prepare(index, path: str, task: str | None = None, inputs: dict | None = None, *, text: str | None = None,
            read: Callable[[str], str | None] = disk_reader, settings=None, check: bool = True,
            granted: tuple[str, ...] = (), trace_dir: str | None = None) -> Prepared:
    """Decide what a run of `task` (None: the root entry) of the file at `path` does.

    `index` is the project's `library.Library` (None: the file alone). `text` is the entry's
    text when an editor has a newer buffer than the disk; `read(path)` gives the other files'
    texts (the editor's open buffers first). Raises UnreadableTemplate, TemplateErrors (the file
    does not check: with `check` before anything is compiled, without it when the compiler cannot
    build the file — the refusal is the checker's either way), CompileError (only where the checker
    accepts what the compiler cannot build: a bug), or TaskError (no entry, unknown task, unknown
    input). `granted`: the folders the user allowed to be read (`--allow-read`), which the
    project's configuration then does not widen. `trace_dir`: the folder the project's
    `[run] trace_dir` has the run write its trace and result document to (the editor's runs; None
    when the user chose the folder): outside the project it is a widening."""
    return bind(compile_entry(index, path, task, text=text, read=read, settings=settings, check=check,
                              granted=granted, trace_dir=trace_dir), inputs)
