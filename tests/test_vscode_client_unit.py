"""The VS Code extension's own unit tests (node --test), run as part of the suite.

scripts/install-e2e.sh installs the extension's node_modules; in CI their absence is a failure.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[1] / "vscode-client"


def test_extension_unit_tests_pass():
    if not (CLIENT / "node_modules").is_dir() or shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("vscode-client/node_modules or npm missing: run scripts/install-e2e.sh")
        pytest.skip("vscode-client/node_modules missing (scripts/install-e2e.sh installs it)")
    completed = subprocess.run(["npm", "test", "--silent"], cwd=CLIENT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "# fail 0" in completed.stdout and "# pass 0" not in completed.stdout


# -- what package.json contributes: snippets, walkthrough, icon, changelog -------------------------

import fnmatch  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import struct  # noqa: E402

from taskdsl.rules.checker import check_text  # noqa: E402
from taskdsl.language.diagnostics import Severity  # noqa: E402
from taskdsl.library import Library  # noqa: E402

PACKAGE = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
SNIPPET_NAMES = {"Atomic task", "Sequential task", "Reduce task", "Script task", "Conditional", "Template", "Call"}


def packaged(relative: str) -> bool:
    """Whether .vscodeignore lets the file into the .vsix (everything is ignored, then re-included)."""
    included = False
    for line in (CLIENT / ".vscodeignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:] if negate else line
        if pattern == "**" or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern.rstrip("*") + "*"):
            included = negate
    return included


def expand(body: list[str]) -> str:
    """A snippet as the user gets it when accepting every default: ${n:default} → default, $n → the
    default of n, $0 → nothing."""
    text = "\n".join(body)
    defaults = dict(re.findall(r"\$\{(\d+):([^}]*)\}", text))
    text = re.sub(r"\$\{(\d+):([^}]*)\}", lambda m: m.group(2), text)
    return re.sub(r"\$(\d+)", lambda m: defaults.get(m.group(1), ""), text)


def snippets() -> dict:
    [contribution] = PACKAGE["contributes"]["snippets"]
    assert contribution["language"] == "taskxml"
    path = contribution["path"].removeprefix("./")
    assert packaged(path)
    return json.loads((CLIENT / path).read_text(encoding="utf-8"))


def test_snippets_cover_every_kind_and_check_clean(tmp_path):
    found = snippets()
    assert set(found) == SNIPPET_NAMES
    assert sorted(s["prefix"] for s in found.values()) == ["call", "cond", "reduce", "script", "sequential", "task",
                                                           "template"]
    (tmp_path / "lib.task.xml").write_text(expand(found["Template"]["body"]) + "\n", encoding="utf-8")
    library = Library.from_paths([tmp_path])
    for name, snippet in found.items():
        text = expand(snippet["body"])
        if name in ("Conditional", "Call"):  # steps of a sequential
            text = ('<task type="sequential">\n<description>d</description>\n<steps>\n'
                    '<task><description>x</description><output_format type="json"/></task>\n'
                    f'{text}\n</steps>\n</task>')
        path = str(tmp_path / ("lib.task.xml" if name == "Template" else "x.task.xml"))
        problems = [(d.code, d.message) for d in check_text(text, path=path, library=library).diagnostics
                    if d.severity in (Severity.ERROR, Severity.WARNING)]
        assert problems == [], (name, text)


def test_walkthrough_steps_have_packaged_media_and_known_commands():
    [walkthrough] = PACKAGE["contributes"]["walkthroughs"]
    assert [step["id"] for step in walkthrough["steps"]] == ["install", "template", "run", "problems"]
    for step in walkthrough["steps"]:
        media = step["media"]["markdown"]
        assert (CLIENT / media).is_file() and packaged(media), media
        for command in re.findall(r"\(command:([A-Za-z.]+)", step["description"]):
            if command.startswith("taskdsl."):  # ours: registered by the extension
                assert f"'{command}'" in (CLIENT / "src" / "extension.ts").read_text(encoding="utf-8"), command
    assert "pip install taskdsl\n" not in (CLIENT / "walkthrough" / "install.md").read_text(encoding="utf-8")


def test_icon_is_a_packaged_128px_png_and_the_changelog_ships():
    icon = CLIENT / PACKAGE["icon"]
    data = icon.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (128, 128)
    assert packaged(PACKAGE["icon"]) and packaged("CHANGELOG.md")
    assert (CLIENT / "CHANGELOG.md").read_text(encoding="utf-8").startswith("# Changelog\n\n## " + PACKAGE["version"])


def test_no_install_advice_names_a_package_that_is_not_on_the_index():
    for path in [CLIENT / "src" / "python.ts", CLIENT / "src" / "extension.ts", CLIENT / "README.md",
                 CLIENT.parent / "README.md", CLIENT.parent / "docs" / "editors.md"]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install taskdsl(?![-\w.])", text), path
