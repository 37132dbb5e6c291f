// @ts-check
// Whole decoder-only models: the JS side of cpp/bindings/embind.cc's _Transformer. createModel /
// loadModel (a Hugging Face config.json object, read by model_config.mjs, and readSafetensors' tensors), the
// Transformer class: forward, KV caches (kv_cache.mjs), loading and state dicts with Hugging Face's names. Its
// generate runs generation.mjs's loop (greedy or seeded sampling, in JS); lossAndGrad, trainStep and train run
// training.mjs's (AdamW in C++; train: a loop of steps over given batches or random windows of a token sequence).

import { kToken, toTensor } from './core.mjs';
import {
  decoderOnly,
  encoderResult,
  kEncoderForwardOptions,
  kindOf,
  readInput,
  taskOf,
  withHeads,
} from './encoder.mjs';
import { generate, kRawForward } from './generation.mjs';
import { KVCache, kCacheHandle, kCacheOwner, readCacheOptions } from './kv_cache.mjs';
import { Model, kCore, kUsable, wrapHandle } from './model.mjs';
import { readCreateOptions, readLoadConfig } from './model_config.mjs';
import { isBlob, openSafetensors, unreadBits } from './safetensors.mjs';
import { bitsBuffer, lazyBuffer, piecesOf, storageOf } from './model_storage.mjs';
import { attribution, headImportance, patchHeads } from './model_analysis.mjs';
import { seq2seqForward } from './seq2seq.mjs';
import { lossAndGrad, train, trainStep } from './training.mjs';
import {
  describe,
  readBool,
  readLayers,
  readMask,
  readOptions,
  readParameter,
  readShape,
  readTensor,
  readTokens,
  typedArrayName,
} from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('./model_config.mjs').ModelConfig} ModelConfig */
/** @typedef {import('../../cpp/bindings/embind').RawTransformer} RawTransformer */
/** @typedef {import('../../cpp/bindings/embind').TransformerForwardArgs} TransformerForwardArgs */

const kForwardOptions = [
  'outputAttentions',
  'outputHiddenStates',
  'attentionMask',
  'headMask',
  'kvCache',
  'lastLogitsOnly',
];
/** loadModel's way in to the private loader (this module's own key; nothing else holds it). */
const kLoadTensors = Symbol('attnlab.loadTensors');
/** loadModel's way in to the private loader of a Blob. */
const kLoadBlob = Symbol('attnlab.loadBlob');

/** @extends {Model<RawTransformer>} */
export class Transformer extends Model {
  /** The caches made by createKVCache and not yet disposed: dispose() disposes them too. */
  #caches = new Set();
  /** @type {ModelConfig} */
  #config;
  /** Map parameter name → shape (Hugging Face's names without prefix). */
  #shapes;

  /**
   * @param {symbol} token
   * @param {Core} core
   * @param {RawTransformer} handle
   */
  constructor(token, core, handle) {
    super(token, core, handle, { className: 'Transformer', factory: 'createModel', prefix: 'model' });
    this.#config = Object.freeze(JSON.parse(core.call('createModel', () => handle.config())));
    const list = core.call('createModel', () => handle.parameterShapes());
    this.#shapes = new Map(list.map(([name, shape]) => [name, Array.from(shape, Number)]));
  }

  /** The normalised configuration, with `arch`: createModel(model.config) builds the same architecture. */
  get config() {
    return this.#config;
  }

  /** 'decoder', 'encoder' or 'encoder-decoder' (encoder.mjs). */
  get kind() {
    return kindOf(this.#config);
  }

  /**
   * The head the model computes: 'causal-lm' (decoders), 'base', 'masked-lm', 'sequence-classification',
   * 'image-classification' or 'seq2seq-lm'.
   */
  get task() {
    return taskOf(this.#config);
  }

  /**
   * Logits (an encoder: lastHiddenState, and pooledOutput and logits as its head gives: encoder.mjs; an
   * encoder–decoder: seq2seq.mjs), and on request every (or some) layer's attention weights and the hidden states.
   * @param {unknown} tokens { data: Int32Array, shape: [B, T] }; a vision model's pixelValues { data: Float32Array,
   *   shape: [B, C, H, W] }
   * @param {unknown} [options]
   */
  forward(tokens, options) {
    const ctx = 'model.forward';
    this[kUsable](ctx);
    if (this.kind === 'encoder-decoder') return seq2seqForward(this, ctx, tokens, options);
    const { tokens: t, pixels } = readInput(ctx, tokens, this.#config);
    const encoder = this.kind === 'encoder';
    const o = readOptions(ctx, options, 'options', encoder ? kEncoderForwardOptions : kForwardOptions);
    const types =
      o.tokenTypeIds === undefined || o.tokenTypeIds === null ? null : readTokens(ctx, o.tokenTypeIds, 'tokenTypeIds');
    const layers = readLayers(ctx, o.outputAttentions, 'outputAttentions', this.#config.numLayers);
    const hidden = readBool(ctx, o.outputHiddenStates, 'outputHiddenStates', false);
    const cache = this.#readCache(ctx, o.kvCache);
    const mask = readMask(ctx, o.attentionMask, 'attentionMask');
    if (mask && mask.tag !== 'Uint8Array') {
      throw new TypeError(`${ctx}: attentionMask.data must be a Uint8Array (1 = token, 0 = padding), got ${mask.tag}`);
    }
    const headMask = o.headMask === undefined || o.headMask === null ? null : readTensor(ctx, o.headMask, 'headMask');
    const last = readBool(ctx, o.lastLogitsOnly, 'lastLogitsOnly', false);
    const raw = this[kRawForward](ctx, t, { layers, hidden, mask, headMask, cache, last, types, pixels });
    if (encoder) return encoderResult(raw, layers, hidden);
    /** @type {{ logits: { data: Float32Array, shape: number[] }, attentions?: any[], hiddenStates?: any[] }} */
    const result = { logits: toTensor(raw.logits) };
    if (layers) result.attentions = raw.attentions.map((a) => (a ? toTensor(a) : null));
    if (hidden && raw.hiddenStates) result.hiddenStates = raw.hiddenStates.map(toTensor);
    return result;
  }

  /**
   * One raw forward of checked inputs (forward's, and generation.mjs's for each token).
   * @param {string} ctx
   * @param {any} t checked tokens
   * @param {{ layers: number[] | null, hidden: boolean, mask: any, headMask: any, cache: KVCache | null,
   *   last: boolean, types?: any, pixels?: any, decoder?: any }} o last: the logits of each sequence's last position
   *   only, (B, 1, V); types: an encoder's checked tokenTypeIds; pixels: a vision model's checked pixelValues (then
   *   t is null); decoder: an encoder–decoder's checked { ids, mask, headMask, crossMask } (seq2seq.mjs)
   */
  [kRawForward](ctx, t, { layers, hidden, mask, headMask, cache, last, types = null, pixels = null, decoder = null }) {
    const core = this[kCore];
    const arg = (/** @type {any} */ x) => (x ? core.tensorArg(x) : { ptr: 0, shape: [] });
    const d = { ids: null, mask: null, headMask: null, crossMask: null, ...decoder };
    /** @type {TransformerForwardArgs} */
    const args = {
      // (a vision model's tokens: their shape (B, 1 + N) only, for the memory estimate)
      tokens: pixels ? { ptr: 0, shape: [pixels.shape[0], this.#config.contextLength] } : core.tensorArg(t),
      attentionMask: arg(mask),
      headMask: arg(headMask),
      outputAttentions: layers ?? [],
      outputHiddenStates: hidden,
      lastLogitsOnly: last,
      tokenTypeIds: arg(types),
      pixelValues: arg(pixels),
      decoderInputIds: arg(d.ids),
      decoderAttentionMask: arg(d.mask),
      decoderHeadMask: arg(d.headMask),
      crossAttnHeadMask: arg(d.crossMask),
    };
    const inputs = [t, mask, headMask, types, pixels, d.ids, d.mask, d.headMask, d.crossMask];
    // (The handles are looked up again inside each call: a getter of an argument may dispose them meanwhile.)
    const handle = () => this[kUsable](ctx);
    const rawCache = () => (cache ? cache[kCacheHandle](ctx) : null);
    core.checkFits(ctx, 'tokens', inputs, () => {
      const c = rawCache();
      return handle().forwardMemory(args, c ? c.length() : 0, c !== null);
    });
    return core.withHeap(ctx, 'tokens and masks', inputs, (p) => {
      [args.tokens.ptr, args.attentionMask.ptr, args.headMask.ptr, args.tokenTypeIds.ptr, args.pixelValues.ptr] = p;
      [args.decoderInputIds.ptr, args.decoderAttentionMask.ptr, args.decoderHeadMask.ptr] = p.slice(5);
      args.crossAttnHeadMask.ptr = p[8];
      return handle().forward(args, rawCache());
    });
  }

  /**
   * options.kvCache: undefined, or a model's KVCache that has not been disposed. Which model's is C++'s check
   * (Transformer::Forward: "kvCache: expected a cache made by this model"); a module's cache is another kind of
   * object (a _KVCache, not a _TransformerKVCache), refused here.
   * @param {string} ctx
   * @param {unknown} value
   * @returns {KVCache | null}
   */
  #readCache(ctx, value) {
    if (value === undefined || value === null) return null;
    if (!(value instanceof KVCache)) {
      throw new TypeError(`${ctx}: kvCache must be a KVCache made by model.createKVCache(), got ${describe(value)}`);
    }
    value[kCacheHandle](ctx);
    if (!(value[kCacheOwner] instanceof Transformer)) {
      throw new RangeError(
        `${ctx}: kvCache: expected a cache made by this model's createKVCache(), got a cache of another model or module`,
      );
    }
    return value;
  }

  /**
   * An empty KV cache for forward's kvCache option: batchSize sequences of up to maxLength positions.
   * @param {unknown} options { batchSize, maxLength }
   */
  createKVCache(options) {
    const ctx = 'model.createKVCache';
    const core = this[kCore];
    this[kUsable](ctx);
    if (this.kind !== 'encoder-decoder') decoderOnly(this, ctx); // (an encoder–decoder's: its decoder's positions)
    const { batchSize, maxLength } = readCacheOptions(ctx, options);
    if (maxLength > this.#config.contextLength) {
      throw new RangeError(
        `${ctx}: maxLength must be at most contextLength ${this.#config.contextLength}, got ${maxLength}`,
      );
    }
    core.checkFits(ctx, 'batchSize, maxLength', [], () => this[kUsable](ctx).kvCacheMemory(batchSize, maxLength));
    const raw = core.call(ctx, () => new core.Module._TransformerKVCache(this[kUsable](ctx), batchSize, maxLength));
    /** @type {KVCache} */
    let cache;
    try {
      cache = new KVCache(kToken, core, raw, this, { batchSize, maxLength }, () => this.#caches.delete(cache), {
        owner: 'Transformer',
        factory: 'model.createKVCache',
      });
    } catch (e) {
      raw.delete();
      throw e;
    }
    this.#caches.add(cache);
    return cache;
  }

  /**
   * New ids after `prompt`, one forward per token through a KV cache: greedy at temperature 0, else seeded
   * sampling (generation.mjs). Returns an Int32Array of the new ids.
   * @param {unknown} prompt Int32Array
   * @param {unknown} [options]
   */
  generate(prompt, options) {
    return generate(this, prompt, options);
  }

  /**
   * The mean cross-entropy of the logits of `tokens` against `targets` (−100 ignored) and its gradient for every
   * parameter, under stateDict()'s names (training.mjs). An encoder–decoder takes one batch { inputIds, labels,
   * attentionMask?, decoderInputIds?, decoderAttentionMask? } (seq2seq.mjs).
   * @param {unknown} tokens { data: Int32Array, shape: [B, T] } (an encoder–decoder: the batch)
   * @param {unknown} [targets] { data: Int32Array, shape: [B, T] }
   */
  lossAndGrad(tokens, targets) {
    return lossAndGrad(this, tokens, targets);
  }

  /**
   * One torch.optim.AdamW step on this batch (training.mjs); the moments and the step count live in the model
   * until its parameters are replaced. An encoder–decoder: trainStep(batch, options), the batch as lossAndGrad's.
   * @param {unknown} tokens (an encoder–decoder: the batch)
   * @param {unknown} targets (an encoder–decoder: the options)
   * @param {unknown} [options] { lr, weightDecay = 0.01, betas = [0.9, 0.999], eps = 1e-8, clipGradNorm? }
   * @returns {{ loss: number, gradNorm: number }} the loss before the step, the gradients' norm before clipping
   */
  trainStep(tokens, targets, options) {
    return trainStep(this, tokens, targets, options);
  }

  /**
   * trainStep, `steps` times, over batches or a sampler's random windows (training.mjs).
   * @param {unknown} data
   * @param {unknown} options { steps, lr, …trainStep's options, onStep, signal }
   */
  train(data, options) {
    return train(this, data, options);
  }

  /**
   * Head importance, by the head mask's gradient or by ablation (model_analysis.mjs; docs/api.md).
   * @param {unknown} batch { tokens, targets }
   * @param {unknown} [options] { method = 'gradient' | 'ablation', ablation = 'zero' | 'mean' }
   */
  headImportance(batch, options) {
    return headImportance(this, batch, options);
  }

  /**
   * One logit's attribution to block 0's inputs, Tensor (T) (model_analysis.mjs; docs/api.md).
   * @param {unknown} tokens { data: Int32Array, shape: [1, T] }
   * @param {unknown} options { position, target, method = 'gradient-x-input' | 'gradient' | 'occlusion' }
   */
  attribution(tokens, options) {
    return attribution(this, tokens, options);
  }

  /**
   * Activation patching of each head from `clean` into `corrupted` (model_analysis.mjs; docs/api.md).
   * @param {unknown} clean { data: Int32Array, shape: [1, T] }
   * @param {unknown} corrupted the same shape
   * @param {unknown} options { position, target }
   */
  patchHeads(clean, corrupted, options) {
    return patchHeads(this, clean, corrupted, options);
  }

  /**
   * Replaces every parameter (Hugging Face's names, with or without the checkpoint's prefix), one tensor at a time.
   * @param {unknown} stateDict { name: Float32Array | Tensor | readSafetensors' tensor }
   */
  loadStateDict(stateDict) {
    const ctx = 'model.loadStateDict';
    this[kUsable](ctx);
    if (stateDict === null || typeof stateDict !== 'object' || Array.isArray(stateDict) || stateDict instanceof Map) {
      const hint = stateDict instanceof Map ? ' (convert with Object.fromEntries(map))' : '';
      throw new TypeError(
        `${ctx}: stateDict must be an object { name: Float32Array | Tensor }, got ${describe(stateDict)}${hint}`,
      );
    }
    this[kLoadTensors](ctx, /** @type {Record<string, unknown>} */ (stateDict), 'stateDict');
  }

  /**
   * Checks the names and shapes of every tensor, then copies them in one at a time (never two float32 copies of
   * the weights in wasm memory); a tied lm_head.weight is compared with the embedding before anything is loaded.
   * @param {string} ctx
   * @param {Record<string, unknown>} tensors
   * @param {string} what the argument's name in messages
   */
  [kLoadTensors](ctx, tensors, what) {
    const core = this[kCore];
    const M = core.Module;
    const sixteen = this.#sixteen(ctx);
    const entries = Object.keys(tensors).map((name) => this.#entryOf(ctx, name, tensors[name], what, sixteen));
    if (sixteen && entries.some((e) => e.dtype === null && !e.bits)) {
      // (a float32 tensor widens its matrix: room for every matrix in float32 beside the 16-bit ones, at most)
      const config = this[kUsable](ctx).config();
      core.checkFits(ctx, what, [], () => M._transformerMemory(config, false, M._WeightStorage.Float32, true));
    }
    const floats = this.#checkNames(ctx, entries, what);
    this.#checkTiedHead(ctx, floats, what);
    for (const e of floats) this.#copyIn(ctx, e);
  }

  /**
   * loadModel of a Blob: the header's names, shapes and dtypes checked first, then each parameter read from its
   * byte range in pieces of rows, each copied in before the next is read (one that float32 storage widens: read
   * whole, then copied in pieces); the file is never held in JS. A tied head, read last, is compared with the
   * embedding by C++.
   * @param {string} ctx
   * @param {Awaited<ReturnType<typeof openSafetensors>>} file
   */
  async [kLoadBlob](ctx, file) {
    const sixteen = this.#sixteen(ctx);
    const float = (/** @type {string} */ d) => d === 'F32' || d === 'F16' || d === 'BF16';
    const stubs = file.entries.map((e) => ({
      name: e.name,
      buffer: { shape: e.shape },
      dtype: float(e.dtype) ? null : e.dtype,
    }));
    const byName = new Map(file.entries.map((e) => [e.name, e]));
    for (const { name } of this.#checkNames(ctx, stubs, 'tensors')) {
      const e = /** @type {any} */ (byName.get(name));
      if (e.dtype === (sixteen ?? 'F32')) await this.#copyInPieces(ctx, file, e, sixteen);
      else this.#copyIn(ctx, this.#entryOf(ctx, name, await file.read(e), 'tensors', sixteen)); // (widened)
    }
  }

  /**
   * Copies one tensor stored as the model stores it (its 16-bit dtype, or F32 for float32 storage) from the file
   * into the model in pieces of whole rows of at most the module's _loadPieceBytes(): neither JS nor wasm memory holds more than a
   * piece of it beside the model.
   * @param {string} ctx
   * @param {{ readBytes: (e: any, from: number, to: number) => Promise<Uint8Array> }} file
   * @param {{ name: string, shape: number[], begin: number, end: number }} e
   * @param {string | null} sixteen
   */
  async #copyInPieces(ctx, file, e, sixteen) {
    const bytes = e.end - e.begin;
    for (const { first, count } of piecesOf(this[kCore].Module, bytes, e.shape)) {
      if (first < 0) return this.#readPiece(ctx, file, e, sixteen, -1, e.shape, [0, bytes]);
      const range = [(first * bytes) / e.shape[0], ((first + count) * bytes) / e.shape[0]];
      await this.#readPiece(ctx, file, e, sixteen, first, [count, ...e.shape.slice(1)], range);
    }
  }

  /**
   * Reads bytes [from, to) of tensor `e` from the file (as stored: little-endian, as wasm memory) and loads them as
   * its rows from firstRow (−1: the whole tensor) of shape `shape`.
   * @param {string} ctx
   * @param {{ readBytes: (e: any, from: number, to: number) => Promise<Uint8Array> }} file
   * @param {{ name: string }} e
   * @param {string | null} sixteen
   * @param {number} firstRow
   * @param {number[]} shape
   * @param {number[]} range [from, to)
   */
  async #readPiece(ctx, file, e, sixteen, firstRow, shape, [from, to]) {
    const data = await file.readBytes(e, from, to);
    const piece = { data, tag: 'Uint8Array', shape, size: data.length, bytes: data.length };
    this.#loadPiece(ctx, e.name, { ...piece, name: `tensors[${JSON.stringify(e.name)}]` }, !!sixteen, firstRow);
  }

  /**
   * The 16-bit dtype of this model's weight storage ('F16' / 'BF16'), or null for float32.
   * @param {string} ctx
   */
  #sixteen(ctx) {
    const M = this[kCore].Module;
    const storage = this[kUsable](ctx).storage();
    return storage === M._WeightStorage.Float32 ? null : storage === M._WeightStorage.F16 ? 'F16' : 'BF16';
  }

  /**
   * One named tensor as the loader takes it: its withHeap buffer and, for 16-bit storage, its bits (or null: it is
   * widened), or for readSafetensors' non-float tensor its shape only and its dtype.
   * @param {string} ctx
   * @param {string} name
   * @param {unknown} tensor
   * @param {string} what
   * @param {string | null} sixteen the storage's 16-bit dtype
   * @returns {{ name: string, buffer: any, dtype: string | null, bits?: any }}
   */
  #entryOf(ctx, name, tensor, what, sixteen) {
    const label = `${what}[${JSON.stringify(name)}]`;
    const value = /** @type {any} */ (tensor);
    if (
      value !== null &&
      typeof value === 'object' &&
      !typedArrayName(value) &&
      !unreadBits(value) &&
      value.data === null
    ) {
      // readSafetensors' non-float tensor: its name and shape only (a buffer that C++ ignores, or an error).
      const dtype = typeof value.dtype === 'string' ? value.dtype : 'not a float type';
      return { name, buffer: readShape(ctx, value.shape, `${label}.shape`), dtype };
    }
    const lazy = sixteen && value?.dtype === sixteen ? unreadBits(value) : null; // (its data never read)
    const buffer = lazy
      ? lazyBuffer(ctx, value, label, lazy)
      : readParameter(ctx, value, label, this.#shapes.get(name));
    return { name, buffer, dtype: null, bits: sixteen ? bitsBuffer(value, buffer, sixteen, !!lazy) : null };
  }

  /**
   * Checks the whole set of names, shapes and dtypes (C++'s checkStateDict: unknown, missing, twice, wrong shape),
   * and returns the float tensors C++ keeps (ignored buffers left out), each with the parameter it must equal
   * (`tie`: '' for all but a tied head, which comes last: C++ compares it with the embedding loaded before it).
   * @template {{ name: string, buffer: { shape: number[] }, dtype: string | null }} E
   * @param {string} ctx
   * @param {E[]} entries
   * @param {string} what
   * @returns {Array<E & { tie: string }>}
   */
  #checkNames(ctx, entries, what) {
    const core = this[kCore];
    const handle = () => this[kUsable](ctx);
    core.call(ctx, () => handle().checkStateDict(entries.map((e) => [e.name, e.buffer.shape])));
    const kept = entries.filter((e) => core.call(ctx, () => handle().canonicalName(e.name)) !== '');
    for (const e of kept) {
      if (e.dtype === null) continue;
      throw new RangeError(
        `${ctx}: ${what}[${JSON.stringify(e.name)}] is a parameter but has dtype ${e.dtype}; ` +
          'parameters must be F32, F16 or BF16',
      );
    }
    const floats = kept.map((e) => ({ ...e, tie: core.call(ctx, () => handle().tiedTo(e.name)) }));
    return floats.sort((a, b) => Number(a.tie !== '') - Number(b.tie !== ''));
  }

  /**
   * Copies one checked tensor into the model (its 16-bit bits as they are, or its float32 data), in pieces of whole
   * rows of at most the module's _loadPieceBytes(): wasm memory stages a piece, never a second copy of a large tensor.
   * @param {string} ctx
   * @param {{ name: string, buffer: any, bits?: any }} e
   */
  #copyIn(ctx, { name, buffer, bits }) {
    const src = bits ?? buffer;
    const pieces = piecesOf(this[kCore].Module, src.bytes, buffer.shape);
    if (pieces[0].first < 0) return this.#loadPiece(ctx, name, src, !!bits, -1);
    const data = src.data; // (read once: a lazy tensor's getter widens again each time)
    const width = src.size / buffer.shape[0]; // elements of `data` per row
    const elementBytes = src.bytes / src.size;
    for (const { first, count } of pieces) {
      const size = count * width;
      const shape = [count, ...buffer.shape.slice(1)];
      const part = data.subarray(first * width, first * width + size);
      this.#loadPiece(ctx, name, { ...src, data: part, shape, size, bytes: size * elementBytes }, !!bits, first);
    }
  }

  /**
   * One piece, copied into wasm memory, into the model.
   * @param {string} ctx
   * @param {string} name
   * @param {any} piece a withHeap buffer
   * @param {boolean} sixteen its data are 16-bit bits (as bytes)
   * @param {number} firstRow its first row, or −1 for the whole tensor
   */
  #loadPiece(ctx, name, piece, sixteen, firstRow) {
    const core = this[kCore];
    const arg = core.tensorArg(piece);
    core.withHeap(ctx, piece.name, [piece], (p) => this.#loadAt(ctx, name, { ...arg, ptr: p[0] }, sixteen, firstRow));
  }

  /**
   * The raw load of a tensor (firstRow −1) or of its rows from firstRow, staged in wasm memory at `arg.ptr`.
   * @param {string} ctx
   * @param {string} name
   * @param {{ ptr: number, shape: number[] }} arg
   * @param {boolean} sixteen
   * @param {number} firstRow
   */
  #loadAt(ctx, name, arg, sixteen, firstRow) {
    const h = this[kUsable](ctx);
    const storage = h.storage();
    if (firstRow < 0) return sixteen ? h.loadTensor16(name, arg, storage) : h.loadTensor(name, arg);
    return sixteen ? h.loadTensor16Rows(name, arg, storage, firstRow) : h.loadTensorRows(name, arg, firstRow);
  }

  /**
   * A tied head (lm_head.weight with tied embeddings: C++'s tiedTo names its tie) must equal the embedding: checked
   * here, before anything is loaded.
   * @param {string} ctx
   * @param {Array<{ name: string, buffer: any, tie: string }>} floats the float tensors, each with its tie
   * @param {string} what
   */
  #checkTiedHead(ctx, floats, what) {
    const head = floats.find((e) => e.tie !== '');
    if (!head) return;
    const h = this[kUsable](ctx);
    const source = floats.find((e) => h.canonicalName(e.name) === head.tie);
    if (!source) return;
    const a = head.buffer.data;
    const b = source.buffer.data;
    for (let i = 0; i < a.length; ++i) {
      if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) {
        throw new RangeError(
          `${ctx}: ${what}[${JSON.stringify(head.name)}] must equal ${what}[${JSON.stringify(source.name)}] ` +
            '(tied embeddings), ' +
            `got a different matrix (first difference at element ${i}: ${a[i]} vs ${b[i]})`,
        );
      }
    }
  }

  /** Frees this model and every KV cache it made (they cannot be used without it). Idempotent. */
  dispose() {
    for (const cache of [...this.#caches]) cache.dispose();
    super.dispose();
  }
}

/**
 * A new Transformer from a configuration's JSON text (model_config.mjs): memory checked before anything is
 * allocated.
 * @param {Core} core
 * @param {string} ctx
 * @param {{ json: string, huggingFace: boolean, seed: number }} config
 * @param {boolean} initialise false when every parameter is loaded next (loadModel)
 * @param {any} [storage] the weight matrices' (_WeightStorage; 16-bit only with initialise false)
 */
function construct(core, ctx, config, initialise, storage = core.Module._WeightStorage.Float32) {
  const { json, huggingFace, seed } = config;
  core.checkFits(ctx, 'the configuration', [], () =>
    core.Module._transformerMemory(json, huggingFace, storage, !initialise),
  );
  return wrapHandle(
    core,
    ctx,
    () => new core.Module._Transformer(json, huggingFace, seed, initialise, storage),
    (handle) => new Transformer(kToken, core, handle),
  );
}

/**
 * attn.createModel({ arch, ...config, seed }): a fresh model, initialised like GPT-2 / Llama from the seed.
 * @param {Core} core
 * @param {unknown} options
 */
export function createModel(core, options) {
  const ctx = 'createModel';
  core.checkUsable(ctx);
  return construct(core, ctx, readCreateOptions(ctx, options), true);
}

/**
 * attn.loadModel({ config, tensors }): a Hugging Face config.json object (or a normalised config with `arch`, as
 * model.config gives) and readSafetensors' tensors; or, as `tensors`, the model.safetensors Blob / File itself (→ a
 * Promise of the model: each tensor is read and copied in on its own, so the file is never held in JS).
 * @param {Core} core
 * @param {unknown} options
 */
export function loadModel(core, options) {
  const ctx = 'loadModel';
  core.checkUsable(ctx);
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { config, tensors } are required, got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', ['config', 'tensors']);
  const config = readLoadConfig(ctx, o.config);
  const tensors = o.tensors;
  if (isBlob(tensors)) return loadBlob(core, ctx, config, tensors);
  if (tensors === null || typeof tensors !== 'object' || Array.isArray(tensors) || tensors instanceof Map) {
    throw new TypeError(
      `${ctx}: tensors must be an object { name: tensor } (readSafetensors' result) or a safetensors Blob, got ` +
        describe(tensors),
    );
  }
  if (tensors instanceof Promise) {
    throw new TypeError(`${ctx}: tensors is a Promise (readSafetensors of a Blob): await it first`);
  }
  const storage = storageOf(core.Module, /** @type {Record<string, unknown>} */ (tensors));
  const model = construct(core, ctx, withHeads(core, ctx, config, Object.keys(tensors)), false, storage);
  try {
    model[kLoadTensors](ctx, /** @type {Record<string, unknown>} */ (tensors), 'tensors');
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}

/**
 * loadModel of a safetensors Blob: the header read and checked, the model made with the storage its dtypes give
 * (16-bit when every float tensor is F16, or every one BF16, as storageOf), then filled one tensor at a time.
 * @param {Core} core
 * @param {string} ctx
 * @param {ReturnType<typeof readLoadConfig>} config
 * @param {unknown} blob
 */
async function loadBlob(core, ctx, config, blob) {
  const file = await openSafetensors(blob);
  const M = core.Module;
  const dtypes = new Set(file.entries.map((e) => e.dtype).filter((d) => d === 'F32' || d === 'F16' || d === 'BF16'));
  const only = dtypes.size === 1 ? [...dtypes][0] : 'F32';
  const storage =
    only === 'F16' ? M._WeightStorage.F16 : only === 'BF16' ? M._WeightStorage.BF16 : M._WeightStorage.Float32;
  core.checkUsable(ctx);
  const named = withHeads(
    core,
    ctx,
    config,
    file.entries.map((e) => e.name),
  );
  const model = construct(core, ctx, named, false, storage);
  try {
    await model[kLoadBlob](ctx, file);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}
