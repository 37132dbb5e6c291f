// Module Web Worker for part 5 ("Train it yourself"): owns an attnlab TinyTransformer and trains it with
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

import { init } from '/dist/index.mjs';
import { TASKS, EMBED_DIM, makeBatch, accuracy, argmax } from './train-tasks.js';
import { rng } from './util.js';

const TICK_MS = 60; // ≈ 16 updates a second while running
const EVAL_EXAMPLES = 256;
const PROBE_EVERY = 10; // steps between evaluations until the accuracy target is reached

let attn = null;
let model = null;
let t = null; // the task
let cfg = null; // { heads, seed, lr, batch, pace, stopAt }
let rnd = null; // training examples
let evalRnd = null; // fresh evaluation examples
let fixed = null; // Tokens of the fixed example
let step = 0;
let running = false;
let runMs = 0; // wall time spent running (pauses excluded)
let trainMs = 0; // of which inside trainStep
let reached = null; // { step, ms, trainMs } when the accuracy first reached stopAt (or 95 %)
let stoppedAtTarget = false; // training stops at stopAt once; resuming afterwards runs until paused
let recent = []; // [runMs, step, trainMs] samples of the last second, for steps/s
let paceStart = null; // { ms, step } for paced runs
let evals = []; // { step, answers, sequences } since the last tick
let snaps = []; // { step, weights, predicted } of the fixed example since the last tick
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
const channel = new MessageChannel();
channel.port1.onmessage = (ev) => {
  if (ev.data !== chain) return;
  try {
    loop();
  } catch (e) {
    running = false;
    postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
  }
};
const schedule = (ms) => {
  const c = chain;
  if (ms > 0) setTimeout(() => channel.port2.postMessage(c), ms);
  else channel.port2.postMessage(c);
};

async function handle(m) {
  if (m.type === 'init') {
    attn = await init({ variant: m.variant });
    const warm = warmUp();
    postMessage({ type: 'ready', variant: attn.variant, version: attn.version, warmUpMs: warm });
  } else if (m.type === 'reset') {
    running = false;
    if (model) model.dispose();
    t = TASKS[m.task];
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
    const ids = t.fixedText.split(' ').map((w) => t.index.get(w));
    fixed = { data: Int32Array.from(ids), shape: [1, t.T] };
    step = 0;
    runMs = 0;
    trainMs = 0;
    reached = null;
    stoppedAtTarget = false;
    recent = [];
    snaps = [];
    evals = [];
    post([]);
  } else if (m.type === 'set') {
    for (const k of ['lr', 'batch', 'pace', 'stopAt']) if (k in m) cfg[k] = m[k];
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

/** Post a tick (evaluating now unless this step was just evaluated) and return the accuracy. */
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

/** Steps whose maps are kept for the page's replay: every step at first, then fewer. */
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

/**
 * The page's initialisation controls, around the package's API: W_Q and W_K (the first 2E rows of in_proj_weight:
 * what sets how peaked the first weights are) are multiplied by initScale, and W_Q also by qFactor. TinyTransformer always divides the
 * scores by √dₖ; W_Q × √dₖ cancels that at the start, so the model begins exactly as one without the scale.
 */
function rescaleInit(m, initScale, qFactor) {
  if (initScale === 1 && qFactor === 1) return;
  const sd = m.stateDict();
  const w = sd['attn.in_proj_weight'].data;
  const rows = EMBED_DIM * EMBED_DIM; // W_Q, then W_K, then W_V
  for (let i = 0; i < 2 * rows; i++) w[i] *= initScale * (i < rows ? qFactor : 1);
  m.loadStateDict(sd);
}

function stop(reason) {
  postMessage({ type: 'stopped', gen, reason, step, reached, runMs, stateDict: model.stateDict() });
}
