// Part "Q/K/V and the dot product" (mirrors web/demo/parts/dot/compute.js): dot products and weights from attnlab.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readout, clampToPlane, START } from '../../../../../web/demo/parts/dot/compute.js';
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
