// @ts-check
// Part "why attention" (§3), the numbers: the tutorial's sentence, and per sequence length L the path length of an
// RNN (n − 1 sequential updates from the first word to the last) against attention's one step, and the L² scores
// per head. Counting needs no attnlab call. No DOM.

/** The sentence of the picture, one token per node: per character in 中文, per word in English. */
export const SENTENCE = {
  zh: [...'这只猫因为没有及时喂食所以一直在叫'],
  en: 'the cat was not fed in time so it kept crying'.split(' '),
};

/** The sequence lengths of the cost table. */
export const LENGTHS = [8, 128, 512, 2048];

/**
 * The table's row for length L: RNN path L − 1, attention path 1, RNN sequential steps L, scores L².
 * @param {number} L
 */
export function pathRow(L) {
  return { L, rnnPath: L - 1, attnPath: 1, rnnSteps: L, scores: L * L };
}
