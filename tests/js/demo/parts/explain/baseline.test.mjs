// Mirrors web/demo/parts/explain/baseline.js (tiny budget): the task's examples from the shipped held-out.jsonl
// (same form, 24 characters, disjoint train and test); the uniform run's attention after training is exactly
// 1/(i+1) on every visible key (W_Q = W_K = 0 stays 0); the same seed gives the same run; accuracy against a count
// made here from the logits.
import assert from 'node:assert/strict';
import test from 'node:test';
import fs from 'node:fs';
import path from 'node:path';

import * as B from '../../../../../web/demo/parts/explain/baseline.js';
import { DEMO, simd } from '../../helpers.mjs';

const RECORDS = fs
  .readFileSync(path.join(DEMO, 'models/tang-song-quatrains-char-llama/held-out.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

test('poemClasses: quatrains vs regulated-poem openings, 24 characters each, every fourth held out', () => {
  const { train, test: held } = B.poemClasses(RECORDS);
  const all = [...train, ...held];
  for (const e of all) assert.equal([...e.text].length, 24);
  for (const e of all) assert.equal(e.text.split('。').length, 3); // two sentences, then ''
  const n = (/** @type {number} */ c) => RECORDS.filter((r) => r.form === (c ? 'lushi5' : 'jueju5')).length;
  assert.ok(all.filter((e) => e.label === 0).length <= n(0) && all.filter((e) => e.label === 1).length <= n(1));
  const texts = new Set(train.map((e) => e.text));
  assert.equal(held.filter((e) => texts.has(e.text)).length, 0);
  assert.ok(Math.abs(held.length * B.TEST_EVERY - all.length) <= 2 * B.TEST_EVERY);
});

test('uniformBaseline: frozen-uniform attention stays 1/(i+1), same seed same run, accuracy counted from logits', async () => {
  const attn = await simd();
  const r = B.uniformBaseline(attn, RECORDS, { seed: 2, steps: 4 });
  const again = B.uniformBaseline(attn, RECORDS, { seed: 2, steps: 4 });
  assert.deepEqual(again.learned.losses, r.learned.losses);
  assert.notDeepEqual(r.uniform.losses, r.learned.losses);
  for (const a of r.uniform.attentions) {
    const [, H, T] = a.shape;
    for (let h = 0; h < H; h++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) assert.equal(a.data[(h * T + i) * T + j], j <= i ? Math.fround(1 / (i + 1)) : 0);
  }
  const learnedRow = r.learned.attentions[0].data.subarray(24 * 25, 25 * 25);
  assert.ok(
    learnedRow.some((x) => Math.abs(x - 1 / 25) > 1e-4),
    'the learned run is not uniform',
  );
  for (const k of ['learned', 'uniform']) {
    for (const v of Object.values(r[k].accuracy)) assert.ok(v >= 0 && v <= 1 && Number.isFinite(v));
  }
  assert.ok(r.chance >= 0.5 && r.chance < 1);
});

test('accuracy: the share of rows whose class logit wins, against a count from forward made here', async () => {
  const attn = await simd();
  const { train } = B.poemClasses(RECORDS);
  const { tok, classIds } = B.classTokenizer(train);
  const rows = train
    .slice(0, 6)
    .concat(train.slice(-6))
    .map((e) => ({ ids: tok.encode(e.text), label: e.label }));
  const config = { ...B.CLASSIFIER, vocabSize: tok.tokens.length };
  const model = attn.createModel({ ...config, tieEmbeddings: true, seed: 1 });
  model.loadStateDict(B.initialWeights(config, 5, false));
  const V = config.vocabSize;
  let right = 0;
  for (const r of rows) {
    const { logits } = model.forward({ data: r.ids, shape: [1, r.ids.length] });
    const last = logits.data.subarray((r.ids.length - 1) * V);
    if ((last[classIds[1]] > last[classIds[0]] ? 1 : 0) === r.label) right += 1;
  }
  assert.equal(B.accuracy(model, rows, classIds), right / rows.length);
  const { targets } = B.classBatch(rows.slice(0, 2), classIds);
  assert.deepEqual(
    [...targets.data].filter((x) => x !== -100),
    [classIds[rows[0].label], classIds[rows[1].label]],
  );
  model.dispose();
});
