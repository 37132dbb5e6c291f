// Plain JavaScript attention: straightforward loops over Float32Array, no SIMD, no blocking. It computes one
// score row at a time (extra memory O(L)), which is what a careful hand-written JS version looks like.

// q (B, L, d), k (B, S, d), v (B, S, dv) → out (B, L, dv), softmax(q kᵀ · scale) v.
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

// y (rows, n) = x (rows, k) · wᵀ (w is (n, k), PyTorch Linear layout) + bias; `wOffset` selects a block of w.
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

// nn.MultiheadAttention forward, batch 1, batch_first, self-attention: x (L, E) → (L, E).
export function mha(x, L, E, H, sd) {
  const d = E / H;
  const q = linear(x, L, E, sd.in_proj_weight, 0, sd.in_proj_bias, 0, E);
  const k = linear(x, L, E, sd.in_proj_weight, E * E, sd.in_proj_bias, E, E);
  const v = linear(x, L, E, sd.in_proj_weight, 2 * E * E, sd.in_proj_bias, 2 * E, E);
  // (L, H, d) → (H, L, d)
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
