// The same check inside a module Web Worker (bundled by Vite).
import { init } from 'attnlab';
import { check } from '../check.mjs';

check(init, 'vite worker').then(
  (text) => postMessage({ ok: true, text }),
  (e) => postMessage({ ok: false, text: String(e?.stack ?? e) }),
);
