// The types of attnlab-worker.js (which re-exports the built package's dist/worker.mjs): the package's public types.
export * from '../src/worker.js';
