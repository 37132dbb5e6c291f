// @ts-check
// MultiHeadAttention (torch.nn.MultiheadAttention, eval mode, with optional grouped-query heads): the JS side of
// cpp/bindings/embind.cc's _MultiHeadAttention; its KV caches are kv_cache.mjs's.

import { kToken, toGradients, toResult, toTensorRecord } from './core.mjs';
import { KVCache, kCacheHandle, kCacheOwner, readCacheOptions } from './kv_cache.mjs';
import { Model, kCore, kParameterNames, kUsable, wrapHandle } from './model.mjs';
import { describe, readBool, readDim, readMask, readOptions, readSafeInteger, readTensor } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').RawMultiHeadAttention} RawMultiHeadAttention */

const kDefaultSeed = 0; // the initialisation is reproducible
const kMhaOptions = [
  'embedDim',
  'numHeads',
  'numKVHeads',
  'bias',
  'addBiasKV',
  'addZeroAttn',
  'kdim',
  'vdim',
  'batchFirst',
  'seed',
];
const kForwardOptions = ['keyPaddingMask', 'attnMask', 'needWeights', 'averageAttnWeights', 'requiresGrad', 'kvCache'];

/** @extends {Model<RawMultiHeadAttention>} */
class MultiHeadAttention extends Model {
  /** The caches made by createKVCache and not yet disposed: dispose() disposes them too. */
  #caches = new Set();

  /**
   * @param {symbol} token
   * @param {Core} core
   * @param {RawMultiHeadAttention} handle
   */
  constructor(token, core, handle) {
    super(token, core, handle, { className: 'MultiHeadAttention', factory: 'createMultiHeadAttention', prefix: 'mha' });
  }

  /**
   * nn.MultiheadAttention.forward in eval mode; with requiresGrad it keeps what backward() needs.
   * @param {unknown} query
   * @param {unknown} key
   * @param {unknown} value
   * @param {unknown} [options]
   */
  forward(query, key, value, options) {
    const ctx = 'mha.forward';
    const core = this[kCore];
    this[kUsable](ctx);
    const q = readTensor(ctx, query, 'query');
    const k = readTensor(ctx, key, 'key');
    const v = readTensor(ctx, value, 'value');
    const o = readOptions(ctx, options, 'options', kForwardOptions);
    const cache = this.#readCache(ctx, o.kvCache);
    const keyPaddingMask = readMask(ctx, o.keyPaddingMask, 'keyPaddingMask');
    const attnMask = readMask(ctx, o.attnMask, 'attnMask');
    /** @type {import('../../cpp/bindings/embind').MhaForwardArgs} */
    const args = {
      query: core.tensorArg(q),
      key: core.tensorArg(k),
      value: core.tensorArg(v),
      keyPaddingMask: core.maskArg(keyPaddingMask),
      attnMask: core.maskArg(attnMask),
      needWeights: readBool(ctx, o.needWeights, 'needWeights', true),
      averageAttnWeights: readBool(ctx, o.averageAttnWeights, 'averageAttnWeights', true),
      requiresGrad: readBool(ctx, o.requiresGrad, 'requiresGrad', false),
    };
    const inputs = [q, k, v, keyPaddingMask, attnMask];
    // (The cache's handle is looked up again inside each call: a getter of an argument may dispose it meanwhile.)
    const handle = () => this[kUsable](ctx);
    core.checkFits(ctx, 'query, key, value', inputs, () =>
      cache ? handle().forwardCachedMemory(args, cache[kCacheHandle](ctx)) : handle().forwardMemory(args),
    );
    const raw = core.withHeap(ctx, 'query, key, value and masks', inputs, (p) => {
      [args.query.ptr, args.key.ptr, args.value.ptr, args.keyPaddingMask.ptr, args.attnMask.ptr] = p;
      return cache ? handle().forwardCached(args, cache[kCacheHandle](ctx)) : handle().forward(args);
    });
    return toResult(raw, args.needWeights);
  }

  /**
   * options.kvCache: undefined, or a module's KVCache that has not been disposed. Which module's is C++'s check
   * (kv_cache.cc: "expected a cache created by this module's create_kv_cache"); a model's cache is another kind of
   * object (a _TransformerKVCache, not a _KVCache), refused here.
   * @param {string} ctx
   * @param {unknown} value
   * @returns {KVCache | null}
   */
  #readCache(ctx, value) {
    if (value === undefined || value === null) return null;
    if (!(value instanceof KVCache)) {
      throw new TypeError(`${ctx}: kvCache must be a KVCache made by mha.createKVCache(), got ${describe(value)}`);
    }
    value[kCacheHandle](ctx);
    if (!(value[kCacheOwner] instanceof MultiHeadAttention)) {
      throw new RangeError(
        `${ctx}: kvCache: expected a cache made by this module's createKVCache(), got a cache of another module`,
      );
    }
    return value;
  }

  /**
   * An empty KV cache for forward's kvCache option: batchSize items of up to maxLength tokens, allocated now.
   * @param {unknown} options { batchSize, maxLength }
   */
  createKVCache(options) {
    const ctx = 'mha.createKVCache';
    const core = this[kCore];
    this[kUsable](ctx);
    const { batchSize, maxLength } = readCacheOptions(ctx, options);
    core.checkFits(ctx, 'batchSize, maxLength', [], () => this[kUsable](ctx).kvCacheMemory(batchSize, maxLength));
    const raw = core.call(ctx, () => new core.Module._KVCache(this[kUsable](ctx), batchSize, maxLength));
    let cache;
    try {
      cache = new KVCache(kToken, core, raw, this, { batchSize, maxLength }, () => this.#caches.delete(cache));
    } catch (e) {
      raw.delete();
      throw e;
    }
    this.#caches.add(cache);
    return cache;
  }

  /** Frees this module and every KV cache it made (they cannot be used without it). Idempotent. */
  dispose() {
    for (const cache of [...this.#caches]) cache.dispose();
    super.dispose();
  }

  /**
   * Gradients of sum(gradOutput ⊙ output) for the latest forward with requiresGrad (since the last
   * loadStateDict): { gradQuery, gradKey, gradValue, gradParams: { name: Tensor } }.
   * @param {unknown} gradOutput
   */
  backward(gradOutput) {
    const ctx = 'mha.backward';
    const core = this[kCore];
    this[kUsable](ctx);
    const g = readTensor(ctx, gradOutput, 'gradOutput');
    const gradArg = core.tensorArg(g);
    core.checkFits(ctx, 'gradOutput', [g], () => []);
    const raw = core.withHeap(ctx, 'gradOutput', [g], (p) => {
      gradArg.ptr = p[0];
      return this[kUsable](ctx).backward(gradArg);
    });
    return { ...toGradients(raw), gradParams: toTensorRecord(raw.gradParams, this[kParameterNames]) };
  }
}

/**
 * attn.createMultiHeadAttention(options): a torch.nn.MultiheadAttention (eval mode) with PyTorch's default
 * initialisation.
 * @param {Core} core
 * @param {unknown} options
 */
export function createMultiHeadAttention(core, options) {
  const ctx = 'createMultiHeadAttention';
  core.checkUsable(ctx);
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { embedDim, numHeads, … } are required, got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', kMhaOptions);
  const embedDim = readDim(ctx, o.embedDim, 'embedDim');
  /** @type {import('../../cpp/bindings/embind').MhaConfigArgs} */
  const args = {
    embedDim,
    numHeads: readDim(ctx, o.numHeads, 'numHeads'),
    numKVHeads: readDim(ctx, o.numKVHeads, 'numKVHeads', { defaultValue: -1 }),
    bias: readBool(ctx, o.bias, 'bias', true),
    addBiasKV: readBool(ctx, o.addBiasKV, 'addBiasKV', false),
    addZeroAttn: readBool(ctx, o.addZeroAttn, 'addZeroAttn', false),
    kdim: readDim(ctx, o.kdim, 'kdim', { defaultValue: embedDim }),
    vdim: readDim(ctx, o.vdim, 'vdim', { defaultValue: embedDim }),
    batchFirst: readBool(ctx, o.batchFirst, 'batchFirst', false),
    seed: readSafeInteger(ctx, o.seed, 'seed', kDefaultSeed),
  };
  core.checkFits(ctx, 'embedDim, kdim, vdim', [], () => core.Module._multiHeadAttentionMemory(args));
  return wrapHandle(
    core,
    ctx,
    () => new core.Module._MultiHeadAttention(args),
    (handle) => new MultiHeadAttention(kToken, core, handle),
  );
}
