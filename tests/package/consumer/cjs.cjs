// CommonJS consumer: `require` the installed package by name; the .wasm files resolve through the exports map.
const { init } = require('attnlab');
const fs = require('node:fs');

for (const file of ['attnlab/attnlab-simd.wasm', 'attnlab/attnlab-scalar.wasm', 'attnlab/package.json']) {
  fs.accessSync(require.resolve(file));
}
import('./check.mjs')
  .then(({ check }) => check(init, 'node CJS require'))
  .then(console.log, (e) => {
    console.error(e);
    process.exit(1);
  });
