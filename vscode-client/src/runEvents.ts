// Runs that finished, for the views that show them (the graph view colours its picture).
import * as vscode from 'vscode';

export interface FinishedRun {
  uri: string;
  task: string | undefined;
  /** the run command's answer: {status, label, steps: [{path, kind, status, duration_s}], …} */
  result: unknown;
}

export const runFinished = new vscode.EventEmitter<FinishedRun>();
