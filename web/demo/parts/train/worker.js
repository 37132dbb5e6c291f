// @ts-check
// Module Web Worker of the part "Train it yourself": owns an attnlab TinyTransformer and trains it with
// trainStep (Adam) on fresh random batches, so the page stays responsive. Every TICK_MS of running it posts a
// tick: the new losses, the accuracy on fresh examples (argmax of the logits, in JS), and the attention weights
// and answers for the task's fixed example (now, and at the steps since the last tick that the replay keeps).
//
// in:  { type: 'init', variant }                                  → { type: 'ready', variant, version, warmUpMs }
//      { type: 'reset', gen, task, heads, seed, lr, batch, pace, stopAt, noScale, initScale } → a tick at step 0
//      { type: 'run' } | { type: 'pause' }                          → ticks … then { type: 'stopped', reason }
//        (reason 'done': the accuracy reached stopAt, which stops a run once; a later run goes on until paused)
//      { type: 'set', lr?, batch?, pace?, stopAt? }                 (applies from the next step)
// out: { type: 'tick' | 'stopped' | 'error', ... }; 'stopped' carries the trained state dict.

import { init } from '../../attnlab.js';
import { rng } from '../../shared/random.js';
import { argmax } from '../../shared/stats.js';
import { TASKS, EMBED_DIM, makeBatch, accuracy, rescaleInit, fixedIds } from './compute.js';

/** @typedef {import('./compute.js').Task} Task */
/** @typedef {import('./compute.js').Snapshot} Snapshot */

const TICK_MS = 60; // ≈ 16 updates a second while running
const EVAL_EXAMPLES = 256;
const PROBE_EVERY = 10; // steps between evaluations until the accuracy target is reached

/** @type {import('../../attnlab.js').Attnlab} */
let attn = null;
/** @type {import('../../attnlab.js').TinyTransformer} */
let model = null;
/** @type {Task} the task */
let t = null;
/** @type {{ heads: number, seed: number, lr: number, batch: number, pace: number, stopAt: number }} */
let cfg = null;
/** @type {import('../../shared/random.js').Rng} training examples */
let rnd = null;
/** @type {import('../../shared/random.js').Rng} fresh evaluation examples */
let evalRnd = null;
/** @type {import('../../attnlab.js').Tokens} the fixed example */
let fixed = null;
let step = 0;
let running = false;
let runMs = 0; // wall time spent running (pauses excluded)
let trainMs = 0; // of which inside trainStep
/** @type {{ step: number, ms: number, trainMs: number } | null} when the accuracy first reached stopAt (or 95 %) */
let reached = null;
let stoppedAtTarget = false; // training stops at stopAt once; resuming afterwards runs until paused
/** @type {[number, number, number][]} [runMs, step, trainMs] samples of the last second, for steps/s */
let recent = [];
/** @type {{ ms: number, step: number } | null} for paced runs */
let paceStart = null;
/** @type {{ step: number, answers: number, sequences: number }[]} since the last tick */
let evals = [];
/** @type {Snapshot[]} of the fixed example since the last tick */
let snaps = [];
let gen = 0; // the page's reset counter, echoed in every message so that it can drop those of an older model

// Messages are handled one at a time, in order (init is asynchronous).
let queue = Promise.resolve();
self.onmessage = (ev) => {
  queue = queue
    .then(() => handle(ev.data))
    .catch((e) => {
      running = false;
      postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
    });
};

// A zero-delay scheduler between ticks (setTimeout(0) is clamped to 4 ms when nested); pause messages get in.
// Each run has its own chain number, so that a tick still scheduled by a paused run never joins a resumed one.
let chain = 0;
const CHANNEL = new MessageChannel();
CHANNEL.port1.onmessage = (/** @type {MessageEvent<number>} */ ev) => {
  if (ev.data !== chain) return;
  try {
    loop();
  } catch (e) {
    running = false;
    postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
  }
};
/** @param {number} ms */
const schedule = (ms) => {
  const c = chain;
  if (ms > 0) setTimeout(() => CHANNEL.port2.postMessage(c), ms);
  else CHANNEL.port2.postMessage(c);
};

/** @param {Record<string, any>} m */
async function handle(m) {
  if (m.type === 'init') {
    attn = await init({ variant: m.variant });
    const warm = warmUp();
    postMessage({ type: 'ready', variant: attn.variant, version: attn.version, warmUpMs: warm });
  } else if (m.type === 'reset') {
    reset(m);
  } else if (m.type === 'set') {
    for (const k of /** @type {const} */ (['lr', 'batch', 'pace', 'stopAt'])) if (k in m) cfg[k] = m[k];
    paceStart = null;
  } else if (m.type === 'run') {
    if (running || !model) return;
    running = true;
    chain += 1;
    paceStart = null;
    recent = [];
    schedule(0);
  } else if (m.type === 'pause') {
    if (!running) return;
    running = false;
    stop('paused');
  }
}

/**
 * A fresh model for the page's settings, and a tick at step 0.
 * @param {Record<string, any>} m
 */
function reset(m) {
  running = false;
  if (model) model.dispose();
  t = TASKS[/** @type {keyof typeof TASKS} */ (m.task)];
  gen = m.gen;
  cfg = { heads: m.heads, seed: m.seed, lr: m.lr, batch: m.batch, pace: m.pace, stopAt: m.stopAt };
  model = attn.createTinyTransformer({
    vocabSize: t.V,
    embedDim: EMBED_DIM,
    numHeads: cfg.heads,
    causal: t.causal,
    seed: cfg.seed,
  });
  rescaleInit(model, m.initScale ?? 1, m.noScale ? Math.sqrt(EMBED_DIM / cfg.heads) : 1);
  rnd = rng(cfg.seed * 2 + 1);
  evalRnd = rng(cfg.seed * 2 + 2);
  fixed = { data: Int32Array.from(fixedIds(t)), shape: [1, t.T] };
  step = 0;
  runMs = 0;
  trainMs = 0;
  reached = null;
  stoppedAtTarget = false;
  recent = [];
  snaps = [];
  evals = [];
  post([]);
}

function loop() {
  if (!running) return;
  const start = performance.now();
  const losses = [];
  let due = Infinity; // steps this tick may take (paced runs)
  if (cfg.pace > 0) {
    if (!paceStart) paceStart = { ms: runMs, step };
    due = Math.max(0, Math.floor(paceStart.step + ((runMs - paceStart.ms) / 1000) * cfg.pace) + 1 - step);
  }
  while (losses.length < due && performance.now() - start < TICK_MS) {
    const { tokens, targets } = makeBatch(t, rnd, cfg.batch);
    const s0 = performance.now();
    const { loss } = model.trainStep(tokens, targets, { lr: cfg.lr });
    trainMs += performance.now() - s0;
    losses.push(loss);
    step += 1;
    if (wantSnapshot(step)) snapshot();
    // Until the target is reached, evaluate every PROBE_EVERY steps: the accuracy curve and the step (and
    // time) of reaching it do not depend on how many steps fit in a tick.
    if (!reached && step % PROBE_EVERY === 0) {
      const acc = evaluate();
      if (acc.answers >= target()) {
        reached = { step, ms: runMs + (performance.now() - start), trainMs };
        break;
      }
    }
  }
  runMs += performance.now() - start;
  const acc = post(losses);
  if (cfg.stopAt && acc.answers >= cfg.stopAt && !stoppedAtTarget) {
    stoppedAtTarget = true;
    running = false;
    stop('done');
    return;
  }
  const left = cfg.pace > 0 ? TICK_MS - (performance.now() - start) : 0; // paced: sleep out the tick
  if (left > 1) runMs += left;
  schedule(left > 1 ? left : 0);
}

const target = () => cfg.stopAt || 0.95;

/** Accuracy on EVAL_EXAMPLES fresh examples, also queued for the next tick's curve. */
function evaluate() {
  const batch = makeBatch(t, evalRnd, EVAL_EXAMPLES);
  const acc = accuracy(model.forward(batch.tokens).logits.data, batch, t.V);
  evals.push({ step, ...acc });
  return acc;
}

/**
 * Post a tick (evaluating now unless this step was just evaluated) and return the accuracy.
 * @param {number[]} losses
 */
function post(losses) {
  const e0 = performance.now();
  const acc = evals.length && evals.at(-1).step === step ? evals.at(-1) : evaluate();
  if (!snaps.length || snaps.at(-1).step !== step) snapshot();
  if (step > 0) runMs += performance.now() - e0;
  if (!reached && step > 0 && acc.answers >= target()) reached = { step, ms: runMs, trainMs };
  recent.push([runMs, step, trainMs]);
  while (recent.length > 2 && runMs - recent[0][0] > 1000) recent.shift();
  const [w0, s0, tr0] = recent[0];
  const stepsPerSecond = runMs > w0 ? ((step - s0) * 1000) / (runMs - w0) : 0;
  const trainStepsPerSecond = trainMs > tr0 ? ((step - s0) * 1000) / (trainMs - tr0) : 0;
  const last = snaps.at(-1);
  postMessage({
    type: 'tick',
    gen,
    step,
    losses: Float32Array.from(losses),
    accuracy: acc.answers,
    sequences: acc.sequences,
    evals: evals.map((e) => [e.step, e.answers]),
    weights: last.weights,
    predicted: last.predicted,
    snapshots: snaps,
    heads: cfg.heads,
    T: t.T,
    stepsPerSecond,
    trainStepsPerSecond,
    runMs,
    trainMs,
    reached,
  });
  snaps = [];
  evals = [];
  return acc;
}

/**
 * Steps whose maps are kept for the page's replay: every step at first, then fewer.
 * @param {number} s
 */
function wantSnapshot(s) {
  return s <= 300 || (s <= 3000 ? s % 10 === 0 : s % 100 === 0);
}

/** Attention weights and answers of the fixed example now, queued for the next tick. */
function snapshot() {
  const { logits, weights } = model.forward(fixed);
  snaps.push({ step, weights: weights.data, predicted: Array.from(argmax(logits.data, t.T, t.V)) });
}

/**
 * A few training steps on a throwaway model at start: the browser compiles WebAssembly in tiers (a quick
 * baseline first, optimised code after some calls), and the user's first run should not pay for that.
 */
function warmUp() {
  const start = performance.now();
  for (const causal of [false, true]) {
    const scratch = attn.createTinyTransformer({ vocabSize: 12, embedDim: EMBED_DIM, numHeads: 2, causal });
    const b = makeBatch(TASKS.reverse, rng(99), 32);
    const t0 = performance.now();
    for (let i = 0; i < 120 && performance.now() - t0 < 400; i++) scratch.trainStep(b.tokens, b.targets, { lr: 1e-3 });
    scratch.forward(b.tokens);
    scratch.dispose();
  }
  return performance.now() - start;
}

/** @param {'paused' | 'done'} reason */
function stop(reason) {
  postMessage({ type: 'stopped', gen, reason, step, reached, runMs, stateDict: model.stateDict() });
}
