// Part "multi-head on a sentence" (mirrors web/demo/parts/mha/compute.js): tokens, layers and scoring.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  readTokens,
  runLayer,
  runToySource,
  scoreAnswers,
  MAX_TOKENS,
} from '../../../../../web/demo/parts/mha/compute.js';
import { loadToy, createToyLayers } from '../../../../../web/demo/shared/toy-model.js';
import { simd, maxDiff, DEMO } from '../../helpers.mjs';

const toy = (task) => loadToy(JSON.parse(fs.readFileSync(path.join(DEMO, 'models', `toy-${task}.json`), 'utf8')));

test('tokens: words, a toy vocabulary, padding, and errors in words', () => {
  const w = readTokens('the cat', null, 4);
  assert.deepEqual(w.labels, ['the', 'cat', '<pad>', '<pad>']);
  assert.deepEqual(w.padded, [false, false, true, true]);
  assert.match(readTokens('   ', null, 0).error, /\S/);
  assert.match(
    readTokens(
      Array(MAX_TOKENS + 1)
        .fill('a')
        .join(' '),
      null,
      0,
    ).error,
    /33/,
  );
  const rev = toy('reverse');
  assert.deepEqual(readTokens('A B', rev, 0).ids, [rev.index.get('A'), rev.index.get('B')]);
  assert.match(readTokens('A zz', rev, 0).error, /zz/);
});

test("an untrained layer: per-head weights, attnlab's average of them, padding and causal masks", async () => {
  const attn = await simd();
  const mha = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
  try {
    const cfg = { numHeads: 2, embedDim: 8, kdim: 8, vdim: 8 };
    const { H, result } = runLayer(mha, cfg, ['a', 'b', 'c', '<pad>'], [false, false, false, true], true);
    const L = 4;
    assert.equal(H, 2);
    assert.equal(result.S, 4);
    const mean = result.weights.subarray(0, L * L).map((v, i) => (v + result.weights[L * L + i]) / 2);
    assert.ok(maxDiff(mean, result.average) < 1e-6);
    for (let i = 0; i < L; i++) assert.equal(result.average[i * L + 3], 0, 'padding');
    assert.equal(result.average[1], 0, 'causal');
  } finally {
    mha.dispose();
  }
});

test('a toy model on its tokens, scored against its task', async () => {
  const attn = await simd();
  const rev = toy('reverse');
  const layers = createToyLayers(attn, rev);
  try {
    const ex = rev.examples[0];
    const labels = ex.tokens.map((tk) => rev.vocab[tk]);
    const r = runToySource(rev, layers, ex.tokens, labels, false);
    assert.deepEqual(r.predicted, ex.predicted);
    const s = scoreAnswers(rev, ex.tokens, r.predicted);
    assert.equal(s.n, ex.tokens.length);
    assert.ok(s.right >= s.n - 1);
  } finally {
    layers.dispose();
  }
});
