"""check and run agree: over every template of the repository and the upstream corpus, and over
hundreds of mutations of them, a run refuses a template exactly where the checker reports an error.

"run" is the run's own path up to the first thing that could act, with the checker's gate turned
off: `plan.prepare` compiles the entry and the files its references reach in the index, and
refuses names nothing binds, unknown or ambiguous targets and unbound params. Nothing is executed — no model call, no script — so the
corpus's commands can do no harm and the test stays fast. What a run may still fail on after that
point is decided by models, the network, scripts or the run's inputs, never by the template; the
runtime's environments (inheritance, last_output, isolation, reduce names) are tested through
`taskdsl run --model taskdsl/echo` in test_one_meaning.py.

The property: when the run refuses (a CompileError, or a TaskError the template decides), the
checker reports an error with the same code inside the refused element. A template the checker
accepts is therefore never refused. (The other direction holds by construction: `taskdsl run`
checks first and refuses on any error.) A disagreement fails and prints both sides.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from mutations import meaningful_mutations, mutated_templates
from paths import CORPUS
from taskdsl.rules.checker import check_text
from taskdsl.language.document import parse
from taskdsl.evaluator.compiler import CompileError, Compiler, refuse_malformed
from taskdsl.evaluator.plan import prepare
from taskdsl.evaluator.results import TaskError
from taskdsl.library import Library

ROOT = Path(__file__).resolve().parents[1]
SEEDS = sorted(ROOT.joinpath("examples").rglob("*.task.xml")) + sorted(ROOT.joinpath("tests", "fixtures").rglob("*.xml")) \
    + sorted(CORPUS.glob("*.xml"))
SEED_TEXTS = {str(path): path.read_text(encoding="utf-8-sig") for path in SEEDS}

#: what a user types half-way, plus the values where checking and running used to disagree
FRAGMENTS = ["<", '"', "{{", "}}", "{{x}}", "{{ last_output }}", "{{last_output}}", ' type=" sequential "',
             ' type="script"', ' type="reduce"', "<model>taskdsl/echoo</model>", "<model/>", "<model>taskdsl/echo</model>",
             "<context_management><inherit_context>none</inherit_context></context_management>",
             "<context_management><inherit_context>subset</inherit_context></context_management>",
             '<case test="output.a = = 1"><task><description>d</description></task></case>',
             '<case test="foo == 1"><task><description>d</description></task></case>',
             '<task ref="missing"/>', '<task ref="atomic:standard"/>', "<arg>x</arg>", ' params="a b"',
             '<input name="current_data"/>', '<input name="x" from="current_data"/>', "<steps>", "</steps>",
             '<cond><case test="output.ok"><task><description>c</description></task></case></cond>']

#: well-formed pieces and attribute values for the mutations that keep a template parseable
ELEMENTS = [f for f in FRAGMENTS if f.startswith("<") and f.endswith(">") and f != "<steps>" and f != "</steps>"] + [
    "<description>{{x}}</description>", "<description>{{last_output}}</description>",
    "<instructions>{{ current_data }}</instructions>", '<inputs><input name="a">1</input></inputs>',
    '<inputs><input name="p" from="last_output"/></inputs>', "<arg>last_output</arg>", '<arg name="zz">v</arg>',
    '<task type="script"><command>echo {{x}}</command></task>', "<command>true</command>",
    '<call template="summarize"><arg>t</arg></call>', "<model>gpt-4o-mini</model>", "<model> </model>",
    '<description>{{summarize("t")}} {{nofn(1)}}</description>', '<instructions>{{greet()}} {{ x }}</instructions>']
VALUES = ["atomic", " sequential ", "reduce", "script", "sequental", "none", "subset", "full", "true", "false", " true ",
          "x", "a b", "a, b", "a,,b", "last_output", "current_data", "output.ok == true", "output.a = = 1", "output.a ===",
          "(output.a", "len(output) > 0", "atomic:standard", "sequential:subtask", "json", "text", "literal", "command",
          "subtask", "standard", "summarize", "missing_task", "taskdsl/echo", ""]

#: TaskErrors raised before anything runs, by the code the checker reports for the same reason
TASK_ERROR_CODES = {"duplicate_task": "TD502", "unknown_task": "TD501", "ambiguous_task": "TD501", "arguments": "TD503"}


@lru_cache(maxsize=None)
def checker_library(folder: str) -> Library:
    """The index both sides use for a file of this folder, built once per folder."""
    return Library.from_paths([folder])


def refusal(path: str, text: str):
    """(code, element or None, message) when the run refuses the text, else None: `plan.prepare`
    with the checker's gate off, for the root entry or, in a library file, for each of its tasks."""
    try:
        document = parse(text)
        refuse_malformed(document, path)
        tasks = [None]
        if document.root.tag == "library":  # a library file runs one of its tasks (--task)
            tasks = [d.name for d in Compiler(path).definitions(document.root)] or [None]
        for task in tasks:
            prepare(checker_library(os.path.dirname(path)), path, task, {}, text=text, check=False)
    except CompileError as error:
        return error.code, error.element, error.message
    except TaskError as error:
        code = TASK_ERROR_CODES.get(error.reason)
        return (code, None, error.message) if code else None
    return None


def disagreement(path: str, text: str) -> str | None:
    refused = refusal(path, text)
    if refused is None:
        return None
    code, element, message = refused
    result = check_text(text, path=path, library=checker_library(os.path.dirname(path)))
    errors = result.errors if result.well_formed else result.diagnostics
    for diagnostic in errors:
        inside = element is None or element.start <= diagnostic.span.start <= diagnostic.span.end <= element.end
        if diagnostic.code == code and inside:
            return None
    where = f"<{element.tag}> at {result.document.position(element.start)}" if element is not None else "the file"
    found = "\n".join(f"  {d.code} {result.document.position(d.span.start)} {d.message}" for d in result.errors)
    return (f"{path}: run refuses {code} at {where}: {message}\n"
            f"checker errors:\n{found or '  none'}\n--- text ---\n{text}")


@pytest.mark.parametrize("path", sorted(SEED_TEXTS), ids=lambda p: os.path.basename(p))
def test_every_template_of_the_repository_and_the_corpus(path):
    problem = disagreement(path, SEED_TEXTS[path])
    assert problem is None, problem


SEED_LIST = sorted(SEED_TEXTS)
SEED_OF = {text: path for path, text in SEED_TEXTS.items()}


@settings(max_examples=520, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_templates([SEED_TEXTS[p] for p in SEED_LIST], FRAGMENTS, (1, 3)))
def test_mutations_of_them(text):
    # a mutation is checked and run as if it were the first seed with that folder: the library is the
    # same as the seed's (mutations of any seed are placed in the corpus folder, never written)
    path = SEED_OF.get(text) or str(CORPUS / "mutated.task.xml")
    problem = disagreement(path, text)
    assert problem is None, problem


@settings(max_examples=520, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(meaningful_mutations([SEED_TEXTS[p] for p in SEED_LIST], ELEMENTS, VALUES))
def test_meaningful_mutations_of_them(text):
    path = SEED_OF.get(text) or str(CORPUS / "mutated.task.xml")
    problem = disagreement(path, text)
    assert problem is None, problem
