// The seeded generator of the JS tests, scripts/soak.mjs and the bench (scripts/bench): the demo's mulberry32
// (web/demo/shared/random.js, its one home), small and the same numbers in every engine, so a failing case can be
// replayed from its seed. The helpers below draw from the same stream. (The package's own generator, xoshiro128**
// in web/src/transformer.mjs, is generate's and the batch sampler's, documented in docs/api.md: another purpose.)
import { rng as mulberry32 } from '../../web/demo/shared/random.js';

/** rng() gives floats in [0, 1); rng.int / pick / bool / floats draw from the same stream. */
export function makeRng(seed) {
  const next = mulberry32(seed);
  const rng = () => next();
  rng.int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
  rng.pick = (items) => items[Math.floor(rng() * items.length)];
  rng.bool = (p = 0.5) => rng() < p;
  rng.floats = (n, lo = -1, hi = 1) => Float32Array.from({ length: n }, () => Math.fround(lo + (hi - lo) * rng()));
  return rng;
}
