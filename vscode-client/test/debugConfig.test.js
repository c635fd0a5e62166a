// Unit tests of the `taskdsl` debugger's launch configurations and its consent question:
// `npm test` (bundles src/debugConfig.ts first).
const test = require('node:test');
const assert = require('node:assert');
const pkg = require('../package.json');

const { defaultLaunch, initialConfigurations, testLaunch, withoutAgreement, parsePlan, planQuestion } =
  require('../out/test/debugConfig.js');

test('F5 without a launch.json debugs the active template, stopping on entry', () => {
  assert.deepStrictEqual(defaultLaunch('/w/a.task.xml'),
    { type: 'taskdsl', request: 'launch', name: 'Debug template', program: '/w/a.task.xml', stopOnEntry: true });
  assert.deepStrictEqual(initialConfigurations()[0].program, '${file}');
  // what the code offers is what package.json contributes
  assert.deepStrictEqual(pkg.contributes.debuggers[0].initialConfigurations, initialConfigurations());
  assert.deepStrictEqual(pkg.contributes.debuggers[0].type, 'taskdsl');
});

test('a test is debugged through its file and name', () => {
  assert.deepStrictEqual(testLaunch('/w/t.test.xml', 'says hi'),
    { type: 'taskdsl', request: 'launch', name: 'Debug test says hi', program: '/w/t.test.xml', test: 'says hi' });
});

test("a workspace's launch.json never agrees to a plan for the user", () => {
  const config = { type: 'taskdsl', request: 'launch', name: 'x', program: 'a', agreedPlan: 'f'.repeat(64) };
  assert.strictEqual('agreedPlan' in withoutAgreement(config), false);
  assert.strictEqual(config.agreedPlan, 'f'.repeat(64)); // the original is left as it was
});

test('the plan answer: asked about only when it needs consent', () => {
  const asked = parsePlan(JSON.stringify({ reasons: ['scripts'], plan: "Running 'x' will:\n  $ echo hi", digest: 'ab' }));
  assert.deepStrictEqual(asked, { reasons: ['scripts'], plan: "Running 'x' will:\n  $ echo hi", digest: 'ab' });
  assert.strictEqual(planQuestion(asked), "Running 'x' will:\n  $ echo hi\nDebug it?");
  assert.strictEqual(planQuestion(parsePlan(JSON.stringify({ reasons: [], plan: 'p', digest: 'd' }))), undefined);
  assert.deepStrictEqual(parsePlan(JSON.stringify({ error: 'a.task.xml: no such file' })), { error: 'a.task.xml: no such file' });
  assert.deepStrictEqual(parsePlan('', 'Traceback\nModuleNotFoundError: No module named taskdsl'),
    { error: 'taskdsl debug --plan failed: ModuleNotFoundError: No module named taskdsl' });
  assert.strictEqual(planQuestion(parsePlan('[1]')), undefined);
});
