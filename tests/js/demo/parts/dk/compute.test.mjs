// Part "why √dₖ" (mirrors web/demo/parts/dk/compute.js): without the scale the softmax saturates as dₖ grows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dkLabData, keyCount, DKS } from '../../../../../web/demo/parts/dk/compute.js';
import { simd } from '../../helpers.mjs';

test('at dₖ = 1024 the unscaled weights are near one-hot, the scaled ones are not; entropies follow', async () => {
  const d = dkLabData(await simd(), { keys: 16, seed: 1 });
  assert.equal(d.scaled.maxWeight.length, DKS.length);
  assert.ok(d.unscaled.maxWeight.at(-1) > 0.8 && d.scaled.maxWeight.at(-1) < 0.5);
  assert.ok(d.unscaled.entropy.at(-1) < d.scaled.entropy.at(-1));
  assert.ok(d.scaled.entropy.every((e) => e <= Math.log(16) + 1e-6));
  assert.deepEqual([keyCount('1'), keyCount('100'), keyCount(''), keyCount('7.6')], [2, 64, 16, 8]);
});
