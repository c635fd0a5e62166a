"""Guards that no test held before (issue 25): each is shown to matter through the real CLI."""

import os
import re
import subprocess
import sys

import pytest

from taskdsl.cli.main import main


@pytest.mark.parametrize("name", ["MY_SECRET", "DB_PASSWORD", "AWS_CREDENTIAL_X", "API_KEY", "GH_TOKEN"])
def test_values_of_secret_names_are_masked_in_what_a_run_prints(tmp_path, name):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "s.task.xml").write_text(
        f'<task type="script" name="s"><command>echo "value=${name}"</command></task>\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "taskdsl", "run", "s.task.xml", "--json"], cwd=tmp_path,
                          env={**os.environ, name: "v3ry-s3cret-value"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "v3ry-s3cret-value" not in done.stdout + done.stderr and "value=***" in done.stdout


def test_the_plan_digest_covers_the_models(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    (tmp_path / "a.task.xml").write_text('<task name="a"><description>Say hi</description></task>\n', encoding="utf-8")
    digests = []
    for model in ("taskdsl/echo", "openai/gpt-4o"):
        assert main(["run", "a.task.xml", "--plan", "--model", model]) == 0
        digests.append(re.search(r"Plan ([0-9a-f]{32})", capsys.readouterr().out).group(1))
    assert digests[0] != digests[1]
