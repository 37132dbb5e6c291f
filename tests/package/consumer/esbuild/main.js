// esbuild bundles attnlab's JavaScript but does not emit its .wasm files: the build copies them to wasm/ beside
// this page, and init() is told where they are (docs/bundlers.md, "esbuild").
import { init } from 'attnlab';
import { check, publish } from '../check.mjs';

publish([check(init, 'esbuild page', { wasmPaths: 'wasm/' })]);
