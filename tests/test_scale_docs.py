"""docs/scale.md's worked example, run as written: its files are written, its commands run through
the real command line against the loopback OpenAI-compatible server (tests/loopback_openai.py),
and what the page shows is what they print."""

import json
import re
import shlex
from pathlib import Path

from evaluator_helpers import taskdsl_async
from loopback_openai import loopback  # noqa: F401 (the fixture)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "scale.md"
BLOCK = re.compile(r"<!-- (file|command|output)(?:: ?([^>]*?))? ?-->\n```\w*\n(.*?)```", re.S)


def blocks():
    return [(kind, name.strip(), text) for kind, name, text in BLOCK.findall(PAGE.read_text(encoding="utf-8"))]


def classify(model, prompt):
    return "positive" if "love" in prompt else "negative"


async def test_the_worked_example_does_what_the_page_shows(tmp_path, loopback):
    fake = await loopback(answer=classify, usage=(48, 2))  # the usage gpt-4o-mini reports for these prompts, about
    found = blocks()
    for kind, name, text in found:
        if kind == "file":
            (tmp_path / name).write_text(text, encoding="utf-8")
    commands = [text.strip() for kind, _, text in found if kind == "command"]
    shown = {name: text for kind, name, text in found if kind == "output"}
    assert len(commands) == 2 and set(shown) == {"plan", "first result", "summary"}

    plan_command, batch_command = (shlex.split(c)[1:] for c in commands)
    code, out, err = await taskdsl_async(tmp_path, *plan_command)
    assert code == 0, err
    # the whole output, its last line too: the digest (which covers the folder's paths) is the only
    # part that may differ, and the page must show it (cutting the "Plan …" line off before comparing
    # let the page leave it out)
    digest = re.compile(r"^Plan [0-9a-f]{32}$", re.M)
    assert digest.search(shown["plan"]), "the page's plan must end with its Plan <digest> line"
    assert digest.sub("Plan <digest>", out) == digest.sub("Plan <digest>", shown["plan"])

    code, out, err = await taskdsl_async(tmp_path, *batch_command)
    assert code == 0, err
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    first = next(r for r in results if r["row"] == 1)
    assert {k: v for k, v in first.items() if k != "notes"} == json.loads(shown["first result"])
    assert sorted((r["row"], r["content"]) for r in results) == [(1, "positive"), (2, "negative"), (3, "positive")]
    summary = err.strip().splitlines()[-1]
    assert re.sub(r"in [\d.]+ s$", "in 1.2 s", summary) == shown["summary"].strip()
    assert fake.count() == 3

    # again with --resume: nothing is redone; without it, the results file is refused
    code, out, err = await taskdsl_async(tmp_path, *batch_command, "--resume")
    assert code == 0 and fake.count() == 3 and "3 already done" in err
    code, out, err = await taskdsl_async(tmp_path, *batch_command)
    assert code == 2 and "already holds results: --resume to finish it, or remove it" in err
