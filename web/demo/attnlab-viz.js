// @ts-check
// attnlab/viz (the package's views: heat maps, token links) as the page gets it, from the built package (dist/);
// `npm run build:demo` points this file at ./attnlab/ (scripts/build.sh --site).

export * from '../../dist/viz.mjs';
