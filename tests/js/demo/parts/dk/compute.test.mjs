// Part "why √dₖ" (mirrors web/demo/parts/dk/compute.js): without the scale the softmax saturates as dₖ grows.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dkLabData,
  gradData,
  keyCount,
  DKS,
  GUESS_DKS,
  scoreSpread,
} from '../../../../../web/demo/parts/dk/compute.js';
import { simd } from '../../helpers.mjs';

test('at dₖ = 1024 the unscaled weights are near one-hot, the scaled ones are not; entropies follow', async () => {
  const d = dkLabData(await simd(), { keys: 16, seed: 1 });
  assert.equal(d.scaled.maxWeight.length, DKS.length);
  assert.ok(d.unscaled.maxWeight.at(-1) > 0.8 && d.scaled.maxWeight.at(-1) < 0.5);
  assert.ok(d.unscaled.entropy.at(-1) < d.scaled.entropy.at(-1));
  assert.ok(d.scaled.entropy.every((e) => e <= Math.log(16) + 1e-6));
  assert.deepEqual([keyCount('1'), keyCount('100'), keyCount(''), keyCount('7.6')], [2, 64, 16, 8]);
});

test('the gradient over many draws: scaled ≈ 0.5 from dₖ 4 on; unscaled median → 0 while its mean stays up', async () => {
  const attn = await simd();
  const g = gradData(attn, { draws: 200, seed: 1 });
  const at = (dk) => DKS.indexOf(dk);
  for (let i = at(4); i < DKS.length; i++)
    assert.ok(g.scaled.median[i] > 0.4 && g.scaled.median[i] < 0.7, `dₖ ${DKS[i]}`);
  assert.ok(Math.max(...g.unscaled.median) > Math.max(...g.scaled.median), 'unscaled first grows');
  assert.ok(g.unscaled.median[at(1024)] < 0.01 && g.unscaled.small[at(1024)] > 0.5);
  assert.ok(g.unscaled.small[at(256)] > 0.25 && g.scaled.small[at(256)] === 0);
  assert.ok(g.unscaled.mean[at(1024)] > 1, 'a few large gradients hold the mean up');
  // one draw against an independent float64 gradient: ∂/∂q of g·Σ αⱼvⱼ = scale · Σ αⱼ (g·vⱼ − g·o) kⱼ
  const dk = 4;
  const [q, K, V, G] = [
    [0.3, -1, 0.5, 2],
    [...Array(8 * dk)].map((_, i) => Math.sin(i)),
    [...Array(32)].map((_, i) => Math.cos(i)),
    [1, -0.5, 0.25, 2],
  ];
  const s = K.map((_, j) => j)
    .filter((j) => j < 8)
    .map((j) => q.reduce((a, x, d) => a + x * K[j * dk + d], 0));
  const e = s.map((x) => Math.exp(x - Math.max(...s)));
  const a = e.map((x) => x / e.reduce((p, y) => p + y, 0));
  const gv = a.map((_, j) => G.reduce((p, x, d) => p + x * V[j * 4 + d], 0));
  const go = a.reduce((p, aj, j) => p + aj * gv[j], 0);
  const want = [0, 1, 2, 3].map((d) => a.reduce((p, aj, j) => p + aj * (gv[j] - go) * K[j * dk + d], 0));
  const T = (x, shape) => ({ data: Float32Array.from(x), shape });
  const got = attn.scaledDotProductAttentionBackward(
    T(q, [1, 1, dk]),
    T(K, [1, 8, dk]),
    T(V, [1, 8, 4]),
    T(G, [1, 1, 4]),
    {
      scale: 1,
    },
  ).gradQuery.data;
  for (let d = 0; d < dk; d++) assert.ok(Math.abs(got[d] - want[d]) < 1e-5);
});

test('guess first: unscaled scores spread like √dₖ: 16 → 256 is about 4 times, matching float64 on the same draws', async () => {
  const attn = await simd();
  const [a, b] = GUESS_DKS.map((dk) => scoreSpread(attn, dk));
  for (const s of [a, b]) {
    const n = 64;
    const xs = [];
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < s.dk; c++) dot += s.q[i * s.dk + c] * s.k[j * s.dk + c];
        xs.push(dot);
      }
    const mean = xs.reduce((x, y) => x + y, 0) / xs.length;
    const std = Math.sqrt(xs.reduce((x, y) => x + (y - mean) ** 2, 0) / xs.length);
    assert.ok(Math.abs(s.std - std) < 1e-4 * std, `${s.dk}: ${s.std} vs ${std}`);
    assert.ok(Math.abs(s.std / Math.sqrt(s.dk) - 1) < 0.15, `${s.dk}: ${s.std}`);
  }
  assert.deepEqual(GUESS_DKS, [16, 256]);
  assert.ok(Math.abs(b.std / a.std - 4) < 0.4, `${b.std / a.std}`);
});
