// Training whole models in JS (web/src/training.mjs: lossAndGrad, trainStep, train) on every variant: the loss
// and every gradient of each tests/fixtures/models/<case>/train.json (PyTorch, float64) element by element, its
// AdamW runs with and without clipping (each step's loss and gradient norm; the parameters after by the file's
// per-tensor median rule), train's loop over batches and over a seeded sampler, each bad argument as its own error
// (the model still working after it), memory refused up front; generate through lastLogitsOnly (the fixtures'
// greedy tokens, and a long prompt at GPT-2's vocabulary without T · V floats of logits); and the same in
// attnlab/worker (onStep per step from the worker, stop and abort between steps), in Node and in Chromium.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { openBlankPage, setUpChromium } from './browser-harness.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { MODEL_CASES, kGpt2, kLlama, loadModelCase, modelDir, scope } from './model-helpers.mjs';
import { makeRng } from './rng.mjs';
import { adamwOf, assertParamsAfter, assertRelative } from './train-helpers.mjs';

/** A fixture folder as loadModelCase reads it, with its train.json when it has one (else null). */
function loadCase(name) {
  const trainFile = join(modelDir, name, 'train.json');
  return { ...loadModelCase(name), train: existsSync(trainFile) ? JSON.parse(readFileSync(trainFile, 'utf8')) : null };
}

const fixtures = MODEL_CASES.map(loadCase);
const trained = fixtures.filter((c) => c.train);
const byName = (name) => fixtures.find((c) => c.name === name);

const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const idsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

/** A seeded (B, T) batch of ids in [0, V) and its targets (the next ids; the first target of each row −100). */
function batchOf(V, B, T, seed) {
  const rng = makeRng(seed);
  const seq = Int32Array.from({ length: B * (T + 1) }, () => rng.int(0, V - 1));
  const tokens = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; ++b) {
    tokens.set(seq.subarray(b * (T + 1), b * (T + 1) + T), b * T);
    targets.set(seq.subarray(b * (T + 1) + 1, (b + 1) * (T + 1)), b * T);
    targets[b * T] = -100;
  }
  return { tokens: { data: tokens, shape: [B, T] }, targets: { data: targets, shape: [B, T] } };
}

for (const variant of VARIANTS) {
  describe(`training whole models, ${variant} build`, async () => {
    const attn = await init({ variant });
    const load = (c) => attn.loadModel({ config: c.config, tensors: c.tensors });

    for (const c of trained) {
      const f = c.train;
      const tokens = idsOf(f.tokens);
      const targets = idsOf(f.targets);

      test(`${c.name}: lossAndGrad gives PyTorch's loss and every gradient, under stateDict's names`, (t) => {
        const own = scope(t);
        const model = own(load(c));
        const { loss, gradParams } = model.lossAndGrad(tokens, targets);
        const tol = { atol: f.tolerance.atol, rtol: f.tolerance.rtol };
        assert.equal(typeof loss, 'number');
        assert.ok(Math.abs(loss - f.loss) <= tol.atol + tol.rtol * Math.abs(f.loss), `loss ${loss} vs ${f.loss}`);
        assert.deepEqual(Object.keys(gradParams), Object.keys(model.stateDict()), 'stateDict order and names');
        assert.deepEqual(Object.keys(gradParams).sort(), Object.keys(f.grads).sort(), "the fixture's names");
        for (const [name, g] of Object.entries(f.grads)) assertClose(gradParams[name], tensorOf(g), tol, name);
        // A second call gives the same (the gradients are not accumulated), and no step was taken.
        assert.deepEqual(model.lossAndGrad(tokens, targets), { loss, gradParams });
      });

      for (const runName of ['adamw', 'adamw_noclip']) {
        test(`${c.name}: trainStep, ${runName}: each step's loss and gradNorm, then every parameter`, (t) => {
          const own = scope(t);
          const model = own(load(c));
          const run = f[runName];
          const options = adamwOf(run);
          const rtol = f.tolerance.steps.rtol;
          run.steps.forEach((want, i) => {
            const r = model.trainStep(tokens, targets, options);
            assert.deepEqual(Object.keys(r), ['loss', 'gradNorm']);
            assertRelative(r.loss, want.loss, rtol, `step ${i} loss`);
            assertRelative(r.gradNorm, want.grad_norm, rtol, `step ${i} gradNorm`);
          });
          const state = model.stateDict();
          const rule = f.tolerance.params_after;
          assert.deepEqual(Object.keys(state).sort(), Object.keys(run.params_after).sort());
          for (const [name, want] of Object.entries(run.params_after)) {
            assertParamsAfter(name, state[name], want, rule, rule.max_abs[runName]);
          }
        });
      }
    }

    test('train over an array of batches is trainStep on each in turn; a reload restarts AdamW', (t) => {
      const own = scope(t);
      const c = byName('llama_gqa_f32');
      const f = c.train;
      const options = adamwOf(f.adamw);
      const one = { tokens: idsOf(f.tokens), targets: idsOf(f.targets) };
      const two = batchOf(c.expected.config.vocabSize, 3, 5, 7);
      const a = own(load(c));
      const b = own(load(c));
      const steps = [one, two, one, two, one].map((x) => a.trainStep(x.tokens, x.targets, options));
      const seen = [];
      const r = b.train([one, two], { ...options, steps: 5, onStep: (info) => seen.push(info) });
      assert.ok(r.losses instanceof Float32Array && r.gradNorms instanceof Float32Array);
      assert.deepEqual(
        Array.from(r.losses),
        steps.map((s) => Math.fround(s.loss)),
      );
      assert.deepEqual(
        Array.from(r.gradNorms),
        steps.map((s) => Math.fround(s.gradNorm)),
      );
      assert.deepEqual(
        seen,
        steps.map((s, step) => ({ step, loss: s.loss, gradNorm: s.gradNorm })),
      );
      assert.deepEqual(b.stateDict(), a.stateDict());
      // steps defaults to one per batch; the AdamW state goes on from the earlier calls
      assert.equal(b.train([two], options).losses.length, 1);
      a.trainStep(two.tokens, two.targets, options);
      assert.deepEqual(b.stateDict(), a.stateDict());
      // loadStateDict replaces the parameters: AdamW starts again, as on a fresh model
      const start = own(load(c)).stateDict();
      a.loadStateDict(start);
      const fresh = own(load(c));
      assert.deepEqual(
        a.trainStep(one.tokens, one.targets, options),
        fresh.trainStep(one.tokens, one.targets, options),
      );
      assert.deepEqual(a.stateDict(), fresh.stateDict());
    });

    test('train over a sampler: seeded random windows of a sequence, targets the next ids; steps required', (t) => {
      const own = scope(t);
      const V = kGpt2.vocabSize;
      const ids = Int32Array.from({ length: 300 }, (_, i) => (i * 7 + (i >> 3)) % V);
      const sampler = { ids, batchSize: 3, blockLength: 8, seed: 5 };
      const options = { lr: 3e-3, steps: 4, clipGradNorm: 1 };
      const a = own(attn.createModel({ ...kGpt2, seed: 1 }));
      const b = own(attn.createModel({ ...kGpt2, seed: 1 }));
      const c = own(attn.createModel({ ...kGpt2, seed: 1 }));
      const ra = a.train(sampler, options);
      assert.equal(ra.losses.length, 4);
      assert.deepEqual(b.train(sampler, options), ra, 'the same seed draws the same windows');
      assert.notDeepEqual(c.train({ ...sampler, seed: 6 }, options).losses, ra.losses, 'another seed, others');
      // The windows: tokens ids[s, s + T), targets ids[s + 1, s + T + 1), as an explicit batch gives.
      const d = own(attn.createModel({ ...kGpt2, seed: 1 }));
      const e = own(attn.createModel({ ...kGpt2, seed: 1 }));
      const step = { ids: Int32Array.from({ length: 9 }, (_, i) => (i * 3) % V), batchSize: 2, blockLength: 8 };
      const explicit = {
        tokens: { data: Int32Array.from([...step.ids.subarray(0, 8), ...step.ids.subarray(0, 8)]), shape: [2, 8] },
        targets: { data: Int32Array.from([...step.ids.subarray(1), ...step.ids.subarray(1)]), shape: [2, 8] },
      };
      assert.deepEqual(d.train(step, { lr: 1e-2, steps: 1 }), e.train([explicit], { lr: 1e-2 }));
      assertThrows(() => a.train(sampler, { lr: 1e-2 }), TypeError, /model\.train/, /steps is required/);
      assert.deepEqual(a.train(sampler, { lr: 1e-2, steps: 0 }).losses, new Float32Array(0));
    });

    test('train: onStep returning false stops after that step; a signal aborts before the next (AbortError)', (t) => {
      const own = scope(t);
      const sampler = { ids: Int32Array.from({ length: 100 }, (_, i) => i % 40), batchSize: 2, blockLength: 6 };
      const model = own(attn.createModel({ ...kLlama, seed: 2 }));
      const twin = own(attn.createModel({ ...kLlama, seed: 2 }));
      const options = { lr: 1e-2, steps: 10 };
      const r = model.train(sampler, { ...options, onStep: ({ step }) => step < 2 });
      assert.equal(r.losses.length, 3);
      assert.deepEqual(twin.train(sampler, { ...options, steps: 3 }), r);
      assert.deepEqual(model.stateDict(), twin.stateDict(), 'exactly three steps were taken');
      const controller = new AbortController();
      let calls = 0;
      assert.throws(
        () =>
          model.train(sampler, {
            ...options,
            signal: controller.signal,
            onStep: ({ step }) => {
              ++calls;
              if (step === 1) controller.abort();
            },
          }),
        (e) => e.name === 'AbortError',
      );
      assert.equal(calls, 2);
      twin.train(sampler, { ...options, steps: 2 });
      assert.deepEqual(model.stateDict(), twin.stateDict(), 'the two steps before the abort stay');
      const reason = new Error('stop now');
      assert.throws(
        () => model.train(sampler, { ...options, signal: AbortSignal.abort(reason) }),
        (e) => e === reason,
      );
      assert.throws(
        () =>
          model.train(sampler, {
            ...options,
            onStep: () => {
              throw new SyntaxError('from onStep');
            },
          }),
        SyntaxError,
      );
      twin.train(sampler, { ...options, steps: 1 });
      assert.deepEqual(model.stateDict(), twin.stateDict(), 'onStep threw after the first step');
    });

    test('forward lastLogitsOnly: each sequence last logits (B, 1, V), as the full forward gives', (t) => {
      const own = scope(t);
      for (const c of [byName('gpt2_f32'), byName('llama_gqa_f32')]) {
        const model = own(load(c));
        const ids = idsOf(c.expected.forward[0].input_ids); // (2, 8)
        const full = model.forward(ids);
        const last = model.forward(ids, { lastLogitsOnly: true, outputAttentions: [0] });
        const V = model.config.vocabSize;
        const [B, T] = ids.shape;
        assert.deepEqual(last.logits.shape, [B, 1, V]);
        const want = new Float32Array(B * V);
        for (let b = 0; b < B; ++b) want.set(full.logits.data.subarray((b * T + T - 1) * V, (b * T + T) * V), b * V);
        assertClose(last.logits, { data: want, shape: [B, 1, V] }, { atol: 1e-6, rtol: 1e-5 }, c.name);
        assert.deepEqual(last.attentions[0].shape, [B, model.config.numHeads, T, T], 'attentions stay whole');
        assertThrows(() => model.forward(ids, { lastLogitsOnly: 1 }), TypeError, /lastLogitsOnly/);
      }
    });

    test("generate (through lastLogitsOnly) still gives every fixture's greedy tokens", (t) => {
      const own = scope(t);
      for (const c of fixtures) {
        const model = own(load(c));
        const g = c.expected.greedy;
        const ids = model.generate(Int32Array.from(g.prompt), { maxNewTokens: g.max_new_tokens, temperature: 0 });
        assert.deepEqual(Array.from(ids), g.tokens, c.name);
        const seen = [];
        model.generate(Int32Array.from(g.prompt), {
          maxNewTokens: 2,
          temperature: 0,
          outputAttentions: true,
          onToken: (id, step, info) => seen.push(info.attentions[0].shape),
        });
        const H = model.config.numHeads;
        assert.deepEqual(seen, [
          [H, g.prompt.length],
          [H, g.prompt.length + 1],
        ]);
      }
    });

    describe('bad arguments: each its own error, and the model keeps working', () => {
      const c = byName('gpt2_f32');
      const f = c.train;
      const tokens = idsOf(f.tokens);
      const targets = idsOf(f.targets);
      const adamw = adamwOf(f.adamw);
      const V = c.expected.config.vocabSize;
      const [B, T] = tokens.shape;
      const withTarget = (i, id) => {
        const data = targets.data.slice();
        data[i] = id;
        return { data, shape: targets.shape };
      };

      /** The model after the errors: its loss and gradients as loaded, then PyTorch's AdamW steps from step 1. */
      function assertUntouched(model) {
        const { loss } = model.lossAndGrad(tokens, targets);
        assert.ok(Math.abs(loss - f.loss) <= f.tolerance.atol + f.tolerance.rtol * f.loss, `loss ${loss}`);
        f.adamw.steps.forEach((want, i) => {
          const r = model.trainStep(tokens, targets, adamw);
          assertRelative(r.loss, want.loss, f.tolerance.steps.rtol, `step ${i} loss`);
          assertRelative(r.gradNorm, want.grad_norm, f.tolerance.steps.rtol, `step ${i} gradNorm`);
        });
      }

      /** Runs `errors` (each throws) on a fresh fixture model, then checks the model. */
      function check(t, errors) {
        const own = scope(t);
        const model = own(load(c));
        errors(model);
        assertUntouched(model);
      }

      test('targets of another type: TypeError naming targets', (t) =>
        check(t, (m) => {
          const bad = { data: Float32Array.from(targets.data), shape: targets.shape };
          assertThrows(() => m.lossAndGrad(tokens, bad), TypeError, /model\.lossAndGrad/, /targets\.data/);
          assertThrows(() => m.trainStep(tokens, Array.from(targets.data), adamw), TypeError, /targets/);
          assertThrows(() => m.trainStep(tokens, undefined, adamw), TypeError, /targets/);
        }));

      test('targets of another shape: RangeError naming targets', (t) =>
        check(t, (m) => {
          const bad = { data: targets.data.slice(0, T), shape: [1, T] };
          assertThrows(() => m.lossAndGrad(tokens, bad), RangeError, /targets\.shape/, /\[2, 8\]/);
          assertThrows(() => m.trainStep(tokens, bad, adamw), RangeError, /model\.trainStep/, /targets\.shape/);
        }));

      test('a target id out of range (−100 is the only other id): RangeError naming it', (t) =>
        check(t, (m) => {
          assertThrows(() => m.lossAndGrad(tokens, withTarget(3, V)), RangeError, /targets\.data\[3\]/, /-100/);
          assertThrows(() => m.trainStep(tokens, withTarget(5, -1), adamw), RangeError, /targets\.data\[5\]/);
          assertThrows(() => m.trainStep(tokens, withTarget(5, -99), adamw), RangeError, /targets\.data\[5\]/);
        }));

      test('every target −100: RangeError naming targets', (t) =>
        check(t, (m) => {
          const none = { data: new Int32Array(B * T).fill(-100), shape: [B, T] };
          assertThrows(() => m.lossAndGrad(tokens, none), RangeError, /targets/, /at least one/);
          assertThrows(() => m.trainStep(tokens, none, adamw), RangeError, /targets/, /at least one/);
        }));

      test('a token id out of range, or T past contextLength: RangeError naming tokens', (t) =>
        check(t, (m) => {
          const data = tokens.data.slice();
          data[4] = V;
          assertThrows(() => m.lossAndGrad({ data, shape: tokens.shape }, targets), RangeError, /tokens\.data\[4\]/);
          const long = { data: new Int32Array(33), shape: [1, 33] };
          assertThrows(() => m.trainStep(long, long, adamw), RangeError, /tokens/, /contextLength 32/);
        }));

      test('lr missing or not a finite number > 0 (also as a float32): TypeError / RangeError naming lr', (t) =>
        check(t, (m) => {
          const step = (o) => () => m.trainStep(tokens, targets, o);
          assertThrows(step({ ...adamw, lr: undefined }), TypeError, /model\.trainStep/, /lr is required/);
          assertThrows(() => m.trainStep(tokens, targets), TypeError, /lr/);
          assertThrows(step({ ...adamw, lr: '0.01' }), TypeError, /lr/);
          for (const lr of [0, -1e-3, Number.NaN, Infinity, 1e39])
            assertThrows(step({ ...adamw, lr }), RangeError, /lr/);
          assertThrows(step({ ...adamw, lr: 1e-50 }), RangeError, /lr/, /float32/);
        }));

      test('weightDecay not a finite number >= 0: RangeError / TypeError naming weightDecay', (t) =>
        check(t, (m) => {
          assertThrows(() => m.trainStep(tokens, targets, { ...adamw, weightDecay: -0.1 }), RangeError, /weightDecay/);
          assertThrows(() => m.trainStep(tokens, targets, { ...adamw, weightDecay: '0' }), TypeError, /weightDecay/);
        }));

      test('betas not [beta1, beta2] in [0, 1): TypeError / RangeError naming betas', (t) =>
        check(t, (m) => {
          const step = (betas) => () => m.trainStep(tokens, targets, { ...adamw, betas });
          assertThrows(step(0.9), TypeError, /betas/);
          assertThrows(step([0.9, 0.99, 0.999]), RangeError, /betas/, /2 numbers/);
          assertThrows(step([0.9, 1]), RangeError, /betas\[1\]/);
          assertThrows(step([-0.1, 0.9]), RangeError, /betas\[0\]/);
          assertThrows(step([0.9, 0.999999999]), RangeError, /betas\[1\]/, /float32/);
          assertThrows(step(['0.9', 0.99]), TypeError, /betas\[0\]/);
        }));

      test('eps not a finite number >= 0: RangeError naming eps', (t) =>
        check(t, (m) => {
          assertThrows(() => m.trainStep(tokens, targets, { ...adamw, eps: -1e-8 }), RangeError, /eps/);
          assertThrows(() => m.trainStep(tokens, targets, { ...adamw, eps: Infinity }), RangeError, /eps/);
        }));

      test('clipGradNorm not a finite number > 0: RangeError / TypeError naming clipGradNorm', (t) =>
        check(t, (m) => {
          for (const clipGradNorm of [0, -1, Number.NaN]) {
            assertThrows(() => m.trainStep(tokens, targets, { ...adamw, clipGradNorm }), RangeError, /clipGradNorm/);
          }
          assertThrows(() => m.trainStep(tokens, targets, { ...adamw, clipGradNorm: true }), TypeError, /clipGradNorm/);
        }));

      test('an unknown option: TypeError naming it', (t) =>
        check(t, (m) => {
          assertThrows(() => m.trainStep(tokens, targets, { learningRate: 0.1 }), TypeError, /learningRate/);
          assertThrows(() => m.train([{ tokens, targets }], { ...adamw, epochs: 2 }), TypeError, /epochs/);
        }));

      test("train's data and loop options: each checked before the first step, named", (t) =>
        check(t, (m) => {
          const batch = { tokens, targets };
          assertThrows(() => m.train([], adamw), RangeError, /model\.train/, /data/);
          assertThrows(() => m.train(batch, adamw), TypeError, /unknown option "tokens" in data/);
          assertThrows(() => m.train([batch, 3], adamw), TypeError, /data\[1\]/);
          assertThrows(
            () => m.train([batch, { tokens, targets: withTarget(2, V) }], adamw),
            RangeError,
            /data\[1\]\.targets\.data\[2\]/,
          );
          assertThrows(() => m.train([batch, { tokens }], adamw), TypeError, /data\[1\]\.targets/);
          const ids = Int32Array.from({ length: 20 }, (_, i) => i);
          const sampler = { ids, batchSize: 2, blockLength: 8 };
          assertThrows(
            () => m.train({ ...sampler, ids: Array.from(ids) }, { ...adamw, steps: 1 }),
            TypeError,
            /data\.ids/,
          );
          const badIds = ids.slice();
          badIds[7] = V;
          assertThrows(
            () => m.train({ ...sampler, ids: badIds }, { ...adamw, steps: 1 }),
            RangeError,
            /data\.ids\[7\]/,
          );
          assertThrows(
            () => m.train({ ...sampler, blockLength: 33 }, { ...adamw, steps: 1 }),
            RangeError,
            /blockLength/,
          );
          assertThrows(
            () => m.train({ ...sampler, blockLength: 20 }, { ...adamw, steps: 1 }),
            RangeError,
            /data\.ids/,
            /21/,
          );
          assertThrows(() => m.train({ ...sampler, batchSize: 0 }, { ...adamw, steps: 1 }), RangeError, /batchSize/);
          assertThrows(() => m.train([batch], { ...adamw, steps: -1 }), RangeError, /steps/);
          assertThrows(() => m.train([batch], { ...adamw, onStep: 'log' }), TypeError, /onStep/);
          assertThrows(() => m.train([batch], { ...adamw, signal: {} }), TypeError, /signal/);
          assertThrows(() => m.train([batch], { ...adamw, lr: 0 }), RangeError, /lr/);
          assertThrows(() => m.train([batch]), TypeError, /lr/);
        }));

      test('a batch whose training memory cannot fit: RangeError before anything is copied', (t) => {
        const own = scope(t);
        const model = own(attn.createModel({ ...kGpt2, vocabSize: 50000, contextLength: 2048 }));
        const before = attn.memoryBytes();
        const big = { data: new Int32Array(8 * 2048), shape: [8, 2048] }; // logits alone: 8·2048·50000 floats
        for (const call of [() => model.lossAndGrad(big, big), () => model.trainStep(big, big, { lr: 1e-3 })]) {
          assertThrows(call, RangeError, /tokens, targets too large/, /wasm memory/, /logits/, /saved activations/);
        }
        assertThrows(
          () => model.train({ ids: new Int32Array(3000), batchSize: 8, blockLength: 2048 }, { lr: 1e-3, steps: 1 }),
          RangeError,
          /model\.train/,
          /wasm memory/,
        );
        assert.equal(attn.memoryBytes(), before);
        const small = batchOf(50000, 1, 4, 3);
        assert.equal(model.train([small], { lr: 1e-3 }).losses.length, 1);
      });

      test('what each call is refused for: moments for trainStep only, parameter gradients not for analyses', (t) => {
        const own = scope(t);
        // GPT-2 with whole panels of 32 columns (E = 32, V = 50016): the packed parameters are exactly
        // V·E + contextLength·E + L·(12E² + 13E) + 2E floats.
        const [E, V, ctx, L] = [32, 50016, 2048, 2];
        const model = own(attn.createModel({ ...kGpt2, vocabSize: V, embedDim: E, contextLength: ctx }));
        const parameterBytes = 4 * (V * E + ctx * E + L * (12 * E * E + 13 * E) + 2 * E);
        const big = { data: new Int32Array(8 * ctx), shape: [8, ctx] };
        const refusal = (call) => {
          try {
            call();
          } catch (e) {
            assert.ok(e instanceof RangeError, String(e));
            return e.message;
          }
          return assert.fail('not refused');
        };
        const part = (message, what) => {
          const m = new RegExp(`${what}: [^;]*?\\((\\d+) bytes\\)`).exec(message);
          return m ? Number(m[1]) : null;
        };
        const step = refusal(() => model.trainStep(big, big, { lr: 1e-3 }));
        assert.equal(part(step, "AdamW's two moments \\(2 x the parameters\\)"), 2 * parameterBytes, step);
        assert.equal(part(step, "parameter gradients \\(the parameters' size\\)"), parameterBytes, step);
        const grad = refusal(() => model.lossAndGrad(big, big));
        assert.equal(part(grad, 'AdamW'), null, grad);
        assert.equal(part(grad, "parameter gradients \\(the parameters' size\\)"), parameterBytes, grad);
        const importance = refusal(() => model.headImportance({ tokens: big, targets: big }));
        assert.match(importance, /model\.headImportance/);
        assert.match(importance, /saved activations/);
        assert.doesNotMatch(importance, /AdamW|parameter gradients/);
      });

      test('a disposed model: Error', () => {
        const model = load(c);
        model.dispose();
        assertThrows(() => model.lossAndGrad(tokens, targets), Error, /model\.lossAndGrad/, /disposed/);
        assertThrows(() => model.trainStep(tokens, targets, adamw), Error, /disposed/);
        assertThrows(() => model.train([{ tokens, targets }], adamw), Error, /disposed/);
      });

      test('the instance still works after all of these', () => assertStillWorks(attn));
    });
  });

  describe(`training whole models in attnlab/worker, ${variant} build`, async () => {
    const attn = await init({ variant });
    const c = byName('mistral_window_f32');
    const f = c.train;
    const tokens = idsOf(f.tokens);
    const targets = idsOf(f.targets);
    const adamw = adamwOf(f.adamw);

    test('lossAndGrad, trainStep and train give what the synchronous API gives', async (t) => {
      const own = scope(t);
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        const local = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.deepEqual(await remote.lossAndGrad(tokens, targets), local.lossAndGrad(tokens, targets));
        assert.deepEqual(await remote.trainStep(tokens, targets, adamw), local.trainStep(tokens, targets, adamw));
        const sampler = {
          ids: Int32Array.from({ length: 200 }, (_, i) => (i * 5) % 64),
          batchSize: 2,
          blockLength: 10,
        };
        const remoteSeen = [];
        const localSeen = [];
        const options = { ...adamw, steps: 4 };
        const r = await remote.train(sampler, { ...options, onStep: (s) => remoteSeen.push(s) });
        assert.deepEqual(r, local.train(sampler, { ...options, onStep: (s) => localSeen.push(s) }));
        assert.deepEqual(remoteSeen, localSeen);
        assert.deepEqual(await remote.train([{ tokens, targets }], adamw), local.train([{ tokens, targets }], adamw));
        assert.deepEqual(await remote.stateDict(), local.stateDict());
        await assert.rejects(
          remote.trainStep(tokens, targets, { ...adamw, betas: [0.9, 1] }),
          (e) => e instanceof RangeError && /model\.trainStep: betas\[1\]/.test(e.message),
        );
        await assert.rejects(
          remote.lossAndGrad(tokens, { data: Float32Array.of(1), shape: [1, 1] }),
          (e) => e instanceof TypeError && /targets/.test(e.message),
        );
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });

    test('train: onStep from the worker; false stops there; signal aborts between steps, the steps done stay', async (t) => {
      const own = scope(t);
      const w = await initWorker({ variant });
      try {
        const config = { ...kGpt2, seed: 8 };
        const remote = await w.createModel(config);
        const local = own(attn.createModel(config));
        const sampler = {
          ids: Int32Array.from({ length: 120 }, (_, i) => (i * 11) % 50),
          batchSize: 2,
          blockLength: 12,
        };
        const options = { lr: 5e-3, steps: 50, clipGradNorm: 1 };
        const stopped = await remote.train(sampler, { ...options, onStep: ({ step }) => step < 3 });
        assert.equal(stopped.losses.length, 4);
        local.train(sampler, { ...options, steps: 4 });
        assert.deepEqual(await remote.stateDict(), local.stateDict(), 'exactly four steps in the worker');
        const controller = new AbortController();
        let seen = 0;
        await assert.rejects(
          remote.train(sampler, {
            ...options,
            signal: controller.signal,
            onStep: () => {
              if (++seen === 2) controller.abort();
            },
          }),
          (e) => e.name === 'AbortError',
        );
        assert.equal(seen, 2, 'no onStep after the abort');
        local.train(sampler, { ...options, steps: 2 });
        assert.deepEqual(await remote.stateDict(), local.stateDict(), 'the two steps before the abort stay');
        await assert.rejects(
          remote.train(sampler, {
            ...options,
            onStep: () => {
              throw new SyntaxError('from onStep');
            },
          }),
          SyntaxError,
        );
        local.train(sampler, { ...options, steps: 1 });
        assert.deepEqual(await remote.stateDict(), local.stateDict());
        // Without onStep the loop runs on in the worker; an abort stops it between two steps.
        const running = new AbortController();
        const long = remote.train(sampler, { ...options, steps: 100_000, signal: running.signal });
        setTimeout(() => running.abort(), 50);
        await assert.rejects(long, (e) => e.name === 'AbortError');
        await assert.rejects(
          remote.train(sampler, { ...options, signal: AbortSignal.abort() }),
          (e) => e.name === 'AbortError',
        );
        const batch = batchOf(50, 1, 5, 1);
        const after = await remote.trainStep(batch.tokens, batch.targets, { lr: 5e-3 });
        assert.ok(Number.isFinite(after.loss) && Number.isFinite(after.gradNorm), 'the worker is free again');
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });

    test("generate with a 500-token prompt at GPT-2's vocabulary: wasm memory stays below T · V floats", async () => {
      const w = await initWorker({ variant }); // a fresh instance: its memory grew for nothing else
      try {
        const V = 50257;
        const T = 500;
        const model = await w.createModel({ ...kGpt2, vocabSize: V, contextLength: 512, numLayers: 1 });
        const prompt = Int32Array.from({ length: T }, (_, i) => (i * 7919) % V);
        const before = await w.memoryBytes();
        const ids = await model.generate(prompt, { maxNewTokens: 4, temperature: 0 });
        assert.equal(ids.length, 4);
        const afterGenerate = await w.memoryBytes();
        const fullLogits = T * V * 4; // 100.5 MB
        assert.ok(
          afterGenerate - before < fullLogits / 8,
          `generate grew wasm memory by ${afterGenerate - before} bytes (full logits: ${fullLogits})`,
        );
        // The check can fail: a forward of the whole prompt does need them.
        const { logits } = await model.forward({ data: prompt, shape: [1, T] });
        assert.deepEqual(logits.shape, [1, T, V]);
        assert.ok((await w.memoryBytes()) >= fullLogits, 'the full forward made wasm memory hold T · V floats');
        // greedy: the id generate chose first is the argmax of the prompt's last logits
        const row = logits.data.subarray((T - 1) * V);
        assert.equal(ids[0], row.indexOf(Math.max(...row)));
        await model.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}

describe('training in attnlab/worker in Chromium (a module Web Worker)', () => {
  const harness = setUpChromium();

  test('train: onStep per step from the worker, the results of the page, abort while running', async () => {
    const { page, errors } = await openBlankPage(harness, 'transformer-train-test.html', 'train');
    const r = await page.evaluate(async (config) => {
      const { pageAndWorkerModels } = await import('/tests/js/worker-page.mjs');
      const { w, local, remote } = await pageAndWorkerModels(config);
      const sampler = { ids: Int32Array.from({ length: 90 }, (_, i) => (i * 13) % 50), batchSize: 2, blockLength: 9 };
      const options = { lr: 1e-2, steps: 5, weightDecay: 0.1, betas: [0.9, 0.95] };
      const seen = [];
      const got = await remote.train(sampler, { ...options, onStep: (s) => seen.push(s) });
      const want = local.train(sampler, options);
      const controller = new AbortController();
      let count = 0;
      const aborted = await remote
        .train(sampler, {
          ...options,
          steps: 30,
          signal: controller.signal,
          onStep: () => {
            if (++count === 2) controller.abort();
          },
        })
        .then(
          () => 'resolved',
          (e) => e.name,
        );
      local.train(sampler, { ...options, steps: 2 });
      const same = JSON.stringify(await remote.stateDict()) === JSON.stringify(local.stateDict());
      await remote.dispose();
      local.dispose();
      w.terminate();
      return {
        got: Array.from(got.losses),
        want: Array.from(want.losses),
        steps: seen.map((s) => s.step),
        aborted,
        count,
        same,
      };
    }, kGpt2);
    assert.deepEqual(r.got, r.want);
    assert.deepEqual(r.steps, [0, 1, 2, 3, 4]);
    assert.equal(r.aborted, 'AbortError');
    assert.equal(r.count, 2);
    assert.ok(r.same, 'the worker stopped after the two steps whose onStep ran');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
