"""`taskdsl test [PATH…] [-k PATTERN] [--model M] [--format text|json]`.

Finds the test files (`*.test.xml`) of the paths as `taskdsl check` finds templates, checks each
(a test file with errors is reported with its diagnostics, and its tests are not run), runs every
test through the run path (testcases.py) and prints one line per test and a summary.
Exit 0 when all pass, 1 when any fails, 2 when a test file does not check or a path is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from taskdsl.authoring import testcases


def add_test_parser(commands, checking) -> argparse.ArgumentParser:
    p = commands.add_parser("test", help="run the tests of *.test.xml files",
                            description="Run the tests written in *.test.xml files (default: the current folder's "
                                        "project). Each test runs its task as `taskdsl run` would and checks the result.")
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="test files or folders (default: .)")
    p.add_argument("-k", dest="pattern", metavar="PATTERN", help="only the tests whose name contains PATTERN")
    p.add_argument("--model", help="the model for every test (overrides the tests' model and the tasks' <model>)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.set_defaults(func=test_command, checking=checking)
    return p


def test_command(args) -> int:
    from taskdsl.run_cli import _print_diagnostics, masked, masked_json
    cli = args.checking  # taskdsl.cli: the files `check` would find, checked as `check` checks them
    report = cli.Report()
    settings = cli.project_settings(args.paths, report)  # the project's taskdsl.toml
    targets = cli.collect_files(args.paths, settings, report)
    files = [f for f in targets.files if f.endswith(".test.xml")]
    if not report.usage_errors and not files:
        report.usage_errors.append(f"no test files (*.test.xml) in {', '.join(args.paths)}")
    for problem in report.usage_errors:
        print(f"taskdsl test: {problem}", file=sys.stderr)
    index = cli.build_library(targets, settings)
    cases, broken = [], 0
    for path in files:
        source = cli.read_source(path)
        document, diagnostics = cli.check_source(source, index, settings)
        errors = [d for d in diagnostics if d.is_error]
        if errors:
            _print_diagnostics(path, errors, source.text)
            print(f"taskdsl test: {path} does not check ({len(errors)} error(s)); its tests were not run",
                  file=sys.stderr)
            broken += 1
            continue
        cases += [c for c in testcases.test_cases(document, path) if _selected(c, args.pattern)]
    outcomes = asyncio.run(testcases.run_cases([(case, index) for case in cases], settings, args.model)) \
        if cases and index is not None else []
    passed = sum(o.passed for o in outcomes)
    failed = len(outcomes) - passed
    if args.format == "json":
        print(masked_json({"passed": passed, "failed": failed, "broken_files": broken,
                           "tests": [_as_json(o) for o in outcomes]}))
    else:
        for outcome in outcomes:
            mark = "PASS" if outcome.passed else "FAIL"
            print(masked(f"{mark} {outcome.case.id}" + ("" if outcome.passed else f"\n     {outcome.message}")))
        summary = f"{passed} passed, {failed} failed"
        print(summary + (f", {broken} test file(s) do not check" if broken else ""))
    if broken or report.usage_errors:
        return 2
    return 1 if failed else 0


def _selected(case: testcases.TestCase, pattern: str | None) -> bool:
    return not pattern or pattern.lower() in case.name.lower()


def _as_json(outcome: testcases.Outcome) -> dict:
    case = outcome.case
    return {"file": os.path.normpath(case.file), "name": case.name, "line": case.line, "task": case.task,
            "passed": outcome.passed, "message": outcome.message or None}
