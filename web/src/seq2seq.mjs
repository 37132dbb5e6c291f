// @ts-check
// Encoder–decoders (marian; kind 'encoder-decoder', any arch with decoderLayers) on transformer.mjs's Transformer
// class: forward's options (decoderInputIds required, both stacks' padding and the three head masks) and its result
// (logits, encoderLastHiddenState, the three attention lists and both stacks' hidden states), and generate's step
// loop: the encoder run once by the first step over a KV cache of the decoder's positions (C++ keeps the
// cross-attention's keys and values in it), each next id chosen by generation.mjs's sampleToken from the package's
// seeded generator, pad never emitted, eos forced last when forcedEosTokenId is set, stopping after eos. The math
// is C++'s (cpp/src/model/seq2seq.cc); the contract is docs/api.md, "Encoders, encoder–decoders and vision models".

import { toTensor } from './core.mjs';
import { kRawForward, sampleToken } from './generation.mjs';
import { kUsable } from './model.mjs';
import { readBool, readLayers, readMask, readOptions, readTensor, readTokens } from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */
/** @typedef {import('./kv_cache.mjs').KVCache} KVCache */

const kSeq2SeqForwardOptions = [
  'decoderInputIds',
  'attentionMask',
  'decoderAttentionMask',
  'headMask',
  'decoderHeadMask',
  'crossAttnHeadMask',
  'outputAttentions',
  'outputHiddenStates',
];

/**
 * An optional padding mask: a Uint8Array (1 = token, 0 = padding), or null.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 */
export function readPadding(ctx, value, name) {
  const mask = readMask(ctx, value, name);
  if (mask && mask.tag !== 'Uint8Array') {
    throw new TypeError(`${ctx}: ${name}.data must be a Uint8Array (1 = token, 0 = padding), got ${mask.tag}`);
  }
  return mask;
}

/**
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 */
const readOptionalTensor = (ctx, value, name) =>
  value === undefined || value === null ? null : readTensor(ctx, value, name);

/**
 * A list of per-layer raw tensors (null for a layer not asked for) as Tensors.
 * @param {any[]} list
 */
const layerList = (list) => list.map((a) => (a ? toTensor(a) : null));

/**
 * model.forward of an encoder–decoder: tokens are the encoder's ids (B, S); options.decoderInputIds (B, T) is
 * required (Hugging Face: shift_right(labels)).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} tokens
 * @param {unknown} options
 */
export function seq2seqForward(model, ctx, tokens, options) {
  const t = readTokens(ctx, tokens, 'tokens');
  const o = readOptions(ctx, options ?? {}, 'options', kSeq2SeqForwardOptions);
  if (o.decoderInputIds === undefined || o.decoderInputIds === null) {
    throw new RangeError(
      `${ctx}: decoderInputIds { data: Int32Array, shape: [B, T] } is required for an encoder–decoder ` +
        `(arch '${model.config.arch}'; Hugging Face: shift_right(labels)), got ${o.decoderInputIds}`,
    );
  }
  const c = /** @type {any} */ (model.config);
  const layers = readLayers(ctx, o.outputAttentions, 'outputAttentions', Math.max(c.numLayers, c.decoderLayers));
  const hidden = readBool(ctx, o.outputHiddenStates, 'outputHiddenStates', false);
  const decoder = {
    ids: readTokens(ctx, o.decoderInputIds, 'decoderInputIds'),
    mask: readPadding(ctx, o.decoderAttentionMask, 'decoderAttentionMask'),
    headMask: readOptionalTensor(ctx, o.decoderHeadMask, 'decoderHeadMask'),
    crossMask: readOptionalTensor(ctx, o.crossAttnHeadMask, 'crossAttnHeadMask'),
  };
  const mask = readPadding(ctx, o.attentionMask, 'attentionMask');
  const headMask = readOptionalTensor(ctx, o.headMask, 'headMask');
  const f = { layers, hidden, mask, headMask, cache: null, last: false, decoder };
  return seq2seqResult(model[kRawForward](ctx, t, f), layers, hidden);
}

/**
 * The public result of a raw encoder–decoder forward: logits (or a base model's lastHiddenState), the encoder's
 * last hidden state, and the lists asked for.
 * @param {any} raw
 * @param {number[] | null} layers
 * @param {boolean} hidden
 */
function seq2seqResult(raw, layers, hidden) {
  /** @type {Record<string, any>} */
  const result = {};
  if (raw.logits) result.logits = toTensor(raw.logits);
  if (raw.lastHiddenState) result.lastHiddenState = toTensor(raw.lastHiddenState);
  result.encoderLastHiddenState = toTensor(raw.encoderLastHiddenState);
  if (layers) {
    result.encoderAttentions = layerList(raw.encoderAttentions);
    result.decoderAttentions = layerList(raw.attentions);
    result.crossAttentions = layerList(raw.crossAttentions);
  }
  if (hidden) {
    result.encoderHiddenStates = layerList(raw.encoderHiddenStates);
    result.decoderHiddenStates = layerList(raw.hiddenStates);
  }
  return result;
}

/**
 * One generation of an encoder–decoder, checked (generation.mjs's startGeneration reads the options; prompt: the
 * encoder's ids) and run one token per step(): the first step runs the encoder and the decoder's start token
 * through a new KV cache, each later one the decoder's last id. Pad is never chosen (opus-mt's bad_words_ids);
 * the last step allowed (maxNewTokens) is forced to forcedEosTokenId when set; eosTokenId ends the generation.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {Int32Array} ids the checked prompt
 * @param {{ maxNewTokens: number, sampling: any, random: () => number, onToken: Function | null, signal: any }} o
 */
export function startSeq2SeqGeneration(model, ctx, ids, o) {
  const c = /** @type {any} */ (model.config);
  if (ids.length > c.contextLength) {
    throw new RangeError(`${ctx}: prompt must hold at most contextLength ${c.contextLength} ids, got ${ids.length}`);
  }
  if (model.task !== 'seq2seq-lm') {
    throw new TypeError(`${ctx}: needs an LM head (task 'seq2seq-lm'), got task '${model.task}'`);
  }
  const source = readTokens(ctx, { data: ids, shape: [1, ids.length] }, 'prompt');
  let cache = /** @type {KVCache | null} */ (null);
  let step = 0;
  let last = -1;
  return {
    onToken: o.onToken,
    signal: o.signal,
    step: () => {
      if (step >= o.maxNewTokens || (step > 0 && last === c.eosTokenId)) return null;
      model[kUsable](ctx);
      cache ??= model.createKVCache({ batchSize: 1, maxLength: Math.max(1, o.maxNewTokens) });
      const input = Int32Array.of(step === 0 ? c.decoderStartTokenId : last);
      const decoder = { ids: readTokens(ctx, { data: input, shape: [1, 1] }, 'decoderInputIds') };
      const f = { layers: null, hidden: false, mask: null, headMask: null, cache, last: false, decoder }; // (T = 1)
      const [row] = model[kRawForward](ctx, source, f).logits; // (1, 1, V)
      row[c.padTokenId] = -Infinity;
      const forced = c.forcedEosTokenId ?? null;
      if (forced !== null && step === o.maxNewTokens - 1) {
        row.fill(-Infinity);
        row[forced] = 0;
      }
      last = sampleToken(row, o.sampling, o.random);
      return { id: last, step: step++ };
    },
    close: () => {
      cache?.dispose();
      cache = null;
    },
  };
}
