"""`taskdsl memory index|show|match`: the memory system's global index (SPEC §7, §15).

index  writes or refreshes the project's index file (`.taskdsl/memory.json`, or `[memory] index`):
       one entry per file of the project (or of the PATHS given: the other entries stay; in a
       folder, the templates — the `files` globs — are left to the library and `taskdsl match`), its
       metadata what the file system and the file's own first heading, docstring or description say;
       with --model, a one-line summary written by the model, through the one run path (a task
       prepared, checked and planned as `taskdsl run` does: --plan prints its plan). Entries whose
       file is gone are dropped. The index is written owner-only through a temporary file.
show   prints the index and what is wrong with it (the editor's diagnostics).
match  prints what a task with fresh_context and that text would get: the matched files, in
       index order, with the project's matcher.
Exit codes: 0 done; 1 a model call or the run failed, the index has errors (show) or is missing;
2 a usage problem (a path outside the project, no such file, a bad option).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from xml.sax.saxutils import escape

MAX_FILES = 5000
SUMMARY_INSTRUCTIONS = ("Summarise the file {path} (its content is in the context) in one line of at most 15 "
                        "words: what it is about, for someone choosing which files a task needs. Answer with "
                        "the line only.")


def add_memory_parser(commands) -> argparse.ArgumentParser:
    memory = commands.add_parser("memory", help="write, show and try the memory system's index of the project's files",
                                 description="The memory system's global index: path → what the file is about. "
                                             "Tasks with fresh_context enabled get the files it matches.")
    actions = memory.add_subparsers(metavar="ACTION")

    index = actions.add_parser("index", help="write or refresh the index",
                               description="Write or refresh the project's memory index (.taskdsl/memory.json, or "
                                           "[memory] index in taskdsl.toml). Without --model the metadata is what the "
                                           "file system and the file's own first heading, docstring or description "
                                           "say; with --model a one-line summary per file, written by that model "
                                           "(its file contents are sent to it).")
    index.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to (re)index (default: the project)")
    index.add_argument("--model", help="write a one-line summary of each file with this model")
    index.add_argument("--plan", action="store_true", help="with --model: print the run's plan (files, model, cost); "
                                                           "write nothing")
    index.add_argument("--max-cost", type=_non_negative, metavar="USD", help="with --model: stop when the summaries "
                                                                            "would cost more")
    index.add_argument("--json", action="store_true", help="print the entries written as JSON")
    index.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    index.set_defaults(func=index_command)

    show = actions.add_parser("show", help="print the index and its problems")
    show.add_argument("--json", action="store_true", help="print {index, entries, problems} as JSON")
    show.set_defaults(func=show_command)

    match = actions.add_parser("match", help="what a task with fresh_context and this text would get",
                               description="Print the index's files that a task with fresh_context enabled and this "
                                           "text would get, in index order (no ranking), with the project's matcher.")
    match.add_argument("text", metavar="TEXT", help="the task's text")
    match.add_argument("--model", help="the model the model matcher asks (default: the project's model)")
    match.add_argument("--json", action="store_true", help="print {matcher, index, matches, refused} as JSON")
    match.set_defaults(func=match_command)
    memory.set_defaults(func=lambda _args: _usage(memory))
    return memory


def _usage(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _non_negative(value: str) -> float:
    from taskdsl.cli.run import _non_negative as parse

    return parse(value)


def _error(message: str) -> None:
    print(f"taskdsl memory: {message}", file=sys.stderr)


def _project():
    """(root, settings) of the project holding the working folder."""
    from taskdsl.project.config import settings_for
    from taskdsl.project.workspace import project_root

    root = project_root(os.getcwd())
    return root, settings_for(root)[0]


# --------------------------------------------------------------------------- index


def _taskdsl_own(path: str) -> bool:
    """taskdsl's own files in a folder (its configuration, test files and their recorded answers): what a
    task is about is the project's other files. Named explicitly, they are indexed like any file."""
    from taskdsl.authoring.testcases import REPLAY_SUFFIX

    name = os.path.basename(path)
    return name == "taskdsl.toml" or name.endswith((".test.xml", REPLAY_SUFFIX))


def files_to_index(root: str, settings, paths: list[str], index_file: str) -> list[str]:
    """The files (relative to root) to (re)index. Raises ValueError for a path outside the project
    or one that does not exist."""
    from taskdsl.project.memory_index import outside_reason, relative
    from taskdsl.project.workspace import DEFAULT_FILES, files_under, glob_regex

    exclude = tuple(getattr(settings, "exclude", ()) or ())
    templates = [glob_regex(p.lstrip("/")) for p in (getattr(settings, "files", None) or DEFAULT_FILES)]
    found: list[str] = []
    for given in paths or [root]:
        full = os.path.abspath(given)
        if full != root and outside_reason(relative(full, root), root) is not None:
            raise ValueError(f"{given} is outside the project ({root}): only the project's files are indexed")
        if os.path.isdir(full):  # the templates are the library's (taskdsl match), not the memory's
            found += [f for f in files_under(full, ("**/*",), exclude, top=root)
                      if not any(r.match(relative(f, root)) for r in templates) and not _taskdsl_own(f)]
        elif os.path.isfile(full):
            found.append(full)
        else:
            raise ValueError(f"{given}: no such file or folder")
    chosen = []
    for full in dict.fromkeys(found):
        key = relative(full, root)
        if os.path.basename(full).startswith(".") or os.path.abspath(full) == os.path.abspath(index_file):
            continue
        if outside_reason(key, root) is not None:  # a link leading out of the project: never read
            continue
        chosen.append(key)
    return chosen


def index_command(args) -> int:
    from taskdsl.project import memory_index

    root, settings = _project()
    where = memory_index.index_path(root, settings)
    try:
        keys = files_to_index(root, settings, args.paths, where)
    except ValueError as e:
        _error(str(e))
        return 2
    if len(keys) > MAX_FILES:
        _error(f"{len(keys)} files: at most {MAX_FILES} are indexed at once; name folders to index (PATHS)")
        return 2
    if args.plan and not args.model:
        _error("--plan needs --model (without a model nothing runs)")
        return 2
    current = memory_index.load(where, root)
    blocking = [p for p in current.problems if p.is_error and p.code == memory_index.CODE_INVALID]
    if blocking:  # only what is not an object of strings blocks a refresh (a stale entry is what it drops)
        from taskdsl.language.document import Document

        shown = memory_index.relative(where, root)
        line, column = Document(current.text).position(blocking[0].span.start)
        more = f" (and {len(blocking) - 1} more: `taskdsl memory show` lists them)" if len(blocking) > 1 else ""
        _error(f"{shown} cannot be refreshed: {shown}:{line + 1}:{column + 1}: {blocking[0].code} "
               f"{blocking[0].message}{more}; correct it by hand, or delete {shown}, then run this again")
        return 1
    metadata = {key: memory_index.offline_metadata(os.path.join(root, key), root) for key in keys}
    if args.model:
        try:
            summaries = summarise(root, settings, keys, args)
        except SystemExit as stop:
            return int(stop.code)
        if summaries is None:  # --plan
            return 0
        metadata.update(summaries)
    entries = {key: value for key, value in current.entries.items() if os.path.isfile(os.path.join(root, key))}
    # what the load already dropped (a path outside the project) is removed from the file too
    dropped = sum(1 for p in current.problems if p.code == memory_index.CODE_OUTSIDE)
    removed = len(current.entries) - len(entries) + dropped
    added = sum(1 for key in metadata if key not in entries)
    entries.update(metadata)
    try:
        memory_index.save(where, root, entries)
    except (OSError, ValueError) as e:
        _error(f"cannot write {where}: {getattr(e, 'strerror', None) or e}")
        return 2
    if args.json:
        print(json.dumps({"index": where, "entries": {k: metadata[k] for k in metadata}}, ensure_ascii=False, indent=2))
    elif not args.quiet:
        print(f"wrote {memory_index.relative(where, root)}: {len(entries)} {'entry' if len(entries) == 1 else 'entries'} ({added} new, "
              f"{len(metadata) - added} refreshed, {removed} removed)", file=sys.stderr)
    return 0


def summary_task(keys: list[str]) -> str:
    """The task that summarises the files: a sequential of one atomic step per file, each reading
    its file through file_paths (confined as every run's reads)."""
    steps = []
    for key in keys:
        shown = escape(key)
        steps.append(f"""    <task type="atomic">
      <description>Summarise {shown} for the memory index</description>
      <instructions>{escape(SUMMARY_INSTRUCTIONS.format(path=key))}</instructions>
      <file_paths><path>{shown}</path></file_paths>
    </task>""")
    return ("<task type=\"sequential\" name=\"memory_index\">\n"
            "  <description>Summarise the project's files for the memory index</description>\n"
            "  <context_management><accumulate_data>false</accumulate_data></context_management>\n"
            "  <steps>\n" + "\n".join(steps) + "\n  </steps>\n</task>\n")


def summarise(root: str, settings, keys: list[str], args) -> dict[str, str] | None:
    """key → the model's one-line summary, through prepare and execute (None: --plan printed).
    A file that is empty or not text, or whose path holds {{ }} or a control character, keeps its
    offline metadata."""
    from taskdsl.cli.run import Progress, masked, print_plan, refused
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.plan import TemplateErrors, prepare
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import execute, project_index
    from taskdsl.project.workspace import read_source

    chosen = []
    for key in keys:
        try:
            source = read_source(os.path.join(root, key))
        except OSError:
            continue
        if not source.refused and source.text.strip() and key.isprintable() and "{{" not in key and "}}" not in key:
            chosen.append(key)
    if not chosen:
        return {}
    where = os.path.join(root, ".taskdsl-memory-index.task.xml")  # never written: the task's text is given
    config = HandlerConfig(model=settings.model or default_model())
    try:
        prepared = prepare(project_index(where, settings), where, text=summary_task(chosen), settings=settings)
    except (TemplateErrors, CompileError) as e:
        raise SystemExit(refused("memory index", where, e)) from None
    except TaskError as e:
        print(masked(f"taskdsl memory index: {e}"), file=sys.stderr)
        raise SystemExit(1) from None
    if args.plan:
        try:
            print_plan(prepared, config.model, args.model)
        except TaskError as e:  # a run the plan shows would be refused (an unusable memory matcher)
            print(masked(f"taskdsl memory index: {e}"), file=sys.stderr)
            raise SystemExit(1) from None
        return None
    found: dict[str, str] = {}
    progress = Progress(quiet=args.quiet)

    def collect(event: dict) -> None:
        progress(event)
        path = event.get("path", "")
        if event.get("event") == "end" and path.startswith("memory_index/steps[") and path.endswith("]"):
            number = int(path[len("memory_index/steps["):-1])
            found[chosen[number - 1]] = one_line(event["result"].content)

    try:
        asyncio.run(execute(prepared, model=args.model, on_event=collect, config=config, max_cost=args.max_cost))
    except TaskError as e:
        print(masked(f"taskdsl memory index: {e}"), file=sys.stderr)
        raise SystemExit(1) from None
    return {key: value for key, value in found.items() if value}


def one_line(answer: str) -> str:
    from taskdsl.project.memory_index import MAX_METADATA

    for line in answer.splitlines():
        line = line.strip().strip("`").strip().lstrip("-*# ").strip().strip('"').strip()
        if line:
            return line if len(line) <= MAX_METADATA else line[:MAX_METADATA - 1] + "…"
    return ""


# --------------------------------------------------------------------------- show


def show_command(args) -> int:
    from taskdsl.language.document import Document
    from taskdsl.project import memory_index

    root, settings = _project()
    where = memory_index.index_path(root, settings)
    index = memory_index.load(where, root)
    shown = memory_index.relative(where, root)
    if not index.exists:
        _error(f"no memory index at {shown}: write one with `taskdsl memory index`")
        return 1
    document = Document(index.text)
    problems = []
    for problem in index.problems:
        line, column = document.position(problem.span.start)
        problems.append({"line": line + 1, "column": column + 1, "severity": problem.severity.value,
                         "code": problem.code, "message": problem.message})
    if args.json:
        print(json.dumps({"index": where, "entries": index.entries, "problems": problems}, ensure_ascii=False,
                         indent=2))
    else:
        print(f"{shown}: {len(index.entries)} entries")
        for path, metadata in index.entries.items():
            print(f"  {path}: {metadata}")
        for p in problems:
            print(f"{shown}:{p['line']}:{p['column']}: {p['severity']} {p['code']} {p['message']}", file=sys.stderr)
    return 1 if any(p["severity"] == "error" for p in problems) else 0


# --------------------------------------------------------------------------- match


def match_command(args) -> int:
    from taskdsl.evaluator.memory import ContextGenerationInput, MemorySystem
    from taskdsl.evaluator.results import TaskError

    if not args.text.strip():
        _error("the text is empty: say in words what the task is about")
        return 2
    root, settings = _project()
    memory = MemorySystem.for_project(root, settings)
    request = ContextGenerationInput(args.text)
    try:
        found = asyncio.run(memory.get_relevant_context_for(request, _match_ctx(root, settings, args.model)
                                                             if memory.matcher == "model" else None))
    except TaskError as e:
        _error(e.message if e.reason == "memory_matcher" else f"the model matcher failed: {e}")
        return 1
    if not memory.exists:
        _error(f"no memory index at {memory.shown_path()}: write one with `taskdsl memory index`")
    if args.json:
        print(json.dumps({"matcher": found.matcher, "index": memory.index_path,
                          "matches": [{"path": p, "metadata": m} for p, m in found.matches],
                          "refused": found.refused}, ensure_ascii=False, indent=2))
        return 0
    for path, metadata in found.matches:
        print(f"{path}: {metadata}" if metadata else path)
    for refusal in found.refused:
        print(f"refused {refusal['path']}: {refusal['reason']}", file=sys.stderr)
    if memory.exists and not found.matches:  # an empty answer must not read as a silent failure
        print(f"no file of the memory index ({memory.shown_path()}) matches {args.text.strip()!r}", file=sys.stderr)
    return 0


def _match_ctx(root: str, settings, model: str | None):
    """The run state the model matcher runs in: the project's library (a project template with the
    key atomic:associative_matching is found there), the project's model unless --model."""
    from taskdsl.evaluator.ast import Ctx
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.plan import ProjectTaskLibrary
    from taskdsl.evaluator.runner import project_index, run_state
    from taskdsl.project import confine

    library = ProjectTaskLibrary(project_index(os.path.join(root, "memory-match"), settings))
    state = run_state(HandlerConfig(model=settings.model or default_model()), root=confine.project_root(root),
                      library=library, settings=settings, model=model,
                      allow_read=tuple(getattr(settings, "run_allow_read", ()) or ()))
    return Ctx(state, path="memory match")
