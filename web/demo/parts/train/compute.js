// @ts-check
// Part "train it yourself" (§10), the numbers. The tasks: vocabulary, sequence length, random examples, training
// targets, which positions are scored and which key each query should learn to attend to (their words are in the
// catalogues, task.<id>.*). The reversal and recall examples come from shared/toy-model.js, the generators of the
// shipped toy models (scripts/train_toy.py), so a model trained here speaks the toy models' vocabulary.
// createTinyTransformer's loss is the mean cross-entropy over every position, so every position needs a target:
// positions whose answer cannot be known get one anyway (next: "·"; recall: a store token's own digit), and are left
// out of the accuracy. Then what the page shows of a run: each head's entropy and mass on the target keys, the
// curves' history, and the trained model next to the shipped toy model on the user's tokens. No DOM: imported by the
// page (view.js) and by its Web Worker (worker.js).

import { sampleExample, expectedAnswers, runToy } from '../../shared/toy-model.js';
import { argmax, entropy } from '../../shared/stats.js';

/** @typedef {import('../../shared/random.js').Rng} Rng */
/** @typedef {import('../../attnlab.js').Tokens} Tokens */
/** @typedef {import('../../attnlab.js').TinyTransformer} TinyTransformer */
/**
 * A task.
 * @typedef {object} Task
 * @property {'reverse' | 'next' | 'recall'} id
 * @property {boolean} causal
 * @property {number} T sequence length
 * @property {string[]} vocab
 * @property {string[]} inputVocab the tokens a user may type
 * @property {number} V
 * @property {Map<string, number>} index token → id
 * @property {'reverse' | 'recall'} parseKind shared/toy-model.js parseTokens' hint (letters A–L, or recall tokens)
 * @property {string} fixedText the example whose maps are drawn
 * @property {string} tryText the "try it" box's first text
 * @property {'reverse' | 'recall' | null} toy the shipped toy model of the task
 * @property {(rnd: Rng) => { tokens: number[], targets: number[], scored: boolean[] }} sample
 * @property {(ids: number[]) => (number | null)[]} answers right answers for user input (any length): null = not scored
 * @property {(ids: number[]) => (number | null)[]} targetKeys the key each query should attend to (the learned pattern)
 */

const LETTERS = 'ABCDEFGHIJKL'.split('');
const DOT = '·';
const RECALL_VOCAB = [
  ...'0123456789'.split(''),
  ...'abcdefgh'.split('').flatMap((k) => '0123456789'.split('').map((v) => `${k}=${v}`)),
  ...'abcdefgh'.split('').map((k) => `${k}?`),
];
export const EMBED_DIM = 16; // E of the toy models; the heads control offers its divisors
export const HEAD_CHOICES = [1, 2, 4, 8, 16].filter((h) => EMBED_DIM % h === 0);
export const PERIOD = 3; // the "next token" task's sequences repeat with this period

/**
 * @param {Omit<Task, 'V' | 'index'> & Record<string, any>} def
 * @returns {Task}
 */
function task(def) {
  return { ...def, V: def.vocab.length, index: new Map(def.vocab.map((tok, i) => [tok, i])) };
}

/** @type {Record<'reverse' | 'next' | 'recall', Task>} */
export const TASKS = {
  reverse: task({
    id: 'reverse',
    causal: false,
    T: 6,
    vocab: LETTERS,
    inputVocab: LETTERS,
    parseKind: 'reverse', // toy.js parseTokens' hint: letters A–L
    fixedText: 'C A F E B D',
    tryText: 'A B C D E F',
    toy: 'reverse',
    /** @param {Rng} rnd */
    sample(rnd) {
      const { tokens } = sampleExample({ task: 'reverse', T: this.T, V: this.V }, rnd);
      return { tokens, targets: tokens.slice().reverse(), scored: tokens.map(() => true) };
    },
    /** Right answers for user input (any length): null = not scored. */
    answers: (ids) => ids.slice().reverse(),
    /** The key each query should attend to (the learned pattern), or null. */
    targetKeys: (ids) => ids.map((_, i) => ids.length - 1 - i),
  }),
  next: task({
    id: 'next',
    causal: true,
    T: 6,
    vocab: [...LETTERS, DOT],
    inputVocab: LETTERS,
    parseKind: 'reverse',
    fixedText: 'D A K D A K',
    tryText: 'G C J G C J',
    toy: null,
    /** @param {Rng} rnd */
    sample(rnd) {
      const block = Array.from({ length: PERIOD }, () => rnd.int(LETTERS.length));
      const tokens = Array.from({ length: this.T }, (_, t) => block[t % PERIOD]);
      return { tokens, targets: this.targetsFor(tokens), scored: tokens.map((_, t) => t >= PERIOD - 1) };
    },
    /** @param {number[]} ids */
    targetsFor(ids) {
      return ids.map((_, t) => (t >= PERIOD - 1 ? ids[t - (PERIOD - 1)] : LETTERS.length));
    },
    /** @param {number[]} ids */
    answers(ids) {
      return ids.map((_, t) => (t >= PERIOD - 1 ? ids[t - (PERIOD - 1)] : null));
    },
    targetKeys: (ids) => ids.map((_, t) => (t >= PERIOD - 1 ? t - (PERIOD - 1) : null)),
  }),
  recall: task({
    id: 'recall',
    causal: false,
    T: 8,
    vocab: RECALL_VOCAB,
    inputVocab: RECALL_VOCAB.slice(10),
    parseKind: 'recall',
    fixedText: 'h=9 e=6 a=8 g=9 d=3 h? g? a?',
    tryText: 'b=4 f=7 c=1 h=0 a=9 f? a? b?',
    toy: 'recall',
    /** @param {Rng} rnd */
    sample(rnd) {
      const { tokens, targets } = sampleExample({ task: 'recall' }, rnd);
      return { tokens, targets: this.targetsFor(tokens, targets), scored: tokens.map((t) => t >= 90) };
    },
    /** @param {number[]} ids @param {(number | null)[]} [expected] */
    targetsFor(ids, expected = expectedAnswers({ task: 'recall' }, ids)) {
      return ids.map((t, i) => (t < 90 ? (t - 10) % 10 : (expected[i] ?? 0)));
    },
    answers: (ids) => expectedAnswers({ task: 'recall' }, ids),
    // a query "k?" (id ≥ 90) should look at the store token "k=v" with the same key (ids 10 + 10·key + digit)
    targetKeys: (ids) =>
      ids.map((q) => (q < 90 ? null : ids.findIndex((s) => s >= 10 && s < 90 && Math.floor((s - 10) / 10) === q - 90))),
  }),
};

/**
 * A batch of n fresh examples as Tokens (Int32Array, [n, T]) plus the scored mask (Uint8Array, n·T).
 * @param {Task} t
 * @param {Rng} rnd
 * @param {number} n
 */
export function makeBatch(t, rnd, n) {
  const tokens = new Int32Array(n * t.T);
  const targets = new Int32Array(n * t.T);
  const scored = new Uint8Array(n * t.T);
  for (let b = 0; b < n; b++) {
    const ex = t.sample(rnd);
    tokens.set(ex.tokens, b * t.T);
    targets.set(ex.targets, b * t.T);
    scored.set(ex.scored.map(Number), b * t.T);
  }
  return { tokens: { data: tokens, shape: [n, t.T] }, targets: { data: targets, shape: [n, t.T] }, scored };
}

/**
 * Share of scored positions whose argmax is the target, and share of examples with every scored answer right.
 * @param {Float32Array} logits
 * @param {ReturnType<typeof makeBatch>} batch
 * @param {number} V
 */
export function accuracy(logits, batch, V) {
  const [n, T] = batch.tokens.shape;
  const pred = argmax(logits, n * T, V);
  let right = 0;
  let total = 0;
  let whole = 0;
  for (let b = 0; b < n; b++) {
    let all = true;
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      if (!batch.scored[i]) continue;
      total += 1;
      if (pred[i] === batch.targets.data[i]) right += 1;
      else all = false;
    }
    if (all) whole += 1;
  }
  return { answers: total ? right / total : 0, sequences: whole / n };
}

/** The accuracy at which a run stops (once) when "stop at 95 %" is on. */
export const STOP_AT = 0.95;
/** Maps kept for the replay (thinned by half beyond). */
export const MAX_SNAPSHOTS = 3000;

/**
 * The ids of the task's fixed example (the one whose maps are drawn).
 * @param {Task} task
 */
export const fixedIds = (task) => task.fixedText.split(' ').map((w) => task.index.get(w));

/**
 * Mean row entropy (nats) of each head, and each head's mean weight on the target keys, for T×T maps.
 * @param {Task} task
 * @param {number[]} ids
 * @param {Float32Array} weights (H, T, T)
 * @param {number} H
 */
export function headStats(task, ids, weights, H) {
  const T = ids.length;
  const targets = task.targetKeys(ids);
  const ent = [];
  const mass = [];
  for (let hh = 0; hh < H; hh++) {
    let e = 0;
    let m = 0;
    let n = 0;
    for (let i = 0; i < T; i++) {
      e += entropy(weights, (hh * T + i) * T, T) / T;
      if (targets[i] !== null && targets[i] >= 0) {
        m += weights[(hh * T + i) * T + targets[i]];
        n += 1;
      }
    }
    ent.push(e);
    mass.push(n ? m / n : 0);
  }
  return { entropy: ent, mass };
}

/**
 * The entropy of uniform weights over the keys each query may see: ln T, or the mean of ln(i + 1) when causal.
 * @param {Task} task
 */
export function uniformEntropy(task) {
  if (!task.causal) return Math.log(task.T);
  let s = 0;
  for (let i = 0; i < task.T; i++) s += Math.log(i + 1) / task.T;
  return s;
}

/** @typedef {{ step: number, weights: Float32Array, predicted: number[] }} Snapshot the fixed example's maps and answers */
/**
 * A tick from the worker.
 * @typedef {{ step: number, losses: Float32Array, evals: [number, number][], snapshots: Snapshot[], heads: number,
 *   T: number, weights: Float32Array, predicted: number[], accuracy: number, stepsPerSecond: number,
 *   trainStepsPerSecond: number, runMs: number, reached: { step: number, ms: number, trainMs: number } | null }} Tick
 */
/**
 * The curves of a run.
 * @typedef {{ losses: number[], smooth: number[], ema: number, acc: [number, number][],
 *   stats: [number, ReturnType<typeof headStats>][], updates: number[], rendered: number, snaps: Snapshot[] }} History
 */

/** @returns {History} */
export const newHistory = () => ({
  losses: [],
  smooth: [],
  ema: 0,
  acc: [],
  stats: [],
  updates: [],
  rendered: 0,
  snaps: [],
});

/**
 * A tick into the history: the losses (with a bias-corrected moving average, like Adam's moments), the accuracy
 * points, each snapshot's head statistics and the snapshots (thinned beyond MAX_SNAPSHOTS), and when the page drew
 * it (for updates per second over the last 2 s). Returns the page updates per second (0 before two).
 * @param {History} hist
 * @param {Tick} m
 * @param {Task} task
 * @param {number} now performance.now()
 */
export function addTick(hist, m, task, now) {
  for (const loss of m.losses) {
    hist.losses.push(loss);
    hist.ema = 0.9 * hist.ema + 0.1 * loss;
    hist.smooth.push(hist.ema / (1 - 0.9 ** hist.losses.length));
  }
  hist.acc.push(...m.evals);
  for (const s of m.snapshots) hist.stats.push([s.step, headStats(task, fixedIds(task), s.weights, m.heads)]);
  hist.snaps.push(...m.snapshots);
  if (hist.snaps.length > MAX_SNAPSHOTS)
    hist.snaps = hist.snaps.filter((_, i) => i % 2 === 0 || i === hist.snaps.length - 1);
  if (m.step > 0) {
    hist.rendered += 1;
    hist.updates.push(now);
    while (hist.updates.length > 2 && now - hist.updates[0] > 2000) hist.updates.shift();
  }
  const u = hist.updates;
  return u.length > 1 ? ((u.length - 1) * 1000) / (u.at(-1) - u[0]) : 0;
}

/**
 * The answers of a model on ids, against the task's rule: per position the predicted id; how many are right.
 * @param {number[]} predicted
 * @param {(number | null)[]} expected
 */
export const score = (predicted, expected) =>
  predicted.filter((p, i) => expected[i] !== null && p === expected[i]).length;

/**
 * @typedef {object} TryModels what "try it" runs
 * @property {TinyTransformer} trained the model trained here
 * @property {number} heads its heads
 * @property {TinyTransformer} toyTiny the shipped reversal toy, in a TinyTransformer (its exact architecture)
 * @property {{ reverse: import('../../shared/toy-model.js').ToyModel, recall: import('../../shared/toy-model.js').ToyModel }} toys
 * @property {import('../../shared/toy-model.js').ToyLayers} toyRecall the recall toy's layers (it has attention
 *   biases, which the TinyTransformer has not: it runs as shared/toy-model.js runs it)
 */

/**
 * The model trained here (and the shipped toy model of the task, if any) on the user's ids: each one's answers and
 * per-head weights (H, L, L), and the right answers.
 * @param {Task} task
 * @param {number[]} ids
 * @param {TryModels} models
 */
export function tryModels(task, ids, { trained, heads, toyTiny, toys, toyRecall }) {
  const L = ids.length;
  const tokens = { data: Int32Array.from(ids), shape: [1, L] };
  const out = trained.forward(tokens);
  const mine = { predicted: Array.from(argmax(out.logits.data, L, task.V)), weights: out.weights.data, H: heads };
  let toy = null;
  if (task.toy === 'reverse') {
    const o = toyTiny.forward(tokens);
    toy = {
      predicted: Array.from(argmax(o.logits.data, L, toys.reverse.V)),
      weights: o.weights.data,
      H: toys.reverse.H,
    };
  } else if (task.toy === 'recall') {
    const o = runToy(toys.recall, toyRecall, ids);
    toy = { predicted: o.predicted, weights: o.weights, H: toys.recall.H };
  }
  return { mine, toy, expected: task.answers(ids) };
}

/**
 * The page's initialisation controls, around the package's API: W_Q and W_K (the first 2E rows of
 * in_proj_weight: what sets how peaked the first weights are) are multiplied by initScale, and W_Q also by qFactor.
 * TinyTransformer always divides the scores by √dₖ; W_Q × √dₖ cancels that at the start, so the model begins
 * exactly as one without the scale.
 * @param {TinyTransformer} m
 * @param {number} initScale
 * @param {number} qFactor
 */
export function rescaleInit(m, initScale, qFactor) {
  if (initScale === 1 && qFactor === 1) return;
  const sd = m.stateDict();
  const w = sd['attn.in_proj_weight'].data;
  const rows = EMBED_DIM * EMBED_DIM; // W_Q, then W_K, then W_V
  for (let i = 0; i < 2 * rows; i++) w[i] *= initScale * (i < rows ? qFactor : 1);
  m.loadStateDict(sd);
}

/**
 * The shipped reversal toy in a TinyTransformer: it has exactly its parameters (no attention biases).
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {import('../../shared/toy-model.js').ToyModel} rev
 */
export function toyTinyTransformer(attn, rev) {
  const tiny = attn.createTinyTransformer({ vocabSize: rev.V, embedDim: rev.E, numHeads: rev.H, causal: false });
  tiny.loadStateDict({
    'embedding.weight': { data: rev.embedding, shape: [rev.V, rev.E] },
    'attn.in_proj_weight': rev.stateDict.in_proj_weight,
    'attn.out_proj.weight': rev.stateDict['out_proj.weight'],
    'readout.weight': { data: rev.readoutW, shape: [rev.V, rev.E] },
    'readout.bias': { data: rev.readoutB, shape: [rev.V] },
  });
  return tiny;
}
