// Grouped-query MultiHeadAttention (numKVHeads) and decoding with a KV cache (mha.createKVCache, forward's kvCache;
// web/src/kv_cache.mjs) through the public API, in both variants: GQA against the float64 reference (reference.mjs),
// numKVHeads = numHeads identical to the default module, decoding token by token and after a prefill equal to ONE
// causal forward at every step, misuse (bad numKVHeads, cache of another module, wrong batch, past maxLength,
// disposed caches and modules) with named errors, and no leak (memoryBytes after many caches and steps).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, tensor } from './helpers.mjs';
import { mhaRef } from './reference.mjs';

/** A random state dict for a GQA configuration (separate projections, in_proj_bias of E + 2 Ekv). */
function gqaStateDict(E, H, Hkv, seed) {
  const Ekv = (E / H) * Hkv;
  const scaled = (shape, s, k) => {
    const t = tensor(shape, s);
    return { data: t.data.map((x) => Math.fround(x * k)), shape };
  };
  return {
    q_proj_weight: scaled([E, E], seed, 0.5),
    k_proj_weight: scaled([Ekv, E], seed + 1, 0.5),
    v_proj_weight: scaled([Ekv, E], seed + 2, 0.5),
    in_proj_bias: scaled([E + 2 * Ekv], seed + 3, 0.1),
    'out_proj.weight': scaled([E, E], seed + 4, 0.5),
    'out_proj.bias': scaled([E], seed + 5, 0.1),
  };
}

/** Positions [t0, t0 + len) of x (N, T, E) batch-first or (T, N, E). */
function slice(x, batchFirst, t0, len) {
  const [a, b, E] = x.shape;
  if (batchFirst) {
    const out = new Float32Array(a * len * E);
    for (let n = 0; n < a; ++n) out.set(x.data.subarray((n * b + t0) * E, (n * b + t0 + len) * E), n * len * E);
    return { data: out, shape: [a, len, E] };
  }
  return { data: x.data.slice(t0 * b * E, (t0 + len) * b * E), shape: [len, b, E] };
}

/** Causal (T, T) mask in nn.MultiheadAttention's convention: 1 = masked out. */
function causalMask(T) {
  return { data: Uint8Array.from({ length: T * T }, (_, i) => (i % T > Math.floor(i / T) ? 1 : 0)), shape: [T, T] };
}

/** Weight rows [t0, t0 + len) over keys [0, t0 + len) of full weights (planes, T, T). */
function weightRows(w, planes, T, t0, len) {
  const out = [];
  for (let p = 0; p < planes; ++p) {
    for (let i = t0; i < t0 + len; ++i) for (let j = 0; j < t0 + len; ++j) out.push(w.data[(p * T + i) * T + j]);
  }
  return out;
}

for (const variant of VARIANTS) {
  describe(`GQA and KV cache (${variant})`, async () => {
    const attn = await init({ variant });

    test('numKVHeads < numHeads matches the float64 reference; state-dict names and shapes', () => {
      for (const [E, H, Hkv, batchFirst] of [
        [16, 8, 2, true],
        [12, 6, 3, false],
        [8, 4, 1, true],
      ]) {
        const config = { embedDim: E, numHeads: H, numKVHeads: Hkv, batchFirst };
        const mha = attn.createMultiHeadAttention(config);
        const sd = mha.stateDict();
        assert.deepEqual(Object.keys(sd), [
          'q_proj_weight',
          'k_proj_weight',
          'v_proj_weight',
          'in_proj_bias',
          'out_proj.weight',
          'out_proj.bias',
        ]);
        assert.deepEqual(sd.k_proj_weight.shape, [(E / H) * Hkv, E]);
        assert.deepEqual(sd.in_proj_bias.shape, [E + 2 * (E / H) * Hkv]);
        const params = gqaStateDict(E, H, Hkv, 3 * E);
        mha.loadStateDict(params);
        const x = tensor(batchFirst ? [2, 5, E] : [5, 2, E], 4);
        const y = tensor(batchFirst ? [2, 7, E] : [7, 2, E], 5);
        for (const averageAttnWeights of [true, false]) {
          const got = mha.forward(x, y, y, { averageAttnWeights });
          const want = mhaRef(config, params, x, y, y, { averageAttnWeights });
          assertClose(got.output, want.output, {}, 'GQA output');
          assertClose(got.weights, want.weights, {}, 'GQA weights');
        }
        mha.dispose();
      }
    });

    test('numKVHeads = numHeads is the default module, bit for bit', () => {
      const a = attn.createMultiHeadAttention({ embedDim: 12, numHeads: 3, seed: 5 });
      const b = attn.createMultiHeadAttention({ embedDim: 12, numHeads: 3, numKVHeads: 3, seed: 5 });
      assert.deepEqual(Object.keys(b.stateDict()), [
        'in_proj_weight',
        'in_proj_bias',
        'out_proj.weight',
        'out_proj.bias',
      ]);
      const x = tensor([4, 2, 12], 9);
      const ra = a.forward(x, x, x);
      const rb = b.forward(x, x, x);
      assert.deepEqual(rb.output.data, ra.output.data);
      assert.deepEqual(rb.weights.data, ra.weights.data);
      a.dispose();
      b.dispose();
    });

    test('decoding token by token and after a prefill equals one causal forward at every step', () => {
      const E = 16;
      const T = 12;
      for (const [Hkv, batchFirst, steps] of [
        [4, true, Array(T).fill(1)],
        [2, false, Array(T).fill(1)],
        [1, true, [5, 1, 1, 3, 1, 1]],
        [2, true, [7, 1, 1, 1, 1, 1]],
      ]) {
        const config = { embedDim: E, numHeads: 4, numKVHeads: Hkv, batchFirst };
        const mha = attn.createMultiHeadAttention(config);
        if (Hkv < 4) mha.loadStateDict(gqaStateDict(E, 4, Hkv, 40 + Hkv)); // (else: the default initialisation)
        const x = tensor(batchFirst ? [3, T, E] : [T, 3, E], 50 + Hkv);
        const full = mha.forward(x, x, x, { attnMask: causalMask(T), averageAttnWeights: false });
        const ref = mhaRef(config, mha.stateDict(), x, x, x, { attnMask: causalMask(T), averageAttnWeights: false });
        assertClose(full.output, ref.output, {}, 'full causal forward vs reference');
        const cache = mha.createKVCache({ batchSize: 3, maxLength: T });
        assert.equal(cache.length, 0);
        let t0 = 0;
        for (const len of steps) {
          const xs = slice(x, batchFirst, t0, len);
          const r = mha.forward(xs, xs, xs, { kvCache: cache, averageAttnWeights: false });
          assert.equal(cache.length, t0 + len);
          assertClose(r.output, slice(full.output, batchFirst, t0, len), { atol: 2e-6, rtol: 1e-5 }, `step ${t0}`);
          assert.deepEqual(r.weights.shape, [3, 4, len, t0 + len]);
          assertClose(
            r.weights,
            { data: weightRows(full.weights, 12, T, t0, len), shape: r.weights.shape },
            { atol: 2e-6, rtol: 1e-5 },
            `weights at step ${t0}`,
          );
          t0 += len;
        }
        cache.reset();
        assert.equal(cache.length, 0);
        const first = slice(x, batchFirst, 0, 1);
        const again = mha.forward(first, first, first, { kvCache: cache, needWeights: false });
        assertClose(again.output, slice(full.output, batchFirst, 0, 1), { atol: 2e-6, rtol: 1e-5 }, 'after reset');
        assert.equal(again.weights, undefined);
        mha.dispose(); // (and its cache)
        assert.throws(() => cache.length, /disposed/);
      }
    });

    test('misuse: bad numKVHeads, cache options, other module, wrong batch, past maxLength, disposed', () => {
      assertThrows(
        () => attn.createMultiHeadAttention({ embedDim: 16, numHeads: 8, numKVHeads: 3 }),
        RangeError,
        /createMultiHeadAttention: numKVHeads: expected a positive divisor of numHeads = 8, got 3/,
      );
      assertThrows(
        () => attn.createMultiHeadAttention({ embedDim: 16, numHeads: 8, numKVHeads: 0 }),
        RangeError,
        /numKVHeads/,
      );
      assertThrows(
        () => attn.createMultiHeadAttention({ embedDim: 16, numHeads: 8, numKVHeads: '2' }),
        TypeError,
        /numKVHeads/,
      );
      const mha = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, numKVHeads: 1, batchFirst: true });
      const other = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, numKVHeads: 1, batchFirst: true });
      assertThrows(() => mha.createKVCache(), TypeError, /mha\.createKVCache: options \{ batchSize, maxLength \}/);
      assertThrows(() => mha.createKVCache({ batchSize: 1 }), TypeError, /maxLength is required/);
      assertThrows(() => mha.createKVCache({ batchSize: 0, maxLength: 4 }), RangeError, /batchSize/);
      assertThrows(() => mha.createKVCache({ batchSize: 1, maxLength: 4, size: 3 }), TypeError, /size/);
      assertThrows(() => mha.createKVCache({ batchSize: 1e6, maxLength: 1e6 }), RangeError, /maxLength/);
      const cache = mha.createKVCache({ batchSize: 2, maxLength: 4 });
      assert.equal(cache.maxLength, 4);
      assert.equal(cache.batchSize, 2);
      assert.equal(Object.prototype.toString.call(cache), '[object KVCache]');
      const three = tensor([2, 3, 8], 1);
      const one = tensor([2, 1, 8], 2);
      mha.forward(three, three, three, { kvCache: cache });
      assertThrows(() => mha.forward(three, three, three, { kvCache: cache }), RangeError, /maxLength = 4/, /kvCache/);
      assert.equal(cache.length, 3, 'a rejected step appends nothing');
      assertThrows(() => other.forward(one, one, one, { kvCache: cache }), RangeError, /another module/);
      assertThrows(() => mha.forward(one, one, one, { kvCache: {} }), TypeError, /kvCache must be a KVCache/);
      const single = tensor([1, 1, 8], 3);
      assertThrows(() => mha.forward(single, single, single, { kvCache: cache }), RangeError, /batchSize = 1/);
      assertThrows(
        () => mha.forward(one, one, one, { kvCache: cache, requiresGrad: true }),
        RangeError,
        /requiresGrad/,
      );
      assertThrows(
        () =>
          mha.forward(one, one, one, { kvCache: cache, keyPaddingMask: { data: new Uint8Array(2), shape: [2, 1] } }),
        RangeError,
        /keyPaddingMask/,
        /\[2, 4\]/,
      );
      mha.forward(one, one, one, { kvCache: cache, keyPaddingMask: { data: new Uint8Array(8), shape: [2, 4] } });
      assert.equal(cache.length, 4);
      mha.loadStateDict(mha.stateDict());
      assertThrows(() => mha.forward(one, one, one, { kvCache: cache }), Error, /reset\(\) it first/);
      cache.reset();
      mha.forward(one, one, one, { kvCache: cache });
      cache.dispose();
      cache.dispose(); // idempotent
      assertThrows(() => cache.length, Error, /kvCache\.length: this KVCache has been disposed/);
      assertThrows(() => cache.reset(), Error, /disposed/);
      assertThrows(
        () => mha.forward(one, one, one, { kvCache: cache }),
        Error,
        /mha\.forward: this KVCache has been disposed/,
      );
      // Disposing the module disposes its caches.
      const m2 = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2 });
      const c2 = m2.createKVCache({ batchSize: 1, maxLength: 2 });
      m2.dispose();
      assertThrows(() => c2.length, Error, /disposed/);
      assertThrows(() => m2.createKVCache({ batchSize: 1, maxLength: 2 }), Error, /has been disposed/);
      c2.dispose();
      const withBias = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, addBiasKV: true });
      assertThrows(() => withBias.createKVCache({ batchSize: 1, maxLength: 2 }), RangeError, /addBiasKV/);
      withBias.dispose();
      mha.dispose();
      other.dispose();
      assertStillWorks(attn);
    });

    test('caches free their memory: many created, used and disposed leave memoryBytes unchanged', () => {
      const mha = attn.createMultiHeadAttention({ embedDim: 32, numHeads: 4, numKVHeads: 2, batchFirst: true });
      const x = tensor([2, 1, 32], 7);
      const round = () => {
        const cache = mha.createKVCache({ batchSize: 2, maxLength: 4096 }); // 2 MiB
        for (let t = 0; t < 8; ++t) mha.forward(x, x, x, { kvCache: cache });
        cache.dispose();
      };
      for (let i = 0; i < 3; ++i) round(); // warm-up
      const before = attn.memoryBytes();
      for (let i = 0; i < 200; ++i) round(); // 400 MiB in all: any leaked cache would grow the memory
      assert.equal(attn.memoryBytes(), before);
      mha.dispose();
    });
  });
}

describe('KV cache through attnlab/worker', () => {
  test('createKVCache, forward with kvCache, length, reset, dispose: the synchronous results, bit for bit', async () => {
    const variant = VARIANTS.includes('simd') ? 'simd' : VARIANTS[0];
    const attn = await init({ variant });
    const w = await initWorker({ variant });
    try {
      const config = { embedDim: 16, numHeads: 4, numKVHeads: 2, batchFirst: true, seed: 3 };
      const local = attn.createMultiHeadAttention(config);
      const remote = await w.createMultiHeadAttention(config);
      const localCache = local.createKVCache({ batchSize: 2, maxLength: 5 });
      const remoteCache = await remote.createKVCache({ batchSize: 2, maxLength: 5 });
      const x = tensor([2, 5, 16], 8);
      for (let t = 0; t < 5; ++t) {
        const xs = slice(x, true, t, 1);
        const want = local.forward(xs, xs, xs, { kvCache: localCache });
        const got = await remote.forward(xs, xs, xs, { kvCache: remoteCache });
        assert.deepEqual(got.output, want.output);
        assert.deepEqual(got.weights, want.weights);
      }
      assert.equal(await remoteCache.length(), 5);
      await assert.rejects(
        remote.forward(slice(x, true, 0, 1), slice(x, true, 0, 1), slice(x, true, 0, 1), {
          kvCache: remoteCache,
        }),
        (e) => e instanceof RangeError && /maxLength = 5/.test(e.message),
      );
      await remoteCache.reset();
      assert.equal(await remoteCache.length(), 0);
      await remoteCache.dispose();
      await assert.rejects(remoteCache.length(), /disposed/);
      await assert.rejects(
        remote.forward(slice(x, true, 0, 1), slice(x, true, 0, 1), slice(x, true, 0, 1), { kvCache: remoteCache }),
        (e) => e.constructor === Error && /KVCache has been disposed/.test(e.message),
      );
      await remote.dispose();
      local.dispose();
    } finally {
      w.terminate();
    }
  });
});
