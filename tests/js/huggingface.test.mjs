// fromHuggingFace (web/src/huggingface.mjs): BERT, GPT-2 and ViT attention layers, written by
// scripts/make_hf_fixtures.py with Hugging Face's names (F32, F16 and BF16 checkpoints), run through
// createMultiHeadAttention on every variant and compared with PyTorch's float64 reference.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { fromHuggingFace, init, readSafetensors } from '../../dist/index.mjs';
import { VARIANTS, assertClose, f32, root } from './helpers.mjs';

const hfDir = join(root, 'tests', 'fixtures', 'hf');
const cases = readdirSync(hfDir)
  .filter((n) => n.endsWith('.json'))
  .map((n) => {
    const c = JSON.parse(readFileSync(join(hfDir, n), 'utf8'));
    return {
      name: n.slice(0, -5),
      ...c,
      tensors: readSafetensors(readFileSync(join(hfDir, n.replace('.json', '.safetensors')))),
    };
  });

/** nn.MultiheadAttention's bool attnMask (1 = masked): key j > query i. */
function causalMask(L) {
  return { data: Uint8Array.from({ length: L * L }, (_, i) => (i % L > Math.floor(i / L) ? 1 : 0)), shape: [L, L] };
}

test('the fixtures cover BERT, GPT-2 and ViT, with and without a prefix', () => {
  assert.deepEqual([...new Set(cases.map((c) => c.arch))].sort(), ['bert', 'gpt2', 'vit']);
  assert.ok(cases.some((c) => c.prefix === null) && cases.some((c) => c.prefix !== null));
});

for (const variant of VARIANTS) {
  describe(`fromHuggingFace, ${variant} build`, async () => {
    const attn = await init({ variant });
    for (const c of cases) {
      test(`${c.name}: layer ${c.layer} matches PyTorch (output and per-head weights)`, () => {
        const { config, stateDict } = fromHuggingFace(c.tensors, {
          arch: c.arch,
          layer: c.layer,
          numHeads: c.numHeads,
        });
        assert.equal(config.batchFirst, true);
        assert.equal(config.numHeads, c.numHeads);
        const mha = attn.createMultiHeadAttention(config);
        try {
          mha.loadStateDict(stateDict);
          // Hidden states as transformers.js holds them: { data, dims }.
          const x = { data: f32(c.input.data), dims: c.input.shape };
          const options = { averageAttnWeights: false, attnMask: c.causal ? causalMask(c.input.shape[1]) : undefined };
          const { output, weights } = mha.forward(x, x, x, options);
          assertClose(output, { data: f32(c.output.data), shape: c.output.shape }, c.tolerance, `${c.name} output`);
          assertClose(weights, { data: f32(c.weights.data), shape: c.weights.shape }, c.tolerance, `${c.name} weights`);
        } finally {
          mha.dispose();
        }
      });
    }
  });
}

describe('fromHuggingFace: names and errors', () => {
  const bert = cases.find((c) => c.name === 'bert_e16_h4');
  const gpt2 = cases.find((c) => c.name === 'gpt2_e16_h2');

  test('an explicit prefix gives the same layer as the default one', () => {
    const a = fromHuggingFace(bert.tensors, { arch: 'bert', layer: 1, numHeads: 4 });
    const b = fromHuggingFace(bert.tensors, { arch: 'bert', layer: 1, numHeads: 4, prefix: 'bert.' });
    assert.deepEqual(a, b);
  });

  test('GPT-2 Conv1D weights are transposed into PyTorch Linear layout', () => {
    const { stateDict } = fromHuggingFace(gpt2.tensors, { arch: 'gpt2', layer: 0, numHeads: 2 });
    const w = gpt2.tensors['transformer.h.0.attn.c_attn.weight']; // (E, 3E)
    const E = 16;
    assert.deepEqual(stateDict.in_proj_weight.shape, [3 * E, E]);
    assert.equal(stateDict.in_proj_weight.data[5 * E + 3], w.data[3 * 3 * E + 5]); // [out 5, in 3] = W[3, 5]
  });

  const errors = [
    [
      'an unknown architecture',
      () => fromHuggingFace(bert.tensors, { arch: 'llama', layer: 0, numHeads: 4 }),
      /arch must be one of 'bert', 'vit', 'gpt2', got string "llama"/,
    ],
    [
      'a layer the checkpoint lacks',
      () => fromHuggingFace(bert.tensors, { arch: 'bert', layer: 7, numHeads: 4 }),
      /no bert attention layer 7: the checkpoint has no tensor "bert\.encoder\.layer\.7\.attention\.self\.query\.weight"/,
    ],
    [
      'a wrong prefix',
      () => fromHuggingFace(bert.tensors, { arch: 'bert', layer: 0, numHeads: 4, prefix: 'roberta.' }),
      /roberta\.encoder/,
    ],
    [
      "another architecture's checkpoint",
      () => fromHuggingFace(bert.tensors, { arch: 'gpt2', layer: 0, numHeads: 4 }),
      /no gpt2 attention layer 0/,
    ],
    [
      'numHeads that does not divide E',
      () => fromHuggingFace(bert.tensors, { arch: 'bert', layer: 0, numHeads: 5 }),
      /numHeads \(5\) must divide the layer's embedding size 16/,
    ],
  ];
  for (const [what, fn, pattern] of errors) {
    test(`${what} is a RangeError naming it`, () => {
      assert.throws(
        fn,
        (e) => e instanceof RangeError && e.message.startsWith('fromHuggingFace: ') && pattern.test(e.message),
      );
    });
  }

  test('a missing tensor is a RangeError naming it', () => {
    const tensors = { ...bert.tensors };
    delete tensors['bert.encoder.layer.0.attention.output.dense.bias'];
    assert.throws(
      () => fromHuggingFace(tensors, { arch: 'bert', layer: 0, numHeads: 4 }),
      (e) =>
        e instanceof RangeError &&
        /no tensor "bert\.encoder\.layer\.0\.attention\.output\.dense\.bias"/.test(e.message),
    );
  });

  test('a tensor of the wrong shape or a non-float dtype is a RangeError naming it', () => {
    const name = 'bert.encoder.layer.0.attention.self.key.weight';
    const wrongShape = { ...bert.tensors, [name]: { data: new Float32Array(16 * 8), shape: [16, 8] } };
    assert.throws(
      () => fromHuggingFace(wrongShape, { arch: 'bert', layer: 0, numHeads: 4 }),
      (e) => e instanceof RangeError && e.message.includes(`"${name}" has shape [16, 8], expected [16, 16]`),
    );
    const raw = { ...bert.tensors, [name]: { data: null, bytes: new Uint8Array(8), shape: [1], dtype: 'I64' } };
    assert.throws(
      () => fromHuggingFace(raw, { arch: 'bert', layer: 0, numHeads: 4 }),
      (e) => e instanceof RangeError && e.message.includes(`"${name}" must be float data`) && e.message.includes('I64'),
    );
  });

  test('tensors that are not an object is a TypeError', () => {
    assert.throws(() => fromHuggingFace(null, { arch: 'bert', layer: 0, numHeads: 4 }), TypeError);
  });
});
