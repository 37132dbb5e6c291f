// @ts-check
// Part "troubleshooting" (§9), the numbers: every row of the tutorial's table, a wrong variant next to attnlab (the
// right one) on the same numbers. Each wrong variant is attnlab called the wrong way (keys and queries swapped for
// the softmax over the wrong axis, scale 1 for the missing 1/√dₖ, 0 in place of the masked logits), except the
// first: the overflowing softmax is plain JS, since attnlab cannot overflow (it subtracts the row maximum). No DOM.

import { rng } from '../../shared/random.js';
import { entropy } from '../../shared/stats.js';
import { wrongTransposeShapes } from '../heads/compute.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */

/**
 * attnlab weights for explicit logits: Q = [[1]], K = logits as a column, scale 1 → weights = softmax(logits).
 * @param {Attnlab} attn
 * @param {number[]} logits
 * @param {number[] | null} [keep] 1 = may attend, 0 = masked
 */
export function attnSoftmax(attn, logits, keep = null) {
  const n = logits.length;
  /** @type {import('../../attnlab.js').SdpaOptions} */
  const opts = { scale: 1, needWeights: true };
  if (keep) opts.attnMask = { data: Uint8Array.from(keep), shape: [1, n] };
  const r = attn.scaledDotProductAttention(
    { data: Float32Array.of(1), shape: [1, 1] },
    { data: Float32Array.from(logits), shape: [n, 1] },
    { data: new Float32Array(n), shape: [n, 1] },
    opts,
  );
  return r.weights.data;
}

/**
 * WRONG on purpose: softmax without subtracting the row max, in float32 like the tensors; exp overflows to
 * Infinity (exp(89) already does) → NaN.
 * @param {Float32Array} X
 * @param {number} rows
 * @param {number} cols
 */
export function softmaxNoMax(X, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = 0; j < cols; j++) {
      out[i * cols + j] = Math.fround(Math.exp(X[i * cols + j]));
      s = Math.fround(s + out[i * cols + j]);
    }
    for (let j = 0; j < cols; j++) out[i * cols + j] /= s;
  }
  return out;
}

/**
 * Sum of a[o … o + n − 1].
 * @param {ArrayLike<number>} a
 */
export const sum = (a, o = 0, n = a.length) => {
  let s = 0;
  for (let j = 0; j < n; j++) s += a[o + j];
  return s;
};

/**
 * 1. NaN loss: logits (a, a − 1, a − 3) through the overflowing softmax and through attnlab.
 * @param {Attnlab} attn
 * @param {number} a
 */
export function noMax(attn, a) {
  const logits = [a, a - 1, a - 3];
  const wrong = softmaxNoMax(Float32Array.from(logits), 1, 3);
  return { logits, wrong, right: attnSoftmax(attn, logits), nans: wrong.filter(Number.isNaN).length };
}

/**
 * 2. Row sums ≠ 1: softmax over the query axis (attnlab with queries and keys swapped, then transposed back) next to
 * attnlab's weights, for random q (3, 2) and k (4, 2).
 * @param {Attnlab} attn
 * @param {number} seed
 */
export function wrongAxis(attn, seed) {
  const r = rng(seed);
  const q = Float32Array.from({ length: 6 }, r.normal);
  const k = Float32Array.from({ length: 8 }, r.normal);
  const none = (/** @type {number} */ n) => ({ data: new Float32Array(n), shape: [n, 1] });
  const right = attn.scaledDotProductAttention({ data: q, shape: [3, 2] }, { data: k, shape: [4, 2] }, none(4), {
    needWeights: true,
  }).weights.data;
  // softmax over the queries of each key's column: attnlab's rows of (k qᵀ)/√2, transposed to (3, 4)
  const byKey = attn.scaledDotProductAttention({ data: k, shape: [4, 2] }, { data: q, shape: [3, 2] }, none(3), {
    needWeights: true,
  }).weights.data;
  const wrong = new Float32Array(12);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) wrong[i * 4 + j] = byKey[j * 3 + i];
  const rowSums = (/** @type {Float32Array} */ w) => [0, 1, 2].map((i) => sum(w, i * 4, 4));
  return { wrong, right, wrongSums: rowSums(wrong), rightSums: rowSums(right) };
}

/**
 * 3. d_model not divisible by num_heads: what a hand-written Math.floor(E / H) drops, and what attnlab says.
 * @param {Attnlab} attn
 * @param {number} E
 * @param {number} H
 */
export function headsDivide(attn, E, H) {
  const positive = E >= 1 && H >= 1;
  const hd = positive ? Math.floor(E / H) : 0;
  let error = null;
  try {
    attn.createMultiHeadAttention({ embedDim: E, numHeads: H }).dispose();
  } catch (e) {
    error = e;
  }
  return { positive, hd, exact: positive && E % H === 0, used: H * hd, lost: E - H * hd, error };
}

/**
 * 4. A shape error after QKᵀ: the wrong transpose's shapes, and attnlab's weights' shape on (B, 2, 4, 4).
 * @param {Attnlab} attn
 * @param {number} B
 */
export function transposeRow(attn, B) {
  const shape = [B, 2, 4, 4];
  const x = { data: Float32Array.from({ length: B * 32 }, rng(5).normal), shape };
  const r = attn.scaledDotProductAttention(x, x, x, { needWeights: true });
  return { wrong: wrongTransposeShapes(B), shape, rightShape: r.weights.shape };
}

/** How many draws noScale takes; it shows the one of median unscaled gradient. */
export const NO_SCALE_DRAWS = 15;

/**
 * 5. Output barely changes: no 1/√dₖ (scale 1: a saturated softmax and a vanishing gradient ‖∂/∂q‖) against
 * attnlab's default scale, for one query over 8 keys of width dk. Of NO_SCALE_DRAWS seeded draws, the one whose
 * unscaled gradient is the median: a typical draw, not a lucky or an unlucky one.
 * @param {Attnlab} attn
 * @param {number} dk
 */
export function noScale(attn, dk) {
  const r = rng(7);
  const draws = Array.from({ length: NO_SCALE_DRAWS }, () => noScaleDraw(attn, dk, r));
  draws.sort((a, b) => a.wrong.grad - b.wrong.grad);
  return { ...draws[(NO_SCALE_DRAWS - 1) / 2], uniform: Math.log(8) };
}

/**
 * One draw of noScale: q, K, V and the upstream gradient from N(0, 1).
 * @param {Attnlab} attn
 * @param {number} dk
 * @param {import('../../shared/random.js').Rng} r
 */
function noScaleDraw(attn, dk, r) {
  const q = Float32Array.from({ length: dk }, r.normal);
  const k = Float32Array.from({ length: 8 * dk }, r.normal);
  const v = Float32Array.from({ length: 8 * 4 }, r.normal);
  const g = Float32Array.from({ length: 4 }, r.normal);
  /** @param {Float32Array} d @param {number[]} s */
  const T = (d, s) => ({ data: d, shape: s });
  /** @param {number | undefined} scale */
  const weights = (scale) =>
    attn.scaledDotProductAttention(T(q, [1, dk]), T(k, [8, dk]), T(v, [8, 4]), { scale, needWeights: true }).weights
      .data;
  /** @param {number | undefined} scale */
  const gradNorm = (scale) =>
    Math.hypot(
      ...attn.scaledDotProductAttentionBackward(T(q, [1, dk]), T(k, [8, dk]), T(v, [8, 4]), T(g, [1, 4]), { scale })
        .gradQuery.data,
    );
  /** @param {Float32Array} w @param {number} grad */
  const stats = (w, grad) => ({ w, max: Math.max(...w), entropy: entropy(w), grad });
  return { wrong: stats(weights(1), gradNorm(1)), right: stats(weights(undefined), gradNorm(undefined)) };
}

/** The logits of row 6. */
export const MASK_LOGITS = [1.5, 0.5, 2.0, -0.5, 1.0];

/**
 * 6. Masked positions still get weight: the last `pads` logits set to 0 instead of masked, against attnlab's mask.
 * @param {Attnlab} attn
 * @param {number} pads
 */
export function maskZero(attn, pads) {
  const n = MASK_LOGITS.length;
  const keep = MASK_LOGITS.map((_, j) => (j < n - pads ? 1 : 0));
  const wrong = attnSoftmax(
    attn,
    MASK_LOGITS.map((x, j) => (keep[j] ? x : 0)),
  );
  const right = attnSoftmax(attn, MASK_LOGITS, keep);
  return { keep, wrong, right, leak: sum(wrong, n - pads, pads), rightLeak: sum(right, n - pads, pads) };
}
