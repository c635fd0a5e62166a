"""Test files (`*.test.xml`): what each `<test>` asks, and running it through the one run path.

A test case is run as `taskdsl run` runs a file: `plan.prepare(index, path, task, inputs)` on the
file that defines the task under test (found by the same resolution as a `ref`: the project's
index), then `runner.execute`. Its `<expect test>` are evaluated by the cond language's safe
evaluator (`taskdsl.language.cond`) over the output: the parsed JSON when the task declares JSON output,
else the text. Model answers are hostile text: they only ever reach that evaluator.

Isolation (tests run up to CONCURRENCY side by side, in any order, with the same outcomes):
each test is its own run (its own environment, memory index, trace and model handlers); replay
answers are matched by prompt within the test's own entries (a recorded entry names its test),
never by call order; every script of a test gets its own fresh TMPDIR, removed afterwards. Scripts
still run in their template's folder, as under `taskdsl run`: files they write there are shared.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from taskdsl.language import cond as expr
from taskdsl.language.document import Document, Span

REPLAY_SUFFIX = ".replay.json"
CONCURRENCY = 4  # tests run side by side, each its own run (own environment, trace and memory)


@dataclass(frozen=True)
class TestCase:
    """One `<test>` of a test file, as written."""

    file: str
    name: str
    task: str
    line: int  # 1-based, for reports
    model: str | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    expects: tuple[str, ...] = ()
    expect_error: tuple[str, str | None] | None = None  # (type, reason)
    span: Span | None = None  # the <test> tag's name (the editor's lens, an error's diagnostic)
    expect_spans: tuple[Span, ...] = ()  # each <expect>, in order; the <expect_error> last when there is one
    repeat: int = 1  # <test repeat="N">: runs of the test (authoring/matrix.py)
    min_pass: float = 1.0  # <test min_pass="0.8">: the share of them that must pass

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


PASSED, FAILED, ERROR = "passed", "failed", "error"


@dataclass
class Outcome:
    """passed; failed (an expect does not hold, or the run failed otherwise than expected); error
    (the run failed where the test expected an output, or the task could not be run at all)."""

    case: TestCase
    status: str
    message: str = ""  # why it did not pass
    output: Any = None  # what the run returned (text or parsed JSON), None when it failed
    expect: int | None = None  # which expect_spans entry failed
    seconds: float = 0.0
    usage: dict | None = None  # the run's notes.dataUsage (tokens, cost), when it has one

    @property
    def passed(self) -> bool:
        return self.status == PASSED


def test_cases(document: Document, file: str) -> list[TestCase]:
    """The `<test>` children of a `<tests>` root (a file that checks: every test has name and task)."""
    root = document.root
    if root is None or root.tag != "tests":
        return []
    cases = []
    for test in root.children_named("test"):
        error = test.child("expect_error")
        expects = test.children_named("expect")
        inputs = {i.get("name"): i.text.strip() for i in test.children_named("input") if i.get("name")}
        cases.append(TestCase(
            file=file, name=test.get("name") or "", task=(test.get("task") or "").strip(),
            line=document.position(test.span.start)[0] + 1, model=(test.get("model") or "").strip() or None,
            inputs=inputs, expects=tuple(e.get("test") or "" for e in expects),
            expect_error=(error.get("type").strip(), (error.get("reason") or "").strip() or None)
            if error is not None and error.get("type") else None,
            span=test.name_span, expect_spans=tuple(e.span for e in expects) + ((error.span,) if error is not None else ()),
            repeat=_number(test.get("repeat"), int, 1), min_pass=_number(test.get("min_pass"), float, 1.0)))
    return cases


def _number(text: str | None, kind, default):
    "An attribute's number (the grammar checked it: TD105), else the default."
    try:
        return kind((text or "").strip()) if text and text.strip() else default
    except ValueError:
        return default


def fixture_path(test_file: str) -> str:
    base = test_file[: -len(".test.xml")] if test_file.endswith(".test.xml") else os.path.splitext(test_file)[0]
    return base + REPLAY_SUFFIX


def planned_model(case: TestCase, override: str | None, fixture: str | None) -> str | None:
    """The model a plan of the case shows (the editor's consent): with a replay fixture every real
    model answers from it, so the plan's calls are offline."""
    from taskdsl.evaluator.providers import is_offline

    model = override or case.model
    return "taskdsl/replay" if fixture and not (model and is_offline(model)) else model


def preview(value: Any, limit: int = 200, inputs: dict | None = None) -> str:
    """The output as a quoted literal whose every character shows: a line break is \\n, a tab \\t
    (never folded into a space: an expect's text and the output must differ where they do). A
    parsed JSON output is shown as JSON. Every secret is masked in the value before it is encoded or
    escaped (taskdsl.support.redaction): a line break in a key shown as \\n would hide it from masking.
    `inputs`: the test's inputs, whose values named like a secret are secrets too."""
    from taskdsl.support.redaction import Redactor

    redactor = Redactor().with_inputs(inputs)
    value = redactor.mask(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return redactor.text(repr(text if len(text) <= limit else text[: limit - 1] + "…"))


def written(test: str) -> str:
    "An expect's test as written in the file, between quotes it does not hold (no escaping added)."
    quote = next((q for q in ("'", '"', "`") if q not in test), "'")
    return f"{quote}{test}{quote}"


def judge(case: TestCase, output: Any, error: Any) -> Outcome:
    """Pass or fail, with the reason a user needs to fix it. `error` is the run's TaskError."""
    last = len(case.expect_spans) - 1 if case.expect_spans else None  # the <expect_error>, when there is one
    if error is not None:
        if case.expect_error is None:
            return Outcome(case, ERROR, f"the run failed: {error}")
        kind, reason = case.expect_error
        if error.type != kind or (reason is not None and error.reason != reason):
            wanted = kind + (f" ({reason})" if reason else "")
            return Outcome(case, FAILED, f"expected a {wanted} error, the run failed with {error}", expect=last)
        return Outcome(case, PASSED)
    if case.expect_error is not None:
        kind, reason = case.expect_error
        wanted = kind + (f" ({reason})" if reason else "")
        return Outcome(case, FAILED, f"expected a {wanted} error, the run succeeded with output {preview(output, inputs=case.inputs)}",
                       output, expect=last)
    for number, test in enumerate(case.expects):
        try:
            held = expr.holds(test, output)
        except (expr.ExprError, expr.ExprEvalError) as e:
            return Outcome(case, FAILED, f"expect {written(test)}: {e}; output: {preview(output, inputs=case.inputs)}", output, number)
        if not held:
            hint = expr.why_not(test, output)
            return Outcome(case, FAILED, f"expect {written(test)} does not hold; output: {preview(output, inputs=case.inputs)}"
                           + (f" ({hint})" if hint else ""), output, number)
    return Outcome(case, PASSED, output=output)


class NotInLibrary(LookupError):
    pass


def prepare_case(case: TestCase, index, settings=None, read=None):
    """What a run of the task under test does (plan.Prepared), from the file that defines it;
    `read` gives other files' texts (the editor's buffers). Raises NotInLibrary, or what
    plan.prepare raises."""
    from taskdsl.evaluator.plan import disk_reader, prepare

    definition = index.definition(case.task)
    if definition is None or definition.path is None:
        raise NotInLibrary(f"task '{case.task}' is not in the library")
    text = read(definition.path) if read is not None else None
    prepared = prepare(index, definition.path, definition.name, dict(case.inputs), settings=settings, text=text,
                       read=read or disk_reader)
    prepared.replay, prepared.replay_refused = None, None
    if prepared.calls_models:
        try:
            prepared.replay = pinned_fixture(case.file)
        except OSError as error:  # there, but not read: the test must not quietly call its real model instead
            prepared.replay_refused = (f"{os.path.basename(fixture_path(case.file))} was not read: "
                                       f"{getattr(error, 'why', None) or error.strerror or error}")
    return prepared


def pinned_fixture(test_file: str) -> tuple[str, str] | None:
    """The replay fixture beside test_file as it is now, (path, text), read once: the plan holds it,
    its digest covers it, and the run answers from this copy (a fixture deleted or changed after the
    user agreed cannot turn the plan's offline calls into paid ones). None when there is none; OSError
    when there is one the reader refuses (a link out of the project, too large, not a file)."""
    from taskdsl.project.confine import project_root
    from taskdsl.support.reading import read_bytes

    path = fixture_path(test_file)
    try:  # inside the test's project, as every file a run reads: not a link to a file elsewhere
        data = read_bytes(path, 50_000_000, root=project_root(test_file))
    except FileNotFoundError:
        if os.path.lexists(path):  # a link to nothing
            raise
        return None
    return path, data.decode("utf-8", errors="replace")


async def run_case(case: TestCase, index, settings=None, model: str | None = None,
                   recorder: Recorder | None = None, prepared=None, recover=None,
                   call_options: dict | None = None, agree=None) -> Outcome:
    """Prepare (unless `prepared` is given: the plan the editor's user agreed to) and execute the
    task under test as a run would, then judge the result (timed). With a recorder, model calls
    go to the real model and are recorded (no replay fixture). `recover`: the re-planning hook
    (`runner.execute`), handed in by the command that runs the tests. `agree(prepared, model)`:
    the command's consent question for a plan the project's configuration widens (the command
    line's, on a terminal), asked before the run; without a yes the run path refuses it."""
    started = time.monotonic()
    outcome = await _run_case(case, index, settings, model, recorder, prepared, recover, call_options, agree)
    outcome.seconds = time.monotonic() - started
    return outcome


async def _run_case(case: TestCase, index, settings, model: str | None, recorder: Recorder | None,
                    prepared, recover, call_options: dict | None = None, agree=None) -> Outcome:
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import execute

    scratch = tempfile.mkdtemp(prefix="taskdsl-test-")
    hint = None  # why echo answered, once the case is prepared
    try:
        prepared = prepared or prepare_case(case, index, settings)
        if agree is not None:
            agree(prepared, model or case.model)
        # with a replay fixture every model but an offline one answers from it (the copy the plan pinned:
        # never looked for again); the case's model (or --model) wins over each task's <model>
        refused = None if recorder else getattr(prepared, "replay_refused", None)
        if refused:
            return Outcome(case, ERROR, f"{refused}: fix it or remove it (without it the test's model calls go to "
                                        "the models it names)")
        pinned = None if recorder else prepared.replay
        config = case_config(case, settings, pinned, recorder)
        from taskdsl.evaluator.calls import configure

        # the answer cache is on by default for tests (never while recording: that wants the real calls)
        config = configure(config, settings, default_cache=recorder is None, **(call_options or {}))
        chosen = model or case.model or (getattr(settings, "model", None) if settings else None) \
            or os.environ.get("TASKDSL_MODEL")  # echo by the user's choice: nothing to explain
        hint = None if recorder else echo_hint(case, prepared, config.model, chosen, pinned)
        result = await execute(prepared, model=model or case.model, config=config,
                               script_env={"TMPDIR": scratch}, recover=recover)
    except (TaskError, TemplateErrors, NotInLibrary, CompileError, UnreadableTemplate) as error:
        outcome = error_outcome(case, error, index)
        outcome.usage = (getattr(error, "details", None) or {}).get("dataUsage")
        if getattr(error, "reason", None) == "replay_fixture" and not os.path.exists(fixture_path(case.file)):
            return with_hint(outcome, f"a test's replay answers are {os.path.basename(fixture_path(case.file))} "
                                      f"beside {os.path.basename(case.file)}: write it there, or record it with "
                                      "`taskdsl test --record`")
        return with_hint(outcome, hint)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcome = judge(case, result.value, None)
    outcome.usage = result.notes.get("dataUsage")
    return with_hint(outcome, hint)


def echo_hint(case: TestCase, prepared, default: str, chosen: str | None, pinned) -> str | None:
    """Why a test's model calls were answered by taskdsl/echo, when nothing asked for it: no model named and no
    replay fixture beside the test file (a second test file of the same task has no fixture of its own)."""
    from taskdsl.evaluator import cost

    if chosen or pinned is not None or default != "taskdsl/echo":
        return None
    if not cost.plan_calls(prepared.node, prepared.library, default, None):
        return None  # no model is called: nothing was answered by echo
    fixture = os.path.basename(fixture_path(case.file))
    return (f"its model calls were answered by taskdsl/echo, which repeats its prompt: no {fixture} is beside "
            f"{os.path.basename(case.file)}; record one with `taskdsl test --record`, or name a model")


def with_hint(outcome: Outcome, hint: str | None) -> Outcome:
    if hint and not outcome.passed:
        outcome.message = f"{outcome.message} ({hint})"
    return outcome


def error_outcome(case: TestCase, error: Exception, index) -> Outcome:
    """The outcome of a case whose run (or its preparation) raised `error`."""
    from taskdsl.evaluator.plan import TemplateErrors
    from taskdsl.evaluator.results import TaskError

    if isinstance(error, TaskError):
        return judge(case, None, error)
    if isinstance(error, TemplateErrors):
        first = error.diagnostics[0]
        return Outcome(case, ERROR, f"{error.path} does not check ({len(error.diagnostics)} error(s)): {first.code} "
                                    f"{first.message}")
    if isinstance(error, NotInLibrary):
        return Outcome(case, ERROR, str(error))
    return Outcome(case, ERROR, f"{index.definition(case.task).path}: {error}")  # CompileError, UnreadableTemplate


def case_config(case: TestCase, settings, pinned: tuple[str, str] | None, recorder: "Recorder | None" = None):
    """The model configuration a test's task runs with (`taskdsl test`, the editor's tests, a debug
    session of a test). `pinned`: the replay fixture the plan holds, (path, text): the run answers
    from that copy, never looking for the file again. With it every model but one a task or the test
    names offline answers from it — the project's default model too when it is offline
    (taskdsl/echo): the fixture is what the user wants answered. The case's model (or --model) wins
    over each task's <model>."""
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.providers import is_offline

    default = (getattr(settings, "default_model", None) if settings else None) or default_model()
    if pinned is not None and is_offline(default):
        default = "taskdsl/replay"
    return HandlerConfig(model=default, replay_file=pinned[0] if pinned else None,
                         replay_text=pinned[1] if pinned else None, replay_scope=case.name,
                         replay_real_models=pinned is not None,
                         recorder=recorder.for_case(case) if recorder else None)


async def run_cases(cases: list[tuple], settings=None, model: str | None = None,
                    concurrency: int = CONCURRENCY, recorder: Recorder | None = None,
                    recover=None, call_options: dict | None = None, agree=None) -> list[Outcome]:
    """Run (case, index) or (case, index, prepared) tuples side by side; outcomes in the cases' order.
    `recover`, `agree`: the re-planning hook and the consent question (see `run_case`)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(case: TestCase, index, prepared=None) -> Outcome:
        async with gate:
            return await run_case(case, index, settings, model, recorder, prepared, recover, call_options, agree)

    return list(await asyncio.gather(*(one(*entry) for entry in cases)))


class Recorder:
    """`--record`: the real model calls of each test, kept per test (tests run side by side), then
    written as each test file's replay fixture. Only prompts and answers are kept, with the
    environment's secret values masked: never a key, a header or a base URL."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, int], tuple[TestCase, list[tuple[str, str]]]] = {}

    def for_case(self, case: TestCase):
        _, calls = self.calls.setdefault((case.file, case.line), (case, []))

        def record(prompt: str, answer: str) -> None:
            if all(prompt != seen for seen, _ in calls):  # replay answers a prompt with its first answer
                calls.append((prompt, answer))

        return record

    def fixtures(self) -> dict[str, dict]:
        """{fixture path: its JSON} for every test file with a recorded call, tests in file order."""
        from taskdsl.support.redaction import Redactor

        mask = Redactor().text
        files: dict[str, list[dict]] = {}
        for key in sorted(self.calls):
            case, calls = self.calls[key]
            entries = files.setdefault(case.file, [])
            entries += [{"test": case.name, "contains": mask(prompt), "answer": mask(answer)} for prompt, answer in calls]
        return {fixture_path(file): {"answers": entries} for file, entries in files.items() if entries}

    def write(self) -> list[tuple[str, str | None]]:
        """(fixture path, the backup of the fixture it replaced or None) for each fixture written. A
        fixture already there with other content (a hand-written one, an older recording) is kept
        as NAME.replay.json.bak first (an older .bak is replaced)."""
        from taskdsl.project.workspace import project_root
        from taskdsl.support.files import write_bytes, write_text

        written = []
        for path, data in self.fixtures().items():  # a fresh temporary file renamed over it: never a link followed
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            old = _old_bytes(path)
            backup = None
            if old is not None and old != text.encode("utf-8"):
                backup = path + ".bak"
                write_bytes(backup, old, root=project_root(path))  # byte for byte what was there
            # inside the test file's project, reached from its root without following a link
            write_text(path, text, root=project_root(path))
            written.append((path, backup))
        return written


def _old_bytes(path: str) -> bytes | None:
    "The bytes of a regular file at path inside its project (the one reader), None when there is none."
    from taskdsl.project.workspace import project_root
    from taskdsl.support.reading import ReadRefused, read_bytes

    try:
        return read_bytes(path, 64 * 1024 * 1024, root=project_root(path))
    except (OSError, ReadRefused):
        return None


def outcome_json(outcome: Outcome) -> dict:
    """One outcome as `taskdsl test --json` and the editor's taskdsl.runTest give it."""
    case = outcome.case
    return {"file": os.path.normpath(case.file), "name": case.name, "line": case.line, "task": case.task,
            "status": outcome.status, "passed": outcome.passed, "message": outcome.message or None,
            "output": outcome.output}
