// @ts-check
// Part "poem" (tutorial §8.1–8.2, §10.1), its heads' numbers (the part's compute in two files: compute.js for the
// tokens, the form and training, this one for the heads): which patterns each head of a poem model attends by, on
// held-out poems, its attention entropy, its name, what it does to the loss when it is removed, and heads.json (the
// same numbers for the shipped model, written by scripts/poems/heads.mjs with these functions). No DOM.
//
// A poem is a sequence of characters: [BOS] line₁ ， line₂ 。 line₃ ， line₄ 。 [EOS] (quatrains: 4 lines of 5 or 7).
// A pattern maps a query position to the key positions it predicts (empty: the query does not count). A head's score
// for a pattern is the mean, over counted queries, of the attention mass on those keys; the baseline is the same mean
// under uniform causal attention (|keys| / (i + 1)), so score / baseline says how much the head prefers the pattern.

/** @typedef {import('../../attnlab.js').Transformer} Model */

/** Characters that end a line. */
export const LINE_ENDS = new Set(['，', '。', '？', '！', '；']);

/**
 * @typedef {object} Position
 * @property {number} line      line index (−1 for specials and punctuation)
 * @property {number} column    position in the line (−1 for specials and punctuation)
 * @property {boolean} special  BOS / EOS / padding
 * @property {boolean} punct    a line end
 * @property {boolean} lastChar the last character of its line
 * @property {string} tone      '平', '仄' or '' (from the strains labels, when known)
 */

/**
 * Where each token of a poem sits.
 * @param {string[]} chars  one string per token ('' or a bracketed name like '[BOS]' for specials)
 * @param {string[]} [strains]  the poem's strains labels, one per token of its text (as chinese-poetry's strains/:
 *   the same characters with 平/仄/○ instead of the characters), aligned to chars after the BOS
 * @returns {Position[]}
 */
export function poemPositions(chars, strains) {
  /** @type {Position[]} */
  const out = [];
  let line = 0;
  let column = 0;
  let textIndex = 0;
  for (const c of chars) {
    const special = c === '' || (c.startsWith('[') && c.endsWith(']'));
    const punct = LINE_ENDS.has(c);
    const tone = !special && strains ? (strains[textIndex] ?? '') : '';
    if (!special) textIndex += 1;
    if (special || punct) {
      out.push({ line: -1, column: -1, special, punct, lastChar: false, tone: '' });
      if (punct) {
        if (out.length > 1 && out[out.length - 2].line === line) out[out.length - 2].lastChar = true;
        line += 1;
        column = 0;
      }
      continue;
    }
    out.push({
      line,
      column,
      special: false,
      punct: false,
      lastChar: false,
      tone: tone === '平' || tone === '仄' ? tone : '',
    });
    column += 1;
  }
  return out;
}

/** The index of the character at (line, column), or −1. */
function find(/** @type {Position[]} */ pos, /** @type {number} */ line, /** @type {number} */ column) {
  return pos.findIndex((p) => p.line === line && p.column === column);
}

/**
 * One poem as the model reads it: [BOS] text [EOS], its tokens as strings, and its tone labels by character.
 * @param {import('../../shared/char-tokenizer.js').CharTokenizer} tokenizer
 * @param {string} text     the poem, punctuation included (e.g. 床前明月光，疑是地上霜。…)
 * @param {string[]} [strainLines]  chinese-poetry's strains/ labels, one string per couplet (平/仄/○ and punctuation)
 * @returns {{ ids: Int32Array, chars: string[], strains?: string[] }}
 */
export function poemFromText(tokenizer, text, strainLines) {
  const body = tokenizer.encode(text, { bos: false });
  const { bos, eos } = tokenizer.special;
  const ids = Int32Array.from([bos, ...body, eos]);
  const chars = ['[BOS]', ...text, '[EOS]'];
  const strains = strainLines ? [...strainLines.join('')] : undefined;
  return strains && strains.length === chars.length - 2 ? { ids, chars, strains } : { ids, chars };
}

/**
 * The patterns: for query i, the keys j ≤ i it predicts.
 * @type {Record<string, (pos: Position[], i: number) => number[]>}
 */
export const PATTERNS = {
  // the character just before
  previous: (pos, i) => (i >= 1 && !pos[i].special ? [i - 1] : []),
  // 对仗: the same column of the line before (lines 2 and 4 of a quatrain answer lines 1 and 3)
  couplet: (pos, i) => {
    const p = pos[i];
    if (p.line < 1 || p.line % 2 === 0) return [];
    const j = find(pos, p.line - 1, p.column);
    return j >= 0 ? [j] : [];
  },
  // rhyme: the last character of line 4 (or 2) looks back at the earlier rhyming line ends (line 2, and line 1)
  rhyme: (pos, i) => {
    const p = pos[i];
    if (!p.lastChar || p.line < 1 || p.line % 2 === 0) return [];
    return pos.flatMap((q, j) => (j < i && q.lastChar ? [j] : []));
  },
  // structure: punctuation and the BOS token
  punctuation: (pos, i) => (pos[i].special ? [] : pos.flatMap((q, j) => (j < i && (q.punct || q.special) ? [j] : []))),
  // the first character of the current line
  lineStart: (pos, i) => {
    const p = pos[i];
    if (p.line < 0 || p.column === 0) return [];
    const j = find(pos, p.line, 0);
    return j >= 0 ? [j] : [];
  },
  // 平仄: a tone-bearing column (2nd, 4th, 6th character) of a couplet's second line, towards the same column of its
  // first line, where the labels say the tones alternate
  tone: (pos, i) => {
    const p = pos[i];
    if (p.line < 1 || p.line % 2 === 0 || p.column % 2 === 0 || !p.tone) return [];
    const j = find(pos, p.line - 1, p.column);
    return j >= 0 && pos[j].tone && pos[j].tone !== p.tone ? [j] : [];
  },
  // the token itself
  self: (pos, i) => (pos[i].special ? [] : [i]),
  // the first token (a common resting place of heads with nothing to do)
  bos: (pos, i) => (i >= 1 && !pos[i].special ? [0] : []),
};

/**
 * Sums of each head's attention mass on each pattern's keys, over one poem, into `acc`.
 * @param {{ data: Float32Array, shape: number[] }[]} attentions  per layer (1, H, T, T), softmax weights
 * @param {Position[]} pos
 * @param {Record<string, { mass: Float64Array, baseline: number, count: number }>} acc  per pattern; mass (L·H)
 */
export function accumulateHeadScores(attentions, pos, acc) {
  const t = pos.length;
  for (const [name, pattern] of Object.entries(PATTERNS)) {
    const a = acc[name];
    for (let i = 0; i < t; i++) {
      const keys = pattern(pos, i);
      if (keys.length === 0) continue;
      a.count += 1;
      a.baseline += keys.length / (i + 1);
      attentions.forEach((w, l) => {
        const heads = w.shape[1];
        for (let h = 0; h < heads; h++) {
          const row = (h * t + i) * t;
          let m = 0;
          for (const j of keys) m += w.data[row + j];
          a.mass[l * heads + h] += m;
        }
      });
    }
  }
}

/**
 * Sums of each head's attention entropy −Σⱼ wᵢⱼ ln wᵢⱼ (nats) over the rows i ≥ 1 of one poem, into `acc`, beside
 * the uniform causal row's ln(i + 1): how sharp a head is (row 0 sees one key and says nothing).
 * @param {{ data: Float32Array, shape: number[] }[]} attentions  per layer (1, H, T, T), softmax weights
 * @param {{ sum: Float64Array, uniform: number, rows: number }} acc  sum per (layer, head), L·H
 */
export function accumulateEntropy(attentions, acc) {
  const t = attentions[0].shape[2];
  for (let i = 1; i < t; i++) {
    acc.rows += 1;
    acc.uniform += Math.log(i + 1);
    attentions.forEach((w, l) => {
      const heads = w.shape[1];
      for (let h = 0; h < heads; h++) {
        const row = (h * t + i) * t;
        let e = 0;
        for (let j = 0; j <= i; j++) {
          const p = w.data[row + j];
          if (p > 0) e -= p * Math.log(p);
        }
        acc.sum[l * heads + h] += e;
      }
    });
  }
}

/**
 * Per pattern: per (layer, head) the mean mass, the uniform baseline, and the number of queries counted; and per
 * (layer, head) the mean attention entropy of the rows i ≥ 1 beside the uniform rows' mean ln(i + 1).
 * @param {Model} model
 * @param {{ ids: Int32Array, chars: string[], strains?: string[] }[]} poems
 */
export function headScores(model, poems) {
  const { numLayers, numHeads } = model.config;
  /** @type {Record<string, { mass: Float64Array, baseline: number, count: number }>} */
  const acc = {};
  for (const name of Object.keys(PATTERNS))
    acc[name] = { mass: new Float64Array(numLayers * numHeads), baseline: 0, count: 0 };
  const entropy = { sum: new Float64Array(numLayers * numHeads), uniform: 0, rows: 0 };
  for (const poem of poems) {
    const { attentions } = model.forward({ data: poem.ids, shape: [1, poem.ids.length] }, { outputAttentions: true });
    accumulateHeadScores(attentions, poemPositions(poem.chars, poem.strains), acc);
    accumulateEntropy(attentions, entropy);
  }
  /** @type {Record<string, { score: number[][], baseline: number, count: number }>} */
  const out = {};
  for (const [name, a] of Object.entries(acc)) {
    const n = Math.max(1, a.count);
    const score = Array.from({ length: numLayers }, (_, l) =>
      Array.from({ length: numHeads }, (_, h) => a.mass[l * numHeads + h] / n),
    );
    out[name] = { score, baseline: a.baseline / n, count: a.count };
  }
  return { patterns: out, entropy: entropyMeans(entropy, numLayers, numHeads) };
}

/**
 * Per pattern with queries, the highest score of any head and the uniform baseline: how far the most specialised
 * head has come, what the from-scratch run plots over its steps.
 * @param {Record<string, { score: number[][], baseline: number, count: number }>} patterns  headScores().patterns
 * @returns {Record<string, { best: number, baseline: number }>}
 */
export function bestPatternScores(patterns) {
  /** @type {Record<string, { best: number, baseline: number }>} */
  const out = {};
  for (const [name, { score, baseline, count }] of Object.entries(patterns))
    if (count > 0) out[name] = { best: Math.max(...score.flat()), baseline };
  return out;
}

/**
 * accumulateEntropy's sums → the mean entropy per (layer, head), the uniform rows' mean, and the rows counted.
 * @param {{ sum: Float64Array, uniform: number, rows: number }} acc
 * @param {number} numLayers
 * @param {number} numHeads
 * @returns {HeadEntropy}
 */
function entropyMeans(acc, numLayers, numHeads) {
  const rows = Math.max(1, acc.rows);
  const mean = Array.from({ length: numLayers }, (_, l) =>
    Array.from({ length: numHeads }, (_, h) => acc.sum[l * numHeads + h] / rows),
  );
  return { mean, uniform: acc.uniform / rows, rows: acc.rows };
}

/**
 * @typedef {object} HeadEntropy
 * @property {number[][]} mean  per (layer, head), the mean attention entropy (nats) of the rows i ≥ 1
 * @property {number} uniform   the uniform causal rows' mean ln(i + 1) over the same rows
 * @property {number} rows      how many rows
 */

/**
 * Each head's mean attention entropy on one sequence (rows i ≥ 1) beside the uniform level: what the training
 * panel plots on its probe.
 * @param {{ data: Float32Array, shape: number[] }[]} attentions  per layer (1, H, T, T)
 * @returns {HeadEntropy}
 */
export function sequenceEntropy(attentions) {
  const numHeads = attentions[0].shape[1];
  const acc = { sum: new Float64Array(attentions.length * numHeads), uniform: 0, rows: 0 };
  accumulateEntropy(attentions, acc);
  return entropyMeans(acc, attentions.length, numHeads);
}

/** A head is named after a pattern when it puts at least this much mass on its keys … */
export const NAME_MIN_SCORE = 0.3;
/** … and at least this many times what uniform causal attention would. */
export const NAME_MIN_LIFT = 2;

/**
 * Each head's name: among the patterns it puts at least NAME_MIN_SCORE of its mass on, at NAME_MIN_LIFT × the
 * uniform baseline or more, the one with the highest lift (the most specific: 'punctuation' includes [BOS], and a
 * 平仄 head also scores on punctuation), else '' (no single pattern describes it).
 * @param {Record<string, { score: number[][], baseline: number }>} patterns  headScores(…).patterns
 * @returns {{ pattern: string, score: number, lift: number }[][]}  per layer, per head
 */
export function nameHeads(patterns) {
  const first = Object.values(patterns)[0].score;
  return first.map((row, l) =>
    row.map((_, h) => {
      let best = { pattern: '', score: 0, lift: 0 };
      for (const [name, p] of Object.entries(patterns)) {
        const score = p.score[l][h];
        const lift = score / p.baseline;
        if (score >= NAME_MIN_SCORE && lift >= NAME_MIN_LIFT && lift > best.lift) best = { pattern: name, score, lift };
      }
      return best;
    }),
  );
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

/**
 * Mean next-token cross-entropy (nats) of the model on the poems, with an optional head mask (L, H): each poem's
 * tokens predict the next; padding is not used (one poem per forward).
 * @param {Model} model
 * @param {{ ids: Int32Array }[]} poems
 * @param {Float32Array} [headMask]
 */
export function meanLoss(model, poems, headMask) {
  const { numLayers, numHeads, vocabSize } = model.config;
  const mask = headMask ? { data: headMask, shape: [numLayers, numHeads] } : undefined;
  let sum = 0;
  let count = 0;
  for (const { ids } of poems) {
    const { logits } = model.forward({ data: ids, shape: [1, ids.length] }, { headMask: mask });
    sum += sequenceLoss(logits.data, ids, vocabSize) * (ids.length - 1);
    count += ids.length - 1;
  }
  return sum / Math.max(1, count);
}

/**
 * The held-out loss with each head removed (head_mask 0), beside the intact loss: the effect of a head, which its
 * attention weights alone do not show (tutorial §8.2).
 * @param {Model} model
 * @param {{ ids: Int32Array }[]} poems
 */
export function headAblation(model, poems) {
  const { numLayers, numHeads } = model.config;
  const base = meanLoss(model, poems);
  const delta = Array.from({ length: numLayers }, () => new Array(numHeads).fill(0));
  for (let l = 0; l < numLayers; l++) {
    for (let h = 0; h < numHeads; h++) {
      const mask = new Float32Array(numLayers * numHeads).fill(1);
      mask[l * numHeads + h] = 0;
      delta[l][h] = meanLoss(model, poems, mask) - base;
    }
  }
  return { base, delta };
}

/**
 * "Guess first" on §8.2 (#28): the head whose removal raises the held-out loss most, from heads.json's ablation, with
 * its attention entropy and where it ranks by sharpness (1 = the lowest entropy), and the sharpest head's effect for
 * contrast. Indices from 0.
 * @param {{ entropy: { mean: number[][], uniform: number }, ablation: { delta: number[][] } }} heads
 */
export function ablationAnswer({ entropy, ablation }) {
  const rows = ablation.delta.flatMap((r, l) =>
    r.map((delta, h) => ({ layer: l, head: h, delta, entropy: entropy.mean[l][h] })),
  );
  const top = rows.reduce((a, b) => (b.delta > a.delta ? b : a));
  const sharpest = rows.reduce((a, b) => (b.entropy < a.entropy ? b : a));
  const rank = 1 + rows.filter((r) => r.entropy < top.entropy).length;
  return { top, sharpest, rank, heads: rows.length, uniform: entropy.uniform };
}

/**
 * @typedef {object} HeadsJson  heads.json, as scripts/poems/heads.mjs writes it
 * @property {string} model
 * @property {Record<string, number>} poems  poems per split (test, neighbour)
 * @property {Record<string, number>} loss   held-out loss per split (nats per token)
 * @property {Record<string, { score: number[][], baseline: number, count: number }>} patterns
 * @property {HeadEntropy} entropy
 * @property {{ base: number, delta: number[][] }} ablation  the test loss intact, and with each head removed minus it
 * @property {{ pattern: string, score: number, lift: number }[][]} names  nameHeads(patterns)
 */

/**
 * heads.json, checked against the model's layers and heads: every field scripts/poems/heads.mjs writes, each
 * [layer][head] table L × H. Throws on anything else (an old or foreign file).
 * @param {any} json
 * @param {{ numLayers: number, numHeads: number }} config
 * @returns {HeadsJson}
 */
export function readHeadsJson(json, { numLayers, numHeads }) {
  const { model, poems, loss, patterns, entropy, ablation, names } = json ?? {};
  const table = (/** @type {any} */ x, /** @type {string} */ what) => {
    const ok = Array.isArray(x) && x.length === numLayers && x.every((r) => r?.length === numHeads);
    if (!ok) throw new TypeError(`heads.json: ${what} is not ${numLayers} × ${numHeads}`);
  };
  if (typeof model !== 'string' || !poems || !loss || !patterns || !entropy || !ablation || !names)
    throw new TypeError('heads.json: expected model, poems, loss, patterns, entropy, ablation and names');
  for (const [name, p] of Object.entries(patterns)) table(p.score, `patterns.${name}.score`);
  for (const name of Object.keys(PATTERNS)) if (!patterns[name]) throw new TypeError(`heads.json: no pattern ${name}`);
  table(entropy.mean, 'entropy.mean');
  table(ablation.delta, 'ablation.delta');
  table(names, 'names');
  return { model, poems, loss, patterns, entropy, ablation, names };
}
