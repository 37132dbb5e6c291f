// @ts-check
// Looking past the weights for encoders and encoder–decoders (docs/api.md, "Head importance, attribution and
// activation patching"): model.headImportance by the head masks' gradients or by ablation against a
// lossAndGrad-style batch ({ inputIds | pixelValues, attentionMask?, tokenTypeIds?, decoderInputIds?, labels }),
// model.attribution by the input gradient (on the encoder's block-0 input) or by occlusion (a token replaced by
// padTokenId, a ViT patch set to 0) and model.patchHeads, each kind of an encoder–decoder's heads (encoder, decoder,
// cross) apart. The gradient methods run one backward of the training path, sized as training is (trainMemory,
// trainBatchMemory) before anything is copied. The math is C++'s (cpp/src/model/analysis_encoders.cc); this file
// checks and names.

import { toTensor } from './core.mjs';
import { kForwardArgs } from './generation.mjs';
import { kCore, kUsable } from './model.mjs';
import { kAnalysisCall } from './training.mjs';
import { kAblations, kAttributionMethods, kImportanceMethods, readChoice, readIndex } from './model_analysis.mjs';
import { readPadding } from './seq2seq.mjs';
import { describe, readOptions, readTensor, readTensorLike, readTokens, typedArrayName } from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */

const kBatchKeys = ['inputIds', 'pixelValues', 'attentionMask', 'tokenTypeIds', 'decoderInputIds', 'labels'];

/**
 * What a gradient analysis of `source` needs (its backward, as training sizes it): trainBatchMemory for an
 * encoder–decoder (labels: the labels', or for attribution the decoder inputs' shape), else trainMemory on (B, T)
 * (a vision model's T: contextLength, [CLS] and its patches).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {any} source readSource's
 * @param {number[]} labels
 */
function gradientNeeds(model, ctx, source, labels) {
  const handle = model[kUsable](ctx);
  if (model.kind === 'encoder-decoder') {
    return () => handle.trainBatchMemory({ ptr: 0, shape: source.t.shape }, { ptr: 0, shape: labels }, kAnalysisCall);
  }
  const shape = source.pixels
    ? [source.pixels.shape[0], /** @type {any} */ (model.config).contextLength]
    : source.t.shape;
  return () => handle.trainMemory({ ptr: 0, shape }, kAnalysisCall);
}

/**
 * An encoder's or encoder–decoder's forward input, checked: token ids (B, T) or a vision model's pixels (the other
 * kind a RangeError naming it), and the options the analyses take.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name the input's name in messages (e.g. 'batch.inputIds', 'tokens')
 * @param {{ attentionMask?: unknown, tokenTypeIds?: unknown, decoderInputIds?: unknown }} o
 * @param {string} prefix of the options' names in messages ('batch.', 'options.')
 */
function readSource(model, ctx, value, name, o, prefix) {
  const c = /** @type {any} */ (model.config);
  const vision = (c.imageSize ?? 0) > 0;
  const tag = typedArrayName(/** @type {any} */ (value)?.data);
  if (vision && tag === 'Int32Array') {
    throw new RangeError(`${ctx}: ${name}: arch '${c.arch}' is a vision model; it takes pixelValues, got token ids`);
  }
  if (!vision && tag === 'Float32Array') {
    throw new RangeError(`${ctx}: ${name}: arch '${c.arch}' is a text model; it takes token ids, got pixel values`);
  }
  const optional = (/** @type {unknown} */ v, /** @type {string} */ n) =>
    v === undefined || v === null ? null : readTokens(ctx, v, `${prefix}${n}`);
  return {
    t: vision ? null : readTokens(ctx, value, name),
    pixels: vision ? readTensor(ctx, value, name) : null,
    mask: readPadding(ctx, o.attentionMask, `${prefix}attentionMask`),
    types: optional(o.tokenTypeIds, 'tokenTypeIds'),
    decoder: optional(o.decoderInputIds, 'decoderInputIds'),
  };
}

/**
 * Runs fn(handle, args, pointers) with each source's forward arguments in wasm memory, then `extra` buffers
 * (pointers: theirs), after checking that one forward of the first source fits (or what `needs` sizes).
 * @template T
 * @param {Transformer} model
 * @param {string} ctx
 * @param {any[]} sources readSource's
 * @param {any[]} extra
 * @param {(handle: any, args: any[], pointers: number[]) => T} fn
 * @param {(() => any) | null} [needs] the memory the call needs (gradientNeeds'), else a forward's
 * @returns {T}
 */
function withSources(model, ctx, sources, extra, fn, needs = null) {
  const core = model[kCore];
  const built = sources.map((s) =>
    model[kForwardArgs](s.t, {
      layers: null,
      hidden: false,
      mask: s.mask,
      headMask: null,
      last: false,
      types: s.types,
      pixels: s.pixels,
      decoder: s.decoder ? { ids: s.decoder } : null,
    }),
  );
  const inputs = [...built.flatMap((b) => b.inputs), ...extra];
  core.checkFits(ctx, 'inputs', inputs, needs ?? (() => model[kUsable](ctx).forwardMemory(built[0].args, 0, false)));
  return core.withHeap(ctx, 'inputs', inputs, (p) => {
    const n = built[0].inputs.length;
    built.forEach((b, i) => b.place(p.slice(i * n, (i + 1) * n)));
    return fn(
      model[kUsable](ctx),
      built.map((b) => b.args),
      p.slice(built.length * n),
    );
  });
}

/**
 * The kinds of heads as the result gives them: an encoder's one tensor, an encoder–decoder's { encoder, decoder,
 * cross }.
 * @param {any} raw
 * @param {string} key 'importance' | 'effect'
 * @param {string} decoderKey
 * @param {string} crossKey
 */
function perKind(raw, key, decoderKey, crossKey) {
  if (!raw[decoderKey]) return toTensor(raw[key]);
  return { encoder: toTensor(raw[key]), decoder: toTensor(raw[decoderKey]), cross: toTensor(raw[crossKey]) };
}

/**
 * Head importance of an encoder or encoder–decoder by the head masks' gradients (method 'gradient') or by
 * ablation: { importance, loss } (docs/api.md).
 * @param {Transformer} model
 * @param {unknown} batch { inputIds | pixelValues, attentionMask?, tokenTypeIds?, decoderInputIds?, labels }
 * @param {unknown} options { method, ablation = 'zero' }
 */
export function encoderHeadImportance(model, batch, options) {
  const ctx = 'model.headImportance';
  model[kUsable](ctx);
  if (batch === null || typeof batch !== 'object' || Array.isArray(batch) || typedArrayName(batch)) {
    throw new TypeError(
      `${ctx}: batch must be an object { inputIds | pixelValues, labels, ... }, got ${describe(batch)}`,
    );
  }
  const b = readOptions(ctx, batch, 'batch', kBatchKeys);
  const o = readOptions(ctx, options, 'options', ['method', 'ablation']);
  const method = readChoice(ctx, o.method, 'options.method', kImportanceMethods);
  const ablation = readChoice(ctx, o.ablation, 'options.ablation', kAblations);
  const config = /** @type {any} */ (model.config);
  const vision = (config.imageSize ?? 0) > 0;
  const key = vision ? 'pixelValues' : 'inputIds';
  if (b[key] === undefined || b[key] === null) {
    throw new TypeError(`${ctx}: batch.${key} is required for arch '${model.config.arch}', got ${b[key]}`);
  }
  const source = readSource(model, ctx, b[key], `batch.${key}`, b, 'batch.');
  const labels = readTensorLike(ctx, b.labels, 'batch.labels', ['Int32Array'], 'an object { data: Int32Array, shape }');
  const raw = withSources(
    model,
    ctx,
    [source],
    [labels],
    (handle, [args], [y]) =>
      method === 0
        ? handle.encoderGradHeadImportance(args, { ptr: y, shape: labels.shape })
        : handle.inputHeadImportance(args, { ptr: y, shape: labels.shape }, ablation),
    method === 0 ? gradientNeeds(model, ctx, source, labels.shape) : null,
  );
  return { importance: perKind(raw, 'importance', 'decoderImportance', 'crossImportance'), loss: raw.loss };
}

/**
 * The options naming one logit of an encoder or encoder–decoder, and its inputs' options: { position, target }
 * (position: a masked-LM's token, a seq2seq-lm's decoder position; classification: 0 or absent).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} options
 * @param {string[]} extra the other options' names
 */
function readEncoderLogit(model, ctx, options, extra) {
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { position, target } are required, got ${describe(options)}`);
  }
  const keys = ['position', 'target', 'tokenTypeIds', 'decoderInputIds', ...extra];
  const o = readOptions(ctx, options, 'options', keys);
  const c = /** @type {any} */ (model.config);
  const perToken = model.task === 'masked-lm' || model.task === 'seq2seq-lm';
  if (!perToken && model.task !== 'sequence-classification' && model.task !== 'image-classification') {
    throw new TypeError(`${ctx}: needs a model with a head (task '${model.task}' has no logits)`);
  }
  if (model.kind === 'encoder-decoder' && (o.decoderInputIds === undefined || o.decoderInputIds === null)) {
    throw new TypeError(
      `${ctx}: options.decoderInputIds { data: Int32Array, shape: [1, T] } is required for an encoder–decoder`,
    );
  }
  return { o, perToken, classes: perToken ? c.vocabSize : c.numLabels };
}

/**
 * position and target checked against the logits' extent: T (the tokens', or the decoder's) and V, or 1 and
 * numLabels.
 * @param {string} ctx
 * @param {any} o
 * @param {{ perToken: boolean, classes: number }} logit
 * @param {number} t_len
 */
function readPositionTarget(ctx, o, { perToken, classes }, t_len) {
  const position = perToken
    ? readIndex(ctx, o.position, 'options.position', t_len, 'a position of the logits')
    : readIndex(ctx, o.position ?? 0, 'options.position', 1, "a classifier's logits have one position");
  const target = readIndex(ctx, o.target, 'options.target', classes, perToken ? 'a token id' : 'a class');
  return { position, target };
}

/**
 * One input of batch 1 for attribution and patching: [1, ...] (a RangeError naming it otherwise).
 * @param {string} ctx
 * @param {any} source
 * @param {string} name
 */
function checkOne(ctx, source, name) {
  const shape = (source.t ?? source.pixels).shape;
  if (shape[0] !== 1) {
    throw new RangeError(`${ctx}: ${name}.shape must have batch size 1, got [${shape.join(', ')}]`);
  }
}

/** @param {any} source @param {Transformer} model */
const logitLength = (source, model) => (model.kind === 'encoder-decoder' ? source.decoder : source.t)?.shape[1] ?? 1;

/**
 * Attribution of one logit of an encoder or encoder–decoder (docs/api.md) by gradient × input, the gradient's norm
 * (on the encoder's block-0 input) or occlusion: Tensor (T), (S), or (G, G) for a ViT.
 * @param {Transformer} model
 * @param {unknown} inputs token ids (1, T) (an encoder–decoder's source ids (1, S)) or pixelValues (1, C, H, W)
 * @param {unknown} options { position, target, method, tokenTypeIds?, decoderInputIds? }
 */
export function encoderAttribution(model, inputs, options) {
  const ctx = 'model.attribution';
  model[kUsable](ctx);
  const logit = readEncoderLogit(model, ctx, options, ['method']);
  const method = readChoice(ctx, logit.o.method, 'options.method', kAttributionMethods);
  const name = /** @type {any} */ (model.config).imageSize ? 'pixelValues' : 'tokens';
  const source = readSource(model, ctx, inputs, name, logit.o, 'options.');
  checkOne(ctx, source, name);
  const { position, target } = readPositionTarget(ctx, logit.o, logit, logitLength(source, model));
  const needs = method === 2 ? null : gradientNeeds(model, ctx, source, source.decoder?.shape ?? []);
  const raw = withSources(
    model,
    ctx,
    [source],
    [],
    (handle, [args]) => handle.inputAttribution(args, position, target, method),
    needs,
  );
  return toTensor(raw);
}

/**
 * Activation patching of an encoder or encoder–decoder (docs/api.md): { effect, cleanLogit, corruptedLogit }, effect
 * (L, H) or { encoder, decoder, cross }.
 * @param {Transformer} model
 * @param {unknown} clean token ids (1, T) (an encoder–decoder's source ids) or pixelValues (1, C, H, W)
 * @param {unknown} corrupted the same shape
 * @param {unknown} options { position, target, tokenTypeIds?, decoderInputIds? } (both inputs' options)
 */
export function encoderPatchHeads(model, clean, corrupted, options) {
  const ctx = 'model.patchHeads';
  model[kUsable](ctx);
  const logit = readEncoderLogit(model, ctx, options, []);
  const a = readSource(model, ctx, clean, 'clean', logit.o, 'options.');
  const b = readSource(model, ctx, corrupted, 'corrupted', logit.o, 'options.');
  checkOne(ctx, a, 'clean');
  const [sa, sb] = [(a.t ?? a.pixels).shape, (b.t ?? b.pixels).shape];
  if (sa.join() !== sb.join()) {
    throw new RangeError(`${ctx}: corrupted.shape must equal clean.shape [${sa.join(', ')}], got [${sb.join(', ')}]`);
  }
  const { position, target } = readPositionTarget(ctx, logit.o, logit, logitLength(a, model));
  const raw = withSources(model, ctx, [a, b], [], (handle, [x, y]) => handle.inputPatchHeads(x, y, position, target));
  return {
    effect: perKind(raw, 'effect', 'decoderEffect', 'crossEffect'),
    cleanLogit: raw.cleanLogit,
    corruptedLogit: raw.corruptedLogit,
  };
}
