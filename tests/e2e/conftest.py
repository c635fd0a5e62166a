"""Shared pieces of the end-to-end tests in real editors (Neovim, Emacs, VS Code).

Each test runs a real editor headless against `<python> -m taskdsl serve` (the project's venv by
default, `TASKDSL_E2E_PYTHON` to override) on a fresh workspace, with its own HOME and XDG
folders. When the editor is missing the test skips with the reason, except when the environment
variable CI is set: then it fails. `scripts/install-e2e.sh` installs everything they need.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = Path(os.environ.get("TASKDSL_E2E_PYTHON") or ROOT / ".venv" / "bin" / "python")
ARTIFACTS = ROOT / "test-artifacts"
XSD = ROOT / "schemas" / "task.xsd"
INSTALL_HINT = "run scripts/install-e2e.sh as root"

# fresh_context enabled with inherit_context full: TD301 on the value "enabled" (line 5, 1-based)
BAD_TEMPLATE = """\
<task type="atomic">
  <description>Summarise the report</description>
  <context_management>
    <inherit_context>full</inherit_context>
    <fresh_context>enabled</fresh_context>
  </context_management>
</task>
"""
BAD_TD301 = {"line": 4, "start": 19, "end": 26}  # 0-based line, UTF-16 columns of `enabled`

# an unknown child: TD101 on the tag name `descripton` (line 3, 1-based)
TYPO_TEMPLATE = """\
<task type="atomic">
  <description>Summarise the report</description>
  <descripton>a typo</descripton>
</task>
"""
TYPO_TD101 = {"line": 2, "start": 3, "end": 13}

# a runnable template with one input the user must give; the offline echo model answers
# with the prompt it received, so the result shows "Say hello to <input>"
HELLO_TEMPLATE = """\
<task type="atomic" name="hello">
  <description>Say hello to {{name}}</description>
  <model>taskdsl/echo</model>
  <inputs>
    <input name="name"/>
  </inputs>
</task>
"""

# a test file (*.test.xml) naming a task the project lacks: TD501 on the task name (line 2, 1-based)
TEST_FILE = """\
<tests>
  <test name="greets" task="no_such_task">
    <expect test='"hello" in output'/>
  </test>
</tests>
"""
TEST_TD501 = {"line": 1, "start": 28, "end": 40}


def missing(what: str) -> None:
    """Skip, or fail under CI, because an editor or tool is not installed."""
    message = f"{what} is not installed ({INSTALL_HINT})"
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {message}", pytrace=False)
    pytest.skip(message)


def require_exe(name: str, what: str) -> str:
    path = shutil.which(name)
    if not path:
        missing(what)
    return path  # type: ignore[return-value]


def schema_documentation(element: str) -> str:
    """The xs:documentation of a named element in the XSD, whitespace-normalised."""
    ns = {"xs": "http://www.w3.org/2001/XMLSchema"}
    tree = ET.parse(XSD)
    for el in tree.iter("{http://www.w3.org/2001/XMLSchema}element"):
        if el.get("name") == element:
            doc = el.find("xs:annotation/xs:documentation", ns)
            if doc is not None and doc.text:
                return " ".join(doc.text.split())
    raise AssertionError(f"no documentation for <{element}> in {XSD}")


def doc_phrase(element: str) -> str:
    """A plain-text phrase of an element's documentation, as any hover renders it (no markup)."""
    text = schema_documentation(element)
    phrase = re.split(r"[`*_\[\]]", text)[0].strip().rstrip(":")
    return " ".join(phrase.split()[:8])


def normalize(text: str) -> str:
    """Hover text as a user reads it: markup and extra whitespace removed."""
    return " ".join(re.sub(r"[`*_]", "", text).split())


def completion_names(labels: list[str]) -> set[str]:
    return {re.sub(r"[<>/\s]", "", label) for label in labels}


@pytest.fixture
def server_python() -> Path:
    if not PYTHON.exists():
        pytest.fail(f"{PYTHON} does not exist: create the venv and `pip install -e .` first", pytrace=False)
    return PYTHON


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()  # a root marker, as in a real project
    (ws / "report.task.xml").write_text(BAD_TEMPLATE, encoding="utf-8")
    (ws / "typo.task.xml").write_text(TYPO_TEMPLATE, encoding="utf-8")
    (ws / "hello.task.xml").write_text(HELLO_TEMPLATE, encoding="utf-8")
    return ws


@pytest.fixture
def isolated_env(tmp_path: Path) -> dict[str, str]:
    """os.environ with a HOME and XDG folders of this run only."""
    home = tmp_path / "home"
    env = dict(os.environ)
    for key, sub in [("HOME", ""), ("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")]:
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env.pop("VIRTUAL_ENV", None)
    env["TASKDSL_MODEL"] = "taskdsl/echo"
    return env


def artifact_dir(name: str) -> Path:
    path = ARTIFACTS / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def by_code(diagnostics: list[dict], code: str) -> list[dict]:
    return [d for d in diagnostics if str(d.get("code")) == code]
