// "Task DSL: Run Task": runs a template through the server command `taskdsl.runTask(uri, task?, inputs?)`,
// asking for missing inputs with input boxes and logging each run in the "Task DSL Runs" channel.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, ResponseError } from 'vscode-languageclient/node';
import { libraryTaskNames, missingInputs, runRefusal } from './runUtil';
import { LastRun } from './statusText';
import { runFinished } from './runEvents';

export const RUN_COMMAND = 'taskdsl.runTask';
const MAX_ROUNDS = 20;

type Inputs = Record<string, unknown>;

export class TaskRunner {
  private counter = 0;

  constructor(private readonly getClient: () => LanguageClient | undefined,
              private readonly channel: vscode.OutputChannel,
              private readonly onFinished: (run: LastRun) => void = () => undefined) {}

  /** The palette command: the active (or given) file, a task picked for a library file. */
  async runInteractive(target?: vscode.Uri | string, task?: string): Promise<unknown> {
    let uri: vscode.Uri | undefined;
    if (typeof target === 'string') {
      uri = vscode.Uri.parse(target);
    } else if (target instanceof vscode.Uri) {
      uri = target;
    } else {
      uri = vscode.window.activeTextEditor?.document.uri;
    }
    if (!uri) {
      vscode.window.showWarningMessage('Task DSL: open a template (*.task.xml) to run it.');
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    if (task === undefined) {
      const names = libraryTaskNames(doc.getText());
      if (names.length > 0) {
        task = await vscode.window.showQuickPick(names, {
          title: 'Task DSL: Run Task', placeHolder: 'Which task or template of this library?', ignoreFocusOut: true,
        });
        if (task === undefined) {
          return undefined;
        }
      }
    }
    return this.run(uri.toString(), task, {}, undefined);
  }

  /** `taskdsl.runTask` invoked from a code lens or code action of the server (arguments as the server sent them). */
  async runFromServerCommand(args: unknown[]): Promise<unknown> {
    const [uriArg, taskArg, inputsArg, modelArg] = args ?? [];
    let uri = typeof uriArg === 'string' ? uriArg : (uriArg as any)?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      return undefined;
    }
    const task = typeof taskArg === 'string' && taskArg ? taskArg : undefined;
    const inputs = inputsArg && typeof inputsArg === 'object' ? { ...(inputsArg as Inputs) } : {};
    const model = typeof modelArg === 'string' && modelArg ? modelArg : undefined;
    return this.run(uri, task, inputs, model);
  }

  private async run(uri: string, task: string | undefined, inputs: Inputs, model: string | undefined): Promise<unknown> {
    const refusal = runRefusal(vscode.workspace.isTrusted);
    if (refusal) {
      void vscode.window.showWarningMessage(refusal, 'Manage Workspace Trust').then((choice) => {
        if (choice) {
          void vscode.commands.executeCommand('workbench.trust.manage');
        }
      });
      return undefined;
    }
    const client = this.getClient();
    if (!client || !client.isRunning()) {
      const choice = await vscode.window.showErrorMessage(
        'Task DSL: the language server is not running, so the task cannot run.', 'Show Output');
      if (choice === 'Show Output') {
        vscode.commands.executeCommand('taskdsl.client.showOutput');
      }
      return undefined;
    }
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    const label = `${vscode.workspace.asRelativePath(vscode.Uri.parse(uri))}${task ? ` (${task})` : ''}`;
    const n = ++this.counter;
    const asked = new Set<string>();
    this.channel.show(true);

    for (let round = 0; round < MAX_ROUNDS; round++) {
      const args: unknown[] = [uri];
      if (task !== undefined || Object.keys(inputs).length > 0 || model !== undefined) {
        args.push(task ?? null, inputs);
        if (model !== undefined) {
          args.push(model);
        }
      }
      if (round === 0) {
        this.channel.appendLine(`[run ${n}] ▶ ${label}${doc?.isDirty ? ' (unsaved changes included)' : ''}`);
      }
      if (Object.keys(inputs).length > 0) {
        this.channel.appendLine(`[run ${n}]   inputs: ${JSON.stringify(inputs)}`);
      }
      const t0 = Date.now();
      let result: unknown;
      let failure: unknown;
      try {
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Task DSL: running ${label}`, cancellable: true },
          (_progress, token) => client.sendRequest(ExecuteCommandRequest.type, { command: RUN_COMMAND, arguments: args }, token));
      } catch (err) {
        failure = err;
      }
      if (failure instanceof ResponseError && failure.code === -32800) { // RequestCancelled
        this.channel.appendLine(`[run ${n}] cancelled`);
        return undefined;
      }
      const problem = failure ?? (isFailed(result) ? result : undefined);
      const missing = problem !== undefined ? missingInputs(problem).filter((m) => !(m in inputs) || !asked.has(m)) : [];
      if (missing.length > 0) {
        const fresh = missing.filter((m) => !asked.has(m));
        if (fresh.length === 0) {
          break; // asked already and the server still refuses: report it below
        }
        for (const name of fresh) {
          const value = await vscode.window.showInputBox({
            title: `Task DSL: Run ${label}`,
            prompt: `Value for the input "${name}"`,
            placeHolder: name,
            ignoreFocusOut: true,
          });
          if (value === undefined) {
            this.channel.appendLine(`[run ${n}] cancelled (no value for "${name}")`);
            return undefined;
          }
          inputs[name] = value;
          asked.add(name);
        }
        continue;
      }
      const seconds = ((Date.now() - t0) / 1000).toFixed(1);
      if (failure !== undefined) {
        const message = errorMessage(failure);
        this.channel.appendLine(`[run ${n}] ✗ failed after ${seconds}s: ${message}`);
        this.onFinished({ label, ok: false, seconds });
        const data = failure instanceof ResponseError ? failure.data : undefined;
        if (data !== undefined && data !== null) {
          this.channel.appendLine(indent(JSON.stringify(data, null, 2)));
        }
        vscode.window.showErrorMessage(`Task DSL: run of ${label} failed: ${message}`, 'Show Runs')
          .then((c) => c && this.channel.show(true));
        return undefined;
      }
      this.report(n, label, result, seconds);
      runFinished.fire({ uri, task, result });
      return result;
    }
    this.channel.appendLine(`[run ${n}] ✗ the server kept asking for inputs; giving up`);
    vscode.window.showErrorMessage(`Task DSL: run of ${label} needs inputs that were not accepted.`);
    return undefined;
  }

  private report(n: number, label: string, result: unknown, seconds: string): void {
    const r = (result ?? {}) as Record<string, any>;
    const status: string = typeof r.status === 'string' ? r.status : (r.error ? 'FAILED' : 'COMPLETE');
    const ok = !/FAIL/i.test(status);
    this.channel.appendLine(`[run ${n}] ${ok ? '✓' : '✗'} ${status} in ${seconds}s`);
    this.onFinished({ label, ok, seconds });
    const content = r.content ?? r.output ?? (typeof result === 'string' ? result : undefined);
    if (content !== undefined) {
      this.channel.appendLine(`[run ${n}] result:`);
      this.channel.appendLine(indent(typeof content === 'string' ? content : JSON.stringify(content, null, 2)));
    }
    if (r.error) {
      this.channel.appendLine(`[run ${n}] error: ${typeof r.error === 'string' ? r.error : JSON.stringify(r.error)}`);
    }
    if (r.trace || r.trace_path || r.tracePath) {
      this.channel.appendLine(`[run ${n}] trace: ${r.trace ?? r.trace_path ?? r.tracePath}`);
    }
    if (content === undefined && !r.error) {
      this.channel.appendLine(indent(JSON.stringify(result, null, 2) ?? 'no result'));
    }
    const msg = ok ? `Task DSL: ${label} finished (${status}).` : `Task DSL: ${label} failed (${status}).`;
    (ok ? vscode.window.showInformationMessage : vscode.window.showErrorMessage)(msg, 'Show Runs')
      .then((c) => c && this.channel.show(true));
  }
}

function indent(text: string): string {
  return text.split('\n').map((l) => `    ${l}`).join('\n');
}

function isFailed(result: unknown): boolean {
  const r = result as Record<string, unknown> | null | undefined;
  return !!r && typeof r === 'object' && typeof r.status === 'string' && /FAIL/i.test(r.status);
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  return String(err);
}
