// Type declarations of attnlab/viz (docs/api.md, "Views"): attention weights drawn into a page. Framework-free;
// needs no wasm and no init().

/** Weights as attnlab returns them (`{ data, shape }`) or as onnxruntime-web and transformers.js hold them (`{ data, dims }`). */
export type WeightsInput =
  | { data: Float32Array | Float64Array; shape: readonly number[] }
  | { data: Float32Array | Float64Array; dims: readonly number[] };

/** What every view returns. */
export interface View {
  /** The root element the view appended to the given element. */
  readonly element: HTMLElement;
  /** Redraws with new weights (the shape may change). */
  update(weights: WeightsInput | WeightsInput[]): void;
  /** Removes the root element and every listener the view added. */
  destroy(): void;
}

export interface HeadMapsOptions {
  /** Row labels (one per query); default 0 … Lq-1. */
  queryTokens?: string[];
  /** Column labels (one per key); default queryTokens. */
  keyTokens?: string[];
  /** Also draw the mean over heads (PyTorch's `average_attn_weights` diagnostic). Default true when H > 1. */
  average?: boolean;
  /** Cell size in CSS px; default fits `width`. */
  cellSize?: number;
  /** Width in CSS px one map's cells should take; default 240. */
  width?: number;
}

export interface TokenLinksOptions {
  queryTokens?: string[];
  keyTokens?: string[];
  /** Links with a weight below this are not drawn. Default 0.01. */
  threshold?: number;
  /** Height of one token row in CSS px. Default 20. */
  rowHeight?: number;
}

export interface ModelGridOptions {
  queryTokens?: string[];
  keyTokens?: string[];
  /** Cell size of the thumbnails in CSS px; default fits about 96 px. */
  cellSize?: number;
}

/**
 * One heat map per head of `weights` `(H, Lq, Lk)` (leading 1s, e.g. a batch of one, are dropped), plus their mean.
 * Hover shows the value; Tab then arrow keys move a cursor and announce it.
 * @throws TypeError / RangeError naming `weights` when they are not a tensor of that shape.
 */
export declare function headMaps(element: HTMLElement, weights: WeightsInput, options?: HeadMapsOptions): View;

/** BertViz's head view: query tokens linked to key tokens, one Okabe–Ito colour a head; legend buttons toggle heads. */
export declare function tokenLinks(element: HTMLElement, weights: WeightsInput, options?: TokenLinksOptions): View;

/**
 * BertViz's model view: a layers × heads grid of small heat maps of `(layers, H, Lq, Lk)`, or of one `(H, Lq, Lk)`
 * tensor per layer (transformers.js's `attentions`).
 */
export declare function modelGrid(element: HTMLElement, weights: WeightsInput | WeightsInput[], options?: ModelGridOptions): View;

/** The colour of a weight in [0, 1] on the views' viridis-like ramp (a CSS colour). */
export declare function weightColour(value: number): string;
/** The colour of head h (Okabe–Ito). */
export declare function headColour(h: number): string;
