// @ts-check
// Seeded randomness, the same in every browser, worker and Node: the package's generator (createRng, xoshiro128**:
// the one JS generator, which generate and train sample with; the JS tests, scripts/soak.mjs and the bench draw from
// it too, through tests/js/rng.mjs) and a string hash for per-token seeds.

import { createRng } from '../attnlab.js';

/**
 * @typedef {import('../attnlab.js').Rng} Rng
 * A generator of uniform numbers in [0, 1), with int(n) (0 … n − 1) and normal() (N(0, 1), Box–Muller).
 */

/**
 * The package's seeded generator.
 * @param {number} seed a non-negative safe integer
 * @returns {Rng}
 */
export function rng(seed) {
  return createRng(seed);
}

/**
 * FNV-1a hash of a string: stable seeds for per-token pseudo-embeddings.
 * @param {string} s
 */
export function hashString(s) {
  let h = 0x811c9dc5;
  for (const ch of s) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
