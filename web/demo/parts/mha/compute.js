// @ts-check
// Part "multi-head on a sentence" (§2.3, §7.1, §8.1), the numbers: per-head attention weights of a sentence through
// attnlab's createMultiHeadAttention(...).forward(...), with weights from the toy models trained by
// scripts/train_toy.py (shared/toy-model.js), from a freshly initialised (untrained) layer, or from the user's own
// PyTorch layer (a JSON state dict, shared/statedict.js); the head average is attnlab's too (averageAttnWeights,
// PyTorch's diagnostic), and the toy models' answers are scored against their task's rule. No DOM.

import { pseudoEmbed, causalMask, tokenize } from '../../shared/inputs.js';
import { runToy, parseTokens, expectedAnswers } from '../../shared/toy-model.js';
import { t } from '../../i18n.js';

/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {import('../../attnlab.js').MultiHeadAttentionForwardOptions} ForwardOptions */
/** @typedef {import('../../shared/toy-model.js').ToyModel} ToyModel */
/** @typedef {import('../../shared/statedict.js').LayerConfig} LayerConfig */

export const MAX_TOKENS = 32;
/** E of the untrained layer. */
export const RANDOM_E = 32;

/**
 * What the maps draw: per-head weights (H, L, S), their average (L, S), S keys with their labels.
 * @typedef {{ weights: Float32Array, average: Float32Array, S: number, keyLabels: string[] }} HeadWeights
 */

/**
 * The tokens of the text: a toy model's vocabulary (ids), or words; with padding up to padTo ('<pad>', masked as
 * keys). Returns { error } in words when the text cannot be used.
 * @param {string} text
 * @param {ToyModel | null} toy
 * @param {number} padTo
 * @returns {{ error: string } | { ids: number[] | null, labels: string[], padded: boolean[], L0: number }}
 */
export function readTokens(text, toy, padTo) {
  let tokens;
  let ids = null;
  if (toy) {
    const p = parseTokens(toy, text);
    if (p.error) return { error: p.error };
    ids = p.ids;
    tokens = ids.map((tk) => toy.vocab[tk]);
  } else {
    tokens = tokenize(text);
    if (!tokens.length) return { error: t('mha.typeText') };
  }
  if (tokens.length > MAX_TOKENS) return { error: t('mha.tooMany', { n: tokens.length, max: MAX_TOKENS }) };
  const L0 = tokens.length;
  const L = Math.max(L0, padTo);
  const labels = tokens.concat(Array(L - L0).fill('<pad>'));
  return { ids, labels, padded: labels.map((_, i) => i >= L0), L0 };
}

/**
 * A toy model on its token ids (padding masked as keys): the heads' weights and the model's answers.
 * @param {ToyModel} toy
 * @param {import('../../shared/toy-model.js').ToyLayers} layers the toy's layers (createToyLayers)
 * @param {number[]} ids
 * @param {string[]} labels with the padding
 * @param {boolean} causal
 */
export function runToySource(toy, layers, ids, labels, causal) {
  const L = labels.length;
  const r = runToy(toy, layers, ids.concat(Array(L - ids.length).fill(-1)), { causal });
  /** @type {HeadWeights} */
  const result = { weights: r.weights, average: r.average, S: L, keyLabels: labels };
  return { H: toy.H, result, predicted: r.predicted };
}

/**
 * An untrained or user layer on pseudo-embeddings of the words (padding masked as keys): the heads' weights and
 * their average, with the keys that addBiasKV / addZeroAttn append.
 * @param {MultiHeadAttention} mha
 * @param {{ numHeads: number, embedDim: number, kdim: number, vdim: number, addBiasKV?: boolean, addZeroAttn?: boolean }} cfg
 * @param {string[]} labels
 * @param {boolean[]} padded
 * @param {boolean} causal
 */
export function runLayer(mha, cfg, labels, padded, causal) {
  const L = labels.length;
  const E = cfg.embedDim;
  const extraKeys = [cfg.addBiasKV ? '⟨bias_k⟩' : null, cfg.addZeroAttn ? '⟨zero⟩' : null].filter(Boolean);
  const toks = labels.map((s, i) => (padded[i] ? null : s));
  const x = { data: pseudoEmbed(toks, E), shape: [1, L, E] };
  const kx = cfg.kdim === E ? x : { data: pseudoEmbed(toks, cfg.kdim, 0x9e37), shape: [1, L, cfg.kdim] };
  const vx = cfg.vdim === E ? x : { data: pseudoEmbed(toks, cfg.vdim, 0x7f4a), shape: [1, L, cfg.vdim] };
  /** @type {ForwardOptions} */
  const opts = { needWeights: true, averageAttnWeights: false };
  if (padded.some(Boolean)) opts.keyPaddingMask = { data: Uint8Array.from(padded, (p) => (p ? 1 : 0)), shape: [1, L] };
  if (causal) opts.attnMask = causalMask(L);
  const { weights } = mha.forward(x, kx, vx, opts);
  const average = mha.forward(x, kx, vx, { ...opts, averageAttnWeights: true }).weights.data;
  /** @type {HeadWeights} */
  const result = { weights: weights.data, average, S: weights.shape[3], keyLabels: labels.concat(extraKeys) };
  return { H: cfg.numHeads, result };
}

/**
 * The toy's answers scored against the task's rule: per position the expected id (null = none), whether it is
 * scored and right, and the counts.
 * @param {ToyModel} toy
 * @param {number[]} ids
 * @param {number[]} predicted
 */
export function scoreAnswers(toy, ids, predicted) {
  const expected = expectedAnswers(toy, ids);
  const scored = ids.map((_, i) => expected[i] !== null && (toy.task === 'reverse' || ids[i] >= 90));
  const ok = ids.map((_, i) => scored[i] && predicted[i] === expected[i]);
  return { expected, scored, ok, right: ok.filter(Boolean).length, n: scored.filter(Boolean).length };
}
