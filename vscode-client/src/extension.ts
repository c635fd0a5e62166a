// Task DSL for VS Code: starts `<python> -m taskdsl serve` and wires the editor to it.
import * as vscode from 'vscode';
import {
  DocumentDiagnosticRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { CHECKOUT_PLACEHOLDER, findServer, installCommand } from './python';
import { OwnServer } from './install';
import { SERVER_ARGS } from './serverVenv';
import { RUN_COMMAND, TaskRunner } from './run';
import { commandRefusal } from './runUtil';
import { registerAutoCloseTags } from './autoclose';
import { StatusItem } from './status';
import { registerGraphView } from './graphView';
import { registerNewTask } from './newTask';
import { registerMatchPicker } from './matchPicker';
import { registerDebugger } from './debug';
import { registerTestExplorer } from './testExplorer';

const LANGUAGE_ID = 'taskxml';

let client: LanguageClient | undefined;
let serverChannel: vscode.LogOutputChannel;
let runChannel: vscode.OutputChannel;
let runner: TaskRunner;
let starting: Promise<void> | undefined;
let status: StatusItem;
let own: OwnServer;
/** The Python the language server runs with (the debugger runs `taskdsl debug` with it too). */
let serverPython: string | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  serverChannel = vscode.window.createOutputChannel('Task DSL', { log: true });
  runChannel = vscode.window.createOutputChannel('Task DSL Runs');
  status = new StatusItem();
  own = new OwnServer(context, serverChannel, restart, (state) => status.setServer(state));
  runner = new TaskRunner(() => client, runChannel, (run) => status.setLastRun(run));
  context.subscriptions.push(serverChannel, runChannel, status);

  context.subscriptions.push(
    vscode.commands.registerCommand('taskdsl.client.runTask', (uri?: vscode.Uri | string, task?: string) =>
      runner.runInteractive(uri, task)),
    vscode.commands.registerCommand('taskdsl.client.revalidateAll', revalidateAll),
    vscode.commands.registerCommand('taskdsl.client.restartServer', restart),
    vscode.commands.registerCommand('taskdsl.client.showOutput', () => serverChannel.show(true)),
    vscode.commands.registerCommand('taskdsl.client.showRuns', () => runChannel.show(true)),
    vscode.commands.registerCommand('taskdsl.client.newTemplate', newTemplate),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('taskdsl.server.python') && !ownChoice()) {
        const answer = await vscode.window.showInformationMessage(
          'Task DSL: the Python interpreter changed. Restart the language server?', 'Restart');
        if (answer === 'Restart') {
          await restart();
        }
      }
    }),
    // trust granted: the server learns it at its next initialize (until then it refuses as untrusted)
    vscode.workspace.onDidGrantWorkspaceTrust(() => restart()),
    registerAutoCloseTags(LANGUAGE_ID),
    registerGraphView(() => client),
    registerNewTask(() => client, LANGUAGE_ID),
    registerMatchPicker(() => client),
    registerDebugger(async () => { await starting; return serverPython; }),
    registerTestExplorer(() => client, async () => { await starting; }),
  );

  starting = start();
  await starting;
}

/** Whether the setting now holds the interpreter just picked in the extension's "Choose interpreter…" (it restarts by itself). */
function ownChoice(): boolean {
  const chosen = own.chosenPython;
  own.chosenPython = undefined;
  return chosen !== undefined && vscode.workspace.getConfiguration('taskdsl').get<string>('server.python') === chosen;
}

/** A new untitled template holding the "Atomic task" snippet (the walkthrough's second step). */
async function newTemplate(): Promise<void> {
  const document = await vscode.workspace.openTextDocument({ language: LANGUAGE_ID, content: '' });
  await vscode.window.showTextDocument(document);
  await vscode.commands.executeCommand('editor.action.insertSnippet', { langId: LANGUAGE_ID, name: 'Atomic task' });
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  status.setServer('starting');
  const { python, origin, probed, offerInstall } = await findServer(cwd, () => own.existing());
  serverPython = undefined;
  serverChannel.appendLine(`Python: ${python} (from ${origin})`);
  if (!probed.ok && offerInstall && own.canInstall) {
    serverChannel.appendLine(`No Python with taskdsl (${python}: ${probed.detail}): offering to install the bundled server.`);
    status.setServer('not-installed');
    void own.offer(); // not awaited: activation must not wait for the user to click the message
    return;
  }
  if (!probed.ok) {
    status.setServer(probed.kind === 'no-taskdsl' ? 'not-installed' : 'failed');
    // not awaited: activation must not wait for the user to click the message
    void reportStartFailure(python, origin, probed.kind, probed.detail);
    return;
  }
  serverChannel.appendLine(`taskdsl ${probed.version}: starting "${python} ${SERVER_ARGS.join(' ')}"`);
  serverPython = python;

  const serverOptions: ServerOptions = {
    command: python,
    args: SERVER_ARGS,
    transport: TransportKind.stdio,
    options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: LANGUAGE_ID },
      { scheme: 'untitled', language: LANGUAGE_ID },
    ],
    synchronize: {
      // settings changes are announced with workspace/didChangeConfiguration; the server then
      // pulls the `taskdsl` section with workspace/configuration
      configurationSection: 'taskdsl',
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.task.xml'),
    },
    // the settings as at start (the server pulls them again with workspace/configuration), and
    // what this client does by itself: it asks the user for a run's missing inputs
    initializationOptions: {
      taskdsl: JSON.parse(JSON.stringify(vscode.workspace.getConfiguration('taskdsl'))),
      // an untrusted workspace: the server itself refuses to run a template or ask a model
      client: { promptsForMissingInputs: true, workspaceTrusted: vscode.workspace.isTrusted },
    },
    outputChannel: serverChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      // every `taskdsl.runTask` (code lens, code action) goes through the runner, which
      // prompts for missing inputs and logs the run in "Task DSL Runs"
      executeCommand: async (command, args, next) => {
        const refusal = commandRefusal(command, vscode.workspace.isTrusted);
        if (refusal) {  // a test's code lens (taskdsl.runTest) in an untrusted workspace: nothing runs
          void vscode.window.showWarningMessage(refusal);
          return undefined;
        }
        if (command === RUN_COMMAND) {
          return runner.runFromServerCommand(args);
        }
        return next(command, args);
      },
    },
  };

  const c = new LanguageClient('taskdsl', 'Task DSL', serverOptions, clientOptions);
  client = c;
  c.onDidChangeState((e) => {
    if (client === c) {
      status.setServer(e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped');
    }
    if (e.newState === State.Stopped && client === c) {
      serverChannel.appendLine('The language server stopped.');
    }
  });
  try {
    await c.start();
  } catch (err) {
    serverChannel.appendLine(`Failed to start the language server: ${String(err)}`);
    status.setServer('failed');
    void vscode.window.showErrorMessage(
      `Task DSL: the language server did not start (${python} -m taskdsl serve). See the output for details.`,
      'Show Output').then((choice) => {
      if (choice === 'Show Output') {
        serverChannel.show(true);
      }
    });
  }
}

async function reportStartFailure(python: string, origin: string, kind: string, detail: string): Promise<void> {
  serverChannel.appendLine(`Cannot start the language server: ${detail}`);
  const install = installCommand(python);
  let message: string;
  if (kind === 'no-python') {
    message = `Task DSL: the Python interpreter "${python}" (${origin}) was not found. ` +
      'Set "taskdsl.server.python" to a Python 3.11+ where taskdsl is installed.';
  } else if (kind === 'no-taskdsl') {
    message = `Task DSL: taskdsl is not installed in ${python} (${origin}). ` +
      `It is not on the Python Package Index: install it from a checkout of the taskdsl repository with ` +
      `${install} (replace ${CHECKOUT_PLACEHOLDER} with the checkout's folder, or give a wheel built there ` +
      'with "python -m build"), then run "Task DSL: Restart Server".';
  } else {
    message = `Task DSL: "${python} -c 'import taskdsl'" failed: ${detail.split('\n').slice(-1)[0]}`;
  }
  serverChannel.appendLine(message);
  const actions = kind === 'no-taskdsl'
    ? ['Copy Install Command', 'Open Settings', 'Show Output']
    : ['Open Settings', 'Show Output'];
  const choice = await vscode.window.showErrorMessage(message, ...actions);
  if (choice === 'Copy Install Command') {
    await vscode.env.clipboard.writeText(install);
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'taskdsl.server.python');
  } else if (choice === 'Show Output') {
    serverChannel.show(true);
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (err) {
      serverChannel.appendLine(`Stopping the server: ${String(err)}`);
    }
  }
}

async function restart(): Promise<void> {
  await starting;
  serverChannel.appendLine('Restarting the language server…');
  await stop();
  starting = start();
  await starting;
}

/**
 * Re-checks the templates: the server's command `taskdsl.revalidateAll` when it offers one, else a new pull of
 * every open document's diagnostics, else a restart (which re-indexes the workspace).
 */
async function revalidateAll(): Promise<void> {
  await starting;
  const c = client;
  if (!c || !c.isRunning()) {
    await restart();
    return;
  }
  const commands: string[] = c.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  if (commands.includes('taskdsl.revalidateAll')) {
    serverChannel.appendLine('Revalidating the open templates (taskdsl.revalidateAll).');
    await c.sendRequest('workspace/executeCommand', { command: 'taskdsl.revalidateAll', arguments: [] });
    return;
  }
  // Pull diagnostics (VS Code's usual mode): ask again for every open document's diagnostics.
  if (c.initializeResult?.capabilities.diagnosticProvider) {
    const feature = c.getFeature(DocumentDiagnosticRequest.method);
    if (feature && typeof feature.refresh === 'function') {
      feature.refresh();
      serverChannel.appendLine('Revalidating the open templates.');
      return;
    }
  }
  // Fallback: a restart re-indexes the workspace and re-checks every open document.
  serverChannel.appendLine('Revalidating the open templates (by restarting the server).');
  await restart();
}
