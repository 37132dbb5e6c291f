// The types of attnlab-viz.js (which re-exports dist/viz.mjs): the package's public types of attnlab/viz.
export * from '../src/viz.js';
