// Float64 reference of the e2e tests, written from PyTorch's documentation (nn.MultiheadAttention, SDPA with
// enable_gqa), independent of attnlab and of the page: a grouped-query multi-head layer run causally.

/**
 * nn.MultiheadAttention (batch_first, no biases) with grouped key/value heads over x (L × E, flat), causal: query
 * head h reads key/value head ⌊h · Hkv / H⌋. sd: { q_proj_weight, k_proj_weight, v_proj_weight, out_proj.weight }
 * as flat arrays. Returns { output (L × E), weights (H × L × L) }.
 */
export function gqaCausal64(x, L, { embedDim: E, numHeads: H, numKVHeads: Hkv }, sd) {
  const d = E / H;
  const lin = (W, rows) => {
    const y = new Float64Array(L * rows);
    for (let t = 0; t < L; t++)
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let c = 0; c < E; c++) s += W[r * E + c] * x[t * E + c];
        y[t * rows + r] = s;
      }
    return y;
  };
  const q = lin(sd.q_proj_weight, E);
  const k = lin(sd.k_proj_weight, Hkv * d);
  const v = lin(sd.v_proj_weight, Hkv * d);
  const concat = new Float64Array(L * E);
  const weights = new Float64Array(H * L * L);
  for (let h = 0; h < H; h++) {
    const g = Math.floor((h * Hkv) / H);
    for (let i = 0; i < L; i++) {
      const s = [];
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += q[i * E + h * d + c] * k[j * Hkv * d + g * d + c];
        s.push(dot / Math.sqrt(d));
      }
      const max = Math.max(...s);
      const e = s.map((z) => Math.exp(z - max));
      const z = e.reduce((a, b) => a + b, 0);
      e.forEach((ej, j) => {
        const w = ej / z;
        weights[(h * L + i) * L + j] = w;
        for (let c = 0; c < d; c++) concat[i * E + h * d + c] += w * v[j * Hkv * d + g * d + c];
      });
    }
  }
  const Wo = sd['out_proj.weight'];
  const output = new Float64Array(L * E);
  for (let t = 0; t < L; t++)
    for (let r = 0; r < E; r++) {
      let s = 0;
      for (let c = 0; c < E; c++) s += Wo[r * E + c] * concat[t * E + c];
      output[t * E + r] = s;
    }
  return { output, weights };
}
