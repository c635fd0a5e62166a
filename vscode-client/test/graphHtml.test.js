// Unit tests of the graph view's page: `npm test` (bundles src/graphHtml.ts first). The picture
// and the run's steps are hostile input: they must never become markup or script.
const test = require('node:test');
const assert = require('node:assert');

const { graphHtml, contentSecurityPolicy, escapeHtml } = require('../out/test/graphHtml.js');

const EVIL_SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>' +
  '<foreignObject><iframe src="https://example.com"></iframe></foreignObject></svg>';

const answer = (fields) => ({ format: 'svg', text: EVIL_SVG, task: 'hello', hint: null, unmapped: [], error: null, ...fields });

test('the page runs no script and loads nothing but data: images', () => {
  const html = graphHtml(answer({}), 'abc123');
  const csp = contentSecurityPolicy('abc123');
  assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${csp}">`));
  assert.match(csp, /^default-src 'none'; img-src data:; style-src 'nonce-abc123'; script-src 'none'/);
  assert.ok(!/<script/i.test(html) && !/onload=/i.test(html) && !/<iframe/i.test(html) && !/<svg/i.test(html));
});

test('an SVG is shown as an image from a data: URI, never inlined', () => {
  const html = graphHtml(answer({}), 'n');
  const src = html.match(/<img class="graph" alt="[^"]*" src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)">/);
  assert.ok(src, html);
  assert.strictEqual(Buffer.from(src[1], 'base64').toString('utf8'), EVIL_SVG);
});

test('DOT text and the hint are escaped text', () => {
  const html = graphHtml(answer({ format: 'dot', text: 'digraph { a [label="</pre><script>x()</script>"] }',
    hint: 'install <b>Graphviz</b>' }), 'n');
  assert.ok(html.includes('<pre class="graph-text">digraph { a [label=&quot;&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;&quot;] }</pre>'));
  assert.ok(html.includes('<p class="hint">install &lt;b&gt;Graphviz&lt;/b&gt;</p>'));
  assert.ok(!/<script/i.test(html));
});

test('an error says what went wrong, escaped', () => {
  const html = graphHtml(answer({ format: null, text: '', error: { message: 'the template has 1 error(s) <here>' } }), 'n');
  assert.ok(html.includes('<p class="error">the template has 1 error(s) &lt;here&gt;</p>'));
});

test('a run lists each step with its mark and time; hostile step fields stay text', () => {
  const run = { status: 'FAILED', steps: [
    { path: 'flow', kind: 'sequential', status: 'FAILED', duration_s: 0.5 },
    { path: 'flow/steps[1]', kind: 'script', status: 'COMPLETE', duration_s: 0.25 },
    { path: 'flow/steps[2]', kind: 'atomic', status: 'DEGRADED', duration_s: null },
    { path: '<img src=x onerror=alert(1)>', kind: '"><script>', status: '" onmouseover="x', duration_s: 'soon' },
  ] };
  const html = graphHtml(answer({ unmapped: ['<img src=x onerror=alert(1)>'] }), 'n', run);
  assert.ok(html.includes('<h2>Last run: FAILED</h2>'));
  assert.ok(html.includes('<tr class="failed"><td>✗ error</td><td><code>flow</code></td><td>sequential</td><td>0.50 s</td></tr>'));
  assert.ok(html.includes('<tr class="complete"><td>✓ ok</td><td><code>flow/steps[1]</code></td><td>script</td><td>0.25 s</td></tr>'));
  assert.ok(html.includes('<tr class="degraded"><td>⚠ degraded</td><td><code>flow/steps[2]</code></td><td>atomic</td><td>–</td></tr>'));
  assert.ok(html.includes('<tr class="other"><td>&quot; onmouseover=&quot;x</td><td><code>&lt;img src=x onerror=alert(1)&gt;</code></td>'));
  assert.ok(html.includes('1 step(s) of the run are not in the picture'));
  assert.ok(!/<script/i.test(html) && !/<img src=x/.test(html));
});

test('escapeHtml escapes the five characters', () => {
  assert.strictEqual(escapeHtml(`<a href="x" title='y'>&</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
});
