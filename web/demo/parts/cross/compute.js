// @ts-check
// Part "self vs cross, batches" (§4.6, §6.1), the numbers. Self: Q = K = V from one sequence. Cross: queries from a
// short "decoder" sequence, K = V from a second, longer "encoder" sequence (weights Lq × Lk). Batched: two sequences
// in one attnlab call of shape (B, L, dₖ), checked against one call per item. Token vectors are pseudo-random (one
// fixed vector per distinct token). No DOM.

import { rng, hashString } from '../../shared/random.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */

/** The width of the token vectors. */
export const D = 8;
// Each decoder word is given a vector close to that of the source word it translates (align), as a trained model's
// projections would make them, so that its cross-attention row peaks there.
export const SEQS = {
  zh: { dec: ['猫', '在', '叫'], align: ['cat', 'is', 'crying'], enc: ['the', 'cat', 'is', 'crying', 'loudly', 'now'] },
  en: {
    dec: ['le', 'chat', 'miaule'],
    align: ['the', 'cat', 'crying'],
    enc: ['the', 'cat', 'is', 'crying', 'loudly', 'now'],
  },
};
/** The batch: B items of L tokens of dₖ features. */
export const BATCH = { B: 2, L: 4, dk: 4 };

/**
 * One fixed random direction per token (N(0, 1) entries, scaled to length √d, so that no token wins a dot product by
 * its length alone); with near, a token's vector is near's plus a little of its own, scaled the same way.
 * @param {string[]} tokens
 * @param {string[] | null} [near]
 */
export function embed(tokens, near = null, d = D) {
  const x = new Float32Array(tokens.length * d);
  tokens.forEach((tok, i) => {
    const r = rng(hashString(tok));
    const base = near ? rng(hashString(near[i])) : null;
    const v = Array.from({ length: d }, () => (base ? base.normal() + 0.3 * r.normal() : r.normal()));
    const scale = Math.sqrt(d) / Math.hypot(...v);
    v.forEach((e, c) => (x[i * d + c] = e * scale));
  });
  return x;
}

/**
 * Self- or cross-attention of the decoder's words: the weights (Lq, Lk) and the key tokens.
 * @param {Attnlab} attn
 * @param {'self' | 'cross'} mode
 * @param {{ dec: string[], align: string[], enc: string[] }} seqs
 */
export function attend(attn, mode, seqs) {
  const qTok = seqs.dec;
  const kTok = mode === 'self' ? seqs.dec : seqs.enc;
  const [Lq, Lk] = [qTok.length, kTok.length];
  const q = embed(qTok, seqs.align);
  const kv = mode === 'self' ? q : embed(kTok);
  const r = attn.scaledDotProductAttention(
    { data: q, shape: [Lq, D] },
    { data: kv, shape: [Lk, D] },
    { data: kv, shape: [Lk, D] },
    { needWeights: true },
  );
  return { qTok, kTok, Lq, Lk, weights: r.weights };
}

/**
 * A (B, L, dₖ) batch in one call against one call per item: each item's weights (L, L) and the largest difference.
 * @param {Attnlab} attn
 */
export function batchCheck(attn) {
  const { B, L, dk } = BATCH;
  const rnd = rng(42);
  const x = Float32Array.from({ length: B * L * dk }, rnd.normal);
  const all = attn.scaledDotProductAttention(
    { data: x, shape: [B, L, dk] },
    { data: x, shape: [B, L, dk] },
    { data: x, shape: [B, L, dk] },
    { needWeights: true },
  );
  let diff = 0;
  const items = [];
  for (let b = 0; b < B; b++) {
    const xb = x.subarray(b * L * dk, (b + 1) * L * dk);
    const one = attn.scaledDotProductAttention(
      { data: xb, shape: [L, dk] },
      { data: xb, shape: [L, dk] },
      { data: xb, shape: [L, dk] },
      { needWeights: true },
    );
    const wb = all.weights.data.subarray(b * L * L, (b + 1) * L * L);
    one.weights.data.forEach((v, i) => {
      diff = Math.max(diff, Math.abs(v - wb[i]));
    });
    items.push(wb);
  }
  return { items, diff };
}
