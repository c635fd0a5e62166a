// VS Code's Test Explorer for taskdsl: every <test> of the project's *.test.xml files, listed by the server
// (`taskdsl.listTests`), run through `taskdsl.runTest` (the consent of Run Task), failures shown with the
// condition expected and the actual output; Debug starts the `taskdsl` debugger on the test.
import * as vscode from 'vscode';
import * as path from 'path';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { testLaunch } from './debugConfig';
import { ListedFile, Range, listedFiles, testId, verdicts } from './testResults';
import { runRefusal } from './runUtil';

const LIST_TESTS = 'taskdsl.listTests';
const RUN_TEST = 'taskdsl.runTest';

function range(r: Range | null | undefined): vscode.Range | undefined {
  return r ? new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character) : undefined;
}

export function registerTestExplorer(getClient: () => LanguageClient | undefined,
                                     ready: () => Promise<void>): vscode.Disposable {
  const controller = vscode.tests.createTestController('taskdsl', 'Task DSL');
  const timers = new Map<string, NodeJS.Timeout>();

  async function command(name: string, args: unknown[]): Promise<unknown> {
    await ready();
    const client = getClient();
    if (!client || !client.isRunning()) {
      throw new Error('the Task DSL language server is not running');
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: args });
  }

  function show(file: ListedFile): void {
    const uri = vscode.Uri.parse(file.uri);
    const item = controller.items.get(file.uri) ?? controller.createTestItem(file.uri, path.basename(file.path), uri);
    item.children.replace(file.tests.map((t) => {
      const child = controller.createTestItem(testId(file.uri, t.name), t.name, uri);
      child.range = range(t.range);
      child.description = t.task;
      return child;
    }));
    controller.items.add(item);
  }

  async function refreshAll(): Promise<void> {
    const files = listedFiles(await command(LIST_TESTS, []));
    controller.items.replace([]);
    files.forEach(show);
  }

  async function refreshFile(uri: vscode.Uri): Promise<void> {
    const files = listedFiles(await command(LIST_TESTS, [{ uri: uri.toString() }]));
    if (files.length === 0) {
      controller.items.delete(uri.toString());
    }
    files.forEach(show);
  }

  function later(uri: vscode.Uri): void {
    const key = uri.toString();
    clearTimeout(timers.get(key));
    timers.set(key, setTimeout(() => { timers.delete(key); void refreshFile(uri).catch(() => undefined); }, 300));
  }

  controller.resolveHandler = async (item) => {
    if (!item) {
      await refreshAll().catch(() => undefined);
    }
  };
  controller.refreshHandler = async () => { await refreshAll(); };

  async function runHandler(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const run = controller.createTestRun(request);
    const wanted: vscode.TestItem[] = [];
    (request.include ?? [...iterate(controller.items)]).forEach((item) => wanted.push(item));
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    const refusal = runRefusal(vscode.workspace.isTrusted);
    if (refusal) {  // an untrusted workspace: its tests are listed and checked, never run
      for (const item of wanted.filter((i) => !excluded.has(i.id))) {
        (item.parent ? [item] : [...iterate(item.children)]).forEach((leaf) => run.skipped(leaf));
      }
      run.appendOutput(refusal + '\r\n');
      void vscode.window.showWarningMessage(refusal);
      run.end();
      return;
    }
    for (const item of wanted) {
      if (token.isCancellationRequested || excluded.has(item.id)) {
        continue;
      }
      const file = item.parent ?? item;
      const leaves = item.parent ? [item] : [...iterate(item.children)].filter((c) => !excluded.has(c.id));
      leaves.forEach((leaf) => run.started(leaf));
      let answer: unknown;
      try {
        answer = await command(RUN_TEST, [{ uri: file.id, name: item.parent ? item.label : undefined, wait: true }]);
      } catch (err) {
        leaves.forEach((leaf) => run.errored(leaf, new vscode.TestMessage(String(err))));
        continue;
      }
      const { byName, error } = verdicts(answer);
      for (const leaf of leaves) {
        const verdict = byName.get(leaf.label);
        if (error || !verdict) {
          run.errored(leaf, new vscode.TestMessage(error ?? 'no result'));
        } else if (verdict.kind === 'passed') {
          run.passed(leaf);
        } else if (verdict.kind === 'failed') {
          const message = verdict.expected !== undefined
            ? vscode.TestMessage.diff(verdict.message, verdict.expected, verdict.actual)
            : new vscode.TestMessage(verdict.message);
          const where = range(verdict.range);
          if (where && leaf.uri) {
            message.location = new vscode.Location(leaf.uri, where);
          }
          run.failed(leaf, message);
        } else if (verdict.kind === 'skipped') {
          run.skipped(leaf);
        } else {
          run.errored(leaf, new vscode.TestMessage(verdict.message));
        }
      }
    }
    run.end();
  }

  // what each debug session of a test ended with: its exit code (0: the test passed) and what it said on stderr
  const endings = new Map<string, { code?: number; said: string[] }>();
  const tracker = vscode.debug.registerDebugAdapterTrackerFactory('taskdsl', {
    createDebugAdapterTracker(session) {
      const ending = { code: undefined as number | undefined, said: [] as string[] };
      endings.set(session.id, ending);
      return {
        onDidSendMessage(m: any) {
          if (m?.type === 'event' && m.event === 'exited') {
            ending.code = m.body?.exitCode;
          } else if (m?.type === 'event' && m.event === 'output' && m.body?.category === 'stderr') {
            ending.said.push(String(m.body.output ?? '').trim());
          }
        },
      };
    },
  });

  /** Debug each test asked for, one session after another; each one's verdict is the test's result. */
  async function debugHandler(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const excluded = new Set((request.exclude ?? []).map((i) => i.id));
    const leaves: vscode.TestItem[] = [];
    for (const item of request.include ?? [...iterate(controller.items)]) {
      (item.parent ? [item] : [...iterate(item.children)]).filter((l) => !excluded.has(l.id)).forEach((l) => leaves.push(l));
    }
    const run = controller.createTestRun(request);
    for (const leaf of leaves) {
      if (token.isCancellationRequested || !leaf.uri) {
        break;
      }
      run.started(leaf);
      let started: vscode.DebugSession | undefined;
      const ended = new Promise<void>((resolve) => {
        const done = vscode.debug.onDidTerminateDebugSession((s) => {
          if (started && s.id === started.id) { done.dispose(); resolve(); }
        });
      });
      const begin = vscode.debug.onDidStartDebugSession((s) => { started = started ?? s; });
      const ok = await vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(leaf.uri),
        testLaunch(leaf.uri.fsPath, leaf.label), { testRun: run });
      begin.dispose();
      if (!ok || !started) {
        run.skipped(leaf);
        continue;
      }
      await ended;
      const ending = endings.get(started.id);
      endings.delete(started.id);
      if (ending?.code === 0) {
        run.passed(leaf);
      } else {
        run.failed(leaf, new vscode.TestMessage(ending?.said.filter(Boolean).join('\n') || 'the debug session ended early'));
      }
    }
    run.end();
  }

  const watcher = vscode.workspace.createFileSystemWatcher('**/*.test.xml');
  return vscode.Disposable.from(
    controller,
    watcher,
    tracker,
    controller.createRunProfile('Run', vscode.TestRunProfileKind.Run, runHandler, true),
    controller.createRunProfile('Debug', vscode.TestRunProfileKind.Debug, debugHandler, true),
    watcher.onDidCreate(later),
    watcher.onDidChange(later),
    watcher.onDidDelete((uri) => controller.items.delete(uri.toString())),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme === 'file' && e.document.uri.path.endsWith('.test.xml')) {
        later(e.document.uri);
      }
    }),
  );
}

function* iterate(collection: vscode.TestItemCollection): Generator<vscode.TestItem> {
  const items: vscode.TestItem[] = [];
  collection.forEach((item) => items.push(item));
  yield* items;
}
