// The tiny transformer (createTinyTransformer) through the public JS API, in both wasm variants:
//   - every train_step fixture (tests/fixtures/torch-grad/train_step_*.json): logits, loss, gradParams, the
//     parameters after 1 and after 5 Adam steps, the losses of those steps and the loss after them, with the
//     file's tolerance;
//   - learning, not timing: from a fixed seed, training the reversal task (vocab 10, length 6, batch 32,
//     embedDim 32, 2 heads, lr 1e-2) reaches >= 95 % token accuracy on fresh examples within kMaxSteps steps.
//     Steps and steps/second are printed per variant.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { describeFixtures, fixtureParams } from './fixture-harness.mjs';
import { assertClose, fixtureMask, fixtureTensor, gradFixtureDir, loadFixtures } from './helpers.mjs';
import { makeRng } from './rng.mjs';

const fixtures = loadFixtures(gradFixtureDir).filter((fx) => fx.kind === 'train_step');

function createModel(attn, config) {
  return attn.createTinyTransformer({
    vocabSize: config.vocab_size,
    embedDim: config.embed_dim,
    numHeads: config.num_heads,
    causal: config.causal,
  });
}

function assertParams(actual, expectedGroup, tolerance, what) {
  assert.deepEqual(Object.keys(actual), Object.keys(expectedGroup), `${what}: names, in PyTorch's order`);
  for (const [name, t] of Object.entries(expectedGroup))
    assertClose(actual[name], fixtureTensor(t), tolerance, `${what} ${name}`);
}

/** Runs a train_step case; returns the number of tensors compared. */
function checkTrainStep(attn, fx) {
  const { inputs, outputs, config, tolerance } = fx;
  const model = createModel(attn, config);
  try {
    const params = fixtureParams(fx);
    model.loadStateDict(params);
    assertParams(model.stateDict(), fx.params, { atol: 0, rtol: 0 }, 'stateDict round trip');
    const tokens = fixtureTensor(inputs.tokens);
    const targets = fixtureTensor(inputs.targets);
    assert.ok(tokens.data instanceof Int32Array);
    const [B, T] = tokens.shape;
    const H = config.num_heads;

    // Forward: logits, and weights (B, H, T, T) whose rows sum to 1 (0 above the diagonal when causal).
    const { logits, weights } = model.forward(tokens);
    assertClose(logits, fixtureTensor(outputs.logits), tolerance, 'logits');
    assert.deepEqual(weights.shape, [B, H, T, T]);
    const causalMask = fixtureMask(inputs.attn_mask, false); // 1 = masked out
    for (let row = 0; row < B * H * T; ++row) {
      let sum = 0;
      for (let j = 0; j < T; ++j) {
        const w = weights.data[row * T + j];
        if (causalMask?.data[(row % T) * T + j]) assert.equal(w, 0, 'causal: no weight above the diagonal');
        sum += w;
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `weights row ${row} sums to ${sum}`);
    }

    // Loss and gradients at the initial parameters; lossAndGrad changes nothing.
    const lg = model.lossAndGrad(tokens, targets);
    assert.equal(typeof lg.loss, 'number');
    assertClose({ data: [lg.loss], shape: [1] }, fixtureTensor(outputs.loss), tolerance, 'loss');
    assertParams(lg.gradParams, outputs.grad_params, tolerance, 'gradParams');
    for (const id of config.tokens_absent_from_batch) {
      const E = config.embed_dim;
      const row = lg.gradParams['embedding.weight'].data.subarray(id * E, (id + 1) * E);
      assert.ok(
        row.every((g) => g === 0),
        `embedding gradient of absent token ${id} is exactly 0`,
      );
    }
    assertParams(model.stateDict(), fx.params, { atol: 0, rtol: 0 }, 'lossAndGrad leaves the parameters');

    // Adam: 1 step, then 4 more on the same batch.
    const losses = [model.trainStep(tokens, targets).loss]; // default lr 1e-2, as in the fixtures
    assertParams(model.stateDict(), outputs.params_after_1_step, tolerance, 'params_after_1_step');
    for (let step = 1; step < 5; ++step) losses.push(model.trainStep(tokens, targets, { lr: 1e-2 }).loss);
    assertClose({ data: losses, shape: [5] }, fixtureTensor(outputs.step_losses), tolerance, 'step_losses');
    assertParams(model.stateDict(), outputs.params_after_5_steps, tolerance, 'params_after_5_steps');
    const final = model.lossAndGrad(tokens, targets).loss;
    assertClose(
      { data: [final], shape: [1] },
      fixtureTensor(outputs.loss_after_5_steps),
      tolerance,
      'loss_after_5_steps',
    );

    // loadStateDict resets Adam: one step from the initial parameters gives params_after_1_step again.
    model.loadStateDict(params);
    model.trainStep(tokens, targets);
    assertParams(model.stateDict(), outputs.params_after_1_step, tolerance, 'params_after_1_step after a reload');
    return 5 + 3 * Object.keys(fx.params).length + 3;
  } finally {
    model.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Learning the reversal task.

const kTask = { vocabSize: 10, length: 6, batch: 32, embedDim: 32, numHeads: 2, lr: 1e-2 };
const kMaxSteps = 600; // the stated step budget (the C++ test reaches 95 % in about 100)
const kEvalEvery = 25;
const kEvalExamples = 256;
const kFreshExamples = 2000;
const kModelSeed = 1;
const kDataSeed = 11;

/** `batch` random sequences and their reversals, as Tokens. */
function reversalBatch(rng, batch, { length: T, vocabSize: V }) {
  const tokens = new Int32Array(batch * T);
  const targets = new Int32Array(batch * T);
  for (let b = 0; b < batch; ++b) {
    for (let t = 0; t < T; ++t) tokens[b * T + t] = Math.floor(rng() * V);
    for (let t = 0; t < T; ++t) targets[b * T + t] = tokens[b * T + T - 1 - t];
  }
  return { tokens: { data: tokens, shape: [batch, T] }, targets: { data: targets, shape: [batch, T] } };
}

/** Token and whole-sequence accuracy (argmax of the logits) on `n` fresh examples. */
function accuracy(model, rng, n) {
  const { tokens, targets } = reversalBatch(rng, n, kTask);
  const { logits } = model.forward(tokens);
  const V = kTask.vocabSize;
  const T = kTask.length;
  let correct = 0;
  let sequences = 0;
  for (let b = 0; b < n; ++b) {
    let all = true;
    for (let t = 0; t < T; ++t) {
      const r = b * T + t;
      let best = 0;
      for (let v = 1; v < V; ++v) if (logits.data[r * V + v] > logits.data[r * V + best]) best = v;
      if (best === targets.data[r]) ++correct;
      else all = false;
    }
    if (all) ++sequences;
  }
  return { tokens: correct / (n * T), sequences: sequences / n };
}

const training = {};

test('train_step fixtures are present', () => {
  assert.deepEqual(
    fixtures.map((fx) => fx.name),
    ['train_step_next_token', 'train_step_reverse'],
  );
});

function summary(variant, c) {
  const lines = [
    `train_step fixtures [${variant}]: ${c.passed} passed, ${c.failed} failed (of ${fixtures.length}; ` +
      `${c.tensors} tensors compared)`,
  ];
  const r = training[variant];
  if (r) {
    lines.push(
      `reversal training [${variant}]: ${(r.accuracy * 100).toFixed(1)} % token accuracy ` +
        `(${(r.sequences * 100).toFixed(1)} % whole sequences) on ${kFreshExamples} fresh examples after ` +
        `${r.steps} steps (budget ${kMaxSteps}); ${r.stepsPerSecond.toFixed(0)} steps/s ` +
        `(batch ${kTask.batch}, length ${kTask.length}, embedDim ${kTask.embedDim}, ${kTask.numHeads} heads)`,
    );
  }
  return lines.join('\n');
}

describeFixtures('tiny transformer', fixtures, checkTrainStep, {
  summary,
  more: (getAttn, variant) => {
    test('a fresh model: PyTorch-style shapes, reproducible from its seed, and it works before loadStateDict', () => {
      const attn = getAttn();
      const options = { vocabSize: 7, embedDim: 8, numHeads: 2 };
      const a = attn.createTinyTransformer(options);
      const b = attn.createTinyTransformer({ ...options, causal: false });
      const c = attn.createTinyTransformer({ ...options, seed: 5 });
      try {
        const pa = a.stateDict();
        const shapes = Object.fromEntries(Object.entries(pa).map(([name, t]) => [name, t.shape]));
        assert.deepEqual(shapes, {
          'embedding.weight': [7, 8],
          'attn.in_proj_weight': [24, 8],
          'attn.out_proj.weight': [8, 8],
          'readout.weight': [7, 8],
          'readout.bias': [7],
        });
        const pb = b.stateDict();
        for (const name of Object.keys(pa)) assertClose(pb[name], pa[name], { atol: 0, rtol: 0 }, name);
        assert.notDeepEqual(c.stateDict()['embedding.weight'].data, pa['embedding.weight'].data, 'another seed');
        const tokens = { data: new Int32Array([0, 1, 2, 3, 4, 5, 6, 0]), shape: [2, 4] };
        const { logits, weights } = a.forward(tokens);
        assert.deepEqual(logits.shape, [2, 4, 7]);
        assert.deepEqual(weights.shape, [2, 2, 4, 4]);
        assert.ok(logits.data.every(Number.isFinite));
        // Results are JS-owned copies.
        logits.data.fill(9);
        assert.notEqual(a.forward(tokens).logits.data[0], 9);
      } finally {
        a.dispose();
        b.dispose();
        c.dispose();
      }
    });

    test('dispose: idempotent, [Symbol.dispose] too; any other call afterwards is an Error', () => {
      const attn = getAttn();
      const model = attn.createTinyTransformer({ vocabSize: 5, embedDim: 4, numHeads: 1 });
      const tokens = { data: new Int32Array(4), shape: [1, 4] };
      model.dispose();
      model.dispose();
      model[Symbol.dispose]();
      for (const call of [
        () => model.forward(tokens),
        () => model.lossAndGrad(tokens, tokens),
        () => model.trainStep(tokens, tokens),
        () => model.stateDict(),
        () => model.loadStateDict({}),
      ]) {
        assert.throws(
          call,
          (e) => e.constructor === Error && /^model\.\w+: /.test(e.message) && /disposed/.test(e.message),
        );
      }
    });

    test(
      `learns to reverse sequences: >= 95 % on fresh examples within ${kMaxSteps} steps`,
      { timeout: 300_000 },
      () => {
        const attn = getAttn();
        const { vocabSize, embedDim, numHeads, lr, batch } = kTask;
        const model = attn.createTinyTransformer({ vocabSize, embedDim, numHeads, causal: false, seed: kModelSeed });
        try {
          const rng = makeRng(kDataSeed);
          let steps = 0;
          let trainMs = 0;
          let evalAccuracy = 0;
          let firstLoss;
          let lastLoss;
          while (steps < kMaxSteps && evalAccuracy < 0.95) {
            const batches = Array.from({ length: kEvalEvery }, () => reversalBatch(rng, batch, kTask));
            const start = performance.now();
            for (const { tokens, targets } of batches) {
              lastLoss = model.trainStep(tokens, targets, { lr }).loss;
              firstLoss ??= lastLoss;
              ++steps;
            }
            trainMs += performance.now() - start;
            evalAccuracy = accuracy(model, rng, kEvalExamples).tokens;
          }
          const fresh = accuracy(model, makeRng(kDataSeed + 1000), kFreshExamples);
          training[variant] = {
            steps,
            accuracy: fresh.tokens,
            sequences: fresh.sequences,
            stepsPerSecond: (steps * 1000) / trainMs,
          };
          assert.ok(Number.isFinite(lastLoss) && lastLoss < firstLoss, `loss fell: ${firstLoss} → ${lastLoss}`);
          assert.ok(
            fresh.tokens >= 0.95,
            `token accuracy ${fresh.tokens} on ${kFreshExamples} fresh examples after ${steps} steps (< 0.95)`,
          );
        } finally {
          model.dispose();
        }
      },
    );
  },
});
