// The bench's inputs: one seeded state dict (E = 512), per-case q/k/v or x, uniform in a bound, and the decode
// cases' weights and tokens.
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

// The decode step's weights for Hkv key/value heads, cut from the same state dict: the query rows of the fused
// in-projection, the first Hkv·d rows of its key and value blocks, the out-projection. PyTorch's (out, in) layout.
export function decodeWeights(Hkv) {
  const kv = Hkv * D;
  const w = stateDict.in_proj_weight;
  const b = stateDict.in_proj_bias;
  return {
    wq: w.subarray(0, E * E),
    wk: w.subarray(E * E, (E + kv) * E),
    wv: w.subarray(2 * E * E, (2 * E + kv) * E),
    bq: b.subarray(0, E),
    bk: b.subarray(E, E + kv),
    bv: b.subarray(2 * E, 2 * E + kv),
    wo: stateDict['out_proj.weight'],
    bo: stateDict['out_proj.bias'],
  };
}

// A decode case's tokens: the context (C, E) that fills the cache, then the new tokens, one per step.
export function decodeInputs({ context, kvHeads, steps }) {
  const r = makeRng(context * 13 + kvHeads);
  return { prefix: uniform(context * E, 1, r), tokens: uniform(steps * E, 1, r), steps };
}
