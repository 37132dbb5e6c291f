// @ts-check
// Part "why √dₖ" (§4.4), the numbers: random Q, K with growing dₖ; the mean largest weight and row entropy, with
// and without 1/√dₖ, from attnlab's scaledDotProductAttention (scale = 1/√dₖ vs scale = 1). No DOM.

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
 * The keys box's value as a key count: a whole number in [2, 64], 16 when empty.
 * @param {string} value
 */
export const keyCount = (value) => Math.max(2, Math.min(64, Math.round(Number(value) || 16)));
