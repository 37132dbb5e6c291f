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

/** Row-major strides of `shape` right-aligned into a shape of rank `rank`, 0 where a dimension broadcasts. */
function broadcastStrides(shape, full) {
  const strides = new Array(full.length).fill(0);
  let stride = 1;
  for (let i = shape.length - 1, f = full.length - 1; i >= 0; --i, --f) {
    if (shape[i] !== 1) strides[f] = stride;
    stride *= shape[i];
  }
  return strides;
}

/** Concatenates past (*b, P, d) and x (*b, L, d) along the second-to-last axis: (*b, P + L, d). */
function concatKeys(past, x) {
  const r = x.shape.length;
  const [l, d] = x.shape.slice(r - 2);
  const p = past.shape[r - 2];
  const items = size(x.shape.slice(0, r - 2));
  const data = new Float64Array(items * (p + l) * d);
  for (let b = 0; b < items; ++b) {
    data.set(past.data.subarray(b * p * d, (b + 1) * p * d), b * (p + l) * d);
    data.set(x.data.subarray(b * l * d, (b + 1) * l * d), (b * (p + l) + p) * d);
  }
  return { data, shape: [...x.shape.slice(0, r - 2), p + l, d] };
}

/**
 * SDPA: same arguments and options as attn.scaledDotProductAttention (docs/api.md, "Modern attention": enableGQA,
 * isCausal true | 'upper-left' | 'lower-right', kvLengths, window, softcap, pastKey/pastValue, attnMask of any
 * broadcastable shape). Returns { output, weights, scores: { scaled, softcapped, masked }, presentKey?,
 * presentValue? } (Float64Array data). Query i's aligned position is p = i + offset, offset = kvLengths[b] - Lq
 * (or Lk - Lq) for 'lower-right', else the past length; causal hides keys j > p, window [l, r] keys outside
 * [p - l, p + r]; kvLengths hides keys j >= kvLengths[b] (b: index of the first batch dim).
 */
export function sdpaRef(q, k, v, options = {}) {
  const past = options.pastKey ? options.pastKey.shape[k.shape.length - 2] : 0;
  const present = options.pastKey
    ? { key: concatKeys(options.pastKey, k), value: concatKeys(options.pastValue, v) }
    : null;
  if (present) [k, v] = [present.key, present.value];
  const r = q.shape.length;
  const batchShape = q.shape.slice(0, r - 2);
  const batch = size(batchShape);
  const [lq, dk] = q.shape.slice(r - 2);
  const lk = k.shape[r - 2];
  const dv = v.shape[r - 1];
  const hq = r > 2 ? q.shape[r - 3] : 1;
  const hkv = r > 2 ? k.shape[r - 3] : 1;
  const first = r > 2 ? batch / q.shape[0] : batch; // batch items per item of the first batch dim
  const scale = options.scale ?? (dk > 0 ? Math.fround(1 / Math.sqrt(Math.fround(dk))) : 1);
  const cap = options.softcap ? Math.fround(options.softcap) : 0;
  const causal = options.isCausal === true ? 'upper-left' : options.isCausal || null;
  const [left, right] = options.window ?? [-1, -1];
  const m = options.attnMask;
  const mStrides = m ? broadcastStrides(m.shape, [...batchShape, lq, lk]) : null;
  const output = new Float64Array(batch * lq * dv);
  const weights = new Float64Array(batch * lq * lk);
  const scaled = new Float64Array(batch * lq * lk);
  const softcapped = new Float64Array(batch * lq * lk);
  const masked = new Float64Array(batch * lq * lk);
  for (let b = 0; b < batch; ++b) {
    const kb = Math.floor(b / hq) * hkv + Math.floor(((b % hq) * hkv) / hq); // key/value head floor(h·Hkv/Hq)
    const valid = options.kvLengths ? options.kvLengths[Math.floor(b / first)] : lk;
    const offset = causal === 'lower-right' ? valid - lq : past;
    let mBase = 0; // the mask's offset of batch item b
    for (let rem = b, d = r - 3; d >= 0; --d) {
      mBase += (rem % batchShape[d]) * (mStrides ? mStrides[d] : 0);
      rem = Math.floor(rem / batchShape[d]);
    }
    for (let i = 0; i < lq; ++i) {
      const p = i + offset;
      const logits = new Float64Array(lk);
      const attended = new Array(lk).fill(true);
      for (let j = 0; j < lk; ++j) {
        let dot = 0;
        for (let d = 0; d < dk; ++d) dot += q.data[(b * lq + i) * dk + d] * k.data[(kb * lk + j) * dk + d];
        const at = (b * lq + i) * lk + j;
        scaled[at] = dot * scale;
        softcapped[at] = cap ? cap * Math.tanh(scaled[at] / cap) : scaled[at];
        let bias = 0;
        if (m) {
          const x = m.data[mBase + i * mStrides[r - 2] + j * mStrides[r - 1]];
          bias = m.data instanceof Uint8Array ? (x ? 0 : -Infinity) : x;
        }
        const hidden = j >= valid || (causal && j > p) || (left >= 0 && j < p - left) || (right >= 0 && j > p + right);
        if (hidden || bias === -Infinity) attended[j] = false;
        logits[j] = softcapped[at] + bias;
        masked[at] = attended[j] ? logits[j] : -Infinity;
      }
      const w = softmaxRow(logits, attended);
      for (let j = 0; j < lk; ++j) {
        weights[(b * lq + i) * lk + j] = w[j];
        if (!attended[j]) continue;
        for (let d = 0; d < dv; ++d) output[(b * lq + i) * dv + d] += w[j] * v.data[(kb * lk + j) * dv + d];
      }
    }
  }
  const scoreShape = [...batchShape, lq, lk];
  const result = {
    output: { data: output, shape: [...batchShape, lq, dv] },
    weights: { data: weights, shape: scoreShape },
    scores: {
      scaled: { data: scaled, shape: scoreShape },
      softcapped: { data: softcapped, shape: scoreShape },
      masked: { data: masked, shape: scoreShape },
    },
  };
  if (present) Object.assign(result, { presentKey: present.key, presentValue: present.value });
  return result;
}

/**
 * nn.MultiheadAttention forward (eval): config and params as given to attnlab, arguments as mha.forward. Grouped-query
 * heads (config.numKVHeads): k/v projections of Ekv = numKVHeads·hd outputs, in_proj_bias [q (E); k (Ekv); v (Ekv)],
 * query head h reads key/value head h / (H / numKVHeads).
 */
export function mhaRef(config, params, query, key, value, options = {}) {
  const E = config.embedDim;
  const H = config.numHeads;
  const hd = E / H;
  const Hkv = config.numKVHeads ?? H;
  const Ekv = Hkv * hd;
  const group = H / Hkv;
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
  const outDims = [E, Ekv, Ekv];
  const biasAt = [0, E, E + Ekv];
  const bIn = P('in_proj_bias');
  const Wo = P('out_proj.weight');
  const bo = P('out_proj.bias');
  const project = (x, off, part) => {
    const out = new Float64Array(outDims[part]);
    const din = inDims[part];
    for (let o = 0; o < outDims[part]; ++o) {
      let acc = bIn ? bIn[biasAt[part] + o] : 0;
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
      kp.push(new Float64Array(Ekv));
      vp.push(new Float64Array(Ekv));
    }
    for (let i = 0; i < l; ++i) {
      const qp = project(query.data, tok(b, i, l) * E, 0);
      const ctx = new Float64Array(E);
      for (let h = 0; h < H; ++h) {
        const logits = new Float64Array(sAll);
        const attended = new Array(sAll).fill(true);
        for (let j = 0; j < sAll; ++j) {
          let dot = 0;
          const kvOff = Math.floor(h / group) * hd - h * hd; // key/value column of query column d: d + kvOff
          for (let d = h * hd; d < (h + 1) * hd; ++d) dot += qp[d] * kp[j][d + kvOff];
          let bias = 0;
          if (j < s) {
            if (am) bias += maskVal(am, (am.shape.length === 2 ? 0 : (b * H + h) * l * s) + i * s + j);
            if (kpm) bias = Math.fround(bias + maskVal(kpm, b * s + j)); // float32, as attnlab adds the masks
          }
          logits[j] = dot * scale + bias;
          if (bias === -Infinity) attended[j] = false;
        }
        const w = softmaxRow(logits, attended);
        for (let j = 0; j < sAll; ++j) {
          if (average) weights[(b * l + i) * sAll + j] += w[j] / H;
          else weights[((b * H + h) * l + i) * sAll + j] = w[j];
          if (!attended[j]) continue;
          const kvOff = Math.floor(h / group) * hd - h * hd;
          for (let d = h * hd; d < (h + 1) * hd; ++d) ctx[d] += w[j] * vp[j][d + kvOff];
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
