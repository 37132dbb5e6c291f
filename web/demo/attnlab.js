// @ts-check
// The package as the page and its workers get it: the public API of the built package (dist/, `npm run build`).
// Every part imports attnlab from here, never from web/src. `npm run build:demo` puts the package in ./attnlab/
// beside the page and points this file there (scripts/build.sh --site).

export * from '../../dist/index.mjs';
