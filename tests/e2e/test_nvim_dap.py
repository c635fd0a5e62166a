"""Neovim (headless) with the documented config editors/nvim/taskdsl.lua: the nvim-dap adapter and
configurations it registers, its consent step, and that adapter, started as nvim-dap starts it,
stopping at a breakpoint.

nvim-dap itself is packaged neither by Debian nor on npm (the registries this project installs
from), so the config is loaded with a stand-in `dap` module that records what it registers; the
adapter command it registers is then driven as nvim-dap drives it (stdio, the Debug Adapter
Protocol) with the configuration its consent step produced."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from dap_client import DapClient

from .conftest import ROOT
from .test_nvim import neovim

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent / "nvim" / "dap_harness.lua"
CONFIG = ROOT / "editors" / "nvim" / "taskdsl.lua"

TEMPLATE = """<task name="listing" type="sequential">
  <steps>
    <task type="script">
      <command>echo '{"files": 3}'</command>
    </task>
    <task>
      <description>There are {{last_output.files}} files</description>
      <model>taskdsl/echo</model>
    </task>
  </steps>
</task>
"""


@pytest.mark.parametrize("which", ["0.7", "0.11"])
def test_nvim_dap_config_asks_then_its_adapter_stops_at_a_breakpoint(which, workspace, isolated_env, server_python,
                                                                     tmp_path):
    nvim = neovim(which)
    program = workspace / "listing.task.xml"
    program.write_text(TEMPLATE, encoding="utf-8")
    out = tmp_path / "dap.json"
    env = dict(isolated_env, TASKDSL_E2E_CONFIG=str(CONFIG), TASKDSL_E2E_PYTHON=str(server_python),
               TASKDSL_E2E_OUT=str(out), TASKDSL_E2E_PROGRAM=str(program))
    proc = subprocess.run([nvim, "--headless", "-i", "NONE", "--noplugin", "-u", str(HARNESS)],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert "error" not in result, result["error"]
    assert result["adapter"] == {"type": "executable", "command": str(server_python), "args": ["-m", "taskdsl", "debug"]}
    assert [c["name"] for c in result["configurations"]] == [
        "Debug this template", "Debug this template with inputs and a model"]
    assert result["configurations"][0]["program"] == "${file}"
    # asked twice (a configuration's own agreedPlan counts for nothing), with the plan: its command
    assert len(result["asked"]) == 2 and "$ echo '{\"files\": 3}'" in result["asked"][0]
    assert result["asked"][0].endswith("Debug it?")
    assert "cancelled_but_launched" not in result  # cancelled: nvim-dap is never handed a configuration
    agreed = result["agreed"]
    assert len(agreed["agreedPlan"]) == 64 and agreed["agreedPlan"] != "f" * 64

    # the adapter, as nvim-dap starts it, with the configuration the consent produced
    dap = DapClient(cwd=str(workspace), env=isolated_env, command=[result["adapter"]["command"], *result["adapter"]["args"]])
    try:
        line = TEMPLATE.count("\n", 0, TEMPLATE.index("<task>\n")) + 1
        assert dap.start(agreed, {str(program): [line]})["success"]
        assert dap.event("stopped")["body"]["reason"] == "breakpoint"
        frames = dap.stack()
        assert (frames[0]["name"], frames[0]["line"]) == ("steps[2] (atomic)", line)
        local = dap.variables(dap.scopes(frames[0]["id"])["Locals"])
        assert local["last_output"]["value"] == '"{\\"files\\": 3}"'  # the script's text (no output_format)
        dap.request("continue", {"threadId": 1})
        assert dap.event("exited")["body"]["exitCode"] == 0
        assert dap.outputs("stdout") == "There are 3 files\n"
    finally:
        dap.close()
