// The numbers every consumer checks: sdpa_tiny_exact (Q = K = V, dk = 4) and a small MHA forward.
export const expectedRow0 = [0.50648, 0.18632, 0.3072];

/** Runs both variants through `init`; resolves to a summary string, or throws on a wrong number. */
export async function check(init, label) {
  const lines = [];
  for (const variant of ['simd', 'scalar']) {
    const attn = await init({ variant });
    if (attn.variant !== variant) throw new Error(`${label}: asked for ${variant}, got ${attn.variant}`);
    const q = { data: new Float32Array([1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0]), shape: [3, 4] };
    const { output, weights } = attn.scaledDotProductAttention(q, q, q);
    for (let j = 0; j < 3; ++j) {
      if (!(Math.abs(weights.data[j] - expectedRow0[j]) < 1e-4)) {
        throw new Error(`${label} [${variant}]: weights[0][${j}] = ${weights.data[j]}, expected ${expectedRow0[j]}`);
      }
    }
    if (output.shape.join() !== '3,4') throw new Error(`${label} [${variant}]: output shape ${output.shape}`);
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
    lines.push(`${variant} ${attn.version} weights[0] = ${Array.from(weights.data.slice(0, 3), (w) => w.toFixed(5)).join(' ')}`);
  }
  return `${label}: ok (${lines.join('; ')})`;
}
