// @ts-check
// Training an encoder with the batch form of the contract (docs/api.md, "Training an encoder"):
// model.lossAndGrad(batch) and model.trainStep(batch, options), batch { inputIds | pixelValues, attentionMask?,
// tokenTypeIds?, labels }. The inputs are checked as forward's (encoder.mjs's readInput), the labels against the
// head (classification: (B) class ids in [0, numLabels); masked-LM: (B, T) token ids in [0, vocabSize); −100
// ignored, at least one counted), AdamW's options and the memory check as decoders' (training.mjs); the math is
// C++'s (cpp/src/model/encoder_train.cc).

import { toTensorRecord } from './core.mjs';
import { readInput } from './encoder.mjs';
import { kCore, kParameterNames, kUsable } from './model.mjs';
import { checkIds, kLossAndGradCall, kTrainStepCall, readAdamW, kTrainStepOptions } from './training.mjs';
import { describe, readInt32Array, readMask, readOptions, readTokens } from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */

const kBatchFields = ['inputIds', 'pixelValues', 'attentionMask', 'tokenTypeIds', 'labels'];

/**
 * A checked batch: the input (tokens or pixels, one of them null), the optional mask and token types, the labels.
 * @typedef {{ tokens: any, pixels: any, mask: any, types: any, labels: any }} EncoderBatch
 */

/**
 * An encoder's training calls take one batch object (decoders' take tokens and targets): a further argument is a
 * TypeError.
 * @param {string} ctx
 * @param {unknown} extra
 * @param {string} form
 */
function onlyBatch(ctx, extra, form) {
  if (extra === undefined) return;
  throw new TypeError(
    `${ctx}: an encoder takes ${form}, batch { inputIds | pixelValues, labels, … }; got a further argument ` +
      `${describe(extra)}`,
  );
}

/**
 * The batch's labels: (B) class ids in [0, numLabels) for a classification head, (B, T) token ids in [0, vocabSize)
 * for a masked-LM one (the inputs' shape); each or −100, at least one counted.
 * @param {string} ctx
 * @param {any} model
 * @param {unknown} value
 * @param {number[]} inputShape the inputs' (B, T) (a vision model's: B first)
 */
function readLabels(ctx, model, value, inputShape) {
  const config = /** @type {any} */ (model.config);
  if (model.task === 'masked-lm') {
    const labels = readTokens(ctx, value, 'batch.labels');
    if (labels.shape[0] !== inputShape[0] || labels.shape[1] !== inputShape[1]) {
      throw new RangeError(
        `${ctx}: batch.labels.shape must be the inputs' [${inputShape.join(', ')}], got [${labels.shape.join(', ')}]`,
      );
    }
    checkIds(ctx, labels.data, 'batch.labels.data', config.vocabSize, true);
    return labels;
  }
  const items = inputShape[0];
  const v = /** @type {any} */ (value);
  const labels = v === null || typeof v !== 'object' ? null : readInt32Array(ctx, v.data, 'batch.labels.data');
  if (!labels) {
    throw new TypeError(`${ctx}: batch.labels must be { data: Int32Array, shape: [B] }, got ${describe(value)}`);
  }
  const { shape } = v;
  if (!Array.isArray(shape) || shape.length !== 1 || shape[0] !== items || labels.size !== items) {
    throw new RangeError(
      `${ctx}: batch.labels must have shape [${items}] (B: one class id per item) and ${items} ids, got shape ` +
        `${describe(shape)} and ${labels.size} ids`,
    );
  }
  checkIds(ctx, labels.data, 'batch.labels.data', config.numLabels, true);
  return labels;
}

/**
 * A text encoder's batch.inputIds: (B, T), T at most contextLength, each id in [0, vocabSize).
 * @param {string} ctx
 * @param {any} config
 * @param {unknown} value
 */
function readTextInput(ctx, config, value) {
  const tokens = readTokens(ctx, value, 'batch.inputIds');
  if (tokens.shape[1] > config.contextLength) {
    throw new RangeError(
      `${ctx}: batch.inputIds.shape[1] (T) must be at most contextLength ${config.contextLength}, got ${tokens.shape[1]}`,
    );
  }
  checkIds(ctx, tokens.data, 'batch.inputIds.data', config.vocabSize, false);
  return tokens;
}

/**
 * Checks a training batch of an encoder: the input its kind takes (inputIds, or a vision model's pixelValues; the
 * other is a RangeError naming it), attentionMask (Uint8Array (B, T)), tokenTypeIds, labels.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} batch
 * @returns {EncoderBatch}
 */
export function readEncoderBatch(model, ctx, batch) {
  if (batch === null || typeof batch !== 'object') {
    throw new TypeError(`${ctx}: batch must be { inputIds | pixelValues, labels, … }, got ${describe(batch)}`);
  }
  const b = readOptions(ctx, batch, 'batch', kBatchFields);
  const config = /** @type {any} */ (model.config);
  const vision = (config.imageSize ?? 0) > 0;
  const [given, other] = vision ? ['pixelValues', 'inputIds'] : ['inputIds', 'pixelValues'];
  if (b[other] !== undefined && b[other] !== null) {
    throw new RangeError(`${ctx}: batch.${other}: arch '${config.arch}' takes ${given}, got ${other}`);
  }
  if (b[given] === undefined || b[given] === null) {
    throw new TypeError(`${ctx}: batch.${given} is required for arch '${config.arch}', got ${describe(b[given])}`);
  }
  const { tokens, pixels } = vision
    ? readInput(ctx, b.pixelValues, config)
    : { tokens: readTextInput(ctx, config, b.inputIds), pixels: null };
  const mask = readMask(ctx, b.attentionMask, 'batch.attentionMask');
  if (mask && mask.tag !== 'Uint8Array') {
    throw new TypeError(
      `${ctx}: batch.attentionMask.data must be a Uint8Array (1 = token, 0 = padding), got ${mask.tag}`,
    );
  }
  const types =
    b.tokenTypeIds === undefined || b.tokenTypeIds === null
      ? null
      : readTokens(ctx, b.tokenTypeIds, 'batch.tokenTypeIds');
  return { tokens, pixels, mask, types, labels: readLabels(ctx, model, b.labels, (tokens ?? pixels).shape) };
}

/**
 * Refuses a batch whose training call cannot fit in wasm memory (before anything is copied), then copies it into
 * wasm memory and runs fn on the handle with the raw forward arguments and labels.
 * @template R
 * @param {Transformer} model
 * @param {string} ctx
 * @param {EncoderBatch} batch
 * @param {0 | 1} call kTrainStepCall or kLossAndGradCall
 * @param {(handle: any, args: any, labels: any) => R} fn
 * @returns {R}
 */
function withEncoderBatch(model, ctx, { tokens, pixels, mask, types, labels }, call, fn) {
  const core = model[kCore];
  const arg = (/** @type {any} */ x) => (x ? core.tensorArg(x) : { ptr: 0, shape: [] });
  const none = { ptr: 0, shape: [] };
  const shape = pixels ? [pixels.shape[0], /** @type {any} */ (model.config).contextLength] : tokens.shape;
  const inputs = [tokens, pixels, mask, types, labels];
  core.checkFits(ctx, 'batch', inputs, () => model[kUsable](ctx).trainMemory({ ptr: 0, shape }, call));
  return core.withHeap(ctx, 'batch', inputs, (p) => {
    const args = {
      tokens: pixels ? { ptr: 0, shape: [] } : { ...arg(tokens), ptr: p[0] },
      pixelValues: { ...arg(pixels), ptr: p[1] },
      attentionMask: { ...arg(mask), ptr: p[2] },
      tokenTypeIds: { ...arg(types), ptr: p[3] },
      headMask: none,
      outputAttentions: [],
      outputHiddenStates: false,
      lastLogitsOnly: false,
      decoderInputIds: none,
      decoderAttentionMask: none,
      decoderHeadMask: none,
      crossAttnHeadMask: none,
    };
    return fn(model[kUsable](ctx), args, { ...arg(labels), ptr: p[4] });
  });
}

/**
 * An encoder's model.lossAndGrad(batch): { loss, gradParams } (tensors off the loss path have no entry).
 * @param {Transformer} model
 * @param {unknown} batch
 * @param {unknown} extra a second argument (decoders' targets): none for an encoder
 */
export function encoderLossAndGrad(model, batch, extra) {
  const ctx = 'model.lossAndGrad';
  model[kUsable](ctx);
  onlyBatch(ctx, extra, 'lossAndGrad(batch)');
  const b = readEncoderBatch(model, ctx, batch);
  const raw = withEncoderBatch(model, ctx, b, kLossAndGradCall, (h, args, labels) => h.lossAndGradBatch(args, labels));
  return { loss: raw.loss, gradParams: toTensorRecord(raw.gradParams, model[kParameterNames]) };
}

/**
 * An encoder's model.trainStep(batch, options): one AdamW step as decoders' (training.mjs's options).
 * @param {Transformer} model
 * @param {unknown} batch
 * @param {unknown} options
 * @param {unknown} extra a third argument (decoders' options): none for an encoder
 * @returns {{ loss: number, gradNorm: number }}
 */
export function encoderTrainStep(model, batch, options, extra) {
  const ctx = 'model.trainStep';
  model[kUsable](ctx);
  onlyBatch(ctx, extra, 'trainStep(batch, options)');
  const b = readEncoderBatch(model, ctx, batch);
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { lr, … } are required (lr has no default), got ${describe(options)}`);
  }
  const adamw = readAdamW(ctx, readOptions(ctx, options, 'options', kTrainStepOptions));
  const raw = withEncoderBatch(model, ctx, b, kTrainStepCall, (h, args, labels) =>
    h.trainStepBatch(args, labels, adamw),
  );
  return { loss: raw.loss, gradNorm: raw.gradNorm };
}
