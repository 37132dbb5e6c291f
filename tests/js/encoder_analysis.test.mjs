// model.headImportance (gradient, ablation), model.attribution (gradient × input, gradient, occlusion) and
// model.patchHeads of encoders and encoder–decoders (web/src/encoder_analysis.mjs) on every variant: each
// analysis.json of tests/fixtures/encoders/ and tests/fixtures/seq2seq/ (PyTorch, float64: each kind of head's
// mask gradient by autograd, zero and mean ablation of each kind of head, the gradient on the encoder's block-0
// input, occlusion of one logit by pad ids or zeroed patches, activation patching of each kind) element by
// element; zero ablation equals the test's own loss of a forward with that head mask, the gradient of one row a
// central difference of it; a backward that cannot fit refused before any allocation; patching an input into
// itself changes nothing; each bad argument's error (the model still working after); the same results and an
// error in attnlab/worker.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32, root } from './helpers.mjs';
import { loadFixtureCases, rowMeanLoss, scope } from './model-helpers.mjs';

const withAnalysis = (sibling) =>
  loadFixtureCases(sibling, (name) => existsSync(join(root, 'tests', 'fixtures', sibling, name, 'analysis.json'))).map(
    (c) => ({ ...c, a: JSON.parse(readFileSync(join(root, 'tests', 'fixtures', sibling, c.name, 'analysis.json'))) }),
  );
const cases = [...withAnalysis('encoders'), ...withAnalysis('seq2seq')];
const byName = (name) => cases.find((c) => c.name === name);

const idsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });
const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
/** Rows [0, rows) of a fixture tensor. */
function rowsOf(t, rows, of = idsOf) {
  const n = t.data.length / t.shape[0];
  return of({ data: t.data.slice(0, rows * n), shape: [rows, ...t.shape.slice(1)] });
}

/** The fixture's batch: inputs (padding included), labels; an encoder–decoder's decoder inputs left to the default. */
function batchOf(a) {
  const batch = { labels: idsOf(a.labels) };
  if (a.pixel_values) batch.pixelValues = tensorOf(a.pixel_values);
  else batch.inputIds = idsOf(a.input_ids);
  if (a.attention_mask)
    batch.attentionMask = { data: Uint8Array.from(a.attention_mask.data), shape: a.attention_mask.shape };
  return batch;
}

/** Attribution's and patching's inputs (row 0, and the corrupted one) and options. */
function oneOf(a) {
  const one = a.pixel_values ? rowsOf(a.pixel_values, 1, tensorOf) : rowsOf(a.input_ids, 1);
  const corrupted = a.pixel_values ? tensorOf(a.corrupted) : idsOf(a.corrupted);
  const options = { position: a.position, target: a.target };
  if (a.decoder_input_ids) options.decoderInputIds = rowsOf(a.decoder_input_ids, 1);
  return { one, corrupted, options };
}

const kinds = (a, prefix) => (a.decoder_input_ids ? ['', 'decoder_', 'cross_'] : ['']).map((k) => [k, `${k}${prefix}`]);
const part = (result, k) => (k === '' ? (result.encoder ?? result) : result[k.slice(0, -1)]);

/** The gradient methods' tolerance: relative, and absolute at a thousandth of the reference's largest value. */
const gradientTol = (t) => ({ atol: 1e-3 * Math.max(...t.data.map(Math.abs)), rtol: 1e-3 });

function checkGradients(model, c) {
  const { a } = c;
  if (!a.gradient_importance) return;
  const r = model.headImportance(batchOf(a), { method: 'gradient' });
  assertClose({ data: [r.loss], shape: [] }, tensorOf(a.loss), a.tolerance, `${c.name}: loss (gradient)`);
  for (const [k, key] of kinds(a, 'gradient_importance')) {
    assertClose(part(r.importance, k), tensorOf(a[key]), gradientTol(a[key]), `${c.name}: ${key}`);
  }
  const { one, options } = oneOf(a);
  for (const [method, key] of [
    ['gradient-x-input', 'gradient_x_input'],
    ['gradient', 'gradient'],
  ]) {
    assertClose(
      model.attribution(one, { ...options, method }),
      tensorOf(a[key]),
      gradientTol(a[key]),
      `${c.name}: ${key}`,
    );
  }
}

function checkFixture(model, c) {
  const { a } = c;
  const tol = a.tolerance;
  checkGradients(model, c);
  for (const ablation of ['zero', 'mean']) {
    const r = model.headImportance(batchOf(a), { method: 'ablation', ablation });
    assertClose({ data: [r.loss], shape: [] }, tensorOf(a.loss), tol, `${c.name}: loss`);
    for (const [k, key] of kinds(a, `ablation_${ablation}`)) {
      assertClose(part(r.importance, k), tensorOf(a[key]), tol, `${c.name}: ${key}`);
    }
  }
  const { one, corrupted, options } = oneOf(a);
  const occ = model.attribution(one, { ...options, method: 'occlusion' });
  assertClose(occ, tensorOf(a.occlusion), tol, `${c.name}: occlusion`);
  const p = model.patchHeads(one, corrupted, options);
  for (const [k, key] of kinds(a, 'patch_effect'))
    assertClose(part(p.effect, k), tensorOf(a[key]), tol, `${c.name}: ${key}`);
  assertClose({ data: [p.cleanLogit], shape: [] }, tensorOf(a.patch_clean_logit), tol, `${c.name}: clean logit`);
  assertClose({ data: [p.corruptedLogit], shape: [] }, tensorOf(a.patch_corrupted_logit), tol, `${c.name}: corrupted`);
}

for (const variant of VARIANTS) {
  describe(`encoder and encoder–decoder analysis, ${variant} build`, async () => {
    const attn = await init({ variant });
    const load = (t, c) => scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));

    test('every analysis.json of the encoders and encoder–decoders matches PyTorch', (t) => {
      assert.equal(cases.length, 5);
      // (the gradient methods' references: all but marian's, a post-norm encoder–decoder, which refuses them)
      assert.deepEqual(
        cases.filter((c) => c.a.gradient_importance && c.a.gradient && c.a.gradient_x_input).map((c) => c.name),
        cases.map((c) => c.name).filter((n) => n !== 'marian_mt_f32'),
      );
      for (const c of cases) checkFixture(load(t, c), c);
    });

    test("zero ablation is the test's own loss with that head mask; a self-patch changes nothing", (t) => {
      const c = byName('bert_mlm_f32');
      const model = load(t, c);
      const batch = batchOf(c.a);
      const { numLayers: L, numHeads: H } = model.config;
      const r = model.headImportance(batch, { method: 'ablation' });
      const loss = (mask) =>
        rowMeanLoss(
          model.forward(batch.inputIds, { attentionMask: batch.attentionMask, headMask: { data: mask, shape: [L, H] } })
            .logits,
          batch.labels,
        );
      const base = loss(new Float32Array(L * H).fill(1));
      const mask = new Float32Array(L * H).fill(1);
      mask[L * H - 1] = 0;
      assert.ok(Math.abs(r.importance.data[L * H - 1] - (loss(mask) - base)) < 1e-6);
      const marian = load(t, byName('marian_mt_f32'));
      const { one, options } = oneOf(byName('marian_mt_f32').a);
      const self = marian.patchHeads(one, one, options);
      for (const k of ['encoder', 'decoder', 'cross'])
        assert.ok(
          self.effect[k].data.every((x) => x === 0),
          k,
        );
      assert.equal(self.cleanLogit, self.corruptedLogit);
    });

    test("the gradient importance of one row is |a central difference| of the test's loss on each kind's mask", (t) => {
      const c = byName('t5_v10_f32');
      const model = load(t, c);
      const { decoderLayers: Ld, numLayers: L, numHeads: H } = model.config;
      const inputIds = rowsOf(c.a.input_ids, 1);
      const labels = rowsOf(c.a.labels, 1);
      const decoderInputIds = rowsOf(c.a.decoder_input_ids, 1);
      const g = model.headImportance({ inputIds, labels }, { method: 'gradient' }).importance;
      for (const [kind, option, layers] of [
        ['encoder', 'headMask', L],
        ['decoder', 'decoderHeadMask', Ld],
        ['cross', 'crossAttnHeadMask', Ld],
      ]) {
        const at = g[kind].data.indexOf(Math.max(...g[kind].data));
        const loss = (xi) => {
          const mask = new Float32Array(layers * H).fill(1);
          mask[at] = xi;
          const o = { decoderInputIds, [option]: { data: mask, shape: [layers, H] } };
          return rowMeanLoss(model.forward(inputIds, o).logits, labels);
        };
        const h = 1e-2;
        const fd = (loss(1 + h) - loss(1 - h)) / (2 * h);
        assert.ok(g[kind].data[at] > 1e-3, kind);
        assert.ok(
          Math.abs(g[kind].data[at] - Math.abs(fd)) <= 1e-4 + 2e-2 * Math.abs(fd),
          `${kind}: ${g[kind].data[at]} vs ${fd}`,
        );
      }
    });

    test('a gradient method whose backward cannot fit is refused by name before anything is allocated', (t) => {
      // 1 + 112² = 12545 tokens: each layer's saved attention weights (1, 4, T, T) are 2.5 GB (a forward keeps one)
      const options = { arch: 'vit', imageSize: 224, patchSize: 2, numChannels: 3, embedDim: 8, numLayers: 2 };
      const model = scope(t)(attn.createModel({ ...options, numHeads: 4, task: 'image-classification' }));
      const pixelValues = { data: new Float32Array(3 * 224 * 224), shape: [1, 3, 224, 224] };
      const before = attn.memoryBytes();
      const labels = { data: Int32Array.of(1), shape: [1] };
      for (const call of [
        () => model.headImportance({ pixelValues, labels }),
        () => model.attribution(pixelValues, { target: 1 }),
      ]) {
        assertThrows(call, RangeError, /model\.(headImportance|attribution): inputs too large/, /saved activations/);
      }
      assert.equal(attn.memoryBytes(), before);
      assertStillWorks(attn);
    });

    test('each bad argument is named (the model still works after)', (t) => {
      const bert = load(t, byName('bert_mlm_f32'));
      const { a } = byName('bert_mlm_f32');
      const batch = batchOf(a);
      const { one, options } = oneOf(a);
      assertThrows(
        () => bert.headImportance({ ...batch, labels: rowsOf(a.labels, 1) }),
        RangeError,
        /labels: expected shape \[3, 7\]/,
      );
      assertThrows(() => bert.headImportance(null, { method: 'ablation' }), TypeError, /batch must be an object/);
      assertThrows(
        () => bert.headImportance({ labels: batch.labels }, { method: 'ablation' }),
        TypeError,
        /batch\.inputIds is required/,
      );
      assertThrows(
        () => bert.headImportance({ ...batch, tokens: 1 }, { method: 'ablation' }),
        TypeError,
        /unknown option "tokens" in batch/,
      );
      assertThrows(
        () => bert.headImportance({ ...batch, labels: [1] }, { method: 'ablation' }),
        TypeError,
        /batch\.labels/,
      );
      assertThrows(
        () => bert.headImportance({ ...batch, labels: rowsOf(a.labels, 1) }, { method: 'ablation' }),
        RangeError,
        /labels: expected shape \[3, 7\]/,
      );
      assertThrows(
        () => bert.headImportance(batch, { method: 'ablation', ablation: 'half' }),
        RangeError,
        /options\.ablation/,
      );
      assertThrows(
        () => bert.headImportance({ ...batch, attentionMask: batch.labels }, { method: 'ablation' }),
        TypeError,
        /batch\.attentionMask/,
      );
      assertThrows(() => bert.attribution(one, { ...options, position: 7 }), RangeError, /options\.position/);
      assertThrows(
        () => bert.attribution(one, { ...options, method: 'gradient', target: 24 }),
        RangeError,
        /options\.target/,
      );
      assertThrows(
        () => bert.attribution(batch.inputIds, { ...options, method: 'occlusion' }),
        RangeError,
        /tokens\.shape must have batch size 1/,
      );
      assertThrows(
        () => bert.attribution(one, { ...options, position: 7, method: 'occlusion' }),
        RangeError,
        /options\.position/,
      );
      assertThrows(
        () => bert.attribution(one, { ...options, target: 24, method: 'occlusion' }),
        RangeError,
        /options\.target/,
      );
      assertThrows(() => bert.attribution(one), TypeError, /options \{ position, target \} are required/);
      assertThrows(
        () => bert.patchHeads(one, rowsOf(a.input_ids, 2), options),
        RangeError,
        /corrupted\.shape must equal clean\.shape/,
      );
      assertThrows(
        () => bert.patchHeads(one, one, { ...options, method: 'occlusion' }),
        TypeError,
        /unknown option "method" in options/,
      );
      const vit = load(t, byName('vit_cls_f32'));
      const v = oneOf(byName('vit_cls_f32').a);
      assertThrows(
        () => vit.attribution(one, { target: 0, method: 'occlusion' }),
        RangeError,
        /vision model; it takes pixelValues/,
      );
      assertThrows(
        () => vit.attribution(v.one, { position: 1, target: 0, method: 'occlusion' }),
        RangeError,
        /options\.position/,
      );
      assertThrows(() => vit.patchHeads(v.one, v.corrupted, { target: 4 }), RangeError, /options\.target.*a class/);
      const marian = load(t, byName('marian_mt_f32'));
      const m = oneOf(byName('marian_mt_f32').a);
      assertThrows(
        () => marian.patchHeads(m.one, m.corrupted, { position: 0, target: 0 }),
        TypeError,
        /options\.decoderInputIds .* is required/,
      );
      assertThrows(
        () => marian.attribution(m.one, { ...m.options, position: 4, method: 'occlusion' }),
        RangeError,
        /options\.position/,
      );
      assertThrows(() => marian.attribution(m.one, m.options), RangeError, /marian/);
      assert.equal(bert.attribution(one, options).shape[0], 7); // (still works)
    });
  });

  describe(`encoder analysis in attnlab/worker, ${variant} build`, async () => {
    test("the worker gives the main thread's results and errors", async (t) => {
      const attn = await init({ variant });
      const w = await initWorker({ variant });
      t.after(() => w.terminate());
      const c = byName('t5_v10_f32');
      const local = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
      const batch = batchOf(c.a);
      const { one, corrupted, options } = oneOf(c.a);
      assert.deepEqual(
        await remote.headImportance(batch, { method: 'ablation', ablation: 'mean' }),
        local.headImportance(batch, { method: 'ablation', ablation: 'mean' }),
      );
      assert.deepEqual(await remote.patchHeads(one, corrupted, options), local.patchHeads(one, corrupted, options));
      assert.deepEqual(
        await remote.attribution(one, { ...options, method: 'occlusion' }),
        local.attribution(one, { ...options, method: 'occlusion' }),
      );
      assert.deepEqual(await remote.attribution(one, options), local.attribution(one, options));
      assert.deepEqual(
        await remote.headImportance(batch, { method: 'gradient' }),
        local.headImportance(batch, { method: 'gradient' }),
      );
      await assert.rejects(
        remote.attribution(one, { ...options, position: 9 }),
        (e) => e instanceof RangeError && /options\.position/.test(e.message),
      );
      await remote.dispose();
    });
  });
}
