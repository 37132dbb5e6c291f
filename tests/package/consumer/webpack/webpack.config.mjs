// webpack 5 (docs/bundlers.md, "webpack 5"): no attnlab-specific rule or plugin.
// `new URL('./x.wasm', import.meta.url)` in attnlab becomes an asset, the wasm glue's dynamic import() a chunk, and
// `new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })` a worker bundle.
import { fileURLToPath } from 'node:url';

export default {
  mode: 'production',
  entry: './app/main.js',
  output: { path: fileURLToPath(new URL('./dist/', import.meta.url)), filename: 'main.js', clean: true },
  performance: { hints: false },
};
