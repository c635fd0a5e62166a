// The status-bar item: the language server's state and the last run, one click from the output.
import * as vscode from 'vscode';
import { describeServer, describeRun, ServerState, LastRun } from './statusText';

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private server: ServerState = 'starting';
  private lastRun: LastRun | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('taskdsl.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Task DSL';
    this.render();
    this.item.show();
  }

  setServer(state: ServerState): void {
    this.server = state;
    this.render();
  }

  setLastRun(run: LastRun): void {
    this.lastRun = run;
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    const server = describeServer(this.server);
    const run = this.lastRun ? describeRun(this.lastRun) : undefined;
    this.item.text = run ? `${server.text}  ${run.text}` : server.text;
    this.item.tooltip = run ? `${server.tooltip}\n${run.tooltip}` : server.tooltip;
    // a run's result is in "Task DSL Runs"; the server's state in "Task DSL"
    this.item.command = run && this.server === 'running' ? 'taskdsl.client.showRuns' : 'taskdsl.client.showOutput';
    this.item.backgroundColor = this.server === 'not-installed' || this.server === 'failed'
      ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }
}
