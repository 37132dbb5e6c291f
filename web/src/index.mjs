// @ts-check
// attnlab's public JavaScript API (docs/api.md): init() and the instance it resolves to. This file only assembles
// the API; each call kind lives beside its C++ binding's name:
//   core.mjs                   heap copies, raw argument structs, error translation
//   sdpa.mjs                   scaledDotProductAttention(Backward)          ↔ cpp/bindings/embind.cc _sdpa…
//   multi_head_attention.mjs   createMultiHeadAttention → MultiHeadAttention ↔ _MultiHeadAttention
//   tiny_transformer.mjs       createTinyTransformer → TinyTransformer       ↔ _TinyTransformer
//   transformer.mjs            createModel / loadModel → Transformer         ↔ _Transformer
//     model_config.mjs         its configuration as JSON text for C++ (which reads config.json and makes model.config)
//     generation.mjs           its generate: sampling and the step loop (also run by worker-host.mjs)
//     training.mjs             its lossAndGrad / trainStep / train: AdamW's arguments, batches, the step loop
//   model.mjs                  what the model classes share (state dict, dispose)
//   validate.mjs               every JS-side check;  loader.mjs  the only file that knows the .wasm files
//   safetensors.mjs, huggingface.mjs   readSafetensors, writeSafetensors, fromHuggingFace (plain JS, no wasm)
//   rng.mjs                    createRng, the one seeded generator (generate's and train's sampler; plain JS)
// The raw module's contract is cpp/bindings/embind.d.ts.

import { Core, heapViews, kToken } from './core.mjs';
import { loadModule } from './loader.mjs';
import { createMultiHeadAttention } from './multi_head_attention.mjs';
import { scaledDotProductAttention, scaledDotProductAttentionBackward } from './sdpa.mjs';
import { createTinyTransformer } from './tiny_transformer.mjs';
import { createModel, loadModel } from './transformer.mjs';
import { version } from './version.mjs';

export { fromHuggingFace } from './huggingface.mjs';
export { createRng } from './rng.mjs';
export { readSafetensors, writeSafetensors } from './safetensors.mjs';

class Attnlab {
  #core;

  /**
   * @param {symbol} token
   * @param {{ Module: import('../../cpp/bindings/embind').RawModule, key: string, variant: string, threads: number }} loaded
   */
  constructor(token, loaded) {
    if (token !== kToken) throw new TypeError('use init() to get an attnlab instance');
    this.#core = new Core(loaded.Module, loaded.key);
    Object.defineProperty(this, 'variant', { value: loaded.variant, enumerable: true });
    Object.defineProperty(this, 'version', { value: version, enumerable: true });
    Object.defineProperty(this, 'threads', { value: loaded.threads, enumerable: true });
  }

  /** Current size of this instance's wasm memory, in bytes. */
  memoryBytes() {
    return heapViews(this.#core.Module).heapU8.buffer.byteLength;
  }

  /**
   * softmax(Q Kᵀ · scale + mask) V.
   * @param {unknown} query
   * @param {unknown} key
   * @param {unknown} value
   * @param {unknown} [options]
   */
  scaledDotProductAttention(query, key, value, options) {
    return scaledDotProductAttention(this.#core, query, key, value, options);
  }

  /**
   * Gradients of sum(gradOutput ⊙ softmax(Q Kᵀ · scale + mask) V) for query, key and value.
   * @param {unknown} query
   * @param {unknown} key
   * @param {unknown} value
   * @param {unknown} gradOutput
   * @param {unknown} [options]
   */
  scaledDotProductAttentionBackward(query, key, value, gradOutput, options) {
    return scaledDotProductAttentionBackward(this.#core, query, key, value, gradOutput, options);
  }

  /**
   * A torch.nn.MultiheadAttention (eval mode) with PyTorch's default initialisation.
   * @param {unknown} options
   */
  createMultiHeadAttention(options) {
    return createMultiHeadAttention(this.#core, options);
  }

  /**
   * The training demo's model, initialised like PyTorch from a fixed seed.
   * @param {unknown} options
   */
  createTinyTransformer(options) {
    return createTinyTransformer(this.#core, options);
  }

  /**
   * A whole GPT-2 or Llama-family model, freshly initialised from a seed.
   * @param {unknown} options { arch, ...config, seed }
   */
  createModel(options) {
    return createModel(this.#core, options);
  }

  /**
   * A whole model from a Hugging Face config.json object and readSafetensors' tensors.
   * @param {unknown} options { config, tensors }
   */
  loadModel(options) {
    return loadModel(this.#core, options);
  }

  get [Symbol.toStringTag]() {
    return 'Attnlab';
  }
}

const instances = new WeakMap(); // raw Module → Attnlab (so that the same options give the same instance)

/**
 * Loads attnlab's WebAssembly ('auto' picks the threaded SIMD build where shared memory works, else the SIMD build
 * when the runtime supports it, else the scalar one) and resolves to the instance; memoised per variant, thread
 * count and .wasm location.
 * @param {unknown} [options]
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
