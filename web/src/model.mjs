// @ts-check
// What every model object of the API shares (MultiHeadAttention, TinyTransformer): ownership of one raw binding,
// the usable check, the state dict, dispose, `Symbol.dispose` and the toStringTag.

import { kToken, toTensorRecord } from './core.mjs';
import { describe, readParameter } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').RawModel} RawModel */

/**
 * `Symbol.dispose` where the runtime has it, else the well-known fallback that TypeScript's `using` uses too. Typed
 * as Symbol.dispose (one known key, not any symbol: classes may then have symbol-keyed methods of their own).
 * @type {typeof Symbol.dispose}
 */
export const kDispose =
  typeof Symbol.dispose === 'symbol' ? Symbol.dispose : /** @type {any} */ (Symbol.for('Symbol.dispose'));

/** Subclasses reach the core and the (checked) handle through these keys; users do not see them as methods. */
export const kCore = Symbol('attnlab.core');
export const kUsable = Symbol('attnlab.usable');
export const kParameterNames = Symbol('attnlab.parameterNames');

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((/** @type {{ core: Core, handle: RawModel }} */ { core, handle }) => {
        // Last resort for a model that was never disposed: free its C++ object.
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
 * @template {RawModel} Handle
 */
export class Model {
  #core;
  /** @type {Handle | null} */
  #handle;
  #names;
  /** Map name → shape, in PyTorch's order. */
  #parameterShapes;

  /**
   * @param {symbol} token
   * @param {Core} core
   * @param {Handle} handle
   * @param {{ className: string, factory: string, prefix: string }} names e.g. MultiHeadAttention,
   *   createMultiHeadAttention, 'mha' (the prefix of error contexts: 'mha.forward')
   */
  constructor(token, core, handle, names) {
    if (token !== kToken) throw new TypeError(`use attn.${names.factory}(options) to create one`);
    this.#core = core;
    this.#handle = handle;
    this.#names = names;
    const list = core.call(names.factory, () => handle.parameterShapes());
    this.#parameterShapes = new Map(list.map(([name, shape]) => [name, Array.from(shape, Number)]));
    registry?.register(this, { core, handle }, this);
  }

  /** @returns {Core} */
  get [kCore]() {
    return this.#core;
  }

  /**
   * The handle, or an Error when disposed or broken. Checked on entry and again inside the heap call: a getter of
   * an argument may dispose the model meanwhile.
   * @param {string} ctx
   * @returns {Handle}
   */
  [kUsable](ctx) {
    if (!this.#handle) {
      const { className, factory } = this.#names;
      throw new Error(`${ctx}: this ${className} has been disposed; create a new one with ${factory}()`);
    }
    this.#core.checkUsable(ctx);
    return this.#handle;
  }

  /** The state-dict names in PyTorch's order. */
  get [kParameterNames]() {
    return [...this.#parameterShapes.keys()];
  }

  /**
   * Replaces every parameter from a PyTorch-style state dict ({ name: Float32Array | Tensor }) in one heap copy.
   * @param {Record<string, Float32Array | { data: Float32Array, shape: number[] }>} stateDict
   */
  loadStateDict(stateDict) {
    const ctx = `${this.#names.prefix}.loadStateDict`;
    this[kUsable](ctx);
    if (stateDict === null || typeof stateDict !== 'object' || Array.isArray(stateDict) || stateDict instanceof Map) {
      const hint = stateDict instanceof Map ? ' (convert with Object.fromEntries(map))' : '';
      throw new TypeError(
        `${ctx}: stateDict must be an object { name: Float32Array | Tensor }, got ${describe(stateDict)}${hint}`,
      );
    }
    const entries = Object.keys(stateDict).map((name) => {
      const label = `stateDict[${JSON.stringify(name)}]`;
      return /** @type {[string, any]} */ ([
        name,
        readParameter(ctx, stateDict[name], label, this.#parameterShapes.get(name)),
      ]);
    });
    const buffers = entries.map(([, p]) => p);
    this.#core.checkFits(ctx, 'stateDict', buffers, () => []);
    // The handle is looked up only inside the heap call: a getter of the dict may have disposed the model.
    this.#core.withHeap(ctx, 'stateDict', buffers, (pointers) =>
      this[kUsable](ctx).loadStateDict(entries.map(([name, p], i) => [name, pointers[i], p.shape])),
    );
  }

  /** A copy of every parameter: { name: { data: Float32Array, shape } }, in PyTorch's order. */
  stateDict() {
    const ctx = `${this.#names.prefix}.stateDict`;
    const handle = this[kUsable](ctx);
    return toTensorRecord(
      this.#core.call(ctx, () => handle.stateDict()),
      this[kParameterNames],
    );
  }

  /** Frees the wasm memory of this model. Idempotent; any other call afterwards throws an Error. */
  dispose() {
    const handle = this.#handle;
    if (!handle) return;
    this.#handle = null;
    registry?.unregister(this);
    if (!this.#core.failure) handle.delete();
  }

  [kDispose]() {
    this.dispose();
  }

  get [Symbol.toStringTag]() {
    return this.#names.className;
  }
}

/**
 * A new model object: the raw one (whose C++ constructor validates before it allocates), wrapped; when wrapping
 * fails, the raw object is freed.
 * @template {RawModel} Handle
 * @template T
 * @param {Core} core
 * @param {string} ctx
 * @param {() => Handle} construct
 * @param {(handle: Handle) => T} wrap
 * @returns {T}
 */
export function wrapHandle(core, ctx, construct, wrap) {
  const handle = core.call(ctx, construct);
  try {
    return wrap(handle);
  } catch (e) {
    handle.delete();
    throw e;
  }
}
