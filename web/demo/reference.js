// Plain-JavaScript attention pieces, used by the demo where attnlab is deliberately NOT used: the deliberately wrong
// variants of the pitfalls table (next to attnlab's right answers), the heads view's wrong transpose and the
// entropy of a weight row. The step-by-step view takes every stage from attnlab (returnScores) instead.
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

/** Entropy (nats) of a probability row. */
export function entropy(p, off = 0, n = p.length) {
  let s = 0;
  for (let j = 0; j < n; j++) {
    const x = p[off + j];
    if (x > 0) s -= x * Math.log(x);
  }
  return s;
}
