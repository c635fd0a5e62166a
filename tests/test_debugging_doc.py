"""docs/debugging.md's worked example is what a debug session shows: its files are written as the
page gives them, its launch configuration is launched over stdio, and the session transcript the
page prints is the one this test produces by driving `taskdsl debug` as an editor does."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dap_client import DapClient

PAGE = Path(__file__).resolve().parents[1] / "docs" / "debugging.md"


def marked_blocks(text: str) -> dict[str, str]:
    """marker (`file: NAME`, `launch`, `session`) → the fenced block right after it."""
    found = {}
    for match in re.finditer(r"<!-- (file: [^ ]+|launch|session) -->\n```\w*\n(.*?)```", text, re.S):
        found[match.group(1)] = match.group(2)
    return found


def test_the_worked_example_is_the_session_it_shows(tmp_path):
    blocks = marked_blocks(PAGE.read_text(encoding="utf-8"))
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    for marker, text in blocks.items():
        if marker.startswith("file: "):
            (tmp_path / marker[len("file: "):]).write_text(text, encoding="utf-8")
    template = blocks["file: count_words.task.xml"]
    launch = json.loads(blocks["launch"])
    launch["program"] = str(tmp_path / launch["program"])
    program = str(tmp_path / "count_words.task.xml")
    where = re.search(r"breakpoint on the `<cond>` \(line (\d+)\)", PAGE.read_text(encoding="utf-8"))
    line = int(where.group(1))
    assert template.splitlines()[line - 1].strip() == "<cond>"  # the line the page names is the <cond>

    transcript = []
    dap = DapClient(cwd=str(tmp_path))
    try:
        assert dap.start(launch, {program: [line]})["success"]
        stopped = dap.event("stopped")["body"]
        frames = dap.stack()
        transcript.append(f"stopped: {stopped['reason']} at {frames[0]['source']['name']}:{frames[0]['line']}")
        transcript.append("call stack: " + " · ".join(f["name"] for f in frames))
        local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
        transcript += [f"Locals: {name} = {local[name]['value']}" for name in ("text", "last_output")]
        answer = dap.request("evaluate", {"expression": "output.n > 2", "frameId": frames[0]["id"]})["body"]["result"]
        transcript.append(f"evaluate output.n > 2 → {answer}")
        dap.request("stepIn", {"threadId": 1})
        dap.event("stopped")
        frames = dap.stack()
        transcript.append(f"step into → {frames[0]['name']} at {frames[0]['source']['name']}:{frames[0]['line']}")
        step = dap.variables(dap.scopes(frames[0]["id"])["Step"])
        prompt = dap.variables(step["prompt"]["variablesReference"])
        transcript += [f"Step: model = {step['model']['value']}", f"Step: prompt.user = {prompt['user']['value']}"]
        dap.request("next", {"threadId": 1})
        description = dap.event("stopped")["body"]["description"]
        frames = dap.stack()
        step = dap.variables(dap.scopes(frames[0]["id"])["Step"])
        transcript.append(f"step over → {description}: answer = {step['answer']['value']}")
        dap.request("continue", {"threadId": 1})
        assert dap.event("exited")["body"]["exitCode"] == 0
        transcript.append(f"continue → {dap.outputs('stdout').strip()}")
        transcript.append(dap.outputs("console").strip().splitlines()[-1])
    finally:
        dap.close()
    assert "\n".join(transcript) + "\n" == blocks["session"]
