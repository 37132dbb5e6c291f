// The one seeded generator of the JS tests, scripts/soak.mjs and the bench (scripts/bench): mulberry32, small,
// and the same numbers in every engine, so a failing case can be replayed from its seed.

/** rng() gives floats in [0, 1); rng.int / pick / bool / floats draw from the same stream. */
export function makeRng(seed) {
  let a = seed >>> 0;
  const rng = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  rng.int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)); // inclusive
  rng.pick = (items) => items[Math.floor(rng() * items.length)];
  rng.bool = (p = 0.5) => rng() < p;
  rng.floats = (n, lo = -1, hi = 1) => Float32Array.from({ length: n }, () => Math.fround(lo + (hi - lo) * rng()));
  return rng;
}
