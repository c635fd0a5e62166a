"""Tests in the editor: `taskdsl.listTests` (every `<test>` of the project, for VS Code's Test
Explorer), "▶ Run test" lenses on each `<test>` of a `*.test.xml` file ("▶ Run all
tests" on `<tests>`), the server command `taskdsl.runTest` and its failures as diagnostics.

`taskdsl.runTest` takes `{uri, name?, wait?}` or `[uri, name?]` (no name: every test of the file;
`wait: false` answers `{"status": "RUNNING"}` at once and reports through diagnostics and the
log, the default for Emacs' eglot, which blocks on a command as on the Run task). It
runs the tests through the code `taskdsl test` runs (testcases.py) over the live index and open
buffers, each after the same consent as the editor's Run task (features/run.py `Runs.agree`: a
test that runs a script or calls a paid model asks first, the plan it runs is the plan agreed
to). A failing test gets an error diagnostic (source "taskdsl test") on the `<expect>` that did
not hold (or on its `<test>` when the run itself failed), published with the checker's
diagnostics of the file. A test's diagnostic is dropped when it passes again, and all of them
when the file changes (they belong to the version that ran).

Answers `{"passed", "failed", "errors", "not_run", "tests": [...as taskdsl test --format json]}`
or `{"error": {type, reason, message}}`; never raises.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field

from lsprotocol import types

from taskdsl.support.lazy import OnFirstUse

testcases = OnFirstUse("taskdsl.authoring.testcases")  # the evaluator: after initialize is answered

RUN_TEST_COMMAND = "taskdsl.runTest"
RUN_TEST_TITLE = "▶ Run test"
RUN_ALL_TITLE = "▶ Run all tests"
SOURCE = "taskdsl test"
log = logging.getLogger(__name__)


def test_code_lenses(document, uri: str, positions, path: str | None) -> list[types.CodeLens]:
    """A lens on the `<tests>` root's tag name and on each `<test>`'s."""
    cases = testcases.test_cases(document, path or uri)
    if not cases:
        return []
    lenses = [types.CodeLens(range=positions.range(document.root.name_span), command=types.Command(
        title=RUN_ALL_TITLE, command=RUN_TEST_COMMAND, arguments=[{"uri": uri}]))]
    for case in cases:
        if case.name and case.span is not None:
            lenses.append(types.CodeLens(range=positions.range(case.span), command=types.Command(
                title=RUN_TEST_TITLE, command=RUN_TEST_COMMAND, arguments=[{"uri": uri, "name": case.name}])))
    return lenses


@dataclass
class FileResults:
    version: int | None  # the document version the tests ran on
    by_test: dict[str, list[types.Diagnostic]] = field(default_factory=dict)


class TestResults:
    """The failures of the last test runs, per document: what `lsp_diagnostics` adds."""

    def __init__(self) -> None:
        self.files: dict[str, FileResults] = {}
        self.stamps = itertools.count(1)
        self.stamp: dict[str, int] = {}  # changes with every report: a pulled result id

    def diagnostics(self, uri: str, version: int | None) -> list[types.Diagnostic]:
        found = self.files.get(uri)
        if found is None or found.version != version:
            return []
        return [d for diagnostics in found.by_test.values() for d in diagnostics]

    def report(self, uri: str, version: int | None, outcomes: list[testcases.Outcome], positions) -> None:
        found = self.files.get(uri)
        if found is None or found.version != version:
            found = self.files[uri] = FileResults(version)
        for outcome in outcomes:
            found.by_test.pop(outcome.case.name, None)
            if not outcome.passed:
                found.by_test[outcome.case.name] = [failure_diagnostic(outcome, positions)]
        self.stamp[uri] = next(self.stamps)


def failure_diagnostic(outcome: testcases.Outcome, positions) -> types.Diagnostic:
    case = outcome.case
    where = case.expect_spans[outcome.expect] if outcome.expect is not None else case.span
    return types.Diagnostic(range=positions.range(where), message=f"test '{case.name}': {outcome.message}",
                            severity=types.DiagnosticSeverity.Error, source=SOURCE)


def test_diagnostics(server, analysis) -> list[types.Diagnostic]:
    """The test failures to publish with the checker's diagnostics of this version of the file."""
    results = getattr(server, "test_results", None)
    return results.diagnostics(analysis.uri, analysis.version) if results is not None else []


def result_stamp(server, uri: str) -> int:
    results = getattr(server, "test_results", None)
    return results.stamp.get(uri, 0) if results is not None else 0


def parse_arguments(args) -> tuple[str, str | None, bool | None]:
    args = list(args)
    spec = dict(args[0]) if len(args) == 1 and isinstance(args[0], dict) else dict(zip(("uri", "name"), args))
    uri, name, wait = spec.get("uri"), spec.get("name"), spec.get("wait")
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"{RUN_TEST_COMMAND} needs the test file's uri: {{\"uri\": …, \"name\"?: …}}")
    if name is not None and not (isinstance(name, str) and name):
        raise ValueError(f"{RUN_TEST_COMMAND}: name must be the name of a <test> (or absent for all)")
    if wait is not None and not isinstance(wait, bool):
        raise ValueError(f"{RUN_TEST_COMMAND}: wait must be true or false")
    return uri, name, wait


def register_tests(server, runs) -> TestResults:
    """Register taskdsl.runTest; `runs` (features.run.Runs) gives the index, buffers, settings and
    the consent question."""
    server.test_results = TestResults()
    detached: set[asyncio.Task] = set()  # runs answered at once (kept until they end)

    async def guarded(ls, uri: str, name: str | None) -> dict:
        try:
            return await run_test_command(ls, runs, uri, name)
        except Exception as error:  # a test run never takes the server down
            log.exception("taskdsl.runTest failed unexpectedly")
            return refused(f"the tests could not run: {error}", "internal")

    @server.command(RUN_TEST_COMMAND)
    async def run_test(ls, *args):
        try:
            uri, name, wait = parse_arguments(args)
        except ValueError as e:
            runs.show(str(e), types.MessageType.Error)
            return refused(str(e), "arguments")
        if why := runs.untrusted():
            runs.show(f"taskdsl: {why}", types.MessageType.Warning)
            return refused(why, "untrusted")
        if wait if wait is not None else runs.waits_by_default():
            return await guarded(ls, uri, name)
        task = asyncio.ensure_future(guarded(ls, uri, name))
        detached.add(task)
        task.add_done_callback(detached.discard)
        return {"status": "RUNNING"}

    @server.command(LIST_TESTS_COMMAND)
    def list_tests(ls, *args):
        try:
            return {"files": listed_tests(ls, runs, args)}
        except Exception as error:  # listing never takes the server down
            log.exception("taskdsl.listTests failed unexpectedly")
            return refused(f"the tests could not be listed: {error}", "internal")

    return server.test_results


# -- taskdsl.listTests: what VS Code's Test Explorer shows ------------------------------------------

LIST_TESTS_COMMAND = "taskdsl.listTests"
TEST_FILES = ("**/*.test.xml",)


def listed_tests(server, runs, args) -> list[dict]:
    """Every `<test>` of the project's `*.test.xml` files (discovered as `taskdsl test` finds them,
    open buffers as they are now), or of the one file `{"uri": …}` names:
    `[{uri, path, tests: [{name, task, line, range}]}]`, files in path order."""
    from dataclasses import replace

    from taskdsl.features.util import Positions, path_to_uri, uri_to_path
    from taskdsl.language.document import parse
    from taskdsl.project.workspace import discover

    spec = dict(args[0]) if len(args) == 1 and isinstance(args[0], dict) else {}
    if spec.get("uri") is not None:
        path = uri_to_path(str(spec["uri"]))
        paths = [path] if path else []
    else:
        settings = replace(runs.settings(), files=TEST_FILES)
        found = discover(server.roots(), settings)
        paths = sorted(p for p in found.project_files if p.endswith(".test.xml"))
    read = runs.reader()
    files = []
    for path in paths:
        try:
            text = read(path)
        except (OSError, ValueError):
            continue
        if text is None:
            continue
        document = parse(text)
        positions = Positions(document, server.codec())
        tests = [{"name": case.name, "task": case.task, "line": case.line,
                  "range": positions.range(case.span) if case.span is not None else None}
                 for case in testcases.test_cases(document, path) if case.name]
        if tests:
            files.append({"uri": path_to_uri(path), "path": path, "tests": tests})
    return files


def refused(message: str, reason: str) -> dict:
    from taskdsl.support.redaction import Redactor

    return {"error": {"type": "TASK_FAILURE", "reason": reason, "message": Redactor().text(message)}}


async def run_test_command(server, runs, uri: str, name: str | None) -> dict:
    from taskdsl.features.run_result import STATUS_FAILED
    from taskdsl.support.redaction import Redactor

    analysis = server.analysis(uri)
    if analysis.path is None:
        return refused(f"only files can be tested, not {uri}", "not_a_file")
    errors = [d for d in server.check(analysis).diagnostics if d.is_error]
    if errors:
        message = f"{analysis.path} does not check ({len(errors)} error(s)): fix it before running its tests"
        runs.show(f"taskdsl: {message}", types.MessageType.Error)
        return refused(message, "template_errors")
    cases = [c for c in testcases.test_cases(analysis.document, analysis.path) if name is None or c.name == name]
    if not cases:
        message = f"no test named '{name}' in {analysis.path}" if name else f"{analysis.path} has no tests"
        return refused(message, "no_test")
    index, settings = runs.index(), runs.settings()
    agreed, not_run, early = [], [], []
    for case in cases:
        prepared = await agreed_plan(runs, case, index, settings)
        if isinstance(prepared, testcases.Outcome):
            early.append(prepared)
        elif isinstance(prepared, dict):
            if prepared.get("status") == STATUS_FAILED:  # not prepared: the run's own error
                early.append(testcases.Outcome(case, testcases.ERROR, prepared["error"]["message"]))
            else:
                not_run.append(case.name)
        else:
            agreed.append((case, index, prepared))
    from taskdsl.task_system.replan import recover

    outcomes = early + await testcases.run_cases(agreed, settings, recover=recover)
    outcomes.sort(key=lambda o: o.case.line)
    if server.analysis(uri) is analysis:  # the file did not change while the tests ran
        server.test_results.report(uri, analysis.version, outcomes, analysis.positions)
        refresh(server, uri)
    count = {status: sum(o.status == status for o in outcomes) for status in
             (testcases.PASSED, testcases.FAILED, testcases.ERROR)}
    summary = f"{count['passed']} passed, {count['failed']} failed" + (
        f", {count['error']} error(s)" if count["error"] else "") + (f", {len(not_run)} not run" if not_run else "")
    runs.log(f"[tests] {analysis.path}: {summary}")
    return Redactor().mask({"passed": count["passed"], "failed": count["failed"], "errors": count["error"],
                            "not_run": not_run, "tests": [editor_outcome(o, analysis.positions) for o in outcomes]})


def editor_outcome(outcome, positions) -> dict:
    """An outcome as `taskdsl test --format json` gives it, plus what the Test Explorer shows of a
    failure: `expected` (the <expect> test that did not hold, or the error <expect_error> wanted)
    and `expect_range` (where it is written)."""
    found = testcases.outcome_json(outcome)
    case, index = outcome.case, outcome.expect
    if index is not None and 0 <= index < len(case.expect_spans):
        found["expect_range"] = positions.range(case.expect_spans[index])
        if index < len(case.expects):
            found["expected"] = case.expects[index]
        elif case.expect_error is not None:
            kind, reason = case.expect_error
            found["expected"] = f"a {kind} error" + (f" ({reason})" if reason else "")
    return found


async def agreed_plan(runs, case: testcases.TestCase, index, settings):
    """The plan of the case the user agreed to (plan.Prepared), an error Outcome when it cannot be
    prepared, or the refusal answer of the consent (declined)."""
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError

    def prepare():
        try:
            return testcases.prepare_case(case, index, settings, runs.reader())
        except (TaskError, TemplateErrors, testcases.NotInLibrary, CompileError, UnreadableTemplate) as error:
            return error

    def refuse(message: str, reason: str, status: str = "FAILED", **details) -> dict:
        runs.log(f"[tests] {case.name}: {message}")
        return {"status": status, "error": {"message": message, "reason": reason}}

    def prepare_again():
        found = prepare()
        return refuse(f"cannot run test '{case.name}': {found}", "prepare") if isinstance(found, Exception) else found

    prepared = prepare()
    if isinstance(prepared, Exception):
        return testcases.error_outcome(case, prepared, index)
    model = testcases.planned_model(case, None, prepared.replay and prepared.replay[0])  # the pinned fixture
    return await runs.agree(prepared, model, settings, prepare_again, refuse)


def refresh(server, uri: str) -> None:
    """Publish the file's diagnostics again (push), or ask a pulling client to pull them."""
    if getattr(server.state, "pull", False):
        workspace = server.client_capabilities.workspace
        if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            server.workspace_diagnostic_refresh(None)
        return
    server.publish(uri, None)
