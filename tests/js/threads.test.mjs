// The threaded variant's thread count (web/src/loader.mjs, cpp/src/parallel.cc through cpp/bindings/embind.cc
// _setThreads): init({ threads }) sets the pool, attn.threads reports it, instances are memoised per (variant,
// threads), results are bit-identical for 1, 2, 3, 4 and 8 threads (a pool may be larger than the machine), hostile
// inputs get the single-thread build's errors and leave the instance usable, and without shared memory asking for
// the threaded variant fails at once with an Error naming the missing headers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { assertStillWorks, distDir, randomStateDict, tensor } from './helpers.mjs';

const kThreaded = 'simd-threaded';
const kCounts = [1, 2, 3, 4, 8];

/** Bit-identical: every element equal, NaN where NaN (the threads split whole problems and row blocks). */
function assertSame(a, b, what) {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  assert.equal(a.data.length, b.data.length, `${what}: length`);
  for (let i = 0; i < a.data.length; ++i) {
    if (!Object.is(a.data[i], b.data[i])) assert.fail(`${what}[${i}]: ${a.data[i]} vs ${b.data[i]}`);
  }
}

/** Every result of one instance on work big enough to be split (each job well above 1e6 flops). */
function run(attn) {
  const out = {};
  // SDPA: 2 × 4 problems of L = 96, dk = 32, with a causal mask; and its backward.
  const q = tensor([2, 4, 96, 32], 11);
  const k = tensor([2, 4, 96, 32], 12);
  const v = tensor([2, 4, 96, 40], 13);
  const sdpa = attn.scaledDotProductAttention(q, k, v, { isCausal: true });
  out.sdpaOutput = sdpa.output;
  out.sdpaWeights = sdpa.weights;
  const grads = attn.scaledDotProductAttentionBackward(q, k, v, tensor([2, 4, 96, 40], 14), { isCausal: true });
  Object.assign(out, { gradQuery: grads.gradQuery, gradKey: grads.gradKey, gradValue: grads.gradValue });
  // MHA: E = 64, 8 heads, L = 160 (three 64-row blocks), batch 2, per-head weights; forward and backward.
  const mha = attn.createMultiHeadAttention({ embedDim: 64, numHeads: 8, batchFirst: true });
  try {
    mha.loadStateDict(randomStateDict(64, 21));
    const x = tensor([2, 160, 64], 22);
    const r = mha.forward(x, x, x, { averageAttnWeights: false, requiresGrad: true });
    out.mhaOutput = r.output;
    out.mhaWeights = r.weights;
    const g = mha.backward(tensor([2, 160, 64], 23));
    for (const [name, t] of Object.entries(g)) if (t && t.data) out[`mha.${name}`] = t;
    const averaged = mha.forward(x, x, x);
    out.mhaAveragedWeights = averaged.weights;
  } finally {
    mha.dispose();
  }
  return out;
}

describe(`${kThreaded}: thread count`, () => {
  test('attn.threads reports the pool; the default is one thread per core, at most 4; memoised per count', async () => {
    const byDefault = await init({ variant: kThreaded });
    assert.equal(byDefault.variant, kThreaded);
    assert.equal(byDefault.threads, Math.min(4, availableParallelism()));
    const three = await init({ variant: kThreaded, threads: 3 });
    assert.equal(three.threads, 3);
    assert.equal(await init({ variant: kThreaded, threads: 3 }), three);
    assert.notEqual(three, await init({ variant: kThreaded, threads: 2 }));
    // Single-thread variants always report 1, whatever was asked.
    const simd = await init({ variant: 'simd', threads: 4 });
    assert.equal(simd.threads, 1);
    assert.equal(simd, await init({ variant: 'simd' }));
  });

  test('init({ threads }) is checked', async () => {
    await assert.rejects(init({ variant: kThreaded, threads: '2' }), {
      name: 'TypeError',
      message: 'init: threads must be a number, got string',
    });
    for (const bad of [0, -1, 1.5, NaN, 65]) {
      await assert.rejects(init({ variant: kThreaded, threads: bad }), (e) => {
        assert.ok(e instanceof RangeError);
        assert.match(e.message, /^init: threads must be an integer in \[1, 64\], got /);
        return true;
      });
    }
  });

  test('outputs, weights and gradients are bit-identical for 1, 2, 3, 4 and 8 threads, and match simd', async () => {
    const runs = [];
    for (const threads of kCounts) {
      const attn = await init({ variant: kThreaded, threads });
      assert.equal(attn.threads, threads);
      runs.push(run(attn));
    }
    for (const [i, r] of runs.entries()) {
      assert.deepEqual(Object.keys(r), Object.keys(runs[0]));
      for (const name of Object.keys(r)) assertSame(r[name], runs[0][name], `${kCounts[i]} vs 1 thread: ${name}`);
    }
    // The single-thread SIMD build runs the same kernels in the same order: the same bits too.
    const simd = run(await init({ variant: 'simd' }));
    for (const name of Object.keys(simd)) assertSame(runs[1][name], simd[name], `2 threads vs simd: ${name}`);
  });

  test('hostile inputs get the single-thread errors and leave every pool size usable', async () => {
    const simd = await init({ variant: 'simd' });
    const q = tensor([2, 3, 4], 1);
    const cases = [
      [q, { data: new Float32Array(5), shape: [2, 3, 4] }, q, {}],
      [q, q, q, { attnMask: { data: new Uint8Array(7), shape: [3, 3] } }],
      [q, q, q, { scale: 'x' }],
      [{ data: new Float32Array(2 ** 20), shape: [2 ** 10, 2 ** 10] }, q, q, {}],
    ];
    const messages = (attn) =>
      cases.map((args) => {
        try {
          attn.scaledDotProductAttention(...args);
          return 'no error';
        } catch (e) {
          return `${e.constructor.name}: ${e.message}`;
        }
      });
    const expected = messages(simd);
    assert.ok(expected.every((m) => m !== 'no error'));
    for (const threads of [1, 2, 8]) {
      const attn = await init({ variant: kThreaded, threads });
      assert.deepEqual(messages(attn), expected, `${threads} threads`);
      assertStillWorks(attn);
      const big = tensor([2, 4, 96, 32], 3); // a split job after the errors: the pool is still there
      assert.equal(attn.scaledDotProductAttention(big, big, big).output.data.length, 2 * 4 * 96 * 32);
    }
  });

  test('results are JS-owned copies, not views of the shared memory', async () => {
    const attn = await init({ variant: kThreaded, threads: 2 });
    const q = tensor([2, 4, 96, 32], 5);
    const { output, weights } = attn.scaledDotProductAttention(q, q, q);
    assert.ok(!(output.data.buffer instanceof SharedArrayBuffer));
    assert.ok(!(weights.data.buffer instanceof SharedArrayBuffer));
  });
});

describe('without shared memory', () => {
  // A page or worker that is not cross-origin isolated, simulated in a fresh Node: `window` defined (so the loader
  // takes the browser path) and crossOriginIsolated false.
  const kIndex = pathToFileURL(join(distDir, 'index.mjs')).href;
  function inPage(isolated, body) {
    const script = `globalThis.window = globalThis; globalThis.crossOriginIsolated = ${isolated};
      const { init } = await import(${JSON.stringify(kIndex)});
      ${body}`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  }

  test("init({ variant: 'simd-threaded' }) throws an Error naming the COOP/COEP headers, at once", () => {
    const out = inPage(
      false,
      `try { await init({ variant: 'simd-threaded' }); console.log('resolved'); }
       catch (e) { console.log(e.constructor.name + ': ' + e.message); }`,
    );
    assert.match(
      out,
      /^Error: attnlab: variant 'simd-threaded' cannot run here: the page is not cross-origin isolated/,
    );
    assert.match(out, /`Cross-Origin-Opener-Policy: same-origin`/);
    assert.match(out, /`Cross-Origin-Embedder-Policy: require-corp`/);
  });

  test("'auto' falls back to simd there, and where the glue is not served next to the loader (a bundle)", () => {
    // Node's fetch cannot read the file: URL of the .wasm, so the load fails, and its error names the variant
    // that 'auto' chose. Isolated but with the glue at a file: URL (as in a bundle): simd too, and asking for
    // simd-threaded says why at once.
    const body = `try { await init(); } catch (e) { console.log(e.message); }`;
    assert.match(inPage(false, body), /could not load attnlab-simd\.wasm \(variant 'simd'\)/);
    assert.match(inPage(true, body), /could not load attnlab-simd\.wasm \(variant 'simd'\)/);
    const threaded = `try { await init({ variant: 'simd-threaded' }); } catch (e) { console.log(e.message); }`;
    assert.match(inPage(true, threaded), /^attnlab: variant 'simd-threaded' cannot run here: its glue is not served/);
  });
});
