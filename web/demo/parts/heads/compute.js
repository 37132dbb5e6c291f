// @ts-check
// Part "From X to heads and back" (§6.2–6.4, §7.2–7.3), the numbers: the tutorial's MultiHeadAttention(d_model=8,
// num_heads=2) on a seeded x of shape (B, 4, 8), every tensor on the way. The projections and W_O are the layer's own
// weights (stateDict()) applied on attnlab (shared/linear.js); view/transpose are index shuffles; each head's
// attention is attnlab's scaledDotProductAttention on (B, 2, 4, 4); the result is checked against the same layer's
// mha.forward. The "wrong transpose" writes K.transpose(0, 1) where K.transpose(-2, -1) belongs (§9, row 4). No DOM.

import { rng } from '../../shared/random.js';
import { linear } from '../../shared/linear.js';
import { t } from '../../i18n.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */

export const L = 4;
export const E = 8;
export const H = 2;
export const DK = E / H;

/**
 * transpose(1, 2) of a contiguous (A, B, C, D) tensor → (A, C, B, D).
 * @param {Float32Array} x
 * @param {number[]} dims [A, B, C, D]
 */
export function transpose12(x, [A, B, C, D]) {
  const y = new Float32Array(x.length);
  for (let a = 0; a < A; a++)
    for (let b = 0; b < B; b++)
      for (let c = 0; c < C; c++)
        for (let d = 0; d < D; d++) {
          y[((a * C + c) * B + b) * D + d] = x[((a * B + b) * C + c) * D + d];
        }
  return y;
}

/**
 * The matmul that Q @ K.transpose(0, 1) asks for: broadcast batch dims, inner sizes; the shape or an error text.
 * @param {number} B
 * @returns {{ q: number[], k: number[], out?: number[], error?: string }}
 */
export function wrongTransposeShapes(B) {
  const q = [B, H, L, DK];
  const k = [H, B, L, DK]; // (B, H, L, dk).transpose(0, 1): the last two dims stay (L, dk)
  const batch = [];
  for (let d = 0; d < 2; d++) {
    if (q[d] !== k[d] && q[d] !== 1 && k[d] !== 1)
      return { q, k, error: t('heads.errBatch', { a: q[d], b: k[d], dim: d }) };
    batch.push(Math.max(q[d], k[d]));
  }
  if (q[3] !== k[2]) return { q, k, error: t('heads.errInner', { a: q[3], b: k[2] }) };
  return { q, k, out: [...batch, q[2], k[3]] };
}

/**
 * Every tensor from x (B, L, E) to y = W_O(heads) and the largest difference from mha.forward(x, x, x).
 * @param {Attnlab} attn
 * @param {MultiHeadAttention} mha the layer (E = 8, 2 heads, batch first)
 * @param {number} B
 */
export function headsChain(attn, mha, B) {
  const sd = mha.stateDict();
  const [Win, bIn] = [sd.in_proj_weight.data, sd.in_proj_bias?.data];
  const x = Float32Array.from({ length: B * L * E }, rng(2024).normal);
  const N = B * L;
  /** @param {number} p 0 = Q, 1 = K, 2 = V */
  const project = (p) =>
    linear(attn, x, N, Win.subarray(p * E * E, (p + 1) * E * E), bIn ? bIn.subarray(p * E, (p + 1) * E) : null, E);
  const [Q, K, V] = [0, 1, 2].map(project); // (B, L, E)
  const [Qh, Kh, Vh] = [Q, K, V].map((m) => transpose12(m, [B, L, H, DK])); // view (B, L, H, dk) → (B, H, L, dk)
  const shape = [B, H, L, DK];
  const r = attn.scaledDotProductAttention(
    { data: Qh, shape },
    { data: Kh, shape },
    { data: Vh, shape },
    { needWeights: true },
  );
  const merged = transpose12(r.output.data, [B, H, L, DK]); // (B, L, H, dk) → view (B, L, E)
  const y = linear(attn, merged, N, sd['out_proj.weight'].data, sd['out_proj.bias']?.data ?? null, E);
  const X = { data: x, shape: [B, L, E] };
  const ref = mha.forward(X, X, X, { needWeights: false }).output.data;
  let diff = 0;
  ref.forEach((v, i) => {
    diff = Math.max(diff, Math.abs(v - y[i]));
  });
  return { B, x, Q, K, V, Qh, Kh, weights: r.weights.data, heads: r.output.data, merged, y, diff };
}

/**
 * What Q @ K.transpose(0, 1) computes when the shapes happen to fit (batch item 0, head 0): Q[0, 0] (L, dk) times
 * K'[0, 0] (L, dk) as a matrix, inner dk against L, then softmax(· / √dₖ), on attnlab (a scaledDotProductAttention
 * whose keys are that matrix transposed); and its largest difference from the right weights of that head.
 * @param {Attnlab} attn
 * @param {ReturnType<typeof headsChain>} chain
 */
export function wrongTransposeWeights(attn, chain) {
  const { B, Qh, Kh } = chain;
  const kt = new Float32Array(Kh.length); // K.transpose(0, 1): (H, B, L, dk)
  for (let a = 0; a < H; a++)
    for (let b = 0; b < B; b++)
      kt.set(Kh.subarray((b * H + a) * L * DK, (b * H + a + 1) * L * DK), (a * B + b) * L * DK);
  const keys = new Float32Array(L * DK); // keys[j, c] = K'[0, 0][c, j]
  for (let j = 0; j < L; j++) for (let c = 0; c < DK; c++) keys[j * DK + c] = kt[c * DK + j];
  const w = attn.scaledDotProductAttention(
    { data: Qh.subarray(0, L * DK), shape: [L, DK] },
    { data: keys, shape: [L, DK] },
    { data: new Float32Array(L), shape: [L, 1] },
    { needWeights: true },
  ).weights.data;
  let diff = 0;
  w.forEach((v, i) => {
    diff = Math.max(diff, Math.abs(v - chain.weights[i]));
  });
  return { weights: w, diff };
}
