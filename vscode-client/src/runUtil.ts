// Pure helpers of "Task DSL: Run Task" (no vscode import, unit-tested by `npm test`).

const IDENT = '[A-Za-z_][A-Za-z0-9_]*';

/**
 * The names of the inputs a failed run is missing. Understands structured data — keys
 * `missingInputs`, `missing_inputs`, `missing` (lists of names), or `input`/`name` next to a
 * reason mentioning "missing" — and, failing that, messages such as
 * "missing input 'topic'", "missing required inputs: a, b", "input `topic` is required".
 */
export function missingInputs(problem: unknown): string[] {
  const found = new Set<string>();
  const visit = (x: unknown, depth: number): void => {
    if (!x || typeof x !== 'object' || depth > 6) {
      return;
    }
    const o = x as Record<string, unknown>;
    for (const key of ['missingInputs', 'missing_inputs', 'missing']) {
      const v = o[key];
      if (Array.isArray(v)) {
        v.filter((s): s is string => typeof s === 'string').forEach((s) => found.add(s));
      } else if (typeof v === 'string' && new RegExp(`^${IDENT}$`).test(v)) {
        found.add(v);
      }
    }
    const reason = typeof o.reason === 'string' ? o.reason : '';
    if (/missing/i.test(reason)) {
      for (const key of ['input', 'name']) {
        if (typeof o[key] === 'string') {
          found.add(o[key] as string);
        }
      }
    }
    for (const v of Object.values(o)) {
      if (v && typeof v === 'object') {
        visit(v, depth + 1);
      }
    }
  };
  const data = (problem as { data?: unknown } | null | undefined)?.data;
  if (data !== undefined) {
    visit(data, 0); // the data of a JSON-RPC error response
  }
  visit(problem, 0);
  if (found.size === 0) {
    const texts: string[] = [];
    const collect = (x: unknown, depth: number): void => {
      if (typeof x === 'string') {
        texts.push(x);
      } else if (x && typeof x === 'object' && depth < 6) {
        Object.values(x as Record<string, unknown>).forEach((v) => collect(v, depth + 1));
      }
    };
    if (problem instanceof Error) {
      texts.push(problem.message);
    }
    collect(problem, 0);
    const q = '[\'"`‘“]?';
    const qe = '[\'"`’”]?';
    const listRe = new RegExp(`missing (?:required )?inputs?\\s*[:\\-]?\\s*((?:${q}${IDENT}${qe}(?:\\s*,\\s*|\\s+and\\s+)?)+)`, 'gi');
    const quotedList = `((?:['"\`‘“]${IDENT}['"\`’”](?:\\s*,\\s*|\\s+and\\s+)?)+)`;
    const oneRe = new RegExp(`inputs?\\s+${quotedList}\\s+(?:is\\s+|are\\s+|has\\s+|have\\s+)?(?:missing|required|no value|not (?:given|provided|bound|set))`, 'gi');
    for (const t of texts) {
      for (const m of t.matchAll(listRe)) {
        for (const name of m[1].matchAll(new RegExp(IDENT, 'g'))) {
          if (name[0] !== 'and') {
            found.add(name[0]);
          }
        }
      }
      for (const m of t.matchAll(oneRe)) {
        for (const name of m[1].matchAll(new RegExp(IDENT, 'g'))) {
          if (name[0] !== 'and') {
            found.add(name[0]);
          }
        }
      }
    }
  }
  return [...found];
}

/** Names of the runnable children of a `<library>` root (templates and named tasks); empty for other roots. */
export function libraryTaskNames(text: string): string[] {
  const stripped = text.replace(/<!--[\s\S]*?-->/g, '').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '').replace(/<\?[\s\S]*?\?>/g, '');
  const tagRe = /<(\/?)([A-Za-z_][\w.\-:]*)([^>]*?)(\/?)>/g;
  let depth = 0;
  let root: string | undefined;
  const names: string[] = [];
  for (const m of stripped.matchAll(tagRe)) {
    const [, closing, tag, attrs, selfClosing] = m;
    if (closing) {
      depth--;
      continue;
    }
    if (depth === 0 && root === undefined) {
      root = tag;
      if (root !== 'library') {
        return [];
      }
    } else if (depth === 1 && (tag === 'template' || tag === 'task')) {
      const name = /\bname\s*=\s*["']([^"']+)["']/.exec(attrs);
      if (name) {
        names.push(name[1]);
      }
    }
    if (!selfClosing) {
      depth++;
    }
  }
  return names;
}

/**
 * Why a run cannot start here, or undefined when it can. An untrusted workspace is checked and
 * edited with every feature, but nothing runs: a run executes shell commands and sends files to
 * models, and the template comes from whoever wrote the repository.
 */
export function runRefusal(workspaceTrusted: boolean): string | undefined {
  if (workspaceTrusted) {
    return undefined;
  }
  return 'Task DSL: this workspace is not trusted, so its tasks do not run and no model is asked (checking still works). '
    + 'Trust the workspace (command "Workspaces: Manage Workspace Trust") to run them.';
}

/**
 * The server's commands that run a template (scripts, model calls) or ask a model (taskdsl.newTask:
 * the request and the workspace's library go to the configured model): refused in an untrusted
 * workspace. The server refuses them too once told at initialize (`client.workspaceTrusted`).
 */
export const RUNNING_COMMANDS: readonly string[] = ['taskdsl.runTask', 'taskdsl.runTest', 'taskdsl.newTask'];

/** Why the server command `command` may not be sent from this workspace, or undefined when it may. */
export function commandRefusal(command: string, workspaceTrusted: boolean): string | undefined {
  return RUNNING_COMMANDS.includes(command) ? runRefusal(workspaceTrusted) : undefined;
}
