// Training encoder–decoders in JS (web/src/seq2seq.mjs's batch form: model.lossAndGrad(batch),
// model.trainStep(batch, options); issue 33 item 4) on every variant: the loss and every gradient of each
// tests/fixtures/seq2seq/<case>/train.json (T5 v1.0 and v1.1, gen_t5_train.py, and Marian, gen_marian_train.py,
// against PyTorch in float64) element by element, with the decoder inputs derived from the labels and given
// explicitly; three AdamW steps (each step's loss and gradient norm, then the parameters by the file's per-tensor
// median rule, its noise-driven tensors by max_abs only; Marian's final_logits_bias untouched); the same through
// attnlab/worker; each bad batch field its own error naming it, and the module still working after it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32, root } from './helpers.mjs';
import { loadFixtureCases, scope } from './model-helpers.mjs';
import { adamwOf, assertParamsAfter, assertRelative } from './train-helpers.mjs';

const seq2seqDir = join(root, 'tests', 'fixtures', 'seq2seq');
const cases = loadFixtureCases('seq2seq', (name) => existsSync(join(seq2seqDir, name, 'train.json'))).map((c) => ({
  ...c,
  train: JSON.parse(readFileSync(join(seq2seqDir, c.name, 'train.json'), 'utf8')),
}));

const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const intsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

/** The fixture's batch; its decoder inputs only when `explicit` (else the model shifts the labels). */
function batchOf(f, explicit = false) {
  const batch = {
    inputIds: intsOf(f.tokens),
    attentionMask: { data: Uint8Array.from(f.attention_mask.data), shape: f.attention_mask.shape },
    labels: intsOf(f.labels),
  };
  if (explicit) batch.decoderInputIds = intsOf(f.decoder_input_ids);
  return batch;
}

for (const variant of VARIANTS) {
  describe(`encoder–decoder training (t5, marian), ${variant} build`, async () => {
    const attn = await init({ variant });
    const load = (c) => attn.loadModel({ config: c.config, tensors: c.tensors });

    test('the fixtures are there', () => assert.ok(cases.length >= 3, `${cases.length} train.json files`));

    for (const c of cases) {
      const f = c.train;
      test(`${c.name}: lossAndGrad(batch): the loss and every gradient, decoder inputs shifted or given`, (t) => {
        const model = scope(t)(load(c));
        const tol = { atol: f.tolerance.atol, rtol: f.tolerance.rtol };
        for (const explicit of [false, true]) {
          const { loss, gradParams } = model.lossAndGrad(batchOf(f, explicit));
          assert.ok(Math.abs(loss - f.loss) <= tol.atol + tol.rtol * Math.abs(f.loss), `loss ${loss} vs ${f.loss}`);
          assert.deepEqual(Object.keys(gradParams).sort(), Object.keys(f.grads).sort(), "the fixture's names");
          for (const [name, g] of Object.entries(f.grads)) assertClose(gradParams[name], tensorOf(g), tol, name);
        }
      });

      test(`${c.name}: trainStep(batch, options): each step's loss and gradNorm, then every parameter`, (t) => {
        const model = scope(t)(load(c));
        const options = adamwOf(f.adamw);
        f.adamw.steps.forEach((want, i) => {
          const r = model.trainStep(batchOf(f), options);
          assert.deepEqual(Object.keys(r), ['loss', 'gradNorm']);
          assertRelative(r.loss, want.loss, f.tolerance.steps.rtol, `step ${i} loss`);
          assertRelative(r.gradNorm, want.grad_norm, f.tolerance.steps.rtol, `step ${i} gradNorm`);
        });
        const state = model.stateDict();
        const rule = f.tolerance.params_after;
        for (const [name, want] of Object.entries(f.adamw.params_after)) {
          const median = !(f.noise_driven ?? []).includes(name);
          assertParamsAfter(name, state[name], want, rule, rule.max_abs.adamw, median);
        }
        if (c.tensors.final_logits_bias) {
          const stored = c.tensors.final_logits_bias;
          assert.deepEqual(f32(state.final_logits_bias.data), f32(stored.data), 'final_logits_bias (a buffer)');
        }
      });
    }

    test('attnlab/worker: lossAndGrad(batch) and trainStep(batch, options & call) give the same as here', async (t) => {
      const c = cases[0];
      const f = c.train;
      const local = scope(t)(load(c));
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        assert.deepEqual(await remote.lossAndGrad(batchOf(f)), local.lossAndGrad(batchOf(f)));
        const options = adamwOf(f.adamw);
        const signal = new AbortController().signal;
        for (let i = 0; i < 2; ++i) {
          assert.deepEqual(
            await remote.trainStep(batchOf(f), { ...options, signal }),
            local.trainStep(batchOf(f), options),
          );
        }
        await assert.rejects(remote.lossAndGrad({ labels: intsOf(f.labels) }), /batch\.inputIds .* is required/);
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });

    test('bad batch fields: each its own error naming it, and the module still works', (t) => {
      const c = cases[0];
      const f = c.train;
      const model = scope(t)(load(c));
      const ctx = 'model.lossAndGrad';
      const V = c.expected.config.vocabSize;
      const edit = (change) => {
        const b = batchOf(f, true);
        change(b);
        return b;
      };
      const bad = [
        [undefined, TypeError, /batch .* is required/],
        [edit((b) => delete b.labels), TypeError, /batch\.labels .* is required/],
        [edit((b) => delete b.inputIds), TypeError, /batch\.inputIds .* is required/],
        [edit((b) => (b.extra = 1)), TypeError, /unknown option "extra" in batch/],
        [edit((b) => (b.labels.data[1] = V)), RangeError, /batch\.labels\.data\[1\]/],
        [edit((b) => b.labels.data.fill(-100)), RangeError, /batch\.labels\.data must hold at least one/],
        [edit((b) => (b.inputIds.data[0] = -1)), RangeError, /batch\.inputIds\.data\[0\]/],
        [edit((b) => (b.labels.shape = [1, b.labels.data.length])), RangeError, /batch\.labels\.shape\[0\]/],
        [edit((b) => (b.decoderInputIds.shape = [1, b.decoderInputIds.data.length])), RangeError, /decoderInputIds/],
        [edit((b) => (b.attentionMask.shape = [b.attentionMask.data.length, 1])), RangeError, /batch\.attentionMask/],
        [edit((b) => (b.attentionMask.data = new Float32Array(b.attentionMask.data.length))), TypeError, /Uint8Array/],
      ];
      for (const [batch, Class, pattern] of bad) {
        assertThrows(() => model.lossAndGrad(batch), Class, new RegExp(ctx), pattern);
      }
      assertThrows(() => model.lossAndGrad(batchOf(f), batchOf(f)), TypeError, /one batch/);
      assertThrows(() => model.trainStep(batchOf(f)), TypeError, /model\.trainStep: options/);
      assertThrows(() => model.trainStep(batchOf(f), { lr: -1 }), RangeError, /lr/);
      assertThrows(() => model.train([batchOf(f)], { steps: 1, lr: 1e-3 }), TypeError, /trainStep\(batch, options\)/);
      assert.ok(Math.abs(model.lossAndGrad(batchOf(f)).loss - f.loss) < 1e-4, 'the model still trains');
      assertStillWorks(attn);
    });
  });
}
