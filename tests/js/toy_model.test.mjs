// The demo's toy models (web/demo/models/toy-*.json, written by scripts/train_toy.py) run with attnlab, in
// both builds: attnlab must reproduce PyTorch's stored outputs (attention output, per-head weights, logits),
// and the model must solve its task on fresh random examples generated in JS (>= 95 %).
//
//   node --test tests/js/toy_model.test.mjs        (needs dist/, from `bash scripts/build.sh`)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { init } from '../../dist/index.mjs';
import { loadToy, createToyMha, runToy, sampleExample, embed } from '../../web/demo/toy.js';
import { rng, positionalEncoding } from '../../web/demo/util.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
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
      const mha = createToyMha(attn, model);
      try {
        const tol = model.tolerance;
        const worst = { output: 0, weights: 0, logits: 0 };
        for (const [n, ex] of model.examples.entries()) {
          const r = runToy(model, mha, ex.tokens);
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
        mha.dispose();
      }
    });

    test(`${variant}: toy-${task} solves the task on ${FRESH} fresh examples (>= 95 %)`, async (t) => {
      const attn = await init({ variant });
      const model = loadToy(docs[task]);
      const mha = createToyMha(attn, model);
      try {
        const r = rng(task === 'reverse' ? 2024 : 4048);
        let right = 0;
        let total = 0;
        let whole = 0;
        for (let n = 0; n < FRESH; n++) {
          const ex = sampleExample(model, r);
          const { predicted } = runToy(model, mha, ex.tokens);
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
        mha.dispose();
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
