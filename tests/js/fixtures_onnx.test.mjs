// Every ONNX Attention fixture (tests/fixtures/onnx/*.json: the modern SDPA options, each case named after the ONNX
// conformance case it mirrors) through the public JS API, in every wasm variant: output, weights, scores and
// presentKey/presentValue, with and without weights. Bool masks there mean 1 = may attend, attnlab SDPA's
// convention; fully masked rows are stored as zeros.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { describeFixtures } from './fixture-harness.mjs';
import { assertClose, f32, fixtureTensor, loadFixtures, root } from './helpers.mjs';

const fixtures = loadFixtures(join(root, 'tests', 'fixtures', 'onnx'));

/** The fixture's inputs and config as scaledDotProductAttention arguments. */
function onnxCall(fx, needWeights = true) {
  const { inputs: I, config: c } = fx;
  const m = I.attn_mask;
  const options = {
    attnMask: m && (m.dtype === 'bool' ? { data: Uint8Array.from(m.data, Number), shape: m.shape } : fixtureTensor(m)),
    isCausal: c.is_causal,
    scale: c.scale_is_default ? undefined : c.scale,
    needWeights,
    enableGQA: c.enable_gqa,
    kvLengths: I.kv_lengths && Int32Array.from(I.kv_lengths.data),
    window: c.window ?? undefined,
    softcap: c.softcap || undefined,
    returnScores: c.return_scores ?? undefined,
    pastKey: I.past_key && fixtureTensor(I.past_key),
    pastValue: I.past_value && fixtureTensor(I.past_value),
  };
  return [fixtureTensor(I.query), fixtureTensor(I.key), fixtureTensor(I.value), options];
}

const expected = (fx, name) => ({
  data: f32(fx.outputs[name].data),
  shape: fx.outputs[name].shape,
});

test('ONNX fixtures are present and name their ONNX case', () => {
  assert.ok(fixtures.length >= 41, `expected at least 41 fixtures, found ${fixtures.length}`);
  const named = fixtures.filter((fx) => /^test_attention_/.test(fx.config.onnx_case ?? ''));
  assert.ok(named.length >= 37, `${named.length} fixtures name an ONNX case`);
});

describeFixtures(
  'ONNX Attention fixtures',
  fixtures,
  (attn, fx) => {
    const tol = fx.tolerance;
    let tensors = 0;
    for (const needWeights of [true, false]) {
      const what = `${fx.name}${needWeights ? '' : ' (needWeights: false)'}`;
      const r = attn.scaledDotProductAttention(...onnxCall(fx, needWeights));
      assertClose(r.output, expected(fx, 'output'), tol, `${what} output`);
      if (needWeights) assertClose(r.weights, expected(fx, 'weights'), tol, `${what} weights`);
      else assert.equal(r.weights, undefined, 'no weights when needWeights is false');
      if (fx.config.return_scores) assertClose(r.scores, expected(fx, 'scores'), tol, `${what} scores`);
      else assert.equal(r.scores, undefined, 'no scores unless returnScores');
      if (fx.inputs.past_key) {
        assertClose(r.presentKey, expected(fx, 'present_key'), { atol: 0, rtol: 0 }, `${what} presentKey`);
        assertClose(r.presentValue, expected(fx, 'present_value'), { atol: 0, rtol: 0 }, `${what} presentValue`);
      } else {
        assert.equal(r.presentKey, undefined, 'no presentKey without pastKey');
      }
      tensors += Object.keys(r).length;
    }
    return tensors;
  },
  {
    summary: (variant, c) =>
      `onnx fixtures [${variant}]: ${c.passed} passed, ${c.failed} failed (of ${fixtures.length}), ${c.tensors} tensors`,
  },
);
