// Parse Mermaid text with Mermaid's own parser: one diagram per file argument (or stdin).
// Prints one JSON line per input: {"file", "ok", "error"}. DOM pieces Mermaid's sanitizer needs
// come from jsdom. Exit 0 always (the caller asserts on the lines).
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
globalThis.Element = dom.window.Element;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

const files = process.argv.slice(2);
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  try {
    await mermaid.parse(text);
    console.log(JSON.stringify({ file, ok: true }));
  } catch (e) {
    console.log(JSON.stringify({ file, ok: false, error: String(e && e.message || e) }));
  }
}
