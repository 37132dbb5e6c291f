// The float64 references of the JS tests and scripts/soak.mjs: SDPA and nn.MultiheadAttention forward as
// docs/robustness.md states them (a masked or causally hidden key contributes nothing; a row with no attended key
// is 0). They take the same arguments as the public API and return { output, weights } with Float64Array data.

/** The number of elements of a shape. */
export const size = (shape) => shape.reduce((a, b) => a * b, 1);

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
