// "Task DSL: New Task from a Description…": the request in plain words goes to the server
// (`taskdsl.newTask`: a library template that fits, else a task the model writes, checked and
// repaired); the checked task opens in a new untitled Task DSL document. Nothing runs, and in an
// untrusted workspace nothing is asked either.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { commandRefusal } from './runUtil';

export const NEW_TASK = 'taskdsl.client.newTaskFromDescription';
const SERVER_COMMAND = 'taskdsl.newTask';
const SHOWN_DIAGNOSTICS = 3;

interface NewTaskAnswer {
  xml: string | null;
  source: 'library' | 'model' | null;
  rounds: number;
  match: { name: string; score: number } | null;
  model: string | null;
  error: { type?: string; message?: string; details?: { diagnostics?: { line: number; code: string; message: string }[] } } | null;
}

/** What the notification says about where the task came from. */
export function origin(answer: NewTaskAnswer): string {
  if (answer.source === 'library' && answer.match) {
    return `uses the template "${answer.match.name}" (score ${answer.match.score.toFixed(2)})`;
  }
  return `written by ${answer.model ?? 'the model'}${answer.rounds > 1 ? ` and repaired in ${answer.rounds - 1} round(s)` : ''}`;
}

function failureMessage(answer: NewTaskAnswer): string {
  const error = answer.error ?? {};
  const shown = (error.details?.diagnostics ?? []).slice(0, SHOWN_DIAGNOSTICS)
    .map((d) => `line ${d.line}: ${d.code} ${d.message}`);
  return `Task DSL: no task: ${error.message ?? 'the server gave no task'}${shown.length ? ` (${shown.join('; ')})` : ''}`;
}

async function newTask(getClient: () => LanguageClient | undefined, language: string, given?: string): Promise<void> {
  const refusal = commandRefusal(SERVER_COMMAND, vscode.workspace.isTrusted);
  if (refusal) {  // an untrusted workspace: no model is asked (the server refuses too)
    void vscode.window.showWarningMessage(refusal);
    return;
  }
  const client = getClient();
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage('Task DSL: the language server is not running, so no task can be written.');
    return;
  }
  const text = typeof given === 'string' && given.trim() ? given : await vscode.window.showInputBox({
    title: 'Task DSL: New Task from a Description',
    prompt: 'Say in plain words what the task should do: a library template that fits is used, else the model writes one',
    placeHolder: 'e.g. summarise a text in three bullet points',
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : 'Describe the task in a few words'),
  });
  if (!text) {
    return;
  }
  let answer: NewTaskAnswer;
  try {
    answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Task DSL: writing a task…', cancellable: true },
      (_progress, token) => client.sendRequest(ExecuteCommandRequest.type,
        { command: SERVER_COMMAND, arguments: [{ text }] }, token)) as NewTaskAnswer;
  } catch (err) {
    void vscode.window.showErrorMessage(`Task DSL: no task: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (!answer || answer.error || !answer.xml) {
    void vscode.window.showErrorMessage(failureMessage(answer ?? { error: null } as NewTaskAnswer));
    return;
  }
  const document = await vscode.workspace.openTextDocument({ language, content: answer.xml });
  await vscode.window.showTextDocument(document);
  void vscode.window.showInformationMessage(`Task DSL: the new task ${origin(answer)}. Save it as a .task.xml file to run it.`);
}

export function registerNewTask(getClient: () => LanguageClient | undefined, language: string): vscode.Disposable {
  return vscode.commands.registerCommand(NEW_TASK, (text?: string) => newTask(getClient, language, text));
}
