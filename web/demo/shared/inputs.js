// @ts-check
// What the page feeds to attnlab besides its own numbers: sinusoidal positions, seeded pseudo-embeddings of tokens
// (one fixed vector per distinct token) and nn.MultiheadAttention-style masks. No DOM.

import { rng, hashString } from './random.js';

/**
 * Sinusoidal positional encoding (T, E), pe[t, 2i] = sin(t / 10000^(2i/E)), pe[t, 2i+1] = cos(…): the fixed encoding
 * of attnlab's TinyTransformer and of scripts/train_toy.py, in float64, stored as float32.
 * @param {number} T
 * @param {number} E
 */
export function positionalEncoding(T, E) {
  const pe = new Float32Array(T * E);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < E / 2; i++) {
      const ang = t / 10000 ** ((2 * i) / E);
      pe[t * E + 2 * i] = Math.sin(ang);
      pe[t * E + 2 * i + 1] = Math.cos(ang);
    }
  }
  return pe;
}

/**
 * Rows (L, E) for tokens: N(0, 1) entries seeded by the token's string (the same token, the same vector; salt
 * changes every vector) plus the positional encoding. A null token (padding) is the positional encoding only.
 * @param {(string | null)[]} tokens
 * @param {number} E
 */
export function pseudoEmbed(tokens, E, salt = 0) {
  const x = new Float32Array(tokens.length * E);
  const pe = positionalEncoding(tokens.length, E);
  tokens.forEach((tok, i) => {
    const r = tok === null ? null : rng((hashString(tok) ^ salt) >>> 0);
    for (let e = 0; e < E; e++) x[i * E + e] = (r ? r.normal() : 0) + pe[i * E + e];
  });
  return x;
}

/**
 * nn.MultiheadAttention-style bool mask (1 = masked out) hiding keys j > i.
 * @param {number} L
 */
export function causalMask(L) {
  const m = new Uint8Array(L * L);
  for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) m[i * L + j] = 1;
  return { data: m, shape: [L, L] };
}

/** The page's example sentence in each language (the tutorial's; English: the classic coreference example). */
export const SENTENCES = {
  zh: '这只猫因为没有及时喂食所以一直在叫',
  en: "The animal didn't cross the street because it was too tired",
};

/**
 * CJK text splits per character, other text per word (punctuation marks are tokens of their own).
 * @param {string} text
 */
export function tokenize(text) {
  const re = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{N}\p{M}'’_-]+|[^\s\p{L}\p{N}]/gu;
  return text.match(re) || [];
}
