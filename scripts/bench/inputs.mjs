// The bench's inputs: one seeded state dict (E = 512) and per-case q/k/v or x, uniform in a bound.
import { makeRng } from '../../tests/js/rng.mjs';
import { D, E, H } from './config.mjs';

export function uniform(n, bound, rng) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; ++i) a[i] = (rng() * 2 - 1) * bound;
  return a;
}

const rng = makeRng(20240605);
export const stateDict = {
  in_proj_weight: uniform(3 * E * E, Math.sqrt(6 / (4 * E)), rng), // xavier_uniform bound for (3E, E)
  in_proj_bias: uniform(3 * E, 0.1, rng),
  'out_proj.weight': uniform(E * E, 1 / Math.sqrt(E), rng),
  'out_proj.bias': uniform(E, 0.1, rng),
};
export function makeInputs({ op, L }) {
  const r = makeRng(L * 7 + (op === 'MHA' ? 1 : 0));
  if (op === 'SDPA') return { q: uniform(H * L * D, 1, r), k: uniform(H * L * D, 1, r), v: uniform(H * L * D, 1, r) };
  return { x: uniform(L * E, 1, r) };
}
