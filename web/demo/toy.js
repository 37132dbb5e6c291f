// The toy models trained by scripts/train_toy.py (web/demo/models/toy-<task>.json), run with attnlab.
// The attention layer is attnlab's createMultiHeadAttention + loadStateDict; the embedding, positional
// encoding, residual and readout around it are plain JS (a few lines each). No DOM: used by the page and by
// tests/js/toy_model.test.mjs.
//
//   x      = embedding.weight[tokens] + pe          (L, E)
//   a      = MHA(x, x, x)                           attnlab, batch_first, per-head weights
//   logits = (x + a) · readout.weightᵀ + readout.bias

import { positionalEncoding } from './util.js';
import { t } from './i18n.js';

/** Parse a toy-model JSON document into typed arrays. Throws an Error that says what is wrong. */
export function loadToy(doc) {
  if (!doc || doc.format !== 'attnlab-toy-model') throw new Error('not an attnlab toy model (format field)');
  const c = doc.config;
  const f32 = (t, name) => {
    if (!t || !Array.isArray(t.data)) throw new Error(`toy model: missing ${name}`);
    return Float32Array.from(t.data);
  };
  const stateDict = {};
  for (const [name, t] of Object.entries(doc.mha.state_dict))
    stateDict[name] = { data: f32(t, name), shape: t.shape.slice() };
  return {
    task: doc.task,
    description: doc.description,
    vocab: doc.vocab,
    index: new Map(doc.vocab.map((tok, i) => [tok, i])),
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

/** Example generators, mirroring scripts/train_toy.py (same distributions, JS RNG). */
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
 */
export function expectedAnswers(model, tokens) {
  if (model.task === 'reverse') return tokens.slice().reverse();
  const store = new Map();
  for (const t of tokens) if (t >= 10 && t < 90) store.set(Math.floor((t - 10) / 10), (t - 10) % 10);
  return tokens.map((t) => (t >= 90 ? (store.has(t - 90) ? store.get(t - 90) : null) : null));
}

/** Text ("A B C" / "a=3 b=1 a?") → token ids, or { error } naming the unknown tokens. */
export function parseTokens(model, text) {
  const words = text
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean);
  if (!words.length) return { error: t('toy.empty') };
  const bad = words.filter((w) => !model.index.has(w));
  if (bad.length) {
    return {
      error: t(`toy.unknown.${model.task === 'reverse' ? 'reverse' : 'recall'}`, {
        bad: bad.map((b) => `"${b}"`).join(', '),
      }),
    };
  }
  return { ids: words.map((w) => model.index.get(w)) };
}

/** Input rows x (L×E): embedding + pe; padding rows (ids[i] < 0) are pe only. */
export function embed(model, ids) {
  const { E } = model;
  const L = ids.length;
  const pe = positionalEncoding(L, E);
  const x = new Float32Array(L * E);
  for (let t = 0; t < L; t++) {
    for (let e = 0; e < E; e++) x[t * E + e] = (ids[t] >= 0 ? model.embedding[ids[t] * E + e] : 0) + pe[t * E + e];
  }
  return x;
}

/** logits (L×V) = (x + a) · Wᵀ + b, in float32 arithmetic order like a float32 torch run. */
export function readout(model, x, a, L) {
  const { E, V } = model;
  const logits = new Float32Array(L * V);
  const hrow = new Float32Array(E);
  for (let t = 0; t < L; t++) {
    for (let e = 0; e < E; e++) hrow[e] = x[t * E + e] + a[t * E + e];
    for (let v = 0; v < V; v++) {
      let s = 0;
      for (let e = 0; e < E; e++) s += hrow[e] * model.readoutW[v * E + e];
      logits[t * V + v] = s + model.readoutB[v];
    }
  }
  return logits;
}

export function argmaxRows(logits, L, V) {
  const out = [];
  for (let t = 0; t < L; t++) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[t * V + v] > logits[t * V + best]) best = v;
    out.push(best);
  }
  return out;
}

/** attnlab MultiheadAttention holding the toy model's trained layer. */
export function createToyMha(attn, model) {
  const mha = attn.createMultiHeadAttention({
    embedDim: model.E,
    numHeads: model.H,
    bias: model.bias,
    batchFirst: true,
  });
  mha.loadStateDict(model.stateDict);
  return mha;
}

/**
 * Run the toy model on token ids (ids < 0 are padding: masked as keys). options: { causal }.
 * Returns { x, output (L×E), weights (H×L×L per-head), average (L×L), logits (L×V), predicted }.
 */
export function runToy(model, mha, ids, { causal = false } = {}) {
  const L = ids.length;
  const { E, V, H } = model;
  const x = embed(model, ids);
  const opts = { needWeights: true, averageAttnWeights: false };
  if (ids.some((t) => t < 0))
    opts.keyPaddingMask = { data: Uint8Array.from(ids, (t) => (t < 0 ? 1 : 0)), shape: [1, L] };
  if (causal) opts.attnMask = causalMask(L);
  const X = { data: x, shape: [1, L, E] };
  const { output, weights } = mha.forward(X, X, X, opts);
  const logits = readout(model, x, output.data, L);
  const average = new Float32Array(L * L);
  for (let hh = 0; hh < H; hh++) for (let i = 0; i < L * L; i++) average[i] += weights.data[hh * L * L + i] / H;
  return { x, output: output.data, weights: weights.data, average, logits, predicted: argmaxRows(logits, L, V) };
}

/** nn.MultiheadAttention-style bool mask (1 = masked out) hiding keys j > i. */
export function causalMask(L) {
  const m = new Uint8Array(L * L);
  for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) m[i * L + j] = 1;
  return { data: m, shape: [L, L] };
}
