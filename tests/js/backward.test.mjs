// Every PyTorch gradient fixture of kinds sdpa_grad and mha_grad (tests/fixtures/torch-grad/*.json) through the
// public JS API (scaledDotProductAttentionBackward; mha.forward with requiresGrad, then mha.backward), in both
// wasm variants, with the file's tolerance. Conventions (tests/fixtures/torch-grad/README.md, docs/api.md):
//   - fixture bool masks: true = masked out. attnlab's SDPA takes 1 = may attend (inverted here); its MHA takes
//     1 = masked out (passed as is).
//   - sdpa_grad_fully_masked_row: attnlab gives a fully masked row zero weights, so it is compared with the
//     file's `outputs_zero_convention` block (not with PyTorch's NaN pattern in `outputs`).
//   - self-attention mha cases: gradQuery + gradKey + gradValue must also equal `grad_input`.
// Also: the backward state rules of MultiHeadAttention, and SIMD vs scalar agreement.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { describeFixtures, fixtureParams, mhaOptions } from './fixture-harness.mjs';
import {
  VARIANTS,
  assertClose,
  fixtureMask,
  fixtureTensor,
  gradFixtureDir,
  loadFixtures,
  randomStateDict,
  simdScalarCase,
  tensor,
} from './helpers.mjs';

const fixtures = loadFixtures(gradFixtureDir).filter((fx) => fx.kind === 'sdpa_grad' || fx.kind === 'mha_grad');

/** Runs an sdpa_grad case; returns the number of tensors compared. */
function checkSdpa(attn, fx) {
  const { inputs, config, tolerance } = fx;
  const expected = fx.outputs_zero_convention ?? fx.outputs;
  const q = fixtureTensor(inputs.query);
  const k = fixtureTensor(inputs.key);
  const v = fixtureTensor(inputs.value);
  const options = {
    attnMask: fixtureMask(inputs.attn_mask, true),
    isCausal: config.is_causal,
    scale: config.scale_is_default ? undefined : config.scale,
  };
  const { output } = attn.scaledDotProductAttention(q, k, v, { ...options, needWeights: false });
  assertClose(output, fixtureTensor(expected.output), tolerance, `${fx.name} output`);
  const grads = attn.scaledDotProductAttentionBackward(q, k, v, fixtureTensor(inputs.grad_output), options);
  assert.deepEqual(Object.keys(grads), ['gradQuery', 'gradKey', 'gradValue']);
  assertClose(grads.gradQuery, fixtureTensor(expected.grad_query), tolerance, `${fx.name} gradQuery`);
  assertClose(grads.gradKey, fixtureTensor(expected.grad_key), tolerance, `${fx.name} gradKey`);
  assertClose(grads.gradValue, fixtureTensor(expected.grad_value), tolerance, `${fx.name} gradValue`);
  return 4;
}

/** Runs an mha_grad case; returns the number of tensors compared. */
function checkMha(attn, fx) {
  const { inputs, config, tolerance, outputs } = fx;
  const mha = attn.createMultiHeadAttention(mhaOptions(config));
  try {
    mha.loadStateDict(fixtureParams(fx));
    const { output } = mha.forward(
      fixtureTensor(inputs.query),
      fixtureTensor(inputs.key),
      fixtureTensor(inputs.value),
      {
        keyPaddingMask: fixtureMask(inputs.key_padding_mask, false),
        attnMask: fixtureMask(inputs.attn_mask, false),
        requiresGrad: true,
      },
    );
    assertClose(output, fixtureTensor(outputs.output), tolerance, `${fx.name} output`);
    const grads = mha.backward(fixtureTensor(inputs.grad_output));
    assertClose(grads.gradQuery, fixtureTensor(outputs.grad_query), tolerance, `${fx.name} gradQuery`);
    assertClose(grads.gradKey, fixtureTensor(outputs.grad_key), tolerance, `${fx.name} gradKey`);
    assertClose(grads.gradValue, fixtureTensor(outputs.grad_value), tolerance, `${fx.name} gradValue`);
    let compared = 4;
    // Same names as the state dict, in its order.
    assert.deepEqual(Object.keys(grads.gradParams), Object.keys(mha.stateDict()), `${fx.name} gradParams order`);
    assert.deepEqual(
      Object.keys(grads.gradParams).sort(),
      Object.keys(outputs.grad_params).sort(),
      `${fx.name} gradParams names`,
    );
    for (const [name, t] of Object.entries(outputs.grad_params)) {
      assertClose(grads.gradParams[name], fixtureTensor(t), tolerance, `${fx.name} gradParams[${name}]`);
      ++compared;
    }
    if (config.self_attention) {
      const sum = grads.gradQuery.data.map((x, i) => x + grads.gradKey.data[i] + grads.gradValue.data[i]);
      assertClose(
        { data: sum, shape: grads.gradQuery.shape },
        fixtureTensor(outputs.grad_input),
        tolerance,
        `${fx.name} grad_input`,
      );
      ++compared;
    }
    return compared;
  } finally {
    mha.dispose();
  }
}

test('gradient fixtures are present', () => {
  assert.equal(fixtures.filter((fx) => fx.kind === 'sdpa_grad').length, 9);
  assert.equal(fixtures.filter((fx) => fx.kind === 'mha_grad').length, 10);
  assert.ok(fixtures.find((fx) => fx.name === 'sdpa_grad_fully_masked_row')?.outputs_zero_convention);
});

describeFixtures(
  'PyTorch gradient fixtures',
  fixtures,
  (attn, fx) => (fx.kind === 'sdpa_grad' ? checkSdpa(attn, fx) : checkMha(attn, fx)),
  {
    summary: (variant, c) =>
      `gradient fixtures [${variant}]: ${c.passed} passed, ${c.failed} failed (of ${fixtures.length} PyTorch ` +
      `sdpa_grad/mha_grad cases; ${c.tensors} tensors compared)`,
  },
);

for (const variant of VARIANTS) {
  describe(`MultiHeadAttention backward state, ${variant} build`, async () => {
    const attn = await init({ variant });
    const E = 8;
    const x = tensor([2, 3, E], 1);
    const y = tensor([2, 4, E], 2);
    const g = tensor([2, 3, E], 3);
    const create = () => {
      const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true });
      mha.loadStateDict(randomStateDict(E));
      return mha;
    };

    test('backward without a requiresGrad forward is an Error (before any forward, and after a plain one)', () => {
      const mha = create();
      try {
        for (const prepare of [() => {}, () => mha.forward(x, y, y)]) {
          prepare();
          assert.throws(
            () => mha.backward(g),
            (e) => e.constructor === Error && /^mha\.backward: /.test(e.message) && /requiresGrad/.test(e.message),
          );
        }
        mha.forward(x, y, y, { requiresGrad: true });
        assert.deepEqual(mha.backward(g).gradQuery.shape, [2, 3, E]);
      } finally {
        mha.dispose();
      }
    });

    test('loadStateDict discards the kept forward: backward is then an Error', () => {
      const mha = create();
      try {
        mha.forward(x, y, y, { requiresGrad: true });
        mha.loadStateDict(randomStateDict(E, 9));
        assert.throws(
          () => mha.backward(g),
          (e) => e.constructor === Error && /loadStateDict/.test(e.message),
        );
      } finally {
        mha.dispose();
      }
    });

    test('backward uses the latest requiresGrad forward; a forward without it in between changes nothing', () => {
      const mha = create();
      const ref = create();
      try {
        ref.forward(x, y, y, { requiresGrad: true });
        const want = ref.backward(g);
        mha.forward(x, y, y, { requiresGrad: true, needWeights: false });
        mha.forward(tensor([1, 5, E], 7), tensor([1, 6, E], 8), tensor([1, 6, E], 9)); // no requiresGrad
        const got = mha.backward(g);
        for (const name of ['gradQuery', 'gradKey', 'gradValue'])
          assertClose(got[name], want[name], { atol: 0, rtol: 0 }, name);
        for (const name of Object.keys(want.gradParams)) {
          assertClose(got.gradParams[name], want.gradParams[name], { atol: 0, rtol: 0 }, name);
        }
        // The results are JS-owned copies.
        got.gradQuery.data.fill(42);
        assert.notEqual(mha.backward(g).gradQuery.data[0], 42);
      } finally {
        mha.dispose();
        ref.dispose();
      }
    });

    test('unbatched inputs and per-head weights work with requiresGrad', () => {
      const mha = create();
      try {
        const q = tensor([3, E], 4);
        const kv = tensor([5, E], 5);
        const r = mha.forward(q, kv, kv, { requiresGrad: true, averageAttnWeights: false });
        assert.deepEqual(r.weights.shape, [2, 3, 5]);
        const grads = mha.backward(tensor([3, E], 6));
        assert.deepEqual(grads.gradQuery.shape, [3, E]);
        assert.deepEqual(grads.gradKey.shape, [5, E]);
        assert.deepEqual(Object.keys(grads.gradParams), [
          'in_proj_weight',
          'in_proj_bias',
          'out_proj.weight',
          'out_proj.bias',
        ]);
      } finally {
        mha.dispose();
      }
    });
  });
}

test('SIMD and scalar builds give the same gradients within 1e-5', async () => {
  const simd = await init({ variant: 'simd' });
  const scalar = await init({ variant: 'scalar' });
  const { q, k, v, g, mask } = simdScalarCase();
  const a = simd.scaledDotProductAttentionBackward(q, k, v, g, { attnMask: mask, isCausal: true });
  const b = scalar.scaledDotProductAttentionBackward(q, k, v, g, { attnMask: mask, isCausal: true });
  for (const name of ['gradQuery', 'gradKey', 'gradValue'])
    assertClose(a[name], b[name], { atol: 1e-5, rtol: 0 }, name);
});
