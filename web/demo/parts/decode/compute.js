// @ts-check
// Part "decoding", the numbers. The toy model: one grouped-query attention layer (E = 32, 4 query heads, 2 key/value heads,
// head size 8, no biases) whose weights are written by hand, not trained, so that every head does one readable
// thing. It continues a pattern of period 3 (the training part's causal task): the next token is the one 2
// positions back. Decoding runs it token by token through attnlab's KV cache (mha.createKVCache + mha.forward(x, x,
// x, { kvCache })), and every step is checked against one causal forward over the whole sequence. No DOM: the page
// and the tests use it.
//
//   x_t     = [ onehot(token_t) (8) | PE(t) (8) | 0 (16) ]            PE(t) = sin/cos(ω_f t), f = 0..3
//   K/V head 0: k = PE(j), v = onehot(token_j)     → query heads 0 and 1 (they match positions)
//   K/V head 1: k = onehot(token_j), v = onehot(token_j) → query heads 2 and 3 (they match tokens)
//   head 0: q = c·PE(t − 2)  → looks 2 back (the token to copy)     head 1: q = c·PE(t − 1) → looks 1 back
//   head 2: q = c'·onehot(token_t) → earlier copies of its token    head 3: q = 0 → the plain mean of the cache
//   out_proj writes head 0's output to x's dims 16..23; logits_v = (x + a)[16 + v]; next token = argmax.

import { causalMask } from '../../shared/inputs.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {{ token: number, next: number, output: Float32Array, weights: Float32Array }} Step */

export const VOCAB = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
/** @type {import('../../attnlab.js').MultiHeadAttentionOptions} */
export const CONFIG = { embedDim: 32, numHeads: 4, numKVHeads: 2, bias: false, batchFirst: true };
export const HEAD_DIM = 8;
export const MAX_LENGTH = 24;
const OMEGA = [1.3, 0.7, 0.37, 0.19]; // no two positions 0..30 apart look alike (Σ cos ≤ 4 − 1.05)
const C_POS = 24; // scores of the target position lead by ≥ 24 · 1.05 / √8 ≈ 8.9 after scaling
const C_TOK = 8;

/**
 * The group of query head h: the key/value head it reads (⌊h · Hkv / H⌋).
 * @param {number} h
 */
export const kvHeadOf = (h) => Math.floor((h * CONFIG.numKVHeads) / CONFIG.numHeads);

/**
 * The input row of `token` at position t (E floats).
 * @param {number} token
 * @param {number} t
 */
export function embedToken(token, t) {
  const x = new Float32Array(CONFIG.embedDim);
  x[token] = 1;
  OMEGA.forEach((w, f) => {
    x[8 + 2 * f] = Math.sin(w * t);
    x[9 + 2 * f] = Math.cos(w * t);
  });
  return x;
}

/**
 * Input rows (L × E) of a token sequence.
 * @param {number[]} tokens
 */
export function embedSequence(tokens) {
  const x = new Float32Array(tokens.length * CONFIG.embedDim);
  tokens.forEach((tok, t) => x.set(embedToken(tok, t), t * CONFIG.embedDim));
  return x;
}

/** The hand-written state dict (PyTorch's grouped-query names; see docs/api.md). */
export function stateDict() {
  const E = CONFIG.embedDim;
  const Ekv = CONFIG.numKVHeads * HEAD_DIM;
  const wq = new Float32Array(E * E);
  const wk = new Float32Array(Ekv * E);
  const wv = new Float32Array(Ekv * E);
  const wo = new Float32Array(E * E);
  // q = c · PE(t − s): the rotation of each sin/cos pair by −ω s (PE(t − s) is linear in PE(t)).
  /** @param {number} row0 @param {number} s */
  const shiftRows = (row0, s) =>
    OMEGA.forEach((w, f) => {
      const [c, sn] = [Math.cos(w * s), Math.sin(w * s)];
      const [is, ic] = [8 + 2 * f, 9 + 2 * f]; // x's sin and cos columns
      // sin(w(t − s)) = sin(wt) cos(ws) − cos(wt) sin(ws);  cos(w(t − s)) = cos(wt) cos(ws) + sin(wt) sin(ws)
      wq[(row0 + 2 * f) * E + is] = C_POS * c;
      wq[(row0 + 2 * f) * E + ic] = -C_POS * sn;
      wq[(row0 + 2 * f + 1) * E + ic] = C_POS * c;
      wq[(row0 + 2 * f + 1) * E + is] = C_POS * sn;
    });
  shiftRows(0, 2); // head 0
  shiftRows(8, 1); // head 1
  for (let d = 0; d < 8; d++) wq[(16 + d) * E + d] = C_TOK; // head 2; head 3 (rows 24..31) stays 0
  for (let d = 0; d < 8; d++) {
    wk[d * E + 8 + d] = 1; // K/V head 0: keys are positions
    wk[(8 + d) * E + d] = 1; // K/V head 1: keys are tokens
    wv[d * E + d] = 1; // both value heads carry the token
    wv[(8 + d) * E + d] = 1;
    wo[(16 + d) * E + d] = 1; // head 0's output (concat dims 0..7) → x's dims 16..23
  }
  return {
    q_proj_weight: { data: wq, shape: [E, E] },
    k_proj_weight: { data: wk, shape: [Ekv, E] },
    v_proj_weight: { data: wv, shape: [Ekv, E] },
    'out_proj.weight': { data: wo, shape: [E, E] },
  };
}

/**
 * The next token from the residual x + a of one position (E floats each): the largest of dims 16 + v.
 * @param {Float32Array} x
 * @param {Float32Array} a
 */
export function nextToken(x, a) {
  let best = 0;
  for (let v = 1; v < VOCAB.length; v++) if (x[16 + v] + a[16 + v] > x[16 + best] + a[16 + best]) best = v;
  return best;
}

/**
 * "A B C" / "ABC" → token ids, or null when a letter is not A–H or the prompt is empty or too long.
 * @param {string} text
 */
export function parsePrompt(text) {
  const letters = text.toUpperCase().replace(/[\s,]+/g, '');
  if (!letters.length || letters.length > 8) return null;
  const ids = [...letters].map((ch) => VOCAB.indexOf(ch));
  return ids.every((i) => i >= 0) ? ids : null;
}

/**
 * The model's layer twice: one with a KV cache for the steps, one for the check over the whole sequence.
 * @param {Attnlab} attn
 */
export function createModel(attn) {
  const sd = stateDict();
  const mha = attn.createMultiHeadAttention(CONFIG);
  mha.loadStateDict(sd);
  const cache = mha.createKVCache({ batchSize: 1, maxLength: MAX_LENGTH });
  const whole = attn.createMultiHeadAttention(CONFIG); // the same layer, run over the whole sequence at once
  whole.loadStateDict(sd);
  return { sd, mha, cache, whole };
}

/**
 * One decoding step: the token at position cache.length goes in; its output, its weights over the cache and the
 * model's next token come out.
 * @param {ReturnType<typeof createModel>} model
 * @param {number} token
 * @returns {Step}
 */
export function step(model, token) {
  const x = embedToken(token, model.cache.length);
  const X = { data: x, shape: [1, 1, CONFIG.embedDim] };
  const res = model.mha.forward(X, X, X, { kvCache: model.cache, needWeights: true, averageAttnWeights: false });
  return { token, next: nextToken(x, res.output.data), output: res.output.data, weights: res.weights.data };
}

/**
 * The steps so far against one causal forward over the same inputs: max |Δ| of outputs and weights, or null
 * before the first step.
 * @param {ReturnType<typeof createModel>} model
 * @param {Step[]} steps
 * @param {number[]} tokens
 */
export function check(model, steps, tokens) {
  const n = steps.length;
  if (!n) return null;
  const E = CONFIG.embedDim;
  const H = CONFIG.numHeads;
  const X = { data: embedSequence(tokens.slice(0, n)), shape: [1, n, E] };
  const ref = model.whole.forward(X, X, X, { attnMask: causalMask(n), needWeights: true, averageAttnWeights: false });
  let d = 0;
  steps.forEach((s, i) => {
    for (let e = 0; e < E; e++) d = Math.max(d, Math.abs(s.output[e] - ref.output.data[i * E + e]));
    for (let hh = 0; hh < H; hh++)
      for (let j = 0; j <= i; j++)
        d = Math.max(d, Math.abs(s.weights[hh * (i + 1) + j] - ref.weights.data[(hh * n + i) * n + j]));
  });
  return d;
}

/**
 * Head hh's map over n steps: row i is step i's weights over its i + 1 cached positions, padded to n.
 * @param {Step[]} steps
 * @param {number} hh
 */
export function headMap(steps, hh) {
  const n = steps.length;
  const data = new Float32Array(n * n);
  steps.forEach((s, i) => data.set(s.weights.subarray(hh * (i + 1), (hh + 1) * (i + 1)), i * n));
  return data;
}
