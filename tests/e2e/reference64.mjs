// Float64 reference of the e2e tests, written from PyTorch's documentation (nn.MultiheadAttention, SDPA with
// enable_gqa) and docs/api.md, independent of attnlab and of the page: a grouped-query multi-head layer run
// causally, and the stages of one scaled dot-product attention with softcap, causal alignment, window and masks.

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

/**
 * Every stage of scaled dot-product attention for one problem, Q (Lq × dk), K (Lk × dk), V (Lk × dv) as flat arrays,
 * written from docs/api.md ("scaledDotProductAttention") and ONNX's Attention operator: scores = Q·Kᵀ; scaled =
 * scores · scale; softcapped = c·tanh(scaled / c) (no softcap: = scaled); masked = softcapped + floatMask (a float32,
 * the scores' type), or −∞ where a rule removes the key: boolMask 0, isCausal (query i at aligned position
 * p = i + offset, offset Lk − Lq for 'lower-right', else 0, sees keys j ≤ p) or window [left, right] (keys
 * p − left … p + right, −1 = unbounded); weights = row softmax of masked, all zeros for a row with no finite score;
 * output = weights · V. Masks are flat Lq × Lk arrays (boolMask: 1 = may attend). Returns the stages as Float64Arrays
 * and `removed`, per cell 'causal', 'window', 'mask' or null (the first rule that removes it, in that order).
 */
export function sdpaStages64(q, k, v, o) {
  const { Lq, Lk, dk, dv, scale, softcap = null, causal = 'off', window = [-1, -1], boolMask, floatMask } = o;
  const n = Lq * Lk;
  const [scores, scaled, softcapped, masked, weights] = Array.from({ length: 5 }, () => new Float64Array(n));
  const output = new Float64Array(Lq * dv);
  const removed = new Array(n).fill(null);
  const offset = causal === 'lower-right' ? Lk - Lq : 0;
  const [left, right] = window;
  for (let i = 0; i < Lq; i++) {
    const p = i + offset;
    for (let j = 0; j < Lk; j++) {
      const c = i * Lk + j;
      let s = 0;
      for (let d = 0; d < dk; d++) s += q[i * dk + d] * k[j * dk + d];
      scores[c] = s;
      scaled[c] = s * scale;
      softcapped[c] = softcap === null ? scaled[c] : softcap * Math.tanh(scaled[c] / softcap);
      if (causal !== 'off' && j > p) removed[c] = 'causal';
      else if ((left >= 0 && j < p - left) || (right >= 0 && j > p + right)) removed[c] = 'window';
      else if (boolMask && !boolMask[c]) removed[c] = 'mask';
      // rounded to float32 like the tensor that holds it: what makes scores + −1e9 tie (softmax spreads evenly)
      masked[c] = removed[c] ? -Infinity : Math.fround(softcapped[c] + (floatMask ? floatMask[c] : 0));
    }
    const row = masked.subarray(i * Lk, (i + 1) * Lk);
    const max = Math.max(...row);
    if (max === -Infinity) continue; // no key: zero weights and output
    const e = Array.from(row, (x) => Math.exp(x - max));
    const z = e.reduce((a, b) => a + b, 0);
    for (let j = 0; j < Lk; j++) {
      weights[i * Lk + j] = e[j] / z;
      for (let d = 0; d < dv; d++) output[i * dv + d] += (e[j] / z) * v[j * dv + d];
    }
  }
  return { scores, scaled, softcapped, masked, weights, output, removed };
}
