// @ts-check
// Part "simplified attention" (§2.2–2.3), the numbers: the tutorial's sentence as words, a score per word set by
// hand for the word 叫, softmax → weights, and the weighted sum of the words' vectors. No Q, K or V yet: attnlab
// gets the scores as one-number keys of a one-number query 1 (q·kⱼ = sⱼ at scale 1), so its weights are the
// softmax of the scores and its output the mixed vector. No DOM.

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */

/** The sentence of §2.3 in words (one token each), with an English gloss; the last word is 叫, the one we process. */
export const WORDS = [
  ['这只', 'this'],
  ['猫', 'cat'],
  ['因为', 'because'],
  ['没有', 'not'],
  ['及时', 'in time'],
  ['喂食', 'fed'],
  ['所以', 'so'],
  ['一直', 'keeps'],
  ['在', '(-ing)'],
  ['叫', 'crying'],
];

/** The features of the made-up word vectors: the catalogue's simple.feature.<name>. */
export const FEATURES = ['animal', 'sound', 'cause', 'function'];

/**
 * Each word's vector over FEATURES, written by hand (not learned) so that the mix can be read.
 * 叫 itself is a sound; 猫 an animal; 喂食 and 没有…及时 say why; 因为, 所以, 这只, 在 are function words.
 */
export const VECTORS = [
  [0.2, 0, 0, 0.8],
  [1, 0.1, 0, 0],
  [0, 0, 0.5, 1],
  [0, 0, 0.6, 0.3],
  [0, 0, 0.5, 0.2],
  [0.3, 0, 1, 0],
  [0, 0, 0.4, 1],
  [0, 0.2, 0, 0.6],
  [0, 0, 0, 1],
  [0.1, 1, 0, 0],
];

/** Score presets: the tutorial's (猫 high, 喂食 medium, 因为 low), all equal, and all close together. */
export const PRESETS = {
  tutorial: [0, 3, -1, 0.5, 0.5, 1.5, -1, 0.5, 0, 1],
  equal: WORDS.map(() => 0),
  close: [0.1, 0.2, 0.1, 0.1, 0.1, 0.15, 0.1, 0.1, 0.1, 0.1],
};

/**
 * Weights and the mixed vector for the scores, from one attnlab call: query (1, 1) = [1], keys (n, 1) = the
 * scores, values (n, F) = VECTORS, scale 1, so the scores reach softmax unchanged.
 * @param {Attnlab} attn
 * @param {number[]} scores one per word
 */
export function mix(attn, scores) {
  const n = scores.length;
  const r = attn.scaledDotProductAttention(
    { data: Float32Array.of(1), shape: [1, 1] },
    { data: Float32Array.from(scores), shape: [n, 1] },
    { data: Float32Array.from(VECTORS.flat()), shape: [n, FEATURES.length] },
    { scale: 1, needWeights: true },
  );
  return { weights: Array.from(r.weights.data), output: Array.from(r.output.data), uniform: 1 / n };
}

/**
 * The residual connection (every Transformer block adds its input back, §7): 叫's own vector plus the weighted sum,
 * feature by feature. The word keeps what it was and gains its context; the sum alone would replace it.
 * @param {number[]} output  mix()'s weighted sum
 */
export const withResidual = (output) => output.map((o, f) => VECTORS[VECTORS.length - 1][f] + o);

/** Softmax turns a score difference Δ into a weight ratio e^Δ. @param {number} delta */
export const weightRatio = (delta) => Math.exp(delta);

/**
 * Two scores a > b > 0 shared out by softmax and in proportion to the scores: with a gap well below 1 softmax is
 * flatter than proportional shares (0.2, 0.1 → 0.525 vs 0.667), with a gap of 1 or more it is sharper.
 * @param {number} a
 * @param {number} b
 */
export function softmaxVsProportional(a, b) {
  const ea = Math.exp(a - Math.max(a, b));
  const eb = Math.exp(b - Math.max(a, b));
  return { softmax: [ea / (ea + eb), eb / (ea + eb)], proportional: [a / (a + b), b / (a + b)] };
}

/**
 * "Guess first": how many times the weight ratio of words a and b grows when a's score grows by `by`, the others
 * unchanged: two attnlab calls (e^by, whatever the other scores are).
 * @param {Attnlab} attn
 * @param {number[]} scores
 * @param {number} a
 * @param {number} b
 * @param {number} [by]
 */
export function ratioGain(attn, scores, a, b, by = 1) {
  const w0 = mix(attn, scores).weights;
  const w1 = mix(
    attn,
    scores.map((s, j) => (j === a ? s + by : s)),
  ).weights;
  return w1[a] / w1[b] / (w0[a] / w0[b]);
}

/** The index of the largest weight. @param {number[]} w */
export const argmax = (w) => w.indexOf(Math.max(...w));
