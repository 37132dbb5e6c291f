// @ts-check
// TinyTransformer, the training demo's model: the JS side of cpp/bindings/embind.cc's _TinyTransformer.

import { kToken, toTensor, toTensorRecord } from './core.mjs';
import { Model, kCore, kParameterNames, kUsable, wrapHandle } from './model.mjs';
import {
  describe,
  readBool,
  readDim,
  readFiniteNumber,
  readOptions,
  readSafeInteger,
  readTokens,
} from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').RawTinyTransformer} RawTinyTransformer */

const kDefaultSeed = 0; // the initialisation is reproducible
const kDefaultLr = 1e-2; // trainStep's learning rate, as in the torch-grad train_step fixtures
const kTinyOptions = ['vocabSize', 'embedDim', 'numHeads', 'causal', 'seed'];
const kTrainStepOptions = ['lr'];

/** @extends {Model<RawTinyTransformer>} */
class TinyTransformer extends Model {
  /**
   * @param {symbol} token
   * @param {Core} core
   * @param {RawTinyTransformer} handle
   */
  constructor(token, core, handle) {
    super(token, core, handle, { className: 'TinyTransformer', factory: 'createTinyTransformer', prefix: 'model' });
  }

  /**
   * Logits (B, T, vocabSize) and the attention weights of every head (B, H, T, T).
   * @param {unknown} tokens
   */
  forward(tokens) {
    const ctx = 'model.forward';
    const core = this[kCore];
    this[kUsable](ctx);
    const t = readTokens(ctx, tokens, 'tokens');
    const tokensArg = core.tensorArg(t);
    core.checkFits(ctx, 'tokens', [t], () => this[kUsable](ctx).stepMemory(tokensArg, false));
    const raw = core.withHeap(ctx, 'tokens', [t], (p) => {
      tokensArg.ptr = p[0];
      return this[kUsable](ctx).forward(tokensArg);
    });
    return { logits: toTensor(raw.logits), weights: toTensor(raw.weights) };
  }

  /**
   * The mean cross-entropy of the logits against `targets`, and its gradient for every parameter.
   * @param {unknown} tokens
   * @param {unknown} targets
   */
  lossAndGrad(tokens, targets) {
    const ctx = 'model.lossAndGrad';
    this[kUsable](ctx);
    const batch = this.#readBatch(ctx, tokens, targets);
    const raw = this.#withBatch(ctx, batch, (handle, t, y) => handle.lossAndGrad(t, y));
    return { loss: Number(raw.loss), gradParams: toTensorRecord(raw.gradParams, this[kParameterNames]) };
  }

  /**
   * One Adam step (PyTorch's update rule; the optimizer state lives in the model); the loss before the update.
   * @param {unknown} tokens
   * @param {unknown} targets
   * @param {unknown} [options]
   */
  trainStep(tokens, targets, options) {
    const ctx = 'model.trainStep';
    this[kUsable](ctx);
    const batch = this.#readBatch(ctx, tokens, targets);
    const o = readOptions(ctx, options, 'options', kTrainStepOptions);
    const lr = readFiniteNumber(ctx, o.lr, 'lr') ?? kDefaultLr;
    if (!(Math.fround(lr) > 0) || !Number.isFinite(Math.fround(lr))) {
      throw new RangeError(`${ctx}: lr must be a positive number that fits in a float32 (1.5e-45 … 3.4e38), got ${lr}`);
    }
    const loss = this.#withBatch(ctx, batch, (handle, t, y) => handle.trainStep(t, y, lr));
    return { loss: Number(loss) };
  }

  /**
   * Checked tokens and targets of one shape, refused early when a training step on them cannot fit.
   * @param {string} ctx
   * @param {unknown} tokens
   * @param {unknown} targets
   */
  #readBatch(ctx, tokens, targets) {
    const t = readTokens(ctx, tokens, 'tokens');
    const y = readTokens(ctx, targets, 'targets');
    if (y.shape[0] !== t.shape[0] || y.shape[1] !== t.shape[1]) {
      throw new RangeError(
        `${ctx}: targets.shape must equal tokens.shape [${t.shape.join(', ')}], got [${y.shape.join(', ')}]`,
      );
    }
    const core = this[kCore];
    core.checkFits(ctx, 'tokens, targets', [t, y], () => this[kUsable](ctx).stepMemory(core.tensorArg(t), true));
    return [t, y];
  }

  /**
   * Copies tokens and targets into wasm memory and runs fn on the handle with their raw structs.
   * @template R
   * @param {string} ctx
   * @param {any[]} batch
   * @param {(handle: RawTinyTransformer, t: import('../../cpp/bindings/embind').TensorArg,
   *          y: import('../../cpp/bindings/embind').TensorArg) => R} fn
   * @returns {R}
   */
  #withBatch(ctx, [t, y], fn) {
    const core = this[kCore];
    return core.withHeap(ctx, 'tokens and targets', [t, y], (p) =>
      fn(this[kUsable](ctx), { ptr: p[0], shape: t.shape }, { ptr: p[1], shape: y.shape }),
    );
  }
}

/**
 * attn.createTinyTransformer(options): the training demo's model (embedding + sinusoidal positions + one MHA
 * without bias + residual + readout), initialised like PyTorch from a fixed seed.
 * @param {Core} core
 * @param {unknown} options
 */
export function createTinyTransformer(core, options) {
  const ctx = 'createTinyTransformer';
  core.checkUsable(ctx);
  if (options === undefined || options === null) {
    throw new TypeError(
      `${ctx}: options { vocabSize, embedDim, numHeads, causal } are required, got ${describe(options)}`,
    );
  }
  const o = readOptions(ctx, options, 'options', kTinyOptions);
  /** @type {import('../../cpp/bindings/embind').TinyTransformerArgs} */
  const args = {
    vocabSize: readDim(ctx, o.vocabSize, 'vocabSize'),
    embedDim: readDim(ctx, o.embedDim, 'embedDim'),
    numHeads: readDim(ctx, o.numHeads, 'numHeads'),
    causal: readBool(ctx, o.causal, 'causal', false),
    seed: readSafeInteger(ctx, o.seed, 'seed', kDefaultSeed),
  };
  core.checkFits(ctx, 'vocabSize, embedDim', [], () => core.Module._tinyTransformerMemory(args));
  return wrapHandle(
    core,
    ctx,
    () => new core.Module._TinyTransformer(args),
    (handle) => new TinyTransformer(kToken, core, handle),
  );
}
