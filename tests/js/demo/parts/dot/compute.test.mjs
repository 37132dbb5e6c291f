// Part "Q/K/V and the dot product" (mirrors web/demo/parts/dot/compute.js): dot products and weights from attnlab.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readout, clampToPlane, START, doubledQuery } from '../../../../../web/demo/parts/dot/compute.js';
import { simd } from '../../helpers.mjs';

test('q along k0, at a right angle to k1, opposite k2: dots, angles and softmax(q·k/√2)', async () => {
  const attn = await simd();
  const { rows, weights } = readout(attn, { q: [1, 0], k0: [2, 0], k1: [0, 1.5], k2: [-1, 0] });
  assert.deepEqual(
    rows.map((r) => r.dot),
    [2, 0, -1],
  );
  assert.deepEqual(
    rows.map((r) => Math.round(r.angle)),
    [0, 90, 180],
  );
  const e = [2, 0, -1].map((s) => Math.exp(s / Math.SQRT2));
  weights.forEach((w, j) => assert.ok(Math.abs(w - e[j] / (e[0] + e[1] + e[2])) < 1e-6));
  assert.equal(readout(attn, START).rows.length, 3);
  assert.deepEqual(clampToPlane(9, -9), [2.5, -2.5]);
});

test('guess first: q twice as long makes the largest weight larger (float64 softmax of the doubled scores)', async () => {
  const attn = await simd();
  const d = doubledQuery(attn, START);
  const dots = [START.k0, START.k1, START.k2].map((k) => START.q[0] * k[0] + START.q[1] * k[1]);
  /** @param {number} c */
  const soft = (c) => {
    const e = dots.map((x) => Math.exp((c * x) / Math.SQRT2));
    return e.map((x) => x / e.reduce((a, y) => a + y, 0));
  };
  assert.equal(d.j, 0);
  assert.ok(Math.abs(d.before - soft(1)[0]) < 1e-6 && Math.abs(d.after - soft(2)[0]) < 1e-6, `${d.before} ${d.after}`);
  assert.ok(d.grows && d.after > d.before);
  const equal = doubledQuery(attn, { q: [1, 0], k0: [1, 0], k1: [1, 1], k2: [1, -1] });
  assert.equal(equal.grows, false);
  assert.ok(Math.abs(equal.after - 1 / 3) < 1e-6);
});
