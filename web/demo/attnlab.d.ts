// The types of attnlab.js (which re-exports the built package, dist/index.mjs): the package's public types, so that
// the demo type-checks against web/src/index.d.ts whether or not dist/ is built (web/demo/tsconfig.json).
export * from '../src/index.js';
