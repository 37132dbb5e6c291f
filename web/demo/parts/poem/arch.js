// @ts-check
// The poem chapter's §11 card, the numbers: the poem model's block diagram read from its config (the Llama family:
// RMSNorm, RoPE, SwiGLU, tied embeddings), the shape after each stage and each group's share of the parameters;
// and the "只看本句" experiment: the same weights with a sliding window (Mistral's sliding_window, W keys: the query
// itself and the W − 1 before it), its held-out loss and maps; and the model reading one line alone. No DOM
// (arch-view.js draws).

import { LINE_ENDS, meanLoss } from './heads.js';

/** @typedef {import('../../attnlab.js').Transformer} Model */
/** @typedef {import('../../attnlab.js').LlamaConfig} LlamaConfig */

/**
 * @typedef {object} Stage  one box of the diagram
 * @property {string} key     strings: poem.arch.stage.<key>
 * @property {number[]} shape  the activation's shape after the stage, (T, …)
 * @property {number} params  its parameters (per layer inside the block)
 * @property {'embedding' | 'attention' | 'mlp' | 'norm'} group
 * @property {boolean} block   inside the repeated block
 */

/**
 * The stages of a Llama-family decoder at sequence length T, top to bottom.
 * @param {LlamaConfig} c
 * @param {number} T
 * @returns {Stage[]}
 */
export function llamaStages(c, T) {
  const { vocabSize: V, embedDim: E, numHeads: H, hiddenDim: F } = c;
  const d = c.headDim ?? E / H;
  const kv = c.numKVHeads ?? H;
  const bias = c.attentionBias === 'all' ? 1 : 0;
  const qkvBias = c.attentionBias === 'none' ? 0 : 1;
  /** @type {(key: string, shape: number[], params: number, group: Stage['group'], block?: boolean) => Stage} */
  const s = (key, shape, params, group, block = true) => ({ key, shape, params, group, block });
  return [
    s('embed', [T, E], V * E, 'embedding', false),
    s('norm1', [T, E], E, 'norm'),
    s('qkv', [H + 2 * kv, T, d], E * (H + 2 * kv) * d + qkvBias * (H + 2 * kv) * d, 'attention'),
    s('rope', [H + kv, T, d], 0, 'attention'),
    s('attn', [H, T, T], 0, 'attention'),
    s('out', [T, E], H * d * E + bias * E, 'attention'),
    s('res1', [T, E], 0, 'attention'),
    s('norm2', [T, E], E, 'norm'),
    s('swiglu', [T, F], 2 * E * F, 'mlp'),
    s('down', [T, E], F * E, 'mlp'),
    s('res2', [T, E], 0, 'mlp'),
    s('final', [T, E], E, 'norm', false),
    s('head', [T, V], c.tieEmbeddings ? 0 : V * E, 'embedding', false),
  ];
}

/**
 * Parameters per group over the whole model (the block's stages × numLayers) and their shares.
 * @param {LlamaConfig} c
 */
export function parameterShares(c) {
  /** @type {Record<Stage['group'], number>} */
  const groups = { embedding: 0, attention: 0, mlp: 0, norm: 0 };
  for (const st of llamaStages(c, 1)) groups[st.group] += st.params * (st.block ? c.numLayers : 1);
  const total = Object.values(groups).reduce((a, b) => a + b, 0);
  const shares = Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, v / total]));
  return { groups, total, shares };
}

/** The windows of the experiment (W keys per query); null is the full causal attention the model was trained with. */
export const WINDOWS = [1, 2, 4, 8, 16, null];

/**
 * The trained model's weights with a sliding window of W keys (null: none). The caller disposes it.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Model} model  a Llama-family model
 * @param {number | null} W
 * @returns {Model}
 */
export function windowedModel(attn, model, W) {
  const config = /** @type {LlamaConfig} */ (model.config);
  const windowed = attn.createModel({ ...config, slidingWindow: W });
  windowed.loadStateDict(model.stateDict());
  return windowed;
}

/**
 * The held-out loss (nats per predicted token) at each window, beside the full model's.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Model} model
 * @param {{ ids: Int32Array }[]} poems
 * @param {(number | null)[]} [windows]
 * @returns {{ window: number | null, loss: number, delta: number }[]}
 */
export function windowLosses(attn, model, poems, windows = WINDOWS) {
  const full = meanLoss(model, poems);
  return windows.map((W) => {
    if (W === null) return { window: null, loss: full, delta: 0 };
    const m = windowedModel(attn, model, W);
    try {
      const loss = meanLoss(m, poems);
      return { window: W, loss, delta: loss - full };
    } finally {
      m.dispose();
    }
  });
}

/**
 * The attention mass each head puts on the earlier lines (their characters and punctuation; [BOS] aside), averaged
 * over the characters of lines 2 onward: what a window the length of one line takes away.
 * @param {{ data: Float32Array, shape: number[] }[]} attentions  per layer (1, H, T, T)
 * @param {import('./heads.js').Position[]} pos  poemPositions of the T tokens ([BOS] first)
 * @returns {number[][]}  (L, H)
 */
export function earlierLineMass(attentions, pos) {
  const starts = pos.map((p) => (p.line > 0 ? pos.findIndex((q) => q.line === p.line) : -1));
  return attentions.map(({ data, shape }) => {
    const [, H, T] = shape;
    return Array.from({ length: H }, (_, h) => {
      let sum = 0;
      let rows = 0;
      for (let i = 0; i < T; i++) {
        if (starts[i] < 0) continue;
        for (let j = 1; j < starts[i]; j++) sum += data[(h * T + i) * T + j];
        rows++;
      }
      return rows ? sum / rows : 0;
    });
  });
}

/** −log softmax(logits[row])[target], in float64. */
function nll(/** @type {Float32Array} */ logits, /** @type {number} */ row, /** @type {number} */ target, V = 0) {
  const r = logits.subarray(row * V, (row + 1) * V);
  let max = -Infinity;
  for (const x of r) max = Math.max(max, x);
  let z = 0;
  for (const x of r) z += Math.exp(x - max);
  return Math.log(z) + max - r[target];
}

/**
 * "只看本句": each line (its characters and its 、/。) read alone after [BOS], against the whole poem, on the same
 * targets: every token of a line but its first (the first has nothing of its own line to go on).
 * @param {Model} model
 * @param {{ ids: Int32Array, chars: string[] }[]} poems  [BOS] + text, as poemFromText gives
 * @returns {{ full: number, lineOnly: number, targets: number }}  mean nats per target
 */
export function lineOnlyLoss(model, poems) {
  const V = model.config.vocabSize;
  let full = 0;
  let lineOnly = 0;
  let targets = 0;
  for (const { ids, chars } of poems) {
    const whole = model.forward({ data: ids, shape: [1, ids.length] }).logits.data;
    for (let start = 1, i = 1; i < ids.length; i++) {
      if (!LINE_ENDS.has(chars[i])) continue;
      const alone = Int32Array.from([ids[0], ...ids.subarray(start, i + 1)]);
      const logits = model.forward({ data: alone, shape: [1, alone.length] }).logits.data;
      for (let k = 2; k < alone.length; k++) {
        lineOnly += nll(logits, k - 1, alone[k], V);
        full += nll(whole, start + k - 2, alone[k], V);
        targets++;
      }
      start = i + 1;
    }
  }
  return { full: full / targets, lineOnly: lineOnly / targets, targets };
}
