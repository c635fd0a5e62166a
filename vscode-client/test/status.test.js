// Unit tests of what the status-bar item says: `npm test` (bundles src/statusText.ts first).
const test = require('node:test');
const assert = require('node:assert');

const { describeServer, describeRun } = require('../out/test/statusText.js');

test('the server state in the status bar', () => {
  assert.deepStrictEqual(describeServer('running').text, '$(check) Task DSL');
  assert.deepStrictEqual(describeServer('starting').text, '$(sync~spin) Task DSL');
  assert.deepStrictEqual(describeServer('not-installed').text, '$(error) Task DSL: not installed');
  assert.match(describeServer('stopped').tooltip, /Restart Server/);
});

test('the last run in the status bar', () => {
  assert.deepStrictEqual(describeRun({ label: 'hello', ok: true, seconds: '1.2' }),
    { text: '$(pass) hello 1.2s', tooltip: 'Last run: hello succeeded in 1.2s (click for the runs)' });
  assert.strictEqual(describeRun({ label: 'x', ok: false, seconds: '0.1' }).text, '$(error) x 0.1s');
});
