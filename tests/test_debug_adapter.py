"""`taskdsl debug` driven over stdio by a Debug Adapter Protocol client: breakpoints on task
lines, stepping through steps and refs, frames, variables (masked), the prompt and the answer of
an atomic step, evaluate of cond expressions, the consent a launch needs, the result as output."""

from __future__ import annotations

import os

import pytest

from dap_client import DapClient

PIPELINE = """<task name="pipeline" type="sequential">
  <inputs>
    <input name="word">hello</input>
  </inputs>
  <steps>
    <task>
      <description>{"n": 3, "word": "{{word}}"}</description>
      <output_format type="json"/>
    </task>
    <task ref="shout">
      <inputs><input name="text" from="word"/></inputs>
    </task>
    <cond>
      <case test="output.n > 2"><task><description>big {{last_output}}</description></task></case>
      <default><task><description>small</description></task></default>
    </cond>
  </steps>
</task>
"""
LIB = """<library>
  <template name="shout" params="text">
    <task>
      <description>{"n": 5, "said": "{{text}}"}</description>
      <output_format type="json"/>
    </task>
  </template>
</library>
"""
SCRIPT = """<task name="listing" type="script">
  <command>echo listed</command>
</task>
"""


def line_of(text: str, needle: str, n: int = 1) -> int:
    """1-based line of the n-th occurrence."""
    at = -1
    for _ in range(n):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "pipeline.task.xml").write_text(PIPELINE, encoding="utf-8")
    (tmp_path / "lib.task.xml").write_text(LIB, encoding="utf-8")
    (tmp_path / "listing.task.xml").write_text(SCRIPT, encoding="utf-8")
    return tmp_path


@pytest.fixture
def dap(project):
    client = DapClient(cwd=str(project))
    yield client
    client.close()


def launch_args(project, **more) -> dict:
    return {"program": str(project / "pipeline.task.xml"), "model": "taskdsl/echo", **more}


def test_breakpoint_step_into_ref_evaluate_and_continue(dap, project):
    main, lib = str(project / "pipeline.task.xml"), str(project / "lib.task.xml")
    second = line_of(PIPELINE, '<task ref="shout">')
    assert dap.start(launch_args(project), {main: [second]})["success"]
    assert dap.placed[main]["breakpoints"][0] == {"id": 1, "verified": True, "line": second, "source": {"path": main}}

    stopped = dap.event("stopped")["body"]
    assert (stopped["reason"], stopped["hitBreakpointIds"]) == ("breakpoint", [1])
    frames = dap.stack()
    assert [(f["name"], f["line"]) for f in frames] == [("ref shout", second), ("pipeline (sequential)", 1)]
    assert frames[0]["source"]["path"] == main
    local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
    # last_output holds the first step's output (parsed JSON): expandable, field by field
    assert local["last_output"]["value"] == '{"n": 3, "word": "hello"}'
    fields = dap.variables(local["last_output"]["variablesReference"])
    assert (fields["n"]["value"], fields["word"]["value"]) == ("3", '"hello"')
    assert local["text"]["value"] == '"hello"' and local["word"]["value"] == '"hello"'

    # evaluate a cond expression in this frame: output is the output the frame would test
    answer = dap.request("evaluate", {"expression": "output.n > 2", "frameId": frames[0]["id"], "context": "repl"})
    assert answer["body"]["result"] == "true"
    assert dap.request("evaluate", {"expression": "output.word == \"bye\"", "frameId": frames[0]["id"]})["body"]["result"] == "false"
    bad = dap.request("evaluate", {"expression": "output.n >", "frameId": frames[0]["id"]}, ok=False)
    assert not bad["success"] and "is not a cond expression" in bad["message"]

    # step into the ref: the template's frame, in the library file, sees only its params
    dap.request("stepIn", {"threadId": 1})
    assert dap.event("stopped")["body"]["reason"] == "step"
    frames = dap.stack()
    assert frames[0]["name"] == "shout (atomic)"
    assert (frames[0]["source"]["path"], frames[0]["line"]) == (lib, line_of(LIB, "<task>"))
    assert [f["name"] for f in frames[1:]] == ["ref shout", "pipeline (sequential)"]
    scopes = dap.scopes(frames[0]["id"])
    assert set(dap.variables(scopes["Locals"])) == {"text"}
    step = dap.variables(scopes["Step"])
    assert step["model"]["value"] == '"taskdsl/echo"'
    prompt = dap.variables(step["prompt"]["variablesReference"])
    assert prompt["user"]["value"] == '"{\\"n\\": 5, \\"said\\": \\"hello\\"}"'

    # step over it: the same frame after its answer arrived
    dap.request("next", {"threadId": 1})
    dap.event("stopped")
    frames = dap.stack()
    assert frames[0]["name"] == "shout (atomic)"
    step = dap.variables(dap.scopes(frames[0]["id"])["Step"])
    assert step["answer"]["value"] == '"{\\"n\\": 5, \\"said\\": \\"hello\\"}"'
    assert step["output"]["value"] == '{"n": 5, "said": "hello"}'
    assert dap.request("evaluate", {"expression": "output.n", "frameId": frames[0]["id"]})["body"]["result"] == "5"

    dap.request("continue", {"threadId": 1})
    assert dap.event("exited")["body"]["exitCode"] == 0
    dap.event("terminated")
    assert dap.outputs("stdout") == 'big {"n": 5, "said": "hello"}\n'


def test_stop_on_entry_step_over_and_out(dap, project):
    assert dap.start(launch_args(project, stopOnEntry=True))["success"]
    assert dap.event("stopped")["body"]["reason"] == "entry"
    assert [f["name"] for f in dap.stack()] == ["pipeline (sequential)"]
    dap.request("stepIn", {"threadId": 1})
    dap.event("stopped")
    assert [f["name"] for f in dap.stack()] == ["steps[1] (atomic)", "pipeline (sequential)"]
    dap.request("next", {"threadId": 1})  # over step 1: stops after it (its answer)
    dap.event("stopped")
    assert dap.stack()[0]["name"] == "steps[1] (atomic)"
    dap.request("next", {"threadId": 1})  # on to step 2, without entering it
    dap.event("stopped")
    assert [f["name"] for f in dap.stack()] == ["ref shout", "pipeline (sequential)"]
    dap.request("stepOut", {"threadId": 1})  # the pipeline, after it ran
    assert dap.event("stopped")["body"]["description"] == "after pipeline (sequential)"
    frames = dap.stack()
    assert [f["name"] for f in frames] == ["pipeline (sequential)"]
    step = dap.variables(dap.scopes(frames[0]["id"])["Step"])
    assert step["status"]["value"] == '"COMPLETE"'
    dap.request("continue", {"threadId": 1})
    assert dap.event("exited")["body"]["exitCode"] == 0


def test_breakpoints_on_a_case_and_between_tasks(dap, project):
    main = str(project / "pipeline.task.xml")
    case = line_of(PIPELINE, "<case")
    assert dap.start(launch_args(project), {main: [case, line_of(PIPELINE, "<output_format"), 2]})["success"]
    placed = dap.placed[main]["breakpoints"]
    # a case stops at the task it holds (here on the same line); a line inside a task moves to the
    # next task below it; <inputs> of the root moves to the first step
    assert [b["line"] for b in placed] == [case, line_of(PIPELINE, '<task ref="shout">'), line_of(PIPELINE, "<task>")]
    assert dap.event("stopped")["body"]["reason"] == "breakpoint"
    assert dap.stack()[0]["name"] == "steps[1] (atomic)"
    dap.request("continue", {"threadId": 1})
    dap.event("stopped")
    assert dap.stack()[0]["name"] == "ref shout"
    dap.request("continue", {"threadId": 1})
    dap.event("stopped")
    frames = dap.stack()
    assert frames[0]["name"] == "case[1] (atomic)" and frames[1]["name"] == "steps[3] (cond)"
    dap.request("continue", {"threadId": 1})
    assert dap.event("exited")["body"]["exitCode"] == 0


def test_pause_stops_at_the_next_task(dap, project):
    assert dap.start(launch_args(project, stopOnEntry=True))["success"]
    dap.event("stopped")
    dap.request("pause", {"threadId": 1})  # asked while stopped: the next task stops with "pause"
    dap.request("continue", {"threadId": 1})
    assert dap.event("stopped")["body"]["reason"] == "pause"
    assert dap.stack()[0]["name"] == "steps[1] (atomic)"
    dap.request("continue", {"threadId": 1})
    assert dap.event("exited")["body"]["exitCode"] == 0


def test_a_plan_with_a_script_needs_the_agreed_digest(project):
    args = {"program": str(project / "listing.task.xml")}
    first = DapClient(cwd=str(project))
    try:
        refused = first.start(args)
        assert not refused["success"]
        message = refused["message"]
        assert "echo listed" in message and '"agreedPlan": "' in message
        digest = message.split('"agreedPlan": "', 1)[1].split('"', 1)[0]
        assert len(digest) == 64
        assert not any(e["event"] == "exited" for e in first.events)  # nothing ran
    finally:
        first.close()
    wrong = DapClient(cwd=str(project))
    try:
        assert not wrong.start({**args, "agreedPlan": "0" * 64})["success"]
    finally:
        wrong.close()
    agreed = DapClient(cwd=str(project))
    try:
        assert agreed.start({**args, "agreedPlan": digest})["success"]
        assert agreed.event("exited")["body"]["exitCode"] == 0
        assert agreed.outputs("stdout") == "listed\n"
    finally:
        agreed.close()


def test_secrets_are_masked_in_variables_and_output(project):
    env = {**os.environ, "SERVICE_API_KEY": "sk-verysecret-123456"}
    dap = DapClient(cwd=str(project), env=env)
    try:
        main = str(project / "pipeline.task.xml")
        assert dap.start(launch_args(project, inputs={"word": "sk-verysecret-123456"}),
                         {main: [line_of(PIPELINE, '<task ref="shout">')]})["success"]
        dap.event("stopped")
        frames = dap.stack()
        local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
        assert local["word"]["value"] == '"***"'
        assert "sk-verysecret" not in local["last_output"]["value"]
        assert dap.request("evaluate", {"expression": "word", "frameId": frames[0]["id"]})["body"]["result"] == '"***"'
        dap.request("continue", {"threadId": 1})
        dap.event("terminated")
        assert "sk-verysecret" not in dap.outputs("stdout") + dap.outputs("console")
        assert "***" in dap.outputs("stdout")
    finally:
        dap.close()


def test_bad_launches_say_what_to_do(dap, project):
    missing = dap.start({"program": str(project / "nope.task.xml")})
    assert not missing["success"] and missing["message"].endswith("nope.task.xml: no such file")


def test_a_malformed_message_ends_the_adapter_with_a_message(project):
    dap = DapClient(cwd=str(project))
    dap.proc.stdin.write(b"Content-Length: 5\r\n\r\n{nope")
    dap.proc.stdin.close()
    assert dap.proc.wait(timeout=30) == 2
    assert b"the message is not JSON" in dap.proc.stderr.read()


TESTS = """<tests>
  <test name="counts" task="pipeline" model="taskdsl/echo">
    <input name="word">hey</input>
    <expect test='"big" in output'/>
  </test>
  <test name="wrong" task="pipeline" model="taskdsl/echo">
    <expect test='"small" in output'/>
  </test>
</tests>
"""


def test_debugging_a_test_runs_its_task_with_its_inputs_and_judges_it(project):
    (project / "pipeline.test.xml").write_text(TESTS, encoding="utf-8")
    main = str(project / "pipeline.task.xml")
    dap = DapClient(cwd=str(project))
    try:
        assert dap.start({"program": str(project / "pipeline.test.xml"), "test": "counts"},
                         {main: [line_of(PIPELINE, '<task ref="shout">')]})["success"]
        dap.event("stopped")
        frames = dap.stack()
        assert frames[0]["source"]["path"] == main
        local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
        assert local["word"]["value"] == '"hey"'  # the test's input
        dap.request("continue", {"threadId": 1})
        assert dap.event("exited")["body"]["exitCode"] == 0
        assert "test 'counts' passed" in dap.outputs("console")
    finally:
        dap.close()
    dap = DapClient(cwd=str(project))
    try:
        assert dap.start({"program": str(project / "pipeline.test.xml"), "test": "wrong"})["success"]
        assert dap.event("exited")["body"]["exitCode"] == 1
        assert dap.outputs("stderr") == ("test 'wrong' failed: expect '\"small\" in output' does not hold; "
                                         "output: 'big {\"n\": 5, \"said\": \"hello\"}'\n")
    finally:
        dap.close()
    dap = DapClient(cwd=str(project))
    try:
        missing = dap.start({"program": str(project / "pipeline.test.xml"), "test": "nope"})
        assert not missing["success"] and missing["message"].endswith('has no <test name="nope">')
    finally:
        dap.close()


def test_plan_shows_what_a_launch_would_run_and_its_digest_is_the_one_to_agree_to(project):
    import json
    import subprocess
    import sys

    launch = {"program": str(project / "listing.task.xml")}
    shown = subprocess.run([sys.executable, "-m", "taskdsl", "debug", "--plan"], input=json.dumps(launch),
                           capture_output=True, text=True, cwd=str(project), timeout=60)
    assert shown.returncode == 0, shown.stderr
    answer = json.loads(shown.stdout)
    assert answer["reasons"] == ["scripts"] and "$ echo listed" in answer["plan"]
    dap = DapClient(cwd=str(project))
    try:
        refused = dap.start(launch)
        assert f'"agreedPlan": "{answer["digest"]}"' in refused["message"]
    finally:
        dap.close()
    bad = subprocess.run([sys.executable, "-m", "taskdsl", "debug", "--plan"], input="{nope",
                         capture_output=True, text=True, cwd=str(project), timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("taskdsl debug --plan: the launch configuration on stdin is not JSON")


REDUCE = """<task name="joined" type="reduce">
  <inputs>
    <input name="first">a</input>
    <input name="second">b</input>
  </inputs>
  <initial_value>start</initial_value>
  <inner_task>
    <description>item {{current_data}}</description>
    <model>taskdsl/echo</model>
  </inner_task>
  <reduction_task>
    <description>{{accumulator}} + {{current_result}}</description>
    <model>taskdsl/echo</model>
  </reduction_task>
</task>
"""


def test_a_breakpoint_on_a_reduce_part_shows_the_reduce_bindings(project):
    path = project / "joined.task.xml"
    path.write_text(REDUCE, encoding="utf-8")
    dap = DapClient(cwd=str(project))
    try:
        assert dap.start({"program": str(path)}, {str(path): [line_of(REDUCE, "<reduction_task>")]})["success"]
        dap.event("stopped")
        frames = dap.stack()
        assert [f["name"] for f in frames] == ["reduction_task[1] (atomic)", "joined (reduce)"]
        local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
        # (the inner task's answer: the echo of its prompt, which appends the input it does not mention)
        assert local["current_result"]["value"].startswith('"item a')
        assert (local["accumulator"]["value"], local["original_input"]["value"]) == ('"start"', '"a"')
        dap.request("continue", {"threadId": 1})
        dap.event("stopped")  # the second input's reduction
        local = dap.variables(dap.scopes(dap.stack()[0]["id"])["Locals"])
        assert local["accumulator"]["value"].startswith('"start + item a')
        assert (local["current_result"]["value"].startswith('"item b'), local["original_input"]["value"]) == (True, '"b"')
        dap.request("continue", {"threadId": 1})
        assert dap.event("exited")["body"]["exitCode"] == 0
        assert dap.outputs("stdout").startswith("start + item a")
    finally:
        dap.close()


def test_breakpoints_in_what_is_not_a_regular_file_are_not_verified_and_do_not_block(dap, project):
    fifo = project / "pipe.task.xml"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    dap.request("initialize", {"adapterID": "taskdsl"})
    answer = dap.request("setBreakpoints", {"source": {"path": str(fifo)}, "breakpoints": [{"line": 1}]})
    assert answer["body"]["breakpoints"] == [
        {"verified": False, "line": 1, "message": "no task, call, cond case or reduce part on or after this line"}]
    missing = dap.request("setBreakpoints", {"source": {"path": str(project / "gone.task.xml")}, "breakpoints": [{"line": 3}]})
    assert missing["body"]["breakpoints"][0]["verified"] is False


@pytest.mark.parametrize("data, said", [
    (b"Content-Length: 99999999999\r\n\r\n{}", b"bad Content-Length header"),
    (b"Content-Length: 2\r\n\r\n[]", b"a message must be a JSON object"),
])
def test_a_hostile_header_or_message_ends_the_adapter_without_reading_on(project, data, said):
    dap = DapClient(cwd=str(project))
    dap.proc.stdin.write(data)
    dap.proc.stdin.close()
    assert dap.proc.wait(timeout=30) == 2
    assert said in dap.proc.stderr.read()


def test_an_unknown_request_is_answered_with_an_error_and_the_adapter_goes_on(dap):
    answer = dap.request("restartFrame", {"frameId": 1}, ok=False)
    assert not answer["success"] and answer["message"] == "taskdsl debug does not support the request 'restartFrame'"
    assert dap.request("initialize", {"adapterID": "taskdsl"})["body"]["supportsConfigurationDoneRequest"] is True


def test_a_test_that_expects_a_missing_input_to_fail_is_debugged_not_refused(project):
    (project / "say.task.xml").write_text(
        '<task name="say"><inputs><input name="word"/></inputs><description>Say {{word}}</description></task>\n',
        encoding="utf-8")
    (project / "say.test.xml").write_text(
        '<tests>\n  <test name="needs a word" task="say" model="taskdsl/echo">\n'
        '    <expect_error type="TASK_FAILURE"/>\n  </test>\n</tests>\n', encoding="utf-8")
    dap = DapClient(cwd=str(project))
    try:
        assert dap.start({"program": str(project / "say.test.xml"), "test": "needs a word"})["success"]
        assert dap.event("exited")["body"]["exitCode"] == 0
        assert "test 'needs a word' passed" in dap.outputs("console")
    finally:
        dap.close()


def disconnected(dap: DapClient) -> tuple[int, str]:
    """Disconnect with stdin still open (as an editor does) and wait for the adapter to end by
    itself: its exit code and what it wrote on stderr."""
    dap.request("disconnect", {"terminateDebuggee": True})
    code = dap.proc.wait(timeout=60)
    return code, dap.proc.stderr.read().decode()


def test_the_adapter_exits_cleanly_when_disconnected_after_a_run(project):
    dap = DapClient(cwd=str(project))
    try:
        assert dap.start(launch_args(project))["success"]
        assert dap.event("exited")["body"]["exitCode"] == 0
        dap.event("terminated")
        code, stderr = disconnected(dap)
        assert code == 0 and "Fatal Python error" not in stderr, stderr
    finally:
        dap.close()


def test_a_refused_launch_sends_terminated_its_text_as_it_is_and_exits_cleanly(project):
    (project / "broken.task.xml").write_text('<task name="broken"><instructions>say {{nothing_here}}'
                                             '</instructions></task>\n', encoding="utf-8")
    dap = DapClient(cwd=str(project))
    try:
        refused = dap.start({"program": str(project / "broken.task.xml"), "model": "taskdsl/echo"})
        assert not refused["success"]
        assert "error TD402 {{nothing_here}} names nothing visible" in refused["message"]
        # DAP defines no escape for braces: the format (with no variables) is the message itself
        assert refused["body"]["error"]["format"] == refused["message"]
        assert dap.event("terminated")["event"] == "terminated"
        code, stderr = disconnected(dap)
        assert code == 0 and "Fatal Python error" not in stderr, stderr
    finally:
        dap.close()


def test_a_tests_plan_takes_the_fixture_the_run_answers_from(tmp_path):
    """The plan of a debugged test and its run use one copy of the replay fixture (read once through the
    reader): a fixture the reader refuses (larger than its 50 MB limit here) is no fixture for either,
    so the plan shows the test's own model, priced, and asks; the plan once said `taskdsl/replay (free)`
    from a second look at the file while the run called the paid model unasked."""
    import json
    import subprocess
    import sys

    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "s.task.xml").write_text('<task name="s"><instructions>Say {{text}}</instructions>'
                                         '<inputs><input name="text"/></inputs></task>\n', encoding="utf-8")
    (tmp_path / "s.test.xml").write_text('<tests><test name="t1" task="s" model="openai/gpt-4o">'
                                         '<input name="text">hi</input><expect test="output"/></test></tests>\n',
                                         encoding="utf-8")
    launch = {"program": str(tmp_path / "s.test.xml"), "test": "t1"}

    def plan():
        shown = subprocess.run([sys.executable, "-m", "taskdsl", "debug", "--plan"], input=json.dumps(launch),
                               capture_output=True, text=True, cwd=str(tmp_path), timeout=60)
        assert shown.returncode == 0, shown.stderr
        return json.loads(shown.stdout)

    with open(tmp_path / "s.replay.json", "wb") as fixture:
        fixture.truncate(51_000_000)  # sparse: the reader refuses it by its size
    refused = plan()
    assert refused["reasons"] == ["cost"] and "call openai/gpt-4o (priced)" in refused["plan"]
    (tmp_path / "s.replay.json").write_text(json.dumps({"answers": [{"answer": "hi"}]}), encoding="utf-8")
    pinned = plan()
    assert pinned["reasons"] == [] and "call taskdsl/replay (free)" in pinned["plan"]


def test_a_replay_fixture_that_links_outside_the_project_is_no_fixture(tmp_path):
    """A fixture is read as every file a run reads: inside the project. A link to answers elsewhere is not
    taken (the plan then shows the test's own model, and asks)."""
    import json
    import subprocess
    import sys

    project = tmp_path / "p"
    project.mkdir()
    (project / "taskdsl.toml").write_text("", encoding="utf-8")
    (project / "s.task.xml").write_text('<task name="s"><instructions>Say hi</instructions></task>\n', encoding="utf-8")
    (project / "s.test.xml").write_text('<tests><test name="t1" task="s" model="openai/gpt-4o">'
                                        '<expect test="output"/></test></tests>\n', encoding="utf-8")
    (tmp_path / "elsewhere.json").write_text(json.dumps({"answers": [{"answer": "hi"}]}), encoding="utf-8")
    (project / "s.replay.json").symlink_to(tmp_path / "elsewhere.json")
    shown = subprocess.run([sys.executable, "-m", "taskdsl", "debug", "--plan"],
                           input=json.dumps({"program": str(project / "s.test.xml"), "test": "t1"}),
                           capture_output=True, text=True, cwd=str(project), timeout=60)
    assert shown.returncode == 0, shown.stderr
    plan = json.loads(shown.stdout)
    assert plan["reasons"] == ["cost"] and "call openai/gpt-4o (priced)" in plan["plan"]
