// Training encoders in JS (issue 33 item 4; web/src/encoder_training.mjs): every fixture of tests/fixtures/encoders/
// with a train.json (PyTorch, float64; gen_encoder_training.py: BERT and RoBERTa masked-LM and classifiers, the ViT
// image classifier) on every variant: lossAndGrad(batch)'s loss and every gradient, trainStep(batch, options)'s
// steps and parameters with and without clipping; on ViT, padded keys passing nothing, a pooler off the loss path,
// each bad batch a RangeError / TypeError naming the field (the module still working after it), the memory check
// and attnlab/worker.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { kGpt2, loadFixtureCases, modelDir, scope } from './model-helpers.mjs';
import { adamwOf, assertParamsAfter, assertRelative } from './train-helpers.mjs';

const encoderDir = join(modelDir, '..', 'encoders');
const trained = loadFixtureCases('encoders', (name) => existsSync(join(encoderDir, name, 'train.json'))).map((c) => ({
  ...c,
  train: JSON.parse(readFileSync(join(dirname(c.file), 'train.json'), 'utf8')),
}));
const c = trained.find((x) => x.name === 'vit_cls_f32');
const f = c.train;
const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const intsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

/** A train.json's batch in lossAndGrad's spelling: ViT's pixelValues, or a text encoder's ids, padding and types. */
function batchOf(t) {
  if (t.pixel_values) return { pixelValues: tensorOf(t.pixel_values), labels: intsOf(t.labels) };
  const mask = { data: Uint8Array.from(t.attention_mask.data), shape: t.attention_mask.shape };
  return {
    inputIds: intsOf(t.input_ids),
    attentionMask: mask,
    tokenTypeIds: intsOf(t.token_type_ids),
    labels: intsOf(t.labels),
  };
}
const batch = batchOf(f);
const [B] = f.pixel_values.shape;

/** Row `row` of a (1, T, E) tensor is all zeros. */
const rowIsZero = (t, row) => t.data.subarray(row * t.shape[2], (row + 1) * t.shape[2]).every((x) => x === 0);

for (const variant of VARIANTS) {
  describe(`training an encoder (vit), ${variant} build`, async () => {
    const attn = await init({ variant });
    const load = () => attn.loadModel({ config: c.config, tensors: c.tensors });

    for (const x of trained) {
      test(`${x.name}: lossAndGrad(batch) gives PyTorch's loss and every gradient, under stateDict's names`, (t) => {
        const model = scope(t)(attn.loadModel({ config: x.config, tensors: x.tensors }));
        const xb = batchOf(x.train);
        const { loss, gradParams } = model.lossAndGrad(xb);
        const tol = { atol: x.train.tolerance.atol, rtol: x.train.tolerance.rtol };
        const want = x.train.loss;
        assert.ok(Math.abs(loss - want) <= tol.atol + tol.rtol * Math.abs(want), `loss ${loss} vs ${want}`);
        const names = Object.keys(model.stateDict()).filter((name) => name in gradParams);
        assert.deepEqual(Object.keys(gradParams), names, 'stateDict order and names');
        assert.deepEqual(Object.keys(gradParams).sort(), Object.keys(x.train.grads).sort(), "the fixture's names");
        for (const [name, g] of Object.entries(x.train.grads)) assertClose(gradParams[name], tensorOf(g), tol, name);
        assert.deepEqual(model.lossAndGrad(xb), { loss, gradParams }, 'a second call: the same, nothing stepped');
      });

      for (const runName of ['adamw', 'adamw_noclip']) {
        test(`${x.name}: trainStep(batch, options), ${runName}: each step's loss and gradNorm, then every parameter`, (t) => {
          const model = scope(t)(attn.loadModel({ config: x.config, tensors: x.tensors }));
          const run = x.train[runName];
          const rtol = x.train.tolerance.steps.rtol;
          run.steps.forEach((want, i) => {
            const r = model.trainStep(batchOf(x.train), adamwOf(run));
            assert.deepEqual(Object.keys(r), ['loss', 'gradNorm']);
            assertRelative(r.loss, want.loss, rtol, `step ${i} loss`);
            assertRelative(r.gradNorm, want.grad_norm, rtol, `step ${i} gradNorm`);
          });
          const state = model.stateDict();
          const rule = x.train.tolerance.params_after;
          for (const [name, want] of Object.entries(run.params_after)) {
            const median = !x.train.noise_driven.includes(name);
            assertParamsAfter(name, state[name], want, rule, rule.max_abs[runName], median);
          }
        });
      }
    }

    test('attentionMask: a key padded in every item passes nothing (its position row: exactly 0)', (t) => {
      const model = scope(t)(load());
      const T = model.config.contextLength;
      const mask = new Uint8Array(B * T).fill(1);
      for (let b = 0; b < B; ++b) mask[b * T + 4] = 0;
      const open = model.lossAndGrad(batch).gradParams['embeddings.position_embeddings'];
      const masked = model.lossAndGrad({ ...batch, attentionMask: { data: mask, shape: [B, T] } });
      const rows = masked.gradParams['embeddings.position_embeddings'];
      for (let row = 0; row < T; ++row) {
        assert.equal(rowIsZero(open, row), false, `row ${row} without a mask (bidirectional: token 0 sees it)`);
        assert.equal(rowIsZero(rows, row), row === 4, `row ${row} with key 4 masked`);
      }
    });

    test('bad batches: each a RangeError / TypeError naming the field; the module works after them', (t) => {
      const own = scope(t);
      const model = own(load());
      const labels = (data, shape = [data.length]) => ({ ...batch, labels: { data: Int32Array.from(data), shape } });
      const cases = [
        [labels([0, 1, 4]), RangeError, /batch\.labels\.data\[2\]/],
        [labels([-100, -100, -100]), RangeError, /batch\.labels/],
        [labels([0, 1, 2], [3, 1]), RangeError, /batch\.labels/],
        [labels([0, 1]), RangeError, /batch\.labels/],
        [{ ...batch, labels: { data: [0, 1, 2], shape: [3] } }, TypeError, /batch\.labels/],
        [{ ...batch, inputIds: { data: Int32Array.of(1, 2), shape: [1, 2] } }, RangeError, /batch\.inputIds/],
        [{ labels: batch.labels }, TypeError, /batch\.pixelValues/],
        [{ ...batch, pixelValues: { data: new Float32Array(12), shape: [1, 3, 2, 2] } }, RangeError, /pixelValues/],
        [{ ...batch, headMask: tensorOf({ data: [1], shape: [1] }) }, TypeError, /headMask/],
        [{ ...batch, attentionMask: { data: new Uint8Array(3), shape: [1, 3] } }, RangeError, /attentionMask/],
      ];
      for (const [bad, type, pattern] of cases) {
        assertThrows(() => model.lossAndGrad(bad), type, /model\.lossAndGrad/, pattern);
      }
      assertThrows(() => model.lossAndGrad(batch, batch.labels), TypeError, /batch/);
      assertThrows(() => model.trainStep(batch, { lr: 0 }), RangeError, /model\.trainStep/, /lr/);
      assertThrows(() => model.trainStep(batch), TypeError, /lr/);
      assertThrows(() => model.train([batch], { lr: 1e-3 }), TypeError, /model\.train/, /decoders only/);
      const text = own(attn.createModel(kGpt2));
      assertThrows(() => text.lossAndGrad(batch), TypeError, /tokens/);
      assertStillWorks(attn);
      assert.ok(Math.abs(model.lossAndGrad(batch).loss - f.loss) < 1e-4, 'the loss after the errors');
    });

    test('a text encoder: masked-LM labels (B, T), ids in range, inputIds not pixelValues, each named', (t) => {
      const x = trained.find((y) => y.name === 'bert_mlm_f32');
      const model = scope(t)(attn.loadModel({ config: x.config, tensors: x.tensors }));
      const good = batchOf(x.train);
      const [items, T] = good.inputIds.shape;
      const V = model.config.vocabSize;
      const labels = (data, shape) => ({ ...good, labels: { data: Int32Array.from(data), shape } });
      const cases = [
        [labels(new Array(items).fill(1), [items]), /batch\.labels\.shape/],
        [labels(new Array(items * T).fill(V), [items, T]), /batch\.labels\.data\[0\]/],
        [{ ...good, inputIds: { data: good.inputIds.data.map(() => V), shape: [items, T] } }, /batch\.inputIds\.data/],
        [{ ...good, pixelValues: tensorOf({ data: [0], shape: [1] }) }, /batch\.pixelValues/],
      ];
      for (const [bad, pattern] of cases) assertThrows(() => model.lossAndGrad(bad), RangeError, pattern);
      assertStillWorks(attn);
      assert.ok(Math.abs(model.lossAndGrad(good).loss - x.train.loss) < 1e-4, 'the loss after the errors');
    });

    test('a batch whose training memory cannot fit is refused by name before anything is allocated', (t) => {
      // 1 + 112² = 12545 tokens: each layer's saved attention weights (1, 4, T, T) are 2.5 GB
      const options = { arch: 'vit', imageSize: 224, patchSize: 2, numChannels: 3, embedDim: 8, numLayers: 2 };
      const model = scope(t)(attn.createModel({ ...options, numHeads: 4, task: 'image-classification' }));
      const big = { pixelValues: { data: new Float32Array(3 * 224 * 224), shape: [1, 3, 224, 224] } };
      const one = { data: Int32Array.of(1), shape: [1] };
      assertThrows(() => model.lossAndGrad({ ...big, labels: one }), RangeError, /lossAndGrad/, /saved activations/);
      assertThrows(() => model.trainStep({ ...big, labels: one }, { lr: 1e-3 }), RangeError, /AdamW/);
      assertStillWorks(attn);
    });

    test('a pooler off the loss path (ViT with pooler and classifier): no gradient, not updated', (t) => {
      const options = { arch: 'vit', imageSize: 8, patchSize: 4, numChannels: 3, embedDim: 8, numLayers: 1 };
      const model = scope(t)(attn.createModel({ ...options, numHeads: 2, task: 'image-classification', seed: 3 }));
      const pooler = ['pooler.dense.weight', 'pooler.dense.bias'];
      assert.ok(
        pooler.every((name) => name in model.stateDict()),
        'the model has a pooler',
      );
      const pixels = { data: Float32Array.from({ length: 3 * 64 }, (_, i) => Math.sin(i)), shape: [1, 3, 8, 8] };
      const small = { pixelValues: pixels, labels: { data: Int32Array.of(1), shape: [1] } };
      const { gradParams } = model.lossAndGrad(small);
      assert.ok(
        pooler.every((name) => !(name in gradParams)),
        'no gradient for the pooler',
      );
      assert.ok('classifier.weight' in gradParams);
      const before = model.stateDict();
      model.trainStep(small, { lr: 0.1, weightDecay: 0.5 });
      const after = model.stateDict();
      for (const name of pooler) assert.deepEqual(after[name], before[name], `${name}: unchanged (no decay either)`);
      assert.notDeepEqual(after['classifier.weight'], before['classifier.weight']);
    });

    test(`attnlab/worker: lossAndGrad(batch) and trainStep(batch, options) as the synchronous API (${variant})`, async (t) => {
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        const local = scope(t)(load());
        assert.deepEqual(await remote.lossAndGrad(batch), local.lossAndGrad(batch));
        const options = adamwOf(f.adamw);
        assert.deepEqual(await remote.trainStep(batch, options), local.trainStep(batch, options));
        await assert.rejects(remote.lossAndGrad({ labels: batch.labels }), (e) => e instanceof TypeError);
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}
