// The plain-JS baseline that the speed part and `npm run bench` measure (mirrors web/demo/shared/plain-attention.js)
// computes what attnlab computes: SDPA, nn.MultiheadAttention and a cached decoding step.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sdpa, mha, createDecoder } from '../../../../web/demo/shared/plain-attention.js';
import { rng } from '../../../../web/demo/shared/random.js';
import { simd, maxDiff } from '../helpers.mjs';

const normals = (n, seed) => Float32Array.from({ length: n }, rng(seed).normal);

test('sdpa equals attnlab scaledDotProductAttention', async () => {
  const attn = await simd();
  const [B, L, S, d, dv] = [2, 5, 7, 4, 3];
  const q = normals(B * L * d, 1);
  const k = normals(B * S * d, 2);
  const v = normals(B * S * dv, 3);
  const ref = attn.scaledDotProductAttention(
    { data: q, shape: [B, L, d] },
    { data: k, shape: [B, S, d] },
    { data: v, shape: [B, S, dv] },
    { scale: 0.7, needWeights: false },
  ).output.data;
  assert.ok(maxDiff(sdpa(q, k, v, B, L, S, d, dv, 0.7), ref) < 1e-5);
});

test('mha equals attnlab MultiHeadAttention on its state dict', async () => {
  const attn = await simd();
  const [L, E, H] = [6, 8, 2];
  const layer = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 3 });
  const sd = Object.fromEntries(Object.entries(layer.stateDict()).map(([k, t]) => [k, t.data]));
  const x = normals(L * E, 4);
  const X = { data: x, shape: [1, L, E] };
  const ref = layer.forward(X, X, X, { needWeights: false }).output.data;
  layer.dispose();
  assert.ok(maxDiff(mha(x, L, E, H, sd), ref) < 1e-5);
});

test('createDecoder: steps over a loaded cache equal a causal forward of attnlab', async () => {
  const attn = await simd();
  const [E, H, Hkv, n] = [8, 4, 2, 5];
  const d = E / H;
  const layer = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, numKVHeads: Hkv, batchFirst: true, seed: 9 });
  const sd = layer.stateDict();
  const bias = sd.in_proj_bias.data;
  const w = {
    wq: sd.q_proj_weight.data,
    wk: sd.k_proj_weight.data,
    wv: sd.v_proj_weight.data,
    wo: sd['out_proj.weight'].data,
    bq: bias.subarray(0, E),
    bk: bias.subarray(E, E + Hkv * d),
    bv: bias.subarray(E + Hkv * d),
    bo: sd['out_proj.bias'].data,
  };
  const x = normals(n * E, 5);
  const mask = new Uint8Array(n * n);
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) mask[i * n + j] = 1;
  const X = { data: x, shape: [1, n, E] };
  const ref = layer.forward(X, X, X, { attnMask: { data: mask, shape: [n, n] }, needWeights: false }).output.data;
  layer.dispose();
  const dec = createDecoder(w, E, H, Hkv, n);
  for (let i = 0; i < n; i++) {
    const y = dec.step(x.subarray(i * E, (i + 1) * E));
    assert.ok(maxDiff(y, ref.subarray(i * E, (i + 1) * E)) < 1e-5, `step ${i}`);
  }
  assert.throws(() => dec.step(x.subarray(0, E)), /cache full/);
});
