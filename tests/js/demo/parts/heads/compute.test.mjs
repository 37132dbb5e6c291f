// Part "From X to heads and back" (mirrors web/demo/parts/heads/compute.js): the chain equals mha.forward, and the
// wrong transpose is a shape error at B = 3 and silently wrong at B = 2.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Hd from '../../../../../web/demo/parts/heads/compute.js';
import { simd } from '../../helpers.mjs';

test('projections, view, transpose, per-head attention, merge and W_O equal mha.forward at B = 1, 2, 3', async () => {
  const attn = await simd();
  const mha = attn.createMultiHeadAttention({ embedDim: Hd.E, numHeads: Hd.H, batchFirst: true });
  try {
    for (const B of [1, 2, 3]) assert.ok(Hd.headsChain(attn, mha, B).diff < 1e-5, `B = ${B}`);
  } finally {
    mha.dispose();
  }
});

test('transpose(1, 2) twice is the identity; the wrong transpose: shapes and numbers', async () => {
  const x = Float32Array.from({ length: 24 }, (_, i) => i);
  const y = Hd.transpose12(x, [1, 2, 3, 4]);
  assert.equal(y[4], x[12]);
  assert.deepEqual(Hd.transpose12(y, [1, 3, 2, 4]), x);
  assert.match(Hd.wrongTransposeShapes(3).error, /3/);
  assert.deepEqual(Hd.wrongTransposeShapes(2).out, [2, 2, 4, 4]);
  const attn = await simd();
  const mha = attn.createMultiHeadAttention({ embedDim: Hd.E, numHeads: Hd.H, batchFirst: true });
  const chain = Hd.headsChain(attn, mha, 2);
  mha.dispose();
  const wrong = Hd.wrongTransposeWeights(attn, chain);
  assert.ok(wrong.diff > 0.01);
  // the same numbers by hand: Q[0, 0] (L, dk) times K[0, 0] taken as a (dk, L) matrix, softmax of / √dk
  const { L, DK } = Hd;
  for (let i = 0; i < L; i++) {
    const s = [];
    for (let j = 0; j < L; j++) {
      let a = 0;
      for (let c = 0; c < DK; c++) a += chain.Qh[i * DK + c] * chain.Kh[c * DK + j];
      s.push(a / Math.sqrt(DK));
    }
    const m = Math.max(...s);
    const e = s.map((v) => Math.exp(v - m));
    const z = e.reduce((p, q) => p + q);
    e.forEach((v, j) => assert.ok(Math.abs(v / z - wrong.weights[i * L + j]) < 1e-5));
  }
});

test("the legend's colour claims hold: head 1 blue, head 2 orange (attnlab/viz headColour); cells red > 0, blue < 0", async () => {
  const { headColour } = await import('../../../../../web/demo/attnlab-viz.js');
  const { divColor } = await import('../../../../../web/demo/widgets/colours.js');
  const { default: zh } = await import('../../../../../web/demo/i18n/zh.js');
  const { default: en } = await import('../../../../../web/demo/i18n/en.js');
  const rgb = (c) =>
    c.startsWith('#') ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : c.match(/\d+/g).map(Number);
  const [b0, o1, pos, neg] = [headColour(0), headColour(1), divColor(1, 1), divColor(-1, 1)].map(rgb);
  assert.ok(b0[2] > b0[0] && b0[2] > b0[1], 'head 1 (index 0) is blue');
  assert.ok(o1[0] > o1[2] && o1[1] > o1[2], 'head 2 (index 1) is orange');
  assert.ok(pos[0] > pos[2] && neg[2] > neg[0], 'positive red, negative blue');
  assert.match(zh['heads.item0'], /蓝色是头 1，橙色是头 2.*红色为正，蓝色为负/);
  assert.match(en['heads.item0'], /blue = head 1, orange = head 2.*red positive, blue negative/);
});
