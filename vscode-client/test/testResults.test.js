// Unit tests of the Test Explorer's reading of `taskdsl.listTests` and `taskdsl.runTest`:
// `npm test` (bundles src/testResults.ts first).
const test = require('node:test');
const assert = require('node:assert');

const { listedFiles, verdicts, actualText, testId } = require('../out/test/testResults.js');

const range = { start: { line: 1, character: 3 }, end: { line: 1, character: 7 } };

test('the listed files and tests', () => {
  const answer = { files: [{ uri: 'file:///w/a.test.xml', path: '/w/a.test.xml',
    tests: [{ name: 'says hi', task: 'say', line: 2, range }, { nope: 1 }] }, { bad: true }] };
  assert.deepStrictEqual(listedFiles(answer),
    [{ uri: 'file:///w/a.test.xml', path: '/w/a.test.xml', tests: [{ name: 'says hi', task: 'say', line: 2, range }] }]);
  assert.deepStrictEqual(listedFiles({ error: { message: 'x' } }), []);
  assert.strictEqual(testId('file:///w/a.test.xml', 'says hi'), 'file:///w/a.test.xml#says hi');
});

test('verdicts: passed, failed with expected and actual, errors, not run', () => {
  const { byName, error } = verdicts({
    passed: 1, failed: 1, errors: 1, not_run: ['paid'],
    tests: [
      { name: 'ok', status: 'passed', output: 'x' },
      { name: 'bad', status: 'failed', message: "expect 'output.n > 2' does not hold", output: { n: 1 },
        expected: 'output.n > 2', expect_range: range },
      { name: 'broken', status: 'error', message: 'the run failed: boom' },
    ],
  });
  assert.strictEqual(error, undefined);
  assert.deepStrictEqual(byName.get('ok'), { kind: 'passed' });
  assert.deepStrictEqual(byName.get('bad'), { kind: 'failed', message: "expect 'output.n > 2' does not hold",
    expected: 'output.n > 2', actual: '{\n  "n": 1\n}', range });
  assert.deepStrictEqual(byName.get('broken'), { kind: 'errored', message: 'the run failed: boom' });
  assert.deepStrictEqual(byName.get('paid'), { kind: 'skipped', message: 'not run: its plan was not agreed to' });
  assert.strictEqual(verdicts({ error: { message: 'a.test.xml does not check' } }).error, 'a.test.xml does not check');
});

test('the actual output as text', () => {
  assert.strictEqual(actualText('Say hi'), 'Say hi');
  assert.strictEqual(actualText(null), '(no output: the run failed)');
  assert.strictEqual(actualText([1]), '[\n  1\n]');
});
