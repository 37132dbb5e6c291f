// @ts-check
// Encoder–decoders (marian; kind 'encoder-decoder', any arch with decoderLayers) on transformer.mjs's Transformer
// class: forward's options (decoderInputIds required, both stacks' padding and the three head masks) and its result
// (logits, encoderLastHiddenState, the three attention lists and both stacks' hidden states), and generate's step
// loop: the encoder run once by the first step over a KV cache of the decoder's positions (C++ keeps the
// cross-attention's keys and values in it), each next id chosen by generation.mjs's sampleToken from the package's
// seeded generator, pad never emitted, eos forced last when forcedEosTokenId is set, stopping after eos. The math
// is C++'s (cpp/src/model/seq2seq.cc); the contract is docs/api.md, "Encoders, encoder–decoders and vision models".
// Training (model.lossAndGrad(batch), model.trainStep(batch, options)): the batch checked here, the math in
// cpp/src/model/seq2seq_train.cc.

import { toTensor, toTensorRecord } from './core.mjs';
import { kRawForward, sampleToken } from './generation.mjs';
import { kCore, kParameterNames, kUsable } from './model.mjs';
import { checkIds, kLossAndGradCall, kTrainStepCall } from './training.mjs';
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

const kSeq2SeqBatchFields = ['inputIds', 'attentionMask', 'decoderInputIds', 'decoderAttentionMask', 'labels'];

/**
 * A required tensor field of a training batch, or a TypeError naming it.
 * @param {string} ctx
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {string} shape
 */
function requiredField(ctx, o, key, shape) {
  if (o[key] === undefined || o[key] === null) {
    throw new TypeError(`${ctx}: batch.${key} { data: Int32Array, shape: ${shape} } is required, got ${o[key]}`);
  }
  return readTokens(ctx, o[key], `batch.${key}`);
}

/**
 * An optional padding mask of a batch, of shape `shape`.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {number[]} shape
 */
function batchPadding(ctx, value, name, shape) {
  const mask = readPadding(ctx, value, name);
  if (mask && (mask.shape.length !== 2 || mask.shape[0] !== shape[0] || mask.shape[1] !== shape[1])) {
    throw new RangeError(`${ctx}: ${name}.shape must be [${shape.join(', ')}], got [${mask.shape.join(', ')}]`);
  }
  return mask;
}

/**
 * An encoder–decoder's training batch, checked: inputIds (B, S) and labels (B, T) (ids, −100 ignored, one counted
 * at least) required, each of S and T at most contextLength; decoderInputIds (B, T) (absent: C++ shifts the labels
 * right as Hugging Face's _shift_right); attentionMask (B, S), decoderAttentionMask (B, T).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} batch
 */
function readSeq2SeqBatch(model, ctx, batch) {
  if (batch === undefined || batch === null) {
    throw new TypeError(`${ctx}: batch { inputIds, labels, … } is required, got ${batch}`);
  }
  const o = readOptions(ctx, batch, 'batch', kSeq2SeqBatchFields);
  const { vocabSize: V, contextLength } = /** @type {any} */ (model.config);
  const t = requiredField(ctx, o, 'inputIds', '[B, S]');
  const y = requiredField(ctx, o, 'labels', '[B, T]');
  const [B, S] = t.shape;
  const T = y.shape[1];
  if (y.shape[0] !== B) throw new RangeError(`${ctx}: batch.labels.shape[0] must be B = ${B}, got ${y.shape[0]}`);
  for (const [name, n] of [
    ['inputIds', S],
    ['labels', T],
  ]) {
    if (n > contextLength) {
      throw new RangeError(`${ctx}: batch.${name}.shape[1] must be at most contextLength ${contextLength}, got ${n}`);
    }
  }
  checkIds(ctx, t.data, 'batch.inputIds.data', V, false);
  checkIds(ctx, y.data, 'batch.labels.data', V, true);
  let ids = null;
  if (o.decoderInputIds !== undefined && o.decoderInputIds !== null) {
    ids = readTokens(ctx, o.decoderInputIds, 'batch.decoderInputIds');
    if (ids.shape[0] !== B || ids.shape[1] !== T) {
      throw new RangeError(
        `${ctx}: batch.decoderInputIds.shape must equal batch.labels.shape [${B}, ${T}], got [${ids.shape.join(', ')}]`,
      );
    }
    checkIds(ctx, ids.data, 'batch.decoderInputIds.data', V, false);
  }
  const mask = batchPadding(ctx, o.attentionMask, 'batch.attentionMask', [B, S]);
  const dmask = batchPadding(ctx, o.decoderAttentionMask, 'batch.decoderAttentionMask', [B, T]);
  return { t, y, ids, mask, dmask };
}

/**
 * Refuses a batch that would not fit (what `call` makes: kTrainStepCall or kLossAndGradCall), then copies it into
 * wasm memory and runs fn on the handle with the forward struct and the labels' struct.
 * @template R
 * @param {Transformer} model
 * @param {string} ctx
 * @param {ReturnType<typeof readSeq2SeqBatch>} b
 * @param {0 | 1} call
 * @param {(handle: any, args: any, labels: any) => R} fn
 * @returns {R}
 */
function withSeq2SeqBatch(model, ctx, b, call, fn) {
  const core = model[kCore];
  const arg = (/** @type {any} */ x) => (x ? core.tensorArg(x) : { ptr: 0, shape: [] });
  const none = { ptr: 0, shape: [] };
  const args = {
    tokens: core.tensorArg(b.t),
    attentionMask: arg(b.mask),
    headMask: none,
    outputAttentions: [],
    outputHiddenStates: false,
    lastLogitsOnly: false,
    tokenTypeIds: none,
    pixelValues: none,
    decoderInputIds: arg(b.ids),
    decoderAttentionMask: arg(b.dmask),
    decoderHeadMask: none,
    crossAttnHeadMask: none,
  };
  const labels = core.tensorArg(b.y);
  const inputs = [b.t, b.y, b.mask, b.ids, b.dmask];
  core.checkFits(ctx, 'batch', inputs, () => model[kUsable](ctx).trainBatchMemory(args.tokens, labels, call));
  return core.withHeap(ctx, 'batch', inputs, (p) => {
    [args.tokens.ptr, labels.ptr, args.attentionMask.ptr, args.decoderInputIds.ptr, args.decoderAttentionMask.ptr] = p;
    return fn(model[kUsable](ctx), args, labels);
  });
}

/**
 * model.lossAndGrad(batch) of an encoder–decoder: the mean cross-entropy of the decoder's logits against
 * batch.labels and every parameter's gradient, under stateDict()'s names.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} batch
 */
export function seq2seqLossAndGrad(model, ctx, batch) {
  const b = readSeq2SeqBatch(model, ctx, batch);
  const raw = withSeq2SeqBatch(model, ctx, b, kLossAndGradCall, (h, args, labels) => h.lossAndGradBatch(args, labels));
  return { loss: raw.loss, gradParams: toTensorRecord(raw.gradParams, model[kParameterNames]) };
}

/**
 * model.trainStep(batch, options) of an encoder–decoder: one AdamW step (adamw: training.mjs's checked options).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} batch
 * @param {any} adamw
 * @returns {{ loss: number, gradNorm: number }}
 */
export function seq2seqTrainStep(model, ctx, batch, adamw) {
  const b = readSeq2SeqBatch(model, ctx, batch);
  const { loss, gradNorm } = withSeq2SeqBatch(model, ctx, b, kTrainStepCall, (h, args, labels) =>
    h.trainStepBatch(args, labels, adamw),
  );
  return { loss, gradNorm };
}
