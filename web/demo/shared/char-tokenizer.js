// @ts-check
// A character-level tokenizer from a Hugging Face tokenizer.json whose model is a WordLevel vocabulary of single code
// points behind a Split-on-"." pre-tokenizer (the poem model's, scripts/poems/tokenizer.mjs): one token per code
// point (for…of, so characters outside the BMP stay whole), [UNK] for a character not in the vocabulary, [BOS] in
// front as the file's TemplateProcessing does. The page needs nothing more, so it loads no tokenizer library.

/**
 * @typedef {object} CharTokenizer
 * @property {string[]} tokens             id → token
 * @property {Map<string, number>} ids     token → id
 * @property {{ pad: number, unk: number, bos: number, eos: number }} special
 * @property {(text: string, options?: { bos?: boolean }) => Int32Array} encode
 * @property {(ids: ArrayLike<number>) => string} decode   skips the special tokens
 */

/**
 * @param {any} json  a parsed tokenizer.json
 * @returns {CharTokenizer}
 */
export function charTokenizer(json) {
  const model = json?.model;
  if (!model || model.type !== 'WordLevel' || typeof model.vocab !== 'object') {
    throw new TypeError(`charTokenizer: expected a WordLevel tokenizer.json, got model type ${model?.type}`);
  }
  /** @type {Map<string, number>} */
  const ids = new Map(Object.entries(model.vocab).map(([t, i]) => [t, Number(i)]));
  /** @type {string[]} */
  const tokens = [];
  for (const [t, i] of ids) tokens[i] = t;
  const idOf = (/** @type {string} */ t) => {
    const i = ids.get(t);
    if (i === undefined) throw new RangeError(`charTokenizer: the vocabulary has no ${t}`);
    return i;
  };
  const special = { pad: idOf('[PAD]'), unk: idOf(model.unk_token ?? '[UNK]'), bos: idOf('[BOS]'), eos: idOf('[EOS]') };
  const specialIds = new Set(Object.values(special));
  return {
    tokens,
    ids,
    special,
    encode(text, { bos = true } = {}) {
      const out = bos ? [special.bos] : [];
      for (const ch of text) out.push(ids.get(ch) ?? special.unk);
      return Int32Array.from(out);
    },
    decode(list) {
      let s = '';
      for (const i of Array.from(list)) if (!specialIds.has(i)) s += tokens[i] ?? '';
      return s;
    },
  };
}

/** The special tokens at the front of every vocabulary, as the poem model has them (ids 0 … 3). */
export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[BOS]', '[EOS]'];

/**
 * A character tokenizer of a text, for a model trained on that text from scratch: the same WordLevel tokenizer.json
 * model (the fields charTokenizer reads) over the four specials, then the text's code points by count (ties by code
 * point), at most maxVocab tokens in all (rarer characters become [UNK]); whitespace is an ordinary character.
 * @param {string} text
 * @param {number} maxVocab
 * @returns {CharTokenizer & { json: { model: { type: 'WordLevel', vocab: Record<string, number>, unk_token: string } } }}
 */
export function fromText(text, maxVocab) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const chars = [...counts].sort((a, b) => b[1] - a[1] || a[0].codePointAt(0) - b[0].codePointAt(0));
  const tokens = [...SPECIAL_TOKENS, ...chars.map((c) => c[0])].slice(0, maxVocab);
  const json = {
    model: {
      type: /** @type {const} */ ('WordLevel'),
      vocab: Object.fromEntries(tokens.map((t, i) => [t, i])),
      unk_token: '[UNK]',
    },
  };
  return { ...charTokenizer(json), json };
}
