// scripts/couplet/baselines.mjs (the couplet model's count baselines, docs/couplet-model.md): the pair records of
// prepare.mjs, and the unigram, bigram and aligned baselines' probabilities, losses and accuracies on pairs whose
// answers are computed here by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baseline, baselines, evaluate, fitCounts, readPairs } from '../../scripts/couplet/baselines.mjs';

const bytes = (ids) => new Uint8Array(new Uint16Array(ids).buffer);

test('readPairs: n, k, the upper ids, the lower ids; a truncated record is an error', () => {
  const pairs = readPairs(bytes([2, 3, 10, 11, 20, 21, 1, 4, 12, 22]));
  assert.deepEqual(pairs, [
    { k: 3, upper: [10, 11], lower: [20, 21] },
    { k: 4, upper: [12], lower: [22] },
  ]);
  assert.throws(() => readPairs(bytes([2, 3, 10, 11, 20])), /a pair of length 2 at 0 runs past the file/);
  assert.throws(() => readPairs(new Uint8Array(3)), /odd/);
});

// Train: upper 10 11 → lower 20 21 (twice), upper 10 12 → lower 20 22. V = 30.
const TRAIN = [
  { k: 2, upper: [10, 11], lower: [20, 21] },
  { k: 2, upper: [10, 11], lower: [20, 21] },
  { k: 1, upper: [10, 12], lower: [20, 22] },
];

test('the three baselines by hand', () => {
  const counts = fitCounts(TRAIN);
  const V = 30;
  const p = { alpha: 1, lambda: 0.5, V };
  const uni = (c) => ((c === 20 ? 3 : c === 21 ? 2 : c === 22 ? 1 : 0) + 1) / (6 + 30);
  const pair = { k: 2, upper: [10, 12], lower: [20, 21] };
  assert.equal(baseline(counts, 'unigram', p).prob(pair, 1, 21), uni(21));
  // bigram: after 20 came 21 twice and 22 once
  assert.ok(Math.abs(baseline(counts, 'bigram', p).prob(pair, 1, 21) - (0.5 * (2 / 3) + 0.5 * uni(21))) < 1e-15);
  // aligned: upper 12 was answered by 22 once, never by 21
  assert.ok(Math.abs(baseline(counts, 'aligned', p).prob(pair, 1, 21) - 0.5 * uni(21)) < 1e-15);
  // an unseen context falls back to the unigram alone
  const unseen = { k: 1, upper: [13, 13], lower: [21, 21] };
  assert.equal(baseline(counts, 'aligned', p).prob(unseen, 0, 21), uni(21));
  assert.equal(baseline(counts, 'aligned', p).argmax(pair, 1), 22);
  assert.equal(baseline(counts, 'bigram', p).argmax(pair, 1), 21);
  assert.equal(baseline(counts, 'unigram', p).argmax(pair, 1), 20);

  const result = evaluate(baseline(counts, 'aligned', p), [pair]);
  const expected = -(Math.log(0.5 * 1 + 0.5 * uni(20)) + Math.log(0.5 * uni(21))) / 2;
  assert.ok(Math.abs(result.all.loss - expected) < 1e-4, `${result.all.loss} vs ${expected}`);
  assert.deepEqual([result.all.accuracy, result.all.characters, result.k2.characters], [0.5, 2, 2]);
});

test('baselines: smoothing chosen on validation; a diagonal the training pairs teach wins where it holds', () => {
  const train = Array.from({ length: 40 }, (_, i) => ({ k: 2, upper: [i % 4], lower: [10 + (i % 4)] }));
  const validation = [0, 1, 2, 3].map((u) => ({ k: 2, upper: [u], lower: [10 + u] }));
  const test = [...validation, { k: 1, upper: [0], lower: [13] }];
  const r = baselines(train, validation, test, 20);
  assert.equal(r.aligned.lambda, 0.9, 'the aligned table is always right on validation');
  assert.ok(r.aligned.test.k2.loss < 0.2 && r.aligned.test.k2.accuracy === 1, JSON.stringify(r.aligned.test));
  assert.equal(r.aligned.test.k1.accuracy, 0);
  assert.ok(r.unigram.test.k2.loss > 1.3, JSON.stringify(r.unigram.test));
});
