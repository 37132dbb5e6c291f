// @ts-check
// y = x Wᵀ + b (PyTorch's nn.Linear) on attnlab, for the page's projections and readouts. The package has no bare
// linear layer, but an attention over ONE key returns that key's value projection exactly (the softmax of a single
// score is 1): a one-head MultiHeadAttention whose value projection is (W, b) and whose out-projection is the
// identity (no bias) maps each row x, given as the value of its own one-key attention, to W x + b on attnlab's
// GEMM. Queries and keys are zeros (their projections do not matter). No DOM.

/** @typedef {import('../attnlab.js').Attnlab} Attnlab */

/**
 * @typedef {object} Linear
 * @property {number} inF
 * @property {number} outF
 * @property {(x: Float32Array, rows: number) => Float32Array} apply rows × inF → rows × outF
 * @property {() => void} dispose frees the wasm memory
 */

/**
 * @param {Attnlab} attn
 * @param {Float32Array} W (outF, inF), row-major
 * @param {Float32Array | null} b (outF), or null for no bias
 * @param {number} outF
 * @param {number} inF
 * @returns {Linear}
 */
export function createLinear(attn, W, b, outF, inF) {
  if (W.length !== outF * inF) throw new RangeError(`linear: W has ${W.length} values, not ${outF} × ${inF}`);
  const mha = attn.createMultiHeadAttention({
    embedDim: outF,
    numHeads: 1,
    kdim: 1,
    vdim: inF,
    bias: true,
    batchFirst: true,
  });
  const bias = new Float32Array(3 * outF);
  if (b) bias.set(b, 2 * outF);
  const identity = new Float32Array(outF * outF);
  for (let i = 0; i < outF; i++) identity[i * outF + i] = 1;
  mha.loadStateDict({
    q_proj_weight: new Float32Array(outF * outF),
    k_proj_weight: new Float32Array(outF),
    v_proj_weight: W,
    in_proj_bias: bias,
    'out_proj.weight': identity,
    'out_proj.bias': new Float32Array(outF),
  });
  return {
    inF,
    outF,
    apply(x, rows) {
      const q = { data: new Float32Array(rows * outF), shape: [rows, 1, outF] };
      const k = { data: new Float32Array(rows), shape: [rows, 1, 1] };
      const v = { data: x, shape: [rows, 1, inF] };
      return mha.forward(q, k, v, { needWeights: false }).output.data;
    },
    dispose: () => mha.dispose(),
  };
}

/**
 * x Wᵀ + b once (a Linear made and disposed around the call).
 * @param {Attnlab} attn
 * @param {Float32Array} x (rows, inF)
 * @param {number} rows
 * @param {Float32Array} W (outF, inF)
 * @param {Float32Array | null} b (outF) or null
 * @param {number} outF
 */
export function linear(attn, x, rows, W, b, outF) {
  const layer = createLinear(attn, W, b, outF, W.length / outF);
  try {
    return layer.apply(x, rows);
  } finally {
    layer.dispose();
  }
}
