// "Task DSL: Find Task…": a picker that ranks the workspace library against what the user types
// (the server command `taskdsl.matchTasks`, asked again as the text changes, debounced) and opens
// the chosen template at its line.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export const FIND_TASK = 'taskdsl.client.findTask';
const MATCH_COMMAND = 'taskdsl.matchTasks';
const DEBOUNCE_MS = 250;
const LIMIT = 20;

interface MatchRow {
  name: string;
  score: number;
  kind: string;
  path: string | null;
  line: number | null;
  description?: string | null;
}

interface MatchItem extends vscode.QuickPickItem {
  row: MatchRow;
}

export function matchItem(row: MatchRow): MatchItem {
  return {
    label: row.name,
    description: `${row.kind} · ${row.score.toFixed(2)}`,
    detail: row.description ?? undefined,
    alwaysShow: true, // ranked by the server: the picker must not filter the request's words against the names
    row,
  };
}

function findTask(getClient: () => LanguageClient | undefined): void {
  const client = getClient();
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage('Task DSL: the language server is not running, so the library cannot be searched.');
    return;
  }
  const picker = vscode.window.createQuickPick<MatchItem>();
  picker.title = 'Task DSL: Find Task';
  picker.placeholder = 'Describe what you need (e.g. "count the words of a text")';
  picker.matchOnDescription = false;
  picker.matchOnDetail = false;
  (picker as unknown as { sortByLabel: boolean }).sortByLabel = false; // keep the server's ranking
  let timer: NodeJS.Timeout | undefined;
  let asked = 0;

  const search = async (text: string): Promise<void> => {
    const turn = ++asked;
    if (!text.trim()) {
      picker.items = [];
      picker.busy = false;
      return;
    }
    picker.busy = true;
    try {
      const rows = await client.sendRequest(ExecuteCommandRequest.type,
        { command: MATCH_COMMAND, arguments: [{ text, limit: LIMIT }] }) as MatchRow[];
      if (turn === asked) {
        picker.items = (rows ?? []).map(matchItem);
        picker.placeholder = rows && rows.length ? picker.placeholder : 'No template of the library matches';
      }
    } catch (err) {
      if (turn === asked) {
        picker.items = [];
        void vscode.window.showErrorMessage(`Task DSL: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      if (turn === asked) {
        picker.busy = false;
      }
    }
  };

  picker.onDidChangeValue((text) => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void search(text), DEBOUNCE_MS);
  });
  picker.onDidAccept(async () => {
    const chosen = picker.selectedItems[0]?.row;
    if (!chosen || !chosen.path) {
      return;
    }
    picker.hide();
    const line = Math.max((chosen.line ?? 1) - 1, 0);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(chosen.path));
    const at = new vscode.Position(line, 0);
    await vscode.window.showTextDocument(document, { selection: new vscode.Range(at, at) });
  });
  picker.onDidHide(() => {
    if (timer) {
      clearTimeout(timer);
    }
    picker.dispose();
  });
  picker.show();
}

export function registerMatchPicker(getClient: () => LanguageClient | undefined): vscode.Disposable {
  return vscode.commands.registerCommand(FIND_TASK, () => findTask(getClient));
}
