// @ts-check
// Part "why √dₖ" (§4.4), the numbers: random Q, K with growing dₖ; the mean largest weight and row entropy, with
// and without 1/√dₖ, from attnlab's scaledDotProductAttention (scale = 1/√dₖ vs scale = 1), and the gradient
// ‖∂/∂q‖ over many draws from its backward pass. No DOM.

import { rng } from '../../shared/random.js';
import { entropy } from '../../shared/stats.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */

/** The dₖ of the charts' x axis. */
export const DKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/**
 * @param {Attnlab} attn
 * @param {{ keys?: number, queries?: number, seed?: number }} [options]
 */
export function dkLabData(attn, { keys = 16, queries = 32, seed = 1 } = {}) {
  const r = rng(seed);
  const out = {
    dk: DKS,
    keys,
    scaled: { maxWeight: /** @type {number[]} */ ([]), entropy: /** @type {number[]} */ ([]) },
    unscaled: { maxWeight: /** @type {number[]} */ ([]), entropy: /** @type {number[]} */ ([]) },
  };
  for (const dk of DKS) {
    const q = Float32Array.from({ length: queries * dk }, r.normal);
    const k = Float32Array.from({ length: keys * dk }, r.normal);
    const v = new Float32Array(keys);
    for (const [name, scale] of /** @type {['scaled' | 'unscaled', number | undefined][]} */ ([
      ['scaled', undefined],
      ['unscaled', 1],
    ])) {
      const { weights } = attn.scaledDotProductAttention(
        { data: q, shape: [queries, dk] },
        { data: k, shape: [keys, dk] },
        { data: v, shape: [keys, 1] },
        { scale, needWeights: true },
      );
      let mx = 0;
      let en = 0;
      for (let i = 0; i < queries; i++) {
        let m = 0;
        for (let j = 0; j < keys; j++) m = Math.max(m, weights.data[i * keys + j]);
        mx += m;
        en += entropy(weights.data, i * keys, keys);
      }
      out[name].maxWeight.push(mx / queries);
      out[name].entropy.push(en / queries);
    }
  }
  return out;
}

/**
 * "Guess first": the spread of unscaled scores. `n` random queries and keys of dₖ N(0, 1) entries each, their n × n
 * dot products from attnlab (returnScores 'scaled' at scale 1) and the standard deviation of those scores: it grows
 * like √dₖ (a sum of dₖ products of variance 1 has variance dₖ).
 * @param {Attnlab} attn
 * @param {number} dk
 * @param {{ n?: number, seed?: number }} [options]
 */
export function scoreSpread(attn, dk, { n = 64, seed = 7 } = {}) {
  const r = rng(seed);
  const q = Float32Array.from({ length: n * dk }, r.normal);
  const k = Float32Array.from({ length: n * dk }, r.normal);
  const { scores } = attn.scaledDotProductAttention(
    { data: q, shape: [n, dk] },
    { data: k, shape: [n, dk] },
    { data: new Float32Array(n), shape: [n, 1] },
    { scale: 1, needWeights: false, returnScores: 'scaled' },
  );
  const s = scores.data;
  const mean = s.reduce((a, x) => a + x, 0) / s.length;
  const std = Math.sqrt(s.reduce((a, x) => a + (x - mean) ** 2, 0) / s.length);
  return { dk, n, std, q, k };
}

/** The dₖ pair of the "guess first" question: 16 → 256, 16 times longer vectors, √16 = 4 times the spread. */
export const GUESS_DKS = [16, 256];

/** @param {number[]} xs sorted */
const median = (xs) => (xs[(xs.length - 1) >> 1] + xs[xs.length >> 1]) / 2;

/**
 * ‖∂/∂q‖ of sum(output ⊙ g) for one query over 8 keys, dₖ in DKS, `draws` independent draws of q, K, V (dᵥ 4) and
 * g, all N(0, 1), in one batched backward call per dₖ and scale: the median, the mean and the share of draws below
 * 0.01. One draw says little: unscaled, most draws get almost no gradient while a few get a large one (the top two
 * scores happen to be close), so the mean stays up while the median collapses.
 * @param {Attnlab} attn
 * @param {{ draws?: number, seed?: number }} [options]
 */
export function gradData(attn, { draws = 200, seed = 1 } = {}) {
  const K = 8;
  const dv = 4;
  /** @typedef {{ median: number[], mean: number[], small: number[] }} GradSeries */
  const out = {
    dk: DKS,
    draws,
    scaled: /** @type {GradSeries} */ ({ median: [], mean: [], small: [] }),
    unscaled: /** @type {GradSeries} */ ({ median: [], mean: [], small: [] }),
  };
  const r = rng(seed);
  for (const dk of DKS) {
    const T = (/** @type {number} */ n, /** @type {number[]} */ shape) => ({
      data: Float32Array.from({ length: n }, r.normal),
      shape,
    });
    const [q, k, v, g] = [T(draws * dk, [draws, 1, dk]), T(draws * K * dk, [draws, K, dk])].concat([
      T(draws * K * dv, [draws, K, dv]),
      T(draws * dv, [draws, 1, dv]),
    ]);
    for (const [name, scale] of /** @type {['scaled' | 'unscaled', number | undefined][]} */ ([
      ['scaled', undefined],
      ['unscaled', 1],
    ])) {
      const gq = attn.scaledDotProductAttentionBackward(q, k, v, g, { scale }).gradQuery.data;
      const norms = Array.from({ length: draws }, (_, i) => Math.hypot(...gq.subarray(i * dk, (i + 1) * dk)));
      norms.sort((a, b) => a - b);
      out[name].median.push(median(norms));
      out[name].mean.push(norms.reduce((a, b) => a + b, 0) / draws);
      out[name].small.push(norms.filter((x) => x < 0.01).length / draws);
    }
  }
  return out;
}

/**
 * The keys box's value as a key count: a whole number in [2, 64], 16 when empty.
 * @param {string} value
 */
export const keyCount = (value) => Math.max(2, Math.min(64, Math.round(Number(value) || 16)));
