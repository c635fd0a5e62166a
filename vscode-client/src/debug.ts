// The `taskdsl` debugger: F5 on a template runs `<python> -m taskdsl debug` (the Debug Adapter Protocol over
// stdio) with the same Python the language server uses. Before a session starts, the plan it would run is
// shown (as the Run Task shows it) when it runs scripts or calls a paid model, and only the plan agreed to runs.
import * as vscode from 'vscode';
import { execFile } from 'child_process';
import { DEBUG_TYPE, LaunchConfig, PlanAnswer, defaultLaunch, initialConfigurations, parsePlan, planQuestion,
  withoutAgreement } from './debugConfig';
import { runRefusal } from './runUtil';

export type PythonOf = () => Promise<string | undefined>;

const NO_PYTHON = 'Task DSL: no Python with taskdsl was found for the debugger: set "taskdsl.server.python" ' +
  '(or run "Task DSL: Show Output" to see why the server did not start).';

function folderPath(folder: vscode.WorkspaceFolder | undefined): string | undefined {
  return folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** What `taskdsl debug --plan` says the configuration would run (nothing runs). */
function planOf(python: string, config: LaunchConfig, cwd: string | undefined): Promise<PlanAnswer> {
  return new Promise((resolve) => {
    const child = execFile(python, ['-m', 'taskdsl', 'debug', '--plan'], { cwd, timeout: 120_000, maxBuffer: 8 << 20 },
      (error, stdout, stderr) => resolve(parsePlan(String(stdout), String(stderr || (error ? error.message : '')))));
    child.stdin?.end(JSON.stringify(config));
  });
}

class Configurations implements vscode.DebugConfigurationProvider {
  constructor(private readonly pythonOf: PythonOf) {}

  provideDebugConfigurations(): vscode.ProviderResult<vscode.DebugConfiguration[]> {
    return initialConfigurations();
  }

  /** F5 without a launch.json: the template in the active editor. */
  resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined,
                            config: vscode.DebugConfiguration): vscode.ProviderResult<vscode.DebugConfiguration> {
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.languageId !== 'taskxml' || editor.document.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('Task DSL: open a template (*.task.xml) to debug it.');
        return undefined;
      }
      return defaultLaunch(editor.document.uri.fsPath);
    }
    return config;
  }

  /** The consent: the plan, asked about when it runs scripts or calls a paid model; its digest is what runs. */
  async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined,
                                                          config: vscode.DebugConfiguration):
    Promise<vscode.DebugConfiguration | undefined> {
    const refusal = runRefusal(vscode.workspace.isTrusted);
    if (refusal) {
      void vscode.window.showWarningMessage(refusal);
      return undefined;
    }
    const launch = withoutAgreement(config as LaunchConfig);
    if (!launch.program) {
      void vscode.window.showErrorMessage('Task DSL: the launch configuration needs "program": the template to debug.');
      return undefined;
    }
    const python = await this.pythonOf();
    if (!python) {
      void vscode.window.showErrorMessage(NO_PYTHON);
      return undefined;
    }
    const answer = await planOf(python, launch, folderPath(folder));
    if (answer.error) {
      void vscode.window.showErrorMessage(`Task DSL: cannot debug: ${answer.error}`, { modal: false });
      return undefined;
    }
    const question = planQuestion(answer);
    if (question) {
      const choice = await vscode.window.showWarningMessage(question, { modal: true }, 'Debug');
      if (choice !== 'Debug') {
        return undefined;
      }
      launch.agreedPlan = answer.digest;
    }
    return launch;
  }
}

class Adapters implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly pythonOf: PythonOf) {}

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const python = await this.pythonOf();
    if (!python) {
      throw new Error(NO_PYTHON);
    }
    return new vscode.DebugAdapterExecutable(python, ['-m', 'taskdsl', 'debug'], {
      cwd: folderPath(session.workspaceFolder),
      env: { PYTHONUNBUFFERED: '1' },
    });
  }
}

export function registerDebugger(pythonOf: PythonOf): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new Configurations(pythonOf)),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new Adapters(pythonOf)),
    vscode.commands.registerCommand('taskdsl.client.debugTask', async (uri?: vscode.Uri) => {
      const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
      if (!target || target.scheme !== 'file') {
        void vscode.window.showInformationMessage('Task DSL: open a template (*.task.xml) to debug it.');
        return false;
      }
      return vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(target), defaultLaunch(target.fsPath));
    }),
  );
}
