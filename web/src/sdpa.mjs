// @ts-check
// scaledDotProductAttention and its backward: the JS side of cpp/bindings/embind.cc's _sdpa / _sdpaBackward.

import { toGradients, toResult } from './core.mjs';
import { readBool, readFiniteNumber, readMask, readOptions, readTensor } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */

const kSdpaOptions = ['attnMask', 'isCausal', 'scale', 'needWeights'];
const kSdpaBackwardOptions = ['attnMask', 'isCausal', 'scale'];

const kTensorNames = ['query', 'key', 'value', 'gradOutput'];

/**
 * The checked inputs and the raw argument struct (pointers still 0) of a forward or backward call. Tensors are
 * read before options, in argument order.
 * @param {Core} core
 * @param {string} ctx
 * @param {unknown[]} tensors query, key, value[, gradOutput]
 * @param {unknown} options
 * @param {string[]} known the option names this call accepts
 */
function readSdpaCall(core, ctx, tensors, options, known) {
  core.checkUsable(ctx);
  const [q, k, v, g] = tensors.map((t, i) => readTensor(ctx, t, kTensorNames[i]));
  const o = readOptions(ctx, options, 'options', known);
  const attnMask = readMask(ctx, o.attnMask, 'attnMask');
  const isCausal = readBool(ctx, o.isCausal, 'isCausal', false);
  const scale = readFiniteNumber(ctx, o.scale, 'scale');
  if (scale !== undefined && !Number.isFinite(Math.fround(scale))) {
    throw new RangeError(`${ctx}: scale must fit in a float32 (|scale| < 3.4e38), got ${scale}`);
  }
  const needWeights = known.includes('needWeights') ? readBool(ctx, o.needWeights, 'needWeights', true) : false;
  /** @type {import('../../cpp/bindings/embind').SdpaArgs} */
  const args = {
    query: core.tensorArg(q),
    key: core.tensorArg(k),
    value: core.tensorArg(v),
    attnMask: core.maskArg(attnMask),
    isCausal,
    hasScale: scale !== undefined,
    scale: scale ?? 0,
    needWeights,
  };
  return { q, k, v, g, attnMask, args };
}

/**
 * softmax(Q Kᵀ · scale + mask) V.
 * @param {Core} core
 * @param {unknown} query
 * @param {unknown} key
 * @param {unknown} value
 * @param {unknown} options
 */
export function scaledDotProductAttention(core, query, key, value, options) {
  const ctx = 'scaledDotProductAttention';
  const M = core.Module;
  const { q, k, v, attnMask, args } = readSdpaCall(core, ctx, [query, key, value], options, kSdpaOptions);
  core.checkFits(ctx, 'query, key, value', [q, k, v, attnMask], () => M._sdpaMemory(args));
  const raw = core.withHeap(ctx, 'query, key, value and attnMask', [q, k, v, attnMask], (p) => {
    [args.query.ptr, args.key.ptr, args.value.ptr, args.attnMask.ptr] = p;
    return M._sdpa(args);
  });
  return toResult(raw, args.needWeights);
}

/**
 * Gradients of sum(gradOutput ⊙ softmax(Q Kᵀ · scale + mask) V) for query, key and value.
 * @param {Core} core
 * @param {unknown} query
 * @param {unknown} key
 * @param {unknown} value
 * @param {unknown} gradOutput
 * @param {unknown} options
 */
export function scaledDotProductAttentionBackward(core, query, key, value, gradOutput, options) {
  const ctx = 'scaledDotProductAttentionBackward';
  const M = core.Module;
  const { q, k, v, g, attnMask, args } = readSdpaCall(
    core,
    ctx,
    [query, key, value, gradOutput],
    options,
    kSdpaBackwardOptions,
  );
  const gradArg = core.tensorArg(g);
  core.checkFits(ctx, 'query, key, value, gradOutput', [q, k, v, g, attnMask], () => M._sdpaBackwardMemory(args));
  const raw = core.withHeap(ctx, 'query, key, value, gradOutput and attnMask', [q, k, v, g, attnMask], (p) => {
    [args.query.ptr, args.key.ptr, args.value.ptr, gradArg.ptr, args.attnMask.ptr] = p;
    return M._sdpaBackward(args, gradArg);
  });
  return toGradients(raw);
}
