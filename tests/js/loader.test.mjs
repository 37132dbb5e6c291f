// Loading: memoisation, the two variants side by side, wasmPaths (right and wrong), init's option checks, the
// CommonJS entry, and the version and type files that ship with the package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertClose, distDir, randomStateDict, root, simdScalarCase, tensor } from './helpers.mjs';

test('the same options give the same instance, also when called concurrently', async () => {
  const [a, b] = await Promise.all([init({ variant: 'simd' }), init({ variant: 'simd' })]);
  assert.equal(a, b);
  assert.equal(await init({ variant: 'simd' }), a);
  const s1 = await init({ variant: 'scalar' });
  assert.equal(await init({ variant: 'scalar', wasmPaths: undefined }), s1);
  assert.notEqual(s1, a);
  assert.equal(a.variant, 'simd');
  assert.equal(s1.variant, 'scalar');
});

test("variant 'auto' picks the threaded SIMD build in Node >= 20.16 (shared memory and SIMD work)", async () => {
  const auto = await init();
  assert.equal(auto.variant, 'simd-threaded');
  assert.equal(auto.variant, VARIANTS[0]); // the table's first row whose probe passes
  assert.equal(auto, await init({ variant: 'simd-threaded' }));
  assert.equal(await init({}), auto);
});

test('wasmPaths naming the default place gives the default instance (memoised by the .wasm location)', async () => {
  const scalar = await init({ variant: 'scalar' });
  assert.equal(await init({ variant: 'scalar', wasmPaths: `${distDir}/` }), scalar); // a folder path prefix
  assert.equal(await init({ variant: 'scalar', wasmPaths: pathToFileURL(`${distDir}/`).href }), scalar); // a URL prefix
  const record = { 'attnlab-scalar.wasm': pathToFileURL(join(distDir, 'attnlab-scalar.wasm')).href };
  assert.equal(await init({ variant: 'scalar', wasmPaths: record }), scalar);
});

test('SIMD and scalar builds side by side give the same numbers within 1e-5', async () => {
  const simd = await init({ variant: 'simd' });
  const scalar = await init({ variant: 'scalar' });
  const { q, k, v, mask } = simdScalarCase();
  const a = simd.scaledDotProductAttention(q, k, v, { attnMask: mask, isCausal: true });
  const b = scalar.scaledDotProductAttention(q, k, v, { attnMask: mask, isCausal: true });
  assertClose(a.output, b.output, { atol: 1e-5, rtol: 0 }, 'SDPA output');
  assertClose(a.weights, b.weights, { atol: 1e-5, rtol: 0 }, 'SDPA weights');

  const options = { embedDim: 24, numHeads: 4, addBiasKV: true, kdim: 10, vdim: 12 };
  const m1 = simd.createMultiHeadAttention(options);
  const m2 = scalar.createMultiHeadAttention(options);
  try {
    // The same fixed default seed: the same initial parameters in both builds.
    const p1 = m1.stateDict();
    const p2 = m2.stateDict();
    assert.deepEqual(Object.keys(p1), Object.keys(p2));
    for (const name of Object.keys(p1)) assertClose(p1[name], p2[name], { atol: 0, rtol: 0 }, name);
    const x = tensor([5, 2, 24], 4);
    const y = tensor([7, 2, 10], 5);
    const z = tensor([7, 2, 12], 6);
    const r1 = m1.forward(x, y, z, { averageAttnWeights: false });
    const r2 = m2.forward(x, y, z, { averageAttnWeights: false });
    assertClose(r1.output, r2.output, { atol: 1e-5, rtol: 0 }, 'MHA output');
    assertClose(r1.weights, r2.weights, { atol: 1e-5, rtol: 0 }, 'MHA weights');
  } finally {
    m1.dispose();
    m2.dispose();
  }
});

test('a fresh MultiHeadAttention holds PyTorch-style defaults: zero biases, bounded Xavier-uniform weights', async () => {
  const attn = await init();
  const mha = attn.createMultiHeadAttention({ embedDim: 16, numHeads: 4 });
  try {
    const p = mha.stateDict();
    assert.deepEqual(Object.keys(p), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
    assert.deepEqual(p.in_proj_weight.shape, [48, 16]);
    assert.ok(p.in_proj_bias.data.every((x) => x === 0));
    assert.ok(p['out_proj.bias'].data.every((x) => x === 0));
    const bound = Math.sqrt(6 / (48 + 16));
    assert.ok(p.in_proj_weight.data.every((x) => Math.abs(x) <= bound));
    assert.ok(p.in_proj_weight.data.some((x) => x !== 0));
    // Returned arrays are copies: changing them changes nothing inside.
    p.in_proj_weight.data.fill(123);
    assert.notEqual(mha.stateDict().in_proj_weight.data[0], 123);
    // loadStateDict takes bare Float32Arrays too.
    const dict = randomStateDict(16);
    mha.loadStateDict(Object.fromEntries(Object.entries(dict).map(([name, t]) => [name, t.data])));
    assert.deepEqual(mha.stateDict().in_proj_weight.data, dict.in_proj_weight.data);
  } finally {
    mha.dispose();
  }
});

test('a wrong wasmPaths prefix rejects with an Error naming the file and where it looked', async () => {
  const where = join(root, 'no-such-dir') + '/';
  await assert.rejects(init({ variant: 'scalar', wasmPaths: where }), (e) => {
    assert.equal(e.constructor, Error);
    assert.match(e.message, /attnlab-scalar\.wasm/);
    assert.ok(e.message.includes(pathToFileURL(where).href), e.message);
    assert.match(e.message, /wasmPaths/);
    return true;
  });
});

test('a wrong wasmPaths record entry rejects with an Error naming the file and the URL', async () => {
  const url = 'file:///nonexistent/attnlab/simd-build.wasm';
  await assert.rejects(init({ variant: 'simd', wasmPaths: { 'attnlab-simd.wasm': url } }), (e) => {
    assert.match(e.message, /attnlab-simd\.wasm/);
    assert.ok(e.message.includes(url), e.message);
    return true;
  });
  // The failure is not memoised, and other instances are unaffected.
  await assert.rejects(init({ variant: 'simd', wasmPaths: { 'attnlab-simd.wasm': url } }), /attnlab-simd\.wasm/);
  const attn = await init({ variant: 'simd' });
  assert.equal(
    attn.scaledDotProductAttention(tensor([2, 2]), tensor([3, 2]), tensor([3, 1])).output.shape.join(),
    '2,1',
  );
});

test('a file that is not WebAssembly rejects with an Error naming it', async () => {
  const notWasm = pathToFileURL(join(root, 'package.json')).href;
  await assert.rejects(init({ variant: 'scalar', wasmPaths: { 'attnlab-scalar.wasm': notWasm } }), (e) => {
    assert.match(e.message, /attnlab-scalar\.wasm/);
    assert.ok(e.message.includes(notWasm), e.message);
    return true;
  });
});

test('init rejects bad options: TypeError for a wrong type, RangeError for a wrong value', async () => {
  await assert.rejects(init({ variant: 'gpu' }), (e) => e.constructor === RangeError && /variant/.test(e.message));
  await assert.rejects(init({ variant: 3 }), (e) => e.constructor === TypeError && /variant/.test(e.message));
  await assert.rejects(init({ wasmPaths: 5 }), (e) => e.constructor === TypeError && /wasmPaths/.test(e.message));
  await assert.rejects(init({ wasmPaths: ['x'] }), (e) => e.constructor === TypeError && /wasmPaths/.test(e.message));
  await assert.rejects(init('simd'), (e) => e.constructor === TypeError && /options/.test(e.message));
});

test('the CommonJS entry gives the same instances as the ESM entry', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require(join(distDir, 'index.cjs'));
  assert.equal(typeof cjs.init, 'function');
  assert.equal(await cjs.init({ variant: 'scalar' }), await init({ variant: 'scalar' }));
});

test('version matches package.json, and the instance reports it', async () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { version } = await import('../../dist/version.mjs');
  assert.equal(version, pkg.version);
  assert.equal((await init()).version, pkg.version);
});

test('index.d.cts is index.d.ts less its ESM-only region', () => {
  const esm = readFileSync(join(distDir, 'index.d.ts'), 'utf8');
  const start = esm.indexOf('// #region ESM-only');
  const end = esm.indexOf('\n', esm.indexOf('// #endregion ESM-only')) + 1;
  const expected = start < 0 ? esm : esm.slice(0, start) + esm.slice(end);
  assert.equal(
    readFileSync(join(distDir, 'index.d.cts'), 'utf8'),
    expected,
    'scripts/build.sh generates dist/index.d.cts',
  );
});

test('results are JS-owned copies, not views into wasm memory', async () => {
  const attn = await init();
  const r = attn.scaledDotProductAttention(tensor([3, 4]), tensor([5, 4]), tensor([5, 2]));
  const { Module } = await (await import('../../dist/loader.mjs')).loadModule({ variant: 'simd' });
  assert.notEqual(r.output.data.buffer, Module.HEAPU8.buffer);
  assert.notEqual(r.weights.data.buffer, Module.HEAPU8.buffer);
});

test('inputs backed by a SharedArrayBuffer or at an offset in a bigger buffer are read correctly', async () => {
  const attn = await init();
  const q = tensor([2, 3, 4], 1);
  const k = tensor([2, 5, 4], 2);
  const v = tensor([2, 5, 3], 3);
  const want = attn.scaledDotProductAttention(q, k, v);
  const shared = new Float32Array(new SharedArrayBuffer(q.data.byteLength));
  shared.set(q.data);
  const big = new Float32Array(k.data.length + 7);
  big.set(k.data, 7);
  const got = attn.scaledDotProductAttention(
    { data: shared, shape: q.shape },
    { data: big.subarray(7), shape: k.shape },
    v,
  );
  assertClose(got.output, want.output, { atol: 0, rtol: 0 }, 'output');
});

test('inputs bigger than the initial heap grow wasm memory, and later calls still read fresh views', async () => {
  const attn = await init({ variant: 'scalar' });
  const before = attn.memoryBytes();
  const q = tensor([1, 512, 64], 1);
  const k = tensor([1, 2048, 64], 2);
  const v = tensor([1, 2048, 64], 3);
  const a = attn.scaledDotProductAttention(q, k, v); // weights 4 MiB, inputs ~1 MiB
  const big = tensor([1, 4096, 1024], 4); // 16 MiB per input: forces growth
  attn.scaledDotProductAttention(tensor([1, 8, 1024], 5), big, big, { needWeights: false });
  assert.ok(attn.memoryBytes() > before, 'memory grew');
  const b = attn.scaledDotProductAttention(q, k, v);
  assertClose(b.output, a.output, { atol: 0, rtol: 0 }, 'same result after growth');
});
