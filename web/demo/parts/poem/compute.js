// @ts-check
// Part "A small Transformer that has read Tang poems" (tutorial §8.1, §8.2, §10.1, §11), the numbers: the character
// tokenizer, the quatrain's form, generation with and without the form enforced, per-head entropy and the tables of
// measured heads, the batches of training from scratch. No DOM; the model is attnlab's (loadModel / createModel).
//
// A poem is [BOS] line₁ ， line₂ 。 line₃ ， line₄ 。 [EOS], one token per code point (some characters are outside
// the BMP, so text is always split with for…of, never by UTF-16 unit).

import { rng } from '../../shared/random.js';
import { charTokenizer } from '../../shared/char-tokenizer.js';
import { entropy } from '../../shared/stats.js';
import { PATTERNS, accumulateHeadScores, poemPositions } from '../poem-heads/compute.js';

/** @typedef {import('../../attnlab.js').Transformer} Model */
/** @typedef {import('../../shared/random.js').Rng} Rng */

/** The shipped model's folder, relative to this module. */
export const MODEL_DIR = '../../models/tang-song-quatrains-char-llama/';
export const PAD = 0;
export const UNK = 1;
export const BOS = 2;
export const EOS = 3;
const SPECIALS = ['[PAD]', '[UNK]', '[BOS]', '[EOS]'];
const COMMA = '，';
const PERIOD = '。';
/** Punctuation that ends a line (the training data has only ，。; the others count as line ends when pasted). */
const LINE_END = new Set(['，', '。', '？', '！', '；']);

/**
 * @typedef {object} Tokenizer
 * @property {string[]} tokens  id → token
 * @property {Map<string, number>} index  token → id
 * @property {(text: string, o?: { bos?: boolean, eos?: boolean }) => Int32Array} encode  one id per code point
 * @property {(ids: ArrayLike<number>) => string[]} decode  one string per id
 */

/**
 * A tokenizer over the given tokens (id = position): one token per code point, [UNK] for the others.
 * @param {string[]} tokens
 * @returns {Tokenizer}
 */
export function makeTokenizer(tokens) {
  const index = new Map(tokens.map((s, i) => [s, i]));
  return {
    tokens,
    index,
    encode(text, { bos = false, eos = false } = {}) {
      const ids = bos ? [BOS] : [];
      for (const ch of text) ids.push(index.get(ch) ?? UNK);
      if (eos) ids.push(EOS);
      return Int32Array.from(ids);
    },
    decode: (ids) => Array.from(ids, (id) => tokens[id] ?? SPECIALS[UNK]),
  };
}

/**
 * The shipped tokenizer.json (Hugging Face, WordLevel, one token per code point).
 * @param {{ model: { vocab: Record<string, number> } }} json
 */
export function tokenizerFromJson(json) {
  return makeTokenizer(charTokenizer(json).tokens);
}

/**
 * A vocabulary of a text, for training from scratch: the four specials, ，。 (as the poem model has them), then the
 * text's other code points by count (ties by code point), at most maxVocab tokens in all; whitespace becomes
 * ordinary characters too.
 * @param {string} text
 * @param {number} maxVocab
 */
export function tokenizerFromText(text, maxVocab) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  counts.delete(COMMA);
  counts.delete(PERIOD);
  const chars = [...counts].sort((a, b) => b[1] - a[1] || a[0].codePointAt(0) - b[0].codePointAt(0));
  const tokens = [...SPECIALS, COMMA, PERIOD, ...chars.map((c) => c[0])].slice(0, maxVocab);
  return makeTokenizer(tokens);
}

/**
 * @typedef {object} HeldOutPoem
 * @property {string} split  'test' (quatrains) or 'neighbour' (regulated verse, never trained on)
 * @property {string} form   jueju5, jueju7, lushi5, lushi7
 * @property {string} author
 * @property {string} title
 * @property {string} text
 * @property {string[]} [strains]  平/仄 labels, one string per couplet
 */

/**
 * held-out.jsonl → poems.
 * @param {string} jsonl
 * @returns {HeldOutPoem[]}
 */
export function parseHeldOut(jsonl) {
  return jsonl
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/**
 * A poem as the model reads it: ids, the token strings and the strains aligned to the text.
 * @param {Tokenizer} tok
 * @param {HeldOutPoem} p
 */
export function poemInput(tok, p) {
  const ids = tok.encode(p.text, { bos: true, eos: true });
  const chars = ['[BOS]', ...p.text, '[EOS]'];
  const strains = p.strains ? [...p.strains.join('')] : undefined;
  return { ids, chars, strains };
}

// ---------------------------------------------------------------------------------------------------------------
// The form of a quatrain

/**
 * The lines of a text: each line's characters and the punctuation that ended it ('' for an unfinished line).
 * @param {string[]} chars  the text's tokens (no BOS)
 */
export function splitLines(chars) {
  /** @type {{ chars: string[], end: string }[]} */
  const lines = [{ chars: [], end: '' }];
  for (const c of chars) {
    if (c === '[EOS]') break;
    const line = lines.at(-1);
    if (LINE_END.has(c)) {
      line.end = c;
      lines.push({ chars: [], end: '' });
    } else line.chars.push(c);
  }
  if (!lines.at(-1).chars.length && lines.length > 1) lines.pop();
  return lines;
}

/**
 * Whether a generated text is a quatrain: 4 lines of 5 (or all 7) characters ending ，。，。 and then [EOS] (or
 * nothing more).
 * @param {string[]} chars  the generated tokens (no BOS)
 * @returns {{ ok: boolean, lineLen: number }}
 */
export function checkForm(chars) {
  const stop = chars.indexOf('[EOS]');
  const body = stop < 0 ? chars : chars.slice(0, stop);
  const lines = splitLines(body);
  const n = lines[0].chars.length;
  const ends = lines.map((l) => l.end).join('');
  const clean = body.every((c) => !SPECIALS.includes(c));
  const ok = clean && lines.length === 4 && ends === '，。，。' && (n === 5 || n === 7);
  return { ok: ok && lines.every((l) => l.chars.length === n), lineLen: n };
}

/**
 * What the form allows next after the generated tokens: more characters, a line's punctuation, or the end.
 * lineLen 5 or 7; 0 lets the model choose the first line's length (5, 6 or 7 characters; 6 is not a form, so it
 * must go on to 7), and the later lines follow it.
 * @param {string[]} chars  the generated tokens so far (no BOS)
 * @param {number} lineLen
 * @returns {{ chars: boolean, punct: string | null, end: boolean }}
 */
export function formNeed(chars, lineLen) {
  const lines = splitLines(chars);
  const done = lines.filter((l) => l.end).length;
  if (done >= 4) return { chars: false, punct: null, end: true };
  const c = lines[done]?.chars.length ?? 0;
  const punct = done % 2 === 0 ? COMMA : PERIOD;
  const n = lineLen || (done > 0 ? lines[0].chars.length : 0);
  if (n) return c < n ? { chars: true, punct: null, end: false } : { chars: false, punct, end: false };
  if (c < 5 || c === 6) return { chars: true, punct: null, end: false };
  return c === 5 ? { chars: true, punct, end: false } : { chars: false, punct, end: false };
}

/**
 * Whether token s is what the form allows.
 * @param {{ chars: boolean, punct: string | null, end: boolean }} need
 * @param {string} s
 */
export function allowed(need, s) {
  if (need.end) return s === '[EOS]';
  if (s === need.punct) return true;
  return need.chars && !SPECIALS.includes(s) && !LINE_END.has(s);
}

/**
 * Sample an id from softmax(logits / temperature) restricted to the ids `ok` accepts (temperature 0: the largest
 * logit among them). Inverse CDF with one uniform number.
 * @param {ArrayLike<number>} logits
 * @param {(id: number) => boolean} ok
 * @param {number} temperature
 * @param {number} u  uniform in [0, 1)
 */
export function sampleRestricted(logits, ok, temperature, u) {
  let best = -1;
  for (let i = 0; i < logits.length; i++) if (ok(i) && (best < 0 || logits[i] > logits[best])) best = i;
  if (best < 0 || temperature === 0) return best;
  const w = new Float64Array(logits.length);
  let z = 0;
  for (let i = 0; i < logits.length; i++) if (ok(i)) z += w[i] = Math.exp((logits[i] - logits[best]) / temperature);
  let acc = 0;
  for (let i = 0; i < logits.length; i++) {
    acc += w[i] / z;
    if (u < acc && w[i] > 0) return i;
  }
  return best;
}

/**
 * Each layer's (H, S) attention rows of the last query of a forward's attentions (B = 1, (1, H, T, T)).
 * @param {Array<{ data: Float32Array, shape: number[] } | null>} attentions
 */
function lastRows(attentions) {
  return attentions.map((a) => {
    const [, H, T, S] = a.shape;
    const out = new Float32Array(H * S);
    for (let h = 0; h < H; h++) out.set(a.data.subarray((h * T + T - 1) * S, (h * T + T) * S), h * S);
    return out;
  });
}

/**
 * @typedef {object} GeneratedToken
 * @property {number} id
 * @property {string} s
 * @property {Float32Array[]} rows  per layer (H, S): the weights of the query that chose it over its S keys
 * @property {boolean} forced  chosen by the form, not by the model's own sample
 * @property {string} [wanted]  what the model's sample was, when the form overruled it
 */

/**
 * A poem from [BOS] by model.generate (seeded sampling, each token with its attention rows from onToken). With
 * `form`, a token the form does not allow stops generate; the form's choice replaces it (the punctuation it needs,
 * or a sample of the model's distribution restricted to what it allows) and generate goes on, seeded anew.
 * Without `form`, the model writes until [EOS] (or maxNewTokens).
 * @param {Model} model
 * @param {Tokenizer} tok
 * @param {{ lineLen?: number, temperature?: number, seed?: number, form?: boolean, maxNewTokens?: number }} o
 */
export function generatePoem(model, tok, { lineLen = 0, temperature = 1, seed = 0, form = true, maxNewTokens = 60 }) {
  const ids = [BOS];
  /** @type {GeneratedToken[]} */
  const out = [];
  const text = () => out.map((g) => g.s);
  const pick = rng(seed * 7919 + 17); // the form's own draws
  for (let segment = 0; out.length < maxNewTokens; segment++) {
    /** @type {string | null} */
    let wanted = null;
    model.generate(Int32Array.from(ids), {
      maxNewTokens: maxNewTokens - out.length,
      temperature,
      seed: seed * 1000 + segment,
      outputAttentions: true,
      eosTokenId: EOS,
      onToken: (id, _step, info) => {
        const s = tok.tokens[id] ?? '[UNK]';
        if (form && !allowed(formNeed(text(), lineLen), s)) return ((wanted = s), false);
        ids.push(id);
        out.push({ id, s, rows: info.attentions.map((a) => a.data), forced: false });
        return !(form && formNeed(text(), lineLen).end);
      },
    });
    if (wanted === null) break;
    const need = formNeed(text(), lineLen);
    const fwd = model.forward({ data: Int32Array.from(ids), shape: [1, ids.length] }, { outputAttentions: true });
    const V = model.config.vocabSize;
    const logits = fwd.logits.data.subarray((ids.length - 1) * V, ids.length * V);
    const id = sampleRestricted(logits, (i) => allowed(need, tok.tokens[i] ?? '[UNK]'), temperature, pick());
    ids.push(id);
    out.push({ id, s: tok.tokens[id], rows: lastRows(fwd.attentions), forced: true, wanted });
  }
  return { tokens: out, form: checkForm(text()), forced: out.filter((g) => g.forced).length };
}

/**
 * A poem sampled token by token with forward (KV cache) and a head mask, the form enforced: the same seed draws the
 * same uniform numbers, so two masks differ only by what the heads did.
 * @param {Model} model
 * @param {Tokenizer} tok
 * @param {{ lineLen: number, temperature: number, seed: number, headMask?: Float32Array | null }} o
 */
export function samplePoemMasked(model, tok, { lineLen, temperature, seed, headMask = null }) {
  const { numLayers, numHeads, vocabSize: V, contextLength } = model.config;
  const mask = headMask ? { data: headMask, shape: [numLayers, numHeads] } : null;
  const cache = model.createKVCache({ batchSize: 1, maxLength: contextLength });
  const draw = rng(seed * 104729 + 3);
  /** @type {string[]} */
  const chars = [];
  try {
    let id = BOS;
    while (chars.length < contextLength - 1) {
      const need = formNeed(chars, lineLen);
      if (need.end) break;
      const { logits } = model.forward({ data: Int32Array.of(id), shape: [1, 1] }, { kvCache: cache, headMask: mask });
      id = sampleRestricted(logits.data.subarray(0, V), (i) => allowed(need, tok.tokens[i] ?? ''), temperature, draw());
      chars.push(tok.tokens[id]);
    }
  } finally {
    cache.dispose();
  }
  return chars;
}

// ---------------------------------------------------------------------------------------------------------------
// Heads: entropy, names, the table of sharpness vs effect

/**
 * The mean entropy of each head's causal rows (queries 0 … T−1) of one sequence, per layer and head.
 * @param {Array<{ data: Float32Array, shape: number[] } | null>} attentions  per layer (1, H, T, T)
 * @returns {number[][]}
 */
export function headEntropies(attentions) {
  return attentions.map((a) => {
    const [, H, T, S] = a.shape;
    return Array.from({ length: H }, (_, h) => {
      let s = 0;
      for (let i = 0; i < T; i++) s += entropy(a.data, (h * T + i) * S, i + 1 + (S - T));
      return s / T;
    });
  });
}

/**
 * Uniform causal attention's mean row entropy over T queries: mean of ln(i + 1), the level an untrained head starts
 * near (ln T for full attention).
 * @param {number} T
 */
export function uniformEntropy(T) {
  let s = 0;
  for (let i = 0; i < T; i++) s += Math.log(i + 1);
  return s / T;
}

/**
 * The pattern scores and each head's mean row entropy on held-out poems, in one forward per poem.
 * @param {Model} model
 * @param {{ ids: Int32Array, chars: string[], strains?: string[] }[]} poems
 */
export function measureHeads(model, poems) {
  const { numLayers: L, numHeads: H } = model.config;
  /** @type {Record<string, { mass: Float64Array, baseline: number, count: number }>} */
  const acc = {};
  for (const name of Object.keys(PATTERNS)) acc[name] = { mass: new Float64Array(L * H), baseline: 0, count: 0 };
  const ent = Array.from({ length: L }, () => new Array(H).fill(0));
  let uniform = 0;
  for (const p of poems) {
    const { attentions } = model.forward({ data: p.ids, shape: [1, p.ids.length] }, { outputAttentions: true });
    accumulateHeadScores(attentions, poemPositions(p.chars, p.strains), acc);
    headEntropies(attentions).forEach((row, l) => row.forEach((e, h) => (ent[l][h] += e / poems.length)));
    uniform += uniformEntropy(p.ids.length) / poems.length;
  }
  /** @type {Record<string, { score: number[][], baseline: number, count: number }>} */
  const patterns = {};
  for (const [name, a] of Object.entries(acc)) {
    const n = Math.max(1, a.count);
    const score = Array.from({ length: L }, (_, l) => Array.from({ length: H }, (_, h) => a.mass[l * H + h] / n));
    patterns[name] = { score, baseline: a.baseline / n, count: a.count };
  }
  return { patterns, entropy: ent, uniform };
}

/** A head is named after a pattern when its mean mass there is at least this … */
export const NAME_MIN_SCORE = 0.3;
/** … and at least this many times the uniform baseline. */
export const NAME_MIN_RATIO = 2;
/** Patterns that name a head (self and BOS are reported, but a head resting there has no role of its own). */
const NAMING = ['previous', 'couplet', 'rhyme', 'punctuation', 'lineStart', 'tone'];

/**
 * Each head's measured name: the naming pattern with the largest score / baseline among those that pass both
 * thresholds, else 'bos' if it rests on the first token that way, else null (no clear role).
 * @param {Record<string, { score: number[][], baseline: number }>} patterns
 * @returns {{ name: string | null, score: number, ratio: number }[][]}
 */
export function nameHeads(patterns) {
  const L = patterns.previous.score.length;
  const H = patterns.previous.score[0].length;
  return Array.from({ length: L }, (_, l) =>
    Array.from({ length: H }, (_, h) => {
      let best = { name: /** @type {string | null} */ (null), score: 0, ratio: 0 };
      for (const name of [...NAMING, 'bos']) {
        const p = patterns[name];
        if (!p || (name === 'bos' && best.name)) continue;
        const score = p.score[l][h];
        const ratio = score / p.baseline;
        if (score >= NAME_MIN_SCORE && ratio >= NAME_MIN_RATIO && ratio > best.ratio) best = { name, score, ratio };
      }
      return best;
    }),
  );
}

/**
 * Spearman's rank correlation of two equally long lists (average ranks for ties).
 * @param {number[]} a
 * @param {number[]} b
 */
export function spearman(a, b) {
  /** @param {number[]} x */
  const ranks = (x) => {
    const order = x.map((v, i) => [v, i]).sort((p, q) => p[0] - q[0]);
    const r = new Array(x.length);
    for (let i = 0; i < order.length;) {
      let j = i;
      while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
      for (let k = i; k <= j; k++) r[order[k][1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const [ra, rb] = [ranks(a), ranks(b)];
  const mean = (a.length - 1) / 2;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < a.length; i++) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) ** 2;
    db += (rb[i] - mean) ** 2;
  }
  return num / Math.sqrt(da * db);
}

/**
 * The table "attention sharpness vs effect when removed": one row per head, sorted by effect (largest first), and
 * the rank correlation of sharpness (ln-uniform minus entropy: how far the head is from uniform) with effect.
 * @param {number[][]} entropyLH  mean row entropy per layer and head
 * @param {number} uniform  the uniform level of the same rows
 * @param {number[][]} deltaLH  held-out loss with the head removed minus the intact loss
 * @param {{ name: string | null }[][]} names
 */
export function sharpnessTable(entropyLH, uniform, deltaLH, names) {
  const rows = entropyLH.flatMap((r, l) =>
    r.map((e, h) => ({
      layer: l,
      head: h,
      entropy: e,
      sharpness: uniform - e,
      delta: deltaLH[l][h],
      name: names[l][h].name,
    })),
  );
  const rho = spearman(
    rows.map((r) => r.sharpness),
    rows.map((r) => r.delta),
  );
  return { rows: rows.sort((a, b) => b.delta - a.delta), rho };
}

/**
 * heads.json (scripts/poems/heads.mjs) or a live measurement, in one shape: pattern scores, entropy per head (when
 * given), the uniform level, and the ablation.
 * @param {any} json
 */
export function readHeadsJson(json) {
  const patterns = json.patterns ?? json.scores;
  const ablation = json.ablation ?? null;
  return {
    patterns,
    entropy: json.entropy ?? null,
    uniform: json.uniform ?? null,
    ablation: ablation && { base: ablation.base ?? ablation.loss, delta: ablation.delta },
    poems: json.poems ?? json.count ?? null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Training from scratch

/** The small model the page trains (a laptop sees structure within minutes). */
export const SMALL = { arch: 'llama', embedDim: 64, numLayers: 2, numHeads: 4, hiddenDim: 176, contextLength: 80 };
/** The largest vocabulary of a from-scratch run (rarer characters become [UNK]). */
export const MAX_VOCAB = 3000;
/** Window length of a pasted text's batches (and of its probe). */
export const TEXT_BLOCK = 64;
/** The shortest text a run accepts (code points). */
export const MIN_TEXT = 200;

/**
 * The config of the small model for a vocabulary.
 * @param {number} vocabSize
 * @param {number} seed
 * @returns {import('../../attnlab.js').CreateModelOptions}
 */
export function smallConfig(vocabSize, seed) {
  return { ...SMALL, arch: 'llama', vocabSize, tieEmbeddings: true, normEps: 1e-5, seed };
}

/**
 * A batch of whole poems ([BOS] … [EOS], right-padded with [PAD], target −100 there): tokens and targets (B, T).
 * @param {Int32Array[]} poems
 * @param {Rng} r
 * @param {number} B
 */
export function poemBatch(poems, r, B) {
  const pick = Array.from({ length: B }, () => poems[r.int(poems.length)]);
  const T = Math.max(...pick.map((p) => p.length)) - 1;
  const tokens = new Int32Array(B * T).fill(PAD);
  const targets = new Int32Array(B * T).fill(-100);
  pick.forEach((p, b) => {
    tokens.set(p.subarray(0, p.length - 1), b * T);
    targets.set(p.subarray(1), b * T);
  });
  return { tokens: { data: tokens, shape: [B, T] }, targets: { data: targets, shape: [B, T] } };
}

/**
 * A batch of random windows of a text's ids, targets one position later.
 * @param {Int32Array} ids
 * @param {Rng} r
 * @param {number} B
 * @param {number} T
 */
export function textBatch(ids, r, B, T) {
  const tokens = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    const s = r.int(ids.length - T);
    tokens.set(ids.subarray(s, s + T), b * T);
    targets.set(ids.subarray(s + 1, s + T + 1), b * T);
  }
  return { tokens: { data: tokens, shape: [B, T] }, targets: { data: targets, shape: [B, T] } };
}

/**
 * Mean next-token cross-entropy (nats) of logits (T, V) against ids[1 …]: a plain statistic of the package's logits.
 * @param {Float32Array} logits
 * @param {ArrayLike<number>} ids
 * @param {number} V
 */
export function sequenceLoss(logits, ids, V) {
  let sum = 0;
  for (let i = 0; i + 1 < ids.length; i++) {
    const row = logits.subarray(i * V, (i + 1) * V);
    let max = -Infinity;
    for (const x of row) max = Math.max(max, x);
    let z = 0;
    for (const x of row) z += Math.exp(x - max);
    sum += Math.log(z) + max - row[ids[i + 1]];
  }
  return sum / Math.max(1, ids.length - 1);
}
