// Part "why attention" (mirrors web/demo/parts/why/compute.js): path lengths, the L² scores, and §3.2's count of
// width-3 convolution layers until two words share a receptive field (against a simulation of the stack).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SENTENCE,
  LENGTHS,
  LINKED,
  KERNEL,
  pathRow,
  cnnLayers,
  receptiveField,
} from '../../../../../web/demo/parts/why/compute.js';

test('an RNN needs L − 1 steps from the first word to the last, attention one; L² scores', () => {
  assert.deepEqual(pathRow(512), { L: 512, rnnPath: 511, attnPath: 1, rnnSteps: 512, cnnLayers: 256, scores: 262144 });
  assert.deepEqual(LENGTHS, [8, 128, 512, 2048]);
  assert.equal(SENTENCE.zh.length, 17);
  assert.equal(SENTENCE.en[1], 'cat');
});

/**
 * Stack stride-1, 'same'-padded convolutions of width k over n positions and track, for every output, the set of
 * inputs it depends on; the first depth at which some output depends on both 0 and d.
 * @param {number} d
 * @param {number} k
 */
function simulatedLayers(d, k) {
  const n = d + 1;
  let seen = Array.from({ length: n }, (_, i) => new Set([i]));
  for (let layer = 1; layer <= n; layer++) {
    const half = (k - 1) / 2;
    seen = seen.map((_, i) => {
      const s = new Set();
      for (let o = -half; o <= half; o++) if (i + o >= 0 && i + o < n) for (const x of seen[i + o]) s.add(x);
      return s;
    });
    if (seen.some((s) => s.has(0) && s.has(d))) return layer;
  }
  return Infinity;
}

test('§3.2: width-k convolutions need ⌈d/(k − 1)⌉ layers before two words d apart share a receptive field', () => {
  assert.equal(KERNEL, 3);
  for (const k of [3, 5, 7])
    for (let d = 1; d <= 40; d++) assert.equal(cnnLayers(d, k), simulatedLayers(d, k), `k ${k}, d ${d}`);
  assert.equal(receptiveField(7), 15);
  assert.deepEqual(
    LENGTHS.map((L) => pathRow(L).cnnLayers),
    [4, 64, 256, 1024],
  );
});

test('the guess: 猫 … 叫 are 14 characters apart (7 layers), cat … crying 9 words (5 layers); attention 1', () => {
  assert.deepEqual([SENTENCE.zh[LINKED.zh[0]], SENTENCE.zh[LINKED.zh[1]]], ['猫', '叫']);
  assert.deepEqual([SENTENCE.en[LINKED.en[0]], SENTENCE.en[LINKED.en[1]]], ['cat', 'crying']);
  const layers = (/** @type {number[]} */ [i, j]) => cnnLayers(j - i);
  assert.equal(layers(LINKED.zh), 7);
  assert.equal(layers(LINKED.en), 5);
  assert.ok(receptiveField(7) >= 15 && receptiveField(6) < 15);
  assert.equal(pathRow(17).attnPath, 1);
});
