"""Neovim (headless) with the documented config editors/nvim/taskdsl.lua against `taskdsl serve`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import (BAD_TD301, ROOT, TEST_FILE, TEST_TD501, TYPO_TD101, artifact_dir, by_code, completion_names, doc_phrase,
                       missing, normalize, require_exe, save_json)

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent / "nvim" / "harness.lua"
CONFIG = ROOT / "editors" / "nvim" / "taskdsl.lua"
# first answer: a task with checker errors (TD101, TD204); second: the repaired autumn_haiku
REPLAY = ROOT / "examples" / "ask" / "replay.json"


NVIM_011 = ROOT / ".tools" / "nvim-0.11.4" / "bin" / "nvim"


def neovim(which: str) -> str:
    """Debian's Neovim 0.7 (vim.lsp.start_client path of the config) or 0.11 from PyPI (vim.lsp.config)."""
    if which == "0.7":
        return require_exe("nvim", "Neovim (apt-get install neovim)")
    if not NVIM_011.exists():
        missing("Neovim 0.11 (scripts/install-e2e.sh nvim11)")
    return str(NVIM_011)


@pytest.mark.parametrize("which", ["0.7", "0.11"])
def test_neovim_diagnostics_hover_completion_run(which, workspace, isolated_env, server_python, tmp_path):
    nvim = neovim(which)
    out = tmp_path / "nvim.json"
    (workspace / "greet.test.xml").write_text(TEST_FILE, encoding="utf-8")
    env = dict(isolated_env,
               TASKDSL_E2E_CONFIG=str(CONFIG), TASKDSL_E2E_PYTHON=str(server_python), TASKDSL_E2E_OUT=str(out),
               TASKDSL_E2E_BAD=str(workspace / "report.task.xml"), TASKDSL_E2E_TYPO=str(workspace / "typo.task.xml"),
               TASKDSL_E2E_HELLO=str(workspace / "hello.task.xml"),
               TASKDSL_E2E_TESTFILE=str(workspace / "greet.test.xml"),
               # :TaskdslNew's model (the templates run name taskdsl/echo) and the answers it replays
               TASKDSL_E2E_MODEL="taskdsl/replay", TASKDSL_REPLAY_FILE=str(REPLAY))
    t0 = time.monotonic()
    proc = subprocess.run([nvim, "--headless", "-i", "NONE", "--noplugin", "-u", str(HARNESS)],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - t0
    assert out.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    result["wall_seconds"] = round(seconds, 2)
    log = Path(isolated_env["XDG_CACHE_HOME"]) / "nvim" / "lsp.log"
    if log.exists():
        result["lsp_log_tail"] = log.read_text(errors="replace")[-4000:]
    save_json(artifact_dir(f"nvim-{which}") / "result.json", result)
    assert proc.returncode == 0 and "error" not in result, (result.get("error"), result.get("lsp_log_tail"))

    # the Neovim asked for, taking the config's path for its version
    assert result["nvim_version"].startswith(which + "."), result["nvim_version"]
    assert result["config_api"] is (which == "0.11")

    # *.task.xml has the filetype the config gives it
    assert result["bad"]["filetype"] == "taskxml"

    # diagnostics: TD301 on the value of <fresh_context>, TD101 on <descripton>
    td301 = by_code(result["bad"]["diagnostics"], "TD301")
    assert td301, result["bad"]["diagnostics"]
    d = td301[0]
    assert (d["lnum"], d["col"], d["end_col"]) == (BAD_TD301["line"], BAD_TD301["start"], BAD_TD301["end"])
    assert d["severity"] == 1 and d["source"] == "taskdsl"
    assert "fresh_context" in d["message"]

    td101 = by_code(result["typo"]["diagnostics"], "TD101")
    assert td101, result["typo"]["diagnostics"]
    d = td101[0]
    assert (d["lnum"], d["col"], d["end_col"]) == (TYPO_TD101["line"], TYPO_TD101["start"], TYPO_TD101["end"])
    assert "descripton" in d["message"]

    # a test file has the filetype too and the server checks it: TD501 on the unknown task name
    assert result["testfile"]["filetype"] == "taskxml" and result["testfile"]["attached"], result["testfile"]
    td501 = by_code(result["testfile"]["diagnostics"], "TD501")
    assert td501, result["testfile"]["diagnostics"]
    d = td501[0]
    assert (d["lnum"], d["col"], d["end_col"]) == (TEST_TD501["line"], TEST_TD501["start"], TEST_TD501["end"])
    assert "'no_such_task' is not a task or template" in d["message"]

    # hover on <fresh_context> shows its schema documentation
    assert "hover" in result, result.get("hover_error")
    assert doc_phrase("fresh_context") in normalize(result["hover"])

    # completion after "<" inside <task>: the children still allowed, not the ones already there
    assert "completion" in result, result.get("completion_error")
    names = completion_names(result["completion"])
    assert {"instructions", "inputs", "model"} <= names, sorted(names)
    assert "description" not in names and "context_management" not in names, sorted(names)

    # :TaskdslRun name=World runs the template through the server and reports its result
    run = result["run"]
    assert run["done"], run
    finished = [n["msg"] for n in run["notes"] if n["msg"].startswith("taskdsl: run finished")]
    assert finished and "Say hello to World" in finished[0], run["notes"]

    # :TaskdslRun without the input asks for it (vim.ui.input), then runs
    run = result["run_prompted"]
    assert run["done"] and run["prompts"] == ["taskdsl input name: "], run
    finished = [n["msg"] for n in run["notes"] if n["msg"].startswith("taskdsl: run finished")]
    assert finished and "Say hello to Prompted" in finished[0], run["notes"]

    # in a library file: pick the template (vim.ui.select lists the entries), then its param is asked for
    run = result["run_library"]
    assert run["done"] and run["picks"] == [{"prompt": "taskdsl: run which entry?", "items": ["greet", "shout"]}], run
    assert run["prompts"] == ["taskdsl input who: "], run
    finished = [n["msg"] for n in run["notes"] if n["msg"].startswith("taskdsl: run finished")]
    assert finished and "Greet Ada warmly" in finished[0], run["notes"]

    # :TaskdslNew: the replayed task failed the checker, was repaired once, and opens in a new buffer
    new = result["new_task"]
    assert new["done"] and new["new_buffer"], new
    assert new["filetype"] == "taskxml" and new["name"] == "" and new["modified"] is False, new
    assert '<task name="autumn_haiku">' in new["text"], new["text"]
    assert "<instructions>Write a haiku (5, 7 and 5 syllables) about {{topic}}.</instructions>" in new["text"]
    assert "<prompt>" not in new["text"], new["text"]
    shown = [n["msg"] for n in new["notes"]]
    assert shown == ["taskdsl: writing a task…", "taskdsl: the new task written by taskdsl/replay and repaired in 1 round(s); "
                     ":w name.task.xml saves it"], shown
