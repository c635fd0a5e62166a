// Unit tests of the extension's own server environment: `npm test` (bundles src/serverVenv.ts first).
// checkBasePython runs real executables: python3, and small scripts standing in for an old Python or one
// without venv (what Debian's python3 is before `apt install python3-venv`).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');

const {
  bundledWheel, venvState, checkBasePython, basePythonAdvice, venvPython, installServer,
} = require('../out/test/serverVenv.js');

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'taskdsl-venv-test-'));
const fakePython = (dir, body) => {
  const file = path.join(dir, 'python3');
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
};

test('the python3 on PATH can make the venv', async () => {
  const check = await checkBasePython('python3', tmp());
  assert.strictEqual(check.ok, true, JSON.stringify(check));
  assert.match(check.version, /^3\.\d+$/);
});

test('a missing, an old and a venv-less Python are told apart, each with what to install', async () => {
  const dir = tmp();
  const missing = await checkBasePython(path.join(dir, 'nope'), dir);
  assert.strictEqual(missing.reason, 'missing');
  assert.match(basePythonAdvice('python3', missing), /^python3 was not found on PATH: install Python 3\.11 or newer/);

  const old = await checkBasePython(fakePython(dir, 'echo 3.9'), dir);
  assert.deepStrictEqual([old.ok, old.reason, old.version], [false, 'too-old', '3.9']);
  assert.strictEqual(basePythonAdvice('python3', old),
    'python3 is Python 3.9; taskdsl needs Python 3.11 or newer: install it, or set "taskdsl.server.python" to a Python where taskdsl is installed.');

  const noVenv = await checkBasePython(fakePython(dir, "echo 3.12; echo \"No module named 'ensurepip'\" >&2; exit 4"), dir);
  assert.deepStrictEqual([noVenv.ok, noVenv.reason, noVenv.version], [false, 'no-venv', '3.12']);
  assert.match(basePythonAdvice('python3', noVenv), /has no venv module .*apt install python3\.12-venv/);
});

test('the bundled wheel and whether the own environment holds it', () => {
  const ext = tmp();
  assert.strictEqual(bundledWheel(ext), undefined);
  fs.mkdirSync(path.join(ext, 'server'));
  fs.writeFileSync(path.join(ext, 'server', 'taskdsl-0.1.0-py3-none-any.whl'), 'one');
  const wheel = bundledWheel(ext);
  assert.strictEqual(path.basename(wheel.file), 'taskdsl-0.1.0-py3-none-any.whl');

  const venv = tmp();
  assert.strictEqual(venvState(venv, wheel), 'absent');
  fs.mkdirSync(path.dirname(venvPython(venv)), { recursive: true });
  fs.writeFileSync(venvPython(venv), '');
  assert.strictEqual(venvState(venv, wheel), 'absent'); // no marker: a half-finished install
  fs.writeFileSync(path.join(venv, 'taskdsl-wheel.json'), JSON.stringify({ sha256: wheel.sha256 }));
  assert.strictEqual(venvState(venv, wheel), 'current');
  // an update brings another wheel (same version number, other contents)
  fs.writeFileSync(wheel.file, 'two');
  assert.strictEqual(venvState(venv, bundledWheel(ext)), 'outdated');
});

test('a taskdsl folder in the workspace never stands in for the installed package', () => {
  const { execFileSync } = require('child_process');
  const { SERVER_ARGS, PROBE_CODE } = require('../out/test/serverVenv.js');
  const workspace = tmp();
  fs.mkdirSync(path.join(workspace, 'taskdsl'));
  for (const file of ['__init__.py', '__main__.py']) {
    fs.writeFileSync(path.join(workspace, 'taskdsl', file), 'print("workspace code ran")\n');
  }
  const run = (args) => {
    try {
      return execFileSync('python3', args, { cwd: workspace, input: '', stdio: 'pipe' }).toString();
    } catch (e) {
      return String(e.stdout) + String(e.stderr);
    }
  };
  assert.match(run(['-m', 'taskdsl', 'serve']), /workspace code ran/); // what the guard is for
  assert.doesNotMatch(run(SERVER_ARGS), /workspace code ran/);
  assert.match(run(['-c', PROBE_CODE]), /No module named 'taskdsl'/);
});

test('a venv, ensurepip or pip module in the working folder (a hostile clone) never runs in the install', async () => {
  // an editor started inside a cloned repository: the extension host's working folder is the clone
  const clone = tmp();
  const marker = path.join(clone, 'RAN');
  const hostile = `open(${JSON.stringify(marker)}, 'a').write(__name__ + '\\n')\nraise SystemExit(1)\n`;
  for (const name of ['venv.py', 'ensurepip.py', 'pip.py']) {
    fs.writeFileSync(path.join(clone, name), hostile);
  }
  const own = tmp();
  const before = process.cwd();
  process.chdir(clone);
  try {
    const check = await checkBasePython('python3', own);
    assert.strictEqual(check.ok, true, JSON.stringify(check));
    const wheel = { file: path.join(own, 'taskdsl-0.0.0-py3-none-any.whl'), sha256: 'x' };
    const failed = await installServer('python3', path.join(own, 'server-venv'), wheel, () => {}, () => {});
    assert.match(failed.command, / -m pip install /);  // the venv was made; the missing wheel stops the install
  } finally {
    process.chdir(before);
  }
  assert.strictEqual(fs.existsSync(marker), false, fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '');
});
