"""The extension's trust boundary, read from its manifest: a cloned repository's settings cannot
turn consent off or choose what runs, and an untrusted workspace is checked but never run."""

import json

from paths import REPO

MANIFEST = json.loads((REPO / "vscode-client" / "package.json").read_text(encoding="utf-8"))
SETTINGS = MANIFEST["contributes"]["configuration"]["properties"]


def test_consent_the_interpreter_and_read_permissions_are_machine_scoped():
    # "resource" and "machine-overridable" settings can be set by a workspace's .vscode/settings.json; where runs
    # write (trace.dir: a trusted repository chose a folder its shell sources) and which folders' templates a run
    # compiles (libraryPaths) are the user's, as the project's own trace_dir and library_paths are asked about
    scopes = {name: SETTINGS[name]["scope"] for name in
              ("taskdsl.run.allowScripts", "taskdsl.server.python", "taskdsl.run.allowRead", "taskdsl.trace.dir",
               "taskdsl.libraryPaths")}
    assert scopes == dict.fromkeys(scopes, "machine")


def test_untrusted_workspaces_are_supported_in_limited_mode():
    trust = MANIFEST["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    assert "never runs a task" in trust["description"]
    # in restricted mode VS Code ignores the workspace's values of these
    assert set(trust["restrictedConfigurations"]) >= {"taskdsl.trace.dir", "taskdsl.libraryPaths"}


def test_the_runner_asks_the_trust_helper_before_anything_runs():
    source = (REPO / "vscode-client" / "src" / "run.ts").read_text(encoding="utf-8")
    body = source[source.index("private async run("):]
    gate = body.index("runRefusal(vscode.workspace.isTrusted)")
    assert gate < body.index("sendRequest(")  # the only way a run starts from the editor


def test_the_servers_running_commands_are_refused_before_they_are_sent_from_an_untrusted_workspace():
    # a test's code lens sends taskdsl.runTest through the client's middleware: it asks first
    # (vscode-client/test/trust.test.js holds what commandRefusal and the Test Explorer's Run answer)
    source = (REPO / "vscode-client" / "src" / "extension.ts").read_text(encoding="utf-8")
    body = source[source.index("executeCommand: async (command, args, next) => {"):]
    gate = body.index("commandRefusal(command, vscode.workspace.isTrusted)")
    assert gate < body.index("return undefined;") < body.index("runner.runFromServerCommand(args)")
    assert gate < body.index("return next(command, args);")
    explorer = (REPO / "vscode-client" / "src" / "testExplorer.ts").read_text(encoding="utf-8")
    handler = explorer[explorer.index("async function runHandler("):]
    assert handler.index("runRefusal(vscode.workspace.isTrusted)") < handler.index("command(RUN_TEST")
