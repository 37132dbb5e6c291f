// @ts-check
// The couplet chapter's computations, without the DOM (issue 34 §1; docs/couplet-model.md): the held-out Tang poems
// of the model folder, the seq2seq framing of a couplet (the encoder reads the upper line + [EOS]; the labels are the
// lower line + [EOS]; the decoder reads [PAD] = decoder_start_token_id, then the lower line), the cross-attention
// weight of lower position t on upper character t (the diagonal, which 颔联 and 颈联 must follow), the aligning head,
// and the loss with one cross-attention head masked (crossAttnHeadMask). scripts/couplet/*.mjs derive the folder's
// heads.json and snapshots.json with these functions; the page and the tests recompute with them.

export const MODEL_DIR = '../../models/song-couplet-char-marian/';

/** The couplets that must be parallel (颔联, 颈联); 首联 (k = 1) and 尾联 (k = 4) are the control. */
export const isParallel = (/** @type {number} */ k) => k === 2 || k === 3;

/**
 * @typedef {object} Couplet
 * @property {number} k       1 首联 … 4 尾联
 * @property {string} upper
 * @property {string} lower
 */

/**
 * @typedef {object} HeldOutPoem  one line of held-out.jsonl
 * @property {string} id
 * @property {string} form     lushi5 | lushi7
 * @property {string} author
 * @property {string} title
 * @property {Couplet[]} couplets  k = 1 … 4
 */

/** The characters of a line, whole code points. */
export const chars = (/** @type {string} */ s) => Array.from(s);

/**
 * held-out.jsonl → its poems, each checked: 4 couplets k = 1 … 4 whose two lines have one length, 5 or 7.
 * @param {string} jsonl
 * @returns {HeldOutPoem[]}
 */
export function parseCoupletHeldOut(jsonl) {
  const poems = [];
  for (const [i, line] of jsonl.split('\n').entries()) {
    if (!line.trim()) continue;
    const p = JSON.parse(line);
    const ok =
      Array.isArray(p.couplets) &&
      p.couplets.length === 4 &&
      p.couplets.every(
        (/** @type {any} */ c, /** @type {number} */ j) =>
          c.k === j + 1 && [5, 7].includes(chars(c.upper).length) && chars(c.lower).length === chars(c.upper).length,
      );
    if (!ok) throw new Error(`held-out.jsonl line ${i + 1}: expected 4 couplets k = 1 … 4 of 5 or 7 characters`);
    poems.push(p);
  }
  return poems;
}

/** A poem's couplets as pairs, each with its k. */
export const poemPairs = (/** @type {HeldOutPoem[]} */ poems) => poems.flatMap((p) => p.couplets);

/**
 * A line → its ids, one per character ([UNK] for a character not in the vocabulary), then [EOS].
 * @param {{ ids: Map<string, number>, special: { unk: number, eos: number } }} tok
 * @param {string} line
 */
export function encodeLine(tok, line) {
  return Int32Array.from([...chars(line).map((c) => tok.ids.get(c) ?? tok.special.unk), tok.special.eos]);
}

/**
 * An upper line the reader typed: 5 or 7 characters, spaces dropped → { ids, labels, unknown } or { error }.
 * @param {{ ids: Map<string, number>, tokens: string[], special: { unk: number, eos: number } }} tok
 * @param {string} text
 */
export function readUpper(tok, text) {
  const cs = chars(text.replace(/\s+/g, ''));
  if (cs.length !== 5 && cs.length !== 7) return { error: 'length', n: cs.length };
  const ids = encodeLine(tok, cs.join(''));
  const labels = Array.from(ids, (id) => tok.tokens[id]);
  return { ids, labels, unknown: cs.filter((c) => !tok.ids.has(c)) };
}

/**
 * Pairs of one line length n → the teacher-forced batch: inputIds (B, n + 1), labels (B, n + 1), decoderInputIds
 * (B, n + 1) = shift_right(labels) with decoder_start_token_id first.
 * @param {{ ids: Map<string, number>, special: { unk: number, eos: number } }} tok
 * @param {Couplet[]} pairs
 * @param {number} start  decoder_start_token_id
 */
export function pairBatch(tok, pairs, start) {
  const T = chars(pairs[0].upper).length + 1;
  const B = pairs.length;
  const inputIds = new Int32Array(B * T);
  const labels = new Int32Array(B * T);
  const dec = new Int32Array(B * T);
  pairs.forEach((p, b) => {
    const up = encodeLine(tok, p.upper);
    const low = encodeLine(tok, p.lower);
    if (up.length !== T || low.length !== T) throw new RangeError(`pairBatch: pair ${b} is not of length ${T - 1}`);
    inputIds.set(up, b * T);
    labels.set(low, b * T);
    dec.set([start, ...low.subarray(0, T - 1)], b * T);
  });
  const shape = [B, T];
  return {
    inputIds: { data: inputIds, shape },
    labels: { data: labels, shape },
    decoderInputIds: { data: dec, shape },
  };
}

/**
 * Pairs → their batches, one per line length (5, then 7), at most `size` pairs each.
 * @param {{ ids: Map<string, number>, special: { unk: number, eos: number } }} tok
 */
export function pairBatches(tok, /** @type {Couplet[]} */ pairs, /** @type {number} */ start, size = 64) {
  const out = [];
  for (const n of [5, 7]) {
    const same = pairs.filter((p) => chars(p.upper).length === n);
    for (let i = 0; i < same.length; i += size) out.push(pairBatch(tok, same.slice(i, i + size), start));
  }
  return out;
}

/**
 * Sum over the batch's rows and positions t < n (the characters, [EOS] aside) of cross[b, h, t, t], per head.
 * @param {Float32Array} cross  one layer's (B, H, T, S) with T = S = n + 1
 * @param {number[]} shape
 */
export function diagonalSums(cross, shape) {
  const [B, H, T, S] = shape;
  const sums = new Float64Array(H);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) for (let t = 0; t < T - 1; t++) sums[h] += cross[((b * H + h) * T + t) * S + t];
  return sums;
}

/**
 * Mean cross-entropy per label over a batch's logits (B, T, V) and labels (B, T); → { sum, count }.
 * @param {Float32Array} logits
 * @param {Int32Array} labels
 * @param {number} V
 */
export function labelLoss(logits, labels, V) {
  let sum = 0;
  for (let r = 0; r < labels.length; r++) {
    const row = logits.subarray(r * V, (r + 1) * V);
    let max = -Infinity;
    for (const x of row) if (x > max) max = x;
    let z = 0;
    for (const x of row) z += Math.exp(x - max);
    sum += max + Math.log(z) - row[labels[r]];
  }
  return { sum, count: labels.length };
}

/**
 * A forward of the batches (maybe with a cross-attention head mask): → { loss (mean per label), diag (per layer, per
 * head, the mean weight of lower position t on upper character t) }.
 * @param {any} model  a t5 / marian Transformer
 * @param {ReturnType<typeof pairBatch>[]} batches
 * @param {{ data: Float32Array, shape: number[] } | null} crossMask
 * @param {boolean} attentions  whether to measure the diagonal
 */
export function runBatches(model, batches, crossMask = null, attentions = true) {
  const { numLayers, decoderLayers = numLayers, numHeads, vocabSize } = model.config;
  const diag = Array.from({ length: decoderLayers }, () => new Float64Array(numHeads));
  let sum = 0;
  let count = 0;
  let cells = 0;
  for (const b of batches) {
    const options = { decoderInputIds: b.decoderInputIds, outputAttentions: attentions };
    if (crossMask) Object.assign(options, { crossAttnHeadMask: crossMask });
    const out = model.forward(b.inputIds, options);
    const l = labelLoss(out.logits.data, b.labels.data, vocabSize);
    sum += l.sum;
    count += l.count;
    cells += b.labels.shape[0] * (b.labels.shape[1] - 1);
    if (attentions)
      out.crossAttentions.forEach((/** @type {any} */ a, /** @type {number} */ i) =>
        diagonalSums(a.data, a.shape).forEach((s, h) => (diag[i][h] += s)),
      );
  }
  return { loss: sum / count, diag: diag.map((row) => Array.from(row, (s) => s / cells)) };
}

/**
 * Per decoder layer and head, the mean aligned weight over parallel (k = 2, 3) and control (k = 1, 4) pairs, and the
 * loss on each.
 * @param {any} model
 * @param {any} tok
 * @param {Couplet[]} pairs
 */
export function headAlignment(model, tok, pairs) {
  const start = model.config.decoderStartTokenId;
  const par = runBatches(
    model,
    pairBatches(
      tok,
      pairs.filter((p) => isParallel(p.k)),
      start,
    ),
  );
  const ctl = runBatches(
    model,
    pairBatches(
      tok,
      pairs.filter((p) => !isParallel(p.k)),
      start,
    ),
  );
  return { parallel: par.diag, control: ctl.diag, loss: { parallel: par.loss, control: ctl.loss } };
}

/** The head with the largest parallel weight: { layer, head, weight } (0-based). */
export function aligningHead(/** @type {number[][]} */ parallel) {
  let best = { layer: 0, head: 0, weight: -Infinity };
  parallel.forEach((row, layer) =>
    row.forEach((weight, head) => {
      if (weight > best.weight) best = { layer, head, weight };
    }),
  );
  return best;
}

/** A (L, H) head mask of ones with head (layer, head) zero. */
export function oneHeadOff(/** @type {number} */ L, /** @type {number} */ H, layer = -1, head = -1) {
  const data = new Float32Array(L * H).fill(1);
  if (layer >= 0) data[layer * H + head] = 0;
  return { data, shape: [L, H] };
}

/**
 * Each cross-attention head's ablation cost: the loss (mean per label) with the head masked minus without, on the
 * parallel pairs and on the control pairs → { base: { parallel, control }, delta: { parallel, control } (L × H) }.
 * @param {any} model
 * @param {any} tok
 * @param {Couplet[]} pairs
 */
export function crossAblation(model, tok, pairs) {
  const { numLayers, decoderLayers = numLayers, numHeads, decoderStartTokenId: start } = model.config;
  /** @type {Record<string, any>} */
  const base = {};
  /** @type {Record<string, number[][]>} */
  const delta = {};
  for (const [name, keep] of /** @type {const} */ ([
    ['parallel', true],
    ['control', false],
  ])) {
    const batches = pairBatches(
      tok,
      pairs.filter((p) => isParallel(p.k) === keep),
      start,
    );
    base[name] = runBatches(model, batches, null, false).loss;
    delta[name] = Array.from({ length: decoderLayers }, (_, l) =>
      Array.from(
        { length: numHeads },
        (_, h) => runBatches(model, batches, oneHeadOff(decoderLayers, numHeads, l, h), false).loss - base[name],
      ),
    );
  }
  return { base, delta };
}

/**
 * Numbers rounded for the JSON files (6 significant digits), in arrays and objects too.
 * @param {any} x
 * @returns {any}
 */
export function round6(x) {
  if (Array.isArray(x)) return x.map(round6);
  if (typeof x === 'number') return Number(x.toPrecision(6));
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, round6(v)]));
  return x;
}

/**
 * One layer's cross-attention (H, T, S) of one pair → bytes of round(255 · w), base64 (snapshots.json).
 * @param {Float32Array} m
 */
export function quantiseCross(m) {
  return btoa(String.fromCharCode(...Array.from(m, (x) => Math.round(255 * x))));
}

/** quantiseCross's string → the (H·T·S) weights. */
export function unpackCross(/** @type {string} */ b64) {
  const s = atob(b64);
  return Float32Array.from(s, (c) => c.charCodeAt(0) / 255);
}

/**
 * Every layer's cross-attention of one source and the decoder inputs (the start token, then each written id but the
 * last): row t is the step that wrote character t. → { maps: per layer (H·T·S), H, T, S }.
 * @param {any} model  a main-thread Transformer or an attnlab/worker model (awaited)
 * @param {ArrayLike<number>} source
 * @param {number[]} written
 */
export async function alignmentMaps(model, source, written) {
  const dec = [model.config.decoderStartTokenId, ...written.slice(0, -1)];
  const out = await model.forward(
    { data: Int32Array.from(source), shape: [1, source.length] },
    { decoderInputIds: { data: Int32Array.from(dec), shape: [1, dec.length] }, outputAttentions: true },
  );
  const maps = out.crossAttentions.map((/** @type {any} */ a) => a.data);
  const [, H, T, S] = out.crossAttentions[0].shape;
  return { maps, H, T, S };
}

/** One head's (T, S) matrix of alignmentMaps' result. */
export function headMatrix(/** @type {{ maps: Float32Array[], T: number, S: number }} */ r, layer = 0, head = 0) {
  return r.maps[layer].subarray(head * r.T * r.S, (head + 1) * r.T * r.S);
}

/** snapshots.json's format number (scripts/couplet/snapshots.mjs writes it, parseCoupletSnapshots reads it). */
export const COUPLET_SNAPSHOTS_FORMAT = 1;

/** The replay's probe poems: the first 2 held-out poems of each form (五言, then 七言). */
export function probePoems(/** @type {HeldOutPoem[]} */ poems) {
  return ['lushi5', 'lushi7'].flatMap((form) => poems.filter((p) => p.form === form).slice(0, 2));
}

/**
 * @typedef {object} CoupletSnapshot  the weights after `step`
 * @property {number} step
 * @property {{ parallel: number, control: number }} loss  mean loss per label on the held-out pairs
 * @property {{ parallel: number[][], control: number[][] }} aligned  per (layer, head)
 * @property {Float32Array[][][]} maps  [probe poem][couplet][layer] → (H·T·S)
 */

/**
 * snapshots.json → { probes (the poems' couplets), steps } with the maps unpacked, checked against the shapes.
 * @param {any} json
 * @param {{ layers: number, heads: number }} dims
 */
export function parseCoupletSnapshots(json, { layers, heads }) {
  if (json?.format !== COUPLET_SNAPSHOTS_FORMAT || !Array.isArray(json.steps) || !json.steps.length)
    throw new Error(`snapshots.json: expected format ${COUPLET_SNAPSHOTS_FORMAT} with steps`);
  /** @type {Couplet[][]} */
  const probes = json.probes;
  const steps = json.steps.map((/** @type {any} */ s) => {
    const maps = s.maps.map((/** @type {string[][]} */ poem, /** @type {number} */ i) =>
      poem.map((layersB64, k) =>
        Array.from(layersB64, (b64) => {
          const m = unpackCross(b64);
          const n = chars(probes[i][k].upper).length + 1;
          if (m.length !== heads * n * n)
            throw new Error(`snapshots.json: step ${s.step}: a map of ${m.length} values`);
          return m;
        }),
      ),
    );
    if (s.aligned.parallel.length !== layers) throw new Error(`snapshots.json: step ${s.step}: not ${layers} layers`);
    return { step: s.step, loss: s.loss, aligned: s.aligned, maps };
  });
  return { probes, pairs: json.pairs, steps };
}
