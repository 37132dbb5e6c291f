// Bad input, one test each: the error class (TypeError for a wrong type, RangeError for a wrong size, shape or
// value, Error for a wrong state), a message that names the argument in its JS spelling (never the C++
// snake_case one), and afterwards the instance still computes correctly. Runs against both wasm variants.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, randomStateDict, tensor } from './helpers.mjs';

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
    // One case a line, read as a table (so Prettier leaves it).
    // prettier-ignore
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
      ['SDPA: isCausal not a boolean', () => attn.scaledDotProductAttention(q(), k(), v(), { isCausal: 'yes' }), RangeError, /isCausal/, /'lower-right'/],
      ['SDPA: isCausal a number', () => attn.scaledDotProductAttention(q(), k(), v(), { isCausal: 1 }), TypeError, /isCausal/],
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
      assertThrows(
        () => mha.loadStateDict({ ...randomStateDict(E, 4), 'out_proj.bias': tensor([E + 1]) }),
        RangeError,
        /out_proj\.bias/,
      );
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
      assertThrows(() => m.backward(x()), Error, /disposed/);
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

// ---- The backward pass and the tiny transformer: the same rules, and afterwards both the instance and the model
// that saw the errors still compute exactly what they computed before.
const kSnakeCaseGrad = /\b(grad_output|grad_params|vocab_size|requires_grad|state_dict|load_state_dict)\b/;

function assertThrowsJs(fn, Class, ...patterns) {
  const error = assertThrows(fn, Class, ...patterns);
  assert.doesNotMatch(error.message, kSnakeCaseGrad, 'message uses the JS spelling of argument names');
  return error;
}

for (const variant of VARIANTS) {
  describe(`bad input to the backward pass and the tiny transformer, ${variant} build`, async () => {
    const attn = await init({ variant });
    const E = 8;
    const x = () => tensor([2, 3, E], 4);
    const g = () => tensor([2, 4, 5], 5); // gradOutput of SDPA(q(), k(), v())
    const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true });
    mha.loadStateDict(randomStateDict(E));
    const fresh = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true }); // never run forward
    const V = 10;
    const model = attn.createTinyTransformer({ vocabSize: V, embedDim: 8, numHeads: 2, causal: true, seed: 3 });
    const ids = (n, seed = 1) => Int32Array.from({ length: n }, (_, i) => (i * 7 + seed) % V);
    const tok = (shape = [2, 5], seed = 1) => ({ data: ids(shape[0] * shape[1], seed), shape });

    // What must still come out after every error.
    const sdpaGrads = attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { isCausal: true });
    mha.forward(x(), x(), x(), { requiresGrad: true });
    const mhaGrads = mha.backward(x());
    const params = model.stateDict();
    const lossAndGrad = model.lossAndGrad(tok(), tok([2, 5], 2));
    const exact = { atol: 0, rtol: 0 };
    const assertAllStillWork = () => {
      assertStillWorks(attn);
      const s = attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { isCausal: true });
      for (const name of ['gradQuery', 'gradKey', 'gradValue'])
        assertClose(s[name], sdpaGrads[name], exact, `SDPA ${name}`);
      const m = mha.backward(x()); // the requiresGrad forward before the errors is still the one kept
      assertClose(m.gradQuery, mhaGrads.gradQuery, exact, 'MHA gradQuery');
      assertClose(m.gradParams.in_proj_weight, mhaGrads.gradParams.in_proj_weight, exact, 'MHA gradParams');
      const p = model.stateDict();
      for (const name of Object.keys(params)) assertClose(p[name], params[name], exact, `model ${name} unchanged`);
      const lg = model.lossAndGrad(tok(), tok([2, 5], 2));
      assert.equal(lg.loss, lossAndGrad.loss, 'model loss');
      assertClose(
        lg.gradParams['embedding.weight'],
        lossAndGrad.gradParams['embedding.weight'],
        exact,
        'model gradient',
      );
    };

    // One case a line, read as a table (so Prettier leaves it).
    // prettier-ignore
    const cases = [
      // ---- scaledDotProductAttentionBackward
      ['SDPA backward: gradOutput of the wrong shape', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), tensor([2, 4, 6])), RangeError, /gradOutput/, /\[2, 4, 5\]/, /\[2, 4, 6\]/],
      ['SDPA backward: gradOutput with Float64Array data', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), { data: new Float64Array(40), shape: [2, 4, 5] }), TypeError, /gradOutput\.data/, /Float32Array/],
      ['SDPA backward: gradOutput missing', () => attn.scaledDotProductAttentionBackward(q(), k(), v()), TypeError, /gradOutput/],
      ['SDPA backward: gradOutput length differs from its shape', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), { data: new Float32Array(39), shape: [2, 4, 5] }), RangeError, /gradOutput/, /39/],
      ['SDPA backward: needWeights is not an option of the backward', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { needWeights: true }), TypeError, /needWeights/],
      ['SDPA backward: mask of wrong shape', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { attnMask: { data: new Uint8Array(20), shape: [4, 5] } }), RangeError, /attnMask/],
      ['SDPA backward: mask of wrong dtype', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { attnMask: { data: new Int8Array(24), shape: [4, 6] } }), TypeError, /attnMask/],
      ['SDPA backward: scale Infinity', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { scale: Infinity }), RangeError, /scale/],
      ['SDPA backward: isCausal not a boolean', () => attn.scaledDotProductAttentionBackward(q(), k(), v(), g(), { isCausal: 1 }), TypeError, /isCausal/],
      ['SDPA backward: query/key feature size mismatch', () => attn.scaledDotProductAttentionBackward(q(), tensor([2, 6, 7]), v(), g()), RangeError, /query|key/],
      ['SDPA backward: buffers that cannot fit in wasm memory', () => attn.scaledDotProductAttentionBackward(tensor([1, 40000, 1]), tensor([1, 40000, 1]), tensor([1, 40000, 1]), tensor([1, 40000, 1])), RangeError, /GiB/],
      // ---- mha.forward({ requiresGrad }) and mha.backward
      ['MHA backward: no forward with requiresGrad before', () => fresh.backward(x()), Error, /mha\.backward/, /requiresGrad/],
      ['MHA backward: gradOutput of the wrong shape', () => mha.backward(tensor([2, 4, E])), RangeError, /gradOutput/, /\[2, 3, 8\]/, /\[2, 4, 8\]/],
      ['MHA backward: gradOutput with plain Array data', () => mha.backward({ data: Array.from(x().data), shape: [2, 3, E] }), TypeError, /gradOutput\.data/, /Array/],
      ['MHA backward: gradOutput null', () => mha.backward(null), TypeError, /gradOutput/],
      ['MHA backward: a bare Float32Array', () => mha.backward(x().data), TypeError, /gradOutput/],
      ['MHA forward: requiresGrad not a boolean', () => mha.forward(x(), x(), x(), { requiresGrad: 'yes' }), TypeError, /requiresGrad/],
      ['MHA forward with requiresGrad: query feature size differs from embedDim', () => mha.forward(tensor([2, 3, 6]), x(), x(), { requiresGrad: true }), RangeError, /query/],
      // ---- createTinyTransformer
      ['createTinyTransformer: no options', () => attn.createTinyTransformer(), TypeError, /vocabSize/],
      ['createTinyTransformer: missing vocabSize', () => attn.createTinyTransformer({ embedDim: 8, numHeads: 2 }), TypeError, /vocabSize/],
      ['createTinyTransformer: zero vocabSize', () => attn.createTinyTransformer({ vocabSize: 0, embedDim: 8, numHeads: 2 }), RangeError, /vocabSize/],
      ['createTinyTransformer: vocabSize a string', () => attn.createTinyTransformer({ vocabSize: '10', embedDim: 8, numHeads: 2 }), TypeError, /vocabSize/],
      ['createTinyTransformer: odd embedDim', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 7, numHeads: 1 }), RangeError, /embedDim/, /7/],
      ['createTinyTransformer: embedDim not divisible by numHeads', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 10, numHeads: 4 }), RangeError, /embedDim|numHeads/],
      ['createTinyTransformer: fractional numHeads', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 8, numHeads: 1.5 }), RangeError, /numHeads/],
      ['createTinyTransformer: causal not a boolean', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 8, numHeads: 2, causal: 1 }), TypeError, /causal/],
      ['createTinyTransformer: negative seed', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 8, numHeads: 2, seed: -1 }), RangeError, /seed/],
      ['createTinyTransformer: unknown option', () => attn.createTinyTransformer({ vocabSize: 10, embedDim: 8, numHeads: 2, lr: 0.1 }), TypeError, /"lr"/, /vocabSize/],
      ['createTinyTransformer: parameters that cannot fit in wasm memory', () => attn.createTinyTransformer({ vocabSize: 2 ** 28, embedDim: 2, numHeads: 1 }), RangeError, /vocabSize/, /GiB/],
      // ---- model.forward / lossAndGrad / trainStep: tokens and targets
      ['model.forward: Float32Array token data', () => model.forward({ data: new Float32Array(10), shape: [2, 5] }), TypeError, /model\.forward/, /tokens\.data/, /Int32Array/],
      ['model.forward: plain Array token data', () => model.forward({ data: [1, 2, 3, 4, 5], shape: [1, 5] }), TypeError, /tokens\.data/, /new Int32Array/],
      ['model.forward: a bare Int32Array', () => model.forward(ids(10)), TypeError, /tokens/],
      ['model.forward: rank-1 tokens', () => model.forward({ data: ids(5), shape: [5] }), RangeError, /tokens\.shape/, /\[B, T\]/],
      ['model.forward: empty batch', () => model.forward({ data: ids(0), shape: [0, 5] }), RangeError, /tokens\.shape/],
      ['model.forward: length differs from the shape', () => model.forward({ data: ids(9), shape: [2, 5] }), RangeError, /tokens/, /9/, /10/],
      ['model.forward: token id = vocabSize', () => model.forward({ data: Int32Array.of(1, 2, 10), shape: [1, 3] }), RangeError, /tokens/, /10/],
      ['model.forward: negative token id', () => model.forward({ data: Int32Array.of(-1, 2, 3), shape: [1, 3] }), RangeError, /tokens/, /-1/],
      ['model.lossAndGrad: targets with Uint8Array data', () => model.lossAndGrad(tok(), { data: new Uint8Array(10), shape: [2, 5] }), TypeError, /model\.lossAndGrad/, /targets\.data/],
      ['model.lossAndGrad: targets missing', () => model.lossAndGrad(tok()), TypeError, /targets/],
      ['model.lossAndGrad: targets of another shape', () => model.lossAndGrad(tok(), tok([5, 2])), RangeError, /targets/, /\[2, 5\]/, /\[5, 2\]/],
      ['model.lossAndGrad: target id out of range', () => model.lossAndGrad(tok([1, 3]), { data: Int32Array.of(0, 11, 2), shape: [1, 3] }), RangeError, /targets/, /11/],
      ['model.trainStep: bad token id (nothing is updated)', () => model.trainStep({ data: Int32Array.of(0, 99, 2), shape: [1, 3] }, tok([1, 3])), RangeError, /model\.trainStep/, /tokens/, /99/],
      ['model.trainStep: targets of another shape', () => model.trainStep(tok(), tok([2, 4])), RangeError, /targets/],
      // ---- model.trainStep: lr
      ['model.trainStep: lr 0', () => model.trainStep(tok(), tok(), { lr: 0 }), RangeError, /lr/],
      ['model.trainStep: negative lr', () => model.trainStep(tok(), tok(), { lr: -0.01 }), RangeError, /lr/, /-0\.01/],
      ['model.trainStep: lr NaN', () => model.trainStep(tok(), tok(), { lr: NaN }), RangeError, /lr/],
      ['model.trainStep: lr that underflows float32', () => model.trainStep(tok(), tok(), { lr: 1e-50 }), RangeError, /lr/],
      ['model.trainStep: lr that overflows float32', () => model.trainStep(tok(), tok(), { lr: 1e39 }), RangeError, /lr/],
      ['model.trainStep: lr a string', () => model.trainStep(tok(), tok(), { lr: '0.01' }), TypeError, /lr/],
      ['model.trainStep: unknown option', () => model.trainStep(tok(), tok(), { learningRate: 0.01 }), TypeError, /learningRate/, /lr/],
      ['model.trainStep: options not an object', () => model.trainStep(tok(), tok(), 0.01), TypeError, /options/],
      // ---- model.loadStateDict
      ['model.loadStateDict: missing entry', () => { const d = { ...params }; delete d['readout.bias']; model.loadStateDict(d); }, RangeError, /readout\.bias/],
      ['model.loadStateDict: unknown entry', () => model.loadStateDict({ ...params, 'attn.in_proj_bias': new Float32Array(24) }), RangeError, /attn\.in_proj_bias/],
      ['model.loadStateDict: wrong-size Float32Array entry', () => model.loadStateDict({ ...params, 'embedding.weight': new Float32Array(79) }), RangeError, /embedding\.weight/, /79/],
      ['model.loadStateDict: wrong-shape tensor entry', () => model.loadStateDict({ ...params, 'readout.weight': tensor([8, 10]) }), RangeError, /readout\.weight/],
      ['model.loadStateDict: Int32Array entry', () => model.loadStateDict({ ...params, 'readout.bias': new Int32Array(V) }), TypeError, /readout\.bias/],
      ['model.loadStateDict: not an object', () => model.loadStateDict(null), TypeError, /stateDict/],
    ];

    for (const [title, fn, Class, ...patterns] of cases) {
      test(title, () => {
        assertThrowsJs(fn, Class, ...patterns);
        assertAllStillWork();
      });
    }

    test('the MultiHeadAttention and the TinyTransformer used above still work, then dispose cleanly', () => {
      assertAllStillWork();
      assert.ok(Number.isFinite(model.trainStep(tok(), tok([2, 5], 2)).loss));
      for (const m of [mha, fresh, model]) m.dispose();
      assertThrowsJs(() => mha.backward(x()), Error, /disposed/);
      assertThrowsJs(() => model.trainStep(tok(), tok()), Error, /disposed/);
      assertStillWorks(attn);
    });
  });
}
