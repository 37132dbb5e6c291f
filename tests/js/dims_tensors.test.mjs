// Tensors from the ecosystem (validate.mjs): `{ data, dims }` as onnxruntime-web and transformers.js hold them, and
// their Tensor objects (a class with data/dims/type), are accepted wherever a Tensor or Mask is, with the same
// results as `{ data, shape }`; a `type` that does not match the data is a TypeError.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, randomStateDict, tensor } from './helpers.mjs';

/** The shape of onnxruntime-web's and transformers.js's Tensor: data, dims and type as properties of a class. */
class EcosystemTensor {
  #data;
  constructor(type, data, dims) {
    this.type = type;
    this.#data = data;
    this.dims = dims;
  }
  get data() {
    return this.#data;
  }
  get size() {
    return this.#data.length;
  }
}

const asDims = (t) => ({ data: t.data, dims: t.shape });

for (const variant of VARIANTS) {
  describe(`{ data, dims } tensors, ${variant} build`, async () => {
    const attn = await init({ variant });
    const q = tensor([2, 3, 4], 1);
    const k = tensor([2, 5, 4], 2);
    const v = tensor([2, 5, 6], 3);
    const mask = { data: Uint8Array.from({ length: 15 }, (_, i) => (i % 4 ? 1 : 0)), shape: [3, 5] };

    test('SDPA gives identical results for { data, shape }, { data, dims } and Tensor objects', () => {
      const want = attn.scaledDotProductAttention(q, k, v, { attnMask: mask });
      const dims = attn.scaledDotProductAttention(asDims(q), asDims(k), asDims(v), { attnMask: asDims(mask) });
      const objects = attn.scaledDotProductAttention(
        new EcosystemTensor('float32', q.data, q.shape),
        new EcosystemTensor('float32', k.data, k.shape),
        new EcosystemTensor('float32', v.data, v.shape),
        { attnMask: new EcosystemTensor('bool', mask.data, mask.shape) },
      );
      for (const got of [dims, objects]) {
        assert.deepEqual(got.output, want.output);
        assert.deepEqual(got.weights, want.weights);
      }
      const grads = attn.scaledDotProductAttentionBackward(asDims(q), asDims(k), asDims(v), asDims(want.output));
      assert.deepEqual(grads, attn.scaledDotProductAttentionBackward(q, k, v, want.output));
    });

    test('MHA forward and loadStateDict accept { data, dims }', () => {
      const E = 8;
      const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true });
      try {
        const dict = randomStateDict(E);
        mha.loadStateDict(Object.fromEntries(Object.entries(dict).map(([n, t]) => [n, t.shape ? asDims(t) : t])));
        const before = mha.stateDict();
        mha.loadStateDict(dict);
        assert.deepEqual(mha.stateDict(), before);
        const x = tensor([2, 4, E], 4);
        const kpm = { data: Uint8Array.of(0, 0, 0, 1, 0, 0, 1, 1), dims: [2, 4], type: 'bool' };
        const want = mha.forward(x, x, x, { keyPaddingMask: { data: kpm.data, shape: kpm.dims } });
        assert.deepEqual(mha.forward(asDims(x), asDims(x), asDims(x), { keyPaddingMask: kpm }), want);
      } finally {
        mha.dispose();
      }
    });

    test('a type that does not match the data is a TypeError naming the argument', () => {
      assert.throws(
        () => attn.scaledDotProductAttention(new EcosystemTensor('int64', q.data, q.shape), k, v),
        (e) =>
          e instanceof TypeError &&
          /scaledDotProductAttention: query\.type must be 'float32' for a Float32Array, got 'int64'/.test(e.message),
      );
      assert.throws(
        () =>
          attn.scaledDotProductAttention(q, k, v, { attnMask: { data: mask.data, dims: mask.shape, type: 'float32' } }),
        (e) => e instanceof TypeError && /attnMask\.type must be 'bool' or 'uint8'/.test(e.message),
      );
    });

    test('dims that do not match the data name dims', () => {
      assert.throws(
        () => attn.scaledDotProductAttention({ data: q.data, dims: [2, 3, 5] }, k, v),
        (e) =>
          e instanceof RangeError && /query\.data has 24 elements but query\.dims \[2, 3, 5\] needs 30/.test(e.message),
      );
      // Still usable afterwards.
      assert.deepEqual(attn.scaledDotProductAttention(asDims(q), k, v).output.shape, [2, 3, 6]);
    });
  });
}
