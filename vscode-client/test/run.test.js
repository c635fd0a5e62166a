// Unit tests of the run helpers that need no editor: `npm test` (bundles src/runUtil.ts first).
const test = require('node:test');
const assert = require('node:assert');

const { missingInputs, libraryTaskNames } = require('../out/test/runUtil.js');
const { ResponseError } = require('vscode-jsonrpc');

test('missing inputs from the structured result of taskdsl.runTask', () => {
  const result = { status: 'FAILED', content: '', error: { reason: 'missing_input', message: "cannot run 'hello': input 'name' has no value", missing: ['name'] } };
  assert.deepStrictEqual(missingInputs(result), ['name']);
  assert.deepStrictEqual(missingInputs(new ResponseError(-32602, 'bad', { missingInputs: ['a', 'b'] })), ['a', 'b']);
  assert.deepStrictEqual(missingInputs({ error: { reason: 'missing_input', input: 'topic' } }), ['topic']);
});

test('missing inputs from messages', () => {
  assert.deepStrictEqual(missingInputs(new Error("cannot run 'x': input 'name' has no value; pass it")), ['name']);
  assert.deepStrictEqual(missingInputs(new Error("inputs 'a', 'b' have no value")), ['a', 'b']);
  assert.deepStrictEqual(missingInputs(new Error('Missing required inputs: first, second')), ['first', 'second']);
  assert.deepStrictEqual(missingInputs(new Error('input `topic` is required')), ['topic']);
  assert.deepStrictEqual(missingInputs(new Error('model call failed: timeout')), []);
  assert.deepStrictEqual(missingInputs({ status: 'COMPLETE', content: 'hi' }), []);
});

test('library task names', () => {
  const lib = `<?xml version="1.0"?>
<!-- <template name="commented"/> -->
<library>
  <template name="summarise" params="text"><task><description>{{text}}</description></task></template>
  <task name="greet" type="atomic"><description>hi</description><steps><task name="inner"/></steps></task>
</library>`;
  assert.deepStrictEqual(libraryTaskNames(lib), ['summarise', 'greet']);
  assert.deepStrictEqual(libraryTaskNames('<task name="solo"><description>x</description></task>'), []);
});

test('an untrusted workspace never runs, and says how to trust it', () => {
  const { runRefusal } = require('../out/test/runUtil.js');
  assert.strictEqual(runRefusal(true), undefined);
  assert.match(runRefusal(false), /not trusted, so its tasks do not run and no model is asked \(checking still works\)/);
  assert.match(runRefusal(false), /Workspaces: Manage Workspace Trust/);
});
