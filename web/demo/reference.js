// Plain-JavaScript attention, used by the demo where attnlab is deliberately NOT used:
//  - the intermediate stages of the step-by-step view (shown, labelled "plain JS");
//  - the deliberately wrong variants of the pitfalls table.
// Straightforward loops over Float32Array, no DOM: runs in a page, a Web Worker and Node.

/** C (m×n) = A (m×k) · Bᵀ, B (n×k). */
export function matmulABt(A, B, m, n, k, C = new Float32Array(m * n), aOff = 0, bOff = 0, cOff = 0) {
  for (let i = 0; i < m; i++) {
    const ai = aOff + i * k;
    for (let j = 0; j < n; j++) {
      const bj = bOff + j * k;
      let s = 0;
      for (let p = 0; p < k; p++) s += A[ai + p] * B[bj + p];
      C[cOff + i * n + j] = s;
    }
  }
  return C;
}

/** C (m×n) = A (m×k) · B (k×n). */
export function matmul(A, B, m, n, k, C = new Float32Array(m * n), aOff = 0, bOff = 0, cOff = 0) {
  C.fill(0, cOff, cOff + m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const a = A[aOff + i * k + p];
      if (a === 0) continue;
      const bp = bOff + p * n;
      const ci = cOff + i * n;
      for (let j = 0; j < n; j++) C[ci + j] += a * B[bp + j];
    }
  }
  return C;
}

/** Row softmax with max subtraction; a row with no finite logit gives zeros (attnlab's convention). */
export function softmaxRows(X, rows, cols, out = new Float32Array(rows * cols)) {
  for (let i = 0; i < rows; i++) {
    const o = i * cols;
    let m = -Infinity;
    for (let j = 0; j < cols; j++) if (X[o + j] > m) m = X[o + j];
    if (m === -Infinity) {
      out.fill(0, o, o + cols);
      continue;
    }
    let s = 0;
    for (let j = 0; j < cols; j++) {
      const e = Math.exp(X[o + j] - m);
      out[o + j] = e;
      s += e;
    }
    for (let j = 0; j < cols; j++) out[o + j] /= s;
  }
  return out;
}

/** WRONG on purpose: softmax without subtracting the row max; exp overflows to Infinity → NaN. */
export function softmaxNoMax(X, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = 0; j < cols; j++) {
      out[i * cols + j] = Math.fround(Math.exp(X[i * cols + j])); // float32 like the tensors: exp(89) = Infinity
      s = Math.fround(s + out[i * cols + j]);
    }
    for (let j = 0; j < cols; j++) out[i * cols + j] /= s;
  }
  return out;
}

/** WRONG on purpose: softmax over the query axis (columns) instead of the key axis (rows). */
export function softmaxCols(X, rows, cols) {
  const out = new Float32Array(rows * cols);
  for (let j = 0; j < cols; j++) {
    let m = -Infinity;
    for (let i = 0; i < rows; i++) m = Math.max(m, X[i * cols + j]);
    let s = 0;
    for (let i = 0; i < rows; i++) {
      out[i * cols + j] = Math.exp(X[i * cols + j] - m);
      s += out[i * cols + j];
    }
    for (let i = 0; i < rows; i++) out[i * cols + j] /= s;
  }
  return out;
}

/**
 * Scaled dot-product attention for one (Lq×dk, Lk×dk, Lk×dv) problem, with an optional additive mask
 * (Float32Array Lq×Lk). Returns { scores, scaled, masked, weights, output } (all Float32Array).
 */
export function sdpaStages(q, k, v, Lq, Lk, dk, dv, scale, addMask = null) {
  const scores = matmulABt(q, k, Lq, Lk, dk);
  const scaled = scores.map((s) => s * scale);
  const masked = addMask ? scaled.map((s, i) => s + addMask[i]) : scaled.slice();
  const weights = softmaxRows(masked, Lq, Lk);
  const output = matmul(weights, v, Lq, dv, Lk);
  return { scores, scaled, masked, weights, output };
}

/** Entropy (nats) of a probability row. */
export function entropy(p, off = 0, n = p.length) {
  let s = 0;
  for (let j = 0; j < n; j++) {
    const x = p[off + j];
    if (x > 0) s -= x * Math.log(x);
  }
  return s;
}
