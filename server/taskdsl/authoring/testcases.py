"""Test files (`*.test.xml`): what each `<test>` asks, and running it through the one run path.

A test case is run as `taskdsl run` runs a file: `plan.prepare(index, path, task, inputs)` on the
file that defines the task under test (found by the same resolution as a `ref`: the project's
index), then `runner.execute`. Its `<expect test>` are evaluated by the cond language's safe
evaluator (`taskdsl.expr`) over the output: the parsed JSON when the task declares JSON output,
else the text. Model answers are hostile text: they only ever reach that evaluator.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from taskdsl import expr
from taskdsl.document import Document

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

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass
class Outcome:
    case: TestCase
    passed: bool
    message: str = ""  # why it failed
    output: Any = None  # what the run returned (text or parsed JSON), None when it failed


def test_cases(document: Document, file: str) -> list[TestCase]:
    """The `<test>` children of a `<tests>` root (a file that checks: every test has name and task)."""
    root = document.root
    if root is None or root.tag != "tests":
        return []
    cases = []
    for test in root.children_named("test"):
        error = test.child("expect_error")
        inputs = {i.get("name"): i.text.strip() for i in test.children_named("input") if i.get("name")}
        cases.append(TestCase(
            file=file, name=test.get("name") or "", task=(test.get("task") or "").strip(),
            line=document.position(test.span.start)[0] + 1, model=(test.get("model") or "").strip() or None,
            inputs=inputs, expects=tuple(e.get("test") or "" for e in test.children_named("expect")),
            expect_error=(error.get("type").strip(), (error.get("reason") or "").strip() or None)
            if error is not None and error.get("type") else None))
    return cases


def replay_fixture(test_file: str) -> str | None:
    """`name.replay.json` beside `name.test.xml`: recorded answers for the file's model calls."""
    base = test_file[: -len(".test.xml")] if test_file.endswith(".test.xml") else os.path.splitext(test_file)[0]
    path = base + REPLAY_SUFFIX
    return path if os.path.isfile(path) else None


def chosen_model(case: TestCase, override: str | None, fixture: str | None) -> str | None:
    """The model every atomic task of the case uses (None: each task's own, else the configured
    one). With a replay fixture, every model but an offline one is answered from the fixture."""
    from taskdsl.evaluator.providers import is_offline

    model = override or case.model
    if fixture and not (model and is_offline(model)):
        return "taskdsl/replay"
    return model


def preview(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def judge(case: TestCase, output: Any, error: Any) -> Outcome:
    """Pass or fail, with the reason a user needs to fix it. `error` is the run's TaskError."""
    if error is not None:
        if case.expect_error is None:
            return Outcome(case, False, f"the run failed: {error}")
        kind, reason = case.expect_error
        if error.type != kind or (reason is not None and error.reason != reason):
            wanted = kind + (f" ({reason})" if reason else "")
            return Outcome(case, False, f"expected a {wanted} error, the run failed with {error}")
        return Outcome(case, True)
    if case.expect_error is not None:
        kind, reason = case.expect_error
        wanted = kind + (f" ({reason})" if reason else "")
        return Outcome(case, False, f"expected a {wanted} error, the run succeeded with output {preview(output)}",
                       output)
    for test in case.expects:
        try:
            held = expr.holds(test, output)
        except (expr.ExprError, expr.ExprEvalError) as e:
            return Outcome(case, False, f"expect {test!r}: {e}; output: {preview(output)}", output)
        if not held:
            return Outcome(case, False, f"expect {test!r} does not hold; output: {preview(output)}", output)
    return Outcome(case, True, output=output)


async def run_case(case: TestCase, index, settings=None, model: str | None = None) -> Outcome:
    """Prepare and execute the task under test as a run would, then judge the result."""
    from taskdsl.evaluator.compiler import CompileError
    from taskdsl.evaluator.handler import HandlerConfig, default_model
    from taskdsl.evaluator.plan import TemplateErrors, UnreadableTemplate, prepare
    from taskdsl.evaluator.results import TaskError
    from taskdsl.evaluator.runner import execute

    definition = index.definition(case.task)
    if definition is None or definition.path is None:
        return Outcome(case, False, f"task '{case.task}' is not in the library")
    fixture = replay_fixture(case.file)
    try:
        prepared = prepare(index, definition.path, definition.name, dict(case.inputs), settings=settings)
        result = await execute(prepared, model=chosen_model(case, model, fixture),
                               config=HandlerConfig(model=settings.default_model if settings else default_model(),
                                                   replay_file=fixture))
    except TaskError as error:
        return judge(case, None, error)
    except TemplateErrors as e:
        first = e.diagnostics[0]
        return Outcome(case, False, f"{e.path} does not check ({len(e.diagnostics)} error(s)): {first.code} "
                                    f"{first.message}")
    except (CompileError, UnreadableTemplate) as e:
        return Outcome(case, False, f"{definition.path}: {e}")
    return judge(case, result.value, None)


async def run_cases(cases: list[tuple[TestCase, Any]], settings=None, model: str | None = None,
                    concurrency: int = CONCURRENCY) -> list[Outcome]:
    """Run (case, index) pairs side by side; outcomes in the cases' order."""
    gate = asyncio.Semaphore(concurrency)

    async def one(case: TestCase, index) -> Outcome:
        async with gate:
            return await run_case(case, index, settings, model)

    return list(await asyncio.gather(*(one(case, index) for case, index in cases)))
