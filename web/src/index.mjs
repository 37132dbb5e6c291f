// attnlab's public JavaScript API (docs/api.md): init(), scaledDotProductAttention, createMultiHeadAttention.
//
// This layer owns every JS-side check (types, lengths, option values, sizes that cannot fit in wasm memory) and
// the marshalling: each input reaches the heap in one bulk copy (`_malloc`, then a FRESH HEAPF32/HEAPU8 view,
// then `.set()`), and is freed in `finally`. No view into wasm memory is ever cached or handed out: every result
// is a JS-owned copy made by the C++ binding. The raw Embind contract is in cpp/bindings/embind.cc; wasm loading
// lives in loader.mjs only.

import { forgetModule, loadModule } from './loader.mjs';
import {
  checkFits,
  describe,
  jsNames,
  readBool,
  readDim,
  readFiniteNumber,
  readMask,
  readOptions,
  readParameter,
  readSafeInteger,
  readTensor,
} from './validate.mjs';
import { version } from './version.mjs';

/** `Symbol.dispose` where the runtime has it, else the well-known fallback that TypeScript's `using` uses too. */
const kDispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : Symbol.for('Symbol.dispose');

const kDefaultSeed = 0; // createMultiHeadAttention's initialisation is reproducible unless `seed` is given
const kToken = Symbol('attnlab.internal');

const kSdpaOptions = ['attnMask', 'isCausal', 'scale', 'needWeights'];
const kMhaOptions = ['embedDim', 'numHeads', 'bias', 'addBiasKV', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst', 'seed'];
const kForwardOptions = ['keyPaddingMask', 'attnMask', 'needWeights', 'averageAttnWeights', 'requiresGrad'];

// ---------------------------------------------------------------------------------------------------------------
// The per-module core: heap marshalling and error translation.

class Core {
  constructor(Module, key) {
    this.Module = Module;
    this.key = key;
    this.failure = null; // set when the module trapped or aborted: then nothing may call it again
  }

  checkUsable(ctx) {
    if (this.failure) {
      throw new Error(
        `${ctx}: this attnlab instance stopped working after an internal failure (${this.failure}); ` +
          'call init() again to get a fresh one',
      );
    }
  }

  /**
   * Copies `buffers` (each { data, tag, bytes } or null) into ONE allocation, 16-byte aligned each, runs
   * fn(pointers) and frees the allocation whatever happens. A null buffer gets pointer 0.
   */
  withHeap(ctx, names, buffers, fn) {
    const M = this.Module;
    const offsets = [];
    let total = 0;
    for (const b of buffers) {
      if (!b) {
        offsets.push(-1);
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
      const heapF32 = M.HEAPF32; // fresh views: _malloc may have grown (and so replaced) the memory
      const heapU8 = M.HEAPU8;
      const pointers = offsets.map((offset, i) => {
        if (offset < 0) return 0;
        const ptr = base + offset;
        const b = buffers[i];
        if (b.tag === 'Uint8Array') heapU8.set(b.data, ptr);
        else heapF32.set(b.data, ptr >>> 2);
        return ptr;
      });
      return this.call(ctx, () => fn(pointers));
    } finally {
      M._free(base);
    }
  }

  /** Calls into the raw module; its errors come back with the caller's name and JS argument spellings. */
  call(ctx, fn) {
    try {
      return fn();
    } catch (e) {
      throw this.translate(ctx, e);
    }
  }

  translate(ctx, e) {
    if (e instanceof RangeError) return new RangeError(`${ctx}: ${jsNames(e.message)}`);
    if (e instanceof TypeError) return new TypeError(`${ctx}: ${jsNames(e.message)}`);
    const isTrap = typeof WebAssembly === 'object' && e instanceof WebAssembly.RuntimeError;
    if (e instanceof Error && !isTrap) {
      // Error from C++ (a std::exception other than invalid_argument/bad_alloc) or an Embind BindingError.
      return new Error(`${ctx}: ${jsNames(e.message)}`);
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
}

function toTensor(data, shape) {
  return { data, shape: Array.from(shape, Number) };
}

function toResult(raw, needWeights) {
  const result = { output: toTensor(raw.output, raw.outputShape) };
  if (needWeights) result.weights = toTensor(raw.weights, raw.weightsShape);
  return result;
}

function product(shape, from = 0, to = shape.length) {
  let p = 1;
  for (let i = from; i < to; ++i) p *= shape[i];
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Scaled dot-product attention.

function sdpaEstimate(q, k, v, needWeights) {
  const parts = [
    ['query', q.bytes],
    ['key', k.bytes],
    ['value', v.bytes],
  ];
  const rq = q.shape.length;
  const rk = k.shape.length;
  const rv = v.shape.length;
  if (rq >= 2 && rk >= 2 && rv >= 1) {
    const batchLq = product(q.shape, 0, rq - 1);
    const lk = k.shape[rk - 2];
    const dv = v.shape[rv - 1];
    parts.push(['output (*batch, Lq, dv)', batchLq * dv * 4]);
    if (needWeights) parts.push(['weights (*batch, Lq, Lk)', batchLq * lk * 4]);
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------------------------
// Multi-head attention.

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry(({ core, handle }) => {
        // Last resort for a module that was never disposed: free its C++ object.
        if (!core.failure) {
          try {
            handle.delete();
          } catch {
            // the module is gone or broken: nothing to free
          }
        }
      })
    : null;

class MultiHeadAttention {
  #core;
  #handle;
  #config;
  #parameterShapes; // Map name → shape, in PyTorch's order

  constructor(token, core, handle, config) {
    if (token !== kToken) throw new TypeError('use attn.createMultiHeadAttention(options) to create one');
    this.#core = core;
    this.#handle = handle;
    this.#config = config;
    this.#parameterShapes = new Map(
      core.call('createMultiHeadAttention', () => handle.parameterShapes()).map(([name, shape]) => [
        name,
        Array.from(shape, Number),
      ]),
    );
    registry?.register(this, { core, handle }, this);
  }

  #usable(ctx) {
    if (!this.#handle) {
      throw new Error(`${ctx}: this MultiHeadAttention has been disposed; create a new one with createMultiHeadAttention()`);
    }
    this.#core.checkUsable(ctx);
    return this.#handle;
  }

  /**
   * Replaces every parameter from a PyTorch-style state dict ({ name: Float32Array | Tensor }).
   */
  loadStateDict(stateDict) {
    const ctx = 'mha.loadStateDict';
    const handle = this.#usable(ctx);
    if (stateDict === null || typeof stateDict !== 'object' || Array.isArray(stateDict)) {
      throw new TypeError(`${ctx}: stateDict must be an object { name: Float32Array | Tensor }, got ${describe(stateDict)}`);
    }
    const entries = [];
    for (const name of Object.keys(stateDict)) {
      const expected = this.#parameterShapes.get(name);
      entries.push([name, readParameter(ctx, stateDict[name], `stateDict[${JSON.stringify(name)}]`, expected)]);
    }
    checkFits(
      ctx,
      'stateDict',
      entries.map(([name, p]) => [name, p.bytes]),
    );
    this.#core.withHeap(
      ctx,
      'stateDict',
      entries.map(([, p]) => p),
      (pointers) => handle.loadStateDict(entries.map(([name, p], i) => [name, pointers[i], p.shape])),
    );
  }

  /** A copy of every parameter: { name: { data: Float32Array, shape } }. */
  stateDict() {
    const ctx = 'mha.stateDict';
    const handle = this.#usable(ctx);
    const list = this.#core.call(ctx, () => handle.stateDict());
    const out = {};
    // PyTorch's order (the raw list may come sorted by name)
    const order = [...this.#parameterShapes.keys()];
    list.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    for (const [name, data, shape] of list) out[name] = toTensor(data, shape);
    return out;
  }

  /** nn.MultiheadAttention.forward in eval mode. */
  forward(query, key, value, options) {
    const ctx = 'mha.forward';
    const handle = this.#usable(ctx);
    const q = readTensor(ctx, query, 'query');
    const k = readTensor(ctx, key, 'key');
    const v = readTensor(ctx, value, 'value');
    const o = readOptions(ctx, options, 'options', kForwardOptions);
    const keyPaddingMask = readMask(ctx, o.keyPaddingMask, 'keyPaddingMask');
    const attnMask = readMask(ctx, o.attnMask, 'attnMask');
    const needWeights = readBool(ctx, o.needWeights, 'needWeights', true);
    const averageAttnWeights = readBool(ctx, o.averageAttnWeights, 'averageAttnWeights', true);
    if (readBool(ctx, o.requiresGrad, 'requiresGrad', false)) {
      throw new Error(`${ctx}: requiresGrad: true is not supported by this build (no backward pass yet)`);
    }
    checkFits(ctx, 'query, key, value', this.#forwardEstimate(q, k, v, keyPaddingMask, attnMask, needWeights));
    const raw = this.#core.withHeap(ctx, 'query, key, value and masks', [q, k, v, keyPaddingMask, attnMask], (p) =>
      handle.forward(
        p[0],
        q.shape,
        p[1],
        k.shape,
        p[2],
        v.shape,
        p[3],
        keyPaddingMask ? keyPaddingMask.shape : [],
        keyPaddingMask ? keyPaddingMask.kind : 0,
        p[4],
        attnMask ? attnMask.shape : [],
        attnMask ? attnMask.kind : 0,
        needWeights,
        averageAttnWeights,
      ),
    );
    return toResult(raw, needWeights);
  }

  #forwardEstimate(q, k, v, keyPaddingMask, attnMask, needWeights) {
    const { embedDim: E, numHeads: H, kdim, vdim, batchFirst, addBiasKV, addZeroAttn } = this.#config;
    const parts = [
      ['query', q.bytes],
      ['key', k.bytes],
      ['value', v.bytes],
      ['keyPaddingMask', keyPaddingMask ? keyPaddingMask.bytes : 0],
      ['attnMask', attnMask ? attnMask.bytes : 0],
    ];
    const rank = q.shape.length;
    if ((rank === 2 || rank === 3) && q.shape[rank - 1] === E && k.shape.at(-1) === kdim && v.shape.at(-1) === vdim) {
      const n = rank === 3 ? q.shape[batchFirst ? 0 : 1] : 1;
      if (n > 0) {
        const nl = q.size / E; // N * L
        const ns = k.size / kdim; // N * S
        const sExtra = ns / n + (addBiasKV ? 1 : 0) + (addZeroAttn ? 1 : 0);
        parts.push(['projected query', nl * E * 4], ['projected key and value', 2 * n * sExtra * E * 4]);
        parts.push(['output', 2 * nl * E * 4]);
        if (needWeights) parts.push(['weights (N, H, L, S\')', H * nl * sExtra * 4]);
      }
    }
    return parts;
  }

  /** Frees the wasm memory of this module. Idempotent; any other call afterwards throws an Error. */
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
    return 'MultiHeadAttention';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The instance returned by init().

class Attnlab {
  #core;

  constructor(token, loaded) {
    if (token !== kToken) throw new TypeError('use init() to get an attnlab instance');
    this.#core = new Core(loaded.Module, loaded.key);
    Object.defineProperty(this, 'variant', { value: loaded.variant, enumerable: true });
    Object.defineProperty(this, 'version', { value: version, enumerable: true });
  }

  /** Current size of this instance's wasm memory, in bytes. */
  memoryBytes() {
    return this.#core.Module.HEAPU8.buffer.byteLength;
  }

  /** softmax(Q Kᵀ · scale + mask) V. */
  scaledDotProductAttention(query, key, value, options) {
    const ctx = 'scaledDotProductAttention';
    const core = this.#core;
    core.checkUsable(ctx);
    const q = readTensor(ctx, query, 'query');
    const k = readTensor(ctx, key, 'key');
    const v = readTensor(ctx, value, 'value');
    const o = readOptions(ctx, options, 'options', kSdpaOptions);
    const attnMask = readMask(ctx, o.attnMask, 'attnMask');
    const isCausal = readBool(ctx, o.isCausal, 'isCausal', false);
    const scale = readFiniteNumber(ctx, o.scale, 'scale');
    if (scale !== undefined && !Number.isFinite(Math.fround(scale))) {
      throw new RangeError(`${ctx}: scale must fit in a float32 (|scale| < 3.4e38), got ${scale}`);
    }
    const needWeights = readBool(ctx, o.needWeights, 'needWeights', true);
    const parts = sdpaEstimate(q, k, v, needWeights);
    if (attnMask) parts.push(['attnMask', attnMask.bytes]);
    checkFits(ctx, 'query, key, value', parts);
    const raw = core.withHeap(ctx, 'query, key, value and attnMask', [q, k, v, attnMask], (p) =>
      core.Module.sdpa(
        p[0],
        q.shape,
        p[1],
        k.shape,
        p[2],
        v.shape,
        p[3],
        attnMask ? attnMask.shape : [],
        attnMask ? attnMask.kind : 0,
        isCausal,
        scale !== undefined,
        scale ?? 0,
        needWeights,
      ),
    );
    return toResult(raw, needWeights);
  }

  /** A torch.nn.MultiheadAttention (eval mode) with PyTorch's default initialisation. */
  createMultiHeadAttention(options) {
    const ctx = 'createMultiHeadAttention';
    const core = this.#core;
    core.checkUsable(ctx);
    if (options === undefined || options === null) {
      throw new TypeError(`${ctx}: options { embedDim, numHeads, … } are required, got ${describe(options)}`);
    }
    const o = readOptions(ctx, options, 'options', kMhaOptions);
    const embedDim = readDim(ctx, o.embedDim, 'embedDim');
    const numHeads = readDim(ctx, o.numHeads, 'numHeads');
    const bias = readBool(ctx, o.bias, 'bias', true);
    const addBiasKV = readBool(ctx, o.addBiasKV, 'addBiasKV', false);
    const addZeroAttn = readBool(ctx, o.addZeroAttn, 'addZeroAttn', false);
    const kdim = readDim(ctx, o.kdim, 'kdim', { defaultValue: embedDim });
    const vdim = readDim(ctx, o.vdim, 'vdim', { defaultValue: embedDim });
    const batchFirst = readBool(ctx, o.batchFirst, 'batchFirst', false);
    const seed = readSafeInteger(ctx, o.seed, 'seed', kDefaultSeed);
    const E = embedDim;
    checkFits(ctx, 'embedDim, kdim, vdim', [
      ['projection weights', (E * E + E * kdim + E * vdim) * 4],
      ['out_proj.weight', E * E * 4],
      ['biases', 6 * E * 4],
    ]);
    const config = { embedDim, numHeads, bias, addBiasKV, addZeroAttn, kdim, vdim, batchFirst };
    const handle = core.call(
      ctx,
      () => new core.Module.MultiHeadAttention(embedDim, numHeads, bias, addBiasKV, addZeroAttn, kdim, vdim, batchFirst, seed),
    );
    try {
      return new MultiHeadAttention(kToken, core, handle, config);
    } catch (e) {
      handle.delete();
      throw e;
    }
  }

  get [Symbol.toStringTag]() {
    return 'Attnlab';
  }
}

const instances = new WeakMap(); // raw Module → Attnlab (so that the same options give the same instance)

/**
 * Loads attnlab's WebAssembly ('auto' picks the SIMD build when the runtime supports it) and resolves to the
 * instance; memoised per variant and .wasm location.
 */
export async function init(options) {
  const loaded = await loadModule(options);
  let instance = instances.get(loaded.Module);
  if (!instance) {
    instance = new Attnlab(kToken, loaded);
    instances.set(loaded.Module, instance);
  }
  return instance;
}
