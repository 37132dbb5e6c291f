// The same check in a module Web Worker, without a bundler.
import { init } from '/node_modules/attnlab/dist/index.mjs';
import { check } from '/check.mjs';

check(init, 'plain worker').then(
  (text) => postMessage({ ok: true, text }),
  (e) => postMessage({ ok: false, text: String(e?.stack ?? e) }),
);
