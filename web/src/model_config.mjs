// @ts-check
// Model configurations: createModel's options (or model.config) → the raw TransformerArgs struct, the raw struct's
// enums → model.config's strings, and a Hugging Face config.json object → createModel's options
// (fromHuggingFaceConfig). transformer.mjs builds models from them.

import { describe, readBool, readDim, readFiniteNumber, readOptions, readSafeInteger } from './validate.mjs';

/** @typedef {import('./core.mjs').Core} Core */
/** @typedef {import('../../cpp/bindings/embind').TransformerArgs} TransformerArgs */
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

/**
 * createModel's options (or model.config): `{ arch, ...fields, seed }` → the raw struct and the seed.
 * @param {Core} core
 * @param {string} ctx
 * @param {unknown} options
 * @param {boolean} withSeed whether `seed` is allowed
 */
export function readModelConfig(core, ctx, options, withSeed) {
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

/**
 * The raw struct that handle.config() returns → model.config: the enums mapped back to strings, the fields of the
 * architecture in kConfigFields' order.
 * @param {Core} core
 * @param {Record<string, any>} raw
 * @returns {ModelConfig}
 */
export function configOf(core, raw) {
  const arch = raw.arch === core.Module._Arch.Gpt2 ? 'gpt2' : 'llama';
  /** @type {Record<string, any>} */
  const config = { arch };
  for (const name of kConfigFields[arch]) config[name] = raw[name];
  if (arch === 'llama') {
    const M = core.Module;
    config.attentionBias =
      raw.attentionBias === M._AttentionBias.Qkv ? 'qkv' : raw.attentionBias === M._AttentionBias.All ? 'all' : 'none';
    config.slidingWindow = raw.slidingWindow === 0 ? null : raw.slidingWindow;
  }
  return /** @type {ModelConfig} */ (Object.freeze(config));
}
