"""Run a template file: check it, build the library around it, compile, evaluate.

    result = await run_file("examples/word_count.task.xml", inputs={"intro": "…"})

The library is the file's own definitions plus every other `*.task.xml` under the file's folder
and under the given library paths (env TASKDSL_LIBRARY_PATH, os.pathsep-separated); files that
do not compile are skipped there (the checker reports them), and a name defined twice keeps the
definition nearest to the file being run.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable

from taskdsl.document import parse

from .ast import Ctx, RunState
from .compiler import CompileError, Compiler, TaskLibrary
from .env import Env
from .handler import HandlerConfig, default_model
from .memory import MemorySystem
from .memory import SKIP_DIRS
from .results import TaskError, TaskResult
from .trace import Trace

MAX_LIBRARY_FILES = 2000


class TemplateErrors(Exception):
    """The template does not check (exit 2 on the command line): the error diagnostics."""

    def __init__(self, path: str, diagnostics: list):
        self.path, self.diagnostics = path, diagnostics
        super().__init__(f"{path}: {len(diagnostics)} error(s)")


def check_errors(text: str, path: str, library_paths: tuple[str, ...] = (), global_names: tuple[str, ...] = ()) -> list:
    """The errors the checker finds, with references resolved against the same folder the run
    uses as its library; without a checker, the document's scan errors."""
    try:
        from taskdsl.checker import check_text
    except ImportError:
        return [e for e in getattr(parse(text), "errors", [])]
    try:
        from taskdsl.library import Library

        library = Library.from_paths([os.path.dirname(os.path.abspath(path)), *library_paths, os.path.abspath(path)])
    except ImportError:
        library = None
    from taskdsl.settings import Settings

    settings = Settings(globals=tuple(global_names))  # the globals bound at run are visible names
    return check_text(text, path=os.path.abspath(path), library=library, settings=settings).errors


def library_files(path: str, library_paths: tuple[str, ...]) -> list[str]:
    roots = [os.path.dirname(os.path.abspath(path))] + [os.path.abspath(p) for p in library_paths]
    found: list[str] = []
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".task.xml")]
            if len(found) > MAX_LIBRARY_FILES:
                break
    entry = os.path.abspath(path)
    return [f for f in dict.fromkeys(os.path.abspath(f) for f in found) if f != entry]


def build_library(path: str, text: str, library_paths: tuple[str, ...] = ()) -> tuple[TaskLibrary, Any, Compiler]:
    """(library, root element, compiler of the entry file). The entry file's definitions must
    compile and register; the neighbours' are best effort."""
    library = TaskLibrary()
    root = parse(text).root
    if root is None:
        raise CompileError("TD001", "the file holds no element", None, path)
    compiler = Compiler(path)
    for definition in compiler.definitions(root):
        library.register_task(definition)
    for other in library_files(path, library_paths):
        try:
            with open(other, encoding="utf-8-sig") as f:
                other_root = parse(f.read()).root
            definitions = Compiler(other).definitions(other_root) if other_root is not None else []
        except (OSError, UnicodeDecodeError, CompileError):
            continue
        for definition in definitions:
            if definition.name not in library:
                library.register_task(definition)
    return library, root, compiler


def env_library_paths() -> tuple[str, ...]:
    return tuple(p for p in os.environ.get("TASKDSL_LIBRARY_PATH", "").split(os.pathsep) if p)


def entry_node(root, compiler: Compiler, library: TaskLibrary, task: str | None, inputs: dict):
    """What to evaluate for the file (and the args to bind): --task picks a library entry."""
    if task or root.tag in ("task", "template"):
        definition = library.get_task(task or compiler.definitions(root)[0].name)
        node = definition.ast_node
        params = definition.metadata.get("parameters", [])
        return node, {p: inputs[p] for p in params if p in inputs}
    if root.tag == "call":
        return compiler.call(root, "call"), None
    if root.tag == "cond":
        return compiler.cond(root, "cond"), None
    if root.tag == "library":
        names = [d.name for d in compiler.definitions(root)]
        raise TaskError("VALIDATION_ERROR", f"a library file holds several tasks: choose one with --task "
                        f"({', '.join(names) or 'it defines none'})", "no_entry", {"tasks": names})
    raise CompileError("TD100", f"<{root.tag}> is not a runnable root: expected task, template, library, call or cond",
                       root, compiler.path)


async def run_file(path: str, task: str | None = None, inputs: dict | None = None, model: str | None = None,
                   trace: str | None = None, on_event: Callable[[dict], Any] | None = None,
                   cancel: asyncio.Event | None = None, library_paths: tuple[str, ...] | None = None,
                   config: HandlerConfig | None = None, check: bool = True,
                   on_script_start: Callable[[int], Any] | None = None, text: str | None = None,
                   globals: dict[str, str] | None = None) -> TaskResult:
    """Run the template at path. Raises TemplateErrors (does not check), CompileError, or
    TaskError (the run failed); cancelling the asyncio task (or setting `cancel`) stops model
    calls and kills scripts' process groups. `text` overrides the file's content on disk.
    `globals` (name → value: the project's globals with `--global` over them) are bound in the
    global environment, visible everywhere a global is."""
    if text is None:  # an editor may pass its unsaved buffer instead
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    library_paths = env_library_paths() if library_paths is None else tuple(library_paths)
    if check:
        errors = check_errors(text, path, library_paths, tuple(globals or ()))
        if errors:
            raise TemplateErrors(path, errors)
    inputs = dict(inputs or {})
    library, root, compiler = build_library(path, text, library_paths)
    node, args = entry_node(root, compiler, library, task, inputs)

    # the seeds' shape: env.find("taskLibrary")["taskLibrary"] from any environment
    global_env = Env({**(globals or {}), "taskLibrary": library})
    run_env = Env(inputs, outer=global_env)  # --input values: visible to the entry task and its calls
    config = config or HandlerConfig(model=default_model())
    state = RunState(config=config, global_env=global_env, model_override=model,
                     memory=MemorySystem(os.path.dirname(os.path.abspath(path))), trace=Trace(trace),
                     on_event=on_event, on_script_start=on_script_start)
    state.trace.write(event="run", file=os.path.abspath(path), task=task, inputs=inputs,
                      model=model or config.model)
    label = task or (root.get("name") if root.tag == "task" else None) or root.tag
    ctx = Ctx(state, path=label)
    work = asyncio.ensure_future(node.eval(run_env, ctx, args) if args is not None else node.eval(run_env, ctx))
    try:
        if cancel is None:
            return await work
        stopper = asyncio.ensure_future(cancel.wait())
        done, _ = await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            stopper.cancel()
            return work.result()
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        raise TaskError("TASK_FAILURE", "the run was cancelled", "cancelled")
    except TaskError as error:
        state.trace.write(event="failed", error=error.to_json())
        raise
    finally:
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
        state.trace.close()
