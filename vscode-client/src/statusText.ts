// What the status-bar item says (no `vscode` import, so node --test can check it).

export type ServerState = 'starting' | 'running' | 'stopped' | 'not-installed' | 'failed';

export interface LastRun {
  label: string;
  ok: boolean;
  seconds: string;
}

export function describeServer(state: ServerState): { text: string; tooltip: string } {
  switch (state) {
    case 'starting':
      return { text: '$(sync~spin) Task DSL', tooltip: 'Task DSL: the language server is starting' };
    case 'running':
      return { text: '$(check) Task DSL', tooltip: 'Task DSL: the language server is running' };
    case 'stopped':
      return { text: '$(circle-slash) Task DSL', tooltip: 'Task DSL: the language server stopped (Task DSL: Restart Server)' };
    case 'not-installed':
      return { text: '$(error) Task DSL: not installed', tooltip: 'Task DSL: taskdsl is not installed in the configured Python (see the output)' };
    case 'failed':
      return { text: '$(error) Task DSL', tooltip: 'Task DSL: the language server did not start (see the output)' };
  }
}

export function describeRun(run: LastRun): { text: string; tooltip: string } {
  const icon = run.ok ? '$(pass)' : '$(error)';
  return {
    text: `${icon} ${run.label} ${run.seconds}s`,
    tooltip: `Last run: ${run.label} ${run.ok ? 'succeeded' : 'failed'} in ${run.seconds}s (click for the runs)`,
  };
}
