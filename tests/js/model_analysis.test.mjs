// model.headImportance, model.attribution and model.patchHeads (web/src/model_analysis.mjs) on every variant: each
// tests/fixtures/models/<case>/analysis.json (PyTorch, float64: head-mask gradients by autograd, zero and mean
// ablation, gradient × input / gradient norm / occlusion of one logit, activation patching of each head) element by
// element; zero ablation equals the test's own loss of a forward with that headMask, and the gradient method a
// finite difference on it; patching a prompt into itself changes nothing; each bad argument's error (the model still
// working after); and the same results and errors in attnlab/worker.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertThrows, f32 } from './helpers.mjs';
import { MODEL_CASES, kLlama, loadModelCase, modelDir, rowMeanLoss, scope } from './model-helpers.mjs';

const cases = MODEL_CASES.filter((name) => existsSync(join(modelDir, name, 'analysis.json'))).map((name) => ({
  ...loadModelCase(name),
  analysis: JSON.parse(readFileSync(join(modelDir, name, 'analysis.json'), 'utf8')),
}));

const idsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });
const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });

function maskedLoss(model, tokens, targets, mask, L, H) {
  return rowMeanLoss(model.forward(tokens, { headMask: { data: mask, shape: [L, H] } }).logits, targets);
}

for (const variant of VARIANTS) {
  describe(`head importance and attribution, ${variant} build`, async () => {
    const attn = await init({ variant });

    test('every analysis.json fixture: importance, ablations and attributions match PyTorch', (t) => {
      const own = scope(t);
      assert.equal(cases.length, 3);
      for (const c of cases) {
        const a = c.analysis;
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const batch = { tokens: idsOf(a.tokens), targets: idsOf(a.targets) };
        const tol = a.tolerance;
        const grad = model.headImportance(batch);
        assertClose(grad.importance, tensorOf(a.importance), tol, `${c.name}: importance (gradient)`);
        assertClose({ data: [grad.loss], shape: [] }, tensorOf(a.loss), tol, `${c.name}: loss`);
        for (const [ablation, key] of [
          ['zero', 'ablation_zero'],
          ['mean', 'ablation_mean'],
        ]) {
          const r = model.headImportance(batch, { method: 'ablation', ablation });
          assertClose(r.importance, tensorOf(a[key]), tol, `${c.name}: ${key}`);
        }
        assert.deepEqual(
          model.headImportance(batch, { method: 'ablation' }).importance,
          model.headImportance(batch, { method: 'ablation', ablation: 'zero' }).importance,
        );
        const one = { data: Int32Array.from(a.tokens.data.slice(0, a.tokens.shape[1])), shape: [1, a.tokens.shape[1]] };
        for (const method of ['gradient-x-input', 'gradient', 'occlusion']) {
          const got = model.attribution(one, { position: a.position, target: a.target, method });
          assertClose(got, tensorOf(a[method.replace(/-/g, '_')]), tol, `${c.name}: ${method}`);
        }
        const T = a.tokens.shape[1];
        const corrupted = { data: Int32Array.from(a.tokens.data.slice(2 * T, 3 * T)), shape: [1, T] };
        const p = model.patchHeads(one, corrupted, { position: a.position, target: a.target });
        assertClose(p.effect, tensorOf(a.patch_effect), tol, `${c.name}: patch_effect`);
        const scalars = { data: [p.cleanLogit, p.corruptedLogit], shape: [2] };
        const expected = { data: [a.patch_clean_logit.data[0], a.patch_corrupted_logit.data[0]], shape: [2] };
        assertClose(scalars, expected, tol, `${c.name}: patched logits`);
      }
    });

    test('zero ablation is the forward with that headMask; gradient importance is a finite difference on it', (t) => {
      const own = scope(t);
      const c = cases.find((x) => x.name === 'llama_gqa_f32');
      const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const { numLayers: L, numHeads: H } = model.config;
      // one row only: |mean of row gradients| is then the gradient of the loss itself
      const T = c.analysis.tokens.shape[1];
      const tokens = { data: Int32Array.from(c.analysis.tokens.data.slice(0, T)), shape: [1, T] };
      const targets = { data: Int32Array.from(c.analysis.targets.data.slice(0, T)), shape: [1, T] };
      const zero = model.headImportance({ tokens, targets }, { method: 'ablation' }).importance;
      const grad = model.headImportance({ tokens, targets }).importance;
      const base = maskedLoss(model, tokens, targets, new Float32Array(L * H).fill(1), L, H);
      const h = 1 / 64;
      for (let i = 0; i < L * H; ++i) {
        const mask = new Float32Array(L * H).fill(1);
        mask[i] = 0;
        const masked = maskedLoss(model, tokens, targets, mask, L, H);
        assert.ok(Math.abs(zero.data[i] - (masked - base)) < 1e-5, `head ${i}: ${zero.data[i]} vs ${masked - base}`);
        mask[i] = 1 + h;
        const up = maskedLoss(model, tokens, targets, mask, L, H);
        mask[i] = 1 - h;
        const fd = Math.abs((up - maskedLoss(model, tokens, targets, mask, L, H)) / (2 * h));
        assert.ok(Math.abs(grad.data[i] - fd) <= 2e-4 + 2e-2 * fd, `head ${i}: gradient ${grad.data[i]} vs ${fd}`);
      }
    });

    test('bad arguments: each its own error, naming the argument', (t) => {
      const own = scope(t);
      const model = own(attn.createModel({ ...kLlama, seed: 3 }));
      const tokens = { data: Int32Array.of(1, 2, 3, 4), shape: [1, 4] };
      const targets = { data: Int32Array.of(2, 3, 4, -100), shape: [1, 4] };
      const batch = { tokens, targets };
      assertThrows(() => model.headImportance(tokens), TypeError, /batch\.tokens/);
      assertThrows(() => model.headImportance(null), TypeError, /batch must be an object/);
      assertThrows(() => model.headImportance(batch, { method: 'saliency' }), RangeError, /options\.method/);
      assertThrows(() => model.headImportance(batch, { method: 3 }), TypeError, /options\.method/);
      assertThrows(() => model.headImportance(batch, { ablation: 'mean' }), RangeError, /options\.ablation/);
      assertThrows(() => model.headImportance(batch, { method: 'ablation', ablation: 'one' }), RangeError, /ablation/);
      assertThrows(() => model.headImportance(batch, { heads: 1 }), TypeError, /unknown option "heads"/);
      const ignored = { tokens, targets: { data: Int32Array.of(-100, -100, -100, -100), shape: [1, 4] } };
      assertThrows(() => model.headImportance(ignored), RangeError, /batch\.targets/);
      const at = (o) => () => model.attribution(tokens, o);
      assertThrows(at({ position: 4, target: 0 }), RangeError, /options\.position/, /\[0, 4\)/);
      assertThrows(at({ position: -1, target: 0 }), RangeError, /options\.position/);
      assertThrows(at({ position: 1.5, target: 0 }), RangeError, /options\.position/);
      assertThrows(at({ target: 0 }), TypeError, /options\.position/);
      assertThrows(at({ position: 0, target: 40 }), RangeError, /options\.target/, /\[0, 40\)/);
      assertThrows(at({ position: 0, target: 0, method: 'saliency' }), RangeError, /options\.method/);
      assertThrows(() => model.attribution(tokens), TypeError, /options/);
      const two = { data: Int32Array.of(1, 2, 3, 4), shape: [2, 2] };
      assertThrows(() => model.attribution(two, { position: 0, target: 0 }), RangeError, /tokens\.shape/);
      const bad = { data: Int32Array.of(1, 40), shape: [1, 2] };
      assertThrows(() => model.attribution(bad, { position: 0, target: 0 }), RangeError, /tokens\.data\[1\]/);
      const patch = (x, y, o) => () => model.patchHeads(x, y, o);
      const three = { data: Int32Array.of(1, 2, 3), shape: [1, 3] };
      assertThrows(patch(tokens, three, { position: 0, target: 0 }), RangeError, /corrupted\.shape/);
      assertThrows(patch(two, two, { position: 0, target: 0 }), RangeError, /clean\.shape/);
      assertThrows(patch(tokens, tokens, { position: 4, target: 0 }), RangeError, /options\.position/);
      assertThrows(patch(tokens, tokens, { position: 0, target: 0, method: 'x' }), TypeError, /unknown option/);
      assertThrows(patch(tokens, bad, { position: 0, target: 0 }), RangeError, /corrupted/);
      const same = model.patchHeads(tokens, tokens, { position: 3, target: 1 });
      assert.equal(same.cleanLogit, same.corruptedLogit);
      assert.deepEqual(Array.from(same.effect.data), new Array(8).fill(0));
      // still working, and causal: positions after `position` get exactly 0
      const r = model.attribution(tokens, { position: 1, target: 5, method: 'occlusion' });
      assert.deepEqual(Array.from(r.data.subarray(2)), [0, 0]);
      assert.ok(r.data[0] !== 0 && r.data[1] !== 0);
    });
  });

  describe(`head importance and attribution in attnlab/worker, ${variant} build`, async () => {
    const attn = await init({ variant });
    test('the same results as the main thread, and the same errors', async (t) => {
      const own = scope(t);
      const c = cases[0];
      const a = c.analysis;
      const batch = { tokens: idsOf(a.tokens), targets: idsOf(a.targets) };
      const one = { data: Int32Array.from(a.tokens.data.slice(0, a.tokens.shape[1])), shape: [1, a.tokens.shape[1]] };
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        const local = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const o = { method: 'ablation', ablation: 'mean' };
        assert.deepEqual(await remote.headImportance(batch, o), local.headImportance(batch, o));
        const p = { position: a.position, target: a.target, method: 'occlusion' };
        assert.deepEqual(await remote.attribution(one, p), local.attribution(one, p));
        const q = { position: a.position, target: a.target };
        assert.deepEqual(await remote.patchHeads(one, one, q), local.patchHeads(one, one, q));
        await assert.rejects(
          remote.attribution(one, { position: 99, target: 0 }),
          (e) => e instanceof RangeError && /options\.position/.test(e.message),
        );
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}
