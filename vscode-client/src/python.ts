// Finding the Python interpreter that runs `python -m taskdsl serve`, and checking that taskdsl is installed in it.
import * as vscode from 'vscode';
import { execFile } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import { PROBE_CODE } from './serverVenv';

export interface PythonChoice {
  python: string;
  /** where the choice came from, for messages: "setting", "Python extension", "default" */
  origin: string;
}

function expand(value: string, folder: vscode.WorkspaceFolder | undefined): string {
  let v = value.trim();
  if (v.startsWith('~/') || v === '~') {
    v = path.join(os.homedir(), v.slice(1));
  }
  const root = folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  v = v.replace(/\$\{workspaceFolder\}/g, root).replace(/\$\{userHome\}/g, os.homedir());
  return v;
}

/** Asks the Python extension (ms-python.python) for its active interpreter; undefined when absent or on any error. */
async function fromPythonExtension(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const envs = api?.environments;
    if (envs && typeof envs.getActiveEnvironmentPath === 'function') {
      const active = envs.getActiveEnvironmentPath(resource);
      const p: unknown = active?.path;
      if (typeof p === 'string' && p.length > 0) {
        // `path` may be an environment folder rather than an executable: resolve it when possible.
        if (typeof envs.resolveEnvironment === 'function') {
          const resolved = await envs.resolveEnvironment(active);
          const exe: unknown = resolved?.executable?.uri?.fsPath;
          if (typeof exe === 'string' && exe.length > 0) {
            return exe;
          }
        }
        return p;
      }
    }
    // older Python extension API
    const details = api?.settings?.getExecutionDetails?.(resource);
    const cmd: unknown = details?.execCommand?.[0];
    if (typeof cmd === 'string' && cmd.length > 0) {
      return cmd;
    }
  } catch {
    // the Python extension is optional: any failure falls back to python3
  }
  return undefined;
}

const SETTING_ORIGIN = 'the setting taskdsl.server.python';
const DEFAULT_ORIGIN = 'the default (python3 on PATH)';

export async function choosePython(): Promise<PythonChoice> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const setting = vscode.workspace.getConfiguration('taskdsl', folder).get<string>('server.python', '');
  if (setting && setting.trim()) {
    return { python: expand(setting, folder), origin: SETTING_ORIGIN };
  }
  const fromExt = await fromPythonExtension(folder?.uri);
  if (fromExt) {
    return { python: fromExt, origin: "the Python extension's active interpreter" };
  }
  return { python: 'python3', origin: DEFAULT_ORIGIN };
}

/** The interpreter that runs the server. The setting decides alone; without it, the first that has taskdsl of:
 * the Python extension's interpreter, the extension's own environment (installed on a first start), python3.
 * `offerInstall`: nothing was chosen and nothing has taskdsl, so the own environment may be offered. */
export async function findServer(cwd: string | undefined, ownPython: () => Promise<string | undefined>):
  Promise<PythonChoice & { probed: ProbeResult; offerInstall: boolean }> {
  const chosen = await choosePython();
  if (chosen.origin !== DEFAULT_ORIGIN) {
    const probed = await probe(chosen.python, cwd);
    if (probed.ok || chosen.origin === SETTING_ORIGIN) {
      return { ...chosen, probed, offerInstall: false };
    }
  }
  const own = await ownPython();
  if (own) {
    return { python: own, origin: "the extension's own environment", probed: await probe(own, cwd), offerInstall: false };
  }
  const fallback = { python: 'python3', origin: DEFAULT_ORIGIN };
  const probed = await probe(fallback.python, cwd);
  return { ...fallback, probed, offerInstall: !probed.ok && probed.kind !== 'other' };
}

export type ProbeResult =
  | { ok: true; version: string }
  | { ok: false; kind: 'no-python' | 'no-taskdsl' | 'other'; detail: string };

/** Runs `<python> -c "import taskdsl"` to tell "Python missing" from "taskdsl not installed" before starting the server. */
export function probe(python: string, cwd: string | undefined): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE_CODE], { cwd, timeout: 20000 }, (err, stdout, stderr) => {
      if (!err) {
        resolve({ ok: true, version: stdout.trim() });
        return;
      }
      const e = err as unknown as { code?: string | number };
      if (e.code === 'ENOENT' || e.code === 'EACCES') {
        resolve({ ok: false, kind: 'no-python', detail: `${python}: ${e.code}` });
      } else if (e.code === 3) {
        resolve({ ok: false, kind: 'no-taskdsl', detail: (stdout + stderr).trim() });
      } else {
        resolve({ ok: false, kind: 'other', detail: (stderr || stdout || String(err)).trim() });
      }
    });
  });
}

/** taskdsl is not on the Python Package Index: it is installed from a checkout of its repository
 * (or from a wheel built there with `python -m build`). */
export const CHECKOUT_PLACEHOLDER = '/path/to/taskdsl';

export function installCommand(python: string): string {
  const q = /[\s"']/.test(python) ? `"${python}"` : python;
  return `${q} -m pip install ${CHECKOUT_PLACEHOLDER}`;
}
