"""`taskdsl test --record` against a real (loopback OpenAI-compatible) model, then the replay of
what it wrote with the server gone: identical outputs and results, no credential in the file.
And isolation: outcomes are the same at concurrency 1 and 4 and in reversed order, on tests that
would interfere if replay answers or script scratch space were shared."""

import asyncio
import json
import os
import sys

from aiohttp import web

from taskdsl.authoring import testcases
from taskdsl.cli.main import main
from test_evaluator_models import SECRET, serve_chat_completions

LIB = """<library>
  <task name="judge">
    <description>Judge {{claim}}</description>
    <inputs><input name="claim"/></inputs>
    <model>openai/gpt-4o-mini</model>
    <output_format type="json"/>
  </task>
  <task name="echoed">
    <description>Say {{word}}</description>
    <inputs><input name="word"/></inputs>
    <model>taskdsl/echo</model>
  </task>
</library>
"""

TESTS = """<tests>
  <test name="green sky is false" task="judge">
    <input name="claim">the sky is green</input>
    <expect test="output.verdict == false"/>
  </test>
  <test name="wet water is true" task="judge">
    <input name="claim">water is wet</input>
    <expect test="output.verdict == true"/>
  </test>
  <test name="a wrong expectation" task="judge">
    <input name="claim">fire is cold</input>
    <expect test="output.verdict == true"/>
  </test>
  <test name="offline calls are not recorded" task="echoed">
    <input name="word">hi</input>
    <expect test='"Say hi" in output'/>
  </test>
</tests>
"""


async def judge_by_prompt(request):
    """Answers depend on the prompt only, so every test gets its own answer whatever the order."""
    body = await request.json()
    prompt = body["messages"][-1]["content"]
    verdict = "green" not in prompt and "cold" not in prompt
    return web.json_response({
        "id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps({"verdict": verdict})},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}})


async def taskdsl(folder, *argv, env=None):
    """The CLI in its own process (the loopback server keeps serving in this test's loop)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "taskdsl", *argv, cwd=folder, env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


async def record(folder, monkeypatch, tests: dict[str, str], *argv) -> tuple[int, str, str]:
    """Write the project, then `taskdsl test --record` against the loopback server, stopped after."""
    (folder / "taskdsl.toml").write_text("", encoding="utf-8")
    (folder / "lib.task.xml").write_text(LIB, encoding="utf-8")
    for name, text in tests.items():
        (folder / name).write_text(text, encoding="utf-8")
    monkeypatch.delenv("TASKDSL_MODEL", raising=False)
    server = await serve_chat_completions(judge_by_prompt, monkeypatch)
    try:
        return await taskdsl(folder, "test", "--record", *argv)
    finally:
        await server.cleanup()


async def test_record_then_replay_with_the_server_gone(tmp_path, monkeypatch):
    code, out, err = await record(tmp_path, monkeypatch, {"judge.test.xml": TESTS}, "--format", "json")
    assert code == 1, out + err
    assert "taskdsl test: recorded judge.replay.json" in err
    fixture = (tmp_path / "judge.replay.json").read_text(encoding="utf-8")
    assert json.loads(fixture) == {"answers": [
        {"test": "green sky is false", "contains": "Judge the sky is green", "answer": '{"verdict": false}'},
        {"test": "wet water is true", "contains": "Judge water is wet", "answer": '{"verdict": true}'},
        {"test": "a wrong expectation", "contains": "Judge fire is cold", "answer": '{"verdict": false}'}]}
    assert SECRET not in fixture and "Authorization" not in fixture and "127.0.0.1" not in fixture

    # the server is gone: a real call would fail; the replay answers every call
    replayed = await taskdsl(tmp_path, "test", "--format", "json")
    assert replayed[0] == 1, replayed[1] + replayed[2]
    first, second = json.loads(out), json.loads(replayed[1])
    assert first == second
    assert [(t["name"], t["status"], t["output"]) for t in second["tests"]] == [
        ("green sky is false", "passed", {"verdict": False}), ("wet water is true", "passed", {"verdict": True}),
        ("a wrong expectation", "failed", {"verdict": False}),
        ("offline calls are not recorded", "passed", "Say hi")]


async def test_recorded_prompts_mask_secret_values_of_the_environment(tmp_path, monkeypatch):
    code, out, err = await record(tmp_path, monkeypatch, {"leak.test.xml": f"""<tests><test name="leaks" task="judge">
  <input name="claim">{SECRET}</input><expect test="output.verdict == true"/></test></tests>"""})
    assert code == 0, out + err
    fixture = (tmp_path / "leak.replay.json").read_text(encoding="utf-8")
    assert SECRET not in fixture
    assert json.loads(fixture)["answers"][0]["contains"] == "Judge ***"


async def test_a_fixture_that_cannot_be_written_is_exit_2_with_the_reason(tmp_path, monkeypatch):
    (tmp_path / "judge.replay.json").mkdir()  # a folder where the fixture goes
    code, out, err = await record(tmp_path, monkeypatch, {"judge.test.xml": TESTS})
    assert code == 2, out + err
    assert "taskdsl test: cannot write the replay fixture judge.replay.json: Is a directory" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judge.replay.json", "judge.test.xml", "lib.task.xml",
                                                          "taskdsl.toml"]


async def test_recording_over_a_hand_written_fixture_keeps_it_as_bak_and_says_so(tmp_path, monkeypatch):
    hand_written = '{"answers": [\n  {"test": "green sky is false", "contains": "sky", "answer": "{\\"verdict\\": false}"}\n]}\n'
    (tmp_path / "judge.replay.json").write_text(hand_written, encoding="utf-8")
    code, out, err = await record(tmp_path, monkeypatch, {"judge.test.xml": TESTS})
    assert "taskdsl test: recorded judge.replay.json (the previous one kept as judge.replay.json.bak)" in err, err
    assert (tmp_path / "judge.replay.json.bak").read_text(encoding="utf-8") == hand_written
    recorded = (tmp_path / "judge.replay.json").read_text(encoding="utf-8")
    assert len(json.loads(recorded)["answers"]) == 3
    # recording the same answers again replaces nothing worth keeping: no backup, no notice
    (tmp_path / "judge.replay.json.bak").unlink()
    code, out, err = await record(tmp_path, monkeypatch, {"judge.test.xml": TESTS})
    assert "taskdsl test: recorded judge.replay.json\n" in err and ".bak" not in err
    assert not (tmp_path / "judge.replay.json.bak").exists()


# --------------------------------------------------------------------------- isolation

SCRIPTS = """<library>
  <task name="scratch" type="script">
    <description>Write a word to a scratch file, wait, read it back</description>
    <command>printf '%s' "$TASKDSL_INPUT_WORD" > "${TMPDIR:-/tmp}/taskdsl-scratch"; sleep 0.3; cat "${TMPDIR:-/tmp}/taskdsl-scratch"</command>
    <inputs><input name="word"/></inputs>
  </task>
  <task name="ask">
    <description>Is it true?</description>
    <model>openai/gpt-4o-mini</model>
  </task>
</library>
"""

ISOLATED = """<tests>
  <test name="scratch a" task="scratch"><input name="word">a</input><expect test='output == "a"'/></test>
  <test name="scratch b" task="scratch"><input name="word">b</input><expect test='output == "b"'/></test>
  <test name="scratch c" task="scratch"><input name="word">c</input><expect test='output == "c"'/></test>
  <test name="scratch d" task="scratch"><input name="word">d</input><expect test='output == "d"'/></test>
  <test name="asked first" task="ask"><expect test='output == "yes"'/></test>
  <test name="asked second" task="ask"><expect test='output == "no"'/></test>
</tests>
"""

# the same prompt in two tests: only matching answers to their own test keeps each right
FIXTURE = {"answers": [{"test": "asked second", "contains": "Is it true?", "answer": "no"},
                       {"test": "asked first", "contains": "Is it true?", "answer": "yes"}]}


def isolated_project(tmp_path):
    from taskdsl.cli import check as cli

    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text(SCRIPTS, encoding="utf-8")
    (tmp_path / "iso.test.xml").write_text(ISOLATED, encoding="utf-8")
    (tmp_path / "iso.replay.json").write_text(json.dumps(FIXTURE), encoding="utf-8")
    report = cli.Report()
    settings = cli.project_settings([str(tmp_path)], report)
    targets = cli.collect_files([str(tmp_path)], settings, report)
    index = cli.build_library(targets, settings)
    source = cli.read_source(str(tmp_path / "iso.test.xml"))
    document, _ = cli.check_source(source, index, settings)
    return testcases.test_cases(document, str(tmp_path / "iso.test.xml")), index, settings


def test_outcomes_are_the_same_at_concurrency_1_and_4_and_in_reverse(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cases, index, settings = isolated_project(tmp_path)

    def outcomes(order, concurrency):
        done = asyncio.run(testcases.run_cases([(c, index) for c in order], settings, concurrency=concurrency))
        return sorted((o.case.name, o.status, o.output, o.message) for o in done)

    one = outcomes(cases, 1)
    assert one == sorted([("scratch a", "passed", "a", ""), ("scratch b", "passed", "b", ""),
                          ("scratch c", "passed", "c", ""), ("scratch d", "passed", "d", ""),
                          ("asked first", "passed", "yes", ""), ("asked second", "passed", "no", "")])
    assert outcomes(cases, 4) == one
    assert outcomes(list(reversed(cases)), 4) == one
    assert [n for n in os.listdir(tmp_path) if "scratch" in n] == []


def test_the_cli_gives_the_same_outcomes_as_the_isolated_runs(tmp_path, monkeypatch, capsys):
    isolated_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["test"])
    out = capsys.readouterr().out
    assert (code, out.splitlines()[-1]) == (0, "6 passed, 0 failed"), out
