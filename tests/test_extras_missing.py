"""Without the `ray` or `otel` extra, `--executor ray` and `--otel` stop before anything runs and
say which extra to install, as docs/guide/install.md says (the packages are made unimportable by a
package of the same name first on the path that refuses to load)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

TEMPLATE = """<task name="say">
  <instructions>Say {{text}}</instructions>
  <inputs><input name="text"/></inputs>
</task>
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "taskdsl.toml").write_text('model = "taskdsl/echo"\n', encoding="utf-8")
    (tmp_path / "say.task.xml").write_text(TEMPLATE, encoding="utf-8")
    (tmp_path / "rows.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n', encoding="utf-8")
    blocker = tmp_path / "blocked"
    for package in ("ray", "opentelemetry"):
        (blocker / package).mkdir(parents=True)
        (blocker / package / "__init__.py").write_text(f'raise ImportError("no {package} here")\n', encoding="utf-8")
    return tmp_path


def taskdsl(project, *arguments):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RAY_"))}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project / "blocked"), environment.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "taskdsl", *arguments], cwd=project, env=environment,
                          capture_output=True, text=True, timeout=300)


def test_executor_ray_without_the_extra_names_it(project):
    done = taskdsl(project, "run", "say.task.xml", "--data", "rows.jsonl", "--executor", "ray", "--out", "out.jsonl")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("taskdsl run: --executor ray needs taskdsl's ray extra: from a checkout, "
                                            "pip install './taskdsl[ray]' (see the install guide)")
    assert not (project / "out.jsonl").exists() or (project / "out.jsonl").read_text() == ""
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("data", [False, True], ids=["run", "batch"])
def test_otel_without_the_extra_names_it(project, data):
    rows = ["--data", "rows.jsonl", "--out", "out.jsonl"] if data else ["--input", "text=a"]
    done = taskdsl(project, "run", "say.task.xml", "--otel", *rows)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("taskdsl run: OpenTelemetry export needs taskdsl's otel extra: from a "
                                            "checkout, pip install './taskdsl[otel]' (see the install guide)")
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert not (project / "out.jsonl").exists()
