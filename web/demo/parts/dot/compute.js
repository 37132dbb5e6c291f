// @ts-check
// Part "Q/K/V and the dot product" (§4.2–4.3), the numbers: a query q and three keys in 2-D; attnlab gives the dot
// products q·kⱼ (returnScores 'scaled' at scale 1) and the weights softmax(q·kⱼ/√2) (V = the identity, so the
// output row is the weights: each book's share); the angle between q and kⱼ is drawn from them. No DOM.

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {{ q: number[], k0: number[], k1: number[], k2: number[] }} Vectors */

/** The plane shows [-R, R]². */
export const R = 2.5;
/** Where the vectors start. */
export const START = { q: [1.5, 0.8], k0: [1.8, 0.6], k1: [-0.4, 1.6], k2: [-1.2, -1.4] };

/**
 * A vector moved to (x, y), kept on the plane.
 * @param {number} x
 * @param {number} y
 */
export const clampToPlane = (x, y) => [Math.max(-R, Math.min(R, x)), Math.max(-R, Math.min(R, y))];

/**
 * Per key j: the dot product q·kⱼ, the angle between them (degrees) and the weight, all from one query.
 * @param {Attnlab} attn
 * @param {Vectors} vec
 */
export function readout(attn, vec) {
  const q = { data: Float32Array.from(vec.q), shape: [1, 2] };
  const k = { data: Float32Array.from([...vec.k0, ...vec.k1, ...vec.k2]), shape: [3, 2] };
  const identity = { data: Float32Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1), shape: [3, 3] };
  const w = attn.scaledDotProductAttention(q, k, identity, { needWeights: true }).weights.data;
  const dots = attn.scaledDotProductAttention(q, k, identity, { scale: 1, needWeights: false, returnScores: 'scaled' })
    .scores.data;
  const nq = Math.hypot(...vec.q);
  const rows = [0, 1, 2].map((j) => {
    const kj = vec[/** @type {'k0' | 'k1' | 'k2'} */ (`k${j}`)];
    const cos = dots[j] / (nq * Math.hypot(...kj) || 1);
    return { j, dot: dots[j], angle: (Math.acos(Math.max(-1, Math.min(1, cos))) * 180) / Math.PI, w: w[j] };
  });
  return { rows, weights: w };
}

/**
 * "Guess first": q twice as long, same direction. Every score doubles, so every gap Δ doubles and each weight ratio
 * e^Δ is squared: the largest weight grows (it stays put only when all scores are equal). Both from attnlab.
 * @param {Attnlab} attn
 * @param {Vectors} vec
 */
export function doubledQuery(attn, vec) {
  const before = Array.from(readout(attn, vec).weights);
  const after = Array.from(readout(attn, { ...vec, q: vec.q.map((x) => 2 * x) }).weights);
  const j = before.indexOf(Math.max(...before));
  return { j, before: before[j], after: after[j], grows: after[j] > before[j] + 1e-6 };
}
