// @ts-check
// Seeded randomness, the same in every browser, worker and Node: a PRNG and a string hash for per-token seeds. The
// one home of mulberry32: the JS tests, scripts/soak.mjs and the bench draw from it too (tests/js/rng.mjs).

/**
 * @typedef {(() => number) & { int: (n: number) => number, normal: () => number }} Rng
 * A generator of uniform numbers in [0, 1), with int(n) (0 … n − 1) and normal() (N(0, 1), Box–Muller).
 */

/**
 * mulberry32: a small seeded PRNG.
 * @param {number} seed
 * @returns {Rng}
 */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** @param {number} n */
  const int = (n) => Math.floor(next() * n);
  const normal = () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return Object.assign(next, { int, normal });
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
