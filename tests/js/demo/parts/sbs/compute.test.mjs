// Part 1's numbers (mirrors web/demo/parts/sbs/compute.js): the parsers, the rules, and every stage from attnlab.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../../../../web/demo/parts/sbs/compute.js';
import { simd } from '../../helpers.mjs';

const state = (patch = {}) => ({ ...S.START, masked: new Set(), ...patch });

test('parsers: plain rows, JSON rows, and errors in words', () => {
  assert.deepEqual(S.parseMatrix('1 2\n3, 4', 'Q'), [
    [1, 2],
    [3, 4],
  ]);
  assert.deepEqual(S.parseMatrix('[[1,0],[0,1]]', 'K'), [
    [1, 0],
    [0, 1],
  ]);
  assert.throws(() => S.parseMatrix('1 2\n3', 'Q'), /Q/);
  assert.throws(() => S.parseMatrix('1 x', 'V'), /x/);
  assert.throws(() => S.parseMatrix(Array(9).fill('1').join('\n'), 'Q'), /8/);
  assert.equal(S.parseWindowSide(' 2 '), 2);
  assert.throws(() => S.parseWindowSide('-2'));
  assert.equal(S.parseSoftcap('1.5'), 1.5);
  assert.throws(() => S.parseSoftcap('0'));
});

test('rules: causal upper-left / lower-right and window, as code and as the tutorial writes them', () => {
  assert.equal(S.ruleAt(0, 1, { causal: 'upper-left', offset: 0, window: [-1, -1] }), 'causal');
  assert.equal(S.ruleAt(0, 1, { causal: 'lower-right', offset: 2, window: [-1, -1] }), null);
  assert.equal(S.ruleAt(3, 0, { causal: 'off', offset: 0, window: [1, -1] }), 'window');
  assert.equal(S.aligned(-1), 'i − 1');
  assert.match(
    S.ruleText({ fill: '-inf', causal: 'upper-left', offset: 0, win: [1, 0] }),
    /-inf.*j > i.*i − 1 ≤ j ≤ i \+ 0/,
  );
  assert.equal(
    S.optionsText({ scale: 0.5, isCausal: false, window: [-1, -1], softcap: null, attnMask: null }),
    'attn.scaledDotProductAttention(Q, K, V, { scale: 0.5 })',
  );
});

test('the default example: QKᵀ, × 1/√dₖ, weights summing to 1, and the §5 weights differ from the printed ones', async () => {
  const attn = await simd();
  const r = S.runStages(attn, state());
  assert.equal(r.ok, true);
  assert.equal(r.scale, 0.5);
  r.raw.forEach((v, i) => assert.equal(r.scaled[i], v / 2));
  for (let i = 0; i < r.Lq; i++)
    assert.ok(Math.abs(r.W.subarray(i * r.Lk, (i + 1) * r.Lk).reduce((a, b) => a + b) - 1) < 1e-6);
  assert.equal(r.capped, null);
  const w = S.sec5Weights(attn);
  assert.ok(Math.abs(w[0] - S.PRINTED[0][0]) > 0.01);
  // the §5 guess's answer: row 0's largest weight is k0's (0.50648) by attnlab, k2's (0.5873) as printed
  const top = (/** @type {number[]} */ r) => r.indexOf(Math.max(...r));
  assert.equal(top(Array.from(w.subarray(0, 3))), 0);
  assert.equal(w[0].toFixed(5), '0.50648');
  assert.equal(top(S.PRINTED[0]), 2);
});

test('a fully masked row: −1e9 gives uniform weights, −∞ zeros; lower-right causal; softcap adds its stage', async () => {
  const attn = await simd();
  const masked = new Set(['0,0', '0,1', '0,2']);
  const e9 = S.runStages(attn, state({ masked }));
  assert.deepEqual(e9.deadRows, [0]);
  for (let j = 0; j < 3; j++) assert.ok(Math.abs(e9.W[j] - 1 / 3) < 1e-6);
  const inf = S.runStages(attn, state({ masked, fill: '-inf' }));
  assert.deepEqual(Array.from(inf.W.subarray(0, 3)), [0, 0, 0]);
  const lr = S.runStages(attn, state({ q: '1 0 1 0', causal: 'lower-right' }));
  assert.equal(lr.offset, 2);
  assert.equal(lr.why(0, 2), null);
  const cap = S.runStages(attn, state({ softcapOn: true, softcap: '0.5' }));
  cap.capped.forEach((v, i) => assert.ok(Math.abs(v - 0.5 * Math.tanh(cap.scaled[i] / 0.5)) < 1e-6));
  assert.deepEqual([...S.toggled(new Set(['1,2']), 1, 2)], []);
});

test('bad input is an error in words, not an exception', async () => {
  const attn = await simd();
  const r = S.runStages(attn, state({ k: '1 0\n0 1' }));
  assert.equal(r.ok, false);
  assert.equal(r.role, 'alert');
  assert.equal(S.runStages(attn, state({ scaleMode: 'custom', custom: NaN })).ok, false);
});
