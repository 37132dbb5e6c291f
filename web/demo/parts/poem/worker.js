// @ts-check
// Module Web Worker of the poem chapter's "train from scratch": owns a small attnlab Llama (compute.js SMALL) and
// trains it with trainStep (AdamW) on the training subset's quatrains or on the reader's text, character by
// character, so that the page stays responsive. Every TICK_MS of running it posts a tick: the new losses; the loss on
// held-out probe poems, never trained on, and the best head's score on each attention pattern there (heads.js); and,
// on the first probe sequence, every head's map and mean row entropy.
//
// in:  { type: 'init', variant }                          → { type: 'ready', variant }
//      { type: 'reset', gen, source: 'poems' | 'text', poems?: string[], probes?: string[], text?: string, seed,
//        lr, batch }                                      → a tick at step 0 (with the vocabulary and the probe)
//      { type: 'run' } | { type: 'pause' }                 → ticks … then { type: 'stopped', step }
// out: { type: 'tick' | 'stopped' | 'error', gen, ... }

import { init } from '../../attnlab.js';
import { rng } from '../../shared/random.js';
import { fromText } from '../../shared/char-tokenizer.js';
import * as C from './compute.js';
import { bestPatternScores, headScores, meanLoss, poemFromText, sequenceEntropy, sequenceLoss } from './heads.js';

const TICK_MS = 200;
const STEP_OPTIONS = { betas: /** @type {[number, number]} */ ([0.9, 0.99]), weightDecay: 0.01, clipGradNorm: 1 };

/** @type {import('../../attnlab.js').Attnlab} */
let attn = null;
/** @type {import('../../attnlab.js').Transformer} */
let model = null;
/**
 * @typedef {object} Run
 * @property {number} gen
 * @property {number} lr
 * @property {number} batch
 * @property {() => ReturnType<typeof C.poemBatch>} next
 * @property {Int32Array} probe  the sequence whose maps are posted
 * @property {{ ids: Int32Array, chars: string[] }[]} [probes]  held-out poems (the probe first)
 */
/** @type {Run} */
let run = null;
let step = 0;
let running = false;
let runMs = 0;
let chain = 0;

let queue = Promise.resolve();
self.onmessage = (ev) => {
  queue = queue.then(() => handle(ev.data)).catch(fail);
};

/** @param {any} e */
function fail(e) {
  running = false;
  postMessage({ type: 'error', gen: run?.gen ?? 0, message: `${e.name || 'Error'}: ${e.message}` });
}

/** @param {Record<string, any>} m */
async function handle(m) {
  if (m.type === 'init') {
    attn = await init({ variant: m.variant });
    postMessage({ type: 'ready', variant: attn.variant });
  } else if (m.type === 'reset') {
    reset(m);
  } else if (m.type === 'run' && model && !running) {
    running = true;
    chain += 1;
    const c = chain;
    setTimeout(() => loop(c), 0);
  } else if (m.type === 'pause' && running) {
    running = false;
    postMessage({ type: 'stopped', gen: run.gen, step });
  }
}

/**
 * A fresh small model and its data: whole poems (padded batches) or random windows of a text.
 * @param {Record<string, any>} m
 */
function reset(m) {
  running = false;
  if (model) model.dispose();
  const text = m.source === 'poems' ? m.poems.join('') : m.text;
  const tok = fromText(text, C.MAX_VOCAB);
  const r = rng(m.seed * 2 + 1);
  let next;
  let probe;
  let probes;
  if (m.source === 'poems') {
    const poems = m.poems.map((/** @type {string} */ p) => poemFromText(tok, p).ids);
    next = () => C.poemBatch(poems, r, m.batch, tok.special.pad);
    probes = m.probes.map((/** @type {string} */ p) => poemFromText(tok, p));
    probe = probes[0].ids;
  } else {
    const ids = tok.encode(text, { bos: false });
    const T = Math.min(C.TEXT_BLOCK, ids.length - 1);
    next = () => C.textBatch(ids, r, m.batch, T);
    probe = ids.slice(0, T);
  }
  model = attn.createModel(C.smallConfig(tok.tokens.length, m.seed));
  run = { gen: m.gen, lr: m.lr, batch: m.batch, next, probe, probes };
  step = 0;
  runMs = 0;
  const probeTokens = Array.from(probe, (id) => tok.tokens[id]);
  post([], { vocab: tok.tokens.length, probeTokens, config: model.config });
}

/** @param {number} c the run's chain: a pause followed by a run starts a new one */
function loop(c) {
  if (!running || c !== chain) return;
  const start = performance.now();
  const losses = [];
  try {
    while (performance.now() - start < TICK_MS) {
      const { tokens, targets } = run.next();
      losses.push(model.trainStep(tokens, targets, { lr: run.lr, ...STEP_OPTIONS }).loss);
      step += 1;
    }
  } catch (e) {
    fail(e);
    return;
  }
  runMs += performance.now() - start;
  post(losses);
  setTimeout(() => loop(c), 0); // lets pause messages in
}

/**
 * A tick: the new losses, the probe's maps (per layer (H, T, T)) and each head's mean entropy of the rows i ≥ 1; with
 * probe poems, the loss on them all and, per pattern, the best head's score and the uniform baseline.
 * @param {number[]} losses
 * @param {Record<string, any>} [extra]
 */
function post(losses, extra = {}) {
  const p = run.probe;
  const { attentions, logits } = model.forward({ data: p, shape: [1, p.length] }, { outputAttentions: true });
  const entropy = sequenceEntropy(attentions);
  postMessage({
    type: 'tick',
    gen: run.gen,
    step,
    runMs,
    losses,
    probeLoss: run.probes ? meanLoss(model, run.probes) : sequenceLoss(logits.data, p, model.config.vocabSize),
    patterns: run.probes ? bestPatternScores(headScores(model, run.probes).patterns) : null,
    maps: attentions.map((a) => a.data),
    entropy: entropy.mean,
    uniform: entropy.uniform,
    ...extra,
  });
}
