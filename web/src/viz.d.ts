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
  /**
   * The view as a standalone SVG document (xmlns, width, height, viewBox in CSS px): heat maps with their captions,
   * labels as text (XML-escaped) and the colour scale; a map of more than 4,096 cells comes as one embedded PNG
   * image (one pixel a cell) instead of one rect a cell. tokenLinks: its legend chips, one line a link, the tokens.
   * Maps not yet painted (large views paint on demand) are painted first.
   * @throws Error for heat maps in a DOM without a 2-D canvas (maps are exported as painted).
   */
  toSVG(): string;
  /**
   * toSVG() rasterised in a browser canvas (`scale` × its size, default 1) and encoded as PNG (canvas.toBlob).
   * Rejects with an Error where there is no 2-D canvas (Node), with a RangeError for a scale that is not positive.
   */
  toPNG(options?: { scale?: number }): Promise<Blob>;
}

/** The words a view shows; pass some or all in `options.text` to translate them. */
export interface VizText {
  /** Caption and legend of head h. Default `head ${h}`. */
  head: (h: number) => string;
  /** Caption of the mean over heads. Default 'mean of heads'. */
  mean: string;
  /** Caption of a modelGrid map. Default `layer ${l} head ${h}`. */
  layerHead: (l: number, h: number) => string;
  /** Tooltip and announcement of a cell. Default `${caption}: query ${query} → key ${key}: ${value}`. */
  cell: (caption: string, query: string, key: string, value: string) => string;
  /** tokenLinks' announcement of a query with each head's strongest key. Default `query ${token}: ${best}`. */
  query: (token: string, best: string) => string;
}

export interface HeadMapsOptions {
  /** Translations of the view's words. */
  text?: Partial<VizText>;
  /** Row labels (one per query); default 0 … Lq-1. */
  queryTokens?: string[];
  /** Column labels (one per key); default queryTokens. */
  keyTokens?: string[];
  /** Also draw the mean over heads (PyTorch's `average_attn_weights` diagnostic). Default true when H > 1. */
  average?: boolean;
  /** Cell size in CSS px; default fits `width` (4 to 28 px), or 1,024 px / Lk where 4 px cells would pass 1,024 px. */
  cellSize?: number;
  /** Width in CSS px one map's cells should take; default 240. */
  width?: number;
}

export interface TokenLinksOptions {
  /** Translations of the view's words. */
  text?: Partial<VizText>;
  queryTokens?: string[];
  keyTokens?: string[];
  /** Links with a weight below this are not drawn. Default 0.01. */
  threshold?: number;
  /** Height of one token row in CSS px. Default 20. */
  rowHeight?: number;
  /** Only these heads are drawn (for a caller with toggles of its own). Default: all. */
  heads?: number[];
  /** Show the legend's head toggles. Default true. */
  legend?: boolean;
}

export interface ModelGridOptions {
  /** Translations of the view's words. */
  text?: Partial<VizText>;
  queryTokens?: string[];
  keyTokens?: string[];
  /** Cell size of the thumbnails in CSS px; default fits about 96 px (2 to 8 px, or 96 px / Lk past 96 keys). */
  cellSize?: number;
}

/**
 * One heat map per head of `weights` `(H, Lq, Lk)` (leading 1s, e.g. a batch of one, are dropped), plus their mean.
 * Hover shows the value; Tab then arrow keys move a cursor and announce it. A view of more than 2^20 cells paints
 * each map when it comes near the viewport (the mean computed then); the root's `data-painted` counts painted maps.
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

/** Options of {@link heatMap}. */
export interface HeatMapOptions {
  rows: number;
  cols: number;
  /** Where the (rows, cols) matrix starts in `data`. Default 0. */
  offset?: number;
  /** Row (query) labels; none: no left margin. */
  rowLabels?: string[];
  /** Column (key) labels; none: no top margin. */
  colLabels?: string[];
  /** Cell size in CSS px; default: fit `width` (default 240). */
  cell?: number;
  width?: number;
  /** Characters kept per label. Default 9. */
  labelLength?: number;
  /** Cells drawn crossed (masked). */
  masked?: (i: number, j: number) => boolean;
  /** Labels drawn grey. */
  dim?: (k: number) => boolean;
  /** A cell outlined (a keyboard cursor). */
  cursor?: [number, number] | null;
  /**
   * The values are those of this canvas's last paint (the same array, offset and shape, unchanged: e.g. only the
   * cursor moved), so the cells' image is reused instead of recomputed. Default false.
   */
  reuse?: boolean;
}

/**
 * The painter under every view: paints a (rows, cols) matrix into a canvas (sized here) and returns its geometry in
 * CSS px for hit tests: cell (i, j) spans `[left + j·cell, +cell) × [top + i·cell, +cell)`. Painting only. Cells of
 * 10 px or less are painted as one image (a pixel a cell, scaled); cells under 1 px (a fractional `cell`) show the
 * largest weight of the cells each pixel covers, so that a sharp line of attention stays visible.
 */
export declare function heatMap(
  canvas: HTMLCanvasElement,
  data: ArrayLike<number>,
  options: HeatMapOptions,
): { left: number; top: number; cell: number; width: number; height: number };
