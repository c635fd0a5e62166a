"""Batch Emacs + eglot with the documented config editors/emacs/taskdsl.el against `taskdsl serve`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import (BAD_TD301, ROOT, TEST_FILE, TEST_TD501, TYPO_TD101, artifact_dir, completion_names, doc_phrase, missing,
                       normalize, require_exe, save_json)

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent / "emacs" / "harness.el"
CONFIG = ROOT / "editors" / "emacs" / "taskdsl.el"
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def test_emacs_eglot_diagnostics_hover_completion_run(workspace, isolated_env, server_python, tmp_path):
    emacs = require_exe("emacs", "Emacs (apt-get install emacs-nox)")
    if not any(ELPA.glob("eglot-*/eglot.el")) and subprocess.run(
            [emacs, "--batch", "-Q", "--eval", "(require 'eglot)"], capture_output=True).returncode != 0:
        missing("eglot (apt-get install elpa-eglot)")
    out = tmp_path / "emacs.json"
    (workspace / "greet.test.xml").write_text(TEST_FILE, encoding="utf-8")
    env = dict(isolated_env,
               TASKDSL_E2E_CONFIG=str(CONFIG), TASKDSL_E2E_PYTHON=str(server_python), TASKDSL_E2E_OUT=str(out),
               TASKDSL_E2E_PACKAGES=str(tmp_path / "elpa"),
               TASKDSL_E2E_BAD=str(workspace / "report.task.xml"), TASKDSL_E2E_TYPO=str(workspace / "typo.task.xml"),
               TASKDSL_E2E_HELLO=str(workspace / "hello.task.xml"),
               TASKDSL_E2E_TESTFILE=str(workspace / "greet.test.xml"))
    t0 = time.monotonic()
    proc = subprocess.run([emacs, "--batch", "-Q", "-l", str(HARNESS)],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)  # a prompt fails instead of waiting
    seconds = time.monotonic() - t0
    assert out.exists(), f"emacs wrote no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result = json.loads(out.read_text())
    result["wall_seconds"] = round(seconds, 2)
    result["stderr_tail"] = proc.stderr[-3000:]
    save_json(artifact_dir("emacs") / "result.json", result)
    assert proc.returncode == 0 and "error" not in result, (result.get("error"), proc.stderr[-3000:])

    assert result["bad"]["mode"] == "taskxml-mode" and result["bad"]["managed"]

    # Flymake shows "taskdsl [TD301]: …" on the value of <fresh_context>
    td301 = [d for d in result["bad"]["diagnostics"] if "[TD301]" in d["text"]]
    assert td301, result["bad"]["diagnostics"]
    d = td301[0]
    assert (d["line"], d["col"], d["end_col"]) == (BAD_TD301["line"], BAD_TD301["start"], BAD_TD301["end"])
    assert d["type"] == "eglot-error" and d["text"].startswith("taskdsl")

    td101 = [d for d in result["typo"]["diagnostics"] if "[TD101]" in d["text"]]
    assert td101, result["typo"]["diagnostics"]
    d = td101[0]
    assert (d["line"], d["col"], d["end_col"]) == (TYPO_TD101["line"], TYPO_TD101["start"], TYPO_TD101["end"])
    assert "descripton" in d["text"]

    # a test file gets taskxml-mode and the server: Flymake shows TD501 on the unknown task name
    assert result["testfile"]["mode"] == "taskxml-mode" and result["testfile"]["managed"], result["testfile"]
    td501 = [d for d in result["testfile"]["diagnostics"] if "[TD501]" in d["text"]]
    assert td501, result["testfile"]["diagnostics"]
    d = td501[0]
    assert (d["line"], d["col"], d["end_col"]) == (TEST_TD501["line"], TEST_TD501["start"], TEST_TD501["end"])

    # hover (what ElDoc shows) on <fresh_context>: its schema documentation
    assert result.get("hover"), result
    assert doc_phrase("fresh_context") in normalize(result["hover"])

    # completion after "<" inside <task>
    assert "completion" in result, result.get("completion_error")
    names = completion_names(result["completion"])
    assert {"instructions", "inputs", "model"} <= names, sorted(names)
    assert "description" not in names and "context_management" not in names, sorted(names)

    # M-x taskdsl-run-task (input given) runs the template and shows the result in *taskdsl run*
    run = result["run"]
    assert run["done"] and run["status"] == "COMPLETE", run
    assert "Say hello to World" in run["buffer"], run
