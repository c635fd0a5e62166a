"""Neovim finds a template's project as taskdsl does: the nearest folder upward holding taskdsl.toml,
pyproject.toml or .git. Before, the plugin tried `.git` first wherever it was, so a project whose
taskdsl.toml sits below a git root got the git root, and the editor showed errors (the project's globals
unknown) that `taskdsl check` did not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_nvim import neovim

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent / "nvim" / "root_harness.lua"
CONFIG = ROOT / "editors" / "nvim" / "taskdsl.lua"


@pytest.mark.parametrize("which", ["0.7", "0.11"])
def test_a_project_below_a_git_root_is_its_own_root(which, isolated_env, server_python, tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "sub"
    (sub / "deep").mkdir(parents=True)
    (sub / "taskdsl.toml").write_text('globals = { audience = "devs" }\n', encoding="utf-8")
    memo = sub / "deep" / "memo.task.xml"
    memo.write_text("<task><description>For {{audience}}</description></task>\n", encoding="utf-8")
    out = tmp_path / "root.txt"
    env = dict(isolated_env, TASKDSL_E2E_CONFIG=str(CONFIG), TASKDSL_E2E_PYTHON=str(server_python),
               TASKDSL_E2E_OUT=str(out), TASKDSL_E2E_FILE=str(memo))
    subprocess.run([neovim(which), "--headless", "-i", "NONE", "--noplugin", "-u", str(HARNESS)], cwd=repo, env=env,
                   capture_output=True, text=True, timeout=300)
    assert out.read_text().strip().rstrip("/") == str(sub)
