// The tasks of the training part: vocabulary, sequence length, random examples, training targets, which
// positions are scored and which key each query should learn to attend to. Their words are in the catalogues
// (task.<id>.*). No DOM: imported by the page (train.js) and by its Web Worker
// (train-worker.js). The reversal and recall examples come from toy.js, the generators of the shipped toy
// models (scripts/train_toy.py), so a model trained here speaks the toy models' vocabulary.
//
// createTinyTransformer's loss is the mean cross-entropy over every position, so every position needs a
// target: positions whose answer cannot be known get one anyway (next: "·"; recall: a store token's own digit),
// and are left out of the accuracy.

import { sampleExample, expectedAnswers } from './toy.js';

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

function task(def) {
  return { ...def, V: def.vocab.length, index: new Map(def.vocab.map((t, i) => [t, i])) };
}

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
    sample(rnd) {
      const { tokens, targets } = sampleExample({ task: 'reverse', T: this.T, V: this.V }, rnd);
      return { tokens, targets, scored: tokens.map(() => true) };
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
    sample(rnd) {
      const block = Array.from({ length: PERIOD }, () => rnd.int(LETTERS.length));
      const tokens = Array.from({ length: this.T }, (_, t) => block[t % PERIOD]);
      return { tokens, targets: this.targetsFor(tokens), scored: tokens.map((_, t) => t >= PERIOD - 1) };
    },
    targetsFor(ids) {
      return ids.map((_, t) => (t >= PERIOD - 1 ? ids[t - (PERIOD - 1)] : LETTERS.length));
    },
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
    sample(rnd) {
      const { tokens, targets } = sampleExample({ task: 'recall' }, rnd);
      return { tokens, targets: this.targetsFor(tokens, targets), scored: tokens.map((t) => t >= 90) };
    },
    targetsFor(ids, expected = expectedAnswers({ task: 'recall' }, ids)) {
      return ids.map((t, i) => (t < 90 ? (t - 10) % 10 : (expected[i] ?? 0)));
    },
    answers: (ids) => expectedAnswers({ task: 'recall' }, ids),
    // a query "k?" (id ≥ 90) should look at the store token "k=v" with the same key (ids 10 + 10·key + digit)
    targetKeys: (ids) =>
      ids.map((q) => (q < 90 ? null : ids.findIndex((s) => s >= 10 && s < 90 && Math.floor((s - 10) / 10) === q - 90))),
  }),
};

/** A batch of n fresh examples as Tokens (Int32Array, [n, T]) plus the scored mask (Uint8Array, n·T). */
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

/** argmax of every row of logits (rows × V). */
export function argmax(logits, rows, V) {
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[r * V + v] > logits[r * V + best]) best = v;
    out[r] = best;
  }
  return out;
}

/** Share of scored positions whose argmax is the target, and share of examples with every scored answer right. */
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
