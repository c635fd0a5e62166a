// "Task DSL: Show Graph": a webview beside the template with the picture of its task (the entry
// at the cursor in a library file), drawn by the server (`taskdsl.graph`). After a run of the same
// task the picture colours each step by its status and lists the steps with their times. The view
// follows the file: it is drawn again when the file is saved and after each run.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { GraphAnswer, RunStep, ShownRun, graphHtml } from './graphHtml';
import { runFinished } from './runEvents';

export const SHOW_GRAPH = 'taskdsl.client.showGraph';
const GRAPH_COMMAND = 'taskdsl.graph';

interface LastRun extends ShownRun {
  label: string;
}

class GraphView {
  private panel: vscode.WebviewPanel | undefined;
  private uri: string | undefined;
  private task: string | undefined; // the entry shown (the server's label), once known
  private readonly runs = new Map<string, LastRun>(); // the last run of each file
  private drawing = 0;

  constructor(private readonly getClient: () => LanguageClient | undefined) {}

  async show(target?: vscode.Uri): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const uri = target ?? editor?.document.uri;
    if (!uri) {
      void vscode.window.showWarningMessage('Task DSL: open a template (*.task.xml) to see its graph.');
      return;
    }
    const position = editor && editor.document.uri.toString() === uri.toString() ? editor.selection.active : undefined;
    this.uri = uri.toString();
    this.task = undefined;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('taskdsl.graph', 'Task DSL graph',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false, enableForms: false, localResourceRoots: [], retainContextWhenHidden: false });
      this.panel.onDidDispose(() => { this.panel = undefined; this.uri = undefined; });
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    await this.draw(position ? { line: position.line, character: position.character } : undefined);
  }

  onSaved(document: vscode.TextDocument): void {
    if (this.panel && document.uri.toString() === this.uri) {
      void this.draw();
    }
  }

  onRun(uri: string, result: unknown): void {
    const r = (result ?? {}) as Record<string, unknown>;
    if (typeof r.label !== 'string' || !Array.isArray(r.steps)) {
      return;
    }
    this.runs.set(uri, { label: r.label, status: String(r.status ?? ''), steps: r.steps as RunStep[] });
    if (this.panel && uri === this.uri) {
      void this.draw();
    }
  }

  private async draw(position?: { line: number; character: number }): Promise<void> {
    const panel = this.panel;
    const uri = this.uri;
    const client = this.getClient();
    if (!panel || !uri) {
      return;
    }
    const turn = ++this.drawing;
    if (!client || !client.isRunning()) {
      panel.webview.html = graphHtml(refusal('the language server is not running (Task DSL: Restart Server)'), nonce());
      return;
    }
    let answer = await this.ask(client, uri, this.task, position);
    let run = answer.task !== null ? this.runs.get(uri) : undefined;
    if (run && run.label !== answer.task) {
      run = undefined; // the last run was of another entry of the file
    }
    if (run && !answer.error) {
      answer = await this.ask(client, uri, answer.task ?? undefined, undefined, run.steps);
    }
    if (turn !== this.drawing || panel !== this.panel) {
      return; // a newer drawing started meanwhile
    }
    if (answer.task) {
      this.task = answer.task;
      panel.title = `Graph: ${answer.task}`;
    }
    panel.webview.html = graphHtml(answer, nonce(), run && !answer.error ? run : undefined);
  }

  private async ask(client: LanguageClient, uri: string, task: string | undefined,
                    position: { line: number; character: number } | undefined, steps?: RunStep[]): Promise<GraphAnswer> {
    try {
      const answer = await client.sendRequest(ExecuteCommandRequest.type, {
        command: GRAPH_COMMAND,
        arguments: [{ uri, task: task ?? null, position: position ?? null, format: 'svg', steps: steps ?? null }],
      });
      return answer as GraphAnswer;
    } catch (err) {
      return refusal(`the server could not draw the graph: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function refusal(message: string): GraphAnswer {
  return { format: null, text: '', task: null, hint: null, unmapped: [], error: { message } };
}

function nonce(): string {
  return crypto.randomBytes(16).toString('hex');
}

/** The command, and the view's refreshes: on save, after each run. */
export function registerGraphView(getClient: () => LanguageClient | undefined): vscode.Disposable {
  const view = new GraphView(getClient);
  return vscode.Disposable.from(
    vscode.commands.registerCommand(SHOW_GRAPH, (uri?: vscode.Uri) => view.show(uri instanceof vscode.Uri ? uri : undefined)),
    vscode.workspace.onDidSaveTextDocument((d) => view.onSaved(d)),
    runFinished.event((run) => view.onRun(run.uri, run.result)),
  );
}
