// Type declarations of attnlab's public JavaScript API (docs/api.md). Hand-written; index.d.cts is an exact copy
// for CommonJS consumers (a test checks that they stay identical).

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

/** Which WebAssembly build runs: with WebAssembly SIMD128, or without (for runtimes that lack SIMD). */
export type Variant = 'simd' | 'scalar';

/** Options of {@link init}. */
export interface InitOptions {
  /**
   * Which build to load. `'auto'` (the default) picks `'simd'` when the runtime supports WebAssembly SIMD
   * (checked with `WebAssembly.validate`), else `'scalar'`. Asking for `'simd'` where SIMD is unsupported
   * rejects with an `Error`.
   */
  variant?: 'auto' | Variant;
  /**
   * Where the `.wasm` files are, when not next to the package's JavaScript (the default, found through
   * `import.meta.url`, which bundlers such as Vite follow and emit as assets).
   *
   * - a string: a URL prefix to which the file name (`attnlab-simd.wasm` or `attnlab-scalar.wasm`) is appended,
   *   usually a folder URL ending in `/`, e.g. `'/assets/attnlab/'` or `'https://cdn.example.com/attnlab@0.1.0/dist/'`.
   *   Relative URLs resolve against the page (in Node: the current directory; a plain file path also works there).
   * - a record `{ 'attnlab-simd.wasm': url, 'attnlab-scalar.wasm': url }`: one URL per file; a file not
   *   listed is loaded from its default place.
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

/** Options of {@link Attnlab.scaledDotProductAttention}. */
export interface SdpaOptions {
  /**
   * Mask of shape `(Lq, Lk)` (broadcast over the batch) or `(*batch, Lq, Lk)`.
   * `Uint8Array`: **1 = may attend, 0 = masked out**. `Float32Array`: added to the scaled logits.
   */
  attnMask?: Mask | null;
  /** Causal masking: query i sees keys j ≤ i (top-left aligned). Combines with `attnMask`. Default false. */
  isCausal?: boolean;
  /** Factor multiplying Q·Kᵀ; a finite number. Default `1 / sqrt(dk)`. */
  scale?: number;
  /** Whether to return the weights `(*batch, Lq, Lk)`. Default true; false saves their memory. */
  needWeights?: boolean;
}

/** Constructor options of {@link Attnlab.createMultiHeadAttention}: those of `torch.nn.MultiheadAttention` (dropout is always 0, eval mode). */
export interface MultiHeadAttentionOptions {
  /** E: the model dimension, a positive integer divisible by `numHeads`. */
  embedDim: number;
  /** H: number of heads, a positive integer; each head has `embedDim / numHeads` features. */
  numHeads: number;
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
}

/** Options of {@link MultiHeadAttention.forward}. */
export interface MultiHeadAttentionForwardOptions {
  /**
   * Keys to ignore, per batch item: `(N, S)`, or `(S)` for unbatched inputs (always batch first).
   * `Uint8Array`: **1 = masked out** (padding). `Float32Array`: added to the logits.
   */
  keyPaddingMask?: Mask | null;
  /**
   * `(L, S)` or `(N * numHeads, L, S)` (index `n * numHeads + h`). `Uint8Array`: **1 = masked out**.
   * `Float32Array`: added to the logits (`-Infinity` excludes). Positions appended by `addBiasKV` /
   * `addZeroAttn` are never masked.
   */
  attnMask?: Mask | null;
  /** Whether to return attention weights. Default true. */
  needWeights?: boolean;
  /** Weights averaged over heads `(N, L, S')` (true, the default) or per head `(N, H, L, S')` (false). */
  averageAttnWeights?: boolean;
}

/**
 * A PyTorch-style state dict: parameter name → values. The names are PyTorch's `state_dict()` keys:
 * `in_proj_weight` `(3E, E)` (or `q_proj_weight` `(E, E)`, `k_proj_weight` `(E, kdim)`, `v_proj_weight` `(E, vdim)`
 * when kdim or vdim differ from E), `in_proj_bias` `(3E)`, `out_proj.weight` `(E, E)`, `out_proj.bias` `(E)`
 * (with `bias`), `bias_k`, `bias_v` `(1, 1, E)` (with `addBiasKV`).
 */
export type StateDict = Record<string, Float32Array | Tensor>;

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
  forward(query: Tensor, key: Tensor, value: Tensor, options?: MultiHeadAttentionForwardOptions): AttentionResult;
  /** Frees this module's wasm memory. Calling it again does nothing; any other method then throws an Error. */
  dispose(): void;
  /** Same as {@link MultiHeadAttention.dispose}, for `using` declarations. */
  [Symbol.dispose](): void;
}

/** A loaded attnlab WebAssembly instance, from {@link init}. */
export interface Attnlab {
  /** Which build was loaded. */
  readonly variant: Variant;
  /** The package version (as in package.json). */
  readonly version: string;
  /** Current size of this instance's wasm memory, in bytes (it grows on demand and never shrinks). */
  memoryBytes(): number;
  /**
   * Scaled dot-product attention, `softmax(Q Kᵀ · scale + mask) V`.
   *
   * @param query `(*batch, Lq, dk)`
   * @param key `(*batch, Lk, dk)`
   * @param value `(*batch, Lk, dv)`
   * @returns `output` `(*batch, Lq, dv)` and, when `needWeights` (default), `weights` `(*batch, Lq, Lk)`.
   *   A fully masked query row gets zero weights and a zero output row.
   * @throws TypeError for a wrong type (a plain Array or Float64Array where a Float32Array is required, …).
   * @throws RangeError for a wrong size, shape or value, or buffers that cannot fit in the 4 GiB of wasm memory.
   */
  scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, options?: SdpaOptions): AttentionResult;
  /**
   * Creates a `torch.nn.MultiheadAttention` holding PyTorch's default initialisation (Xavier-uniform projections,
   * zero biases) from a fixed seed, so `forward` works before `loadStateDict`. Dispose it when done.
   *
   * @throws TypeError for a wrong option type; RangeError for a bad dimension (e.g. embedDim not divisible by numHeads).
   */
  createMultiHeadAttention(options: MultiHeadAttentionOptions): MultiHeadAttention;
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
