// @ts-check
// Encoders (bert, roberta, vit) on transformer.mjs's Transformer class: which kind of model a configuration is
// (model.kind, model.task), the task a checkpoint's head tensors give (loadModel), the encoder's forward input
// (token ids, or a vision model's pixelValues) options and results (token types; lastHiddenState, pooledOutput, the
// head's logits), and the refusal of the decoder-only methods (generate, KV caches, train; an encoder's lossAndGrad
// and trainStep take the batch form: encoder_training.mjs). The math is C++'s (cpp/src/model/encoder.cc); the contract is docs/api.md, "Encoders".

import { toTensor } from './core.mjs';
import { readTensor, readTokens, typedArrayName } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('./model_config.mjs').ModelConfig} ModelConfig */

/** An encoder's forward options (no kvCache, no lastLogitsOnly: there is nothing to decode). */
export const kEncoderForwardOptions = [
  'tokenTypeIds',
  'attentionMask',
  'headMask',
  'outputAttentions',
  'outputHiddenStates',
];

/**
 * model.task: the head the model computes ('causal-lm' for decoders, whose configurations carry no task).
 * @param {ModelConfig} config model.config
 */
export function taskOf(config) {
  return 'task' in config ? config.task : 'causal-lm';
}

/**
 * model.kind: 'decoder' (causal-lm), 'encoder-decoder' (decoderLayers > 0) or 'encoder'.
 * @param {ModelConfig} config model.config
 * @returns {'decoder' | 'encoder' | 'encoder-decoder'}
 */
export function kindOf(config) {
  if ('decoderLayers' in config && config.decoderLayers > 0) return 'encoder-decoder';
  return taskOf(config) === 'causal-lm' ? 'decoder' : 'encoder';
}

/**
 * forward's input: token ids (B, T) for a text model, pixelValues { data: Float32Array, shape: [B, C, H, W] } with
 * C = numChannels and H = W = imageSize for a vision model (imageSize > 0); the other kind is a RangeError naming it.
 * @param {string} ctx
 * @param {unknown} value
 * @param {ModelConfig} config
 * @returns {{ tokens: any, pixels: any }} one of them null
 */
export function readInput(ctx, value, config) {
  const c = /** @type {any} */ (config);
  const image = c.imageSize ?? 0;
  const data = /** @type {any} */ (value)?.data;
  if (!image) {
    if (typedArrayName(data) === 'Float32Array') {
      throw new RangeError(
        `${ctx}: pixelValues: arch '${c.arch}' is a text model; it takes token ids, got pixel values`,
      );
    }
    return { tokens: readTokens(ctx, value, 'tokens'), pixels: null };
  }
  if (typedArrayName(data) === 'Int32Array') {
    throw new RangeError(`${ctx}: tokens: arch '${c.arch}' is a vision model; it takes pixelValues, got token ids`);
  }
  const pixels = readTensor(ctx, value, 'pixelValues');
  const { shape } = pixels;
  const expected = `[B, ${c.numChannels}, ${image}, ${image}] (B >= 1; numChannels, imageSize ${image})`;
  const ok = shape.length === 4 && shape[0] >= 1 && shape[1] === c.numChannels;
  if (!ok || shape[2] !== image || shape[3] !== image) {
    throw new RangeError(`${ctx}: pixelValues.shape must be ${expected}, got [${shape.join(', ')}]`);
  }
  return { tokens: null, pixels };
}

/**
 * Throws for a decoder-only method (generate, createKVCache, train; an encoder–decoder's training) called on an
 * encoder or encoder–decoder.
 * @param {{ kind: string, task: string, config: { arch: string } }} model
 * @param {string} ctx the method, e.g. 'model.generate'
 */
export function decoderOnly(model, ctx) {
  if (model.kind === 'decoder') return;
  const why =
    ctx.endsWith('generate') || ctx.endsWith('KVCache')
      ? 'decoders only'
      : 'decoders only (encoders and encoder–decoders train one batch at a time: lossAndGrad(batch), trainStep(batch, options))';
  throw new TypeError(
    `${ctx}: not available for an ${model.kind} (arch '${model.config.arch}', task '${model.task}'): ${why}`,
  );
}

/**
 * loadModel's configuration with the heads that the checkpoint's tensor names hold (C++'s ConfigWithHeads: an
 * encoder's task and pooler), as createModel's options; a decoder's comes back the same.
 * @param {Core} core
 * @param {string} ctx
 * @param {{ json: string, huggingFace: boolean, seed: number }} config
 * @param {string[]} names
 */
export function withHeads(core, ctx, config, names) {
  const json = core.call(ctx, () => core.Module._transformerConfigWithHeads(config.json, config.huggingFace, names));
  return { json, huggingFace: false, seed: config.seed };
}

/**
 * An encoder's forward result from the raw one: lastHiddenState, then what the model has (pooledOutput, logits),
 * then the attentions and hidden states asked for.
 * @param {any} raw
 * @param {number[] | null} layers
 * @param {boolean} hidden
 */
export function encoderResult(raw, layers, hidden) {
  /** @type {Record<string, any>} */
  const result = { lastHiddenState: toTensor(raw.lastHiddenState) };
  if (raw.pooledOutput) result.pooledOutput = toTensor(raw.pooledOutput);
  if (raw.logits) result.logits = toTensor(raw.logits);
  if (layers) result.attentions = raw.attentions.map((/** @type {any} */ a) => (a ? toTensor(a) : null));
  if (hidden && raw.hiddenStates) result.hiddenStates = raw.hiddenStates.map(toTensor);
  return result;
}
