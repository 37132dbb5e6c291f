// What every consumer checks, in Node, pages and workers: the tutorial's §5 example (Q = K = V, dk = 4) against the
// tutorial's table and against a float64 reference computed here, a small MHA forward, and one argument error.

export const kExample = [
  [1, 0, 1, 0],
  [0, 1, 0, 1],
  [1, 1, 0, 0],
];
// The tutorial's §5 table: softmax(Q Kᵀ / √4), rounded to 5 digits.
export const kExpectedWeights = [
  [0.50648, 0.18632, 0.3072],
  [0.18632, 0.50648, 0.3072],
  [0.27407, 0.27407, 0.45186],
];

/** softmax(Q Kᵀ / √dk) in float64, for Q = K = `rows`. */
function referenceWeights(rows) {
  const dk = rows[0].length;
  return rows.map((q) => {
    const logits = rows.map((k) => q.reduce((s, qi, i) => s + qi * k[i], 0) / Math.sqrt(dk));
    const max = Math.max(...logits);
    const e = logits.map((l) => Math.exp(l - max));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  });
}

function expectClose(actual, expected, tol, what) {
  for (let i = 0; i < expected.length; ++i) {
    for (let j = 0; j < expected[i].length; ++j) {
      const a = actual[i][j];
      if (!(Math.abs(a - expected[i][j]) <= tol))
        throw new Error(`${what}[${i}][${j}] = ${a}, expected ${expected[i][j]}`);
    }
  }
}

/**
 * Runs both variants through `init({ variant, ...options })`; resolves to a summary line, or throws on a wrong
 * number. `options` is what the consumer's recipe passes (e.g. wasmPaths).
 */
export async function check(init, label, options = {}) {
  const reference = referenceWeights(kExample);
  expectClose(reference, kExpectedWeights, 5e-6, `${label}: float64 reference`);
  const lines = [];
  // The threaded variant where 'auto' picks it: Node, and cross-origin-isolated pages and workers that load the
  // package unbundled from their own origin.
  const threads = (await init(options)).variant === 'simd-threaded';
  for (const variant of [...(threads ? ['simd-threaded'] : []), 'simd', 'scalar']) {
    const attn = await init({ variant, ...options });
    if (attn.variant !== variant) throw new Error(`${label}: asked for ${variant}, got ${attn.variant}`);
    const q = { data: new Float32Array(kExample.flat()), shape: [3, 4] };
    const { output, weights } = attn.scaledDotProductAttention(q, q, q);
    if (weights.shape.join() !== '3,3' || output.shape.join() !== '3,4') {
      throw new Error(`${label} [${variant}]: shapes ${weights.shape} / ${output.shape}`);
    }
    const rows = [0, 1, 2].map((i) => Array.from(weights.data.subarray(3 * i, 3 * i + 3)));
    expectClose(rows, reference, 1e-6, `${label} [${variant}]: weights`);
    expectClose(rows, kExpectedWeights, 1e-5, `${label} [${variant}]: weights vs the tutorial`);
    // output = weights · V
    const out = [0, 1, 2].map((i) =>
      [0, 1, 2, 3].map((c) => reference[i].reduce((s, w, j) => s + w * kExample[j][c], 0)),
    );
    expectClose(
      [0, 1, 2].map((i) => Array.from(output.data.subarray(4 * i, 4 * i + 4))),
      out,
      1e-6,
      `${label} [${variant}]: output`,
    );

    const mha = attn.createMultiHeadAttention({ embedDim: 8, numHeads: 2, batchFirst: true });
    try {
      const x = { data: new Float32Array(2 * 3 * 8).fill(0.25), shape: [2, 3, 8] };
      const r = mha.forward(x, x, x);
      if (r.output.shape.join() !== '2,3,8' || r.weights.shape.join() !== '2,3,3') {
        throw new Error(`${label} [${variant}]: MHA shapes ${r.output.shape} / ${r.weights.shape}`);
      }
    } finally {
      mha.dispose();
    }
    let error;
    try {
      attn.scaledDotProductAttention({ data: [1, 2], shape: [1, 2] }, q, q);
    } catch (e) {
      error = e;
    }
    if (!(error instanceof TypeError)) throw new Error(`${label} [${variant}]: expected a TypeError, got ${error}`);
    lines.push(`${variant} ${attn.version} weights[0] = ${rows[0].map((w) => w.toFixed(5)).join(' ')}`);
  }
  return `${label}: ok (${lines.join('; ')})`;
}

/** Runs a module worker that posts check()'s result; resolves to its line. */
export function inWorker(worker) {
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => (e.data.ok ? resolve(e.data.text) : reject(new Error(e.data.text)));
    worker.onerror = (e) => reject(new Error(`worker error: ${e.message}`));
  });
}

/** In a worker: posts the outcome of `promise` to the page. */
export function report(promise) {
  promise.then(
    (text) => postMessage({ ok: true, text }),
    (e) => postMessage({ ok: false, text: String(e?.stack ?? e) }),
  );
}

/** On a page: shows the outcome of `promises` and publishes it in window.__result for the test driver. */
export function publish(promises) {
  Promise.all(promises).then(
    (lines) => {
      document.getElementById('out').textContent = lines.join('\n');
      window.__result = { ok: true, lines };
    },
    (e) => {
      document.getElementById('out').textContent = String(e?.stack ?? e);
      window.__result = { ok: false, lines: [String(e?.stack ?? e)] };
    },
  );
}
