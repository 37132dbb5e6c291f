// @ts-check
// Plain JavaScript attention, the baseline that both the demo's speed part (parts/speed/worker.js) and
// `npm run bench` (scripts/bench/) measure: straightforward loops over Float32Array, no SIMD, no blocking. It
// computes one score row at a time (extra memory O(L)), which is what a careful hand-written JS version looks like.
// No DOM: runs in a page, a Web Worker and Node.

/**
 * q (B, L, d), k (B, S, d), v (B, S, dv) → out (B, L, dv), softmax(q kᵀ · scale) v.
 * @param {Float32Array} q
 * @param {Float32Array} k
 * @param {Float32Array} v
 * @param {number} B
 * @param {number} L
 * @param {number} S
 * @param {number} d
 * @param {number} dv
 * @param {number} scale
 */
export function sdpa(q, k, v, B, L, S, d, dv, scale) {
  const out = new Float32Array(B * L * dv);
  const row = new Float32Array(S);
  for (let b = 0; b < B; ++b) {
    const qb = b * L * d;
    const kb = b * S * d;
    const vb = b * S * dv;
    const ob = b * L * dv;
    for (let i = 0; i < L; ++i) {
      const qi = qb + i * d;
      let max = -Infinity;
      for (let j = 0; j < S; ++j) {
        const kj = kb + j * d;
        let s = 0;
        for (let t = 0; t < d; ++t) s += q[qi + t] * k[kj + t];
        s *= scale;
        row[j] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let j = 0; j < S; ++j) {
        const e = Math.exp(row[j] - max);
        row[j] = e;
        sum += e;
      }
      const oi = ob + i * dv;
      for (let j = 0; j < S; ++j) {
        const p = row[j] / sum;
        const vj = vb + j * dv;
        for (let t = 0; t < dv; ++t) out[oi + t] += p * v[vj + t];
      }
    }
  }
  return out;
}

/**
 * y (rows, n) = x (rows, k) · wᵀ (w is (n, k), PyTorch Linear layout) + bias; `wOffset` selects a block of w.
 * @param {Float32Array} x
 * @param {number} rows
 * @param {number} kdim
 * @param {Float32Array} w
 * @param {number} wOffset
 * @param {Float32Array} bias
 * @param {number} bOffset
 * @param {number} n
 */
function linear(x, rows, kdim, w, wOffset, bias, bOffset, n) {
  const y = new Float32Array(rows * n);
  for (let i = 0; i < rows; ++i) {
    const xi = i * kdim;
    for (let j = 0; j < n; ++j) {
      const wj = wOffset + j * kdim;
      let s = bias[bOffset + j];
      for (let t = 0; t < kdim; ++t) s += x[xi + t] * w[wj + t];
      y[i * n + j] = s;
    }
  }
  return y;
}

/**
 * nn.MultiheadAttention forward, batch 1, batch_first, self-attention: x (L, E) → (L, E).
 * @param {Float32Array} x
 * @param {number} L
 * @param {number} E
 * @param {number} H
 * @param {Record<string, Float32Array>} sd the state dict's arrays under PyTorch's names (in_proj_weight, …)
 */
export function mha(x, L, E, H, sd) {
  const d = E / H;
  const q = linear(x, L, E, sd.in_proj_weight, 0, sd.in_proj_bias, 0, E);
  const k = linear(x, L, E, sd.in_proj_weight, E * E, sd.in_proj_bias, E, E);
  const v = linear(x, L, E, sd.in_proj_weight, 2 * E * E, sd.in_proj_bias, 2 * E, E);
  /** (L, H, d) → (H, L, d) @param {Float32Array} t */
  const heads = (t) => {
    const r = new Float32Array(L * E);
    for (let i = 0; i < L; ++i)
      for (let h = 0; h < H; ++h) for (let t2 = 0; t2 < d; ++t2) r[(h * L + i) * d + t2] = t[i * E + h * d + t2];
    return r;
  };
  const o = sdpa(heads(q), heads(k), heads(v), H, L, L, d, d, 1 / Math.sqrt(d));
  const merged = new Float32Array(L * E);
  for (let h = 0; h < H; ++h)
    for (let i = 0; i < L; ++i) for (let t = 0; t < d; ++t) merged[i * E + h * d + t] = o[(h * L + i) * d + t];
  return linear(merged, L, E, sd['out_proj.weight'], 0, sd['out_proj.bias'], 0, E);
}

/**
 * One decode step with an in-place K/V cache, the straightforward JS way: y = W·x + b for the new token's q, k, v
 * (w: PyTorch (out, in) layout, decodeWeights in scripts/bench/inputs.mjs), k and v appended to the cache
 * (Hkv, maxLength, d), each query head h attends over every cached key of K/V head ⌊h·Hkv/H⌋ (one row of scores,
 * softmax, weighted values), then the out-projection. createDecoder(...).load(k, v, length) fills the cache from
 * (Hkv, length, d).
 * @param {Record<'wq' | 'bq' | 'wk' | 'bk' | 'wv' | 'bv' | 'wo' | 'bo', Float32Array>} w
 * @param {number} E
 * @param {number} H
 * @param {number} Hkv
 * @param {number} maxLength
 */
export function createDecoder(w, E, H, Hkv, maxLength) {
  const d = E / H;
  const kv = Hkv * d;
  const K = new Float32Array(Hkv * maxLength * d);
  const V = new Float32Array(Hkv * maxLength * d);
  const q = new Float32Array(E);
  const k = new Float32Array(kv);
  const v = new Float32Array(kv);
  const attn = new Float32Array(E);
  const row = new Float32Array(maxLength);
  const scale = 1 / Math.sqrt(d);
  let length = 0;
  /** @param {Float32Array} x @param {Float32Array} W @param {Float32Array} b @param {Float32Array} out */
  const linear = (x, W, b, out) => {
    for (let r = 0; r < out.length; ++r) {
      let s = b[r];
      for (let c = 0; c < x.length; ++c) s += x[c] * W[r * x.length + c];
      out[r] = s;
    }
  };
  return {
    /** @param {Float32Array} kSrc @param {Float32Array} vSrc @param {number} n */
    load(kSrc, vSrc, n) {
      for (let h = 0; h < Hkv; ++h) {
        K.set(kSrc.subarray(h * n * d, (h + 1) * n * d), h * maxLength * d);
        V.set(vSrc.subarray(h * n * d, (h + 1) * n * d), h * maxLength * d);
      }
      length = n;
    },
    /** @param {Float32Array} x */
    step(x) {
      if (length >= maxLength) throw new RangeError(`decoder: cache full (${maxLength})`);
      linear(x, w.wq, w.bq, q);
      linear(x, w.wk, w.bk, k);
      linear(x, w.wv, w.bv, v);
      for (let h = 0; h < Hkv; ++h) {
        K.set(k.subarray(h * d, (h + 1) * d), (h * maxLength + length) * d);
        V.set(v.subarray(h * d, (h + 1) * d), (h * maxLength + length) * d);
      }
      length += 1;
      for (let h = 0; h < H; ++h) {
        const base = Math.floor((h * Hkv) / H) * maxLength * d;
        let max = -Infinity;
        for (let j = 0; j < length; ++j) {
          let s = 0;
          for (let t = 0; t < d; ++t) s += q[h * d + t] * K[base + j * d + t];
          row[j] = s * scale;
          if (row[j] > max) max = row[j];
        }
        let sum = 0;
        for (let j = 0; j < length; ++j) {
          row[j] = Math.exp(row[j] - max);
          sum += row[j];
        }
        for (let t = 0; t < d; ++t) {
          let s = 0;
          for (let j = 0; j < length; ++j) s += row[j] * V[base + j * d + t];
          attn[h * d + t] = s / sum;
        }
      }
      const out = new Float32Array(E);
      linear(attn, w.wo, w.bo, out);
      return out;
    },
  };
}
