// @ts-check
// The package's seeded generator, JavaScript's one (docs/api.md, "Random numbers"): xoshiro128** (Blackman and
// Vigna), its state from splitmix32 over the seed's two 32-bit halves. generate's sampler (generation.mjs) and
// train's batch sampler (training.mjs) draw from it, and so do the demo, the JS tests, scripts/soak.mjs and the
// bench through the public createRng: the same seed draws the same numbers in every engine, page and worker.

import { describe, readSafeInteger } from './validate.mjs';

/** The largest n of rng.int(n): a draw has 32 random bits. */
const kMaxIntBound = 2 ** 32;

/**
 * xoshiro128** seeded from a non-negative safe integer: a function giving the next uniform number in [0, 1)
 * (a multiple of 2^-32).
 * @param {number} seed
 * @returns {() => number}
 */
function xoshiro128(seed) {
  let x = (seed >>> 0) ^ 0x9e3779b9;
  let y = Math.floor(seed / 2 ** 32) >>> 0;
  const splitmix = () => {
    x = (x + 0x9e3779b9) | 0;
    let z = x ^ y;
    y = (y + 0x632be5ab) | 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  const s = [splitmix(), splitmix(), splitmix(), splitmix()];
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  return () => {
    const result = Math.imul(((Math.imul(s[1], 5) << 7) | (Math.imul(s[1], 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 11) | (s[3] >>> 21);
    return result / 2 ** 32;
  };
}

/**
 * A seeded generator: rng() gives the next uniform number in [0, 1); rng.int(n) an integer in 0 … n − 1
 * (floor(rng() · n)); rng.normal() a standard normal number (Box–Muller, two draws). All three draw from one stream.
 * @param {number} [seed] a non-negative safe integer (default 0)
 * @returns {(() => number) & { int: (n: number) => number, normal: () => number }} (index.d.ts's Rng)
 */
export function createRng(seed) {
  const next = xoshiro128(readSafeInteger('createRng', seed, 'seed', 0));
  /** @param {number} n */
  const int = (n) => {
    if (typeof n !== 'number') throw new TypeError(`rng.int: n must be a number, got ${describe(n)}`);
    if (!Number.isInteger(n) || n < 1 || n > kMaxIntBound) {
      throw new RangeError(`rng.int: n must be an integer in [1, 2^32], got ${n}`);
    }
    return Math.floor(next() * n);
  };
  const normal = () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return Object.assign(next, { int, normal });
}
