// The untrusted-workspace return of the Test Explorer's Run, of New Task and of the server's running commands, with a
// stand-in for the `vscode` module (no editor needed; the language client stubbed too): `npm test` bundles src/testExplorer.ts first.
const test = require('node:test');
const assert = require('node:assert');
const Module = require('node:module');

function fakeVscode(trusted) {
  const warnings = [];
  const profiles = [];
  const items = new Map();
  const collection = (owner) => {
    const map = new Map();
    return {
      get: (id) => map.get(id), add: (i) => { i.parent = owner; map.set(i.id, i); }, delete: (id) => map.delete(id),
      replace: (list) => { map.clear(); list.forEach((i) => { i.parent = owner; map.set(i.id, i); }); },
      forEach: (f) => map.forEach((i) => f(i)), get size() { return map.size; },
    };
  };
  const controller = {
    items: collection(undefined),
    createTestItem: (id, label, uri) => { const item = { id, label, uri }; item.children = collection(item); items.set(id, item); return item; },
    createRunProfile: (label, kind, handler) => { profiles.push({ label, handler }); return { dispose() {} }; },
    createTestRun: () => {
      const run = { skipped: [], started: [], output: '', ended: false };
      return Object.assign(run, {
        skipped: (l) => run.skippedItems.push(l.label), started: (l) => run.startedItems.push(l.label),
        passed() {}, failed() {}, errored() {}, appendOutput: (t) => { run.output += t; }, end: () => { run.ended = true; },
        skippedItems: [], startedItems: [],
      });
    },
    dispose() {},
  };
  let lastRun;
  const createTestRun = controller.createTestRun;
  controller.createTestRun = (r) => (lastRun = createTestRun(r));
  const disposable = { dispose() {} };
  const vscode = {
    workspace: { isTrusted: trusted, createFileSystemWatcher: () => ({ onDidCreate: () => disposable, onDidChange: () => disposable, onDidDelete: () => disposable, dispose() {} }),
                 onDidChangeTextDocument: () => disposable },
    window: { showWarningMessage: async (m) => { warnings.push(m); return undefined; } },
    tests: { createTestController: () => controller },
    debug: { registerDebugAdapterTrackerFactory: () => disposable },
    Disposable: { from: () => disposable },
    TestRunProfileKind: { Run: 1, Debug: 2 },
    TestMessage: class { constructor(m) { this.message = m; } },
    Range: class {}, Location: class {},
    Uri: { parse: (s) => ({ toString: () => s, fsPath: s.replace('file://', '') }) },
  };
  return { vscode, warnings, profiles, controller, run: () => lastRun };
}

function load(fake, bundleName = 'testExplorer') {
  const resolve = Module._resolveFilename;
  const stubs = {  // the editor's API, and the language client's (only its request type is used)
    vscode: fake.vscode,
    'vscode-languageclient/node': { ExecuteCommandRequest: { type: 'workspace/executeCommand' } },
  };
  Module._resolveFilename = function (request, ...rest) {
    return request in stubs ? request : resolve.call(this, request, ...rest);
  };
  for (const [name, exports] of Object.entries(stubs)) {
    require.cache[name] = { id: name, filename: name, loaded: true, exports };
  }
  const bundle = require.resolve(`../out/test/${bundleName}.js`);
  delete require.cache[bundle];
  try {
    return require(bundle);
  } finally {
    Module._resolveFilename = resolve;
  }
}

async function runAll(trusted) {
  const fake = fakeVscode(trusted);
  const sent = [];
  const client = { isRunning: () => true, sendRequest: async (type, params) => { sent.push(params.command); return { tests: [] }; } };
  const { registerTestExplorer } = load(fake);
  registerTestExplorer(() => client, async () => undefined);
  const file = fake.controller.createTestItem('file:///ws/a.test.xml', 'a.test.xml', undefined);
  file.children.replace([fake.controller.createTestItem('file:///ws/a.test.xml#one', 'one', undefined)]);
  fake.controller.items.add(file);
  const run = fake.profiles.find((p) => p.label === 'Run');
  await run.handler({ include: undefined, exclude: [] }, { isCancellationRequested: false });
  return { fake, sent, run: fake.run() };
}

test('an untrusted workspace: the Test Explorer runs nothing and says why', async () => {
  const { fake, sent, run } = await runAll(false);
  assert.deepStrictEqual(sent, []);  // taskdsl.runTest never reached the server
  assert.deepStrictEqual(run.skippedItems, ['one']);
  assert.ok(run.ended);
  assert.match(run.output, /not trusted, so its tasks do not run/);
  assert.match(fake.warnings[0], /Workspaces: Manage Workspace Trust/);
});

test('a trusted workspace: the same Run sends taskdsl.runTest', async () => {
  const { sent, run } = await runAll(true);
  assert.deepStrictEqual(sent, ['taskdsl.runTest']);
  assert.deepStrictEqual(run.startedItems, ['one']);
});

test("the server's running commands are refused when untrusted, the others pass", () => {
  const { commandRefusal } = require('../out/test/runUtil.js');
  for (const command of ['taskdsl.runTask', 'taskdsl.runTest', 'taskdsl.newTask']) {
    assert.match(commandRefusal(command, false), /not trusted/);
    assert.strictEqual(commandRefusal(command, true), undefined);
  }
  for (const command of ['taskdsl.listTests', 'taskdsl.previewPrompt', 'taskdsl.graph']) {
    assert.strictEqual(commandRefusal(command, false), undefined);
  }
});

async function newTaskFrom(trusted) {
  const warnings = [];
  const sent = [];
  const opened = [];
  let handler;
  const vscode = {
    workspace: { isTrusted: trusted, openTextDocument: async (d) => { opened.push(d.content); return d; } },
    window: {
      showWarningMessage: async (m) => { warnings.push(m); return undefined; },
      showErrorMessage: async () => undefined, showInformationMessage: async () => undefined,
      showInputBox: async () => 'summarise a text', showTextDocument: async () => undefined,
      withProgress: (options, task) => task({}, {}),
    },
    commands: { registerCommand: (name, f) => { handler = f; return { dispose() {} }; } },
    ProgressLocation: { Notification: 15 },
  };
  const client = {
    isRunning: () => true,
    sendRequest: async (type, params) => { sent.push(params.command); return { xml: '<task name="t"/>', source: 'library', match: { name: 's', score: 1 }, rounds: 0, error: null }; },
  };
  const { registerNewTask } = load({ vscode }, 'newTask');
  registerNewTask(() => client, 'taskxml');
  await handler('summarise a text in three bullet points');
  return { warnings, sent, opened };
}

test('an untrusted workspace: New Task asks no model and says why', async () => {
  const { warnings, sent, opened } = await newTaskFrom(false);
  assert.deepStrictEqual(sent, []);  // taskdsl.newTask never reached the server
  assert.deepStrictEqual(opened, []);
  assert.match(warnings[0], /not trusted, so its tasks do not run and no model is asked/);
});

test('a trusted workspace: New Task sends taskdsl.newTask and opens the task', async () => {
  const { warnings, sent, opened } = await newTaskFrom(true);
  assert.deepStrictEqual(sent, ['taskdsl.newTask']);
  assert.deepStrictEqual(opened, ['<task name="t"/>']);
  assert.deepStrictEqual(warnings, []);
});
