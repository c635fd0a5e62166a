"""`taskdsl run FILE [--task NAME] [--input k=v]… [--inputs F.json] [--model M] [--trace F] [--json]`.

Progress per step on stderr, the final output on stdout (or a JSON object with --json).
Exit 0 on success, 1 when the task fails, 2 when the template does not check or cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from taskdsl.support import jsontext
from taskdsl.project.config import run_defaults
from taskdsl.support import reading

#: refusals about how the command was called, not about the run: exit 2 like a bad argument
USAGE_REASONS = ("no_entry", "unknown_entry", "unknown_input", "unknown_model", "missing_credentials", "replay_fixture",
                 "not_agreed", "plan_changed")
DEFAULT_TIMEOUT = 3600.0  # seconds a command-line run may take unless --timeout or [run] timeout says


def add_run_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("run", help="run a template (offline with --model taskdsl/echo)",
                              description="Run a task template and print its output.")
    p.add_argument("file", help="the template file (*.task.xml)")
    p.add_argument("--task", help="a named task or template of a library file (default: the root task)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="bind an input or param (repeatable)")
    p.add_argument("--inputs", metavar="FILE.json", help="a JSON object of inputs (--input wins over it)")
    p.add_argument("--global", dest="globals", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a global (repeatable; over the project's [globals] in taskdsl.toml)")
    p.add_argument("--model", help="the model for every atomic task (overrides <model> and TASKDSL_MODEL)")
    p.add_argument("--trace", metavar="FILE", help="write a JSON-lines trace of the run")
    p.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")
    p.add_argument("--plan", "--dry-run", action="store_true", dest="plan",
                   help="print what the run would do (commands, models and cost, files, inputs) and run nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--allow-read", action="append", default=[], metavar="PATH",
                   help="let file_paths read this folder (or file) outside the project (repeatable)")
    p.add_argument("--max-cost", type=_non_negative, metavar="USD",
                   help="stop when model calls would cost more (estimated before the run, enforced during it)")
    p.add_argument("--timeout", type=_non_negative, default=None, metavar="SECONDS",
                   help="stop the whole run after this long (default 3600; 0: no limit)")
    add_call_options(p, cache_default="off")
    add_yes_option(p)
    add_agree_option(p)
    p.add_argument("--otel", action="store_true", help="export OpenTelemetry spans over OTLP/HTTP (also on when "
                   "OTEL_EXPORTER_OTLP_ENDPOINT is set; needs taskdsl[otel])")
    p.set_defaults(func=run_command)
    return p


def add_call_options(p, cache_default: str) -> None:
    "--retries and --cache/--no-cache (run and test)."
    p.add_argument("--retries", type=_retries, default=None, metavar="N",
                   help="retry a model call that failed with 429, a timeout, a connection error or a 5xx up to N "
                        "times (default 3, or [run] retries; 0: never)")
    p.add_argument("--cache", action=argparse.BooleanOptionalAction, default=None,
                   help=f"reuse answers cached for the same request; --no-cache always calls (default {cache_default}, "
                        "or [run] cache)")


def add_yes_option(p) -> None:
    "--yes (run, test, ask): agree to what the project's own configuration widens."
    p.add_argument("--yes", "-y", action="store_true",
                   help="agree to what the project's taskdsl.toml widens ([run] allow_read and library_paths outside "
                        "the project; see --plan) without being asked")


def add_agree_option(p) -> None:
    "--agree DIGEST (run): --yes for exactly the plan --plan printed."
    p.add_argument("--agree", metavar="DIGEST", type=_digest,
                   help="run only the plan whose digest --plan printed (its 'Plan …' line, 32 or more hex digits), "
                        "agreeing to it as --yes does; a plan that changed since is refused, naming both digests")


def _digest(value: str) -> str:
    from taskdsl.evaluator.consent import PLAN_DIGITS

    digest = value.strip().lower()
    if len(digest) < PLAN_DIGITS or len(digest) > 64 or any(c not in "0123456789abcdef" for c in digest):
        raise argparse.ArgumentTypeError(f"expected the plan's digest as --plan prints it on its Plan line "
                                         f"({PLAN_DIGITS} to 64 hex digits), got {value!r}")
    return digest


def check_agreed_plan(prepared, args, default_model: str, model: str | None, data=None) -> None:
    """--agree DIGEST: the run goes on only when its plan is the one reviewed (plan_changed otherwise,
    naming both digests); then it is agreed to, as --yes agrees."""
    agreed = getattr(args, "agree", None)
    if not agreed:
        return
    from taskdsl.evaluator import consent
    from taskdsl.evaluator.results import TaskError

    digest = consent.plan_view(prepared, default_model, model, data=data).digest
    if not digest.startswith(agreed):
        raise TaskError("VALIDATION_ERROR", f"the plan is {digest[:consent.PLAN_DIGITS]}, not the {agreed} you "
                        "agreed to with --agree: "
                        "the template, its inputs, models, files or configuration changed since --plan printed it; "
                        "run --plan again to review the new plan", "plan_changed",
                        {"agreed": agreed, "plan": digest})
    prepared.agreed = True


def agree(prepared, args, default_model: str, model: str | None, stdin=None, stderr=None,
          answers: dict | None = None) -> None:
    """The command line's one consent question (run, test, ask): the user's yes to what the project's
    configuration widens (plan.project_widening): --yes, or on a terminal the plan shown on stderr and
    the answer read. Without it the run refuses (not_agreed). `answers`: digest → the answer already
    given, so one plan is asked for once (a test run under several models, repeated).
    --agree DIGEST first: a plan other than the one reviewed is refused (plan_changed)."""
    check_agreed_plan(prepared, args, default_model, model)
    if not prepared.widened or prepared.agreed:
        return
    if getattr(args, "yes", False):
        prepared.agreed = True
        return
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    if not (stdin.isatty() and stderr.isatty()):
        return  # nobody to ask: the run refuses and says how to agree
    from taskdsl.evaluator import consent

    view = consent.plan_view(prepared, default_model, model)
    if answers is not None and view.digest in answers:
        prepared.agreed = answers[view.digest]
        prepared.declined = not prepared.agreed
        return
    stderr.write(masked(consent.render_plan(view, consent.reasons(view, allow_scripts=True))) + "\nRun it? [y/N] ")
    stderr.flush()
    prepared.agreed = stdin.readline().strip().lower() in ("y", "yes")
    prepared.declined = not prepared.agreed
    if answers is not None:
        answers[view.digest] = prepared.agreed


def _retries(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 100, got {value!r}")
    return number


def _non_negative(value: str) -> float:
    "A number ≥ 0 (a price in dollars, a time in seconds)."
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number ≥ 0, got {value!r}")
    return number


MAX_INPUTS_BYTES = 50_000_000  # --inputs FILE.json


def parse_inputs(pairs: list[str], inputs_file: str | None) -> dict:
    inputs: dict = {}
    if inputs_file:
        try:
            data = jsontext.loads(reading.read_bytes(inputs_file, MAX_INPUTS_BYTES).decode("utf-8"))
        except reading.ReadRefused as e:
            raise ValueError(f"--inputs {e}: give a regular JSON file") from None
        except FileNotFoundError:
            raise ValueError(f"--inputs {inputs_file}: no such file") from None
        except OSError as e:
            raise ValueError(f"--inputs {inputs_file}: {e.strerror or e}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"--inputs {inputs_file}: not a JSON object of inputs ({e})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{inputs_file}: expected a JSON object of inputs")
        inputs.update(data)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--input {pair!r}: expected NAME=VALUE")
        inputs[name.strip()] = value
    return inputs


class Progress:
    """One line per finished step on stderr, indented by depth; every step is recorded (the
    editor's StepRecorder) for --json."""

    def __init__(self, stream=None, quiet: bool = False):
        from taskdsl.features.run_result import StepRecorder

        self.stream, self.quiet, self.recorder = stream, quiet, StepRecorder()

    def __call__(self, event: dict) -> None:
        from taskdsl.features.run_result import MARKS, STATUS_DEGRADED

        if event["event"] == "note":  # e.g. a cond case that did not hold by a likely mistake
            from taskdsl.support.terminal import shown

            self.recorder.on_event(event)
            if not self.quiet:
                print(f"{'  ' * event['path'].count('/')}! {event['path'] or 'cond'}: {shown(event['message'])}",
                      file=self.stream or sys.stderr, flush=True)
            return
        if event["event"] == "replan" and not self.quiet:  # the step's line follows when the structure is done
            print(f"{'  ' * event['path'].count('/')}↻ {event['path']}: {event['error']}, re-planned (level "
                  f"{event['depth']}): {replan_summary(event['structure'])}", file=self.stream or sys.stderr, flush=True)
        step = self.recorder.on_event(event)
        if step is None or event["event"] == "begin" or self.quiet:
            return
        depth = step.path.count("/")
        shown = step.error and step.status == STATUS_DEGRADED  # a failure's cause: once, in the command's last line
        detail = f" — {step.error['message']}" if shown else ""
        print(f"{'  ' * depth}{MARKS.get(step.status, '•')} {step.path} ({step.kind}, {step.duration_s:.2f}s){detail}",
              file=self.stream or sys.stderr, flush=True)

    def report(self) -> dict:
        "What --json adds to the result or the error: every step in order, the whole run's totals."
        self.recorder.cancel_open()
        return {"steps": self.recorder.summary(), "totals": self.recorder.totals()}


def _print_diagnostics(path: str, diagnostics: list, text: str) -> None:
    from taskdsl.language.document import parse

    doc = parse(text)
    for d in diagnostics:
        span = getattr(d, "span", None)
        line, col = doc.position(span.start) if span is not None else (0, 0)
        severity = getattr(getattr(d, "severity", None), "value", "error")
        print(f"{path}:{line + 1}:{col + 1}: {severity} {d.code} {d.message}", file=sys.stderr)


def _shown_path(path: str, file: str, entry: str) -> str:
    "The entry as the user wrote it; another file relative to the current folder when inside it."
    import os

    if os.path.abspath(path) == os.path.abspath(entry) and os.path.abspath(file) == os.path.abspath(entry):
        return file
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def refused(command: str, file: str, error: Exception, as_json: bool = False) -> int:
    """Say why the file cannot be prepared (missing, unreadable, does not check, does not
    compile); exit code 2. Shared by the commands that prepare a run (run, render). With
    `as_json`, stdout also gets the error as JSON ({"error": …}), as every other failure of --json."""
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate

    lines: list[str] = []
    details: dict = {}
    if isinstance(error, FileNotFoundError):
        import os

        missing = str(error.filename or file)
        shown = file if os.path.abspath(missing) == os.path.abspath(file) else missing
        folder = os.path.dirname(os.path.abspath(missing))
        if not os.path.isdir(folder):  # a file to write (--trace) whose folder is missing
            message = f"{shown}: no such folder {os.path.dirname(shown) or folder}: create it first"
        else:
            message = f"{shown}: no such file"
        reason = "not_a_file"
    elif isinstance(error, UnreadableTemplate):
        message, reason = f"{file}: {error.reason}", "not_a_file"
    elif isinstance(error, OSError):
        message, reason = f"{error.filename or file}: {error.strerror or error}", "not_a_file"
    elif isinstance(error, TemplateErrors):
        import os

        lines = error.located(lambda path: _shown_path(path, file, error.path))
        details["diagnostics"] = lines
        entry = os.path.abspath(file)
        where = "" if all(os.path.abspath(p) == entry for p, _, _ in error.files) else " or a file it reaches"
        message, reason = f"{file}{where} does not check ({len(error.diagnostics)} error(s)); fix them first", \
            "template_errors"
    elif isinstance(error, CompileError):
        message, reason = f"{file}: {error.code} {error.message}", error.code
    else:
        raise error
    for line in lines:
        print(line, file=sys.stderr)
    print(f"taskdsl {command}: {message}", file=sys.stderr)
    if as_json:
        print(masked_json({"error": {"type": "VALIDATION_ERROR", "reason": reason, "message": message,
                                     "details": details}}))
    return 2


def usage_error(command: str, message: str, as_json: bool = False) -> int:
    "A bad argument found after parsing (an --input, --inputs, the config): exit 2, as JSON too with --json."
    print(f"taskdsl {command}: {message}", file=sys.stderr)
    if as_json:
        print(masked_json({"error": {"type": "VALIDATION_ERROR", "reason": "arguments", "message": message,
                                     "details": {}}}))
    return 2


def _preload_models(model: str | None, quiet: bool) -> None:
    """A real model needs litellm (~2 s to import): start importing it now, while the run is
    checked. A run that reaches a model before it is done says "loading litellm…" (not with -q)."""
    from taskdsl.evaluator import providers
    from taskdsl.evaluator.handler import default_model

    if quiet:
        providers.wait_reporter = None
    if not providers.is_offline(model or default_model()):
        providers.preload_litellm()


def batch_only_options(args) -> list[str]:
    """The options of a batch run given (they mean nothing without --data: never silently ignored)."""
    given = [("--out", getattr(args, "out", None)), ("--resume", getattr(args, "resume", False)),
             ("--ignore-extra-columns", getattr(args, "ignore_extra_columns", False)),
             ("--jobs", getattr(args, "jobs", None) is not None), ("--fail-fast", getattr(args, "fail_fast", False)),
             ("--executor", getattr(args, "executor", "local") not in (None, "local"))]
    return [option for option, on in given if on]


def run_command(args) -> int:
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.calls import configure
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.runner import execute, prepare_file
    from taskdsl.task_system.replan import recover

    try:
        inputs = parse_inputs(args.input, args.inputs)
        global_values, project, config = run_defaults(args.file, args.globals)
    except (OSError, ValueError) as e:
        return usage_error("run", str(e), args.json)
    if getattr(args, "yes", False) or getattr(args, "agree", None):  # what the project's configuration widens
        # applies (plan.project_widening); --agree: once the plan is checked to be the one reviewed
        from dataclasses import replace

        project = replace(project, run_agreed=True)
    if getattr(args, "data", None) or batch_only_options(args):
        batch_command = args.batch_command  # cli/batch.py, set by cli/main.py (batch imports this module)
        if not args.plan:
            _preload_models(args.model or project.model, args.quiet)
        return batch_command(args, project, config, global_values, inputs)
    progress = Progress(quiet=args.quiet)
    spans, problem = span_export(args)
    if problem is not None:
        return problem
    if spans is not None:
        progress = chained(progress, spans)
    if not args.plan:
        _preload_models(args.model or project.model, args.quiet)

    async def main():
        if args.plan:
            from taskdsl.evaluator.preflight import preflight
            from taskdsl.evaluator.runner import planned_models

            planned = prepare_file(args.file, args.task, inputs, settings=project, allow_read=tuple(args.allow_read),
                                   global_values=global_values)
            default = project.model or default_model()
            # a plan the run would refuse at once (a model name no provider knows) is refused as the run is
            await preflight(planned_models(planned, default, args.model)(), HandlerConfig(model=default),
                            names_only=True)
            return print_plan(planned, default, args.model,
                              cache=bool(configure(HandlerConfig(), project, cache=args.cache).cache), as_json=args.json)
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):  # cancel cleanly: scripts' process groups die too
            loop.add_signal_handler(sig, task.cancel)
        prepared = prepare_file(args.file, args.task, inputs, settings=project, allow_read=tuple(args.allow_read),
                                global_values=global_values)
        agree(prepared, args, project.model or default_model(), args.model)
        return await execute(prepared, model=args.model, trace=args.trace, on_event=progress, recover=recover,
                             config=configure(HandlerConfig(model=project.model or default_model()), project,
                                              retries=args.retries, cache=args.cache),
                             max_cost=args.max_cost if args.max_cost is not None else project.run_max_cost,
                             timeout=(args.timeout if args.timeout is not None
                                      else config.get("run", "timeout", default=DEFAULT_TIMEOUT)) or None)

    secrets_of = {**global_values, **inputs}  # the values named like a secret, --global ones too, are masked
    try:
        result = asyncio.run(main())
        if spans is not None:
            spans.close()
    except (OSError, UnreadableTemplate, TemplateErrors, CompileError) as e:
        return refused("run", args.file, e, args.json)
    except TaskError as e:
        if spans is not None:
            spans.close()
        if args.json:
            print(masked_json({"error": e.to_json(), **progress.report()}, secrets_of))
        from taskdsl.support.terminal import shown

        # the message may quote a script's stderr or a model's words: what a terminal would act on is shown escaped
        print(shown(masked(f"taskdsl run: {e}", secrets_of)), file=sys.stderr)
        if why := not_replanned(e):
            print(shown(masked(f"  not re-planned: {why}", secrets_of)), file=sys.stderr)
        partial = e.details.get("partial_results")
        if partial:
            print(f"  partial results of {len(partial)} earlier step(s) (see --json)", file=sys.stderr)
        return 2 if e.reason in USAGE_REASONS else 1
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("taskdsl run: cancelled", file=sys.stderr)
        return 130
    if args.plan:
        return 0
    if args.json:
        print(masked_json({**result.to_json(), **progress.report()}, secrets_of))
    else:
        from taskdsl.support.terminal import for_output

        print(for_output(masked(result.content, secrets_of), sys.stdout))
    return 0


def span_export(args):
    """(the OpenTelemetry span export of the run or None, an exit code when it cannot start):
    on with --otel or OTEL_EXPORTER_OTLP_ENDPOINT (evaluator/otel.py)."""
    from taskdsl.evaluator import otel

    if args.plan or not otel.wanted(getattr(args, "otel", False)):
        return None, None
    try:
        return otel.SpanExport(), None
    except otel.OtelUnavailable as e:
        print(f"taskdsl run: {e}", file=sys.stderr)
        return None, (2 if args.otel else None)


class chained:
    "An on_event that tells the progress, then the span export (report() is the progress's)."

    def __init__(self, progress, spans):
        self.progress, self.spans = progress, spans

    def __call__(self, event: dict) -> None:
        self.progress(event)
        self.spans(event)

    def report(self) -> dict:
        return self.progress.report()


def replan_summary(structure: str) -> str:
    "One line for a re-planned structure: its root's type and description."
    from taskdsl.language.document import parse
    from taskdsl.meaning.model import task_type

    root = parse(structure).root
    if root is None:
        return "a new structure"
    described = root.child("description")
    what = f" — {' '.join(described.text.split())[:80]}" if described is not None else ""
    return f"a {task_type(root) or root.tag} task{what} (see --json)"


def not_replanned(error) -> str | None:
    "Why the failed step (the innermost error) was not re-planned, when re-planning was considered."
    details = error.details
    while details is not None:
        if details.get("not_replanned"):
            return str(details["not_replanned"])
        inner = details.get("error")
        details = inner.get("details") if isinstance(inner, dict) else None
    return None


def print_plan(prepared, default_model: str, model: str | None, cache: bool = False, data=None,
               as_json: bool = False) -> None:
    """--plan: the plan the editor's run question shows, printed; nothing runs. With --json, as `taskdsl
    debug --plan` gives it: {"reasons": […], "plan": the text, "digest": what --agree takes}."""
    from taskdsl.evaluator import consent
    from taskdsl.evaluator.runner import refuse_unusable_matcher

    refuse_unusable_matcher(prepared, default_model, model)  # a run the plan shows would be refused
    view = consent.plan_view(prepared, default_model, model, cache=cache, data=data)
    text = masked(consent.render_plan(view))
    if as_json:
        print(json.dumps({"reasons": consent.reasons(view), "plan": text,
                          "digest": view.digest[:consent.PLAN_DIGITS]}, ensure_ascii=False))
    else:
        print(text)


def masked(text: str, inputs: dict | None = None) -> str:
    """What the command prints, with every secret value masked (taskdsl.support.redaction): the
    environment's, and the value of each of the run's `inputs` named like a secret."""
    from taskdsl.support.redaction import Redactor

    return Redactor().with_inputs(inputs).text(text)


def masked_json(value, inputs: dict | None = None) -> str:
    """value as indented JSON, every secret masked in it before it is encoded (its strings, keys and
    numbers: the JSON stays valid) and in the text."""
    from taskdsl.support.redaction import Redactor

    return Redactor().with_inputs(inputs).json(value, ensure_ascii=False, indent=2, default=str)


def main(argv=None) -> int:
    "Stand-alone entry (the project's cli.py wires add_run_parser into `taskdsl`)."
    parser = argparse.ArgumentParser(prog="taskdsl")
    add_run_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
