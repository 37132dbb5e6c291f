// @ts-check
// Whole models (GPT-2 and the Llama family): the JS side of cpp/bindings/embind.cc's _Transformer. createModel /
// loadModel (a Hugging Face config.json object and readSafetensors' tensors), forward, KV caches (kv_cache.mjs),
// generate (greedy or seeded sampling, here in JS), training (lossAndGrad, trainStep: AdamW in C++; train: a loop
// of steps over given batches or random windows of a token sequence), state dicts with Hugging Face's names.

import { kToken, toTensor, toTensorRecord } from './core.mjs';
import { KVCache, kCacheHandle, kCacheOwner, readCacheOptions } from './kv_cache.mjs';
import { Model, createModel as wrapModel, kCore, kParameterNames, kUsable } from './model.mjs';
import { bitsMatch, unreadBits, widenBits } from './safetensors.mjs';
import {
  describe,
  readBool,
  readDim,
  readFiniteNumber,
  readMask,
  readOptions,
  readParameter,
  readSafeInteger,
  readShape,
  readTensor,
  readTokens,
  typedArrayName,
} from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').RawTransformer} RawTransformer */
/** @typedef {import('../../cpp/bindings/embind').TransformerArgs} TransformerArgs */
/** @typedef {import('../../cpp/bindings/embind').TransformerForwardArgs} TransformerForwardArgs */
/** @typedef {import('../../cpp/bindings/embind').AdamWArgs} AdamWArgs */
/** @typedef {import('../../cpp/bindings/embind').TensorArg} TensorArg */
/**
 * The normalised configuration (docs/api.md, "Transformer models"), as model.config gives it.
 * @typedef {{ arch: 'gpt2' | 'llama', vocabSize: number, contextLength: number, embedDim: number,
 *   numLayers: number, numHeads: number, normEps: number, numKVHeads?: number, headDim?: number,
 *   hiddenDim?: number, ropeTheta?: number, tieEmbeddings?: boolean, attentionBias?: 'none' | 'qkv' | 'all',
 *   slidingWindow?: number | null }} ModelConfig
 */

/** The fields of each architecture's normalised config, in model.config's order. */
const kConfigFields = {
  gpt2: ['vocabSize', 'contextLength', 'embedDim', 'numLayers', 'numHeads', 'normEps'],
  llama: [
    'vocabSize',
    'contextLength',
    'embedDim',
    'numLayers',
    'numHeads',
    'numKVHeads',
    'headDim',
    'hiddenDim',
    'normEps',
    'ropeTheta',
    'tieEmbeddings',
    'attentionBias',
    'slidingWindow',
  ],
};
/** Defaults of createModel, as Hugging Face's GPT2Config and LlamaConfig have them. */
const kDefaults = {
  gpt2: { normEps: 1e-5 },
  llama: { normEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: 'none', slidingWindow: null },
};
const kAttentionBiases = ['none', 'qkv', 'all'];
const kForwardOptions = [
  'outputAttentions',
  'outputHiddenStates',
  'attentionMask',
  'headMask',
  'kvCache',
  'lastLogitsOnly',
];
const kTrainStepOptions = ['lr', 'weightDecay', 'betas', 'eps', 'clipGradNorm'];
const kTrainOptions = ['steps', ...kTrainStepOptions, 'onStep', 'signal'];
const kSamplerFields = ['ids', 'batchSize', 'blockLength', 'seed'];
/** The target id that counts for nothing (PyTorch's ignore_index). */
const kIgnoreIndex = -100;
const kGenerateOptions = [
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'onToken',
  'outputAttentions',
  'eosTokenId',
  'signal',
];

// ---------------------------------------------------------------------------------------------------------------
// Configurations.

/**
 * createModel's options (or model.config): `{ arch, ...fields, seed }` → the raw struct and the seed.
 * @param {Core} core
 * @param {string} ctx
 * @param {unknown} options
 * @param {boolean} withSeed whether `seed` is allowed
 */
function readModelConfig(core, ctx, options, withSeed) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${ctx}: options { arch, vocabSize, … } must be an object, got ${describe(options)}`);
  }
  // Every field is read once (readOptions), then those of the other architecture are refused.
  const o = readOptions(ctx, options, 'options', ['arch', ...kConfigFields.llama, ...(withSeed ? ['seed'] : [])]);
  const arch = readArch(ctx, o.arch, 'arch');
  const fields = kConfigFields[arch];
  for (const name of kConfigFields.llama) {
    if (!fields.includes(name) && o[name] !== undefined) {
      throw new TypeError(
        `${ctx}: unknown option ${JSON.stringify(name)} for arch '${arch}'; expected one of ${fields.join(', ')}`,
      );
    }
  }
  const defaults = /** @type {Record<string, any>} */ (kDefaults[arch]);
  const get = (/** @type {string} */ name) => (o[name] === undefined ? defaults[name] : o[name]);
  const M = core.Module;
  /** @type {TransformerArgs} */
  const args = {
    arch: arch === 'gpt2' ? M._Arch.Gpt2 : M._Arch.Llama,
    vocabSize: readDim(ctx, o.vocabSize, 'vocabSize'),
    contextLength: readDim(ctx, o.contextLength, 'contextLength'),
    embedDim: readDim(ctx, o.embedDim, 'embedDim'),
    numLayers: readDim(ctx, o.numLayers, 'numLayers'),
    numHeads: readDim(ctx, o.numHeads, 'numHeads'),
    numKVHeads: readDim(ctx, o.numKVHeads, 'numKVHeads', { defaultValue: 0 }),
    headDim: readDim(ctx, o.headDim, 'headDim', { defaultValue: 0 }),
    hiddenDim: readDim(ctx, o.hiddenDim, 'hiddenDim', { defaultValue: 0 }),
    normEps: readFiniteNumber(ctx, get('normEps'), 'normEps') ?? 1e-5,
    ropeTheta: readFiniteNumber(ctx, get('ropeTheta'), 'ropeTheta') ?? 10000,
    tieEmbeddings: readBool(ctx, get('tieEmbeddings'), 'tieEmbeddings', true),
    attentionBias: M._AttentionBias.None,
    slidingWindow: 0,
    seed: withSeed ? readSafeInteger(ctx, o.seed, 'seed', 0) : 0,
  };
  if (arch === 'llama') {
    const bias = get('attentionBias');
    if (typeof bias !== 'string') {
      throw new TypeError(`${ctx}: attentionBias must be 'none', 'qkv' or 'all', got ${describe(bias)}`);
    }
    if (!kAttentionBiases.includes(bias)) {
      throw new RangeError(`${ctx}: attentionBias must be 'none', 'qkv' or 'all', got ${JSON.stringify(bias)}`);
    }
    args.attentionBias = { none: M._AttentionBias.None, qkv: M._AttentionBias.Qkv, all: M._AttentionBias.All }[bias];
    const window = get('slidingWindow');
    args.slidingWindow = window === null ? 0 : readDim(ctx, window, 'slidingWindow');
  }
  return args;
}

/**
 * @param {string} ctx
 * @param {unknown} arch
 * @param {string} name
 * @returns {'gpt2' | 'llama'}
 */
function readArch(ctx, arch, name) {
  if (typeof arch !== 'string') throw new TypeError(`${ctx}: ${name} must be 'gpt2' or 'llama', got ${describe(arch)}`);
  if (arch !== 'gpt2' && arch !== 'llama') {
    throw new RangeError(`${ctx}: ${name} must be 'gpt2' or 'llama', got ${JSON.stringify(arch)}`);
  }
  return arch;
}

/** Hugging Face's model types and the architecture each maps to. */
const kModelTypes = { gpt2: 'gpt2', llama: 'llama', mistral: 'llama', qwen2: 'llama' };

/**
 * A Hugging Face config.json object → createModel's options (docs/api.md lists the fields). What attnlab does
 * not compute (RoPE scaling, MLP biases, Qwen2's per-layer windows, another activation) is a RangeError naming
 * the field, so that no checkpoint runs with a silently different architecture.
 * @param {string} ctx
 * @param {Record<string, any>} hf
 */
export function fromHuggingFaceConfig(ctx, hf) {
  const type = hf.model_type;
  if (typeof type !== 'string' || !Object.hasOwn(kModelTypes, type)) {
    throw new RangeError(
      `${ctx}: config.model_type must be one of ${Object.keys(kModelTypes).join(', ')}, got ${describe(type)}`,
    );
  }
  /** A field that must be present (TypeError when absent; its value is checked by createModel's rules). */
  const need = (/** @type {string} */ key) => {
    if (hf[key] === undefined || hf[key] === null) throw new TypeError(`${ctx}: config.${key} is required`);
    return hf[key];
  };
  const opt = (/** @type {string} */ key, /** @type {any} */ fallback) =>
    hf[key] === undefined || hf[key] === null ? fallback : hf[key];
  /** Fields whose other values attnlab does not compute. */
  const only = (/** @type {string} */ key, /** @type {any[]} */ allowed, /** @type {string} */ why) => {
    if (hf[key] !== undefined && !allowed.includes(hf[key])) {
      throw new RangeError(`${ctx}: config.${key} must be ${why}, got ${JSON.stringify(hf[key])}`);
    }
  };
  if (type === 'gpt2') {
    only('activation_function', ['gelu_new', 'gelu_pytorch_tanh'], "'gelu_new' (GELU, tanh approximation)");
    only('n_inner', [null, 4 * hf.n_embd], 'null or 4 * n_embd (the MLP width)');
    only('tie_word_embeddings', [true], 'true (GPT-2 ties its LM head to wte)');
    only('scale_attn_weights', [true], 'true (scores scaled by 1 / sqrt(head size))');
    only('scale_attn_by_inverse_layer_idx', [false], 'false (not supported)');
    only('add_cross_attention', [false], 'false (a decoder-only model)');
    return {
      arch: 'gpt2',
      vocabSize: need('vocab_size'),
      contextLength: need('n_positions'),
      embedDim: need('n_embd'),
      numLayers: need('n_layer'),
      numHeads: need('n_head'),
      normEps: opt('layer_norm_epsilon', 1e-5),
    };
  }
  only('hidden_act', ['silu', 'swish'], "'silu' (SwiGLU MLP)");
  only('rope_scaling', [null], 'null (RoPE scaling is not supported yet)');
  only('mlp_bias', [false], 'false (MLP biases are not supported yet)');
  if (type === 'qwen2') only('use_sliding_window', [false], 'false (per-layer sliding windows are not supported yet)');
  const heads = need('num_attention_heads');
  let attentionBias = 'none';
  if (type === 'qwen2') attentionBias = 'qkv';
  else if (type === 'llama' && hf.attention_bias === true) attentionBias = 'all';
  return {
    arch: 'llama',
    vocabSize: need('vocab_size'),
    contextLength: need('max_position_embeddings'),
    embedDim: need('hidden_size'),
    numLayers: need('num_hidden_layers'),
    numHeads: heads,
    numKVHeads: opt('num_key_value_heads', heads),
    headDim: opt('head_dim', undefined),
    hiddenDim: need('intermediate_size'),
    normEps: opt('rms_norm_eps', 1e-6),
    ropeTheta: opt('rope_theta', 10000),
    tieEmbeddings: opt('tie_word_embeddings', false),
    attentionBias,
    slidingWindow: type === 'mistral' ? opt('sliding_window', null) : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Sampling.

/**
 * A small seeded generator, xoshiro128** (state from splitmix32 over the seed's two 32-bit halves): the same seed
 * draws the same numbers everywhere.
 * @param {number} seed a non-negative safe integer
 */
export function makeRng(seed) {
  let x = (seed >>> 0) ^ 0x9e3779b9;
  let y = Math.floor(seed / 2 ** 32) >>> 0;
  const splitmix = () => {
    x = (x + 0x9e3779b9) | 0;
    let z = x ^ y;
    y = (y + 0x632be5ab) | 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  const s = [splitmix(), splitmix(), splitmix(), splitmix()];
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1;
  /** A uniform number in [0, 1). */
  return () => {
    const result = Math.imul(((Math.imul(s[1], 5) << 7) | (Math.imul(s[1], 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 11) | (s[3] >>> 21);
    return result / 2 ** 32;
  };
}

/**
 * The next id from one row of logits: argmax at temperature 0 (the first maximum), else a draw from
 * softmax(logits / temperature) restricted to the topK largest (ties: smaller id first), then to the smallest
 * prefix of those, by decreasing probability, whose probability reaches topP (Hugging Face's warpers, in their
 * order). One uniform number per draw; candidates are walked by decreasing probability (ids in order when neither
 * topK nor topP restricts them).
 * @param {Float32Array} row
 * @param {{ temperature: number, topK: number, topP: number }} s
 * @param {() => number} random
 */
export function sampleToken(row, { temperature, topK, topP }, random) {
  const n = row.length;
  const value = (/** @type {number} */ i) => (Number.isNaN(row[i]) ? -Infinity : row[i]);
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < n; ++i) if (value(i) > value(best)) best = i;
    return best;
  }
  const better = (/** @type {number} */ a, /** @type {number} */ b) => value(b) - value(a) || a - b;
  /** @type {number[] | null} candidates by decreasing probability; null: every id, in id order */
  let ids = topK < n ? largest(n, topK, better) : null;
  if (topP < 1) ids = nucleus(row, value, ids, temperature, topP, better);
  const count = ids ? ids.length : n;
  const id = (/** @type {number} */ j) => (ids ? ids[j] : j);
  let max = -Infinity;
  for (let j = 0; j < count; ++j) max = Math.max(max, value(id(j)));
  const weights = new Float64Array(count);
  let total = 0;
  for (let j = 0; j < count; ++j) {
    weights[j] = max === -Infinity ? 1 : Math.exp((value(id(j)) - max) / temperature);
    total += weights[j];
  }
  let u = random() * total;
  for (let j = 0; j < count; ++j) {
    u -= weights[j];
    if (u < 0) return id(j);
  }
  return id(count - 1);
}

/**
 * topP: the smallest prefix of the candidates (by decreasing probability) whose probability reaches topP · their
 * total, at least one. Without topK, found from a native sort of the values, not of the ids.
 * @param {Float32Array} row
 * @param {(i: number) => number} value row[i], NaN as -Infinity
 * @param {number[] | null} ids candidates by decreasing probability, or null for all
 * @param {number} temperature
 * @param {number} topP
 * @param {(a: number, b: number) => number} better
 */
function nucleus(row, value, ids, temperature, topP, better) {
  let values;
  if (ids) {
    values = Float64Array.from(ids, value);
  } else {
    values = new Float64Array(row.length);
    for (let i = 0; i < row.length; ++i) values[i] = value(i);
    values.sort().reverse();
  }
  const max = values[0];
  const weight = (/** @type {number} */ v) => (max === -Infinity ? 1 : Math.exp((v - max) / temperature));
  let total = 0;
  for (const v of values) total += weight(v);
  let count = 0;
  for (let before = 0; count < values.length && (count === 0 || before < topP * total); ++count) {
    before += weight(values[count]);
  }
  if (ids) return ids.slice(0, count);
  // The ids of the first `count` values: those above the last one kept, then its ties by id.
  const last = values[count - 1];
  const kept = [];
  for (let i = 0; i < row.length; ++i) if (value(i) > last) kept.push(i);
  for (let i = 0; i < row.length && kept.length < count; ++i) if (value(i) === last) kept.push(i);
  return kept.sort(better);
}

/**
 * The k ids of [0, n) first in `before`'s order, in that order: a heap of k (O(n log k)), for topK ≪ vocabSize.
 * @param {number} n
 * @param {number} k
 * @param {(a: number, b: number) => number} before
 */
function largest(n, k, before) {
  /** @type {number[]} */
  const heap = []; // heap[0]: the last of the k kept so far
  const sift = (/** @type {number} */ i) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l], heap[m]) > 0) m = l;
      if (r < heap.length && before(heap[r], heap[m]) > 0) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  for (let id = 0; id < n; ++id) {
    if (heap.length < k) {
      heap.push(id);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (before(heap[i], heap[parent]) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (before(id, heap[0]) < 0) {
      heap[0] = id;
      sift(0);
    }
  }
  return heap.sort(before);
}

/**
 * The error a generation or training loop stopped by `signal` throws: its reason when that is an Error, else an
 * AbortError.
 * @param {string} ctx
 * @param {any} signal
 */
function abortError(ctx, signal) {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(`${ctx}: aborted`, 'AbortError');
}

// ---------------------------------------------------------------------------------------------------------------
// Training arguments.

/**
 * A number that C++ takes as a float32: finite, > 0 (positive) or >= 0, and still so as a float32.
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {boolean} positive
 */
function readFloat32(ctx, value, name, positive) {
  const expected = positive ? 'a finite number > 0' : 'a finite number >= 0';
  if (typeof value !== 'number') throw new TypeError(`${ctx}: ${name} must be ${expected}, got ${describe(value)}`);
  const f = Math.fround(value);
  if (!Number.isFinite(value) || (positive ? !(value > 0) : !(value >= 0))) {
    throw new RangeError(`${ctx}: ${name} must be ${expected}, got ${value}`);
  }
  if (!Number.isFinite(f) || (positive && f === 0)) {
    throw new RangeError(`${ctx}: ${name} must be ${expected} as a float32, got ${value} (${f} as a float32)`);
  }
  return value;
}

/**
 * trainStep's options (read once by readOptions) → the raw AdamW struct: lr required; weightDecay 0.01,
 * betas [0.9, 0.999], eps 1e-8 and no clipping by default (torch.optim.AdamW's defaults, clip_grad_norm_ off).
 * @param {string} ctx
 * @param {Record<string, any>} o
 * @returns {AdamWArgs}
 */
function readAdamW(ctx, o) {
  if (o.lr === undefined || o.lr === null) {
    throw new TypeError(`${ctx}: lr is required (the learning rate, a finite number > 0)`);
  }
  const [beta1, beta2] = readBetas(ctx, o.betas);
  const clip = o.clipGradNorm;
  return {
    lr: readFloat32(ctx, o.lr, 'lr', true),
    weightDecay: readFloat32(ctx, o.weightDecay ?? 0.01, 'weightDecay', false),
    beta1,
    beta2,
    eps: readFloat32(ctx, o.eps ?? 1e-8, 'eps', false),
    clipGradNorm: clip === undefined || clip === null ? 0 : readFloat32(ctx, clip, 'clipGradNorm', true),
  };
}

/**
 * AdamW's betas: [beta1, beta2], each in [0, 1) (also as a float32); [0.9, 0.999] by default.
 * @param {string} ctx
 * @param {unknown} value
 * @returns {[number, number]}
 */
function readBetas(ctx, value) {
  if (value === undefined || value === null) return [0.9, 0.999];
  if (!Array.isArray(value)) {
    throw new TypeError(`${ctx}: betas must be an array [beta1, beta2] of numbers in [0, 1), got ${describe(value)}`);
  }
  const length = value.length;
  if (length !== 2) {
    throw new RangeError(`${ctx}: betas must be [beta1, beta2] (2 numbers in [0, 1)), got ${length} entries`);
  }
  const read = (/** @type {number} */ i) => {
    const b = value[i];
    if (typeof b !== 'number')
      throw new TypeError(`${ctx}: betas[${i}] must be a number in [0, 1), got ${describe(b)}`);
    if (!(b >= 0 && b < 1)) throw new RangeError(`${ctx}: betas[${i}] must be in [0, 1), got ${b}`);
    if (Math.fround(b) >= 1) throw new RangeError(`${ctx}: betas[${i}] must be in [0, 1) as a float32, got ${b} (1)`);
    return b;
  };
  return [read(0), read(1)];
}

/**
 * Every id of an Int32Array in [0, V) (targets: or −100, at least one that is not).
 * @param {string} ctx
 * @param {ArrayLike<number>} data
 * @param {string} name the array's name in messages ('tokens.data', 'data.ids')
 * @param {number} V
 * @param {boolean} isTarget
 */
function checkIds(ctx, data, name, V, isTarget) {
  let counted = 0;
  for (let i = 0; i < data.length; ++i) {
    const id = data[i];
    if (isTarget && id === kIgnoreIndex) continue;
    if (id < 0 || id >= V) {
      const what = isTarget ? `a target id in [0, ${V}) or ${kIgnoreIndex} (ignored)` : `a token id in [0, ${V})`;
      throw new RangeError(`${ctx}: ${name}[${i}] must be ${what}, got ${id}`);
    }
    ++counted;
  }
  if (isTarget && counted === 0) {
    throw new RangeError(
      `${ctx}: ${name} must hold at least one target that is not ${kIgnoreIndex} (ignored), got none`,
    );
  }
}

/**
 * A training loop checked up front and run one AdamW step per step() (worker-host.mjs yields to its messages
 * between steps; train() runs it through): step() → { step, loss, gradNorm } | null once `steps` are done;
 * result() → the losses and gradient norms so far.
 * @typedef {{ step: () => ({ step: number, loss: number, gradNorm: number } | null),
 *   result: () => { losses: Float32Array, gradNorms: Float32Array }, onStep: Function | null, signal: any }} Training
 */

/** A checked batch: tokens and targets (validate.mjs's buffers) of one shape. @typedef {{ t: any, y: any }} Batch */

// ---------------------------------------------------------------------------------------------------------------
// The model.

/**
 * A generation checked up front and run one token per step() (worker-host.mjs yields to its messages between
 * steps; generate() runs it through).
 * @typedef {{ step: () => ({ id: number, step: number, attentions?: Array<{ data: Float32Array, shape: number[] }
 *   | null> } | null), close: () => void, onToken: Function | null, signal: any }} Generation
 */

/** @type {(model: Transformer, ctx: string, prompt: unknown, options: unknown) => Generation} */
let startGeneration;
/** @type {(model: Transformer, ctx: string, tensors: Record<string, unknown>, what: string) => void} */
let loadTensors;
/** @type {(model: Transformer, ctx: string, data: unknown, options: unknown) => Training} */
let startTraining;

/** @extends {Model<RawTransformer>} */
class Transformer extends Model {
  /** The caches made by createKVCache and not yet disposed: dispose() disposes them too. */
  #caches = new Set();
  static {
    startGeneration = (model, ctx, prompt, options) => model.#generation(ctx, prompt, options);
    loadTensors = (model, ctx, tensors, what) => model.#load(ctx, tensors, what);
    startTraining = (model, ctx, data, options) => model.#training(ctx, data, options);
  }

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
    const raw = core.call('createModel', () => handle.config());
    const arch = raw.arch === core.Module._Arch.Gpt2 ? 'gpt2' : 'llama';
    /** @type {Record<string, any>} */
    const config = { arch };
    for (const name of kConfigFields[arch]) config[name] = raw[name];
    if (arch === 'llama') {
      const M = core.Module;
      config.attentionBias =
        raw.attentionBias === M._AttentionBias.Qkv
          ? 'qkv'
          : raw.attentionBias === M._AttentionBias.All
            ? 'all'
            : 'none';
      config.slidingWindow = raw.slidingWindow === 0 ? null : raw.slidingWindow;
    }
    this.#config = /** @type {ModelConfig} */ (Object.freeze(config));
    const list = core.call('createModel', () => handle.parameterShapes());
    this.#shapes = new Map(list.map(([name, shape]) => [name, Array.from(shape, Number)]));
  }

  /** The normalised configuration, with `arch`: createModel(model.config) builds the same architecture. */
  get config() {
    return this.#config;
  }

  /**
   * Logits, and on request every (or some) layer's attention weights and the hidden states.
   * @param {unknown} tokens { data: Int32Array, shape: [B, T] }
   * @param {unknown} [options]
   */
  forward(tokens, options) {
    const ctx = 'model.forward';
    this[kUsable](ctx);
    const t = readTokens(ctx, tokens, 'tokens');
    const o = readOptions(ctx, options, 'options', kForwardOptions);
    const layers = this.#readLayers(ctx, o.outputAttentions, 'outputAttentions');
    const hidden = readBool(ctx, o.outputHiddenStates, 'outputHiddenStates', false);
    const cache = this.#readCache(ctx, o.kvCache);
    const mask = readMask(ctx, o.attentionMask, 'attentionMask');
    if (mask && mask.tag !== 'Uint8Array') {
      throw new TypeError(`${ctx}: attentionMask.data must be a Uint8Array (1 = token, 0 = padding), got ${mask.tag}`);
    }
    const headMask = o.headMask === undefined || o.headMask === null ? null : readTensor(ctx, o.headMask, 'headMask');
    const last = readBool(ctx, o.lastLogitsOnly, 'lastLogitsOnly', false);
    const raw = this.#forward(ctx, t, { layers, hidden, mask, headMask, cache, last });
    /** @type {{ logits: { data: Float32Array, shape: number[] }, attentions?: any[], hiddenStates?: any[] }} */
    const result = { logits: toTensor(raw.logits) };
    if (layers) result.attentions = raw.attentions.map((a) => (a ? toTensor(a) : null));
    if (hidden && raw.hiddenStates) result.hiddenStates = raw.hiddenStates.map(toTensor);
    return result;
  }

  /**
   * One raw forward of checked inputs.
   * @param {string} ctx
   * @param {any} t checked tokens
   * @param {{ layers: number[] | null, hidden: boolean, mask: any, headMask: any, cache: KVCache | null,
   *   last: boolean }} o last: the logits of each sequence's last position only, (B, 1, V)
   */
  #forward(ctx, t, { layers, hidden, mask, headMask, cache, last }) {
    const core = this[kCore];
    /** @type {TransformerForwardArgs} */
    const args = {
      tokens: core.tensorArg(t),
      attentionMask: mask ? core.tensorArg(mask) : { ptr: 0, shape: [] },
      headMask: headMask ? core.tensorArg(headMask) : { ptr: 0, shape: [] },
      outputAttentions: layers ?? [],
      outputHiddenStates: hidden,
      lastLogitsOnly: last,
    };
    const inputs = [t, mask, headMask];
    // (The handles are looked up again inside each call: a getter of an argument may dispose them meanwhile.)
    const handle = () => this[kUsable](ctx);
    const rawCache = () => (cache ? cache[kCacheHandle](ctx) : null);
    core.checkFits(ctx, 'tokens', inputs, () => {
      const c = rawCache();
      return handle().forwardMemory(args, c ? c.length() : 0, c !== null);
    });
    return core.withHeap(ctx, 'tokens and masks', inputs, (p) => {
      [args.tokens.ptr, args.attentionMask.ptr, args.headMask.ptr] = p;
      return handle().forward(args, rawCache());
    });
  }

  /**
   * outputAttentions: true (every layer), false / undefined (none: null), or a list of layer indices.
   * @param {string} ctx
   * @param {unknown} value
   * @param {string} name
   * @returns {number[] | null}
   */
  #readLayers(ctx, value, name) {
    const L = this.#config.numLayers;
    if (value === undefined || value === null || value === false) return null;
    if (value === true) return Array.from({ length: L }, (_, l) => l);
    if (!Array.isArray(value)) {
      throw new TypeError(`${ctx}: ${name} must be a boolean or an array of layer indices, got ${describe(value)}`);
    }
    return value.map((l, i) => {
      if (typeof l !== 'number') throw new TypeError(`${ctx}: ${name}[${i}] must be a number, got ${describe(l)}`);
      if (!Number.isInteger(l) || l < 0 || l >= L) {
        throw new RangeError(`${ctx}: ${name}[${i}] must be a layer index in [0, ${L}), got ${l}`);
      }
      return l;
    });
  }

  /**
   * options.kvCache: undefined, or a KVCache of this model that has not been disposed.
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
    if (value[kCacheOwner] !== this) {
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
   * sampling (sampleToken). Returns an Int32Array of the new ids.
   * @param {unknown} prompt Int32Array
   * @param {unknown} [options]
   */
  generate(prompt, options) {
    const ctx = 'model.generate';
    const run = this.#generation(ctx, prompt, options);
    /** @type {number[]} */
    const ids = [];
    try {
      for (;;) {
        if (run.signal?.aborted) throw abortError(ctx, run.signal);
        const next = run.step();
        if (!next) break;
        ids.push(next.id);
        if (run.onToken) {
          const info = next.attentions ? { attentions: next.attentions } : undefined;
          if (run.onToken(next.id, next.step, info) === false) break;
        }
      }
    } finally {
      run.close();
    }
    return Int32Array.from(ids);
  }

  /**
   * A generation, checked up front and run one token per step(): { step() → { id, step, attentions? } | null,
   * close(), onToken, signal }. step() returns null once maxNewTokens ids (or an eosTokenId) have come.
   * @param {string} ctx
   * @param {unknown} prompt
   * @param {unknown} options
   * @returns {Generation}
   */
  #generation(ctx, prompt, options) {
    this[kUsable](ctx);
    const { vocabSize: V, contextLength } = this.#config;
    if (typedArrayName(prompt) !== 'Int32Array') {
      const hint = Array.isArray(prompt) ? ' (convert with new Int32Array(array))' : '';
      throw new TypeError(`${ctx}: prompt must be an Int32Array of token ids, got ${describe(prompt)}${hint}`);
    }
    const ids = Int32Array.from(/** @type {Int32Array} */ (prompt)); // a snapshot: the caller may change theirs
    if (ids.length === 0) throw new RangeError(`${ctx}: prompt must hold at least one token id, got none`);
    ids.forEach((id, i) => {
      if (id < 0 || id >= V) throw new RangeError(`${ctx}: prompt[${i}] must be a token id in [0, ${V}), got ${id}`);
    });
    if (options === undefined || options === null) {
      throw new TypeError(`${ctx}: options { maxNewTokens, … } are required, got ${describe(options)}`);
    }
    const o = readOptions(ctx, options, 'options', kGenerateOptions);
    const maxNewTokens = readDim(ctx, o.maxNewTokens, 'maxNewTokens', { min: 0 });
    if (ids.length + maxNewTokens > contextLength) {
      throw new RangeError(
        `${ctx}: prompt length ${ids.length} + maxNewTokens ${maxNewTokens} must be at most contextLength ` +
          `${contextLength}, got ${ids.length + maxNewTokens}`,
      );
    }
    const temperature = readFiniteNumber(ctx, o.temperature, 'temperature') ?? 1;
    if (temperature < 0) throw new RangeError(`${ctx}: temperature must be >= 0 (0 = greedy), got ${temperature}`);
    const topK = o.topK === undefined || o.topK === null ? V : readDim(ctx, o.topK, 'topK');
    const topP = readFiniteNumber(ctx, o.topP, 'topP') ?? 1;
    if (!(topP > 0 && topP <= 1)) throw new RangeError(`${ctx}: topP must be in (0, 1], got ${topP}`);
    const seed = readSafeInteger(ctx, o.seed, 'seed', 0);
    const onToken = o.onToken ?? null;
    if (onToken !== null && typeof onToken !== 'function') {
      throw new TypeError(`${ctx}: onToken must be a function (id, step, info) => …, got ${describe(onToken)}`);
    }
    const layers = this.#readLayers(ctx, o.outputAttentions, 'outputAttentions');
    const stops = readEos(ctx, o.eosTokenId, V);
    const signal = o.signal ?? null;
    if (signal !== null && (typeof signal !== 'object' || typeof signal.aborted !== 'boolean')) {
      throw new TypeError(`${ctx}: signal must be an AbortSignal, got ${describe(signal)}`);
    }
    const sampling = { temperature, topK, topP };
    const random = makeRng(seed);
    const H = this.#config.numHeads;
    let cache = /** @type {KVCache | null} */ (null);
    let step = 0;
    let last = -1;
    const forward = (/** @type {Int32Array} */ data, /** @type {boolean} */ withAttentions) => {
      const t = readTokens(ctx, { data, shape: [1, data.length] }, 'tokens');
      // (only the last position's logits: a long prompt never holds T · vocabSize floats)
      const o = {
        layers: withAttentions ? layers : null,
        hidden: false,
        mask: null,
        headMask: null,
        cache,
        last: true,
      };
      return this.#forward(ctx, t, o);
    };
    return {
      onToken,
      signal,
      step: () => {
        if (step >= maxNewTokens || stops.has(last)) return null;
        let raw;
        if (step === 0) {
          cache = this.createKVCache({ batchSize: 1, maxLength: Math.max(ids.length, ids.length + maxNewTokens - 1) });
          // With attention rows asked for, the prompt's last token runs alone: only its rows are of size T.
          if (layers && ids.length > 1) forward(ids.subarray(0, ids.length - 1), false);
          raw = forward(layers ? ids.subarray(ids.length - 1) : ids, layers !== null);
        } else {
          raw = forward(Int32Array.of(last), layers !== null);
        }
        const [row] = raw.logits; // (1, 1, V)
        last = sampleToken(row, sampling, random);
        /** @type {{ id: number, step: number, attentions?: Array<{ data: Float32Array, shape: number[] } | null> }} */
        const out = { id: last, step: step++ };
        if (layers) {
          const S = /** @type {KVCache} */ (cache).length; // the keys of the query that chose the id
          out.attentions = raw.attentions.map((a) => (a ? { data: a[0], shape: [H, S] } : null));
        }
        return out;
      },
      close: () => {
        cache?.dispose();
        cache = null;
      },
    };
  }

  /**
   * The mean cross-entropy of the logits of `tokens` against `targets` (−100 ignored) and its gradient for every
   * parameter, under stateDict()'s names.
   * @param {unknown} tokens { data: Int32Array, shape: [B, T] }
   * @param {unknown} targets { data: Int32Array, shape: [B, T] }
   */
  lossAndGrad(tokens, targets) {
    const ctx = 'model.lossAndGrad';
    this[kUsable](ctx);
    const batch = this.#readBatch(ctx, tokens, targets, '');
    this.#checkTrainFits(ctx, batch, true);
    const raw = this.#withBatch(ctx, batch, (handle, t, y) => handle.lossAndGrad(t, y));
    return { loss: raw.loss, gradParams: toTensorRecord(raw.gradParams, this[kParameterNames]) };
  }

  /**
   * One torch.optim.AdamW step on this batch (after clip_grad_norm_ when clipGradNorm is given); the moments and
   * the step count live in the model until its parameters are replaced.
   * @param {unknown} tokens
   * @param {unknown} targets
   * @param {unknown} options { lr, weightDecay = 0.01, betas = [0.9, 0.999], eps = 1e-8, clipGradNorm? }
   * @returns {{ loss: number, gradNorm: number }} the loss before the step, the gradients' norm before clipping
   */
  trainStep(tokens, targets, options) {
    const ctx = 'model.trainStep';
    this[kUsable](ctx);
    const batch = this.#readBatch(ctx, tokens, targets, '');
    if (options === undefined || options === null) {
      throw new TypeError(`${ctx}: options { lr, … } are required (lr has no default), got ${describe(options)}`);
    }
    const adamw = readAdamW(ctx, readOptions(ctx, options, 'options', kTrainStepOptions));
    this.#checkTrainFits(ctx, batch, false);
    return this.#step(ctx, batch, adamw);
  }

  /**
   * trainStep, `steps` times: over `data`, an array of batches { tokens, targets } (in turn, again from the first
   * after the last), or a sampler { ids, batchSize, blockLength, seed } (random windows of a token sequence, the
   * targets the ids after them). onStep({ step, loss, gradNorm }) after each step (false: stop); `signal` is checked
   * before each step. Returns the losses and gradient norms of the steps done.
   * @param {unknown} data
   * @param {unknown} options { steps, lr, …trainStep's options, onStep, signal }
   */
  train(data, options) {
    const ctx = 'model.train';
    const run = this.#training(ctx, data, options);
    for (;;) {
      if (run.signal?.aborted) throw abortError(ctx, run.signal);
      const next = run.step();
      if (!next) break;
      if (run.onStep && run.onStep({ ...next }) === false) break;
    }
    return run.result();
  }

  /**
   * A training loop, every argument checked (every batch's ids, each shape's memory) before the first step.
   * @param {string} ctx
   * @param {unknown} data
   * @param {unknown} options
   * @returns {Training}
   */
  #training(ctx, data, options) {
    this[kUsable](ctx);
    const source = this.#readTrainData(ctx, data);
    if (options === undefined || options === null) {
      throw new TypeError(
        `${ctx}: options { steps, lr, … } are required (lr has no default), got ${describe(options)}`,
      );
    }
    const o = readOptions(ctx, options, 'options', kTrainOptions);
    let steps = source.steps;
    if (o.steps !== undefined && o.steps !== null) steps = readDim(ctx, o.steps, 'steps', { min: 0 });
    else if (steps === null) throw new TypeError(`${ctx}: steps is required with a sampler (an integer >= 0)`);
    const adamw = readAdamW(ctx, o);
    const onStep = o.onStep ?? null;
    if (onStep !== null && typeof onStep !== 'function') {
      throw new TypeError(`${ctx}: onStep must be a function ({ step, loss, gradNorm }) => …, got ${describe(onStep)}`);
    }
    const signal = o.signal ?? null;
    if (signal !== null && (typeof signal !== 'object' || typeof signal.aborted !== 'boolean')) {
      throw new TypeError(`${ctx}: signal must be an AbortSignal, got ${describe(signal)}`);
    }
    const shapes = new Set();
    for (const batch of source.shapes) {
      const key = batch.t.shape.join(',');
      if (shapes.has(key)) continue;
      shapes.add(key);
      this.#checkTrainFits(ctx, batch, false);
    }
    /** @type {number[]} */
    const losses = [];
    /** @type {number[]} */
    const gradNorms = [];
    return {
      onStep,
      signal,
      step: () => {
        const step = losses.length;
        if (step >= /** @type {number} */ (steps)) return null;
        const { loss, gradNorm } = this.#step(ctx, source.batch(step), adamw);
        losses.push(loss);
        gradNorms.push(gradNorm);
        return { step, loss, gradNorm };
      },
      result: () => ({ losses: Float32Array.from(losses), gradNorms: Float32Array.from(gradNorms) }),
    };
  }

  /**
   * train()'s data: an array of batches, each checked now, or a sampler drawing `batchSize` windows of
   * `blockLength` ids per step from a seeded generator. `shapes`: a batch of each shape the loop will use.
   * @param {string} ctx
   * @param {unknown} data
   * @returns {{ steps: number | null, batch: (step: number) => Batch, shapes: Batch[] }}
   */
  #readTrainData(ctx, data) {
    const { vocabSize: V, contextLength } = this.#config;
    if (Array.isArray(data)) {
      if (data.length === 0) throw new RangeError(`${ctx}: data must hold at least one batch { tokens, targets }`);
      const batches = data.map((b, i) => {
        if (b === null || typeof b !== 'object' || Array.isArray(b)) {
          throw new TypeError(`${ctx}: data[${i}] must be a batch { tokens, targets }, got ${describe(b)}`);
        }
        const o = readOptions(ctx, b, `data[${i}]`, ['tokens', 'targets']);
        return this.#readBatch(ctx, o.tokens, o.targets, `data[${i}].`);
      });
      return { steps: batches.length, batch: (step) => batches[step % batches.length], shapes: batches };
    }
    if (data === null || typeof data !== 'object' || typedArrayName(data)) {
      throw new TypeError(
        `${ctx}: data must be an array of batches { tokens, targets } or a sampler ` +
          `{ ids, batchSize, blockLength, seed }, got ${describe(data)}`,
      );
    }
    const o = readOptions(ctx, data, 'data', kSamplerFields);
    if (typedArrayName(o.ids) !== 'Int32Array') {
      throw new TypeError(`${ctx}: data.ids must be an Int32Array of token ids, got ${describe(o.ids)}`);
    }
    const ids = Int32Array.from(/** @type {Int32Array} */ (o.ids)); // a snapshot: the caller may change theirs
    checkIds(ctx, ids, 'data.ids', V, false);
    const batchSize = readDim(ctx, o.batchSize, 'data.batchSize');
    const blockLength = readDim(ctx, o.blockLength, 'data.blockLength');
    if (blockLength > contextLength) {
      throw new RangeError(
        `${ctx}: data.blockLength must be at most contextLength ${contextLength}, got ${blockLength}`,
      );
    }
    if (ids.length < blockLength + 1) {
      throw new RangeError(
        `${ctx}: data.ids must hold at least blockLength + 1 = ${blockLength + 1} ids (a window and the id after ` +
          `it), got ${ids.length}`,
      );
    }
    const random = makeRng(readSafeInteger(ctx, o.seed, 'data.seed', 0));
    const starts = ids.length - blockLength; // windows start at 0 … ids.length − blockLength − 1
    const shape = [batchSize, blockLength];
    const draw = (/** @type {boolean} */ sample) => {
      const tokens = new Int32Array(batchSize * blockLength);
      const targets = new Int32Array(batchSize * blockLength);
      for (let b = 0; sample && b < batchSize; ++b) {
        const s = Math.floor(random() * starts);
        tokens.set(ids.subarray(s, s + blockLength), b * blockLength);
        targets.set(ids.subarray(s + 1, s + 1 + blockLength), b * blockLength);
      }
      return {
        t: readTokens(ctx, { data: tokens, shape }, 'tokens'),
        y: readTokens(ctx, { data: targets, shape: shape.slice() }, 'targets'),
      };
    };
    return { steps: null, batch: () => draw(true), shapes: [draw(false)] };
  }

  /**
   * Checked tokens and targets: Int32Arrays of one shape [B, T], T at most contextLength, every token id in
   * [0, vocabSize), every target in [0, vocabSize) or −100 and at least one that is not.
   * @param {string} ctx
   * @param {unknown} tokens
   * @param {unknown} targets
   * @param {string} prefix before the argument names in messages ('data[2].' in train's batches)
   * @returns {Batch}
   */
  #readBatch(ctx, tokens, targets, prefix) {
    const { vocabSize: V, contextLength } = this.#config;
    const t = readTokens(ctx, tokens, `${prefix}tokens`);
    const y = readTokens(ctx, targets, `${prefix}targets`);
    if (y.shape[0] !== t.shape[0] || y.shape[1] !== t.shape[1]) {
      throw new RangeError(
        `${ctx}: ${prefix}targets.shape must equal ${prefix}tokens.shape [${t.shape.join(', ')}], ` +
          `got [${y.shape.join(', ')}]`,
      );
    }
    if (t.shape[1] > contextLength) {
      throw new RangeError(
        `${ctx}: ${prefix}tokens.shape[1] (T) must be at most contextLength ${contextLength}, got ${t.shape[1]}`,
      );
    }
    checkIds(ctx, t.data, `${prefix}tokens.data`, V, false);
    checkIds(ctx, y.data, `${prefix}targets.data`, V, true);
    return { t, y };
  }

  /**
   * Refuses, before anything is copied, a training call whose activations, logits, training state (and with
   * returnGradients the gradients' copies) cannot fit in wasm memory.
   * @param {string} ctx
   * @param {Batch} batch
   * @param {boolean} returnGradients lossAndGrad
   */
  #checkTrainFits(ctx, { t, y }, returnGradients) {
    const core = this[kCore];
    core.checkFits(ctx, 'tokens, targets', [t, y], () =>
      this[kUsable](ctx).trainMemory(core.tensorArg(t), returnGradients),
    );
  }

  /**
   * One AdamW step on a checked batch.
   * @param {string} ctx
   * @param {Batch} batch
   * @param {AdamWArgs} adamw
   */
  #step(ctx, batch, adamw) {
    const { loss, gradNorm } = this.#withBatch(ctx, batch, (handle, t, y) => handle.trainStep(t, y, adamw));
    return { loss, gradNorm };
  }

  /**
   * Copies tokens and targets into wasm memory and runs fn on the handle with their raw structs.
   * @template R
   * @param {string} ctx
   * @param {Batch} batch
   * @param {(handle: RawTransformer, t: TensorArg, y: TensorArg) => R} fn
   * @returns {R}
   */
  #withBatch(ctx, { t, y }, fn) {
    return this[kCore].withHeap(ctx, 'tokens and targets', [t, y], (p) =>
      fn(this[kUsable](ctx), { ptr: p[0], shape: t.shape }, { ptr: p[1], shape: y.shape }),
    );
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
    this.#load(ctx, /** @type {Record<string, unknown>} */ (stateDict), 'stateDict');
  }

  /**
   * Checks the names and shapes of every tensor, then copies them in one at a time (never two float32 copies of
   * the weights in wasm memory); a tied lm_head.weight is compared with the embedding before anything is loaded.
   * @param {string} ctx
   * @param {Record<string, unknown>} tensors
   * @param {string} what the argument's name in messages
   */
  #load(ctx, tensors, what) {
    const core = this[kCore];
    /** @type {Array<{ name: string, buffer: any, dtype: string | null, bits?: any }>} */
    const entries = [];
    const M = core.Module;
    const storage = this[kUsable](ctx).storage();
    const sixteen = storage === M._WeightStorage.Float32 ? null : storage === M._WeightStorage.F16 ? 'F16' : 'BF16';
    for (const name of Object.keys(tensors)) {
      const label = `${what}[${JSON.stringify(name)}]`;
      const value = /** @type {any} */ (tensors[name]);
      if (
        value !== null &&
        typeof value === 'object' &&
        !typedArrayName(value) &&
        !unreadBits(value) &&
        value.data === null
      ) {
        // readSafetensors' non-float tensor: its name and shape only (a buffer that C++ ignores, or an error).
        const dtype = typeof value.dtype === 'string' ? value.dtype : 'not a float type';
        entries.push({ name, buffer: readShape(ctx, value.shape, `${label}.shape`), dtype });
        continue;
      }
      const lazy = sixteen && value?.dtype === sixteen ? unreadBits(value) : null; // (its data never read)
      const buffer = lazy
        ? lazyBuffer(ctx, value, label, lazy)
        : readParameter(ctx, value, label, this.#shapes.get(name));
      entries.push({ name, buffer, dtype: null, bits: sixteen ? bitsBuffer(value, buffer, sixteen, !!lazy) : null });
    }
    if (sixteen && entries.some((e) => e.dtype === null && !e.bits)) {
      // (a float32 tensor widens its matrix: room for every matrix in float32 beside the 16-bit ones, at most)
      core.checkFits(ctx, what, [], () => M._transformerMemory(this[kUsable](ctx).config(), M._WeightStorage.Float32));
    }
    const handle = () => this[kUsable](ctx);
    core.call(ctx, () => handle().checkStateDict(entries.map((e) => [e.name, e.buffer.shape])));
    for (const e of entries) {
      if (e.dtype === null) continue;
      const h = handle();
      try {
        h.loadTensor(e.name, { ptr: 0, shape: e.buffer.shape }); // an ignored buffer: nothing happens
      } catch (error) {
        if (!(error instanceof RangeError)) throw core.translate(ctx, error);
        throw new RangeError(
          `${ctx}: ${what}[${JSON.stringify(e.name)}] is a parameter but has dtype ${e.dtype}; ` +
            'parameters must be F32, F16 or BF16',
        );
      }
    }
    this.#checkTiedHead(ctx, entries, what);
    // A tied lm_head.weight last: C++ compares it with the embedding loaded before it.
    const floats = entries.filter((e) => e.dtype === null);
    floats.sort((a, b) => Number(a.name === 'lm_head.weight') - Number(b.name === 'lm_head.weight'));
    for (const { name, buffer, bits } of floats) {
      const arg = core.tensorArg(buffer);
      core.withHeap(ctx, buffer.name, [bits ?? buffer], (p) => {
        arg.ptr = p[0];
        if (bits) handle().loadTensor16(name, arg, storage);
        else handle().loadTensor(name, arg);
      });
    }
  }

  /**
   * With tied embeddings, an lm_head.weight must equal the embedding: checked here, before anything is loaded.
   * @param {string} ctx
   * @param {Array<{ name: string, buffer: any, dtype: string | null }>} entries
   * @param {string} what
   */
  #checkTiedHead(ctx, entries, what) {
    const c = this.#config;
    if (c.arch === 'llama' && !c.tieEmbeddings) return;
    const head = entries.find((e) => e.name === 'lm_head.weight' && e.dtype === null);
    if (!head) return;
    const embedding =
      c.arch === 'gpt2'
        ? ['wte.weight', 'transformer.wte.weight']
        : ['model.embed_tokens.weight', 'embed_tokens.weight'];
    const source = entries.find((e) => embedding.includes(e.name) && e.dtype === null);
    if (!source) return;
    const a = head.buffer.data;
    const b = source.buffer.data;
    for (let i = 0; i < a.length; ++i) {
      if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) {
        throw new RangeError(
          `${ctx}: ${what}["lm_head.weight"] must equal ${what}[${JSON.stringify(source.name)}] (tied embeddings), ` +
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
 * The 16-bit values of a readSafetensors tensor of dtype `dtype` ('F16' / 'BF16') as a withHeap buffer, when it has
 * them (`bits`) and they are still its float32 `data` (`unread`: data never read, so it cannot differ; else checked
 * element by element: data changed after reading is loaded as data), else null.
 * @param {any} value
 * @param {{ data: Float32Array, shape: number[], size: number, name: string }} buffer readParameter's
 * @param {string} dtype
 * @param {boolean} unread
 */
function bitsBuffer(value, buffer, dtype, unread) {
  const bits = value?.bits;
  if (value?.dtype !== dtype || !(bits instanceof Uint16Array) || bits.length !== buffer.size) return null;
  if (!unread && !bitsMatch(bits, buffer.data, dtype)) return null;
  const bytes = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
  return {
    data: bytes,
    tag: 'Uint8Array',
    shape: buffer.shape,
    size: bytes.length,
    bytes: bytes.length,
    name: buffer.name,
  };
}

/**
 * readParameter's buffer for a 16-bit tensor whose `data` was never read: its shape checked against its `bits`;
 * `data` widens them only if asked (the tied-head check), without keeping the result.
 * @param {string} ctx
 * @param {any} value
 * @param {string} label
 * @param {Uint16Array} bits
 */
function lazyBuffer(ctx, value, label, bits) {
  const { shape, size } = readShape(ctx, value.shape, `${label}.shape`);
  if (size !== bits.length) {
    throw new RangeError(
      `${ctx}: ${label}.bits has ${bits.length} elements but ${label}.shape [${shape.join(', ')}] needs ${size}`,
    );
  }
  const dtype = value.dtype;
  const name = `${label}.data`;
  return {
    tag: 'Float32Array',
    shape,
    size,
    bytes: size * 4,
    name,
    get data() {
      return widenBits(bits, dtype);
    },
  };
}

/**
 * The weight storage loadModel gives a checkpoint: 16-bit when every float tensor is F16 (or every one BF16) with
 * its readSafetensors `bits`, else float32.
 * @param {any} M
 * @param {Record<string, unknown>} tensors
 */
function storageOf(M, tensors) {
  const dtypes = new Set();
  for (const value of Object.values(tensors)) {
    const v = /** @type {any} */ (value);
    if (v === null || typeof v !== 'object' || typedArrayName(v)) return M._WeightStorage.Float32;
    if (unreadBits(v)) {
      dtypes.add(v.dtype); // (data never read: not widened here)
      continue;
    }
    if (v.data === null) continue; // (a non-float buffer)
    dtypes.add(v.bits instanceof Uint16Array ? v.dtype : 'F32');
  }
  if (dtypes.size !== 1) return M._WeightStorage.Float32;
  const [dtype] = dtypes;
  return dtype === 'F16' ? M._WeightStorage.F16 : dtype === 'BF16' ? M._WeightStorage.BF16 : M._WeightStorage.Float32;
}

/**
 * generate's eosTokenId: an id or a list of ids after which generation stops (the id is returned); none by default.
 * @param {string} ctx
 * @param {unknown} value
 * @param {number} V
 */
function readEos(ctx, value, V) {
  if (value === undefined || value === null) return new Set();
  const list = Array.isArray(value) ? value : [value];
  const name = Array.isArray(value) ? (/** @type {number} */ i) => `eosTokenId[${i}]` : () => 'eosTokenId';
  return new Set(
    list.map((id, i) => {
      if (typeof id !== 'number') throw new TypeError(`${ctx}: ${name(i)} must be a token id, got ${describe(id)}`);
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new RangeError(`${ctx}: ${name(i)} must be a token id in [0, ${V}), got ${id}`);
      }
      return id;
    }),
  );
}

/**
 * A new Transformer from the raw struct: memory checked before anything is allocated.
 * @param {Core} core
 * @param {string} ctx
 * @param {TransformerArgs} args
 * @param {boolean} initialise false when every parameter is loaded next (loadModel)
 * @param {any} [storage] the weight matrices' (_WeightStorage; 16-bit only with initialise false)
 */
function construct(core, ctx, args, initialise, storage = core.Module._WeightStorage.Float32) {
  core.checkFits(ctx, 'the configuration', [], () => core.Module._transformerMemory(args, storage));
  return wrapModel(
    core,
    ctx,
    () => new core.Module._Transformer(args, initialise, storage),
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
  return construct(core, ctx, readModelConfig(core, ctx, options, true), true);
}

/**
 * attn.loadModel({ config, tensors }): a Hugging Face config.json object (or a normalised config with `arch`, as
 * model.config gives) and readSafetensors' tensors.
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
  const config = o.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TypeError(`${ctx}: config must be a Hugging Face config.json object, got ${describe(config)}`);
  }
  const tensors = o.tensors;
  if (tensors === null || typeof tensors !== 'object' || Array.isArray(tensors) || tensors instanceof Map) {
    throw new TypeError(
      `${ctx}: tensors must be an object { name: tensor } (readSafetensors' result), got ${describe(tensors)}`,
    );
  }
  if (tensors instanceof Promise) {
    throw new TypeError(`${ctx}: tensors is a Promise (readSafetensors of a Blob): await it first`);
  }
  const normalised = 'arch' in config && !('model_type' in config) ? config : fromHuggingFaceConfig(ctx, config);
  const storage = storageOf(core.Module, /** @type {Record<string, unknown>} */ (tensors));
  const model = construct(core, ctx, readModelConfig(core, ctx, normalised, false), false, storage);
  try {
    loadTensors(model, ctx, /** @type {Record<string, unknown>} */ (tensors), 'tensors');
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}

/**
 * A generation of `model` run step by step (worker-host.mjs), checked as model.generate checks its arguments.
 * @param {unknown} model a Transformer
 * @param {string} ctx
 * @param {unknown} prompt
 * @param {unknown} options
 */
export function generation(model, ctx, prompt, options) {
  if (!(model instanceof Transformer)) throw new TypeError(`${ctx}: not a model made by createModel or loadModel`);
  return startGeneration(model, ctx, prompt, options);
}

/**
 * A training loop of `model` run step by step (worker-host.mjs), checked as model.train checks its arguments.
 * @param {unknown} model a Transformer
 * @param {string} ctx
 * @param {unknown} data
 * @param {unknown} options
 */
export function training(model, ctx, data, options) {
  if (!(model instanceof Transformer)) throw new TypeError(`${ctx}: not a model made by createModel or loadModel`);
  return startTraining(model, ctx, data, options);
}
