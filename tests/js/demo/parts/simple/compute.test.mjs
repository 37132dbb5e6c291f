// Part "simplified attention" (mirrors web/demo/parts/simple/compute.js): attnlab's weights are the softmax of the
// hand-set scores and its output the weighted sum of the word vectors (against float64); e^Δ; softmax against
// proportional shares, the numbers the page states; the residual: 叫 keeps its "sound" only with its vector added.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../../../../web/demo/parts/simple/compute.js';
import { simd } from '../../helpers.mjs';

/** float64 softmax and weighted sum. */
function ref(scores) {
  const m = Math.max(...scores);
  const e = scores.map((s) => Math.exp(s - m));
  const z = e.reduce((a, b) => a + b, 0);
  const w = e.map((x) => x / z);
  return { w, out: S.FEATURES.map((_, f) => w.reduce((a, wj, j) => a + wj * S.VECTORS[j][f], 0)) };
}

test('weights = softmax(scores), output = Σ wⱼ vⱼ, for every preset and a random draw', async () => {
  const attn = await simd();
  assert.equal(S.VECTORS.length, S.WORDS.length);
  const draws = [...Object.values(S.PRESETS), S.WORDS.map((_, j) => Math.sin(3 * j) * 4)];
  for (const scores of draws) {
    const m = S.mix(attn, scores);
    const r = ref(scores);
    m.weights.forEach((w, j) => assert.ok(Math.abs(w - r.w[j]) < 1e-6, `weight ${j}`));
    m.output.forEach((o, f) => assert.ok(Math.abs(o - r.out[f]) < 1e-6, `feature ${f}`));
    assert.equal(m.uniform, 1 / S.WORDS.length);
  }
});

test("the tutorial's scores: 猫 high, 喂食 second, 因为 low; the mix gains 'animal'", async () => {
  const m = S.mix(await simd(), S.PRESETS.tutorial);
  const idx = (w) => S.WORDS.findIndex((x) => x[0] === w);
  assert.equal(S.argmax(m.weights), idx('猫'));
  const order = [...m.weights].map((w, j) => [w, j]).sort((a, b) => b[0] - a[0]);
  assert.equal(order[1][1], idx('喂食'));
  assert.ok(m.weights[idx('因为')] < m.uniform);
  const animal = S.FEATURES.indexOf('animal');
  assert.ok(m.output[animal] > 0.5 && S.VECTORS.at(-1)[animal] < 0.2, 'the new vector of 叫 takes in the cat');
  // close scores give near-uniform weights
  const close = S.mix(await simd(), S.PRESETS.close);
  assert.ok(close.weights.every((w) => Math.abs(w - close.uniform) < 0.015));
});

test('Δ → e^Δ: +1 multiplies a ratio by e; the stated numbers (2.7×, 20×, 0.525 vs 0.667, 0.731)', async () => {
  assert.equal(S.weightRatio(1).toFixed(1), '2.7');
  assert.equal(Math.round(S.weightRatio(3)), 20);
  const a = S.softmaxVsProportional(0.2, 0.1);
  assert.deepEqual(
    [...a.softmax, ...a.proportional].map((x) => x.toFixed(3)),
    ['0.525', '0.475', '0.667', '0.333'],
  );
  assert.equal(S.softmaxVsProportional(2, 1).softmax[0].toFixed(3), '0.731');
  // the guess: raising 猫 by 1 multiplies w(猫)/w(喂食) by e, whatever the others are
  const attn = await simd();
  const s = [...S.PRESETS.tutorial];
  const before = S.mix(attn, s).weights;
  s[1] += 1;
  const after = S.mix(attn, s).weights;
  assert.ok(Math.abs(after[1] / after[5] / (before[1] / before[5]) - Math.E) < 1e-4);
});

test('guess first: 猫 + 1 multiplies the ratio of its weight to 喂食 by e, whatever the scores (attnlab)', async () => {
  const attn = await simd();
  const [cat, fed] = ['猫', '喂食'].map((w) => S.WORDS.findIndex(([zh]) => zh === w));
  assert.deepEqual([cat, fed], [1, 5]);
  for (const scores of [S.PRESETS.tutorial, S.PRESETS.equal, S.PRESETS.close, [2, -1, 0.3, 4, 0, -2, 1, 0.5, 0, 3]]) {
    const r = S.ratioGain(attn, scores, cat, fed);
    assert.ok(Math.abs(r - Math.E) < 1e-4, `${scores}: ${r}`);
  }
  assert.ok(Math.abs(S.ratioGain(attn, S.PRESETS.tutorial, cat, fed, 3) - Math.exp(3)) < 1e-3);
});

test("the residual: own + weighted sum; the sum alone nearly loses 叫's 'sound', the residual keeps it", async () => {
  const m = S.mix(await simd(), S.PRESETS.tutorial);
  const r = ref(S.PRESETS.tutorial);
  const own = S.VECTORS.at(-1);
  S.withResidual(m.output).forEach((v, f) => assert.ok(Math.abs(v - (own[f] + r.out[f])) < 1e-6, `feature ${f}`));
  const sound = S.FEATURES.indexOf('sound');
  assert.ok(m.output[sound] < 0.25 * own[sound], `the sum alone: ${m.output[sound]}`);
  assert.ok(S.withResidual(m.output)[sound] > own[sound], 'with the residual, at least its own');
});
