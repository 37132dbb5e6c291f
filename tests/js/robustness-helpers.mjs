// Shared by the robustness tests (hostile, nan_policy, soak) and scripts/soak.mjs: a seeded generator, random
// valid SDPA / MHA cases with every option, and float64 references of both that follow docs/robustness.md
// (a masked or causally hidden key contributes nothing; a row with no attended key is 0).

/** Mulberry32: a small seeded generator; rng() in [0, 1). */
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

export const size = (shape) => shape.reduce((a, b) => a * b, 1);

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
      : { data: Float32Array.from({ length: n }, () => (rng.bool(0.2) ? -Infinity : Math.fround(rng() * 2 - 1))), shape };
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
  const options = {};
  if (rng.bool(0.4)) {
    const shape = batched ? [n, s] : [s];
    options.keyPaddingMask = rng.bool()
      ? { data: Uint8Array.from({ length: size(shape) }, () => (rng.bool(0.25) ? 1 : 0)), shape }
      : { data: Float32Array.from({ length: size(shape) }, () => (rng.bool(0.2) ? -Infinity : Math.fround(rng() - 0.5))), shape };
  }
  if (rng.bool(0.4)) {
    const shape = rng.bool() ? [l, s] : [n * numHeads, l, s];
    options.attnMask = rng.bool()
      ? { data: Uint8Array.from({ length: size(shape) }, () => (rng.bool(0.25) ? 1 : 0)), shape }
      : { data: Float32Array.from({ length: size(shape) }, () => (rng.bool(0.2) ? -Infinity : Math.fround(rng() - 0.5))), shape };
  }
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

// ---------------------------------------------------------------------------------------------------------------
// float64 references.

/** Softmax over the attended keys of one row: logits[j] with attended[j]; weights (0 where not attended). */
function softmaxRow(logits, attended) {
  let max = -Infinity;
  for (let j = 0; j < logits.length; ++j) if (attended[j]) max = Math.max(max, logits[j]);
  const w = new Float64Array(logits.length);
  if (max === -Infinity) return w; // nothing attended: zeros
  let sum = 0;
  for (let j = 0; j < logits.length; ++j) if (attended[j]) sum += w[j] = Math.exp(logits[j] - max);
  for (let j = 0; j < logits.length; ++j) w[j] /= sum;
  return w;
}

/** SDPA: same arguments as attn.scaledDotProductAttention. Returns { output, weights } (Float64Array data). */
export function sdpaRef(q, k, v, options = {}) {
  const r = q.shape.length;
  const batchShape = q.shape.slice(0, r - 2);
  const batch = size(batchShape);
  const [lq, dk] = q.shape.slice(r - 2);
  const lk = k.shape[r - 2];
  const dv = v.shape[r - 1];
  const scale = options.scale ?? (dk > 0 ? Math.fround(1 / Math.sqrt(Math.fround(dk))) : 1);
  const m = options.attnMask;
  const broadcast = m && m.shape.length === 2 && r !== 2;
  const output = new Float64Array(batch * lq * dv);
  const weights = new Float64Array(batch * lq * lk);
  for (let b = 0; b < batch; ++b) {
    for (let i = 0; i < lq; ++i) {
      const logits = new Float64Array(lk);
      const attended = new Array(lk).fill(true);
      for (let j = 0; j < lk; ++j) {
        let dot = 0;
        for (let d = 0; d < dk; ++d) dot += q.data[(b * lq + i) * dk + d] * k.data[(b * lk + j) * dk + d];
        let bias = 0;
        if (m) {
          const x = m.data[((broadcast ? 0 : b) * lq + i) * lk + j];
          bias = m.data instanceof Uint8Array ? (x ? 0 : -Infinity) : x;
        }
        logits[j] = dot * scale + bias;
        if ((options.isCausal && j > i) || bias === -Infinity) attended[j] = false;
      }
      const w = softmaxRow(logits, attended);
      for (let j = 0; j < lk; ++j) {
        weights[(b * lq + i) * lk + j] = w[j];
        if (!attended[j]) continue;
        for (let d = 0; d < dv; ++d) output[(b * lq + i) * dv + d] += w[j] * v.data[(b * lk + j) * dv + d];
      }
    }
  }
  return {
    output: { data: output, shape: [...batchShape, lq, dv] },
    weights: { data: weights, shape: [...batchShape, lq, lk] },
  };
}

/** nn.MultiheadAttention forward (eval): config and params as given to attnlab, arguments as mha.forward. */
export function mhaRef(config, params, query, key, value, options = {}) {
  const E = config.embedDim;
  const H = config.numHeads;
  const hd = E / H;
  const kdim = config.kdim ?? E;
  const vdim = config.vdim ?? E;
  const batched = query.shape.length === 3;
  const bf = config.batchFirst || !batched;
  const n = !batched ? 1 : config.batchFirst ? query.shape[0] : query.shape[1];
  const l = !batched ? query.shape[0] : config.batchFirst ? query.shape[1] : query.shape[0];
  const s = !batched ? key.shape[0] : config.batchFirst ? key.shape[1] : key.shape[0];
  const tok = (b, t, len) => (bf ? b * len + t : t * n + b);
  const P = (name) => params[name]?.data;
  const packed = P('in_proj_weight');
  const W = [
    packed ? packed.subarray(0, E * E) : P('q_proj_weight'),
    packed ? packed.subarray(E * E, 2 * E * E) : P('k_proj_weight'),
    packed ? packed.subarray(2 * E * E) : P('v_proj_weight'),
  ];
  const inDims = [E, kdim, vdim];
  const bIn = P('in_proj_bias');
  const Wo = P('out_proj.weight');
  const bo = P('out_proj.bias');
  const project = (x, off, part) => {
    const out = new Float64Array(E);
    const din = inDims[part];
    for (let o = 0; o < E; ++o) {
      let acc = bIn ? bIn[part * E + o] : 0;
      for (let c = 0; c < din; ++c) acc += x[off + c] * W[part][o * din + c];
      out[o] = acc;
    }
    return out;
  };
  const sAll = s + (config.addBiasKV ? 1 : 0) + (config.addZeroAttn ? 1 : 0);
  const average = options.averageAttnWeights ?? true;
  const output = new Float64Array(n * l * E);
  const weights = new Float64Array(average ? n * l * sAll : n * H * l * sAll);
  const kpm = options.keyPaddingMask;
  const am = options.attnMask;
  const maskVal = (m, idx) => (m.data instanceof Uint8Array ? (m.data[idx] ? -Infinity : 0) : m.data[idx]);
  const scale = Math.fround(1 / Math.sqrt(Math.fround(hd)));
  for (let b = 0; b < n; ++b) {
    const kp = [];
    const vp = [];
    for (let j = 0; j < s; ++j) {
      kp.push(project(key.data, tok(b, j, s) * kdim, 1));
      vp.push(project(value.data, tok(b, j, s) * vdim, 2));
    }
    if (config.addBiasKV) {
      kp.push(Float64Array.from(P('bias_k')));
      vp.push(Float64Array.from(P('bias_v')));
    }
    if (config.addZeroAttn) {
      kp.push(new Float64Array(E));
      vp.push(new Float64Array(E));
    }
    for (let i = 0; i < l; ++i) {
      const qp = project(query.data, tok(b, i, l) * E, 0);
      const ctx = new Float64Array(E);
      for (let h = 0; h < H; ++h) {
        const logits = new Float64Array(sAll);
        const attended = new Array(sAll).fill(true);
        for (let j = 0; j < sAll; ++j) {
          let dot = 0;
          for (let d = h * hd; d < (h + 1) * hd; ++d) dot += qp[d] * kp[j][d];
          let bias = 0;
          if (j < s) {
            if (am) bias += maskVal(am, (am.shape.length === 2 ? 0 : (b * H + h) * l * s) + i * s + j);
            if (kpm) bias += maskVal(kpm, b * s + j);
          }
          logits[j] = dot * scale + bias;
          if (bias === -Infinity) attended[j] = false;
        }
        const w = softmaxRow(logits, attended);
        for (let j = 0; j < sAll; ++j) {
          if (average) weights[(b * l + i) * sAll + j] += w[j] / H;
          else weights[((b * H + h) * l + i) * sAll + j] = w[j];
          if (!attended[j]) continue;
          for (let d = h * hd; d < (h + 1) * hd; ++d) ctx[d] += w[j] * vp[j][d];
        }
      }
      for (let o = 0; o < E; ++o) {
        let acc = bo ? bo[o] : 0;
        for (let c = 0; c < E; ++c) acc += ctx[c] * Wo[o * E + c];
        output[tok(b, i, l) * E + o] = acc;
      }
    }
  }
  let wShape = average ? [n, l, sAll] : [n, H, l, sAll];
  if (!batched) wShape = wShape.slice(1);
  return { output: { data: output, shape: query.shape.slice() }, weights: { data: weights, shape: wShape } };
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
  if (actual.data.length !== expected.data.length) return `length ${actual.data.length} instead of ${expected.data.length}`;
  for (let i = 0; i < expected.data.length; ++i) {
    const a = actual.data[i];
    const e = expected.data[i];
    const ok = Number.isNaN(e) ? Number.isNaN(a) : Number.isFinite(e) ? Math.abs(a - e) <= atol + rtol * Math.abs(e) : a === e;
    if (!ok) return `element ${i} is ${a}, expected ${e}`;
  }
  return null;
}
