// The demo's toy models (web/demo/models/toy-*.json, written by scripts/train_toy.py; mirrors
// web/demo/shared/toy-model.js) run with attnlab, in both builds: attnlab must reproduce PyTorch's stored outputs
// (attention output, per-head weights, logits), and the model must solve its task on fresh random examples generated
// in JS (>= 95 %). The reversal toy is also attnlab's TinyTransformer (the training part runs it so): the same logits.
//
//   node --test tests/js/demo/shared/toy-model.test.mjs        (needs dist/, from `bash scripts/build.sh`)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { init } from '../../../../dist/index.mjs';
import {
  loadToy,
  createToyLayers,
  runToy,
  sampleExample,
  embed,
  expectedAnswers,
  parseTokens,
} from '../../../../web/demo/shared/toy-model.js';
import { positionalEncoding } from '../../../../web/demo/shared/inputs.js';
import { rng } from '../../../../web/demo/shared/random.js';
import { toyTinyTransformer } from '../../../../web/demo/parts/train/compute.js';
import { ROOT, maxDiff } from '../helpers.mjs';
const TASKS = ['reverse', 'recall'];
const FRESH = 2000;

function close(actual, expected, { atol, rtol }, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    assert.ok(Number.isFinite(a), `${what}[${i}] is ${a}`);
    const err = Math.abs(a - e) - (atol + rtol * Math.abs(e));
    if (err > 0)
      assert.fail(
        `${what}[${i}]: attnlab ${a}, PyTorch ${e} (|diff| ${Math.abs(a - e)} > ${atol} + ${rtol}·|expected|)`,
      );
    worst = Math.max(worst, Math.abs(a - e));
  }
  return worst;
}

const docs = Object.fromEntries(
  TASKS.map((t) => [t, JSON.parse(fs.readFileSync(path.join(ROOT, 'web/demo/models', `toy-${t}.json`), 'utf8'))]),
);

test('toy model files are small and complete', () => {
  for (const t of TASKS) {
    const size = fs.statSync(path.join(ROOT, 'web/demo/models', `toy-${t}.json`)).size;
    assert.ok(size < 100_000, `toy-${t}.json is ${size} bytes`);
    const m = loadToy(docs[t]);
    assert.equal(m.vocab.length, m.V);
    assert.equal(m.embedding.length, m.V * m.E);
    assert.ok(m.examples.length >= 3, 'reference examples');
    for (const n of ['in_proj_weight', 'out_proj.weight']) assert.ok(n in m.stateDict, n);
    if (m.bias) for (const n of ['in_proj_bias', 'out_proj.bias']) assert.ok(n in m.stateDict, n);
    // the JS positional encoding is the one PyTorch used (stored float32)
    const pe = positionalEncoding(m.T, m.E);
    const stored = docs[t].positional_encoding.data;
    for (let i = 0; i < stored.length; i++) assert.ok(Math.abs(pe[i] - stored[i]) <= 1e-7, `pe[${i}]`);
  }
});

for (const variant of ['simd', 'scalar']) {
  for (const task of TASKS) {
    test(`${variant}: toy-${task} reproduces PyTorch's stored outputs`, async (t) => {
      const attn = await init({ variant });
      assert.equal(attn.variant, variant);
      const model = loadToy(docs[task]);
      const layers = createToyLayers(attn, model);
      try {
        const tol = model.tolerance;
        const worst = { output: 0, weights: 0, logits: 0 };
        for (const [n, ex] of model.examples.entries()) {
          const r = runToy(model, layers, ex.tokens);
          worst.output = Math.max(worst.output, close(r.output, ex.attn_output.data, tol, `example ${n} attn_output`));
          worst.weights = Math.max(
            worst.weights,
            close(r.weights, ex.attn_weights.data, tol, `example ${n} attn_weights`),
          );
          worst.logits = Math.max(worst.logits, close(r.logits, ex.logits.data, tol, `example ${n} logits`));
          assert.deepEqual(r.predicted, ex.predicted, `example ${n}: argmax answers`);
        }
        t.diagnostic(
          `${variant} toy-${task}: ${model.examples.length} examples, max |diff| output ${worst.output.toExponential(1)}, ` +
            `weights ${worst.weights.toExponential(1)}, logits ${worst.logits.toExponential(1)}`,
        );
      } finally {
        layers.dispose();
      }
    });

    test(`${variant}: toy-${task} solves the task on ${FRESH} fresh examples (>= 95 %)`, async (t) => {
      const attn = await init({ variant });
      const model = loadToy(docs[task]);
      const layers = createToyLayers(attn, model);
      try {
        const r = rng(task === 'reverse' ? 2024 : 4048);
        let right = 0;
        let total = 0;
        let whole = 0;
        for (let n = 0; n < FRESH; n++) {
          const ex = sampleExample(model, r);
          const { predicted } = runToy(model, layers, ex.tokens);
          let all = true;
          ex.targets.forEach((want, i) => {
            if (want === null) return;
            total += 1;
            if (predicted[i] === want) right += 1;
            else all = false;
          });
          if (all) whole += 1;
        }
        const acc = right / total;
        t.diagnostic(
          `${variant} toy-${task}: ${(acc * 100).toFixed(2)} % of ${total} answers right, ${((whole / FRESH) * 100).toFixed(2)} % of examples fully right`,
        );
        assert.ok(acc >= 0.95, `accuracy ${acc}`);
      } finally {
        layers.dispose();
      }
    });
  }
}

test('embedding rows are embedding.weight[token] + pe', () => {
  const m = loadToy(docs.reverse);
  const x = embed(m, [3, 0]);
  assert.equal(x.length, 2 * m.E);
  assert.equal(x[0], Math.fround(m.embedding[3 * m.E] + positionalEncoding(2, m.E)[0]));
});

test("the reversal toy as a TinyTransformer gives runToy's logits and weights", async () => {
  const attn = await init({ variant: 'simd' });
  const model = loadToy(docs.reverse);
  const layers = createToyLayers(attn, model);
  const tiny = toyTinyTransformer(attn, model);
  try {
    for (const ex of model.examples) {
      const r = runToy(model, layers, ex.tokens);
      const out = tiny.forward({ data: Int32Array.from(ex.tokens), shape: [1, ex.tokens.length] });
      assert.ok(maxDiff(out.logits.data, r.logits) < 1e-4, 'logits');
      assert.ok(maxDiff(out.weights.data, r.weights) < 1e-5, 'weights');
    }
  } finally {
    layers.dispose();
    tiny.dispose();
  }
});

test("runToy's head average is the mean of its heads; padding is masked as keys", async () => {
  const attn = await init({ variant: 'simd' });
  const model = loadToy(docs.recall);
  const layers = createToyLayers(attn, model);
  try {
    const ids = [...model.examples[0].tokens, -1, -1];
    const L = ids.length;
    const r = runToy(model, layers, ids, { causal: true });
    const mean = new Float32Array(L * L);
    for (let hh = 0; hh < model.H; hh++) for (let i = 0; i < L * L; i++) mean[i] += r.weights[hh * L * L + i] / model.H;
    assert.ok(maxDiff(mean, r.average) < 1e-6);
    for (let i = 0; i < L; i++)
      for (let j = L - 2; j < L; j++) assert.equal(r.average[i * L + j], 0, `padding key ${j}`);
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) assert.equal(r.average[i * L + j], 0, 'causal');
  } finally {
    layers.dispose();
  }
});

test('expectedAnswers and parseTokens follow the tasks', () => {
  const recall = loadToy(docs.recall);
  const ids = parseTokens(recall, 'a=3 b=1 a? c?').ids;
  assert.deepEqual(
    expectedAnswers(recall, ids).map((e) => (e === null ? null : recall.vocab[e])),
    [null, null, '3', null],
  );
  assert.match(parseTokens(recall, 'a=3 zz').error, /"zz"/);
  assert.match(parseTokens(recall, '  ').error, /\S/);
});
