// @ts-check
// Training: AdamW's arguments, batches and the random-window sampler, and the step loop of model.train, one AdamW
// step (in C++) per step. model.lossAndGrad, model.trainStep and model.train call these; the worker host
// (worker-host.mjs) runs the same loop one step at a time (startTraining), yielding to its messages in between.

import { toTensorRecord } from './core.mjs';
import { decoderOnly } from './encoder.mjs';
import { abortError } from './generation.mjs';
import { Model, kCore, kParameterNames, kUsable } from './model.mjs';
import { createRng } from './rng.mjs';
import { seq2seqLossAndGrad, seq2seqTrainStep } from './seq2seq.mjs';
import {
  describe,
  readDim,
  readOptions,
  readSafeInteger,
  readSignal,
  readTokens,
  typedArrayName,
} from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */
/** @typedef {import('../../cpp/bindings/embind').RawTransformer} RawTransformer */
/** @typedef {import('../../cpp/bindings/embind').AdamWArgs} AdamWArgs */
/** @typedef {import('../../cpp/bindings/embind').TensorArg} TensorArg */

const kTrainStepOptions = ['lr', 'weightDecay', 'betas', 'eps', 'clipGradNorm'];
const kTrainOptions = ['steps', ...kTrainStepOptions, 'onStep', 'signal'];
const kSamplerFields = ['ids', 'batchSize', 'blockLength', 'seed'];
/** The target id that counts for nothing (PyTorch's ignore_index). */
const kIgnoreIndex = -100;

// ---------------------------------------------------------------------------------------------------------------
// Arguments.

/**
 * A number that C++ takes as a float32: finite, > 0 (positive) or >= 0, and still so as a float32.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {boolean} positive
 */
function readFloat32(ctx, value, name, positive) {
  const expected = positive ? 'a finite number > 0' : 'a finite number >= 0';
  if (typeof value !== 'number') throw new TypeError(`${ctx}: ${name} must be ${expected}, got ${describe(value)}`);
  const f = Math.fround(value);
  if (!Number.isFinite(value) || (positive ? !(value > 0) : !(value >= 0))) {
    throw new RangeError(`${ctx}: ${name} must be ${expected}, got ${value}`);
  }
  if (!Number.isFinite(f) || (positive && f === 0)) {
    throw new RangeError(`${ctx}: ${name} must be ${expected} as a float32, got ${value} (${f} as a float32)`);
  }
  return value;
}

/**
 * trainStep's options (read once by readOptions) → the raw AdamW struct: lr required; weightDecay 0.01,
 * betas [0.9, 0.999], eps 1e-8 and no clipping by default (torch.optim.AdamW's defaults, clip_grad_norm_ off).
 * @param {string} ctx
 * @param {Record<string, any>} o
 * @returns {AdamWArgs}
 */
function readAdamW(ctx, o) {
  if (o.lr === undefined || o.lr === null) {
    throw new TypeError(`${ctx}: lr is required (the learning rate, a finite number > 0)`);
  }
  const [beta1, beta2] = readBetas(ctx, o.betas);
  const clip = o.clipGradNorm;
  return {
    lr: readFloat32(ctx, o.lr, 'lr', true),
    weightDecay: readFloat32(ctx, o.weightDecay ?? 0.01, 'weightDecay', false),
    beta1,
    beta2,
    eps: readFloat32(ctx, o.eps ?? 1e-8, 'eps', false),
    clipGradNorm: clip === undefined || clip === null ? 0 : readFloat32(ctx, clip, 'clipGradNorm', true),
  };
}

/**
 * AdamW's betas: [beta1, beta2], each in [0, 1) (also as a float32); [0.9, 0.999] by default.
 * @param {string} ctx
 * @param {unknown} value
 * @returns {[number, number]}
 */
function readBetas(ctx, value) {
  if (value === undefined || value === null) return [0.9, 0.999];
  if (!Array.isArray(value)) {
    throw new TypeError(`${ctx}: betas must be an array [beta1, beta2] of numbers in [0, 1), got ${describe(value)}`);
  }
  const length = value.length;
  if (length !== 2) {
    throw new RangeError(`${ctx}: betas must be [beta1, beta2] (2 numbers in [0, 1)), got ${length} entries`);
  }
  const read = (/** @type {number} */ i) => {
    const b = value[i];
    if (typeof b !== 'number')
      throw new TypeError(`${ctx}: betas[${i}] must be a number in [0, 1), got ${describe(b)}`);
    if (!(b >= 0 && b < 1)) throw new RangeError(`${ctx}: betas[${i}] must be in [0, 1), got ${b}`);
    if (Math.fround(b) >= 1) throw new RangeError(`${ctx}: betas[${i}] must be in [0, 1) as a float32, got ${b} (1)`);
    return b;
  };
  return [read(0), read(1)];
}

/**
 * Every id of an Int32Array in [0, V) (targets: or −100, at least one that is not).
 * @param {string} ctx
 * @param {ArrayLike<number>} data
 * @param {string} name the array's name in messages ('tokens.data', 'data.ids')
 * @param {number} V
 * @param {boolean} isTarget
 */
export function checkIds(ctx, data, name, V, isTarget) {
  let counted = 0;
  for (let i = 0; i < data.length; ++i) {
    const id = data[i];
    if (isTarget && id === kIgnoreIndex) continue;
    if (id < 0 || id >= V) {
      const what = isTarget ? `a target id in [0, ${V}) or ${kIgnoreIndex} (ignored)` : `a token id in [0, ${V})`;
      throw new RangeError(`${ctx}: ${name}[${i}] must be ${what}, got ${id}`);
    }
    ++counted;
  }
  if (isTarget && counted === 0) {
    throw new RangeError(
      `${ctx}: ${name} must hold at least one target that is not ${kIgnoreIndex} (ignored), got none`,
    );
  }
}

/**
 * A training loop checked up front and run one AdamW step per step() (worker-host.mjs yields to its messages
 * between steps; train() runs it through): step() → { step, loss, gradNorm } | null once `steps` are done;
 * result() → the losses and gradient norms so far.
 * @typedef {{ step: () => ({ step: number, loss: number, gradNorm: number } | null),
 *   result: () => { losses: Float32Array, gradNorms: Float32Array }, onStep: Function | null, signal: any }} Training
 */

/** A checked batch: tokens and targets (validate.mjs's buffers) of one shape. @typedef {{ t: any, y: any }} Batch */

// ---------------------------------------------------------------------------------------------------------------
// The calls and the step loop.

/**
 * trainStep's options, required (lr has no default), as the raw AdamW struct.
 * @param {string} ctx
 * @param {unknown} options
 */
function readStepOptions(ctx, options) {
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { lr, … } are required (lr has no default), got ${describe(options)}`);
  }
  return readAdamW(ctx, readOptions(ctx, options, 'options', kTrainStepOptions));
}

/**
 * The batch object of the batch form (encoder–decoders: lossAndGrad(batch), trainStep(batch, options)); a value
 * in the next argument's place means the decoders' (tokens, targets) form was used.
 * @param {string} ctx
 * @param {unknown} batch
 * @param {unknown} extra
 */
function oneBatch(ctx, batch, extra) {
  if (extra !== undefined) {
    throw new TypeError(
      `${ctx}: an encoder–decoder takes one batch { inputIds, labels, … } (then trainStep's options), ` +
        `got an extra argument ${describe(extra)}`,
    );
  }
  return batch;
}

/**
 * The mean cross-entropy of the logits of `tokens` against `targets` (−100 ignored) and its gradient for every
 * parameter, under stateDict()'s names.
 * @param {Transformer} model
 * @param {unknown} tokens { data: Int32Array, shape: [B, T] }
 * @param {unknown} targets { data: Int32Array, shape: [B, T] }
 */
export function lossAndGrad(model, tokens, targets) {
  const ctx = 'model.lossAndGrad';
  model[kUsable](ctx);
  if (model.kind === 'encoder-decoder') return seq2seqLossAndGrad(model, ctx, oneBatch(ctx, tokens, targets));
  decoderOnly(model, ctx);
  const batch = readBatch(model, ctx, tokens, targets, '');
  checkTrainFits(model, ctx, batch, kLossAndGradCall);
  const raw = withBatch(model, ctx, batch, (handle, t, y) => handle.lossAndGrad(t, y));
  return { loss: raw.loss, gradParams: toTensorRecord(raw.gradParams, model[kParameterNames]) };
}

/**
 * One torch.optim.AdamW step on this batch (after clip_grad_norm_ when clipGradNorm is given); the moments and
 * the step count live in the model until its parameters are replaced.
 * @param {Transformer} model
 * @param {unknown} tokens
 * @param {unknown} targets
 * @param {unknown} options { lr, weightDecay = 0.01, betas = [0.9, 0.999], eps = 1e-8, clipGradNorm? }
 * @returns {{ loss: number, gradNorm: number }} the loss before the step, the gradients' norm before clipping
 */
export function trainStep(model, tokens, targets, options) {
  const ctx = 'model.trainStep';
  model[kUsable](ctx);
  if (model.kind === 'encoder-decoder') {
    return seq2seqTrainStep(model, ctx, oneBatch(ctx, tokens, options), readStepOptions(ctx, targets));
  }
  decoderOnly(model, ctx);
  const batch = readBatch(model, ctx, tokens, targets, '');
  const adamw = readStepOptions(ctx, options);
  checkTrainFits(model, ctx, batch, kTrainStepCall);
  return adamwStep(model, ctx, batch, adamw);
}

/**
 * trainStep, `steps` times: over `data`, an array of batches { tokens, targets } (in turn, again from the first
 * after the last), or a sampler { ids, batchSize, blockLength, seed } (random windows of a token sequence, the
 * targets the ids after them). onStep({ step, loss, gradNorm }) after each step (false: stop); `signal` is checked
 * before each step. Returns the losses and gradient norms of the steps done.
 * @param {Transformer} model
 * @param {unknown} data
 * @param {unknown} options { steps, lr, …trainStep's options, onStep, signal }
 */
export function train(model, data, options) {
  const ctx = 'model.train';
  const run = startTraining(model, ctx, data, options);
  for (;;) {
    if (run.signal?.aborted) throw abortError(ctx, run.signal);
    const next = run.step();
    if (!next) break;
    if (run.onStep && run.onStep({ ...next }) === false) break;
  }
  return run.result();
}

/**
 * A training loop, every argument checked (every batch's ids, each shape's memory) before the first step.
 * @param {unknown} given a Transformer
 * @param {string} ctx
 * @param {unknown} data
 * @param {unknown} options
 * @returns {Training}
 */
export function startTraining(given, ctx, data, options) {
  if (!(given instanceof Model) || given[Symbol.toStringTag] !== 'Transformer') {
    throw new TypeError(`${ctx}: not a model made by createModel or loadModel`);
  }
  const model = /** @type {Transformer} */ (given);
  model[kUsable](ctx);
  decoderOnly(model, ctx);
  const source = readTrainData(model, ctx, data);
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { steps, lr, … } are required (lr has no default), got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', kTrainOptions);
  let steps = source.steps;
  if (o.steps !== undefined && o.steps !== null) steps = readDim(ctx, o.steps, 'steps', { min: 0 });
  else if (steps === null) throw new TypeError(`${ctx}: steps is required with a sampler (an integer >= 0)`);
  const adamw = readAdamW(ctx, o);
  const onStep = o.onStep ?? null;
  if (onStep !== null && typeof onStep !== 'function') {
    throw new TypeError(`${ctx}: onStep must be a function ({ step, loss, gradNorm }) => …, got ${describe(onStep)}`);
  }
  const signal = readSignal(ctx, o.signal);
  const shapes = new Set();
  for (const batch of source.shapes) {
    const key = batch.t.shape.join(',');
    if (shapes.has(key)) continue;
    shapes.add(key);
    checkTrainFits(model, ctx, batch, kTrainStepCall);
  }
  /** @type {number[]} */
  const losses = [];
  /** @type {number[]} */
  const gradNorms = [];
  return {
    onStep,
    signal,
    step: () => {
      const step = losses.length;
      if (step >= /** @type {number} */ (steps)) return null;
      const { loss, gradNorm } = adamwStep(model, ctx, source.batch(step), adamw);
      losses.push(loss);
      gradNorms.push(gradNorm);
      return { step, loss, gradNorm };
    },
    result: () => ({ losses: Float32Array.from(losses), gradNorms: Float32Array.from(gradNorms) }),
  };
}

/**
 * train()'s data: an array of batches, each checked now, or a sampler drawing `batchSize` windows of
 * `blockLength` ids per step from a seeded generator. `shapes`: a batch of each shape the loop will use.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} data
 * @returns {{ steps: number | null, batch: (step: number) => Batch, shapes: Batch[] }}
 */
function readTrainData(model, ctx, data) {
  const { vocabSize: V, contextLength } = /** @type {any} */ (model.config); // (a text model's)
  if (Array.isArray(data)) {
    if (data.length === 0) throw new RangeError(`${ctx}: data must hold at least one batch { tokens, targets }`);
    const batches = data.map((b, i) => {
      if (b === null || typeof b !== 'object' || Array.isArray(b)) {
        throw new TypeError(`${ctx}: data[${i}] must be a batch { tokens, targets }, got ${describe(b)}`);
      }
      const o = readOptions(ctx, b, `data[${i}]`, ['tokens', 'targets']);
      return readBatch(model, ctx, o.tokens, o.targets, `data[${i}].`);
    });
    return { steps: batches.length, batch: (step) => batches[step % batches.length], shapes: batches };
  }
  if (data === null || typeof data !== 'object' || typedArrayName(data)) {
    throw new TypeError(
      `${ctx}: data must be an array of batches { tokens, targets } or a sampler ` +
        `{ ids, batchSize, blockLength, seed }, got ${describe(data)}`,
    );
  }
  const o = readOptions(ctx, data, 'data', kSamplerFields);
  if (typedArrayName(o.ids) !== 'Int32Array') {
    throw new TypeError(`${ctx}: data.ids must be an Int32Array of token ids, got ${describe(o.ids)}`);
  }
  const ids = Int32Array.from(/** @type {Int32Array} */ (o.ids)); // a snapshot: the caller may change theirs
  checkIds(ctx, ids, 'data.ids', V, false);
  const batchSize = readDim(ctx, o.batchSize, 'data.batchSize');
  const blockLength = readDim(ctx, o.blockLength, 'data.blockLength');
  if (blockLength > contextLength) {
    throw new RangeError(`${ctx}: data.blockLength must be at most contextLength ${contextLength}, got ${blockLength}`);
  }
  if (ids.length < blockLength + 1) {
    throw new RangeError(
      `${ctx}: data.ids must hold at least blockLength + 1 = ${blockLength + 1} ids (a window and the id after ` +
        `it), got ${ids.length}`,
    );
  }
  const random = createRng(readSafeInteger(ctx, o.seed, 'data.seed', 0));
  const starts = ids.length - blockLength; // windows start at 0 … ids.length − blockLength − 1
  const shape = [batchSize, blockLength];
  const draw = (/** @type {boolean} */ sample) => {
    const tokens = new Int32Array(batchSize * blockLength);
    const targets = new Int32Array(batchSize * blockLength);
    for (let b = 0; sample && b < batchSize; ++b) {
      const s = Math.floor(random() * starts);
      tokens.set(ids.subarray(s, s + blockLength), b * blockLength);
      targets.set(ids.subarray(s + 1, s + 1 + blockLength), b * blockLength);
    }
    return {
      t: readTokens(ctx, { data: tokens, shape }, 'tokens'),
      y: readTokens(ctx, { data: targets, shape: shape.slice() }, 'targets'),
    };
  };
  return { steps: null, batch: () => draw(true), shapes: [draw(false)] };
}

/**
 * Checked tokens and targets: Int32Arrays of one shape [B, T], T at most contextLength, every token id in
 * [0, vocabSize), every target in [0, vocabSize) or −100 and at least one that is not.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} tokens
 * @param {unknown} targets
 * @param {string} prefix before the argument names in messages ('data[2].' in train's batches)
 * @returns {Batch}
 */
export function readBatch(model, ctx, tokens, targets, prefix) {
  const { vocabSize: V, contextLength } = /** @type {any} */ (model.config); // (a text model's)
  const t = readTokens(ctx, tokens, `${prefix}tokens`);
  const y = readTokens(ctx, targets, `${prefix}targets`);
  if (y.shape[0] !== t.shape[0] || y.shape[1] !== t.shape[1]) {
    throw new RangeError(
      `${ctx}: ${prefix}targets.shape must equal ${prefix}tokens.shape [${t.shape.join(', ')}], ` +
        `got [${y.shape.join(', ')}]`,
    );
  }
  if (t.shape[1] > contextLength) {
    throw new RangeError(
      `${ctx}: ${prefix}tokens.shape[1] (T) must be at most contextLength ${contextLength}, got ${t.shape[1]}`,
    );
  }
  checkIds(ctx, t.data, `${prefix}tokens.data`, V, false);
  checkIds(ctx, y.data, `${prefix}targets.data`, V, true);
  return { t, y };
}

/** The calls trainMemory sizes: trainStep (gradients and AdamW's moments), lossAndGrad (gradients and their
 * copies), a gradient analysis (headImportance, attribution: no parameter gradient). */
export const kTrainStepCall = 0;
export const kLossAndGradCall = 1;
export const kAnalysisCall = 2;

/**
 * Refuses, before anything is copied, a training call whose activations, logits and training state (what `call`
 * makes: kTrainStepCall, kLossAndGradCall with the gradients' copies, kAnalysisCall) cannot fit in wasm memory.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {Batch} batch
 * @param {0 | 1 | 2} call
 */
export function checkTrainFits(model, ctx, { t, y }, call) {
  const core = model[kCore];
  core.checkFits(ctx, 'tokens, targets', [t, y], () => model[kUsable](ctx).trainMemory(core.tensorArg(t), call));
}

/**
 * One AdamW step on a checked batch.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {Batch} batch
 * @param {AdamWArgs} adamw
 */
function adamwStep(model, ctx, batch, adamw) {
  const { loss, gradNorm } = withBatch(model, ctx, batch, (handle, t, y) => handle.trainStep(t, y, adamw));
  return { loss, gradNorm };
}

/**
 * Copies tokens and targets into wasm memory and runs fn on the handle with their raw structs.
 * @param {Transformer} model
 * @template R
 * @param {string} ctx
 * @param {Batch} batch
 * @param {(handle: RawTransformer, t: TensorArg, y: TensorArg) => R} fn
 * @returns {R}
 */
export function withBatch(model, ctx, { t, y }, fn) {
  return model[kCore].withHeap(ctx, 'tokens and targets', [t, y], (p) =>
    fn(model[kUsable](ctx), { ptr: p[0], shape: t.shape }, { ptr: p[1], shape: y.shape }),
  );
}
