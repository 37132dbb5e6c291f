// A tiny app that imports the installed `attnlab` by name and checks it on the page and in a module Web Worker.
// Bundled by Vite 8 (dev and build), Vite 7 (dev) and webpack 5 (scripts/test-package.sh).
import { init } from 'attnlab';
import { check, inWorker, publish } from '../check.mjs';

publish([
  check(init, `${document.title} page`),
  inWorker(new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })),
]);
