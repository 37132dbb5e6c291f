// @ts-check
// Part "A small Transformer that has read Tang poems" (tutorial §8.1, §8.2, §10.1, §11), the numbers: the held-out
// poems, the quatrain's form, generation with and without the form enforced, the table of sharpness vs effect, the
// batches of training from scratch. No DOM; the model is attnlab's (loadModel / createModel). The heads' numbers
// (patterns, entropy, names, ablation, heads.json) are the part's heads.js; the tokenizer is shared/char-tokenizer.js
// (the shipped tokenizer.json, or fromText for a pasted text).
//
// A poem is [BOS] line₁ ， line₂ 。 line₃ ， line₄ 。 [EOS], one token per code point (some characters are outside
// the BMP, so text is always split with for…of, never by UTF-16 unit).

import { rng } from '../../shared/random.js';
import { SPECIAL_TOKENS } from '../../shared/char-tokenizer.js';
import { LINE_ENDS } from './heads.js';

/** @typedef {import('../../attnlab.js').Transformer} Model */
/** @typedef {import('../../shared/random.js').Rng} Rng */
/** @typedef {import('../../shared/char-tokenizer.js').CharTokenizer} Tokenizer */

/** The shipped model's folder, relative to this module. */
export const MODEL_DIR = '../../models/tang-song-quatrains-char-llama/';
const COMMA = '，';
const PERIOD = '。';

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
    if (LINE_ENDS.has(c)) {
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
  const clean = body.every((c) => !SPECIAL_TOKENS.includes(c));
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
  return need.chars && !SPECIAL_TOKENS.includes(s) && !LINE_ENDS.has(s);
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
 * The number of predicted characters (targets) in tokenized poems: each poem's tokens after the first.
 * @param {{ ids: Int32Array }[]} poems
 */
export const targetCount = (poems) => poems.reduce((a, p) => a + p.ids.length - 1, 0);

/**
 * A poem from [BOS] by model.generate (seeded sampling, each token with its attention rows from onToken). With
 * `form`, a token the form does not allow stops generate; the form's choice replaces it (the punctuation it needs,
 * or a sample of the model's distribution restricted to what it allows) and generate goes on, seeded anew; the
 * poem stops when its fourth line is complete, forced or not (no [EOS] appended). Without `form`, the model writes until [EOS] (or maxNewTokens).
 * @param {Model} model
 * @param {Tokenizer} tok
 * @param {{ lineLen?: number, temperature?: number, seed?: number, form?: boolean, maxNewTokens?: number }} o
 */
export function generatePoem(model, tok, { lineLen = 0, temperature = 1, seed = 0, form = true, maxNewTokens = 60 }) {
  const ids = [tok.special.bos];
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
      eosTokenId: tok.special.eos,
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
    if (formNeed(text(), lineLen).end) break; // the form is complete: no run of forced [EOS]
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
    let id = tok.special.bos;
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
// Heads: the table of sharpness vs effect

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
 * the rank correlation of sharpness (ln-uniform minus entropy: how far the head is from uniform) with effect. With
 * `other` (the same heads measured two more ways: the loss change when the head's output is replaced by its mean,
 * and the head mask's gradient), each row has them too, and `agree` their rank correlations with `delta`.
 * @param {number[][]} entropyLH  mean row entropy per layer and head
 * @param {number} uniform  the uniform level of the same rows
 * @param {number[][]} deltaLH  held-out loss with the head removed (zeroed) minus the intact loss
 * @param {{ pattern: string }[][]} names  nameHeads(…) ('' for none)
 * @param {{ mean: number[][], gradient: number[][] }} [other]
 */
export function sharpnessTable(entropyLH, uniform, deltaLH, names, other) {
  const rows = entropyLH.flatMap((r, l) =>
    r.map((e, h) => ({
      layer: l,
      head: h,
      entropy: e,
      sharpness: uniform - e,
      delta: deltaLH[l][h],
      mean: other ? other.mean[l][h] : null,
      gradient: other ? other.gradient[l][h] : null,
      name: names[l][h].pattern,
    })),
  );
  const col = (/** @type {'sharpness' | 'delta' | 'mean' | 'gradient'} */ k) => rows.map((r) => r[k]);
  const rho = spearman(col('sharpness'), col('delta'));
  const agree = other
    ? { mean: spearman(col('delta'), col('mean')), gradient: spearman(col('delta'), col('gradient')) }
    : null;
  return { rows: rows.sort((a, b) => b.delta - a.delta), rho, agree };
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
 * @param {number} [pad]  the [PAD] id
 */
export function poemBatch(poems, r, B, pad = 0) {
  const pick = Array.from({ length: B }, () => poems[r.int(poems.length)]);
  const T = Math.max(...pick.map((p) => p.length)) - 1;
  const tokens = new Int32Array(B * T).fill(pad);
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
