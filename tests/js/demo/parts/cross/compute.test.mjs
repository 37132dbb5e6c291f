// Part "self vs cross, batches" (mirrors web/demo/parts/cross/compute.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attend, batchCheck, embed, SEQS, D } from '../../../../../web/demo/parts/cross/compute.js';
import { simd } from '../../helpers.mjs';

test('cross-attention is 3 × 6 and each decoder word peaks on the word it translates; self is 3 × 3', async () => {
  const attn = await simd();
  const cross = attend(attn, 'cross', SEQS.en);
  assert.deepEqual(cross.weights.shape, [3, 6]);
  const peaks = [0, 1, 2].map((i) => {
    const row = Array.from(cross.weights.data.subarray(i * 6, (i + 1) * 6));
    return cross.kTok[row.indexOf(Math.max(...row))];
  });
  assert.deepEqual(peaks, SEQS.en.align);
  assert.deepEqual(attend(attn, 'self', SEQS.zh).weights.shape, [3, 3]);
  assert.equal(embed(['a', 'b']).length, 2 * D);
});

test('a (B, L, dₖ) batch in one call equals one call per item', async () => {
  const { items, diff } = batchCheck(await simd());
  assert.equal(items.length, 2);
  assert.ok(diff < 1e-6, `${diff}`);
});
