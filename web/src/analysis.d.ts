// Type declarations of attnlab/analysis (docs/api.md, "Rollout and flow: attnlab/analysis"): pure functions of the
// attention lists a model's forward returns. Needs no wasm and no init().

/**
 * One layer's attention weights `(B, H, T, T)`: attnlab's `attentions[l]` (`{ data, shape }`) or a transformers.js /
 * onnxruntime-web tensor (`{ data, dims }`).
 */
export type AttentionsInput =
  | { data: Float32Array | Float64Array; shape: readonly number[] }
  | { data: Float32Array | Float64Array; dims: readonly number[] };

/** A result: float32, row-major, like attnlab's `Tensor`. */
export interface AnalysisTensor {
  data: Float32Array;
  shape: number[];
}

export interface RolloutOptions {
  /**
   * The weight of the residual connection: Â_l = residual·I + (1 − residual)·Ā_l, each row renormalised to sum 1
   * (a row that sums to 0 stays 0). In [0, 1]; default 0.5.
   */
  residual?: number;
  /** Ā_l is the mean over these heads: 'mean' (every head, the default) or distinct indices in [0, H), not empty. */
  heads?: 'mean' | readonly number[];
}

export interface AttentionFlowOptions extends RolloutOptions {
  /** The position whose node after the last layer is the flow's source: an integer in [0, T). Required. */
  query: number;
}

/** attentionFlow's largest sequence length: 256. */
export declare const kMaxFlowLength: number;

/**
 * Attention rollout (Abnar & Zuidema 2020): R = Â_{L−1} ⋯ Â_1 Â_0 for each batch row, computed in float64.
 * R[b, i, j] is how much position i's state after the last layer draws on input position j.
 * @param attentions every layer's weights `(B, H, T, T)`, one shape; no `null` (a forward that asked for some layers
 *   only): pass `outputAttentions: true`.
 * @returns `(B, T, T)`
 * @throws TypeError / RangeError naming the argument: not an array, a null layer, layers of different shapes,
 *   non-square maps, weights of the chosen heads negative or not finite, `residual` outside [0, 1], `heads` out of
 *   range, repeated or empty.
 */
export declare function rollout(attentions: readonly AttentionsInput[], options?: RolloutOptions): AnalysisTensor;

/**
 * Attention flow (Abnar & Zuidema 2020): a node per (layer boundary, position); an edge from position i after
 * layer l to position j before it, of capacity Â_l[i][j]. Entry j is the max flow from `query`'s node after the last
 * layer to position j's input node, one flow per j (Dinic's algorithm, float64), not normalised: each is in [0, 1].
 * @param attentions as for {@link rollout}, with T ≤ 256.
 * @returns `(B, T)`
 * @throws as {@link rollout}, and RangeError when T > 256 or `query` is outside [0, T); TypeError when `query` is
 *   missing.
 */
export declare function attentionFlow(
  attentions: readonly AttentionsInput[],
  options: AttentionFlowOptions,
): AnalysisTensor;
