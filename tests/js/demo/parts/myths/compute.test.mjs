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
