// Every PyTorch fixture (tests/fixtures/torch/*.json) through the public JS API, in both wasm variants, with the
// file's tolerance. Conventions (tests/fixtures/torch/README.md, docs/api.md):
//   - fixture bool masks: true = masked out. attnlab's SDPA takes 1 = may attend (inverted here); its MHA takes
//     1 = masked out (passed as is).
//   - fully masked rows: PyTorch gives NaN; attnlab gives 0 weights and a 0 attention output, so an MHA output
//     row is out_proj.bias (0 without bias). The expected values are rewritten accordingly.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { describeFixtures, fixtureParams, mhaOptions } from './fixture-harness.mjs';
import { assertClose, f32, fixtureMask, fixtureTensor, loadFixtures } from './helpers.mjs';

const fixtures = loadFixtures();

/** The expected outputs with attnlab's fully-masked-row rule in place of PyTorch's NaN. */
function expectedOutputs(fx) {
  const out = {};
  for (const [name, t] of Object.entries(fx.outputs)) {
    const data = f32(t.data);
    if (name === 'output' && fx.kind === 'mha') {
      const E = fx.config.embed_dim;
      const bias = fx.params['out_proj.bias'] ? f32(fx.params['out_proj.bias'].data) : null;
      for (let i = 0; i < data.length; ++i) if (Number.isNaN(data[i])) data[i] = bias ? bias[i % E] : 0;
    } else {
      for (let i = 0; i < data.length; ++i) if (Number.isNaN(data[i])) data[i] = 0;
    }
    out[name] = { data, shape: t.shape };
  }
  return out;
}

function runSdpa(attn, fx) {
  const { inputs, config } = fx;
  return attn.scaledDotProductAttention(
    fixtureTensor(inputs.query),
    fixtureTensor(inputs.key),
    fixtureTensor(inputs.value),
    {
      attnMask: fixtureMask(inputs.attn_mask, true),
      isCausal: config.is_causal,
      scale: config.scale_is_default ? undefined : config.scale,
      needWeights: 'weights' in fx.outputs,
    },
  );
}

function runMha(attn, fx) {
  const { inputs, config } = fx;
  const mha = attn.createMultiHeadAttention(mhaOptions(config));
  try {
    const params = fixtureParams(fx);
    mha.loadStateDict(params);
    const back = mha.stateDict();
    assert.deepEqual(Object.keys(back).sort(), Object.keys(params).sort(), 'stateDict names round-trip');
    for (const [name, t] of Object.entries(params)) {
      assert.deepEqual(back[name].shape, t.shape, `stateDict ${name} shape`);
      assert.deepEqual(back[name].data, t.data, `stateDict ${name} values`);
    }
    return mha.forward(fixtureTensor(inputs.query), fixtureTensor(inputs.key), fixtureTensor(inputs.value), {
      keyPaddingMask: fixtureMask(inputs.key_padding_mask, false),
      attnMask: fixtureMask(inputs.attn_mask, false),
      needWeights: config.need_weights,
      averageAttnWeights: config.average_attn_weights,
    });
  } finally {
    mha.dispose();
  }
}

test('fixtures are present', () => {
  assert.ok(fixtures.length >= 30, `expected at least 30 fixtures, found ${fixtures.length}`);
});

describeFixtures(
  'PyTorch fixtures',
  fixtures,
  (attn, fx) => {
    const result = fx.kind === 'sdpa' ? runSdpa(attn, fx) : runMha(attn, fx);
    const expected = expectedOutputs(fx);
    assertClose(result.output, expected.output, fx.tolerance, `${fx.name} output`);
    if (expected.weights) assertClose(result.weights, expected.weights, fx.tolerance, `${fx.name} weights`);
    else assert.equal(result.weights, undefined, 'no weights when needWeights is false');
  },
  {
    summary: (variant, c) =>
      `fixtures [${variant}]: ${c.passed} passed, ${c.failed} failed (of ${fixtures.length} PyTorch fixtures)`,
  },
);
