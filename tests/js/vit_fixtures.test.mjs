// Vision models in JS (ViT through transformer.mjs and encoder.mjs; issue 33 items 2, 5): every PyTorch ViT fixture
// of tests/fixtures/encoders/ (the image-classification head in F32, the base model with its pooler in F16) loaded
// on every variant: model.kind and model.task, the normalised config, lastHiddenState, pooledOutput, logits, every
// attention and hidden state with head masks at the fixture's tolerance; from a Blob, the state dict's round trip,
// createModel(model.config); the same in attnlab/worker; pixelValues' shape checks, token ids to a vision model and
// pixel values to a text model refused by name, the module still working after each.
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { kGpt2, loadFixtureCases, scope } from './model-helpers.mjs';

const cases = loadFixtureCases('encoders', (name) => name.startsWith('vit'));
const byName = (name) => cases.find((c) => c.name === name);

const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const optionsOf = (f) => ({
  outputAttentions: true,
  outputHiddenStates: true,
  ...(f.head_mask ? { headMask: tensorOf(f.head_mask) } : {}),
});
const runAll = (c, model) => c.expected.forward.map((f) => model.forward(tensorOf(f.pixel_values), optionsOf(f)));

test('the ViT fixtures: a classifier and a base model', () => {
  assert.deepEqual(
    cases.map((c) => c.expected.task),
    ['base', 'image-classification'],
  );
});

for (const variant of VARIANTS) {
  describe(`vision models (vit), ${variant} build`, async () => {
    const attn = await init({ variant });

    for (const c of cases) {
      const tol = c.expected.tolerance;
      test(`${c.name}: kind 'encoder', task '${c.expected.task}', the normalised config`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.equal(model.kind, 'encoder');
        assert.equal(model.task, c.expected.task);
        for (const [key, value] of Object.entries(c.expected.config)) {
          if (key === 'numLabels' && c.expected.task !== 'image-classification') continue;
          assert.equal(model.config[key], value, key);
        }
      });

      test(`${c.name}: lastHiddenState, pooledOutput, logits, every attention and hidden state of each case`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const L = c.expected.config.numLayers;
        for (const f of c.expected.forward) {
          const r = model.forward(tensorOf(f.pixel_values), optionsOf(f));
          assertClose(r.lastHiddenState, tensorOf(f.last_hidden_state), tol, `${f.name} lastHiddenState`);
          if (f.pooler_output) assertClose(r.pooledOutput, tensorOf(f.pooler_output), tol, `${f.name} pooledOutput`);
          else assert.equal(r.pooledOutput, undefined, `${f.name}: no pooler, no pooledOutput`);
          if (f.logits) assertClose(r.logits, tensorOf(f.logits), tol, `${f.name} logits`);
          else assert.equal(r.logits, undefined, `${f.name}: a base model has no logits`);
          assert.equal(r.attentions.length, L);
          f.attentions.forEach((a, l) => assertClose(r.attentions[l], tensorOf(a), tol, `${f.name} attentions[${l}]`));
          assert.equal(r.hiddenStates.length, L + 1);
          f.hidden_states.forEach((h, l) =>
            assertClose(r.hiddenStates[l], tensorOf(h), tol, `${f.name} hiddenStates[${l}]`),
          );
        }
      });

      test(`${c.name}: from a Blob, from its stateDict, createModel(model.config): the same model`, async (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const blob = own(await attn.loadModel({ config: c.config, tensors: await openAsBlob(c.file) }));
        assert.deepEqual(runAll(c, blob), runAll(c, model));
        const again = own(attn.loadModel({ config: model.config, tensors: model.stateDict() }));
        assert.deepEqual(runAll(c, again), runAll(c, model));
        const fresh = own(attn.createModel(model.config));
        assert.deepEqual(fresh.config, model.config);
        assert.equal(fresh.kind, 'encoder');
        const shapes = (m) => Object.entries(m.stateDict()).map(([k, v]) => [k, v.shape]);
        assert.deepEqual(shapes(fresh), shapes(model));
      });
    }

    describe('bad input: each its own error, and the module still works after it', () => {
      const c = byName('vit_cls_f32');
      const f = c.expected.forward[0];
      const pixels = tensorOf(f.pixel_values);

      test('pixelValues of another shape: a RangeError naming it, expected vs actual', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const [B, C, H] = pixels.shape;
        for (const shape of [
          [B, C, H + 2, H + 2],
          [B, C + 1, H, H],
          [B, C, H, H + 1],
          [C, H, H],
          [0, C, H, H],
        ]) {
          const n = shape.reduce((a, b) => a * b, 1);
          const expected = new RegExp(`\\[B, ${C}, ${H}, ${H}\\].*got \\[${shape.join(', ')}\\]`);
          assertThrows(
            () => model.forward({ data: new Float32Array(n), shape }),
            RangeError,
            /model\.forward/,
            /pixelValues/,
            expected,
          );
        }
        assertStillWorks(attn);
        assertClose(model.forward(pixels).logits, tensorOf(f.logits), c.expected.tolerance, 'logits after the errors');
      });

      test('token ids to a vision model, pixel values to a text model: a RangeError naming each', (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const ids = { data: Int32Array.of(1, 2, 3), shape: [1, 3] };
        assertThrows(() => model.forward(ids), RangeError, /tokens/, /vision model/, /pixelValues/);
        const text = own(attn.createModel(kGpt2));
        assertThrows(() => text.forward(pixels), RangeError, /pixelValues/, /text model/);
        assertThrows(() => model.forward({ data: pixels.data, shape: [2, 3] }), RangeError, /pixelValues\.shape/);
        assertStillWorks(attn);
      });

      test('pixelValues that are not a tensor, tokenTypeIds to a vision model: errors naming them', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assertThrows(() => model.forward(null), TypeError, /pixelValues/);
        assertThrows(
          () => model.forward({ data: Array.from(pixels.data), shape: pixels.shape }),
          TypeError,
          /pixelValues/,
        );
        const types = { data: new Int32Array(10), shape: [1, 10] };
        assert.throws(() => model.forward(pixels, { tokenTypeIds: types }), /tokenTypeIds/);
        assertStillWorks(attn);
      });

      test('a forward whose attentions would not fit in wasm memory: refused before allocating, by name', (t) => {
        // 1 + 112² = 12545 tokens: each layer's attentions (1, 4, T, T) are 2.5 GB
        const options = { arch: 'vit', imageSize: 224, patchSize: 2, numChannels: 3, embedDim: 8, numLayers: 2 };
        const model = scope(t)(attn.createModel({ ...options, numHeads: 4 }));
        const big = { data: new Float32Array(3 * 224 * 224), shape: [1, 3, 224, 224] };
        assertThrows(() => model.forward(big, { outputAttentions: true }), RangeError, /model\.forward/, /attentions/);
        assertStillWorks(attn);
      });
    });

    test(`attnlab/worker: kind, task and forward as the synchronous API (${variant})`, async (t) => {
      const c = byName('vit_cls_f32');
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        const local = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.equal(remote.kind, 'encoder');
        assert.equal(remote.task, 'image-classification');
        for (const f of c.expected.forward) {
          assert.deepEqual(
            await remote.forward(tensorOf(f.pixel_values), optionsOf(f)),
            local.forward(tensorOf(f.pixel_values), optionsOf(f)),
          );
        }
        await assert.rejects(
          remote.forward({ data: Int32Array.of(1), shape: [1, 1] }),
          (e) => e instanceof RangeError && /vision model/.test(e.message),
        );
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}
