// y = x Wᵀ + b on attnlab (mirrors web/demo/shared/linear.js): a one-key attention returns its value projection.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLinear, linear } from '../../../../web/demo/shared/linear.js';
import { rng } from '../../../../web/demo/shared/random.js';
import { simd, maxDiff } from '../helpers.mjs';

/** x Wᵀ + b in float64. */
function reference(x, rows, W, b, outF) {
  const inF = W.length / outF;
  const y = new Float64Array(rows * outF);
  for (let r = 0; r < rows; r++)
    for (let o = 0; o < outF; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < inF; i++) s += x[r * inF + i] * W[o * inF + i];
      y[r * outF + o] = s;
    }
  return y;
}

test('linear equals x Wᵀ + b for wider, narrower and square layers, with and without bias', async () => {
  const attn = await simd();
  const r = rng(11);
  for (const [rows, inF, outF] of [
    [5, 7, 3],
    [1, 4, 12],
    [6, 8, 8],
  ]) {
    const x = Float32Array.from({ length: rows * inF }, r.normal);
    const W = Float32Array.from({ length: outF * inF }, r.normal);
    const b = Float32Array.from({ length: outF }, r.normal);
    assert.ok(maxDiff(linear(attn, x, rows, W, b, outF), reference(x, rows, W, b, outF)) < 1e-5, `${inF} → ${outF}`);
    assert.ok(maxDiff(linear(attn, x, rows, W, null, outF), reference(x, rows, W, null, outF)) < 1e-5, 'no bias');
  }
});

test('a Linear is reusable, checks its weights and frees its memory', async () => {
  const attn = await simd();
  const W = Float32Array.of(1, 2, 3, 4, 5, 6);
  const layer = createLinear(attn, W, Float32Array.of(1, -1), 2, 3);
  assert.deepEqual(Array.from(layer.apply(Float32Array.of(1, 0, 0, 0, 1, 0), 2)), [2, 3, 3, 4]);
  assert.deepEqual(Array.from(layer.apply(Float32Array.of(0, 0, 1), 1)), [4, 5]);
  layer.dispose();
  assert.throws(() => layer.apply(Float32Array.of(0, 0, 1), 1));
  assert.throws(() => createLinear(attn, W, null, 4, 3), RangeError);
});
