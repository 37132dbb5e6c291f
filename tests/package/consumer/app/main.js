// A tiny app bundled by Vite: imports the installed `attnlab` package by name, computes an SDPA on the page and
// in a module Web Worker, and publishes the result in window.__result for the test driver.
import { init } from 'attnlab';
import { check } from '../check.mjs';

function inWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (e) => (e.data.ok ? resolve(e.data.text) : reject(new Error(e.data.text)));
    worker.onerror = (e) => reject(new Error(`worker error: ${e.message}`));
  });
}

async function run() {
  return [await check(init, 'vite page'), await inWorker()];
}

run().then(
  (lines) => {
    document.getElementById('out').textContent = lines.join('\n');
    window.__result = { ok: true, lines };
  },
  (e) => {
    document.getElementById('out').textContent = String(e?.stack ?? e);
    window.__result = { ok: false, lines: [String(e?.stack ?? e)] };
  },
);
