// @ts-check
// The per-module core of attnlab's JS layer: heap copies in, the raw module's argument structs, JS-owned results
// out, and error translation. The raw module's contract is cpp/bindings/embind.d.ts.
//
// Every input reaches the heap in one bulk copy (`_malloc`, then a FRESH HEAPF32/HEAPU8/HEAP32 view, then
// `.set()`), and is freed in `finally`. No view into wasm memory is ever cached or handed out: every result is a
// JS-owned copy made by the C++ binding.

import { forgetModule } from './loader.mjs';
import { checkFits, checkUnchanged, describe, jsNames } from './validate.mjs';

/** @typedef {import('../../cpp/bindings/embind').RawModule} RawModule */
/** @typedef {import('../../cpp/bindings/embind').RawTensor} RawTensor */
/** @typedef {import('../../cpp/bindings/embind').RawTensorList} RawTensorList */
/** @typedef {import('../../cpp/bindings/embind').RawMemoryNeeds} RawMemoryNeeds */
/** @typedef {import('../../cpp/bindings/embind').TensorArg} TensorArg */
/** @typedef {import('../../cpp/bindings/embind').MaskArg} MaskArg */
/**
 * A checked input (validate.mjs): its data, element tag, byte size and shape.
 * @typedef {{ data: ArrayLike<number>, tag: string, bytes: number, shape: number[], size: number, name: string }} Buffer
 */

/** Passed by the factories of init()'s objects: their constructors refuse to be called from outside. */
export const kToken = Symbol('attnlab.internal');

export class Core {
  /**
   * @param {RawModule} Module
   * @param {string} key the loader's key of this module (forgotten after a failure)
   */
  constructor(Module, key) {
    this.Module = Module;
    this.key = key;
    /** @type {string | null} set when the module trapped or aborted: then nothing may call it again */
    this.failure = null;
    this.maxMemoryBytes = Module._maxMemoryBytes();
  }

  /** @param {string} ctx */
  checkUsable(ctx) {
    if (this.failure) {
      throw new Error(
        `${ctx}: this attnlab instance stopped working after an internal failure (${this.failure}); ` +
          'call init() again to get a fresh one',
      );
    }
  }

  /**
   * Refuses, before anything is copied, a call whose inputs plus what C++ reports it will allocate (`needs`, from
   * one of the raw `…Memory` functions) exceed the module's memory cap.
   * @param {string} ctx
   * @param {string} names the arguments responsible, in JS spelling
   * @param {Array<Buffer | null>} inputs
   * @param {() => RawMemoryNeeds} needs
   */
  checkFits(ctx, names, inputs, needs) {
    /** @type {Array<[string, number]>} */
    const parts = inputs.filter((b) => b !== null).map((b) => [b.name, b.bytes]);
    parts.push(...this.call(ctx, needs));
    checkFits(ctx, names, parts, this.maxMemoryBytes);
  }

  /**
   * Copies `buffers` (null entries allowed) into ONE allocation, 16-byte aligned each, runs fn(pointers) and frees
   * the allocation whatever happens. A null buffer gets pointer 0; buffers with the same array share one copy.
   * @template T
   * @param {string} ctx
   * @param {string} names
   * @param {Array<Buffer | null>} buffers
   * @param {(pointers: number[]) => T} fn
   * @returns {T}
   */
  withHeap(ctx, names, buffers, fn) {
    const M = this.Module;
    for (const b of buffers) if (b) checkUnchanged(ctx, b); // no user code runs from here to the copies
    /** @type {number[]} */
    const offsets = [];
    // The same array passed twice (self-attention: forward(x, x, x)) is copied once: the kernels only read inputs.
    const firsts = buffers.map((b) => (b ? buffers.findIndex((o) => o && o.data === b.data && o.tag === b.tag) : -1));
    let total = 0;
    for (const [i, b] of buffers.entries()) {
      if (!b || firsts[i] < i) {
        offsets.push(b ? offsets[firsts[i]] : -1);
        continue;
      }
      total = (total + 15) & ~15;
      offsets.push(total);
      total += b.bytes;
    }
    const base = M._malloc(Math.max(total, 16)) >>> 0; // >>> 0: addresses above 2 GiB come back negative
    if (base === 0) {
      throw new RangeError(`${ctx}: out of wasm memory: could not allocate ${total} bytes for ${names}`);
    }
    try {
      const { heapF32, heapU8, heap32 } = heapViews(M); // fresh: _malloc may have grown (and so replaced) the memory
      const pointers = offsets.map((offset, i) => {
        const b = buffers[i];
        if (offset < 0 || !b) return 0;
        const ptr = base + offset;
        if (firsts[i] < i) return ptr; // copied already
        if (b.tag === 'Uint8Array') heapU8.set(b.data, ptr);
        else if (b.tag === 'Int32Array')
          heap32.set(b.data, ptr >>> 2); // token ids: never through HEAPF32
        else heapF32.set(b.data, ptr >>> 2);
        return ptr;
      });
      return this.call(ctx, () => fn(pointers));
    } finally {
      M._free(base);
    }
  }

  /**
   * Calls into the raw module; its errors come back with the caller's name and JS argument spellings.
   * @template T
   * @param {string} ctx
   * @param {() => T} fn
   * @returns {T}
   */
  call(ctx, fn) {
    try {
      return fn();
    } catch (e) {
      throw this.translate(ctx, e);
    }
  }

  /**
   * @param {string} ctx
   * @param {unknown} e
   */
  translate(ctx, e) {
    const message = () => {
      // A C++ state error may start with the method's own name ("backward: …"), which ctx already gives.
      // A JS-side error raised inside fn (e.g. a module disposed meanwhile) already starts with ctx.
      const text = jsNames(/** @type {Error} */ (e).message);
      if (text.startsWith(`${ctx}: `)) return text.slice(ctx.length + 2);
      const method = ctx.slice(ctx.lastIndexOf('.') + 1);
      return text.startsWith(`${method}: `) ? text.slice(method.length + 2) : text;
    };
    if (e instanceof RangeError) return new RangeError(`${ctx}: ${message()}`);
    if (e instanceof TypeError) return new TypeError(`${ctx}: ${message()}`);
    const isTrap = typeof WebAssembly === 'object' && e instanceof WebAssembly.RuntimeError;
    if (e instanceof Error && !isTrap) {
      // Error from C++ (a std::exception other than invalid_argument/bad_alloc) or an Embind BindingError.
      return new Error(`${ctx}: ${message()}`);
    }
    // A trap, an abort, or a C++ exception that escaped the binding's guard (it arrives as a number): the module
    // state can no longer be trusted. Stop using it, and let the next init() load a fresh one.
    this.failure = e instanceof Error ? `${e.name}: ${e.message}` : `uncaught ${describe(e)}`;
    forgetModule(this.key);
    return new Error(
      `${ctx}: internal failure in the WebAssembly module (${this.failure}); this instance can no longer be ` +
        'used; call init() again to get a fresh one',
    );
  }

  /**
   * The raw struct of a checked input; its `ptr` is 0 until withHeap has placed it.
   * @param {Buffer} buffer
   * @returns {TensorArg}
   */
  tensorArg(buffer) {
    return { ptr: 0, shape: buffer.shape };
  }

  /**
   * The raw struct of an optional mask: kind Bool for a Uint8Array, Float for a Float32Array, None when absent.
   * @param {Buffer | null} mask
   * @returns {MaskArg}
   */
  maskArg(mask) {
    const kinds = this.Module._MaskKind;
    if (!mask) return { ptr: 0, shape: [], kind: kinds.None };
    return { ptr: 0, shape: mask.shape, kind: mask.tag === 'Uint8Array' ? kinds.Bool : kinds.Float };
  }
}

/**
 * Views of the module's memory as it is now. A single-thread module's HEAP* views are current after any call of
 * it; with threads a worker may have grown the memory, which the glue's views only notice on their next use, so
 * the views are taken from the shared memory's current buffer.
 * @param {RawModule} M
 */
export function heapViews(M) {
  if (!M.wasmMemory || M.HEAPU8.buffer === M.wasmMemory.buffer) {
    return { heapF32: M.HEAPF32, heapU8: M.HEAPU8, heap32: M.HEAP32 };
  }
  const buffer = M.wasmMemory.buffer;
  return { heapF32: new Float32Array(buffer), heapU8: new Uint8Array(buffer), heap32: new Int32Array(buffer) };
}

/**
 * A raw `[Float32Array, shape]` pair as a Tensor.
 * @param {RawTensor} pair
 */
export function toTensor([data, shape]) {
  return { data, shape: Array.from(shape, Number) };
}

/**
 * A raw `{ output, weights?, scores?, presentKey?, presentValue? }` as the API's result (the last three come from
 * SDPA when asked for: returnScores, pastKey/pastValue).
 * @param {import('../../cpp/bindings/embind').RawResult} raw
 * @param {boolean} needWeights
 */
export function toResult(raw, needWeights) {
  /** @type {Record<string, ReturnType<typeof toTensor>> & { output: ReturnType<typeof toTensor> }} */
  const result = { output: toTensor(raw.output) };
  if (needWeights && raw.weights) result.weights = toTensor(raw.weights);
  for (const name of /** @type {const} */ (['scores', 'presentKey', 'presentValue'])) {
    if (raw[name]) result[name] = toTensor(raw[name]);
  }
  return result;
}

/**
 * Raw gradients of query, key and value (and, for SDPA with a past, of pastKey and pastValue) as Tensors.
 * @param {import('../../cpp/bindings/embind').RawGradients} raw
 */
export function toGradients(raw) {
  /** @type {Record<string, ReturnType<typeof toTensor>>} */
  const out = {
    gradQuery: toTensor(raw.gradQuery),
    gradKey: toTensor(raw.gradKey),
    gradValue: toTensor(raw.gradValue),
  };
  if (raw.gradPastKey) out.gradPastKey = toTensor(raw.gradPastKey);
  if (raw.gradPastValue) out.gradPastValue = toTensor(raw.gradPastValue);
  return out;
}

/**
 * A raw `[[name, Float32Array, shape], …]` list as `{ name: Tensor }` in `order` (raw lists come sorted by name).
 * @param {RawTensorList} list
 * @param {string[]} order
 */
export function toTensorRecord(list, order) {
  const rank = new Map(order.map((name, i) => [name, i]));
  /** @param {string} name */
  const at = (name) => rank.get(name) ?? order.length;
  /** @type {Record<string, ReturnType<typeof toTensor>>} */
  const out = {};
  const sorted = Array.from(list).sort((a, b) => at(a[0]) - at(b[0]));
  for (const [name, data, shape] of sorted) out[name] = toTensor([data, shape]);
  return out;
}
