"""Real VS Code (code-server 4.100.3) with the packaged extension, driven by headless Chromium.

The extension (.vsix from `npm run package` in vscode-client/) is installed with
`--install-extension` into a fresh extensions folder; code-server listens on 127.0.0.1 only; the
workspace settings point `taskdsl.server.python` at the project's venv. tests/e2e/vscode/drive.js
does what a user does and saves screenshots in test-artifacts/vscode/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import ROOT, artifact_dir, completion_names, doc_phrase, missing, normalize, require_exe, save_json

pytestmark = pytest.mark.e2e

DRIVER_DIR = Path(__file__).parent / "vscode"
CODE_SERVER = Path(os.environ.get("TASKDSL_E2E_CODE_SERVER") or ROOT / ".tools" / "code-server")
VSCODE_CLIENT = ROOT / "vscode-client"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"code-server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"code-server did not answer {url} in {seconds}s")


def _vsix() -> Path:
    found = sorted(VSCODE_CLIENT.glob("*.vsix"), key=lambda p: p.stat().st_mtime)
    if not found:
        missing("the packaged extension (vscode-client/*.vsix; `npm ci && npm run package` in vscode-client)")
    return found[-1]


def _tools() -> dict[str, str]:
    """What a VS Code session needs; skips (fails under CI) when something is missing."""
    node = require_exe("node", "Node.js 20")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        missing("Chromium (apt-get install chromium)")
    entry = CODE_SERVER / "out" / "node" / "entry.js"
    if not entry.exists():
        missing(f"code-server 4.100.3 ({entry})")
    if not (DRIVER_DIR / "node_modules" / "playwright-core").is_dir():
        missing("playwright-core (npm ci in tests/e2e/vscode)")
    return {"node": node, "chromium": chromium, "entry": str(entry), "vsix": str(_vsix())}


def _machine_scoped() -> set[str]:
    """The extension's settings declared with "scope": "machine" in its package.json."""
    manifest = json.loads((ROOT / "vscode-client" / "package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    return {key for key, spec in properties.items() if spec.get("scope") == "machine"}


def _session(tools: dict[str, str], workspace: Path, env: dict[str, str], home: Path, out: Path,
             settings: dict, scenario: str, drive_timeout: int = 900) -> dict:
    """Install the .vsix into a fresh code-server profile, serve `workspace`, run drive.js; its result.json."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if old.is_file():
            old.unlink()
    user_data = home / "user-data"
    extensions = home / "extensions"
    (user_data / "User").mkdir(parents=True)
    # a quiet, offline workbench: no welcome page, no trust prompt, no telemetry
    # machine-scoped settings (the interpreter, run permissions) are ignored in a workspace's own
    # settings: they go where a user would put them, the user (and code-server's machine) settings
    machine = {k: v for k, v in settings.items() if k in _machine_scoped()}
    settings = {k: v for k, v in settings.items() if k not in machine}
    (user_data / "Machine").mkdir(parents=True)
    save_json(user_data / "Machine" / "settings.json", machine)
    save_json(user_data / "User" / "settings.json", {**machine,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "update.mode": "none",
        "chat.disableAIFeatures": True,
        "editor.hover.delay": 200,
        "window.commandCenter": False,
    })
    (workspace / ".vscode").mkdir(exist_ok=True)
    save_json(workspace / ".vscode" / "settings.json", settings)
    node = tools["node"]
    common = [node, tools["entry"], "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    timings: dict[str, float] = {}

    t0 = time.monotonic()
    inst = subprocess.run(common + ["--install-extension", tools["vsix"]], env=env, capture_output=True, text=True,
                          timeout=120)
    timings["install_extension"] = round(time.monotonic() - t0, 2)
    assert inst.returncode == 0, inst.stdout + inst.stderr
    assert any(p.name.startswith("taskdsl.taskdsl-") for p in extensions.iterdir()), inst.stdout

    port = _free_port()
    log_path = home / "code-server.log"
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            common + ["--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry",
                      "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
                      "--disable-file-downloads", str(workspace)],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_http(f"http://127.0.0.1:{port}/healthz", server, 120)
            timings["code_server_start"] = round(time.monotonic() - t0, 2)
            t0 = time.monotonic()
            drive = subprocess.run(
                [node, str(DRIVER_DIR / "drive.js")], cwd=DRIVER_DIR, capture_output=True, text=True, timeout=drive_timeout,
                env=dict(env, CHROMIUM=tools["chromium"], TASKDSL_E2E_OUT=str(out), TASKDSL_E2E_SCENARIO=scenario,
                         TASKDSL_E2E_USER_DATA=str(user_data),
                         TASKDSL_E2E_URL=f"http://127.0.0.1:{port}/?folder={workspace}",
                         TASKDSL_E2E_HOVER=doc_phrase("fresh_context"), TASKDSL_E2E_INPUT="World"))
            timings["drive"] = round(time.monotonic() - t0, 2)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    shutil.copy(log_path, out / "code-server.log")
    # the extension's output channels and the extension host's log, for a failing run
    for pattern in ("logs/*/exthost*/taskdsl.taskdsl/*.log", "logs/*/exthost*/output_logging_*/*Task DSL*.log",
                    "logs/*/exthost*/remoteexthost.log"):
        for log_file in user_data.glob(pattern):
            shutil.copy(log_file, out / log_file.name)

    assert (out / "result.json").exists(), drive.stdout[-3000:] + drive.stderr[-3000:]
    result = json.loads((out / "result.json").read_text())
    result["timings"] = timings
    save_json(out / "result.json", result)
    return result


def test_vscode_problems_hover_completion_and_run(workspace, isolated_env, server_python, tmp_path):
    tools = _tools()
    out = artifact_dir("vscode")
    env = _authoring_setup(workspace, isolated_env)
    result = _session(tools, workspace, env, tmp_path, out, {
        "taskdsl.server.python": str(server_python),
        "taskdsl.model": "taskdsl/replay",  # New Task's model; hello.task.xml runs with its own taskdsl/echo
    }, "full")
    steps = result["steps"]
    for name in ("workbench", "open", "status", "problems", "hover", "completion", "snippets", "run", "status_run",
                 "codelens", "commands"):
        assert name in steps, (name, result)

    assert steps["workbench"]["ok"], steps["workbench"]
    # the language of *.task.xml is the extension's
    assert steps["open"]["ok"] and "Task DSL" in steps["open"]["languageMode"], steps["open"]
    # Problems panel: the server's TD301 diagnostic with its message
    assert steps["problems"]["ok"], steps["problems"]
    td301 = [r for r in steps["problems"]["rows"] if "TD301" in r]
    assert td301 and "fresh_context" in td301[0], steps["problems"]["rows"]
    # hover on <fresh_context>: its schema documentation
    assert steps["hover"]["ok"], steps["hover"]
    assert doc_phrase("fresh_context") in normalize(steps["hover"]["text"])
    # completion after "<" inside <task>: the suggest widget lists the children still allowed
    assert steps["completion"]["ok"], steps["completion"]
    names = completion_names(steps["completion"]["labels"])
    assert {"instructions", "inputs", "model"} <= names, sorted(names)
    # typing the ">" of a start tag inserts its end tag (the extension's auto-close)
    assert steps["completion"]["autoClosed"], steps["completion"]
    assert steps["completion"]["closedLine"] == "<criteria></criteria>", steps["completion"]
    # the status-bar item: the server runs, then the last run
    assert steps["status"]["ok"] and steps["status"]["text"] == "Task DSL", steps["status"]
    assert any("codicon-check" in icon for icon in steps["status"]["icons"]), steps["status"]
    # the extension's snippets are offered for Task DSL files
    assert steps["snippets"]["ok"], steps["snippets"]
    # (the picker lists each snippet as its prefix and description)
    offered = sorted(label.split(" ")[0] for label in steps["snippets"]["labels"])
    assert offered == ["call", "cond", "reduce", "script", "sequential", "task", "template"], steps["snippets"]
    # Run Task from the command palette: asked for the input, then showed the result
    assert steps["run"]["ok"], steps["run"]
    assert steps["run"]["prompted"], steps["run"]
    assert (out / "run.png").exists()
    assert steps["status_run"]["ok"] and "hello" in steps["status_run"]["text"], steps["status_run"]
    assert any("codicon-pass" in icon for icon in steps["status_run"]["icons"]), steps["status_run"]
    # ... and from the "▶ Run task" code lens the server puts above the task
    assert steps["codelens"]["ok"], steps["codelens"]
    _assert_authoring_views(steps, out)
    # Restart Server / Revalidate All / Show Output: the server restarted, diagnostics are back
    assert steps["commands"]["ok"], steps["commands"]
    assert steps["commands"]["restarted"] and steps["commands"]["revalidated"], steps["commands"]


# -- the authoring views: Show Graph, Find Task, New Task from a Description ---------------------


def _authoring_setup(workspace: Path, env: dict[str, str]) -> dict[str, str]:
    """A library file for Find Task, and the replay fixture New Task's model answers from (its
    first answer has checker errors, the repaired second one checks)."""
    (workspace / "lib").mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "lib" / "text.task.xml", workspace / "lib" / "text.task.xml")
    return dict(env, TASKDSL_REPLAY_FILE=str(ROOT / "examples" / "ask" / "replay.json"))


def _assert_authoring_views(steps: dict, out: Path) -> None:
    # Show Graph: the webview shows the server's SVG as a data: image, with the last run on it
    graph = steps.get("graph")
    assert graph and graph["ok"], graph
    assert graph["srcPrefix"].startswith("data:image/svg+xml;base64,"), graph
    assert graph["svgHasSvg"] and graph["svgHasHello"] and graph["svgHasOk"], graph
    assert graph["heading"] == "hello" and graph["tab"].startswith("Graph: hello"), graph
    assert graph["run"] == "Last run: COMPLETE", graph
    assert graph["rows"] and graph["rows"][0].startswith("✓ ok hello atomic "), graph
    assert graph["scripts"] == 0 and graph["csp"].startswith("default-src 'none'; img-src data:;"), graph
    assert (out / "graph.png").exists()
    # Find Task: the picker ranked the library; the chosen template opened at its line
    find = steps.get("find_task")
    assert find and find["ok"], find
    # (a row's text is its label, description and detail: "shout" "standard · 1.00" "Upper-case a text")
    assert find["labels"][0].startswith("shout") and "standard · 1.00 Upper-case a text" in find["labels"][0], find
    assert find["selection"].startswith("Ln 9, Col 1"), find
    # New Task from a Description: the repaired task opened in an untitled Task DSL document
    new = steps.get("new_task")
    assert new and new["ok"], new
    # (the first line ends in the server's inlay hint of the context settings)
    assert new["lines"][0].startswith('<task name="autumn_haiku">') and "</task>" in new["lines"], new
    assert "Task DSL" in new["mode"], new
    assert any("written by taskdsl/replay and repaired in 1 round(s)" in t for t in new["toasts"]), new


DEBUG_PIPELINE = """<task name="pipeline" type="sequential">
  <inputs>
    <input name="word">hello</input>
  </inputs>
  <steps>
    <task>
      <description>{"n": 3, "word": "{{word}}"}</description>
      <output_format type="json"/>
      <model>taskdsl/echo</model>
    </task>
    <task>
      <description>Count {{last_output.word}}</description>
      <model>taskdsl/echo</model>
    </task>
  </steps>
</task>
"""


def test_vscode_debugs_a_template_and_runs_the_tests_from_the_test_explorer(workspace, isolated_env, server_python,
                                                                            tmp_path):
    """F5 on a template stops on entry, continues to a breakpoint on its second step where the Variables
    view shows last_output; "Test: Run All Tests" runs every test of the examples from the Testing view."""
    tools = _tools()
    (workspace / "pipeline.task.xml").write_text(DEBUG_PIPELINE, encoding="utf-8")
    (workspace / "listing.task.xml").write_text(
        '<task name="listing" type="script">\n  <command>echo listed</command>\n</task>\n', encoding="utf-8")
    shutil.copytree(ROOT / "examples", workspace / "examples")
    line = DEBUG_PIPELINE.count("\n", 0, DEBUG_PIPELINE.index("<task>\n      <description>Count")) + 1
    out = artifact_dir("vscode-debug")
    env = dict(isolated_env, TASKDSL_E2E_BREAK_LINE=str(line))
    result = _session(tools, workspace, env, tmp_path, out, {
        "taskdsl.server.python": str(server_python),
        "taskdsl.run.allowScripts": True,  # the examples' script tests run without the question
    }, "debug")
    steps = result["steps"]
    debug = steps.get("debug")
    assert debug and debug["ok"], result
    assert debug["stack"].startswith("steps[2] (atomic)"), debug
    assert debug["variable"].startswith("last_output") and '"word": "hello"' in debug["variable"], debug
    # a script: the plan is asked about first (even with run.allowScripts: a debug launch always asks)
    consent = steps.get("debug_consent")
    assert consent and consent["ok"], result
    assert "$ echo listed" in consent["question"] and "Debug it?" in consent["question"], consent
    assert "listed" in consent["console"], consent
    tests = steps.get("tests")
    assert tests and tests["ok"], result
    expected = subprocess.run([str(server_python), "-m", "taskdsl", "test", "examples", "--format", "json"],
                              cwd=workspace, capture_output=True, text=True, timeout=300)
    reported = json.loads(expected.stdout)["tests"]
    files = sorted({Path(t["file"]).name for t in reported})
    # the Testing view listed every test file of the examples, then ran every test: all passed
    assert sorted(row.split(" ")[0] for row in tests["listed"]) == files, (tests, files)
    assert tests["summary"] == f"{len(reported)}/{len(reported)}", (tests, len(reported))
    assert tests["passedIcons"] >= len(files), tests
    # Debug All Tests debugs them in sessions of the taskdsl debugger (a script's plan asked about first),
    # each test's verdict from its session: all pass again
    debug_tests = steps.get("debug_tests")
    assert debug_tests and debug_tests["ok"], result
    assert debug_tests["summary"] == f"{len(reported)}/{len(reported)}" and debug_tests["agreed"] >= 1, debug_tests


def test_vscode_says_how_to_install_taskdsl(workspace, isolated_env, tmp_path):
    """No interpreter set and a python3 on PATH without taskdsl: the extension offers to install the server
    bundled in its .vsix into its own environment (in its global storage); after Install the server answers
    (diagnostics appear), and a restart reuses that environment. pip takes the dependencies from this
    machine's configured index, with the user's pip cache."""
    tools = _tools()
    bare = tmp_path / "bare-venv"
    subprocess.run([shutil.which("python3") or "python3", "-m", "venv", "--without-pip", str(bare)], check=True)
    assert subprocess.run([str(bare / "bin" / "python3"), "-c", "import taskdsl"], capture_output=True).returncode != 0
    env = dict(isolated_env, PATH=f"{bare / 'bin'}{os.pathsep}{isolated_env['PATH']}")
    env.setdefault("PIP_CACHE_DIR", str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"))
    out = artifact_dir("vscode-not-installed")
    result = _session(tools, workspace, env, tmp_path, out, {}, "not-installed", drive_timeout=1200)
    step = result["steps"].get("not_installed")
    assert step and step["ok"], result
    assert "Install the taskdsl server into the extension's own environment?" in step["offer"], step
    assert [b.strip() for b in step["buttons"]] == ["Install", "Choose interpreter…"], step
    assert step["offeredStatus"]["text"] == "Task DSL: not installed", step
    # the server from the extension's own environment checks the workspace
    td301 = [r for r in step["rows"] if "TD301" in r]
    assert td301 and "fresh_context" in td301[0], step["rows"]
    storage = tmp_path / "user-data" / "User" / "globalStorage" / "taskdsl.taskdsl" / "server-venv"
    marker = json.loads((storage / "taskdsl-wheel.json").read_text())
    import zipfile

    bundled = [Path(n).name for n in zipfile.ZipFile(tools["vsix"]).namelist() if n.startswith("extension/server/")]
    assert bundled == [marker["wheel"]], (bundled, marker)
    # a later start (Restart Server) reused it: installed once, started twice from it, never offered again
    assert step["offeredAgain"] == 0 and any("codicon-check" in i for i in step["status"]["icons"]), step
    log = max((p.read_text() for p in out.glob("*Task DSL*.log")), key=lambda text: text.count("Python:"), default="")
    assert log.count("(from the extension's own environment)") == 2, log[-3000:]
    assert log.count("Installed the taskdsl server into") == 1, log[-3000:]
