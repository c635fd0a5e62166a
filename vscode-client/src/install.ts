// The first start without a taskdsl server: the extension offers to install the server bundled in the
// .vsix into its own environment (a venv in its global storage folder), reuses it on later starts and
// re-installs it when an update brings another wheel.
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as path from 'path';
import {
  basePythonAdvice, BundledWheel, bundledWheel, checkBasePython, installServer, lastLines, Running, StepFailure,
  VENV_FOLDER, venvPython, venvState,
} from './serverVenv';
import { ServerState } from './statusText';

export const OFFER = "Install the taskdsl server into the extension's own environment?";
const BASE_PYTHON = 'python3';

export class OwnServer {
  private readonly wheel: BundledWheel | undefined;
  private installing: Promise<boolean> | undefined;
  /** the interpreter the user just picked with "Choose interpreter…" (its setting change needs no question) */
  chosenPython: string | undefined;

  constructor(private readonly context: vscode.ExtensionContext, private readonly channel: vscode.LogOutputChannel,
    private readonly restart: () => Promise<void>, private readonly setStatus: (state: ServerState) => void) {
    this.wheel = bundledWheel(context.extensionPath);
  }

  get venvDir(): string {
    return path.join(this.context.globalStorageUri.fsPath, VENV_FOLDER);
  }

  /** Whether this build carries a wheel (a development build from the repository may not). */
  get canInstall(): boolean {
    return this.wheel !== undefined;
  }

  /** The own environment's Python when it was installed before; after an update with another wheel,
   * that wheel is installed first (the user agreed to the own environment once). */
  async existing(): Promise<string | undefined> {
    if (!this.wheel) {
      return undefined;
    }
    const state = venvState(this.venvDir, this.wheel);
    if (state === 'absent') {
      return undefined;
    }
    if (state === 'outdated') {
      this.channel.appendLine(`The bundled server changed (${path.basename(this.wheel.file)}): re-installing it.`);
      if (!(await this.install())) {
        return undefined;
      }
    }
    return venvPython(this.venvDir);
  }

  /** One notification: install into the own environment, or choose an interpreter. Not awaited by a start. */
  async offer(): Promise<void> {
    const choice = await vscode.window.showInformationMessage(
      `Task DSL: no Python with taskdsl was found. ${OFFER}`, 'Install', 'Choose interpreter…');
    if (choice === 'Install') {
      if (await this.install()) {
        await this.restart();
      }
    } else if (choice === 'Choose interpreter…') {
      await this.chooseInterpreter();
    }
  }

  /** Installs the bundled wheel with a progress notification; false (after saying why) on failure. */
  install(): Promise<boolean> {
    this.setStatus('starting');
    this.installing ??= this.installOnce().then((ok) => {
      this.setStatus(ok ? 'starting' : 'not-installed');
      return ok;
    }).finally(() => {
      this.installing = undefined;
    });
    return this.installing;
  }

  private async installOnce(): Promise<boolean> {
    const wheel = this.wheel;
    if (!wheel) {
      return false;
    }
    const storage = path.dirname(this.venvDir);
    fs.mkdirSync(storage, { recursive: true });
    const base = await checkBasePython(BASE_PYTHON, storage);
    if (!base.ok) {
      const advice = basePythonAdvice(BASE_PYTHON, base);
      this.channel.appendLine(`Cannot install the taskdsl server: ${advice}`);
      void this.failed(`Task DSL: cannot install the taskdsl server: ${advice}`);
      return false;
    }
    this.channel.appendLine(`Installing ${path.basename(wheel.file)} into ${this.venvDir} with ${BASE_PYTHON} (Python ${base.version})`);
    let failure: StepFailure | undefined;
    let cancelled = false;
    await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification,
      title: 'Task DSL: installing the taskdsl server',
      cancellable: true,
    }, async (progress, token) => {
      let current: Running | undefined;
      token.onCancellationRequested(() => {
        cancelled = true;
        current?.cancel();
      });
      failure = await installServer(BASE_PYTHON, this.venvDir, wheel, (line) => this.channel.appendLine(line),
        (running, title) => {
          current = running;
          progress.report({ message: `${title}…` });
          if (cancelled) {
            running.cancel();
          }
        });
    });
    if (cancelled) {
      this.channel.appendLine('The install was cancelled.');
      void this.failed('Task DSL: the install of the taskdsl server was cancelled.');
      return false;
    }
    if (failure) {
      this.channel.appendLine(`Failed: ${failure.command} (exit code ${failure.code})`);
      void this.failed(`Task DSL: installing the taskdsl server failed (${path.basename(failure.command.split(' ')[0])} ` +
        `exited with ${failure.code}): ${lastLines(failure.tail, 3)}`);
      return false;
    }
    this.channel.appendLine(`Installed the taskdsl server into ${this.venvDir}`);
    return true;
  }

  private async failed(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Show Output', 'Choose interpreter…');
    if (choice === 'Show Output') {
      this.channel.show(true);
    } else if (choice === 'Choose interpreter…') {
      await this.chooseInterpreter();
    }
  }

  /** A file dialog for a Python executable; the choice becomes the user setting taskdsl.server.python. */
  private async chooseInterpreter(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false, canSelectFolders: false, openLabel: 'Use this Python',
      title: 'Task DSL: the Python interpreter where taskdsl is installed',
    });
    const python = picked?.[0]?.fsPath;
    if (!python) {
      return;
    }
    this.chosenPython = python;
    await vscode.workspace.getConfiguration('taskdsl').update('server.python', python, vscode.ConfigurationTarget.Global);
    await this.restart();
  }
}
