// The extension's own taskdsl server: a virtual environment in the extension's global storage folder,
// with the taskdsl wheel bundled inside the .vsix installed into it. No `vscode` import, so that
// `npm test` (node --test) runs these steps against a real Python.
import { execFile, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export const MIN_PYTHON: [number, number] = [3, 11];

// The server and the probe run in the workspace folder, possibly a hostile clone: a `taskdsl/` folder
// there must never stand in for the installed package. `-P` (Python 3.11+, which taskdsl needs) keeps the
// working folder off sys.path for the server only (the scripts a run starts are not affected); the probe,
// which may meet an older Python, drops it from sys.path itself.
export const SERVER_ARGS = ['-P', '-m', 'taskdsl', 'serve'];

/** Prints taskdsl's version, or exits with 3 when it is not importable. */
export const PROBE_CODE = "import os, sys\nsys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]\n" +
  'try:\n import taskdsl\nexcept ImportError as e:\n print(e); sys.exit(3)\n' +
  "print(getattr(taskdsl, '__version__', 'unknown'))";
/** the folder inside the global storage that holds the venv */
export const VENV_FOLDER = 'server-venv';
/** written last, so that a half-finished install is never taken for a finished one */
const MARKER = 'taskdsl-wheel.json';

export interface BundledWheel {
  file: string;
  sha256: string;
}

/** The taskdsl wheel shipped in the extension's `server/` folder (the newest name when there are several). */
export function bundledWheel(extensionPath: string): BundledWheel | undefined {
  const dir = path.join(extensionPath, 'server');
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /^taskdsl-.*\.whl$/.test(n)).sort();
  } catch {
    return undefined;
  }
  const name = names[names.length - 1];
  if (!name) {
    return undefined;
  }
  const file = path.join(dir, name);
  const sha256 = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  return { file, sha256 };
}

export function venvPython(venvDir: string): string {
  return process.platform === 'win32'
    ? path.join(venvDir, 'Scripts', 'python.exe')
    : path.join(venvDir, 'bin', 'python');
}

/** 'current': installed from this very wheel; 'outdated': from another one (an extension update); 'absent'. */
export function venvState(venvDir: string, wheel: BundledWheel): 'current' | 'outdated' | 'absent' {
  let marker: unknown;
  try {
    marker = JSON.parse(fs.readFileSync(path.join(venvDir, MARKER), 'utf8'));
  } catch {
    return 'absent';
  }
  if (!fs.existsSync(venvPython(venvDir))) {
    return 'absent';
  }
  return (marker as { sha256?: unknown })?.sha256 === wheel.sha256 ? 'current' : 'outdated';
}

export type BasePythonCheck =
  | { ok: true; version: string }
  | { ok: false; reason: 'missing' | 'too-old' | 'no-venv' | 'other'; version?: string; detail: string };

// prints the version before importing venv/ensurepip, so that "too old" and "no venv" are told apart;
// written to run on any Python, even one too old for f-strings
const CHECK_CODE = "import sys\nprint('%d.%d' % sys.version_info[:2])\nsys.stdout.flush()\n" +
  'try:\n import venv, ensurepip\nexcept ImportError as e:\n sys.stderr.write(str(e)); sys.exit(4)\n';

// The base Python and the install steps run in `cwd`, a folder of the extension's own: inherited, the
// working folder may be a hostile clone (an editor started there), and `python -c`/`-m` import from it
// first (a `venv.py` or `pip/` there would run instead of the real one).

/** Whether `python` can make the server's venv: it runs, is 3.11 or newer, and has venv with ensurepip. */
export function checkBasePython(python: string, cwd: string): Promise<BasePythonCheck> {
  return new Promise((resolve) => {
    execFile(python, ['-c', CHECK_CODE], { cwd, timeout: 20000 }, (err, stdout, stderr) => {
      const version = stdout.trim().split('\n')[0] ?? '';
      const code = (err as { code?: string | number } | null)?.code;
      if (code === 'ENOENT' || code === 'EACCES') {
        resolve({ ok: false, reason: 'missing', detail: `${python}: ${code}` });
        return;
      }
      const [major, minor] = version.split('.').map(Number);
      if (/^\d+\.\d+$/.test(version) && (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1]))) {
        resolve({ ok: false, reason: 'too-old', version, detail: `${python} is Python ${version}` });
      } else if (code === 4) {
        resolve({ ok: false, reason: 'no-venv', version, detail: stderr.trim() });
      } else if (err) {
        resolve({ ok: false, reason: 'other', version, detail: (stderr || String(err)).trim() });
      } else {
        resolve({ ok: true, version });
      }
    });
  });
}

/** What a user reads when `python` cannot make the venv: what to install, or which setting to use instead. */
export function basePythonAdvice(python: string, check: BasePythonCheck): string {
  if (check.ok) {
    return '';
  }
  const want = `Python ${MIN_PYTHON.join('.')} or newer`;
  const instead = 'or set "taskdsl.server.python" to a Python where taskdsl is installed';
  switch (check.reason) {
    case 'missing':
      return `${python} was not found on PATH: install ${want} (with its venv module, e.g. "apt install python3 python3-venv"), ${instead}.`;
    case 'too-old':
      return `${python} is Python ${check.version}; taskdsl needs ${want}: install it, ${instead}.`;
    case 'no-venv':
      return `${python} (Python ${check.version}) has no venv module (${check.detail}): install it (e.g. "apt install python${check.version}-venv"), ${instead}.`;
    default:
      return `${python} failed: ${lastLines(check.detail, 3)}. Install ${want}, ${instead}.`;
  }
}

export function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

export interface StepFailure {
  command: string;
  code: number | null;
  tail: string;
}

export interface Running {
  /** resolves with undefined on success */
  done: Promise<StepFailure | undefined>;
  cancel(): void;
}

/** Runs one command, every output line to `log`; the failure keeps the output's last lines. */
export function runStep(command: string, args: string[], log: (line: string) => void, timeoutMs: number,
  cwd: string): Running {
  const shown = [command, ...args].join(' ');
  log(`$ ${shown}`);
  const child = spawn(command, args, { cwd, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONUNBUFFERED: '1' } });
  let tail: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString().split(/\r?\n/)) {
      if (line.trim()) {
        log(line);
        tail.push(line);
      }
    }
    tail = tail.slice(-20);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => {
    tail.push(`(stopped after ${Math.round(timeoutMs / 1000)} s)`);
    child.kill();
  }, timeoutMs);
  const done = new Promise<StepFailure | undefined>((resolve) => {
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ command: shown, code: null, tail: String(e) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : { command: shown, code, tail: tail.join('\n') });
    });
  });
  return { done, cancel: () => child.kill() };
}

/** Creates (or re-creates) the venv with `basePython`, pip-installs the wheel, then writes the marker. */
export async function installServer(
  basePython: string, venvDir: string, wheel: BundledWheel, log: (line: string) => void,
  onStep: (running: Running, title: string) => void,
): Promise<StepFailure | undefined> {
  fs.rmSync(path.join(venvDir, MARKER), { force: true });
  fs.mkdirSync(path.dirname(venvDir), { recursive: true });
  const steps: [string, string, string[], number][] = [
    ['Creating the environment', basePython, ['-m', 'venv', '--clear', venvDir], 120000],
    // dependencies come from pip's configured index, with pip's cache
    ['Installing taskdsl and its dependencies', venvPython(venvDir), ['-m', 'pip', 'install', wheel.file], 900000],
    ['Checking the install', venvPython(venvDir), ['-m', 'taskdsl', 'schema'], 120000],
  ];
  for (const [title, command, args, timeout] of steps) {
    const running = runStep(command, args, log, timeout, path.dirname(venvDir));
    onStep(running, title);
    const failed = await running.done;
    if (failed) {
      return failed;
    }
  }
  fs.writeFileSync(path.join(venvDir, MARKER),
    JSON.stringify({ wheel: path.basename(wheel.file), sha256: wheel.sha256, installed: new Date().toISOString() }));
  return undefined;
}
