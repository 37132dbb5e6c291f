// @ts-check
// Part "poem", the tutorial's own sentence (§2.3, §7.1) through the trained poem model: "这只猫因为没有及时喂食，所以
// 一直在叫。" read by the model one character (one token) at a time, and 叫's attention row in every layer and head.
// The card's claims (which head puts the most weight on 喂, the most any head gives 猫, the uniform weight) are
// computed here from that forward, never typed. No DOM.

/** @typedef {import('../../attnlab.js').Transformer} Model */
/** @typedef {import('../../shared/char-tokenizer.js').CharTokenizer} Tokenizer */

/** The tutorial's sentence (§2.3) and the token whose row the panel shows. */
export const TUTORIAL_SENTENCE = '这只猫因为没有及时喂食，所以一直在叫。';
export const QUERY_CHAR = '叫';
/** The keys the tutorial's reader should attend to from 叫: the cat (who cries) and the feeding (why). */
export const CAT = '猫';
export const FEED = '喂';

/**
 * One forward of [BOS] + the text's characters; the query token's row in every layer and head.
 * @param {Model} model
 * @param {Tokenizer} tok
 * @param {string} [text]
 * @param {string} [query]  a character of the text (its last occurrence)
 * @returns {{ labels: string[], q: number, rows: Float32Array[], unknown: number }}
 *   labels: the keys ([BOS] and the characters up to the query), rows: per layer (H, q + 1), unknown: [UNK]s
 */
export function sentenceRows(model, tok, text = TUTORIAL_SENTENCE, query = QUERY_CHAR) {
  const ids = tok.encode(text, { bos: true });
  const labels = ['[BOS]', ...text];
  if (ids.length !== labels.length) throw new RangeError(`text: ${ids.length} tokens for ${labels.length} labels`);
  const q = labels.lastIndexOf(query);
  if (q < 1) throw new RangeError(`query: "${query}" is not a character of the text`);
  const { attentions } = model.forward({ data: ids, shape: [1, ids.length] }, { outputAttentions: true });
  const T = ids.length;
  const rows = attentions.map((a) => {
    const H = a.shape[1];
    const out = new Float32Array(H * (q + 1));
    for (let h = 0; h < H; h++) out.set(a.data.subarray((h * T + q) * T, (h * T + q) * T + q + 1), h * (q + 1));
    return out;
  });
  const unknown = Array.from(ids).filter((id) => id === tok.special.unk).length;
  return { labels: labels.slice(0, q + 1), q, rows, unknown };
}

/**
 * The head (layer, head from 0) that puts the most weight on a key, with that weight.
 * @param {Float32Array[]} rows  per layer (H, S)
 * @param {number} key  the key's index
 * @param {number} S
 */
export function strongestOn(rows, key, S) {
  let best = { layer: 0, head: 0, weight: -1 };
  rows.forEach((r, layer) => {
    for (let head = 0; head < r.length / S; head++)
      if (r[head * S + key] > best.weight) best = { layer, head, weight: r[head * S + key] };
  });
  return best;
}

/**
 * The key a head weights most, with its weight.
 * @param {Float32Array[]} rows
 * @param {{ layer: number, head: number }} at
 * @param {string[]} labels  the S keys
 */
export function topKey(rows, { layer, head }, labels) {
  const S = labels.length;
  const r = rows[layer].subarray(head * S, (head + 1) * S);
  let k = 0;
  for (let j = 1; j < S; j++) if (r[j] > r[k]) k = j;
  return { key: labels[k], index: k, weight: r[k] };
}

/**
 * What the card says, from the rows: the head with the most weight on 喂 (and the key it weights most), the head
 * with the most on 猫 (and the key that head weights most instead), the uniform weight 1/S.
 * @param {{ labels: string[], rows: Float32Array[] }} s  sentenceRows(…)
 */
export function sentenceClaims({ labels, rows }) {
  const S = labels.length;
  const at = (/** @type {string} */ c) => {
    const key = labels.indexOf(c);
    if (key < 0) throw new RangeError(`key: "${c}" is not before the query`);
    const best = strongestOn(rows, key, S);
    return { ...best, top: topKey(rows, best, labels) };
  };
  return { feed: at(FEED), cat: at(CAT), uniform: 1 / S, heads: rows.length * (rows[0].length / S) };
}

/** The two versions the panel offers: the tutorial's sentence as written, and without its comma. */
export const SENTENCE_PRESETS = /** @type {const} */ ({
  comma: TUTORIAL_SENTENCE,
  plain: TUTORIAL_SENTENCE.replace('，', ''),
});

/**
 * Both versions through the model: each one's rows and claims, and where each version's 喂 head looks in the other
 * version (the same head, a different sentence).
 * @param {Model} model
 * @param {Tokenizer} tok
 */
export function sentenceStudy(model, tok) {
  const run = (/** @type {string} */ text) => {
    const s = sentenceRows(model, tok, text);
    return { ...s, text, claims: sentenceClaims(s) };
  };
  const comma = run(SENTENCE_PRESETS.comma);
  const plain = run(SENTENCE_PRESETS.plain);
  return {
    comma: { ...comma, feedElsewhere: topKey(plain.rows, comma.claims.feed, plain.labels) },
    plain: { ...plain, feedElsewhere: topKey(comma.rows, plain.claims.feed, comma.labels) },
  };
}
