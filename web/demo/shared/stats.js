// @ts-check
// Statistics the page shows about attnlab's results: argmax answers and the entropy of weight rows. No DOM.

/**
 * argmax of every row of logits (rows × V).
 * @param {ArrayLike<number>} logits
 * @param {number} rows
 * @param {number} V
 */
export function argmax(logits, rows, V) {
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[r * V + v] > logits[r * V + best]) best = v;
    out[r] = best;
  }
  return out;
}

/**
 * Entropy (nats) of a probability row: p[off … off + n − 1].
 * @param {ArrayLike<number>} p
 */
export function entropy(p, off = 0, n = p.length) {
  let s = 0;
  for (let j = 0; j < n; j++) {
    const x = p[off + j];
    if (x > 0) s -= x * Math.log(x);
  }
  return s;
}
