// @ts-check
// Looking past the weights, on a model (docs/api.md): model.headImportance (the head mask's gradient, or the loss
// with each head ablated, by zero or by its mean output) and model.attribution (one logit's gradient × input,
// gradient norm or occlusion over block 0's inputs) and model.patchHeads (activation patching of each head from a
// clean prompt into a corrupted one). The math is C++'s (cpp/src/model/analysis.cc); this file
// checks the arguments and names them.

import { toTensor } from './core.mjs';
import { kCore, kUsable } from './model.mjs';
import { checkIds, checkTrainFits, kAnalysisCall, readBatch, withBatch } from './training.mjs';
import { describe, readOptions, readTokens } from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */

export const kImportanceMethods = ['gradient', 'ablation'];
export const kAblations = ['zero', 'mean'];
export const kAttributionMethods = ['gradient-x-input', 'gradient', 'occlusion'];

/**
 * One of `choices` (a string), `choices[0]` when absent: its index.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {string[]} choices
 */
export function readChoice(ctx, value, name, choices) {
  if (value === undefined || value === null) return 0;
  const expected = choices.map((c) => `'${c}'`).join(' | ');
  if (typeof value !== 'string') throw new TypeError(`${ctx}: ${name} must be ${expected}, got ${describe(value)}`);
  const index = choices.indexOf(value);
  if (index < 0) throw new RangeError(`${ctx}: ${name} must be ${expected}, got '${value}'`);
  return index;
}

/**
 * An integer in [0, end), required.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {number} end
 * @param {string} what what the range is, for the message
 */
export function readIndex(ctx, value, name, end, what) {
  if (typeof value !== 'number') {
    throw new TypeError(`${ctx}: ${name} must be an integer in [0, ${end}) (${what}), got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < 0 || value >= end) {
    throw new RangeError(`${ctx}: ${name} must be an integer in [0, ${end}) (${what}), got ${value}`);
  }
  return value;
}

/**
 * Tokens (1, T), T ≤ contextLength, every id in [0, V).
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} tokens
 * @param {string} name
 */
function readPrompt(model, ctx, tokens, name) {
  const { vocabSize: V, contextLength } = /** @type {any} */ (model.config); // (a text model's)
  const t = readTokens(ctx, tokens, name);
  const T = t.shape[1];
  if (t.shape[0] !== 1) throw new RangeError(`${ctx}: ${name}.shape must be [1, T], got [${t.shape.join(', ')}]`);
  if (T > contextLength) {
    throw new RangeError(`${ctx}: ${name}.shape[1] (T) must be at most contextLength ${contextLength}, got ${T}`);
  }
  checkIds(ctx, t.data, `${name}.data`, V, false);
  return t;
}

/**
 * The options naming one logit, { position, target } (required), and `extra` (attribution's method; patchHeads:
 * none): { position, target, method }, method an index into kAttributionMethods.
 * @param {Transformer} model
 * @param {string} ctx
 * @param {unknown} options
 * @param {number} T
 * @param {string | null} extra
 */
function readLogit(model, ctx, options, T, extra) {
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { position, target } are required, got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', extra ? ['position', 'target', extra] : ['position', 'target']);
  return {
    position: readIndex(ctx, o.position, 'options.position', T, 'a position of the tokens'),
    target: readIndex(ctx, o.target, 'options.target', /** @type {any} */ (model.config).vocabSize, 'a token id'),
    method: readChoice(ctx, o.method, 'options.method', kAttributionMethods),
  };
}

/**
 * Head importance: { importance: (L, H), loss }, loss the mean over rows with a target of each row's mean
 * cross-entropy. method 'gradient': the mean over those rows of |∂loss_b/∂ξ_{l,h}| at ξ = 1 (one backward);
 * 'ablation': the loss with head (l, h) ablated minus the loss (L·H forwards), ablation 'zero' (ξ_{l,h} = 0) or
 * 'mean' (the head's output replaced at every position by its mean over the batch's B·T positions).
 * @param {Transformer} model
 * @param {unknown} batch { tokens, targets } (targets pre-shifted, −100 ignored)
 * @param {unknown} options { method = 'gradient', ablation = 'zero' }
 */
export function headImportance(model, batch, options) {
  const ctx = 'model.headImportance';
  model[kUsable](ctx);
  if (batch === null || typeof batch !== 'object' || Array.isArray(batch)) {
    throw new TypeError(`${ctx}: batch must be an object { tokens, targets }, got ${describe(batch)}`);
  }
  const { tokens, targets } = /** @type {{ tokens?: unknown, targets?: unknown }} */ (batch);
  const checked = readBatch(model, ctx, tokens, targets, 'batch.');
  const o = readOptions(ctx, options, 'options', ['method', 'ablation']);
  const method = readChoice(ctx, o.method, 'options.method', kImportanceMethods);
  if (method === 0 && o.ablation !== undefined && o.ablation !== null) {
    throw new RangeError(`${ctx}: options.ablation applies to method 'ablation' only, got method 'gradient'`);
  }
  const ablation = readChoice(ctx, o.ablation, 'options.ablation', kAblations);
  checkTrainFits(model, ctx, checked, kAnalysisCall);
  const raw = withBatch(model, ctx, checked, (handle, t, y) => handle.headImportance(t, y, method, ablation));
  return { importance: toTensor(raw.importance), loss: raw.loss };
}

/**
 * Attribution of the logit of id `target` at `position` to each position j's block-0 input e_j (hiddenStates[0]):
 * Tensor (T). 'gradient-x-input' Σ ∂logit/∂e_j · e_j, 'gradient' ‖∂logit/∂e_j‖₂, 'occlusion' logit − the logit
 * with e_j set to 0. Positions after `position` get 0 (a causal model's logit there does not see them).
 * @param {Transformer} model
 * @param {unknown} tokens { data: Int32Array, shape: [1, T] }
 * @param {unknown} options { position, target, method = 'gradient-x-input' }
 */
export function attribution(model, tokens, options) {
  const ctx = 'model.attribution';
  model[kUsable](ctx);
  const t = readPrompt(model, ctx, tokens, 'tokens');
  const { position, target, method } = readLogit(model, ctx, options, t.shape[1], 'method');
  const core = model[kCore];
  core.checkFits(ctx, 'tokens', [t], () => model[kUsable](ctx).trainMemory(core.tensorArg(t), kAnalysisCall));
  const raw = core.withHeap(ctx, 'tokens', [t], (p) =>
    model[kUsable](ctx).attribution({ ptr: p[0], shape: t.shape }, position, target, method),
  );
  return toTensor(raw);
}

/**
 * Activation patching: for each head (l, h), the logit of id `target` at `position` of a forward of `corrupted` with
 * head (l, h)'s output (every position) taken from a forward of `clean`, minus the corrupted forward's logit:
 * { effect: (L, H), cleanLogit, corruptedLogit }.
 * @param {Transformer} model
 * @param {unknown} clean { data: Int32Array, shape: [1, T] }
 * @param {unknown} corrupted the same shape
 * @param {unknown} options { position, target }
 */
export function patchHeads(model, clean, corrupted, options) {
  const ctx = 'model.patchHeads';
  model[kUsable](ctx);
  const a = readPrompt(model, ctx, clean, 'clean');
  const b = readPrompt(model, ctx, corrupted, 'corrupted');
  if (b.shape[1] !== a.shape[1]) {
    throw new RangeError(`${ctx}: corrupted.shape must equal clean.shape [1, ${a.shape[1]}], got [1, ${b.shape[1]}]`);
  }
  const { position, target } = readLogit(model, ctx, options, a.shape[1], null);
  const core = model[kCore];
  core.checkFits(ctx, 'clean, corrupted', [a, b], () =>
    model[kUsable](ctx).trainMemory(core.tensorArg(a), kAnalysisCall),
  );
  const raw = core.withHeap(ctx, 'clean, corrupted', [a, b], (p) =>
    model[kUsable](ctx).patchHeads({ ptr: p[0], shape: a.shape }, { ptr: p[1], shape: b.shape }, position, target),
  );
  return { effect: toTensor(raw.effect), cleanLogit: raw.cleanLogit, corruptedLogit: raw.corruptedLogit };
}
