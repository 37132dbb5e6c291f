// Every PyTorch fixture (tests/fixtures/torch/*.json) through the public JS API, in both wasm variants, with the
// file's tolerance. Conventions (tests/fixtures/torch/README.md, docs/api.md):
//   - fixture bool masks: true = masked out. attnlab's SDPA takes 1 = may attend (inverted here); its MHA takes
//     1 = masked out (passed as is).
//   - fully masked rows: PyTorch gives NaN; attnlab gives 0 weights and a 0 attention output, so an MHA output
//     row is out_proj.bias (0 without bias). The expected values are rewritten accordingly.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertClose, f32, loadFixtures } from './helpers.mjs';

const fixtures = loadFixtures();

function toMask(t, invert) {
  if (!t) return undefined;
  if (t.dtype === 'bool') {
    return { data: Uint8Array.from(t.data, (b) => (b !== invert ? 1 : 0)), shape: t.shape };
  }
  return { data: f32(t.data), shape: t.shape };
}

function toTensor(t) {
  return { data: f32(t.data), shape: t.shape };
}

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
  return attn.scaledDotProductAttention(toTensor(inputs.query), toTensor(inputs.key), toTensor(inputs.value), {
    attnMask: toMask(inputs.attn_mask, true),
    isCausal: config.is_causal,
    scale: config.scale_is_default ? undefined : config.scale,
    needWeights: 'weights' in fx.outputs,
  });
}

function runMha(attn, fx) {
  const { inputs, config } = fx;
  const mha = attn.createMultiHeadAttention({
    embedDim: config.embed_dim,
    numHeads: config.num_heads,
    bias: config.bias,
    addBiasKV: config.add_bias_kv,
    addZeroAttn: config.add_zero_attn,
    kdim: config.kdim,
    vdim: config.vdim,
    batchFirst: config.batch_first,
  });
  try {
    const params = {};
    for (const [name, t] of Object.entries(fx.params)) params[name] = toTensor(t);
    mha.loadStateDict(params);
    const back = mha.stateDict();
    assert.deepEqual(Object.keys(back).sort(), Object.keys(params).sort(), 'stateDict names round-trip');
    for (const [name, t] of Object.entries(params)) {
      assert.deepEqual(back[name].shape, t.shape, `stateDict ${name} shape`);
      assert.deepEqual(back[name].data, t.data, `stateDict ${name} values`);
    }
    return mha.forward(toTensor(inputs.query), toTensor(inputs.key), toTensor(inputs.value), {
      keyPaddingMask: toMask(inputs.key_padding_mask, false),
      attnMask: toMask(inputs.attn_mask, false),
      needWeights: config.need_weights,
      averageAttnWeights: config.average_attn_weights,
    });
  } finally {
    mha.dispose();
  }
}

const counts = {};
after(() => {
  for (const variant of VARIANTS) {
    const c = counts[variant] ?? { passed: 0, failed: 0 };
    console.log(`fixtures [${variant}]: ${c.passed} passed, ${c.failed} failed (of ${fixtures.length} PyTorch fixtures)`);
  }
});

test('fixtures are present', () => {
  assert.ok(fixtures.length >= 30, `expected at least 30 fixtures, found ${fixtures.length}`);
});

for (const variant of VARIANTS) {
  describe(`PyTorch fixtures, ${variant} build`, () => {
    counts[variant] = { passed: 0, failed: 0 };
    let attn;
    test(`init({ variant: '${variant}' })`, async () => {
      attn = await init({ variant });
      assert.equal(attn.variant, variant);
    });
    for (const fx of fixtures) {
      test(fx.name, () => {
        assert.ok(attn, 'instance loaded');
        try {
          const result = fx.kind === 'sdpa' ? runSdpa(attn, fx) : runMha(attn, fx);
          const expected = expectedOutputs(fx);
          assertClose(result.output, expected.output, fx.tolerance, `${fx.name} output`);
          if (expected.weights) assertClose(result.weights, expected.weights, fx.tolerance, `${fx.name} weights`);
          else assert.equal(result.weights, undefined, 'no weights when needWeights is false');
          counts[variant].passed++;
        } catch (e) {
          counts[variant].failed++;
          throw e;
        }
      });
    }
  });
}
