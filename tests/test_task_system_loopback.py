"""The task system's acceptance scenarios through the real command line (a subprocess) and a real
litellm model (gpt-4o-mini, whose window litellm knows) pointed at a loopback OpenAI-compatible
server that answers from a script (replay entries matched against each request's user prompt) and
records every request. Nothing here mocks litellm.

- `taskdsl ask` for a request no template fits: the model's first task has checker errors, the
  repair prompt carries their codes, the second checks, is saved and runs;
- a step whose input overflows the 128k window is re-planned into a reduce over parts, and no
  request larger than the window ever reaches the server; with <disable_reparsing> none at all;
- an XML output_format answer becomes fields; a broken one degrades to text with a note.
"""

import json
import os

import pytest

from evaluator_helpers import taskdsl_async, write
from taskdsl.evaluator.providers import load_litellm
from test_evaluator_models import openai_server  # noqa: F401 (the loopback OpenAI-compatible server)
from test_evaluator_outputs import XML_TASK
from test_replan import LOCKED, REDUCE, REPARSE, SUMMARY, TASK, proposing
from test_task_system import HAIKU, HAIKU_GOOD, haiku_replay, library  # noqa: F401 (the library fixture)

MODEL = "gpt-4o-mini"
WINDOW = 128_000  # gpt-4o-mini's input window in litellm's model map
USABLE = int(WINDOW * 0.9)  # the run keeps a tenth of the window for the answer


def sent_prompts(fake) -> list[str]:
    return [request["body"]["messages"][-1]["content"] for request in fake.requests]


# --------------------------------------------------------------------------- ask: the model writes one


async def test_ask_repairs_the_first_answer_saves_and_runs_the_second(library, openai_server):
    fake = await openai_server(script=haiku_replay())
    code, out, err = await taskdsl_async(library, "ask", "write a haiku about autumn leaves", "--model", MODEL,
                                         "--save", "haiku.task.xml", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["source"] == "model"
    first, second = report["attempts"]
    assert sorted({e["code"] for e in first["errors"]}) == ["TD101", "TD204"]
    assert second["errors"] == []
    assert (report["result"]["content"], report["result"]["status"]) == (HAIKU, "COMPLETE")
    written = HAIKU_GOOD.split("\n", 1)[1].rsplit("\n", 1)[0] + "\n"  # the answer without its code fence
    assert (library / "haiku.task.xml").read_text(encoding="utf-8") == written
    assert report["saved"] == str(library / "haiku.task.xml")

    assert [request["body"]["model"] for request in fake.requests] == [MODEL] * 3
    ask, repair, run = sent_prompts(fake)
    assert "Request: write a haiku about autumn leaves" in ask and "The checker found" not in ask
    found = repair.split("The checker found these errors in it:")[1]
    assert "TD101" in found and "TD204" in found  # the checker's codes go back with the first answer
    assert run == "Write a haiku (5, 7 and 5 syllables) about autumn leaves."  # the saved task's own prompt


# --------------------------------------------------------------------------- a step overflows the window

LINES = 2620  # per section: the three make the prompt a little over the usable window (≈115,400 tokens)
REPORT = "\n".join(f"SECTION {n}\n" + "".join(f"Line {i} of section {n}: the quarterly figures held steady.\n"
                                             for i in range(1, LINES + 1)) for n in (1, 2, 3))
SCRIPT = proposing(REDUCE)  # the replan example's answers: the reduce, then a summary per SECTION and the reductions


async def run_report(folder, task):
    (folder / "taskdsl.toml").write_text("", encoding="utf-8")
    (folder / "summarise_report.task.xml").write_text(task, encoding="utf-8")
    (folder / "inputs.json").write_text(json.dumps({"report": REPORT}), encoding="utf-8")
    code, out, err = await taskdsl_async(folder, "run", "summarise_report.task.xml", "--inputs", "inputs.json",
                                         "--model", MODEL, "--json")
    return code, json.loads(out), err


def request_tokens(request) -> int:
    return load_litellm().token_counter(model=MODEL, messages=request["body"]["messages"])


async def test_an_overflowing_step_is_replanned_into_a_reduce_and_completes(tmp_path, openai_server):
    fake = await openai_server(script=SCRIPT)
    code, report, err = await run_report(tmp_path, TASK)
    assert code == 0, err
    assert report["content"] == SUMMARY
    replanned = report["notes"]["replanned"]
    assert {k: v for k, v in replanned.items() if k not in ("template", "structure")} == {
        "task": "summarise_report", "error": "RESOURCE_EXHAUSTION", "reason": "context", "depth": 1, "model": MODEL}
    assert replanned["structure"].strip() == REDUCE.strip()
    assert replanned["template"].endswith(os.path.join("taskdsl", "templates", "reparse.task.xml"))

    prompts = sent_prompts(fake)
    assert len(prompts) == 7  # the structure asked for once, then a summary and a reduction per part
    # the reparse prompt names the parts the input was cut into (half the usable window each: 3 here)
    assert REPARSE in prompts[0] and "report_part3 (" in prompts[0] and "report_part4" not in prompts[0]
    parts = [p for p in prompts if p.startswith("Summarise this part of the report")]
    assert [[n for n in (1, 2, 3) if f"SECTION {n}\n" in p] for p in parts] == [[1], [2], [3]]  # cut at sections
    # the overflowing prompt was never sent: every request fits the usable window
    assert not any("Summarise this report in one line: SECTION 1" in p for p in prompts)
    sizes = [request_tokens(r) for r in fake.requests]
    assert max(sizes) <= USABLE
    assert load_litellm().token_counter(model=MODEL, messages=[
        {"role": "user", "content": f"Summarise this report in one line: {REPORT}"}]) > USABLE  # yet the whole would not


async def test_with_reparsing_disabled_the_overflow_stands_and_nothing_is_sent(tmp_path, openai_server):
    fake = await openai_server(script=SCRIPT)
    code, report, err = await run_report(tmp_path, LOCKED.format(lock="disable_reparsing"))
    assert code == 1, err  # the task failed
    error = report["error"]
    assert (error["type"], error["reason"]) == ("RESOURCE_EXHAUSTION", "context")
    assert error["details"]["not_replanned"] == ("the task or a task around it sets "
                                                 "<disable_reparsing>true</disable_reparsing>")
    assert error["details"]["metrics"]["limit"] == USABLE
    assert error["details"]["metrics"]["used"] > USABLE
    assert fake.requests == []


# --------------------------------------------------------------------------- xml output through the server


@pytest.mark.parametrize("answer, parsed, status, note", [
    ("<summary>Good <b>overall</b></summary>\n<score>4</score><issues><issue>typo</issue><issue>long</issue></issues>",
     {"summary": "Good overall", "score": "4", "issues": {"issue": ["typo", "long"]}}, "COMPLETE", None),
    ("<summary>unclosed <b>bold</summary>", None, "DEGRADED",
     "the answer is not well-formed XML (Opening and ending tag mismatch: b line 1 and summary); its whole text is "
     "the output"),
], ids=["fields", "broken"])
async def test_an_xml_answer_becomes_fields_or_degrades_with_a_note(tmp_path, openai_server, answer, parsed, status,
                                                                    note):
    fake = await openai_server(script=[{"contains": "Review the text", "answer": answer}])
    write(tmp_path, "review.task.xml", XML_TASK)
    code, out, err = await taskdsl_async(tmp_path, "run", "review.task.xml", "--model", MODEL, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["content"], report["parsed_content"]) == (answer, parsed)
    assert report["notes"].get("xml_error") == note
    assert [step["status"] for step in report["steps"]] == [status]
    assert len(fake.requests) == 1
