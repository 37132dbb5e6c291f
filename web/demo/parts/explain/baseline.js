// @ts-check
// Part "explain", the uniform-attention baseline (Wiegreffe & Pinter 2019): a small classification task trained in
// the page twice from the same seed, once with learned attention and once with attention frozen to uniform, and
// both models' accuracy on held-out examples. No DOM (worker.js runs it off the page's thread).
//
// The task: five-character poems from the model folder's held-out.jsonl, the whole of a quatrain (绝句, the test
// split's jueju5) or the first four lines of an eight-line regulated poem (律诗, the neighbour split's lushi5): the
// same form, 20 characters and 4 lines either way, so length and punctuation give nothing away. A small Llama reads
// [BOS] + the 24 characters and learns to put the class's token ('绝' or '律') at the last position (cross-entropy on
// that position only); it is scored by which of the two logits is larger there.
//
// Frozen-uniform attention through the public API: the package cannot freeze a parameter, but with W_Q = W_K = 0
// every score is 0, so each query's softmax is uniform over the keys it may see (1/(i+1), causal), and the gradients
// of W_Q and W_K are exactly 0 (∂s/∂W_Q ∝ k = 0 and ∂s/∂W_K ∝ q = 0), so AdamW (its decay too) leaves them 0: the
// attention stays uniform for the whole run. Everything else starts from the same seed's weights.

import { fromText } from '../../shared/char-tokenizer.js';
import { rng } from '../../shared/random.js';

/** The two classes' tokens: quatrain (绝句), the opening of an eight-line regulated poem (律诗). */
export const CLASS_CHARS = ['绝', '律'];
/** The classifier: a small Llama (2 layers × 2 heads, E = 32). */
export const CLASSIFIER = {
  arch: /** @type {'llama'} */ ('llama'),
  embedDim: 32,
  numLayers: 2,
  numHeads: 2,
  hiddenDim: 64,
  contextLength: 32,
};
/** Every fourth example of each class is held out. */
export const TEST_EVERY = 4;

/**
 * The task's examples from held-out.jsonl's records: { text, label } (0 quatrain, 1 regulated-poem opening), the
 * training and the test examples.
 * @param {{ split?: string, form?: string, text: string }[]} records
 */
export function poemClasses(records) {
  const firstFour = (/** @type {string} */ s) => s.split('。').slice(0, 2).join('。') + '。';
  const classes = [
    records.filter((r) => r.form === 'jueju5').map((r) => ({ text: r.text, label: 0 })),
    records.filter((r) => r.form === 'lushi5').map((r) => ({ text: firstFour(r.text), label: 1 })),
  ];
  const ok = (/** @type {{ text: string }} */ e) => [...e.text].length === 24;
  const [a, b] = classes.map((c) => c.filter(ok));
  const pick = (/** @type {boolean} */ test) =>
    [a, b].flatMap((c) => c.filter((_, i) => (i % TEST_EVERY === 0) === test));
  return { train: pick(false), test: pick(true) };
}

/**
 * The tokenizer of the examples (and the two class characters) and each example as ids [BOS] + text.
 * @param {{ text: string, label: number }[]} examples
 */
export function classTokenizer(examples) {
  const tok = fromText(examples.map((e) => e.text).join('') + CLASS_CHARS.join(''), 4000);
  const classIds = CLASS_CHARS.map((c) => tok.encode(c, { bos: false })[0]);
  return { tok, classIds };
}

/**
 * A batch: tokens (B, T) and targets −100 everywhere but the last position, the class's token.
 * @param {{ ids: Int32Array, label: number }[]} rows
 * @param {number[]} classIds
 */
export function classBatch(rows, classIds) {
  const T = rows[0].ids.length;
  const tokens = new Int32Array(rows.length * T);
  const targets = new Int32Array(rows.length * T).fill(-100);
  rows.forEach((r, b) => {
    tokens.set(r.ids, b * T);
    targets[b * T + T - 1] = classIds[r.label];
  });
  return { tokens: { data: tokens, shape: [rows.length, T] }, targets: { data: targets, shape: [rows.length, T] } };
}

/**
 * The classifier's starting weights, the same for both runs of a seed: every matrix N(0, 0.02²) (Box–Muller on the
 * page's seeded generator), every norm 1; with `uniform`, W_Q and W_K of every layer 0 (attention uniform over the
 * visible keys, and kept so by training). Hugging Face's Llama names; the output layer is tied to the embedding.
 * @param {{ numLayers: number, numHeads: number, embedDim: number, hiddenDim: number, vocabSize: number }} c
 * @param {number} seed
 * @param {boolean} uniform
 */
export function initialWeights(c, seed, uniform) {
  const r = rng(seed);
  const normal = (/** @type {number[]} */ shape, /** @type {boolean} */ zero) => {
    const data = new Float32Array(shape[0] * (shape[1] ?? 1));
    for (let i = 0; i < data.length; i++)
      data[i] = 0.02 * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    return { data: zero ? data.fill(0) : data, shape };
  };
  const ones = (/** @type {number} */ n) => ({ data: new Float32Array(n).fill(1), shape: [n] });
  const { embedDim: E, hiddenDim: F } = c;
  /** @type {Record<string, { data: Float32Array, shape: number[] }>} */
  const w = { 'model.embed_tokens.weight': normal([c.vocabSize, E], false), 'model.norm.weight': ones(E) };
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    w[`${p}input_layernorm.weight`] = ones(E);
    w[`${p}post_attention_layernorm.weight`] = ones(E);
    for (const x of ['q', 'k', 'v', 'o'])
      w[`${p}self_attn.${x}_proj.weight`] = normal([E, E], uniform && (x === 'q' || x === 'k'));
    w[`${p}mlp.gate_proj.weight`] = normal([F, E], false);
    w[`${p}mlp.up_proj.weight`] = normal([F, E], false);
    w[`${p}mlp.down_proj.weight`] = normal([E, F], false);
  }
  return w;
}

/**
 * Accuracy: the share of rows whose class token's logit, at the last position, beats the other class's.
 * @param {import('../../attnlab.js').Transformer} model
 * @param {{ ids: Int32Array, label: number }[]} rows
 * @param {number[]} classIds
 */
export function accuracy(model, rows, classIds) {
  const T = rows[0].ids.length;
  const V = model.config.vocabSize;
  const tokens = { data: new Int32Array(rows.flatMap((r) => Array.from(r.ids))), shape: [rows.length, T] };
  const { logits } = model.forward(tokens, { lastLogitsOnly: true });
  let right = 0;
  rows.forEach((r, b) => {
    const [l0, l1] = classIds.map((c) => logits.data[b * V + c]);
    if ((l1 > l0 ? 1 : 0) === r.label) right += 1;
  });
  return right / rows.length;
}

/**
 * One run: a fresh classifier from `seed` (attention learned, or frozen uniform), `steps` AdamW steps on random
 * batches of the training examples (the same batches for both kinds: the sampler's seed is the run's), then its
 * accuracy on the training and the test examples.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {{ train: { ids: Int32Array, label: number }[], test: { ids: Int32Array, label: number }[], classIds: number[], vocabSize: number }} data
 * @param {{ uniform: boolean, seed: number, steps: number, batch?: number, lr?: number, onStep?: (step: number, loss: number) => void }} o
 */
export function trainClassifier(attn, data, { uniform, seed, steps, batch = 16, lr = 3e-3, onStep }) {
  const config = { ...CLASSIFIER, vocabSize: data.vocabSize };
  const model = attn.createModel({ ...config, tieEmbeddings: true, seed });
  try {
    model.loadStateDict(initialWeights(config, seed, uniform));
    const r = rng(seed * 2 + 1);
    const losses = [];
    for (let s = 0; s < steps; s++) {
      const rows = Array.from({ length: batch }, () => data.train[Math.floor(r() * data.train.length)]);
      const { tokens, targets } = classBatch(rows, data.classIds);
      const { loss } = model.trainStep(tokens, targets, { lr, weightDecay: 0.01 });
      losses.push(loss);
      onStep?.(s + 1, loss);
    }
    const acc = { train: accuracy(model, data.train, data.classIds), test: accuracy(model, data.test, data.classIds) };
    return {
      losses,
      accuracy: acc,
      attentions: model.forward(classBatch([data.test[0]], data.classIds).tokens, { outputAttentions: true })
        .attentions,
    };
  } finally {
    model.dispose();
  }
}

/**
 * The experiment: the task's data from held-out.jsonl's records, and both runs from the same seed.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {{ split?: string, form?: string, text: string }[]} records
 * @param {{ seed: number, steps: number, onStep?: (kind: string, step: number, loss: number) => void }} o
 */
export function uniformBaseline(attn, records, { seed, steps, onStep }) {
  const { train, test } = poemClasses(records);
  const { tok, classIds } = classTokenizer([...train, ...test]);
  const ids = (/** @type {{ text: string, label: number }} */ e) => ({ ids: tok.encode(e.text), label: e.label });
  const data = { train: train.map(ids), test: test.map(ids), classIds, vocabSize: tok.tokens.length };
  const run = (/** @type {boolean} */ uniform) =>
    trainClassifier(attn, data, {
      uniform,
      seed,
      steps,
      onStep: (s, l) => onStep?.(uniform ? 'uniform' : 'learned', s, l),
    });
  const chance = Math.max(...[0, 1].map((c) => data.test.filter((e) => e.label === c).length)) / data.test.length;
  return { learned: run(false), uniform: run(true), train: data.train.length, test: data.test.length, chance };
}
