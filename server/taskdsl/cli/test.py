"""`taskdsl test [PATH…] [-k PATTERN] [--model M] [--record] [--format text|json|junit] [--junit FILE]`.

Finds the test files (`*.test.xml`) of the paths as `taskdsl check` finds templates, checks each
(a test file with errors is reported with its diagnostics, and its tests are not run), runs every
test through the run path (testcases.py) and prints one line per test and a summary.
Exit 0 when all pass, 1 when any fails or errors, 2 when a test file does not check or a path is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass, field

from taskdsl.authoring import testcases

MARKS = {testcases.PASSED: "PASS", testcases.FAILED: "FAIL", testcases.ERROR: "ERROR"}
NOT_CHECKED = "the test file does not check"


def add_test_parser(commands, checking) -> argparse.ArgumentParser:
    p = commands.add_parser("test", help="run the tests of *.test.xml files",
                            description="Run the tests written in *.test.xml files (default: the current folder's "
                                        "project). Each test runs its task as `taskdsl run` would and checks the result.")
    p.add_argument("paths", nargs="*", default=None, metavar="PATH",
                   help="test files or folders (default: the current folder's project, found upward as `run` finds it)")
    p.add_argument("-k", dest="pattern", metavar="PATTERN", help="only the tests whose name contains PATTERN")
    p.add_argument("--model", action="append", default=None,
                   help="the model for every test (overrides the tests' model and the tasks' <model>); repeat it "
                        "(--model A --model B) to run every test under each and print a side-by-side table")
    p.add_argument("--repeat", type=_repeat, default=1, metavar="N",
                   help="run every test N times (times its repeat=\"…\"); it passes on its min_pass rate")
    p.add_argument("--record", action="store_true",
                   help="call the real models (no replay fixture) and write each test file's NAME.replay.json "
                        "from the calls")
    p.add_argument("--format", choices=("text", "json", "junit"), default="text", help="output format (default text)")
    p.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML to FILE")
    from taskdsl.cli.run import add_call_options

    add_call_options(p, cache_default="on")
    from taskdsl.cli.run import add_yes_option

    add_yes_option(p)
    p.set_defaults(func=test_command, checking=checking)
    return p


@dataclass
class Results:
    """A test session: the outcomes, the tests of files that do not check, and what went wrong."""

    outcomes: list[testcases.Outcome] = field(default_factory=list)
    skipped: list[testcases.TestCase] = field(default_factory=list)
    broken_files: int = 0
    usage_errors: list[str] = field(default_factory=list)
    columns: list = field(default_factory=list)  # authoring.matrix.Column per model, with --model A --model B / repeats

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        if self.broken_files or self.usage_errors:
            return 2
        return 0 if all(o.passed for o in self.outcomes) else 1


def run_tests(cli, paths: list[str], pattern: str | None = None, model=None,
              recorder: testcases.Recorder | None = None, call_options: dict | None = None, repeat: int = 1,
              agreed: bool = False) -> Results:
    """Check the test files of `paths` and run their tests (`cli`: the module whose discovery and
    per-file check `taskdsl check` uses)."""
    from taskdsl.cli.run import _print_diagnostics

    report = cli.Report()
    settings = cli.project_settings(paths, report)  # the project's taskdsl.toml
    if agreed:  # --yes: what the project's configuration widens applies (evaluator.plan.project_widening)
        from dataclasses import replace

        settings = replace(settings, run_agreed=True)
    answers: dict = {}  # a plan asked for once, whichever model and repeat runs it

    def ask(prepared, case_model: str | None) -> None:  # else, on a terminal, the question `taskdsl run` asks
        from taskdsl.cli.run import agree

        agree(prepared, None, settings.default_model, case_model, answers=answers)
    targets = cli.collect_files(paths, settings, report)
    files = [f for f in targets.files if f.endswith(".test.xml")]
    results = Results(usage_errors=report.usage_errors)
    if not report.usage_errors and not files:
        results.usage_errors.append(f"no test files (*.test.xml) in {', '.join(paths)}")
    for problem in results.usage_errors:
        print(f"taskdsl test: {problem}", file=sys.stderr)
    index = cli.build_library(targets, settings)
    cases, names = [], []
    for path in files:
        source = cli.read_source(path)
        document, diagnostics = cli.check_source(source, index, settings)
        found = testcases.test_cases(document, path)
        names += [c.name for c in found]
        selected = [c for c in found if _selected(c, pattern)]
        errors = [d for d in diagnostics if d.is_error]
        if errors:
            _print_diagnostics(path, errors, source.text)
            print(f"taskdsl test: {path} does not check ({len(errors)} error(s)); its tests were not run",
                  file=sys.stderr)
            results.broken_files += 1
            results.skipped += selected
            continue
        if diagnostics:  # a test file's warnings are about its tests (TD705: one that expects nothing)
            _print_diagnostics(path, diagnostics, source.text)
        cases += selected
    if pattern and names and not cases and not results.skipped:  # a filter that matches nothing is a mistake
        shown = ", ".join(sorted(set(names))[:10]) + (", …" if len(set(names)) > 10 else "")
        results.usage_errors.append(f"no test's name contains '{pattern}' (-k); the tests: {shown}")
        print(f"taskdsl test: {results.usage_errors[-1]}", file=sys.stderr)
    if cases and index is not None:
        from taskdsl.task_system.replan import recover

        models = model if isinstance(model, list) else [model]
        if len(models) > 1 or repeat > 1 or any(case.repeat > 1 for case in cases):
            from taskdsl.authoring import matrix

            results.columns = asyncio.run(matrix.run_matrix([(case, index) for case in cases], models, repeat,
                                                            settings=settings, recorder=recorder, recover=recover,
                                                            call_options=call_options, agree=ask))
            results.outcomes = [cell.outcome() for column in results.columns for cell in column.cells]
        else:
            results.outcomes = asyncio.run(testcases.run_cases([(case, index) for case in cases], settings, models[0],
                                                               recorder=recorder, recover=recover,
                                                               call_options=call_options, agree=ask))
    return results


def test_command(args) -> int:
    from taskdsl.cli.run import masked, masked_json

    recorder = testcases.Recorder() if args.record else None
    models = args.model or [None]
    if not args.paths:  # the current folder's project, from a folder inside it too
        from taskdsl.project.workspace import project_root

        root = project_root(os.getcwd())
        args.paths = ["." if os.path.samefile(root, os.getcwd()) else os.path.relpath(root)]
    results = run_tests(args.checking, args.paths, args.pattern, models if len(models) > 1 else models[0], recorder,
                        {"retries": getattr(args, "retries", None), "cache": getattr(args, "cache", None)},
                        repeat=getattr(args, "repeat", 1), agreed=getattr(args, "yes", False))
    shown = matrix_shown(results)
    inputs = tests_inputs(results)  # a test's input named like a secret is a secret of the whole report
    if args.format == "json":
        print(masked_json({"passed": results.count(testcases.PASSED), "failed": results.count(testcases.FAILED),
                           "errors": results.count(testcases.ERROR), "broken_files": results.broken_files,
                           "tests": [testcases.outcome_json(o) for o in results.outcomes],
                           **({"matrix": matrix_json(results)} if shown else {})}, inputs))
    elif args.format == "junit":
        sys.stdout.write(junit(results, inputs))
    else:
        for outcome, model in zip(results.outcomes, outcome_models(results)):
            label = f" [{model}]" if model else ""
            # a pass says how many runs passed when the test ran more than once (--repeat, repeat="N")
            said = (f": {outcome.message}" if outcome.message else "") if outcome.passed else f"\n     {outcome.message}"
            print(masked(f"{MARKS[outcome.status]} {outcome.case.id}{label}{said}", inputs))
        if shown:
            from taskdsl.authoring import matrix

            print(masked(matrix.table(results.columns), inputs))
        print(summary(results))
    if args.junit:
        try:
            from taskdsl.support.files import write_text

            write_text(args.junit, junit(results, inputs))  # 0600, renamed into place, never through a link
        except OSError as e:
            print(f"taskdsl test: cannot write --junit {args.junit}: {e.strerror}", file=sys.stderr)
            return 2
    if recorder is not None:
        try:
            for path, backup in recorder.write():
                kept = f" (the previous one kept as {os.path.normpath(backup)})" if backup else ""
                print(f"taskdsl test: recorded {os.path.normpath(path)}{kept}", file=sys.stderr)
        except OSError as e:
            print(f"taskdsl test: cannot write the replay fixture {e.filename2 or e.filename}: {e.strerror}", file=sys.stderr)
            return 2
    return results.exit_code


def summary(results: Results) -> str:
    parts = [f"{results.count(testcases.PASSED)} passed", f"{results.count(testcases.FAILED)} failed"]
    if errors := results.count(testcases.ERROR):
        parts.append(f"{errors} error{'s' if errors > 1 else ''}")
    if results.broken_files:
        parts.append(f"{results.broken_files} test file(s) do not check")
    return ", ".join(parts)


def tests_inputs(results: Results) -> dict:
    "Every test's inputs, each under its own key (the masking reads the names: values named like a secret)."
    return {f"{name}#{n}": value for n, outcome in enumerate(results.outcomes)
            for name, value in (outcome.case.inputs or {}).items()}


def junit(results: Results, inputs: dict | None = None) -> str:
    """A suite per test file; a test's classname is its file, its failure or error the message a
    text run prints, and the tests of a file that does not check skipped."""
    from taskdsl.support.junit import Case, Problem, Suite, junit_xml

    suites: dict[str, Suite] = {}
    for outcome, model in zip(results.outcomes, outcome_models(results)):
        case = outcome.case
        problem = None if outcome.passed else Problem(_first_line(outcome.message), outcome.message)
        suites.setdefault(case.file, Suite(case.file)).cases.append(Case(
            case.file, f"{case.name} [{model}]" if model else case.name, outcome.seconds, failure=problem if outcome.status == testcases.FAILED else None,
            error=problem if outcome.status == testcases.ERROR else None))
    for case in results.skipped:
        suites.setdefault(case.file, Suite(case.file)).cases.append(Case(case.file, case.name, skipped=NOT_CHECKED))
    from taskdsl.support.redaction import Redactor

    return junit_xml("taskdsl test", list(suites.values()), mask=Redactor().with_inputs(inputs).text)  # before escaping


def _repeat(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 1000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 1000, got {value!r}")
    return int(value)


def matrix_shown(results: Results) -> bool:
    "The side-by-side table is shown for more than one model."
    return len(results.columns) > 1


def outcome_models(results: Results) -> list:
    "The model of each outcome when several were compared (None otherwise)."
    if not matrix_shown(results):
        return [None] * len(results.outcomes)
    return [column.model for column in results.columns for _ in column.cells]


def matrix_json(results: Results) -> dict:
    from taskdsl.authoring import matrix

    return matrix.to_json(results.columns)


def _first_line(message: str) -> str:
    return message.split("; output:")[0]


def _selected(case: testcases.TestCase, pattern: str | None) -> bool:
    return not pattern or pattern.lower() in case.name.lower()
