// The one table of WebAssembly variants (wasm-variants.json) and everything that must agree with it: the loader's
// generated view (web/src/variants.mjs, scripts/gen-variants.mjs), the public Variant type, the package's exports
// map, the built files in dist/, and the tests' variant list.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { generate, readVariants } from '../../scripts/gen-variants.mjs';
import { VARIANTS, distDir, root } from './helpers.mjs';

const table = readVariants();
const names = table.map((v) => v.name);

test('web/src/variants.mjs is what scripts/gen-variants.mjs makes of the table', () => {
  assert.equal(readFileSync(join(root, 'web', 'src', 'variants.mjs'), 'utf8'), generate(table));
});

test("the loader's variant list, the tests' list and the table agree (order: most capable first)", async () => {
  const { variantNames, wasmFileNames } = await import('../../dist/loader.mjs');
  assert.deepEqual([...variantNames], names);
  assert.deepEqual(VARIANTS, names);
  assert.deepEqual(Object.keys(wasmFileNames), names);
});

test("index.d.ts's Variant type lists exactly the table's names", () => {
  const dts = readFileSync(join(root, 'web', 'src', 'index.d.ts'), 'utf8');
  const union = /export type Variant = ([^;]+);/.exec(dts)[1];
  assert.deepEqual(
    union.split('|').map((s) => s.trim().replace(/'/g, '')),
    names,
  );
});

test("package.json's exports list each variant's .wasm, and dist/ holds each variant's files", () => {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const wasmExports = Object.keys(exports).filter((k) => k.endsWith('.wasm'));
  assert.deepEqual(wasmExports.sort(), names.map((n) => `./attnlab-${n}.wasm`).sort());
  for (const v of table) for (const f of v.files) assert.ok(existsSync(join(distDir, f)), `dist/${f} is missing`);
  // A threaded variant's pthread worker is a classic script: dist/package.json makes it CommonJS in Node.
  assert.deepEqual(JSON.parse(readFileSync(join(distDir, 'package.json'), 'utf8')), { type: 'commonjs' });
});
