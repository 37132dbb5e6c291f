// Part "troubleshooting" (mirrors web/demo/parts/pitfalls/compute.js): each wrong variant next to attnlab.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../../web/demo/parts/pitfalls/compute.js';
import { simd } from '../../helpers.mjs';

test('1. no max: NaN from the overflowing softmax, finite weights from attnlab', async () => {
  const r = P.noMax(await simd(), 100);
  assert.ok(r.nans > 0);
  assert.ok(r.right.every(Number.isFinite));
  assert.ok(Math.abs(P.sum(r.right) - 1) < 1e-6);
  assert.equal(P.noMax(await simd(), 5).nans, 0);
});

test('2. the wrong axis: columns sum to 1 instead of rows, and they are the softmax over the queries', async () => {
  const r = P.wrongAxis(await simd(), 3);
  assert.ok(r.wrongSums.some((s) => Math.abs(s - 1) > 0.05));
  r.rightSums.forEach((s) => assert.ok(Math.abs(s - 1) < 1e-6));
  for (let j = 0; j < 4; j++) assert.ok(Math.abs(r.wrong[j] + r.wrong[4 + j] + r.wrong[8 + j] - 1) < 1e-6);
});

test('3. and 4. heads that do not divide d_model, and the wrong transpose', async () => {
  const attn = await simd();
  const r = P.headsDivide(attn, 10, 3);
  assert.deepEqual([r.hd, r.used, r.lost, r.exact], [3, 9, 1, false]);
  assert.match(String(r.error), /embedDim/);
  assert.equal(P.headsDivide(attn, 0, 3).positive, false);
  assert.equal(P.headsDivide(attn, 8, 2).error, null);
  const tr = P.transposeRow(attn, 3);
  assert.ok(tr.wrong.error);
  assert.deepEqual(tr.rightShape, [3, 2, 4, 4]);
});

test('5. and 6. no 1/√dₖ saturates and starves the gradient; 0 in place of a mask leaks weight', async () => {
  const attn = await simd();
  const r = P.noScale(attn, 256);
  assert.ok(r.wrong.max > r.right.max);
  assert.ok(r.wrong.grad < r.right.grad);
  const m = P.maskZero(attn, 2);
  assert.ok(m.leak > 0.1);
  assert.equal(m.rightLeak, 0);
  assert.deepEqual(m.keep, [1, 1, 1, 0, 0]);
  assert.deepEqual(Array.from(P.softmaxNoMax(Float32Array.of(0, 0), 1, 2)), [0.5, 0.5]);
});
