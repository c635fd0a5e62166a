// Pure helpers of the Test Explorer (no vscode import, unit-tested by `npm test`): the items the
// server's `taskdsl.listTests` lists and the verdicts `taskdsl.runTest` answers.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export interface ListedTest { name: string; task: string; line: number; range: Range | null }
export interface ListedFile { uri: string; path: string; tests: ListedTest[] }

export type Verdict =
  | { kind: 'passed'; seconds?: number }
  | { kind: 'failed'; message: string; expected?: string; actual: string; range?: Range }
  | { kind: 'errored'; message: string }
  | { kind: 'skipped'; message: string };

export function testId(uri: string, name: string): string {
  return `${uri}#${name}`;
}

/** The files of a `taskdsl.listTests` answer (nothing from an error answer or a malformed one). */
export function listedFiles(answer: unknown): ListedFile[] {
  const files = (answer as { files?: unknown } | null)?.files;
  if (!Array.isArray(files)) {
    return [];
  }
  return files.filter((f): f is ListedFile => !!f && typeof f.uri === 'string' && Array.isArray(f.tests))
    .map((f) => ({ uri: f.uri, path: String(f.path ?? ''), tests: f.tests.filter((t) => t && typeof t.name === 'string') }));
}

/** How an output is shown as the "actual" side of a failure. */
export function actualText(output: unknown): string {
  if (typeof output === 'string') {
    return output;
  }
  if (output === undefined || output === null) {
    return '(no output: the run failed)';
  }
  return JSON.stringify(output, null, 2);
}

/** test name → verdict, from a `taskdsl.runTest` answer; `error` when the whole run was refused. */
export function verdicts(answer: unknown): { byName: Map<string, Verdict>; error?: string } {
  const byName = new Map<string, Verdict>();
  const a = (answer ?? {}) as Record<string, any>;
  if (a.error && typeof a.error === 'object') {
    return { byName, error: String(a.error.message ?? 'the tests could not run') };
  }
  for (const t of Array.isArray(a.tests) ? a.tests : []) {
    if (!t || typeof t.name !== 'string') {
      continue;
    }
    if (t.status === 'passed') {
      byName.set(t.name, { kind: 'passed' });
    } else if (t.status === 'failed') {
      byName.set(t.name, {
        kind: 'failed', message: String(t.message ?? 'failed'), expected: typeof t.expected === 'string' ? t.expected : undefined,
        actual: actualText(t.output), range: t.expect_range ?? undefined,
      });
    } else {
      byName.set(t.name, { kind: 'errored', message: String(t.message ?? 'the test could not run') });
    }
  }
  for (const name of Array.isArray(a.not_run) ? a.not_run : []) {
    if (typeof name === 'string') {
      byName.set(name, { kind: 'skipped', message: 'not run: its plan was not agreed to' });
    }
  }
  return { byName };
}
