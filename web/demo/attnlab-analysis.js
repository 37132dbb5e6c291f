// @ts-check
// attnlab/analysis (rollout and attention flow: pure functions of returned attention lists, no wasm) as the page gets
// it, from the built package (dist/); `npm run build:demo` points this file at ./attnlab/ (scripts/build.sh --site).

export * from '../../dist/analysis.mjs';
