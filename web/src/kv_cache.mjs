// @ts-check
// KVCache: the JS side of cpp/bindings/embind.cc's _KVCache and _TransformerKVCache, the keys and values of past
// tokens for decoding with mha.forward(x, x, x, { kvCache }) or model.forward(tokens, { kvCache }). Made by
// mha.createKVCache (multi_head_attention.mjs) or model.createKVCache (transformer.mjs), which own them: disposing
// the owner disposes its caches.

import { kToken } from './core.mjs';
import { kDispose } from './model.mjs';
import { describe, readDim, readOptions } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').RawKVCache} RawKVCache */

/** multi_head_attention.mjs reaches the (checked) handle and the owning module through these keys. */
export const kCacheHandle = Symbol('attnlab.cacheHandle');
export const kCacheOwner = Symbol('attnlab.cacheOwner');

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((/** @type {{ core: Core, handle: RawKVCache }} */ { core, handle }) => {
        // Last resort for a cache that was never disposed: free its memory.
        if (!core.failure) {
          try {
            handle.delete();
          } catch {
            // the module is gone or broken: nothing to free
          }
        }
      })
    : null;

/**
 * createKVCache's options: { batchSize, maxLength }, positive integers.
 * @param {string} ctx
 * @param {unknown} options
 */
export function readCacheOptions(ctx, options) {
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { batchSize, maxLength } are required, got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', ['batchSize', 'maxLength']);
  return { batchSize: readDim(ctx, o.batchSize, 'batchSize'), maxLength: readDim(ctx, o.maxLength, 'maxLength') };
}

export class KVCache {
  #core;
  /** @type {RawKVCache | null} */
  #handle;
  #owner;
  #batchSize;
  #maxLength;
  #onDispose;
  #names;

  /**
   * @param {symbol} token
   * @param {Core} core
   * @param {RawKVCache} handle
   * @param {object} owner the MultiHeadAttention or Transformer that made it
   * @param {{ batchSize: number, maxLength: number }} size
   * @param {() => void} onDispose
   * @param {{ owner: string, factory: string }} [names] the owner's class and the factory, for messages
   */
  constructor(
    token,
    core,
    handle,
    owner,
    { batchSize, maxLength },
    onDispose,
    names = { owner: 'MultiHeadAttention', factory: 'mha.createKVCache' },
  ) {
    if (token !== kToken) {
      throw new TypeError('use mha.createKVCache({ batchSize, maxLength }) to create one');
    }
    this.#core = core;
    this.#handle = handle;
    this.#owner = owner;
    this.#batchSize = batchSize;
    this.#maxLength = maxLength;
    this.#onDispose = onDispose;
    this.#names = names;
    registry?.register(this, { core, handle }, this);
  }

  /**
   * The handle, or an Error when this cache (or its module) has been disposed.
   * @param {string} ctx
   * @returns {RawKVCache}
   */
  [kCacheHandle](ctx) {
    if (!this.#handle) {
      throw new Error(
        `${ctx}: this KVCache has been disposed (directly or with its ${this.#names.owner}); ` +
          `create a new one with ${this.#names.factory}()`,
      );
    }
    this.#core.checkUsable(ctx);
    return this.#handle;
  }

  get [kCacheOwner]() {
    return this.#owner;
  }

  /** Tokens cached so far (0 … maxLength). */
  get length() {
    const ctx = 'kvCache.length';
    const handle = this[kCacheHandle](ctx);
    return this.#core.call(ctx, () => handle.length());
  }

  get batchSize() {
    return this.#batchSize;
  }

  get maxLength() {
    return this.#maxLength;
  }

  /** Forgets every cached token (length 0); keeps the memory. */
  reset() {
    const ctx = 'kvCache.reset';
    const handle = this[kCacheHandle](ctx);
    this.#core.call(ctx, () => handle.reset());
  }

  /** Frees the cache's wasm memory. Idempotent; any other use afterwards throws an Error. */
  dispose() {
    const handle = this.#handle;
    if (!handle) return;
    this.#handle = null;
    registry?.unregister(this);
    this.#onDispose();
    if (!this.#core.failure) handle.delete();
  }

  [kDispose]() {
    this.dispose();
  }

  get [Symbol.toStringTag]() {
    return 'KVCache';
  }
}
