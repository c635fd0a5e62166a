// Auto-closing tags: typing the `>` of a start tag inserts the matching end tag after the cursor
// (setting `taskdsl.autoCloseTags`). Typing `</` completes the innermost open tag.
import * as vscode from 'vscode';

const START_TAG = /<([A-Za-z_][\w.\-:]*)(?:\s[^<>]*?)?>$/;

export function registerAutoCloseTags(languageId: string): vscode.Disposable {
  return vscode.workspace.onDidChangeTextDocument((event) => {
    const editor = vscode.window.activeTextEditor;
    if (!editor || event.document !== editor.document || event.document.languageId !== languageId) {
      return;
    }
    if (!vscode.workspace.getConfiguration('taskdsl', event.document).get<boolean>('autoCloseTags', true)) {
      return;
    }
    if (event.reason !== undefined || event.contentChanges.length !== 1) {
      return; // undo/redo or multi-cursor edits
    }
    const change = event.contentChanges[0];
    if (change.text !== '>' && change.text !== '/') {
      return;
    }
    const pos = change.range.start.translate(0, 1);
    const line = event.document.lineAt(pos.line).text;
    const before = line.slice(0, pos.character);
    const after = line.slice(pos.character);
    if (change.text === '>') {
      const m = START_TAG.exec(before);
      if (!m || before.endsWith('/>') || after.startsWith(`</${m[1]}`)) {
        return;
      }
      editor.insertSnippet(new vscode.SnippetString(`$0</${m[1]}>`), pos, { undoStopBefore: false, undoStopAfter: false });
    } else if (before.endsWith('</') && !after.startsWith('>')) {
      const open = innermostOpenTag(event.document.getText(new vscode.Range(new vscode.Position(0, 0), pos.translate(0, -2))));
      if (open) {
        editor.insertSnippet(new vscode.SnippetString(`${open}>`), pos, { undoStopBefore: false, undoStopAfter: false });
      }
    }
  });
}

function innermostOpenTag(text: string): string | undefined {
  const stripped = text.replace(/<!--[\s\S]*?-->/g, '').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '').replace(/<\?[\s\S]*?\?>/g, '');
  const stack: string[] = [];
  for (const m of stripped.matchAll(/<(\/?)([A-Za-z_][\w.\-:]*)[^>]*?(\/?)>/g)) {
    if (m[1]) {
      const i = stack.lastIndexOf(m[2]);
      if (i >= 0) {
        stack.length = i;
      }
    } else if (!m[3]) {
      stack.push(m[2]);
    }
  }
  return stack[stack.length - 1];
}
