// attnlab's public JavaScript API (docs/api.md): init(), scaledDotProductAttention(Backward),
// createMultiHeadAttention (forward, backward) and createTinyTransformer.
//
// This layer owns every JS-side check (types, lengths, option values, sizes that cannot fit in wasm memory) and
// the marshalling: each input reaches the heap in one bulk copy (`_malloc`, then a FRESH HEAPF32/HEAPU8/HEAP32
// view, then `.set()`), and is freed in `finally`. No view into wasm memory is ever cached or handed out: every
// result is a JS-owned copy made by the C++ binding. The raw Embind contract is in cpp/bindings/embind.cc; wasm loading
// lives in loader.mjs only.

import { forgetModule, loadModule } from './loader.mjs';
import {
  checkFits,
  checkUnchanged,
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
  readTokens,
} from './validate.mjs';
import { version } from './version.mjs';

/** `Symbol.dispose` where the runtime has it, else the well-known fallback that TypeScript's `using` uses too. */
const kDispose = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : Symbol.for('Symbol.dispose');

const kDefaultSeed = 0; // createMultiHeadAttention's and createTinyTransformer's initialisation is reproducible
const kDefaultLr = 1e-2; // trainStep's learning rate, as in the torch-grad train_step fixtures
const kToken = Symbol('attnlab.internal');

const kSdpaOptions = ['attnMask', 'isCausal', 'scale', 'needWeights'];
const kSdpaBackwardOptions = ['attnMask', 'isCausal', 'scale'];
const kMhaOptions = ['embedDim', 'numHeads', 'bias', 'addBiasKV', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst', 'seed'];
const kForwardOptions = ['keyPaddingMask', 'attnMask', 'needWeights', 'averageAttnWeights', 'requiresGrad'];
const kTinyOptions = ['vocabSize', 'embedDim', 'numHeads', 'causal', 'seed'];
const kTrainStepOptions = ['lr'];

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
   * fn(pointers) and frees the allocation whatever happens. A null buffer gets pointer 0; buffers with the same
   * array share one copy.
   */
  withHeap(ctx, names, buffers, fn) {
    const M = this.Module;
    for (const b of buffers) if (b) checkUnchanged(ctx, b); // no user code runs from here to the copies
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
      const heapF32 = M.HEAPF32; // fresh views: _malloc may have grown (and so replaced) the memory
      const heapU8 = M.HEAPU8;
      const heap32 = M.HEAP32;
      const pointers = offsets.map((offset, i) => {
        if (offset < 0) return 0;
        const ptr = base + offset;
        const b = buffers[i];
        if (firsts[i] < i) return ptr; // copied already
        if (b.tag === 'Uint8Array') heapU8.set(b.data, ptr);
        else if (b.tag === 'Int32Array') heap32.set(b.data, ptr >>> 2); // token ids: never through HEAPF32
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
    const message = () => {
      // A C++ state error may start with the method's own name ("backward: …"), which ctx already gives.
      // A JS-side error raised inside fn (e.g. a module disposed meanwhile) already starts with ctx.
      const text = jsNames(e.message);
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
}

function toTensor(data, shape) {
  return { data, shape: Array.from(shape, Number) };
}

function toResult(raw, needWeights) {
  const result = { output: toTensor(raw.output, raw.outputShape) };
  if (needWeights) result.weights = toTensor(raw.weights, raw.weightsShape);
  return result;
}

/** A raw `[Float32Array, shape]` pair as a Tensor. */
function pairToTensor(pair) {
  return toTensor(pair[0], pair[1]);
}

/** A raw `[[name, Float32Array, shape], …]` list as `{ name: Tensor }` in `order` (raw lists come sorted by name). */
function toTensorRecord(list, order) {
  const rank = new Map(order.map((name, i) => [name, i]));
  const at = (name) => rank.get(name) ?? order.length;
  const out = {};
  const sorted = Array.from(list).sort((a, b) => at(a[0]) - at(b[0]));
  for (const [name, data, shape] of sorted) out[name] = toTensor(data, shape);
  return out;
}

function product(shape, from = 0, to = shape.length) {
  let p = 1;
  for (let i = from; i < to; ++i) p *= shape[i];
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// State dicts, shared by MultiHeadAttention and TinyTransformer.

/** The raw `parameterShapes()` as a Map name → shape, in PyTorch's order. */
function parameterShapesOf(ctx, core, handle) {
  const list = core.call(ctx, () => handle.parameterShapes());
  return new Map(list.map(([name, shape]) => [name, Array.from(shape, Number)]));
}

/**
 * Checks `stateDict` ({ name: Float32Array | Tensor }) and loads it in one heap copy into getHandle(), looked up
 * only then: a getter of the dict may have disposed the module.
 */
function loadStateDictInto(ctx, core, getHandle, parameterShapes, stateDict) {
  if (stateDict === null || typeof stateDict !== 'object' || Array.isArray(stateDict) || stateDict instanceof Map) {
    const hint = stateDict instanceof Map ? ' (convert with Object.fromEntries(map))' : '';
    throw new TypeError(
      `${ctx}: stateDict must be an object { name: Float32Array | Tensor }, got ${describe(stateDict)}${hint}`,
    );
  }
  const entries = [];
  for (const name of Object.keys(stateDict)) {
    const expected = parameterShapes.get(name);
    entries.push([name, readParameter(ctx, stateDict[name], `stateDict[${JSON.stringify(name)}]`, expected)]);
  }
  checkFits(
    ctx,
    'stateDict',
    entries.map(([name, p]) => [name, p.bytes]),
  );
  core.withHeap(
    ctx,
    'stateDict',
    entries.map(([, p]) => p),
    (pointers) => getHandle().loadStateDict(entries.map(([name, p], i) => [name, pointers[i], p.shape])),
  );
}

/** A copy of every parameter of `handle`: { name: Tensor }, in PyTorch's order. */
function stateDictOf(ctx, core, handle, parameterShapes) {
  return toTensorRecord(
    core.call(ctx, () => handle.stateDict()),
    [...parameterShapes.keys()],
  );
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

function sdpaBackwardEstimate(q, k, v, g) {
  const parts = [
    ['query', q.bytes],
    ['key', k.bytes],
    ['value', v.bytes],
    ['gradOutput', g.bytes],
    ['gradQuery, gradKey, gradValue', q.bytes + k.bytes + v.bytes],
  ];
  const rq = q.shape.length;
  const rk = k.shape.length;
  if (rq >= 2 && rk >= 2) {
    const batchLq = product(q.shape, 0, rq - 1);
    parts.push(['weights and their gradient (*batch, Lq, Lk)', 2 * batchLq * k.shape[rk - 2] * 4]);
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
    this.#parameterShapes = parameterShapesOf('createMultiHeadAttention', core, handle);
    registry?.register(this, { core, handle }, this);
  }

  // Checked on entry and again inside the heap call: a getter of an argument may dispose the module meanwhile.
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
    this.#usable(ctx);
    loadStateDictInto(ctx, this.#core, () => this.#usable(ctx), this.#parameterShapes, stateDict);
  }

  /** A copy of every parameter: { name: { data: Float32Array, shape } }. */
  stateDict() {
    const ctx = 'mha.stateDict';
    const handle = this.#usable(ctx);
    return stateDictOf(ctx, this.#core, handle, this.#parameterShapes);
  }

  /** nn.MultiheadAttention.forward in eval mode; with requiresGrad it keeps what backward() needs. */
  forward(query, key, value, options) {
    const ctx = 'mha.forward';
    this.#usable(ctx);
    const q = readTensor(ctx, query, 'query');
    const k = readTensor(ctx, key, 'key');
    const v = readTensor(ctx, value, 'value');
    const o = readOptions(ctx, options, 'options', kForwardOptions);
    const keyPaddingMask = readMask(ctx, o.keyPaddingMask, 'keyPaddingMask');
    const attnMask = readMask(ctx, o.attnMask, 'attnMask');
    const needWeights = readBool(ctx, o.needWeights, 'needWeights', true);
    const averageAttnWeights = readBool(ctx, o.averageAttnWeights, 'averageAttnWeights', true);
    const requiresGrad = readBool(ctx, o.requiresGrad, 'requiresGrad', false);
    checkFits(
      ctx,
      'query, key, value',
      this.#forwardEstimate(q, k, v, keyPaddingMask, attnMask, needWeights, requiresGrad),
    );
    const raw = this.#core.withHeap(ctx, 'query, key, value and masks', [q, k, v, keyPaddingMask, attnMask], (p) =>
      this.#usable(ctx).forward(
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
        requiresGrad,
      ),
    );
    return toResult(raw, needWeights);
  }

  /**
   * Gradients of sum(gradOutput ⊙ output) for the latest forward with requiresGrad (since the last
   * loadStateDict): { gradQuery, gradKey, gradValue, gradParams: { name: Tensor } }.
   */
  backward(gradOutput) {
    const ctx = 'mha.backward';
    this.#usable(ctx);
    const g = readTensor(ctx, gradOutput, 'gradOutput');
    checkFits(ctx, 'gradOutput', [['gradOutput', g.bytes]]);
    const raw = this.#core.withHeap(ctx, 'gradOutput', [g], (p) => this.#usable(ctx).backward(p[0], g.shape));
    return {
      gradQuery: pairToTensor(raw.gradQuery),
      gradKey: pairToTensor(raw.gradKey),
      gradValue: pairToTensor(raw.gradValue),
      gradParams: toTensorRecord(raw.gradParams, [...this.#parameterShapes.keys()]),
    };
  }

  #forwardEstimate(q, k, v, keyPaddingMask, attnMask, needWeights, requiresGrad) {
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
        if (needWeights || requiresGrad) parts.push(['weights (N, H, L, S\')', H * nl * sExtra * 4]);
        if (requiresGrad) parts.push(['copies kept for backward', q.bytes + k.bytes + v.bytes + nl * E * 4]);
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
// The tiny transformer of the training demo.

class TinyTransformer {
  #core;
  #handle;
  #config;
  #parameterShapes; // Map name → shape, in PyTorch's order

  constructor(token, core, handle, config) {
    if (token !== kToken) throw new TypeError('use attn.createTinyTransformer(options) to create one');
    this.#core = core;
    this.#handle = handle;
    this.#config = config;
    this.#parameterShapes = parameterShapesOf('createTinyTransformer', core, handle);
    registry?.register(this, { core, handle }, this);
  }

  #usable(ctx) {
    if (!this.#handle) {
      throw new Error(`${ctx}: this TinyTransformer has been disposed; create a new one with createTinyTransformer()`);
    }
    this.#core.checkUsable(ctx);
    return this.#handle;
  }

  /** Replaces every parameter (and resets Adam's state) from a state dict ({ name: Float32Array | Tensor }). */
  loadStateDict(stateDict) {
    const ctx = 'model.loadStateDict';
    this.#usable(ctx);
    loadStateDictInto(ctx, this.#core, () => this.#usable(ctx), this.#parameterShapes, stateDict);
  }

  /** A copy of every parameter: { name: { data: Float32Array, shape } }. */
  stateDict() {
    const ctx = 'model.stateDict';
    const handle = this.#usable(ctx);
    return stateDictOf(ctx, this.#core, handle, this.#parameterShapes);
  }

  /** Logits (B, T, vocabSize) and the attention weights of every head (B, H, T, T). */
  forward(tokens) {
    const ctx = 'model.forward';
    this.#usable(ctx);
    const t = readTokens(ctx, tokens, 'tokens');
    checkFits(ctx, 'tokens', this.#estimate(t, null));
    const raw = this.#core.withHeap(ctx, 'tokens', [t], (p) => this.#usable(ctx).forward(p[0], t.shape));
    return { logits: pairToTensor(raw.logits), weights: pairToTensor(raw.weights) };
  }

  /** The mean cross-entropy of the logits against `targets`, and its gradient for every parameter. */
  lossAndGrad(tokens, targets) {
    const ctx = 'model.lossAndGrad';
    this.#usable(ctx);
    const [t, y] = this.#readBatch(ctx, tokens, targets);
    const raw = this.#core.withHeap(ctx, 'tokens and targets', [t, y], (p) =>
      this.#usable(ctx).lossAndGrad(p[0], t.shape, p[1], y.shape),
    );
    return { loss: Number(raw.loss), gradParams: toTensorRecord(raw.gradParams, [...this.#parameterShapes.keys()]) };
  }

  /** One Adam step (PyTorch's update rule; the optimizer state lives in the model); the loss before the update. */
  trainStep(tokens, targets, options) {
    const ctx = 'model.trainStep';
    this.#usable(ctx);
    const [t, y] = this.#readBatch(ctx, tokens, targets);
    const o = readOptions(ctx, options, 'options', kTrainStepOptions);
    const lr = readFiniteNumber(ctx, o.lr, 'lr') ?? kDefaultLr;
    if (!(Math.fround(lr) > 0) || !Number.isFinite(Math.fround(lr))) {
      throw new RangeError(`${ctx}: lr must be a positive number that fits in a float32 (1.5e-45 … 3.4e38), got ${lr}`);
    }
    const loss = this.#core.withHeap(ctx, 'tokens and targets', [t, y], (p) =>
      this.#usable(ctx).trainStep(p[0], t.shape, p[1], y.shape, lr),
    );
    return { loss: Number(loss) };
  }

  #readBatch(ctx, tokens, targets) {
    const t = readTokens(ctx, tokens, 'tokens');
    const y = readTokens(ctx, targets, 'targets');
    if (y.shape[0] !== t.shape[0] || y.shape[1] !== t.shape[1]) {
      throw new RangeError(
        `${ctx}: targets.shape must equal tokens.shape [${t.shape.join(', ')}], got [${y.shape.join(', ')}]`,
      );
    }
    checkFits(ctx, 'tokens, targets', this.#estimate(t, y));
    return [t, y];
  }

  #estimate(tokens, targets) {
    const { vocabSize: V, embedDim: E, numHeads: H } = this.#config;
    const [B, T] = tokens.shape;
    const grad = targets ? 2 : 1; // a backward pass keeps, and then mirrors, the forward's activations
    return [
      ['tokens', tokens.bytes],
      ['targets', targets ? targets.bytes : 0],
      ['logits (B, T, vocabSize)', grad * B * T * V * 4],
      ['weights (B, H, T, T)', grad * B * H * T * T * 4],
      ['activations (B, T, embedDim)', grad * 8 * B * T * E * 4],
    ];
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
    return 'TinyTransformer';
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

  /** Gradients of sum(gradOutput ⊙ softmax(Q Kᵀ · scale + mask) V) for query, key and value. */
  scaledDotProductAttentionBackward(query, key, value, gradOutput, options) {
    const ctx = 'scaledDotProductAttentionBackward';
    const core = this.#core;
    core.checkUsable(ctx);
    const q = readTensor(ctx, query, 'query');
    const k = readTensor(ctx, key, 'key');
    const v = readTensor(ctx, value, 'value');
    const g = readTensor(ctx, gradOutput, 'gradOutput');
    const o = readOptions(ctx, options, 'options', kSdpaBackwardOptions);
    const attnMask = readMask(ctx, o.attnMask, 'attnMask');
    const isCausal = readBool(ctx, o.isCausal, 'isCausal', false);
    const scale = readFiniteNumber(ctx, o.scale, 'scale');
    if (scale !== undefined && !Number.isFinite(Math.fround(scale))) {
      throw new RangeError(`${ctx}: scale must fit in a float32 (|scale| < 3.4e38), got ${scale}`);
    }
    const parts = sdpaBackwardEstimate(q, k, v, g);
    if (attnMask) parts.push(['attnMask', attnMask.bytes]);
    checkFits(ctx, 'query, key, value, gradOutput', parts);
    const raw = core.withHeap(ctx, 'query, key, value, gradOutput and attnMask', [q, k, v, g, attnMask], (p) =>
      core.Module.sdpaBackward(
        p[0],
        q.shape,
        p[1],
        k.shape,
        p[2],
        v.shape,
        p[3],
        g.shape,
        p[4],
        attnMask ? attnMask.shape : [],
        attnMask ? attnMask.kind : 0,
        isCausal,
        scale !== undefined,
        scale ?? 0,
      ),
    );
    return {
      gradQuery: pairToTensor(raw.gradQuery),
      gradKey: pairToTensor(raw.gradKey),
      gradValue: pairToTensor(raw.gradValue),
    };
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

  /**
   * The training demo's model (embedding + sinusoidal positions + one MHA without bias + residual + readout),
   * initialised like PyTorch from a fixed seed.
   */
  createTinyTransformer(options) {
    const ctx = 'createTinyTransformer';
    const core = this.#core;
    core.checkUsable(ctx);
    if (options === undefined || options === null) {
      throw new TypeError(
        `${ctx}: options { vocabSize, embedDim, numHeads, causal } are required, got ${describe(options)}`,
      );
    }
    const o = readOptions(ctx, options, 'options', kTinyOptions);
    const vocabSize = readDim(ctx, o.vocabSize, 'vocabSize');
    const embedDim = readDim(ctx, o.embedDim, 'embedDim');
    const numHeads = readDim(ctx, o.numHeads, 'numHeads');
    const causal = readBool(ctx, o.causal, 'causal', false);
    const seed = readSafeInteger(ctx, o.seed, 'seed', kDefaultSeed);
    const V = vocabSize;
    const E = embedDim;
    checkFits(ctx, 'vocabSize, embedDim', [
      ['embedding.weight and readout.weight', 2 * V * E * 4],
      ['attn.in_proj_weight and attn.out_proj.weight', 4 * E * E * 4],
      ['readout.bias', V * 4],
    ]);
    const config = { vocabSize, embedDim, numHeads, causal };
    const handle = core.call(ctx, () => new core.Module.TinyTransformer(vocabSize, embedDim, numHeads, causal, seed));
    try {
      return new TinyTransformer(kToken, core, handle, config);
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
