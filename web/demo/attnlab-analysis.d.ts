// The types of attnlab-analysis.js (which re-exports dist/analysis.mjs): the package's public types of attnlab/analysis.
export * from '../src/analysis.js';
