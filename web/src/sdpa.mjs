// @ts-check
// scaledDotProductAttention and its backward: the JS side of cpp/bindings/embind.cc's _sdpa / _sdpaBackward.
// The modern options (enableGQA, kvLengths, window, softcap, returnScores, pastKey/pastValue) are read by
// sdpa_options.mjs.

import { toGradients, toResult } from './core.mjs';
import { readModernOptions } from './sdpa_options.mjs';
import { readBool, readFiniteNumber, readMask, readOptions, readTensor } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */

const kCommonOptions = ['attnMask', 'isCausal', 'scale', 'enableGQA', 'kvLengths', 'window', 'softcap'];
const kSdpaOptions = [...kCommonOptions, 'needWeights', 'returnScores', 'pastKey', 'pastValue'];
const kSdpaBackwardOptions = [...kCommonOptions, 'pastKey', 'pastValue'];

const kTensorNames = ['query', 'key', 'value', 'gradOutput'];

/**
 * The checked inputs and the raw argument struct (pointers still 0) of a forward or backward call. Tensors are
 * read before options, in argument order. `buffers` lists what goes to the heap, in the order `place` fills.
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
  const scale = readFiniteNumber(ctx, o.scale, 'scale');
  if (scale !== undefined && !Number.isFinite(Math.fround(scale))) {
    throw new RangeError(`${ctx}: scale must fit in a float32 (|scale| < 3.4e38), got ${scale}`);
  }
  const needWeights = known.includes('needWeights') ? readBool(ctx, o.needWeights, 'needWeights', true) : false;
  const m = readModernOptions(ctx, o, known, q, k);
  const M = core.Module;
  /** @type {import('../../cpp/bindings/embind').SdpaCallArgs} */
  const args = {
    query: core.tensorArg(q),
    key: core.tensorArg(k),
    value: core.tensorArg(v),
    attnMask: core.maskArg(attnMask),
    isCausal: m.isCausal,
    causalAlign: m.align === 'lower-right' ? M._CausalAlign.LowerRight : M._CausalAlign.UpperLeft,
    hasScale: scale !== undefined,
    scale: scale ?? 0,
    needWeights,
    enableGQA: m.enableGQA,
    kvLengths: m.kvLengths ? core.tensorArg(m.kvLengths) : { ptr: 0, shape: [] },
    windowLeft: m.window[0],
    windowRight: m.window[1],
    softcap: m.softcap,
    returnScores:
      M._ScoresStage[{ scaled: 'Scaled', softcapped: 'Softcapped', masked: 'Masked' }[m.returnScores] ?? 'None'],
    pastKey: m.pastKey ? core.tensorArg(m.pastKey) : { ptr: 0, shape: [] },
    pastValue: m.pastValue ? core.tensorArg(m.pastValue) : { ptr: 0, shape: [] },
  };
  const buffers = [q, k, v, attnMask, m.kvLengths, m.pastKey, m.pastValue];
  /** Sets the struct's pointers from withHeap's (in the order of `buffers`). @param {number[]} p */
  const place = (p) => {
    [args.query.ptr, args.key.ptr, args.value.ptr, args.attnMask.ptr, args.kvLengths.ptr] = p;
    [args.pastKey.ptr, args.pastValue.ptr] = p.slice(5);
  };
  return { g, args, buffers, place, hasPast: m.pastKey !== null };
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
  const { args, buffers, place } = readSdpaCall(core, ctx, [query, key, value], options, kSdpaOptions);
  core.checkFits(ctx, 'query, key, value', buffers, () => M._sdpaMemory(args));
  const raw = core.withHeap(ctx, 'query, key, value, attnMask, kvLengths and the past', buffers, (p) => {
    place(p);
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
  const call = readSdpaCall(core, ctx, [query, key, value, gradOutput], options, kSdpaBackwardOptions);
  const { g, args, buffers, place } = call;
  const gradArg = core.tensorArg(g);
  const inputs = [...buffers, g];
  core.checkFits(ctx, 'query, key, value, gradOutput', inputs, () => M._sdpaBackwardMemory(args));
  const raw = core.withHeap(ctx, 'query, key, value, gradOutput, attnMask, kvLengths and the past', inputs, (p) => {
    place(p);
    gradArg.ptr = p[buffers.length];
    return M._sdpaBackward(args, gradArg);
  });
  return toGradients(raw);
}
