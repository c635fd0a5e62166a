// The HTML of the graph view (pure: no vscode import, unit-tested with node --test).
//
// The picture is hostile input: task names, descriptions and commands in its labels come from
// the user's files, and an SVG can carry script. So the page runs no script at all (the webview
// is created with enableScripts: false, and the Content-Security-Policy allows none), the SVG is
// shown through an <img> from a data: URI (an image document never runs script nor loads
// anything), and every text is HTML-escaped.

/** The answer of the server command `taskdsl.graph`. */
export interface GraphAnswer {
  format: 'svg' | 'dot' | 'mermaid' | null;
  text: string;
  task: string | null;
  hint: string | null;
  unmapped: string[];
  error: { type?: string; reason?: string; message?: string } | null;
}

/** A run's step as the run command answers it. */
export interface RunStep {
  path: string;
  kind?: string;
  status: string;
  duration_s?: number | null;
}

export interface ShownRun {
  status: string;
  steps: RunStep[];
}

const MARKS: Record<string, string> = {
  COMPLETE: '✓ ok', FAILED: '✗ error', DEGRADED: '⚠ degraded', CANCELLED: '• cancelled', RUNNING: '• cancelled',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c] as string));
}

export function svgDataUri(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`;
}

/** The page's policy: nothing but data: images and the one inline style block with this nonce. */
export function contentSecurityPolicy(nonce: string): string {
  return `default-src 'none'; img-src data:; style-src 'nonce-${nonce}'; script-src 'none'; ` +
    "frame-src 'none'; form-action 'none'; base-uri 'none'";
}

function seconds(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? `${value.toFixed(2)} s` : '–';
}

function runTable(run: ShownRun): string {
  const rows = run.steps.map((s) => {
    const status = typeof s.status === 'string' ? s.status : '';
    const cls = /^[A-Z]+$/.test(status) ? status.toLowerCase() : 'other';
    return `<tr class="${cls}"><td>${escapeHtml(MARKS[status] ?? status)}</td><td><code>${escapeHtml(String(s.path))}</code></td>` +
      `<td>${escapeHtml(String(s.kind ?? ''))}</td><td>${escapeHtml(seconds(s.duration_s))}</td></tr>`;
  });
  return `<h2>Last run: ${escapeHtml(String(run.status))}</h2>` +
    `<table class="steps"><thead><tr><th>Status</th><th>Step</th><th>Type</th><th>Time</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 12px; }
h1 { font-size: 1.1em; } h2 { font-size: 1em; margin-top: 1.2em; }
.picture { background: #fff; padding: 8px; border-radius: 4px; display: inline-block; max-width: 100%; }
.picture img { max-width: 100%; height: auto; }
pre { white-space: pre-wrap; background: var(--vscode-textCodeBlock-background); padding: 8px; }
.hint, .error { padding: 6px 8px; border-left: 3px solid var(--vscode-editorWarning-foreground); }
.error { border-left-color: var(--vscode-editorError-foreground); }
.legend span { margin-right: 1em; padding: 0 4px; border-radius: 3px; color: #000; }
.ok, tr.complete td:first-child { background: #c8e6c9; } .err, tr.failed td:first-child { background: #ffcdd2; }
.deg, tr.degraded td:first-child { background: #ffe0b2; } .none { background: #f5f5f5; }
table.steps { border-collapse: collapse; } table.steps td, table.steps th { padding: 2px 8px; text-align: left; }
tr td:first-child { color: #000; }
`;

/** The whole page for a graph answer (and the last run of the same task, if any). */
export function graphHtml(answer: GraphAnswer, nonce: string, run?: ShownRun): string {
  const parts: string[] = [];
  if (answer.error) {
    parts.push(`<h1>Task DSL graph</h1><p class="error">${escapeHtml(answer.error.message ?? 'the graph could not be drawn')}</p>`);
  } else {
    parts.push(`<h1>${escapeHtml(answer.task ?? 'Task')}</h1>`);
    if (run) {
      parts.push('<p class="legend"><span class="ok">✓ ok</span><span class="err">✗ error</span>' +
        '<span class="deg">⚠ degraded</span><span class="none">not run</span></p>');
    }
    if (answer.format === 'svg') {
      parts.push(`<div class="picture"><img class="graph" alt="${escapeHtml(`the task tree of ${answer.task ?? 'the task'}`)}" ` +
        `src="${svgDataUri(answer.text)}"></div>`);
    } else {
      if (answer.hint) {
        parts.push(`<p class="hint">${escapeHtml(answer.hint)}</p>`);
      }
      parts.push(`<pre class="graph-text">${escapeHtml(answer.text)}</pre>`);
    }
    if (run) {
      parts.push(runTable(run));
      if (answer.unmapped.length > 0) {
        parts.push(`<p class="hint">${answer.unmapped.length} step(s) of the run are not in the picture (the template ` +
          `changed since the run): ${answer.unmapped.slice(0, 5).map((p) => `<code>${escapeHtml(p)}</code>`).join(', ')}</p>`);
      }
    }
  }
  return '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">` +
    `<style nonce="${nonce}">${STYLE}</style></head><body>${parts.join('\n')}</body></html>`;
}
