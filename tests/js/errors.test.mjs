// Bad input, one test each: the error class (TypeError for a wrong type, RangeError for a wrong size, shape or
// value, Error for a wrong state), a message that names the argument in its JS spelling (never the C++
// snake_case one), and afterwards the instance still computes correctly. Runs against both wasm variants.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertStillWorks, randomStateDict, tensor } from './helpers.mjs';

const kSnakeCase = /\b(attn_mask|key_padding_mask|embed_dim|num_heads|add_bias_kv|add_zero_attn|is_causal|need_weights|batch_first|average_attn_weights)\b/;

/** Asserts that fn throws exactly `Class` (not a subclass) with a message matching every pattern. */
function assertThrows(fn, Class, ...patterns) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, 'expected a throw');
  assert.ok(error instanceof Error, `expected an Error object, got ${typeof error}: ${error}`);
  assert.equal(error.constructor, Class, `expected ${Class.name}, got ${error.constructor.name}: ${error.message}`);
  for (const p of patterns) assert.match(error.message, p);
  assert.doesNotMatch(error.message, kSnakeCase, 'message uses the JS spelling of argument names');
  return error;
}

const q = () => tensor([2, 4, 8], 1);
const k = () => tensor([2, 6, 8], 2);
const v = () => tensor([2, 6, 5], 3);

for (const variant of VARIANTS) {
  describe(`bad input, ${variant} build`, async () => {
    const attn = await init({ variant });
    const E = 8;
    const H = 2;
    const mhaOptions = { embedDim: E, numHeads: H, batchFirst: true };
    const x = () => tensor([2, 3, E], 4);
    const mha = attn.createMultiHeadAttention(mhaOptions);

    // Each case: [title, fn, class, ...patterns]. After each, the instance must still compute correctly.
    const cases = [
      // ---- scaledDotProductAttention: tensors
      ['SDPA: data.length differs from product(shape)', () => attn.scaledDotProductAttention({ data: new Float32Array(63), shape: [2, 4, 8] }, k(), v()), RangeError, /query/, /63/, /64/],
      ['SDPA: plain Array data', () => attn.scaledDotProductAttention({ data: Array.from(q().data), shape: [2, 4, 8] }, k(), v()), TypeError, /query\.data/, /Float32Array/, /Array/],
      ['SDPA: Float64Array data', () => attn.scaledDotProductAttention(q(), { data: new Float64Array(96), shape: [2, 6, 8] }, v()), TypeError, /key\.data/, /Float64Array/],
      ['SDPA: bare Float32Array instead of a tensor', () => attn.scaledDotProductAttention(q(), k(), new Float32Array(60)), TypeError, /value/],
      ['SDPA: a number instead of a tensor', () => attn.scaledDotProductAttention(3, k(), v()), TypeError, /query/],
      ['SDPA: null tensor', () => attn.scaledDotProductAttention(q(), null, v()), TypeError, /key/],
      ['SDPA: shape not an array', () => attn.scaledDotProductAttention({ data: q().data, shape: '2,4,8' }, k(), v()), TypeError, /query\.shape/],
      ['SDPA: negative dimension', () => attn.scaledDotProductAttention({ data: q().data, shape: [-2, -4, 8] }, k(), v()), RangeError, /query\.shape/, /-2/],
      ['SDPA: fractional dimension', () => attn.scaledDotProductAttention(q(), k(), { data: v().data, shape: [2, 6, 2.5, 2] }), RangeError, /value\.shape/, /2\.5/],
      ['SDPA: NaN dimension', () => attn.scaledDotProductAttention({ data: q().data, shape: [2, NaN, 8] }, k(), v()), RangeError, /query\.shape/, /NaN/],
      ['SDPA: Infinity dimension', () => attn.scaledDotProductAttention(q(), { data: k().data, shape: [2, Infinity, 8] }, v()), RangeError, /key\.shape/, /Infinity/],
      ['SDPA: huge dimension', () => attn.scaledDotProductAttention({ data: q().data, shape: [2 ** 40, 4, 8] }, k(), v()), RangeError, /query\.shape/],
      ['SDPA: string dimension', () => attn.scaledDotProductAttention({ data: q().data, shape: [2, '4', 8] }, k(), v()), TypeError, /query\.shape/],
      ['SDPA: query/key feature size mismatch', () => attn.scaledDotProductAttention(q(), tensor([2, 6, 7], 2), v()), RangeError, /query|key/],
      ['SDPA: key/value batch mismatch', () => attn.scaledDotProductAttention(q(), k(), tensor([3, 6, 5], 3)), RangeError, /key|value/],
      ['SDPA: key/value length mismatch', () => attn.scaledDotProductAttention(q(), k(), tensor([2, 5, 5], 3)), RangeError, /key|value/],
      ['SDPA: rank-1 query', () => attn.scaledDotProductAttention(tensor([8], 1), k(), v()), RangeError, /query/],
      // ---- scaledDotProductAttention: masks and options
      ['SDPA: mask of wrong dtype (Float64Array)', () => attn.scaledDotProductAttention(q(), k(), v(), { attnMask: { data: new Float64Array(24), shape: [4, 6] } }), TypeError, /attnMask/, /Uint8Array/],
      ['SDPA: mask of wrong dtype (Int32Array)', () => attn.scaledDotProductAttention(q(), k(), v(), { attnMask: { data: new Int32Array(24), shape: [4, 6] } }), TypeError, /attnMask/],
      ['SDPA: mask of wrong dtype (plain Array of booleans)', () => attn.scaledDotProductAttention(q(), k(), v(), { attnMask: { data: new Array(24).fill(true), shape: [4, 6] } }), TypeError, /attnMask/],
      ['SDPA: mask of wrong shape', () => attn.scaledDotProductAttention(q(), k(), v(), { attnMask: { data: new Uint8Array(20).fill(1), shape: [4, 5] } }), RangeError, /attnMask/],
      ['SDPA: mask length differs from its shape', () => attn.scaledDotProductAttention(q(), k(), v(), { attnMask: { data: new Float32Array(23), shape: [4, 6] } }), RangeError, /attnMask/],
      ['SDPA: isCausal not a boolean', () => attn.scaledDotProductAttention(q(), k(), v(), { isCausal: 'yes' }), TypeError, /isCausal/],
      ['SDPA: needWeights not a boolean', () => attn.scaledDotProductAttention(q(), k(), v(), { needWeights: 1 }), TypeError, /needWeights/],
      ['SDPA: scale NaN', () => attn.scaledDotProductAttention(q(), k(), v(), { scale: NaN }), RangeError, /scale/],
      ['SDPA: scale a string', () => attn.scaledDotProductAttention(q(), k(), v(), { scale: '0.5' }), TypeError, /scale/],
      ['SDPA: unknown option', () => attn.scaledDotProductAttention(q(), k(), v(), { causal: true }), TypeError, /causal/, /isCausal/],
      ['SDPA: options not an object', () => attn.scaledDotProductAttention(q(), k(), v(), 'causal'), TypeError, /options/],
      ['SDPA: buffers that cannot fit in wasm memory', () => attn.scaledDotProductAttention(tensor([1, 40000, 1]), tensor([1, 40000, 1]), tensor([1, 40000, 1])), RangeError, /query/, /GiB/],
      // ---- createMultiHeadAttention
      ['MHA: embedDim not divisible by numHeads', () => attn.createMultiHeadAttention({ embedDim: 10, numHeads: 3 }), RangeError, /embedDim/, /numHeads/],
      ['MHA: negative embedDim', () => attn.createMultiHeadAttention({ embedDim: -8, numHeads: 2 }), RangeError, /embedDim/, /-8/],
      ['MHA: fractional numHeads', () => attn.createMultiHeadAttention({ embedDim: 8, numHeads: 1.5 }), RangeError, /numHeads/],
      ['MHA: NaN embedDim', () => attn.createMultiHeadAttention({ embedDim: NaN, numHeads: 2 }), RangeError, /embedDim/],
      ['MHA: zero numHeads', () => attn.createMultiHeadAttention({ embedDim: 8, numHeads: 0 }), RangeError, /numHeads/],
      ['MHA: embedDim a string', () => attn.createMultiHeadAttention({ embedDim: '8', numHeads: 2 }), TypeError, /embedDim/],
      ['MHA: missing embedDim', () => attn.createMultiHeadAttention({ numHeads: 2 }), TypeError, /embedDim/],
      ['MHA: no options', () => attn.createMultiHeadAttention(), TypeError, /embedDim/],
      ['MHA: huge kdim', () => attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, kdim: 2 ** 31 }), RangeError, /kdim/],
      ['MHA: parameters that cannot fit in wasm memory', () => attn.createMultiHeadAttention({ embedDim: 65536, numHeads: 1 }), RangeError, /embedDim/, /GiB/],
      ['MHA: bias not a boolean', () => attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, bias: 'false' }), TypeError, /bias/],
      ['MHA: unknown option', () => attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, dropout: 0.1 }), TypeError, /dropout/],
      // ---- mha.forward
      ['forward: query feature size differs from embedDim', () => mha.forward(tensor([2, 3, 6]), x(), x()), RangeError, /query/],
      ['forward: key/value batch mismatch', () => mha.forward(x(), tensor([2, 5, E]), tensor([3, 5, E])), RangeError, /key|value/],
      ['forward: rank-4 query', () => mha.forward(tensor([1, 2, 3, E]), x(), x()), RangeError, /query/],
      ['forward: Float64Array query', () => mha.forward({ data: new Float64Array(48), shape: [2, 3, E] }, x(), x()), TypeError, /query/],
      ['forward: keyPaddingMask of wrong shape', () => mha.forward(x(), x(), x(), { keyPaddingMask: { data: new Uint8Array(8), shape: [2, 4] } }), RangeError, /keyPaddingMask/],
      ['forward: keyPaddingMask of wrong dtype', () => mha.forward(x(), x(), x(), { keyPaddingMask: { data: new Int8Array(6), shape: [2, 3] } }), TypeError, /keyPaddingMask/],
      ['forward: attnMask of wrong shape', () => mha.forward(x(), x(), x(), { attnMask: { data: new Float32Array(12), shape: [3, 4] } }), RangeError, /attnMask/],
      ['forward: attnMask of wrong dtype', () => mha.forward(x(), x(), x(), { attnMask: { data: new Float64Array(9), shape: [3, 3] } }), TypeError, /attnMask/],
      ['forward: 3-D attnMask with wrong first dimension', () => mha.forward(x(), x(), x(), { attnMask: { data: new Uint8Array(27), shape: [3, 3, 3] } }), RangeError, /attnMask/],
      ['forward: averageAttnWeights not a boolean', () => mha.forward(x(), x(), x(), { averageAttnWeights: 'no' }), TypeError, /averageAttnWeights/],
      ['forward: weights that cannot fit in wasm memory', () => mha.forward(tensor([1, 30000, E]), tensor([1, 30000, E]), tensor([1, 30000, E])), RangeError, /GiB/],
      // ---- mha.loadStateDict
      ['loadStateDict: missing entry', () => { const d = randomStateDict(E); delete d.in_proj_bias; mha.loadStateDict(d); }, RangeError, /in_proj_bias/],
      ['loadStateDict: unknown entry', () => mha.loadStateDict({ ...randomStateDict(E), bogus_weight: new Float32Array(4) }), RangeError, /bogus_weight/],
      ['loadStateDict: wrong-size Float32Array entry', () => mha.loadStateDict({ ...randomStateDict(E), 'out_proj.weight': new Float32Array(63) }), RangeError, /out_proj\.weight/, /63/],
      ['loadStateDict: wrong-shape tensor entry', () => mha.loadStateDict({ ...randomStateDict(E), 'out_proj.weight': tensor([E * E]) }), RangeError, /out_proj\.weight/],
      ['loadStateDict: plain Array entry', () => mha.loadStateDict({ ...randomStateDict(E), in_proj_weight: new Array(3 * E * E).fill(0) }), TypeError, /in_proj_weight/],
      ['loadStateDict: not an object', () => mha.loadStateDict([1, 2]), TypeError, /stateDict/],
    ];

    for (const [title, fn, Class, ...patterns] of cases) {
      test(title, () => {
        assertThrows(fn, Class, ...patterns);
        assertStillWorks(attn);
      });
    }

    test('loadStateDict: a failed load leaves the parameters unchanged', () => {
      const good = randomStateDict(E, 3);
      mha.loadStateDict(good);
      const before = mha.stateDict();
      assertThrows(() => mha.loadStateDict({ ...randomStateDict(E, 4), 'out_proj.bias': tensor([E + 1]) }), RangeError, /out_proj\.bias/);
      assert.deepEqual(mha.stateDict(), before);
    });

    test('use after dispose throws Error; dispose twice is harmless', () => {
      const m = attn.createMultiHeadAttention(mhaOptions);
      m.dispose();
      m.dispose();
      m[Symbol.dispose]();
      assertThrows(() => m.forward(x(), x(), x()), Error, /disposed/);
      assertThrows(() => m.loadStateDict(randomStateDict(E)), Error, /disposed/);
      assertThrows(() => m.stateDict(), Error, /disposed/);
      assertStillWorks(attn);
    });

    test('a too-big call, then a normal call computes correctly', () => {
      assertThrows(
        () => attn.scaledDotProductAttention(tensor([2, 50000, 1]), tensor([2, 50000, 1]), tensor([2, 50000, 1])),
        RangeError,
        /query/,
      );
      const before = attn.memoryBytes();
      assertStillWorks(attn);
      assert.ok(attn.memoryBytes() < 2 ** 28, `memory stayed small (${before} bytes before the normal call)`);
    });

    test('the MultiHeadAttention used above still computes after all those errors', () => {
      mha.loadStateDict(randomStateDict(E));
      const out = mha.forward(x(), x(), x());
      assert.deepEqual(out.output.shape, [2, 3, E]);
      assert.deepEqual(out.weights.shape, [2, 3, 3]);
      mha.dispose();
    });
  });
}
