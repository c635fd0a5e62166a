"""`taskdsl match TEXT` and `taskdsl ask TEXT`: the library against a request in plain words.

match  ranks the library's templates and tasks (taskdsl.task_system.matching). Exit 0 (also when nothing
       matches: the list is empty), 2 on a usage problem.
ask    uses a matching template or has a model write a task (taskdsl.task_system.ask), prints or saves it,
       and unless --dry-run runs it. Exit codes:
         0  the task checks (and, without --dry-run, ran to completion)
         1  the run failed, or the model call failed
         2  a usage problem (bad option, empty request, a --save path that cannot be written)
         3  no task: the model's answer is not XML (XML_PARSE_ERROR) or still has checker errors
            after the repair rounds (VALIDATION_ERROR); the last diagnostics are printed
         4  not run: the task runs shell commands and --allow-scripts was not given, reads files and
            --allow-reads was not given, or calls a model that may cost money other than the one chosen
With --replan N, a failed run sends the task and its failure back to the model for a different
task (checked, repaired, and run under the same consent), at most N times.
The library is the templates under --library (repeatable; default: the current folder) and
under TASKDSL_LIBRARY_PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from taskdsl.support.terminal import for_output, shown as escaped

SHOWN_DIAGNOSTICS = 10
MAX_REPLANS = 5
EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, EXIT_NO_TASK, EXIT_SCRIPTS_REFUSED = 0, 1, 2, 3, 4


def add_parsers(commands) -> None:
    match = commands.add_parser("match", help="rank the library's templates against a request in plain words",
                                description="List the templates and tasks of the library that fit a request, best first.")
    match.add_argument("text", metavar="TEXT", help="the request, in plain words")
    match.add_argument("--limit", type=_positive, default=5, metavar="N", help="at most N results (default 5)")
    match.add_argument("--json", action="store_true", help="print a JSON list of {name, score, kind, path, line, description}")
    _library_option(match)
    match.set_defaults(func=match_command)

    ask = commands.add_parser("ask", help="turn a request in plain words into a checked task, and run it",
                              description="Use the library template that fits the request, or have the model write "
                                          "a task; the task is checked (and repaired from the checker's diagnostics) "
                                          "before it is printed, saved or run.")
    ask.add_argument("text", metavar="TEXT", help="the request, in plain words")
    ask.add_argument("--model", help="the model that writes the task and runs it (default: TASKDSL_MODEL or taskdsl/echo)")
    ask.add_argument("--save", metavar="FILE", help="write the checked task to FILE (a .task.xml; an existing FILE "
                                                    "only with --force)")
    ask.add_argument("--force", action="store_true", help="let --save overwrite an existing FILE")
    ask.add_argument("--dry-run", action="store_true", help="print the checked task, do not run it")
    ask.add_argument("--json", action="store_true", help="print one JSON object: the task, how it was made, the result")
    ask.add_argument("--allow-scripts", action="store_true", help="run the task even if it runs shell commands")
    ask.add_argument("--allow-reads", action="store_true",
                     help="run the task even if it reads files (it sends them to the model)")
    from taskdsl.cli.run import add_yes_option

    add_yes_option(ask)
    ask.add_argument("--replan", type=_count, default=0, metavar="N",
                     help=f"when the run fails, have the model write a different task, at most N times (0-{MAX_REPLANS}; default 0)")
    ask.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    _library_option(ask)
    ask.set_defaults(func=ask_command)


def _library_option(parser) -> None:
    parser.add_argument("--library", action="append", default=[], metavar="PATH",
                        help="a folder or file of templates (repeatable; default: the current folder)")


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value!r}")
    return int(value)


def _count(value: str) -> int:
    if not value.isdigit() or int(value) > MAX_REPLANS:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {MAX_REPLANS}, got {value!r}")
    return int(value)


def library_roots(args) -> list[str]:
    from taskdsl.project.workspace import env_library_paths

    return [os.path.abspath(p) for p in (args.library or [os.getcwd()])] + [os.path.abspath(p) for p in env_library_paths()]


def request_library(command: str, args):
    """The library for a request, or None when the request or a --library is unusable (said on stderr)."""
    if not args.text.strip():
        _error(command, "the request is empty: say in words what the task should do")
        return None
    try:
        return load_library(args)
    except FileNotFoundError as e:
        _error(command, f"--library {e.args[0]}: no such file or folder")
        return None


def load_library(args):
    from taskdsl.library import Library

    missing = [p for p in args.library if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError(missing[0])
    return Library.from_paths(library_roots(args))


def _error(command: str, message: str) -> None:
    print(f"taskdsl {command}: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- match


def match_command(args) -> int:
    from taskdsl.task_system.matching import find_matching_tasks

    library = request_library("match", args)
    if library is None:
        return EXIT_USAGE
    matches = find_matching_tasks(library, args.text, args.limit)
    if args.json:
        print(json.dumps([m.to_json() for m in matches], ensure_ascii=False, indent=2))
        return EXIT_OK
    for match in matches:
        row = match.to_json()
        where = f"{os.path.relpath(row['path'])}:{row['line']}" if row["path"] else ""
        print(f"{row['score']:.2f}  {row['name']:<24} {row['kind']:<8} {where}")
    if not matches:
        print("no template of the library matches", file=sys.stderr)
    return EXIT_OK


# --------------------------------------------------------------------------- ask


def ask_command(args) -> int:
    from taskdsl.task_system import ask
    from taskdsl.evaluator.handler import default_model
    from taskdsl.evaluator.results import TaskError

    if args.save and os.path.isdir(args.save):
        _error("ask", f"--save {args.save}: is a folder; give a file name such as {os.path.join(args.save, 'task.task.xml')}")
        return EXIT_USAGE
    if args.save and os.path.lexists(args.save) and not args.force:  # asked before any model call
        _error("ask", f"--save {args.save}: the file exists; add --force to overwrite it, or save under another name")
        return EXIT_USAGE
    library = request_library("ask", args)
    if library is None:
        return EXIT_USAGE
    roots = library_roots(args)
    # the task is run where the user is (or where it is saved): its relative file paths, its project and
    # the folder its commands run in are those of a `taskdsl run` of the saved file, never --library's
    path = os.path.abspath(args.save) if args.save else os.path.join(os.getcwd(), "ask_request.task.xml")
    checked = _run_index(path, roots)  # what the run will check it with: checked here against the same
    model = args.model or default_model()
    report: dict = {"saved": None, "result": None, "error": None}
    try:
        answer = asyncio.run(ask.decompose(args.text, library, path, ask.handler_ask(model), **checked))
    except TaskError as error:
        if error.reason == "echo_cannot_write":
            _error("ask", error.message)
            return EXIT_USAGE
        if error.details.get("attempts"):  # every answer failed the check: say so round by round
            _say(args, _written_by(model, [a["errors"] for a in error.details["attempts"]]))
        return _failed(args, report, error, EXIT_NO_TASK if error.reason in ask.NO_TASK_REASONS else EXIT_RUN_FAILED)
    report["replans"] = []
    for replans_left in range(args.replan, -1, -1):
        report.update(answer.to_json())
        _say(args, _origin(answer, model))
        if args.save and (code := _save(args, report, answer, path)) is not None:
            return code
        if args.dry_run:
            return _finish(args, report, answer.xml)
        code, error = _consent_and_run(args, report, answer, path, model, tuple(roots))
        if error is None:
            return code
        refusal = ask.replan_refusal(answer, error) if replans_left else None
        if not replans_left or refusal:
            if refusal:
                _say(args, f"not re-planned: {refusal}")
            return _failed(args, report, error, EXIT_RUN_FAILED)
        _say(args, f"the run failed: {error}\nre-planning ({args.replan - replans_left + 1} of {args.replan})")
        report["replans"].append({"xml": answer.xml, "error": error.to_json()})
        try:
            answer = asyncio.run(ask.decompose(args.text, library, path, ask.handler_ask(model), failed=(answer.xml, error),
                                               **checked))
        except TaskError as failure:
            return _failed(args, report, failure, EXIT_NO_TASK if failure.reason in ask.NO_TASK_REASONS else EXIT_RUN_FAILED)
    raise AssertionError("unreachable: the last round returns")


def _run_index(path: str, roots: list[str]) -> dict:
    """The index and settings a run of the task at `path` checks it with (runner.prepare_file's, with the
    --library folders as its library paths), as decompose's keyword arguments."""
    from taskdsl.evaluator import runner
    from taskdsl.project.config import settings_for

    settings = runner.command_line_settings(settings_for(path)[0], library_paths=tuple(roots))
    return {"index": runner.project_index(path, settings), "settings": settings}


def _save(args, report: dict, answer, path: str) -> int | None:
    try:
        from taskdsl.support.files import write_text

        write_text(path, answer.xml)  # a model's answer: 0600, renamed into place, never through a link
    except OSError as e:
        _error("ask", f"--save {args.save}: {e.strerror or e}")
        return EXIT_USAGE
    report["saved"] = path
    _say(args, f"saved {args.save}")
    return None


def _consent_and_run(args, report: dict, answer, path: str, model: str, roots: tuple[str, ...]):
    """(exit code, None) when the task ran or was not allowed to; (None, TaskError) when it failed.
    The consent reads the commands of the prepared run, and exactly that run is executed; every
    task, re-planned ones too, runs shell commands only with --allow-scripts."""
    from taskdsl.evaluator import runner
    from taskdsl.cli.run import Progress

    try:
        prepared = runner.prepare_file(path, text=answer.xml, inputs=answer.inputs, library_paths=roots)
    except Exception as error:  # it does not prepare: it cannot run either (never run what was not inspected)
        return None, _as_task_error(error)
    from taskdsl.cli.run import agree
    from taskdsl.evaluator.handler import default_model

    agree(prepared, args, default_model(), args.model)  # --yes or the terminal's answer, else it refuses: not_agreed
    commands = list(prepared.commands)
    listed = "\n".join(f"  $ {escaped(' '.join(c.split())[:160])}" for c in commands)
    chosen = args.model or default_model()
    named = _unchosen_models(prepared, chosen, args.model)
    if named:  # a model the answer names: the user chose one model, not these (no option lets them)
        report["error"] = {"type": "VALIDATION_ERROR", "reason": "model_not_agreed", "models": named,
                           "message": f"the task calls models you did not choose ({', '.join(named)})"}
        if not args.json:
            print(for_output(answer.xml, sys.stdout), end="")
            _error("ask", f"not run: the task calls models you did not choose ({', '.join(named)}), which would "
                          "receive its prompts and may cost money; run again with --model M (every task then uses "
                          "M), or save it and run it with taskdsl run")
        else:
            print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        return EXIT_SCRIPTS_REFUSED, None
    from taskdsl.evaluator import consent

    view = consent.plan_view(prepared, default_model(), args.model)
    reads = [*view.files.paths, *view.files.unknown]
    read_lines = "\n".join(f"  {escaped(line)}" for line in consent.read_lines(view))
    # what the user has not allowed, said at once (not one refusal, then another after the first option):
    # (reason, the option that allows it, what the task does, its lines, the report's key and list)
    refused = []
    if commands and not args.allow_scripts:
        refused.append(("scripts_not_allowed", "--allow-scripts", "runs shell commands", listed, "commands", commands))
    if reads and not args.allow_reads:
        refused.append(("reads_not_allowed", "--allow-reads", "reads files (and sends them to the model)", read_lines,
                        "files", reads))
    if refused:
        options = " ".join(option for _, option, *_ in refused)
        report["error"] = {"type": "VALIDATION_ERROR", "reason": refused[0][0],
                           "reasons": [reason for reason, *_ in refused],
                           **{key: items for *_, key, items in refused},
                           "message": f"the task {' and '.join(what for _, _, what, *_ in refused)}: "
                                      f"{_to_run_it(args, options)}"}
        if not args.json:
            print(for_output(answer.xml, sys.stdout), end="")
            said = "\n".join(f"{'not run: the task' if n == 0 else 'and it'} {what}\n{lines}"
                             for n, (_, _, what, lines, *_) in enumerate(refused))
            _error("ask", f"{said}\n{_to_run_it(args, options)}")
        else:
            print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        return EXIT_SCRIPTS_REFUSED, None
    if commands:  # --allow-scripts runs this answer, which no one may have read: what it runs is said first
        _say(args, f"running the task's shell commands:\n{listed}")
    if reads:
        _say(args, f"reading (and sending to the model):\n{read_lines}")
    from taskdsl.task_system import replan

    try:
        result = asyncio.run(runner.execute(prepared, model=args.model, on_event=Progress(quiet=args.quiet or args.json),
                                            recover=replan.recover))
    except Exception as error:  # TaskError, CompileError: the run failed
        return None, _as_task_error(error)
    report["result"] = result.to_json()
    return _finish(args, report, result.content), None


def _to_run_it(args, option: str = "--allow-scripts") -> str:
    """How to run the task just shown, and not another: asking again asks the model again, and its
    next answer may be another task (what --allow-scripts or --allow-reads then runs unseen)."""
    if args.save:
        return (f"read {args.save}, then run that file with `taskdsl run {args.save}` (asking again with {option} "
                "runs the model's next answer, which may be another task)")
    return (f"to run this task and not another, save it (--save FILE), read it, then `taskdsl run FILE`; asking "
            f"again with {option} runs the model's next answer, which may be another task")


def _unchosen_models(prepared, chosen: str, override: str | None) -> list[str]:
    """The models the task's run calls, other than the one the user chose and taskdsl's offline ones."""
    from taskdsl.evaluator import cost
    from taskdsl.language.models import offline

    calls = cost.plan_calls(prepared.node, prepared.library, chosen, override)
    # free or not: a call sends the prompt (files included) to the model's provider, which the user did not choose
    return [name for name in dict.fromkeys(name for name, _ in calls) if name != chosen and not offline(name)]


def _origin(answer, model: str) -> str:
    if answer.source == "library":
        row = answer.match.to_json()
        return f"using template '{row['name']}' (score {row['score']:.2f}) from {os.path.relpath(row['path'])}:{row['line']}"
    return _written_by(model, [attempt.errors for attempt in answer.attempts])


def _written_by(model: str, attempts: list[list[dict]]) -> str:
    "What the model answered, round by round: each answer's checker errors, or that it checks."
    lines = [f"written by {model}"]
    for number, errors in enumerate(attempts, 1):
        codes = sorted({e["code"] for e in errors})
        then = "sent back for repair" if number < len(attempts) else "no repair rounds left"
        found = f"{len(errors)} checker error(s): {', '.join(codes)}; {then}" if codes else "checks"
        lines.append(f"  answer {number}: {found}")
    return "\n".join(lines)


def _as_task_error(error: Exception):
    from taskdsl.evaluator.results import TaskError

    if isinstance(error, TaskError):
        return error
    code = getattr(error, "code", None)
    message = getattr(error, "message", None) or str(error)
    return TaskError("TASK_FAILURE", f"{code + ' ' if code else ''}{message}", "not_runnable")


def _finish(args, report: dict, text: str) -> int:
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    else:
        text = for_output(text, sys.stdout)
        print(text, end="" if text.endswith("\n") else "\n")
    return EXIT_OK


def _failed(args, report: dict, error, code: int) -> int:
    report["error"] = error.to_json()
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        return code
    _error("ask", str(error))
    diagnostics = error.details.get("diagnostics", [])
    for d in diagnostics[:SHOWN_DIAGNOSTICS]:
        print(f"  line {d['line']}:{d['column']}: {d['code']} {d['message']}", file=sys.stderr)
    if len(diagnostics) > SHOWN_DIAGNOSTICS:
        print(f"  … and {len(diagnostics) - SHOWN_DIAGNOSTICS} more (see --json)", file=sys.stderr)
    return code


def _say(args, message: str) -> None:
    if not args.quiet and not args.json:
        print(message, file=sys.stderr)
