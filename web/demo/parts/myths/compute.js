// @ts-check
// Part "misconceptions" (§8), the numbers, all from attnlab: 8.1 an untrained layer's weights are close to uniform;
// 8.2 weights α_ij next to two interventions (zero v_j, mask key j); 8.3 Q, K, V are projections of x, not x; 8.4 the
// attention step has no parameters (they live in the projections); 8.5 more heads split the same width into thinner
// heads. No DOM.

import { rng } from '../../shared/random.js';
import { entropy } from '../../shared/stats.js';
import { linear } from '../../shared/linear.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').Tensor} Tensor */

export const E = 8;
export const L = 6;

/**
 * @param {ArrayLike<number>} arr
 */
export const argmaxOf = (arr) => {
  const a = Array.from(arr);
  return a.indexOf(Math.max(...a));
};

/**
 * 8.1, 8.3 and 8.4 on one freshly initialised layer (E = 8, 2 heads) and a seeded x (1, L, E): head 0's weights, the
 * mean row entropy against uniform ln L, x₀ with its q₀, k₀, v₀, and the layer's parameters.
 * @param {Attnlab} attn
 */
export function freshLayer(attn) {
  const x = Float32Array.from({ length: L * E }, rng(81).normal);
  const tx = { data: x, shape: [1, L, E] };
  const fresh = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true });
  try {
    const w = fresh.forward(tx, tx, tx, { averageAttnWeights: false }).weights.data; // (1, 2, L, L)
    let ent = 0;
    for (let r = 0; r < 2 * L; r++) ent += entropy(w, r * L, L) / (2 * L);
    const sd = fresh.stateDict();
    const W = sd.in_proj_weight.data;
    const x0 = x.subarray(0, E);
    /** @param {number} p 0 = W_Q, 1 = W_K, 2 = W_V */
    const project = (p) => linear(attn, x0, 1, W.subarray(p * E * E, (p + 1) * E * E), null, E);
    const rows = Float32Array.from([...x0, ...project(0), ...project(1), ...project(2)]);
    const params = Object.entries(sd).map(([name, tensor]) => ({
      name,
      shape: tensor.shape,
      size: tensor.data.length,
    }));
    return { head0: w.subarray(0, L * L), entropy: ent, uniform: Math.log(L), rows, params };
  } finally {
    fresh.dispose();
  }
}

/**
 * 8.2: one query over four keys (scale 1): each key's weight α₀ⱼ, ‖vⱼ‖, ‖α₀ⱼ·vⱼ‖ (how far the output moves when vⱼ
 * is zeroed) and how far it moves when key j is masked (the softmax renormalises over the other keys): two
 * interventions, two different rankings. The most-weighted key's value is short.
 * @param {Attnlab} attn
 */
export function weightVsContribution(attn) {
  const V = Float32Array.of(0.05, 0.02, 1.5, -0.8, 1.0, 1.1, -0.6, 0.9);
  /** @param {Uint8Array | null} mask 1 = attend */
  const run = (mask) =>
    attn.scaledDotProductAttention(
      { data: Float32Array.of(1, 0), shape: [1, 2] },
      { data: Float32Array.of(1.2, 0, 0.6, 0.2, 0.3, -0.2, 0, 0.4), shape: [4, 2] },
      { data: V, shape: [4, 2] },
      { needWeights: true, scale: 1, attnMask: mask && { data: mask, shape: [4] } },
    );
  const full = run(null);
  const a = full.weights.data;
  const o = full.output.data;
  const norms = [0, 1, 2, 3].map((j) => Math.hypot(V[2 * j], V[2 * j + 1]));
  const contrib = norms.map((n, j) => a[j] * n);
  const maskEffect = [0, 1, 2, 3].map((j) => {
    const oj = run(Uint8Array.from([0, 1, 2, 3], (i) => (i === j ? 0 : 1))).output.data;
    return Math.hypot(o[0] - oj[0], o[1] - oj[1]);
  });
  return {
    weights: a,
    norms,
    contrib,
    maskEffect,
    topWeight: argmaxOf(a),
    topContribution: argmaxOf(contrib),
    topMaskEffect: argmaxOf(maskEffect),
    // where the most-weighted key stands in each ranking (1 = first): the rankings differ on it
    rankOfTop: {
      contrib: rankOf(contrib, argmaxOf(a)),
      mask: rankOf(maskEffect, argmaxOf(a)),
    },
  };
}

/**
 * The place of entry i when the values are sorted largest first (1 = the largest; ties share the better place).
 * @param {ArrayLike<number>} values
 * @param {number} i
 */
export function rankOf(values, i) {
  if (!Number.isInteger(i) || i < 0 || i >= values.length) throw new RangeError(`i: ${i} is not an index of values`);
  return 1 + Array.from(values).filter((v) => v > values[i]).length;
}

/**
 * 8.5: E = 16 with 1 … 16 heads: each head's width and the (unchanged) parameter count.
 * @param {Attnlab} attn
 */
export function headCounts(attn) {
  const E5 = 16;
  return [1, 2, 4, 8, 16].map((H) => {
    const mh = attn.createMultiHeadAttention({ embedDim: E5, numHeads: H });
    const sdh = mh.stateDict();
    mh.dispose();
    return { H, dk: E5 / H, params: Object.values(sdh).reduce((s, v) => s + v.data.length, 0) };
  });
}
