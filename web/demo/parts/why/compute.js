// @ts-check
// Part "why attention" (§3), the numbers: the tutorial's sentence, and per sequence length L the path length of an
// RNN (n − 1 sequential updates from the first word to the last) against attention's one step, and the L² scores
// per head; §3.2's CNN: the layers of width-3 convolutions until two words share a receptive field. Counting needs
// no attnlab call. No DOM.

/** The sentence of the picture, one token per node: per character in 中文, per word in English. */
export const SENTENCE = {
  zh: [...'这只猫因为没有及时喂食所以一直在叫'],
  en: 'the cat was not fed in time so it kept crying'.split(' '),
};

/** The convolution of §3.2's comparison: a window of 3 (a 3×3 kernel's width along the sentence), stride 1. */
export const KERNEL = 3;

/**
 * Receptive field of a stack of stride-1 convolutions of width k: one output sees 1 + layers·(k − 1) inputs.
 * @param {number} layers
 * @param {number} [k]
 */
export const receptiveField = (layers, k = KERNEL) => 1 + layers * (k - 1);

/**
 * Layers of width-k convolutions until two positions d apart first fall in one receptive field (some output sees
 * both): ⌈d / (k − 1)⌉. One attention layer links them for any d ≥ 1.
 * @param {number} d
 * @param {number} [k]
 */
export const cnnLayers = (d, k = KERNEL) => Math.ceil(d / (k - 1));

/** The two words the tutorial links (§2.3: 猫 for 叫), as positions in SENTENCE, per language. */
export const LINKED = { zh: [2, 16], en: [1, 10] };

/** The sequence lengths of the cost table. */
export const LENGTHS = [8, 128, 512, 2048];

/**
 * The table's row for length L: RNN path L − 1, attention path 1, RNN sequential steps L, the width-3 convolution
 * layers until the first and the last word share a receptive field, scores L².
 * @param {number} L
 */
export function pathRow(L) {
  return { L, rnnPath: L - 1, attnPath: 1, rnnSteps: L, cnnLayers: cnnLayers(L - 1), scores: L * L };
}
