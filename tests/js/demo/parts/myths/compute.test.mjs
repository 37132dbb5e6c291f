// Part "misconceptions" (mirrors web/demo/parts/myths/compute.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as My from '../../../../../web/demo/parts/myths/compute.js';
import { simd } from '../../helpers.mjs';

test('untrained ≈ uniform; q₀, k₀, v₀ are projections of x₀; the parameters live in the projections', async () => {
  const f = My.freshLayer(await simd());
  assert.ok(f.entropy > 0.8 * f.uniform);
  assert.equal(f.rows.length, 4 * My.E);
  assert.notDeepEqual(Array.from(f.rows.subarray(My.E, 2 * My.E)), Array.from(f.rows.subarray(0, My.E)));
  assert.equal(
    f.params.reduce((s, p) => s + p.size, 0),
    3 * 64 + 24 + 64 + 8,
  );
});

test('the largest weight is not the largest contribution; more heads, the same parameters', async () => {
  const attn = await simd();
  const c = My.weightVsContribution(attn);
  assert.notEqual(c.topWeight, c.topContribution);
  const heads = My.headCounts(attn);
  assert.deepEqual(
    heads.map((r) => r.dk),
    [16, 8, 4, 2, 1],
  );
  assert.ok(heads.every((r) => r.params === 4 * 256 + 4 * 16));
});

/** Independent float64 reference of the 8.2 box: softmax of q·kⱼ over the kept keys, then Σ αⱼ vⱼ. */
function ref82(keep) {
  const K = [
    [1.2, 0],
    [0.6, 0.2],
    [0.3, -0.2],
    [0, 0.4],
  ];
  const V = [
    [0.05, 0.02],
    [1.5, -0.8],
    [1.0, 1.1],
    [-0.6, 0.9],
  ];
  const e = K.map((k, j) => (keep[j] ? Math.exp(k[0]) : 0)); // q = (1, 0), scale 1
  const s = e.reduce((a, b) => a + b, 0);
  const a = e.map((x) => x / s);
  return { a, o: [0, 1].map((d) => a.reduce((acc, aj, j) => acc + aj * V[j][d], 0)), V };
}

test('8.2: two interventions rank the keys differently; every number against a float64 reference', async () => {
  const c = My.weightVsContribution(await simd());
  const full = ref82([1, 1, 1, 1]);
  for (let j = 0; j < 4; j++) {
    assert.ok(Math.abs(c.weights[j] - full.a[j]) < 1e-6);
    assert.ok(Math.abs(c.contrib[j] - full.a[j] * Math.hypot(...full.V[j])) < 1e-6, `‖α${j}v${j}‖`);
    const masked = ref82([0, 1, 2, 3].map((i) => (i === j ? 0 : 1)));
    const moved = Math.hypot(full.o[0] - masked.o[0], full.o[1] - masked.o[1]);
    assert.ok(Math.abs(c.maskEffect[j] - moved) < 1e-6, `masking k${j}`);
  }
  // the review's numbers (docs: teaching-review §3 item 2), as the page states them
  assert.deepEqual(
    c.maskEffect.map((x) => x.toFixed(3)),
    ['0.359', '0.442', '0.241', '0.205'],
  );
  assert.deepEqual(
    c.contrib.map((x) => x.toFixed(3)),
    ['0.024', '0.413', '0.268', '0.144'],
  );
  assert.equal(c.topWeight, 0);
  assert.ok(c.maskEffect[0] > 10 * c.contrib[0], 'masking k0 moves the output far more than ‖α₀v₀‖ says');
  // the answer's ranks of k0 (review c8: both "most" rankings named k1; k0's places are what differ): last by
  // ‖α·v‖ (0.024 of 0.024 … 0.413), second by masking (0.359 after 0.442)
  assert.deepEqual(c.rankOfTop, { contrib: 4, mask: 2 });
  assert.equal(My.rankOf([3, 1, 3, 2], 1), 4);
  assert.equal(My.rankOf([3, 1, 3, 2], 2), 1);
  assert.throws(
    () => My.rankOf([1, 2], 2),
    (e) => e instanceof RangeError && /^i:/.test(e.message),
  );
});

test("8.2's guess: the most-weighted key's masking moves the output over 10× its ‖α·v‖ (the answer says 'much more')", async () => {
  const c = My.weightVsContribution(await simd());
  const a = c.topWeight;
  assert.equal(a, 0);
  assert.ok(c.maskEffect[a] > 10 * c.contrib[a], `${c.maskEffect[a]} vs ${c.contrib[a]}`);
  assert.ok(c.norms[a] < Math.min(...c.norms.slice(1)), 'its value is the shortest');
});
