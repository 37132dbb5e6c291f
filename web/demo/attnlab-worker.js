// @ts-check
// attnlab/worker (the whole API in a module Web Worker, every call a Promise) as the page gets it, from the built
// package (dist/); `npm run build:demo` points this file at ./attnlab/ (scripts/build.sh --site).

export * from '../../dist/worker.mjs';
