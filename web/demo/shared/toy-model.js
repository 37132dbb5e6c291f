// @ts-check
// The toy models trained by scripts/train_toy.py (models/toy-<task>.json), run with attnlab: the attention layer is
// attnlab's createMultiHeadAttention + loadStateDict, the readout attnlab's GEMM (shared/linear.js). Around them, the
// token embedding (a table lookup plus the fixed positional encoding) and the residual x + a stay here: attnlab's
// TinyTransformer computes the whole model but has no attention biases (the recall toy has them) and no key padding
// (the multi-head part pads), so it runs the reversal toy only where neither is needed (the training part). No DOM:
// used by the page and by tests/js/demo/shared/toy-model.test.mjs.
//
//   x      = embedding.weight[tokens] + pe          (L, E)
//   a      = MHA(x, x, x)                           attnlab, batch_first, per-head weights
//   logits = (x + a) · readout.weightᵀ + readout.bias     attnlab (shared/linear.js)

import { positionalEncoding, causalMask } from './inputs.js';
import { argmax } from './stats.js';
import { createLinear } from './linear.js';
import { t } from '../i18n.js';

/** @typedef {import('../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {import('../attnlab.js').Tensor} Tensor */
/** @typedef {import('./random.js').Rng} Rng */

/**
 * A toy model, parsed.
 * @typedef {object} ToyModel
 * @property {'reverse' | 'recall'} task
 * @property {string} description
 * @property {string[]} vocab
 * @property {Map<string, number>} index token → id
 * @property {number} V
 * @property {number} E
 * @property {number} H
 * @property {number} T
 * @property {boolean} bias
 * @property {Float32Array} embedding (V, E)
 * @property {Float32Array} readoutW (V, E)
 * @property {Float32Array} readoutB (V)
 * @property {Record<string, Tensor>} stateDict the attention layer's, PyTorch's names
 * @property {{ answer_accuracy: number, eval_examples: number } & Record<string, any>} training
 * @property {any[]} examples reference examples with PyTorch's outputs
 * @property {{ atol: number, rtol: number }} tolerance
 */

/**
 * Parse a toy-model JSON document into typed arrays. Throws an Error that says what is wrong.
 * @param {any} doc
 * @returns {ToyModel}
 */
export function loadToy(doc) {
  if (!doc || doc.format !== 'attnlab-toy-model') throw new Error('not an attnlab toy model (format field)');
  const c = doc.config;
  /** @param {any} tensor @param {string} name */
  const f32 = (tensor, name) => {
    if (!tensor || !Array.isArray(tensor.data)) throw new Error(`toy model: missing ${name}`);
    return Float32Array.from(tensor.data);
  };
  /** @type {Record<string, Tensor>} */
  const stateDict = {};
  for (const [name, tensor] of Object.entries(doc.mha.state_dict))
    stateDict[name] = { data: f32(tensor, name), shape: /** @type {any} */ (tensor).shape.slice() };
  return {
    task: doc.task,
    description: doc.description,
    vocab: doc.vocab,
    index: new Map(doc.vocab.map((/** @type {string} */ tok, /** @type {number} */ i) => [tok, i])),
    V: c.vocab_size,
    E: c.embed_dim,
    H: c.num_heads,
    T: c.seq_len,
    bias: !!c.bias,
    embedding: f32(doc.params['embedding.weight'], 'embedding.weight'),
    readoutW: f32(doc.params['readout.weight'], 'readout.weight'),
    readoutB: f32(doc.params['readout.bias'], 'readout.bias'),
    stateDict,
    training: doc.training,
    examples: doc.examples,
    tolerance: doc.tolerance,
  };
}

/**
 * An example of the toy's task, as scripts/train_toy.py draws them (same distributions, JS RNG).
 * @param {{ task: string, T?: number, V?: number }} model
 * @param {Rng} rnd
 * @returns {{ tokens: number[], targets: (number | null)[] }}
 */
export function sampleExample(model, rnd) {
  if (model.task === 'reverse') {
    const tokens = Array.from({ length: model.T }, () => rnd.int(model.V));
    return { tokens, targets: tokens.slice().reverse() };
  }
  if (model.task === 'recall') {
    const keys = shuffle([0, 1, 2, 3, 4, 5, 6, 7], rnd).slice(0, 5);
    const vals = keys.map(() => rnd.int(10));
    const tokens = keys.map((k, i) => 10 + k * 10 + vals[i]);
    const qi = shuffle([0, 1, 2, 3, 4], rnd).slice(0, 3);
    for (const i of qi) tokens.push(90 + keys[i]);
    return { tokens, targets: expectedAnswers(model, tokens) };
  }
  throw new Error(`unknown toy task ${model.task}`);
}

/**
 * @param {number[]} a shuffled in place
 * @param {Rng} rnd
 */
function shuffle(a, rnd) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rnd.int(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/**
 * The right answers for a token sequence, computed from the task's rule: an array of token ids, with null
 * where the position is not scored (recall: store tokens) or has no answer (a query whose key is not stored).
 * @param {{ task: string }} model
 * @param {number[]} tokens
 * @returns {(number | null)[]}
 */
export function expectedAnswers(model, tokens) {
  if (model.task === 'reverse') return tokens.slice().reverse();
  const store = new Map();
  for (const tk of tokens) if (tk >= 10 && tk < 90) store.set(Math.floor((tk - 10) / 10), (tk - 10) % 10);
  return tokens.map((tk) => (tk >= 90 ? (store.has(tk - 90) ? store.get(tk - 90) : null) : null));
}

/**
 * Text ("A B C" / "a=3 b=1 a?") → token ids, or { error } naming the unknown tokens.
 * @param {{ task: string, index: Map<string, number> }} model
 * @param {string} text
 * @returns {{ ids: number[], error?: undefined } | { error: string, ids?: undefined }}
 */
export function parseTokens(model, text) {
  const words = text
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  if (!words.length) return { error: t('toy.empty') };
  const bad = words.filter((w) => !model.index.has(w));
  if (bad.length) {
    const kind = model.task === 'reverse' ? 'reverse' : 'recall';
    return { error: t(`toy.unknown.${kind}`, { bad: bad.map((b) => `"${b}"`).join(', ') }) };
  }
  return { ids: words.map((w) => model.index.get(w)) };
}

/**
 * Input rows x (L×E): embedding + pe; padding rows (ids[i] < 0) are pe only.
 * @param {ToyModel} model
 * @param {number[]} ids
 */
export function embed(model, ids) {
  const { E } = model;
  const L = ids.length;
  const pe = positionalEncoding(L, E);
  const x = new Float32Array(L * E);
  for (let p = 0; p < L; p++) {
    for (let e = 0; e < E; e++) x[p * E + e] = (ids[p] >= 0 ? model.embedding[ids[p] * E + e] : 0) + pe[p * E + e];
  }
  return x;
}

/**
 * @typedef {{ mha: MultiHeadAttention, readout: import('./linear.js').Linear, dispose: () => void }} ToyLayers
 * a toy model's attention layer and readout, on attnlab (dispose when done)
 */

/**
 * attnlab's layers of the toy model: its trained attention layer and its readout.
 * @param {Attnlab} attn
 * @param {ToyModel} model
 * @returns {ToyLayers}
 */
export function createToyLayers(attn, model) {
  const mha = attn.createMultiHeadAttention({
    embedDim: model.E,
    numHeads: model.H,
    bias: model.bias,
    batchFirst: true,
  });
  mha.loadStateDict(model.stateDict);
  const readout = createLinear(attn, model.readoutW, model.readoutB, model.V, model.E);
  return {
    mha,
    readout,
    dispose() {
      mha.dispose();
      readout.dispose();
    },
  };
}

/**
 * Run the toy model on token ids (ids < 0 are padding: masked as keys). options: { causal }. The head average is
 * attnlab's (averageAttnWeights, PyTorch's diagnostic).
 * @param {ToyModel} model
 * @param {ToyLayers} layers createToyLayers'
 * @param {number[]} ids
 * @returns {{ x: Float32Array, output: Float32Array, weights: Float32Array, average: Float32Array,
 *   logits: Float32Array, predicted: number[] }} weights (H, L, L), average (L, L), logits (L, V)
 */
export function runToy(model, { mha, readout }, ids, { causal = false } = {}) {
  const L = ids.length;
  const x = embed(model, ids);
  /** @type {import('../attnlab.js').MultiHeadAttentionForwardOptions} */
  const opts = { needWeights: true, averageAttnWeights: false };
  if (ids.some((tk) => tk < 0))
    opts.keyPaddingMask = { data: Uint8Array.from(ids, (tk) => (tk < 0 ? 1 : 0)), shape: [1, L] };
  if (causal) opts.attnMask = causalMask(L);
  const X = { data: x, shape: [1, L, model.E] };
  const { output, weights } = mha.forward(X, X, X, opts);
  const average = mha.forward(X, X, X, { ...opts, averageAttnWeights: true }).weights.data;
  const h = x.map((v, i) => v + output.data[i]); // the residual, in float32
  const logits = readout.apply(h, L);
  return {
    x,
    output: output.data,
    weights: weights.data,
    average,
    logits,
    predicted: Array.from(argmax(logits, L, model.V)),
  };
}

/**
 * The two shipped toy models (models/toy-reverse.json, toy-recall.json), fetched next to the page.
 * @returns {Promise<{ reverse: ToyModel, recall: ToyModel }>}
 */
export async function fetchToys() {
  /** @type {Record<string, ToyModel>} */
  const toys = {};
  for (const task of ['reverse', 'recall']) {
    const res = await fetch(new URL(`../models/toy-${task}.json`, import.meta.url));
    if (!res.ok) throw new Error(t('mha.loadFailed', { f: `models/toy-${task}.json`, s: res.status }));
    toys[task] = loadToy(await res.json());
  }
  return { reverse: toys.reverse, recall: toys.recall };
}
