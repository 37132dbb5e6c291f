// Rollup with @rollup/plugin-node-resolve (finds `attnlab` in node_modules) and
// @web/rollup-plugin-import-meta-assets (emits the .wasm files that attnlab names with new URL(…, import.meta.url)).
import { init } from 'attnlab';
import { check, publish } from '../check.mjs';

publish([check(init, 'rollup page')]);
