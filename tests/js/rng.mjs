// The seeded generator of the JS tests, scripts/soak.mjs and the bench (scripts/bench): the package's createRng
// (web/src/rng.mjs, xoshiro128**: the one JS generator, which generate, train's sampler and the demo draw from), the
// same numbers in every engine, so a failing case can be replayed from its seed. The helpers below draw from the
// same stream. Imported from its own module (the package exports it as createRng), so that a page that loads this
// file, as tests/js/viz.test.mjs's does, loads no other part of attnlab than the generator and its argument checks.
import { createRng } from '../../dist/rng.mjs';

/** rng() gives floats in [0, 1); rng.int / pick / bool / floats draw from the same stream. */
export function makeRng(seed) {
  const next = createRng(seed);
  const rng = () => next();
  rng.int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
  rng.pick = (items) => items[Math.floor(rng() * items.length)];
  rng.bool = (p = 0.5) => rng() < p;
  rng.floats = (n, lo = -1, hi = 1) => Float32Array.from({ length: n }, () => Math.fround(lo + (hi - lo) * rng()));
  return rng;
}
