// Shared by the robustness tests (hostile, nan_policy, soak) and scripts/soak.mjs: random valid SDPA / MHA
// cases with every option (drawn from rng.mjs's generator), and a non-throwing comparison for reports. Their
// float64 references are in reference.mjs.
import { size } from './reference.mjs';

// ---------------------------------------------------------------------------------------------------------------
// Random cases. Each returns the call's arguments plus what the reference needs.

/**
 * A valid SDPA call: batch dims (0..2 of 1..3), Lq/Lk/dk/dv in 0..maxDim (sometimes 16/17/33: tile edges),
 * optional bool/float mask (broadcast or full), causal, custom scale, needWeights.
 */
export function randomSdpaCase(rng, { maxDim = 6, allowEmpty = true } = {}) {
  const nb = rng.int(0, 2);
  const batch = Array.from({ length: nb }, () => rng.int(1, 3));
  const dim = () => {
    if (rng.bool(0.03)) return rng.pick([16, 17, 33]);
    return rng.int(allowEmpty ? 0 : 1, maxDim);
  };
  const lq = dim();
  const lk = dim();
  const dk = dim();
  const dv = dim();
  const q = { data: rng.floats(size([...batch, lq, dk])), shape: [...batch, lq, dk] };
  const k = { data: rng.floats(size([...batch, lk, dk])), shape: [...batch, lk, dk] };
  const v = { data: rng.floats(size([...batch, lk, dv])), shape: [...batch, lk, dv] };
  const options = {};
  if (rng.bool(0.3)) options.isCausal = true;
  if (rng.bool(0.3)) options.scale = Math.fround(rng() * 2 - 0.5);
  if (rng.bool(0.3)) options.needWeights = false;
  if (rng.bool(0.5)) {
    const shape = rng.bool() ? [lq, lk] : [...batch, lq, lk];
    const n = size(shape);
    options.attnMask = rng.bool()
      ? { data: Uint8Array.from({ length: n }, () => (rng.bool(0.75) ? 1 : 0)), shape }
      : {
          data: Float32Array.from({ length: n }, () => (rng.bool(0.2) ? -Infinity : Math.fround(rng() * 2 - 1))),
          shape,
        };
  }
  return { q, k, v, options };
}

/**
 * A valid MHA configuration, a state dict for it and a forward call with every option.
 */
export function randomMhaCase(rng, { maxLen = 5, config: given } = {}) {
  const config = given ?? randomMhaConfig(rng);
  const { embedDim, numHeads } = config;
  const params = randomParams(rng, config);
  const batched = rng.bool(0.8);
  const n = batched ? rng.int(0, 3) : 1;
  const l = rng.int(0, maxLen);
  const s = rng.int(0, maxLen);
  const kdim = config.kdim ?? embedDim;
  const vdim = config.vdim ?? embedDim;
  const layout = (len, feat) => (!batched ? [len, feat] : config.batchFirst ? [n, len, feat] : [len, n, feat]);
  const t = (shape) => ({ data: rng.floats(size(shape)), shape });
  const query = t(layout(l, embedDim));
  const key = t(layout(s, kdim));
  const value = t(layout(s, vdim));
  // A bool mask (1 = masked out, a quarter of the entries) or a float one (-Infinity a fifth of the time).
  const mask = (shape) => {
    const length = size(shape);
    if (rng.bool()) return { data: Uint8Array.from({ length }, () => (rng.bool(0.25) ? 1 : 0)), shape };
    return {
      data: Float32Array.from({ length }, () => (rng.bool(0.2) ? -Infinity : Math.fround(rng() - 0.5))),
      shape,
    };
  };
  const options = {};
  if (rng.bool(0.4)) options.keyPaddingMask = mask(batched ? [n, s] : [s]);
  if (rng.bool(0.4)) options.attnMask = mask(rng.bool() ? [l, s] : [n * numHeads, l, s]);
  if (rng.bool(0.3)) options.needWeights = false;
  if (rng.bool(0.3)) options.averageAttnWeights = false;
  return { config, params, query, key, value, options, batched, n, l, s };
}

export function randomMhaConfig(rng) {
  const numHeads = rng.int(1, 3);
  const config = { embedDim: numHeads * rng.int(1, 3), numHeads };
  if (rng.bool(0.3)) config.bias = false;
  if (rng.bool(0.3)) config.addBiasKV = true;
  if (rng.bool(0.3)) config.addZeroAttn = true;
  if (rng.bool(0.3)) config.kdim = rng.int(1, 5);
  if (rng.bool(0.3)) config.vdim = rng.int(1, 5);
  if (rng.bool(0.5)) config.batchFirst = true;
  return config;
}

/** Parameter shapes of an MHA config, PyTorch's names. */
export function parameterShapes(config) {
  const E = config.embedDim;
  const kdim = config.kdim ?? E;
  const vdim = config.vdim ?? E;
  const bias = config.bias ?? true;
  const shapes = {};
  if (kdim === E && vdim === E) shapes.in_proj_weight = [3 * E, E];
  else Object.assign(shapes, { q_proj_weight: [E, E], k_proj_weight: [E, kdim], v_proj_weight: [E, vdim] });
  if (bias) shapes.in_proj_bias = [3 * E];
  if (config.addBiasKV) Object.assign(shapes, { bias_k: [1, 1, E], bias_v: [1, 1, E] });
  shapes['out_proj.weight'] = [E, E];
  if (bias) shapes['out_proj.bias'] = [E];
  return shapes;
}

export function randomParams(rng, config) {
  const out = {};
  for (const [name, shape] of Object.entries(parameterShapes(config))) {
    out[name] = { data: rng.floats(size(shape), -0.7, 0.7), shape };
  }
  return out;
}

/**
 * Compares a result tensor with a reference: same shape, |a - e| <= atol + rtol |e| everywhere (NaN only where
 * NaN is expected). Returns null when close, else a one-line description of the first mismatch.
 */
export function mismatch(actual, expected, { atol = 1e-5, rtol = 1e-4 } = {}) {
  if (!actual || !expected) return `missing tensor (actual ${!!actual}, expected ${!!expected})`;
  if (JSON.stringify(actual.shape) !== JSON.stringify(expected.shape)) {
    return `shape [${actual.shape}] instead of [${expected.shape}]`;
  }
  if (actual.data.length !== expected.data.length)
    return `length ${actual.data.length} instead of ${expected.data.length}`;
  for (let i = 0; i < expected.data.length; ++i) {
    const a = actual.data[i];
    const e = expected.data[i];
    const ok = Number.isNaN(e)
      ? Number.isNaN(a)
      : Number.isFinite(e)
        ? Math.abs(a - e) <= atol + rtol * Math.abs(e)
        : a === e;
    if (!ok) return `element ${i} is ${a}, expected ${e}`;
  }
  return null;
}
