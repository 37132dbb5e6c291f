'use strict';
// CommonJS entry of attnlab. The implementation is ESM (index.mjs); init() is asynchronous anyway, so the CJS
// entry loads it with a dynamic import(). Same instances as the ESM entry: both share one copy of index.mjs.

/**
 * Loads attnlab's WebAssembly and resolves to the instance (see index.d.cts).
 * @param {{ variant?: string, threads?: number, wasmPaths?: string | Record<string, string> }} [options]
 */
function init(options) {
  return import('./index.mjs').then((m) => m.init(options));
}

exports.init = init;
