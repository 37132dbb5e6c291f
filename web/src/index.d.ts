// Type declarations of attnlab's public JavaScript API (docs/api.md). Hand-written; scripts/build.sh generates
// dist/index.d.cts from this file, less the ESM-only region at the end, for CommonJS consumers.

declare global {
  interface SymbolConstructor {
    /** `Symbol.dispose` (explicit resource management), declared here for consumers whose `lib` predates it. */
    readonly dispose: unique symbol;
  }
}

/**
 * A dense float32 tensor, row-major (C order).
 *
 * `data.length` must equal the product of `shape`. Every tensor attnlab returns is a JS-owned copy that stays
 * valid forever; none is a view into wasm memory.
 *
 * @example `{ data: new Float32Array(2 * 3), shape: [2, 3] }`
 */
export interface Tensor {
  /** The elements, row-major. Must be a `Float32Array` (not an `Array` or a `Float64Array`). */
  data: Float32Array;
  /** The dimensions: non-negative integers. */
  shape: number[];
}

/**
 * A mask over attention logits, row-major like {@link Tensor}.
 *
 * - `Uint8Array`: boolean, one byte per element (0 = false; 1, or any non-zero byte, = true). What true means
 *   depends on the call:
 *   in {@link Attnlab.scaledDotProductAttention} **1 = may attend, 0 = masked out** (PyTorch's
 *   `F.scaled_dot_product_attention`); in {@link MultiHeadAttention.forward} **1 = masked out** (PyTorch's
 *   `nn.MultiheadAttention`).
 * - `Float32Array`: additive, added to the scaled logits before the softmax; `-Infinity` excludes a position.
 */
export interface Mask {
  /** Boolean (`Uint8Array`, 0/1) or additive (`Float32Array`) values. */
  data: Uint8Array | Float32Array;
  /** The dimensions: non-negative integers. */
  shape: number[];
}

/**
 * A float32 tensor as onnxruntime-web and transformers.js hold it: `dims` instead of `shape`. Their `Tensor`
 * objects themselves fit (a `type` other than `'float32'` is a TypeError).
 */
export interface DimsTensor {
  data: Float32Array;
  dims: readonly number[];
  type?: string;
}

/** What every call accepts as a float tensor: a {@link Tensor} or a {@link DimsTensor}. */
export type TensorInput = Tensor | DimsTensor;

/** What every call accepts as a mask: a {@link Mask}, or the same with `dims` (type `'bool'`/`'uint8'`/`'float32'`). */
export type MaskInput = Mask | { data: Uint8Array | Float32Array; dims: readonly number[]; type?: string };

/**
 * Token ids for {@link TinyTransformer} and {@link Transformer}: `shape` is `[B, T]` (batch, sequence length, both ≥ 1), row-major, and
 * every id is in `[0, vocabSize)`.
 *
 * @example `{ data: new Int32Array([3, 1, 4, 1, 5, 9]), shape: [1, 6] }`
 */
export interface Tokens {
  /** The ids, row-major. Must be an `Int32Array` (not an `Array` or a `Float32Array`). */
  data: Int32Array;
  /** `[B, T]`: positive integers. */
  shape: number[];
}

/**
 * Which WebAssembly build runs (one per row of attnlab's wasm-variants.json): WebAssembly SIMD128 with a pool of
 * worker threads on shared memory (`'simd-threaded'`, needs cross-origin isolation in browsers), SIMD128 on the
 * calling thread (`'simd'`), or neither (`'scalar'`, for runtimes that lack SIMD).
 */
/**
 * What attnlab reads of an `AbortSignal` (any `AbortSignal` fits; declared here so that the types need neither the
 * DOM library nor Node's).
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

export type Variant = 'simd-threaded' | 'simd' | 'scalar';

/** Options of {@link init}. */
export interface InitOptions {
  /**
   * Which build to load. `'auto'` (the default) picks `'simd-threaded'` where shared memory works (a page or worker
   * served with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`, so
   * that `crossOriginIsolated` is true; Node ≥ 20.16), else `'simd'` when the runtime supports WebAssembly SIMD
   * (checked with `WebAssembly.validate`), else `'scalar'`. Asking for a variant that cannot run here rejects with
   * an `Error` saying why (for `'simd-threaded'`: the missing headers).
   */
  variant?: 'auto' | Variant;
  /**
   * Threads of `'simd-threaded'`, the calling one included: an integer in [1, 64]. Default: one per core
   * (`navigator.hardwareConcurrency`, in Node `os.availableParallelism()`), at most 4. The single-thread variants
   * ignore it. Results do not depend on it (bit-identical). Instances are memoised per variant and thread count.
   */
  threads?: number;
  /**
   * Where the `.wasm` files are, when not next to the package's JavaScript (the default, found through
   * `import.meta.url`, which bundlers such as Vite follow and emit as assets).
   *
   * - a string: a URL prefix to which the file name (`attnlab-simd-threaded.wasm`, `attnlab-simd.wasm` or
   *   `attnlab-scalar.wasm`) is appended,
   *   usually a folder URL ending in `/`, e.g. `'/assets/attnlab/'` or `'https://cdn.example.com/attnlab@0.1.0/dist/'`.
   *   Relative URLs resolve against the page (in Node: the current directory; a plain file path also works there).
   * - a record `{ 'attnlab-simd.wasm': url, 'attnlab-scalar.wasm': url }`: one URL per file; a file not
   *   listed is loaded from its default place.
   *
   * `'simd-threaded'`'s pthread worker, `attnlab-simd-threaded.worker.js`, always loads from next to the package's
   * JavaScript (a worker cannot come from another origin).
   */
  wasmPaths?: string | Record<string, string>;
}

/** What attention calls return. */
export interface AttentionResult {
  /** The attention output (shapes: see the call). */
  output: Tensor;
  /** The attention probabilities (each row sums to 1, or is all 0 when fully masked). Present only when `needWeights` is true. */
  weights?: Tensor;
}

/**
 * Options of {@link Attnlab.scaledDotProductAttention}. `Lk` below counts every key: `pastKey`'s `P` and key's own.
 * A key is attended only when every rule allows it (`attnMask`, `isCausal`, `window`, `kvLengths`); a query row
 * left with no key gets zero weights and a zero output row, never NaN.
 */
export interface SdpaOptions {
  /**
   * Any shape that broadcasts to `(*batch, Lq, Lk)` by NumPy rules (right-aligned, size-1 dimensions repeat):
   * `(Lk)`, `(Lq, Lk)`, `(H, Lq, Lk)`, `(B, 1, 1, Lk)`, `(*batch, Lq, Lk)`…
   * `Uint8Array`: **1 = may attend, 0 = masked out**. `Float32Array`: added to the scores (after `softcap`).
   */
  attnMask?: MaskInput | null;
  /**
   * Causal masking; combines with `attnMask`. Default false.
   * - `true` / `'upper-left'`: query i sees keys j ≤ i + P (P = `pastKey`'s length, 0 without a past).
   * - `'lower-right'`: the last query sits at the last valid key: j ≤ i + L − Lq (L = `kvLengths[b]`, else Lk),
   *   PyTorch's `causal_lower_right`. A negative offset leaves the first rows with no key (zeros).
   */
  isCausal?: boolean | 'upper-left' | 'lower-right';
  /** Factor multiplying Q·Kᵀ; a finite number. Default `1 / sqrt(dk)`. */
  scale?: number;
  /** Whether to return the weights `(*batch, Lq, Lk)`. Default true; false saves their memory. */
  needWeights?: boolean;
  /**
   * Grouped-query attention: key/value's last batch dimension (Hkv heads) may divide query's (Hq); query head h
   * reads key/value head ⌊h·Hkv/Hq⌋. The other batch dimensions must be equal. Default false.
   */
  enableGQA?: boolean;
  /**
   * Valid key counts (ONNX `nonpad_kv_seqlen`): one per item of query's first batch dimension (exactly one without
   * batch dimensions), each in `[0, Lk]`; keys j ≥ kvLengths[b] are masked in every head of item b, and
   * `'lower-right'` and `window` align on this length. Must be an `Int32Array`.
   */
  kvLengths?: Int32Array | null;
  /**
   * Sliding window `[left, right]`: query i at aligned position p (i + P, or i + L − Lq with `'lower-right'`) sees
   * keys p − left … p + right; −1 leaves a side unbounded. Aligned like `isCausal` whether or not it is set.
   * Integers ≥ −1. Default `[-1, -1]`.
   */
  window?: [left: number, right: number] | null;
  /** `c > 0`: scores = c·tanh(scores / c) after scaling, before masks (Gemma 2). A finite float32. Default none. */
  softcap?: number | null;
  /**
   * Also return the pre-softmax scores `(*batch, Lq, Lk)` ({@link SdpaResult.scores}) at this stage: `'scaled'`
   * Q·Kᵀ·scale; `'softcapped'` after `softcap` (= scaled without one); `'masked'` softcapped + float mask, with
   * `-Infinity` wherever a key is masked. ONNX `qk_matmul_output_mode` 0 / 1 / 2.
   */
  returnScores?: 'scaled' | 'softcapped' | 'masked' | null;
  /**
   * A functional KV cache (ONNX `past_key`): `(*batchKV, P, dk)`, given with `pastValue` `(*batchKV, P, dv)`. The
   * call attends over past ‖ new and returns the concatenations as `presentKey`/`presentValue`.
   */
  pastKey?: TensorInput | null;
  /** The values of `pastKey`'s positions, `(*batchKV, P, dv)`. */
  pastValue?: TensorInput | null;
}

/** What {@link Attnlab.scaledDotProductAttention} returns. */
export interface SdpaResult extends AttentionResult {
  /** `(*batch, Lq, Lk)`: the scores at the stage of `returnScores`; present only with it. */
  scores?: Tensor;
  /** `(*batchKV, P + Lk, dk)`: pastKey ‖ key, the next step's `pastKey`; present only with `pastKey`. */
  presentKey?: Tensor;
  /** `(*batchKV, P + Lk, dv)`: pastValue ‖ value; present only with `pastValue`. */
  presentValue?: Tensor;
}

/**
 * Options of {@link Attnlab.scaledDotProductAttentionBackward}: those of the forward call that is differentiated
 * (no `needWeights`, no `returnScores`). No gradient is computed for `attnMask`.
 */
export type SdpaBackwardOptions = Omit<SdpaOptions, 'needWeights' | 'returnScores'>;

/**
 * Gradients of the inputs of an attention call: the vector-Jacobian product for a given `gradOutput`, i.e. the
 * gradients of `sum(output ⊙ gradOutput)`. Each has the shape of its input.
 */
export interface AttentionGradients {
  /** Gradient of `query`, same shape as `query`. */
  gradQuery: Tensor;
  /** Gradient of `key`, same shape as `key`. */
  gradKey: Tensor;
  /** Gradient of `value`, same shape as `value`. */
  gradValue: Tensor;
}

/** What {@link Attnlab.scaledDotProductAttentionBackward} returns. */
export interface SdpaGradients extends AttentionGradients {
  /** Gradient of `pastKey`, its shape; present only with `pastKey`. */
  gradPastKey?: Tensor;
  /** Gradient of `pastValue`, its shape; present only with `pastValue`. */
  gradPastValue?: Tensor;
}

/** What {@link MultiHeadAttention.backward} returns: the inputs' gradients and every parameter's. */
export interface MultiHeadAttentionGradients extends AttentionGradients {
  /** One gradient per parameter, under its state-dict name (see {@link StateDict}) and with its shape. */
  gradParams: Record<string, Tensor>;
}

/** Constructor options of {@link Attnlab.createMultiHeadAttention}: those of `torch.nn.MultiheadAttention` (dropout is always 0, eval mode). */
export interface MultiHeadAttentionOptions {
  /** E: the model dimension, a positive integer divisible by `numHeads`. */
  embedDim: number;
  /** H: number of heads, a positive integer; each head has `embedDim / numHeads` features. */
  numHeads: number;
  /**
   * Grouped-query attention: key/value heads, a positive divisor of `numHeads` (default `numHeads`, PyTorch's
   * module). Query head h reads key/value head `h / (numHeads / numKVHeads)`; `k_proj_weight`/`v_proj_weight` are
   * `(numKVHeads·headDim, kdim/vdim)` (see {@link StateDict}).
   */
  numKVHeads?: number;
  /** Whether the input and output projections have biases (`in_proj_bias`, `out_proj.bias`). Default true. */
  bias?: boolean;
  /** Whether learned `bias_k`, `bias_v` `(1, 1, E)` are appended to key and value as one extra position. Default false. */
  addBiasKV?: boolean;
  /** Whether an all-zero key and value are appended as one extra position. Default false. */
  addZeroAttn?: boolean;
  /** Feature size of `key`. Default `embedDim`. */
  kdim?: number;
  /** Feature size of `value`. Default `embedDim`. */
  vdim?: number;
  /** Whether inputs are `(N, L, E)` (true) rather than `(L, N, E)` (false, the default, as in PyTorch). */
  batchFirst?: boolean;
  /** Seed of the default initialisation (a non-negative safe integer; default 0): same seed, same parameters. */
  seed?: number;
}

/** Options of {@link MultiHeadAttention.forward}. */
export interface MultiHeadAttentionForwardOptions {
  /**
   * Keys to ignore, per batch item: `(N, S)`, or `(S)` for unbatched inputs (always batch first).
   * `Uint8Array`: **1 = masked out** (padding). `Float32Array`: added to the logits.
   */
  keyPaddingMask?: MaskInput | null;
  /**
   * `(L, S)` or `(N * numHeads, L, S)` (index `n * numHeads + h`). `Uint8Array`: **1 = masked out**.
   * `Float32Array`: added to the logits (`-Infinity` excludes). Positions appended by `addBiasKV` /
   * `addZeroAttn` are never masked.
   */
  attnMask?: MaskInput | null;
  /** Whether to return attention weights. Default true. */
  needWeights?: boolean;
  /** Weights averaged over heads `(N, L, S')` (true, the default) or per head `(N, H, L, S')` (false). */
  averageAttnWeights?: boolean;
  /**
   * Whether to keep what {@link MultiHeadAttention.backward} needs (copies of the inputs and the intermediates),
   * replacing what an earlier `requiresGrad` forward kept. Default false; a forward without it leaves that
   * earlier state alone.
   */
  requiresGrad?: boolean;
  /**
   * Decoding: a cache of this module ({@link MultiHeadAttention.createKVCache}). Only the new tokens are given
   * (key and value: the same L tokens as query); their keys and values are appended to the cache and every query
   * attends over all cached positions, causal aligned lower-right (query i sees cached positions
   * j ≤ lengthBefore + i). `keyPaddingMask` then covers the cached positions `(N, lengthAfter)`, `attnMask` is
   * `(L, lengthAfter)` or `(N * numHeads, L, lengthAfter)` (both combined with the causal mask), weights are
   * `(N, L, lengthAfter)` / `(N, H, L, lengthAfter)`. `requiresGrad` is rejected (RangeError). A step past
   * `maxLength` is a RangeError naming it, and appends nothing.
   */
  kvCache?: KVCache | null;
}

/**
 * Keys and values of past tokens (after projection) for decoding with {@link MultiHeadAttention.forward}'s or
 * {@link Transformer.forward}'s `kvCache`, `(batchSize, numKVHeads, maxLength, headDim)` each (per layer for a
 * model), allocated once by {@link MultiHeadAttention.createKVCache} or {@link Transformer.createKVCache}. Usable only
 * with the module or model that made it; disposing that disposes it.
 */
export interface KVCache {
  /** Tokens cached so far. @throws Error after dispose. */
  readonly length: number;
  readonly batchSize: number;
  readonly maxLength: number;
  /** Forgets every cached token (length 0), keeping the memory. Needed after a loadStateDict of its module. */
  reset(): void;
  /** Frees the cache's wasm memory. Calling it again does nothing; any other use then throws an Error. */
  dispose(): void;
  /** Same as {@link KVCache.dispose}, for `using` declarations. */
  [Symbol.dispose](): void;
}

/** Options of {@link MultiHeadAttention.createKVCache}. */
export interface KVCacheOptions {
  /** N: items per step (query's batch size; 1 for unbatched inputs). */
  batchSize: number;
  /** The most tokens the cache holds. */
  maxLength: number;
}

/**
 * A PyTorch-style state dict: parameter name → values. The names are PyTorch's `state_dict()` keys:
 * `in_proj_weight` `(3E, E)` (or `q_proj_weight` `(E, E)`, `k_proj_weight` `(E, kdim)`, `v_proj_weight` `(E, vdim)`
 * when kdim or vdim differ from E), `in_proj_bias` `(3E)`, `out_proj.weight` `(E, E)`, `out_proj.bias` `(E)`
 * (with `bias`), `bias_k`, `bias_v` `(1, 1, E)` (with `addBiasKV`). With `numKVHeads` < `numHeads` the same names
 * with Ekv = numKVHeads·headDim key/value features: always `q_proj_weight` `(E, E)`, `k_proj_weight`
 * `(Ekv, kdim)`, `v_proj_weight` `(Ekv, vdim)`, then `in_proj_bias` `(E + 2·Ekv)` = [q; k; v] biases, `bias_k`,
 * `bias_v` `(1, 1, Ekv)`.
 */
export type StateDict = Record<string, Float32Array | TensorInput>;

/**
 * `torch.nn.MultiheadAttention` in eval mode, owning wasm memory. Create with
 * {@link Attnlab.createMultiHeadAttention}; **you must call {@link MultiHeadAttention.dispose}** (or use
 * `using mha = attn.createMultiHeadAttention(…)`) when done: wasm memory is not garbage-collected reliably.
 *
 * Shapes (E = embedDim, H = numHeads, N batch, L query length, S key length, S' = S + addBiasKV + addZeroAttn):
 * query `(L, N, E)`, or `(N, L, E)` with `batchFirst`, or `(L, E)` unbatched; key `(S, N, kdim)` …;
 * value `(S, N, vdim)` …. A query row whose every key is masked gets zero weights in every head, so its output row
 * is `out_proj.bias` (never NaN).
 */
export interface MultiHeadAttention {
  /**
   * Replaces every parameter. Each value is a `Float32Array` (taking the parameter's shape) or a
   * {@link Tensor} of exactly the parameter's shape.
   *
   * @throws TypeError when a value is neither a Float32Array nor a Tensor.
   * @throws RangeError naming the entry when a name is missing or unknown, or a size or shape is wrong; the
   *   parameters are then left unchanged.
   * @throws Error after {@link MultiHeadAttention.dispose}.
   */
  loadStateDict(stateDict: StateDict): void;
  /** Copies of every parameter, under PyTorch's names (see {@link StateDict}). @throws Error after dispose. */
  stateDict(): Record<string, Tensor>;
  /**
   * Multi-head attention forward pass (eval mode, no dropout).
   *
   * @returns `output` in query's layout `(L, N, E)` / `(N, L, E)` / `(L, E)`, and, when `needWeights`,
   *   `weights` `(N, L, S')` averaged over heads or `(N, H, L, S')` per head (`(L, S')` / `(H, L, S')` when
   *   unbatched; `batchFirst` does not change the weights' layout).
   * @throws TypeError for a wrong type (e.g. data not a Float32Array, a mask that is neither Uint8Array nor Float32Array).
   * @throws RangeError for a wrong size or shape (message names the argument, expected vs actual).
   * @throws Error after {@link MultiHeadAttention.dispose}.
   */
  forward(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    options?: MultiHeadAttentionForwardOptions,
  ): AttentionResult;
  /**
   * Backward pass of the latest {@link MultiHeadAttention.forward} called with `requiresGrad: true` (with the
   * parameters it used): the gradients of `sum(output ⊙ gradOutput)`. Masked keys get zero gradient rows; a fully
   * masked query row passes no gradient through the attention (never NaN).
   *
   * @param gradOutput the upstream gradient, with exactly the shape of that forward's `output`.
   * @returns `gradQuery`, `gradKey`, `gradValue` (shapes of query, key, value) and `gradParams` (one per
   *   parameter, under its state-dict name).
   * @throws Error when no forward with `requiresGrad: true` came before (or {@link MultiHeadAttention.loadStateDict}
   *   was called since), or after {@link MultiHeadAttention.dispose}.
   * @throws TypeError when gradOutput is not a {@link Tensor}; RangeError when its shape differs from the output's.
   */
  backward(gradOutput: TensorInput): MultiHeadAttentionGradients;
  /**
   * An empty KV cache for decoding with {@link MultiHeadAttention.forward}'s `kvCache` (all its memory is
   * allocated here). Not for modules with `addBiasKV` or `addZeroAttn` (RangeError).
   * @throws TypeError / RangeError for missing or non-positive `batchSize`, `maxLength`, or a cache too large for
   *   wasm memory; Error after {@link MultiHeadAttention.dispose}.
   */
  createKVCache(options: KVCacheOptions): KVCache;
  /** Frees this module's wasm memory and disposes its KV caches. Calling it again does nothing; any other method then throws an Error. */
  dispose(): void;
  /** Same as {@link MultiHeadAttention.dispose}, for `using` declarations. */
  [Symbol.dispose](): void;
}

/** Constructor options of {@link Attnlab.createTinyTransformer}. */
export interface TinyTransformerOptions {
  /** V: the number of token ids, a positive integer. */
  vocabSize: number;
  /** E: the model dimension, a positive even integer (sin/cos position pairs) divisible by `numHeads`. */
  embedDim: number;
  /** H: the number of attention heads, a positive integer. */
  numHeads: number;
  /** Whether position t attends only positions ≤ t (for next-token tasks). Default false: every position. */
  causal?: boolean;
  /** Seed of the default initialisation (a non-negative safe integer; default 0): same seed, same parameters. */
  seed?: number;
}

/** What {@link TinyTransformer.forward} returns. */
export interface TinyTransformerOutput {
  /** `(B, T, vocabSize)`: unnormalised scores of every token id at every position. */
  logits: Tensor;
  /** `(B, H, T, T)`: the attention weights of every head (each row sums to 1). */
  weights: Tensor;
}

/** What {@link TinyTransformer.lossAndGrad} and {@link Transformer.lossAndGrad} return. */
export interface LossAndGrad {
  /**
   * The mean cross-entropy: over all B·T positions ({@link TinyTransformer}), over the targets that are not −100
   * ({@link Transformer}).
   */
  loss: number;
  /** The gradient of `loss` for every parameter, under its state-dict name and with its shape. */
  gradParams: Record<string, Tensor>;
}

/** Options of {@link TinyTransformer.trainStep}. */
export interface TrainStepOptions {
  /** Adam's learning rate, a positive finite number. Default `1e-2`. */
  lr?: number;
}

/** What {@link TinyTransformer.trainStep} returns. */
export interface TrainStepResult {
  /** The loss on this batch before the update (as {@link TinyTransformer.lossAndGrad} would give). */
  loss: number;
}

/**
 * A one-layer transformer small enough to train in a browser tab, owning wasm memory:
 *
 * ```
 * x      = embedding.weight[tokens] + pe          // (B, T, E); pe: fixed sinusoidal positional encoding
 * a      = MHA(x, x, x)                           // nn.MultiheadAttention(E, H, bias=False, batch_first=True),
 *                                                 // with a causal mask when `causal`
 * logits = (x + a) readout.weightᵀ + readout.bias // (B, T, V)
 * loss   = mean cross-entropy of logits against targets, over all B·T positions
 * ```
 *
 * Parameters (state-dict names, PyTorch's order): `embedding.weight` `(V, E)`, `attn.in_proj_weight` `(3E, E)`,
 * `attn.out_proj.weight` `(E, E)`, `readout.weight` `(V, E)`, `readout.bias` `(V)`. Create with
 * {@link Attnlab.createTinyTransformer}; **you must call {@link TinyTransformer.dispose}** (or use `using`) when done.
 */
export interface TinyTransformer {
  /**
   * Replaces every parameter and resets the optimizer (Adam's moments and step count). Each value is a
   * `Float32Array` (taking the parameter's shape) or a {@link Tensor} of exactly the parameter's shape.
   *
   * @throws TypeError when a value is neither a Float32Array nor a Tensor.
   * @throws RangeError naming the entry when a name is missing or unknown, or a size or shape is wrong; the
   *   parameters are then left unchanged.
   * @throws Error after {@link TinyTransformer.dispose}.
   */
  loadStateDict(stateDict: StateDict): void;
  /** Copies of every parameter, under the names above. @throws Error after dispose. */
  stateDict(): Record<string, Tensor>;
  /**
   * The model's forward pass.
   *
   * @throws TypeError when tokens is not `{ data: Int32Array, shape }`.
   * @throws RangeError when the shape is not `[B, T]` with B, T ≥ 1, or an id is outside `[0, vocabSize)`.
   * @throws Error after {@link TinyTransformer.dispose}.
   */
  forward(tokens: Tokens): TinyTransformerOutput;
  /**
   * The loss and its gradient for every parameter; changes nothing.
   *
   * @param targets the id expected at every position, `[B, T]` like `tokens`.
   * @throws TypeError / RangeError as {@link TinyTransformer.forward}, for `tokens` and `targets` (whose shape must
   *   equal that of `tokens`). Error after dispose.
   */
  lossAndGrad(tokens: Tokens, targets: Tokens): LossAndGrad;
  /**
   * One step of Adam (PyTorch's `torch.optim.Adam`: betas 0.9 / 0.999, eps 1e-8, no weight decay) on this batch.
   * The optimizer state lives in the model, so successive calls continue one optimisation.
   *
   * @returns the loss before the update.
   * @throws TypeError / RangeError as {@link TinyTransformer.lossAndGrad}; RangeError for an `lr` that is not a
   *   positive finite float32 (TypeError when not a number). Error after dispose.
   */
  trainStep(tokens: Tokens, targets: Tokens, options?: TrainStepOptions): TrainStepResult;
  /** Frees this model's wasm memory. Calling it again does nothing; any other method then throws an Error. */
  dispose(): void;
  /** Same as {@link TinyTransformer.dispose}, for `using` declarations. */
  [Symbol.dispose](): void;
}

// The whole-model types (ModelConfig, Transformer, their options and results): models.d.ts.
export * from './models.js';
import type { CreateModelOptions, LoadModelFromBlobOptions, LoadModelOptions, Transformer } from './models.js';

/** A loaded attnlab WebAssembly instance, from {@link init}. */
export interface Attnlab {
  /** Which build was loaded. */
  readonly variant: Variant;
  /** The package version (as in package.json). */
  readonly version: string;
  /** Threads this instance computes on, the calling one included: 1 for `'simd'` and `'scalar'`. */
  readonly threads: number;
  /** Current size of this instance's wasm memory, in bytes (it grows on demand and never shrinks). */
  memoryBytes(): number;
  /**
   * Scaled dot-product attention, `softmax(Q Kᵀ · scale + mask) V`.
   *
   * @param query `(*batch, Lq, dk)`
   * @param key `(*batchKV, Lk, dk)` (`*batchKV` = `*batch`, or with `enableGQA` fewer heads in its last dimension)
   * @param value `(*batchKV, Lk, dv)`
   * @returns `output` `(*batch, Lq, dv)` and, when `needWeights` (default), `weights` `(*batch, Lq, Lk)`; `scores`
   *   with `returnScores`; `presentKey`/`presentValue` with `pastKey`/`pastValue`. A fully masked query row gets
   *   zero weights and a zero output row.
   * @throws TypeError for a wrong type (a plain Array or Float64Array where a Float32Array is required, an Array
   *   as `kvLengths`, …).
   * @throws RangeError for a wrong size, shape or value (an unknown `isCausal` or `returnScores` string, a bad
   *   `window`, `softcap` or `kvLengths` entry, key heads that do not divide query heads, …), or buffers that cannot
   *   fit in attnlab's wasm memory (capped at 2 GiB: the call is refused before anything is copied).
   */
  scaledDotProductAttention(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    options?: SdpaOptions,
  ): SdpaResult;
  /**
   * Backward pass of {@link Attnlab.scaledDotProductAttention}: the gradients of `sum(output ⊙ gradOutput)` for
   * query, key and value, with the forward's options. A fully masked query row has zero weights, so it passes
   * no gradient (zeros, never NaN); masked keys get zero gradient from the rows that mask them.
   *
   * @param gradOutput the upstream gradient, `(*batch, Lq, dv)`: the shape of the forward's `output`.
   * @returns `gradQuery` `(*batch, Lq, dk)`, `gradKey` `(*batchKV, Lk, dk)`, `gradValue` `(*batchKV, Lk, dv)`, and
   *   with a past `gradPastKey`, `gradPastValue` (their shapes). With `enableGQA` a key/value head's gradient sums
   *   over the query heads that read it.
   * @throws TypeError for a wrong type; RangeError for a wrong size, shape or value (e.g. a gradOutput whose shape
   *   is not the output's), as {@link Attnlab.scaledDotProductAttention}.
   */
  scaledDotProductAttentionBackward(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    gradOutput: TensorInput,
    options?: SdpaBackwardOptions,
  ): SdpaGradients;
  /**
   * Creates a `torch.nn.MultiheadAttention` holding PyTorch's default initialisation (Xavier-uniform projections,
   * zero biases) from a fixed seed, so `forward` works before `loadStateDict`. Dispose it when done.
   *
   * @throws TypeError for a wrong option type; RangeError for a bad dimension (e.g. embedDim not divisible by numHeads).
   */
  createMultiHeadAttention(options: MultiHeadAttentionOptions): MultiHeadAttention;
  /**
   * Creates the training demo's {@link TinyTransformer}, initialised like PyTorch (embedding N(0, 1), attention as
   * in `nn.MultiheadAttention`, readout U(±1/√E)) from a fixed seed. Dispose it when done.
   *
   * @throws TypeError for a wrong option type; RangeError for a bad dimension (e.g. an odd embedDim, or one not
   *   divisible by numHeads).
   */
  createTinyTransformer(options: TinyTransformerOptions): TinyTransformer;
  /**
   * A whole model of an `arch` ({@link ModelConfig}: GPT-2, the Llama family, Qwen3, BERT, RoBERTa), initialised
   * from `seed`.
   * @throws TypeError for a wrong option type or an option of another arch; RangeError for a bad value, or weights
   *   that cannot fit in wasm memory (before anything is allocated).
   */
  createModel(options: CreateModelOptions): Transformer;
  /**
   * A whole model from a Hugging Face `config.json` object and its tensors (`readSafetensors`); an encoder's task
   * (bert, roberta: {@link Transformer.task}) is the head its tensors hold.
   * @throws RangeError for an unknown model_type, a field attnlab does not compute (rope_scaling, mlp_bias,
   *   position_embedding_type, …), a missing, unknown or misshapen tensor, a tied copy (lm_head.weight, a masked-LM
   *   decoder) that differs from its tie, weights that cannot fit; TypeError for a missing config field or a wrong
   *   type.
   */
  loadModel(options: LoadModelOptions): Transformer;
  /**
   * The same from the `model.safetensors` `Blob` / `File` itself (or a {@link BlobLike}): the header is read and
   * every name, shape and dtype checked first, then each tensor is read from its own byte range and copied into
   * the model before the next is read, so the file's tensors are never held in JavaScript beside the model.
   * @throws (as a rejection) the errors above; a RangeError from `readSafetensors` for a file that is not one.
   */
  loadModel(options: LoadModelFromBlobOptions): Promise<Transformer>;
}

/**
 * Loads attnlab's WebAssembly and resolves to an instance. Memoised: the same options give the same instance;
 * the `'simd'` and `'scalar'` builds can be loaded side by side.
 *
 * @throws Error (as a rejection) naming the `.wasm` file and the URL it was loaded from, when loading fails.
 * @example
 * ```ts
 * import { init } from 'attnlab';
 * const attn = await init();
 * const { output } = attn.scaledDotProductAttention(q, k, v, { isCausal: true });
 * ```
 */
export declare function init(options?: InitOptions): Promise<Attnlab>;

// #region ESM-only: createRng, readSafetensors, writeSafetensors and fromHuggingFace are exported by the ES module
// entry only (the CommonJS entry offers init(); in CommonJS use `const { readSafetensors } = await import('attnlab')`).
// The build drops this region from index.d.cts.
export * from './interop.js';

/**
 * {@link createRng}'s generator: each call gives the next uniform number in [0, 1) (a multiple of 2^-32). `int` and
 * `normal` draw from the same stream.
 */
export interface Rng {
  (): number;
  /**
   * An integer in 0 … n − 1: `Math.floor(rng() * n)` (one draw).
   * @throws TypeError when `n` is not a number; RangeError when it is not an integer in [1, 2^32].
   */
  int(n: number): number;
  /** A standard normal number, N(0, 1), by Box–Muller (two draws). */
  normal(): number;
}

/**
 * The package's seeded generator, xoshiro128** (its state from splitmix32 over the seed's two 32-bit halves):
 * `generate` samples and `train`'s sampler draws its windows from it. The same seed gives the same numbers in every
 * engine, page and worker. Plain JavaScript: needs no `init()`.
 *
 * @param seed a non-negative safe integer (default 0).
 * @throws TypeError when `seed` is not a number; RangeError when it is not a non-negative safe integer.
 * @example
 * ```ts
 * const rng = createRng(42);
 * const u = rng(), die = rng.int(6) + 1, z = rng.normal();
 * ```
 */
export declare function createRng(seed?: number): Rng;
// #endregion ESM-only
