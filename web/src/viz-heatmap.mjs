// @ts-check
// The one heat-map painter of attnlab/viz (viz.mjs) and of the demo page: an (L, S) matrix of weights on a canvas
// with row (query) and column (key) labels, a cross over masked cells, the value inside cells large enough, on a
// viridis-like ramp (readable with red-green colour blindness). Painting only: hover and keyboard belong to callers.

/** Viridis anchors (0 … 1) as [r, g, b]; values in between are interpolated. */
const kRamp = '440154 482878 3e4a89 31688e 26828e 1f9e89 35b779 6dcd59 b4de2c fde725'
  .split(' ')
  .map((hex) => [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)));
/** Okabe–Ito: distinguishable with every common kind of colour blindness. */
const kHeadColours = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

/**
 * Writes the colour of weight v (see weightColour) as opaque RGBA into px at byte k.
 * @param {Uint8ClampedArray} px
 * @param {number} k
 * @param {number} v
 */
function putColour(px, k, v) {
  px[k + 3] = 255;
  if (!(v >= 0)) {
    const nan = Number.isNaN(v);
    for (let c = 0; c < 3; ++c) px[k + c] = nan ? 153 : kRamp[0][c];
    return;
  }
  const x = Math.min(v, 1) * (kRamp.length - 1);
  const i = Math.min(Math.floor(x), kRamp.length - 2);
  const f = x - i;
  const a = kRamp[i];
  const b = kRamp[i + 1];
  for (let c = 0; c < 3; ++c) px[k + c] = Math.round(a[c] + (b[c] - a[c]) * f);
}

/** @type {Uint32Array | null} */
let lut = null;
/**
 * putColour of 4,097 weights k / 4096, then NaN's grey, as RGBA words in the byte order of an ImageData (so that
 * a map's pixels are one table look-up a cell; at most 0.2 of a colour level from putColour's).
 */
function colourTable() {
  if (lut) return lut;
  const px = new Uint8ClampedArray(4 * 4098);
  for (let k = 0; k <= 4096; ++k) putColour(px, 4 * k, k / 4096);
  putColour(px, 4 * 4097, NaN);
  lut = new Uint32Array(px.buffer);
  return lut;
}
/** colourTable's entry for weight v. */
const lutIndex = (/** @type {number} */ v) => (v >= 0 ? Math.round(Math.min(v, 1) * 4096) : Number.isNaN(v) ? 4097 : 0);

/** @param {number} v a weight in [0, 1] (clamped; NaN shows as grey) */
export function weightColour(v) {
  if (Number.isNaN(v)) return '#999';
  const px = new Uint8ClampedArray(4);
  putColour(px, 0, v);
  return `rgb(${px[0]},${px[1]},${px[2]})`;
}

/** @param {number} h */
export function headColour(h) {
  return kHeadColours[h % kHeadColours.length];
}

/** A label cut to n characters (by code point), with an ellipsis. */
function shorten(/** @type {string} */ s, /** @type {number} */ n) {
  const chars = [...s];
  return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : s;
}

/**
 * The map as pixels: one per cell, or, for cells under 1 px, one per block of cells showing the block's largest
 * weight (so that a sharp line of attention stays visible in a thumbnail).
 * @param {ArrayLike<number>} data
 * @param {number} offset
 * @param {number} L
 * @param {number} S
 * @param {number} cell cell size in px
 */
export function cellPixels(data, offset, L, S, cell) {
  const f = Math.min(1, cell);
  const width = Math.max(1, Math.ceil(S * f - 1e-9));
  const height = Math.max(1, Math.ceil(L * f - 1e-9));
  const pixels = new Uint8ClampedArray(width * height * 4);
  const words = new Uint32Array(pixels.buffer);
  const table = colourTable();
  if (f === 1) {
    for (let k = 0; k < L * S; ++k) words[k] = table[lutIndex(data[offset + k])];
    return { width, height, pixels };
  }
  const best = new Float32Array(width * height).fill(-Infinity);
  for (let i = 0; i < L; ++i) {
    const row = Math.floor(i * f) * width;
    for (let j = 0; j < S; ++j) {
      const v = data[offset + i * S + j];
      const p = row + Math.floor(j * f);
      if (v > best[p] || Number.isNaN(v)) best[p] = v;
    }
  }
  for (let p = 0; p < best.length; ++p) words[p] = table[lutIndex(best[p])];
  return { width, height, pixels };
}

/**
 * cellPixels in a canvas of their size (null without a 2-D context).
 * @param {Document} doc
 * @param {ReturnType<typeof cellPixels>} image
 */
export function pixelCanvas(doc, image) {
  const canvas = doc.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const ctx = canvas.getContext('2d');
  if (!ctx) return null;
  ctx.putImageData(new ImageData(image.pixels, image.width, image.height), 0, 0);
  return canvas;
}

/**
 * What heatMap painted into a canvas, for its SVG (heatMapSVG): the data, the labels as drawn and the geometry.
 * image: the cells' pixels (cellPixels) when they were painted as one image.
 * @type {WeakMap<HTMLCanvasElement, ReturnType<typeof layout> & { data: ArrayLike<number>, offset: number,
 *   L: number, S: number, dim: (k: number) => boolean, image: HTMLCanvasElement | null }>}
 */
const kPainted = new WeakMap();

/**
 * Where everything goes: label margins, cell size, label font and orientation.
 * @param {CanvasRenderingContext2D} probe
 * @param {Parameters<typeof heatMap>[2]} o
 */
function layout(probe, o) {
  const S = o.cols;
  const n = o.labelLength ?? 9;
  const rowLabels = (o.rowLabels ?? []).map((s) => shorten(String(s), n));
  const colLabels = (o.colLabels ?? []).map((s) => shorten(String(s), n));
  probe.font = '12px system-ui, sans-serif';
  const widest = (/** @type {string[]} */ labels) => Math.max(0, ...labels.map((s) => probe.measureText(s).width));
  const left = rowLabels.length ? Math.ceil(Math.min(90, widest(rowLabels))) + 8 : 0;
  const colWidth = widest(colLabels);
  const cell = o.cell ?? Math.max(8, Math.min(34, Math.floor(((o.width ?? 240) - left) / Math.max(S, 1))));
  const flat = colWidth <= cell - 2; // short labels (CJK characters, letters) stay horizontal
  const top = !colLabels.length ? 0 : flat ? 18 : Math.ceil(Math.min(90, colWidth)) + 8;
  const width = left + cell * S + 2;
  const height = top + cell * o.rows + 2;
  const fontSize = Math.min(12, Math.max(9, cell - 4));
  return { left, top, cell, width, height, flat, fontSize, rowLabels, colLabels };
}

/**
 * Paints data[offset + i·S + j] for i < L, j < S into `canvas` (sized here, sharp on high-DPI screens).
 * Returns the geometry in CSS px, for callers' hit tests: cell (i, j) spans [left + j·cell, +cell) × [top + i·cell, +cell).
 * Cells of 10 px or less are painted as one image (one pixel a cell, scaled), so a 1,024 × 1,024 map takes
 * milliseconds; cells under 1 px show the largest weight of the cells each pixel covers.
 * @param {HTMLCanvasElement} canvas
 * @param {ArrayLike<number>} data
 * @param {{ rows: number, cols: number, offset?: number, rowLabels?: string[], colLabels?: string[],
 *           cell?: number, width?: number, labelLength?: number, masked?: (i: number, j: number) => boolean,
 *           dim?: (k: number) => boolean, cursor?: [number, number] | null, reuse?: boolean }} o
 *   cell: cell size in px, or fit `width`; no labels: no margins; dim(k): label k greyed; cursor: a cell outlined;
 *   reuse: the values are unchanged since this canvas's last paint of the same array (e.g. only the cursor moved),
 *   so the cells' image is reused
 */
export function heatMap(canvas, data, o) {
  const { rows: L, cols: S } = o;
  const offset = o.offset ?? 0;
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const g = layout(ctx, o);
  const { left, top, cell, width, height } = g;
  const dpr = Math.min(2, (typeof window === 'object' && window.devicePixelRatio) || 1);
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  const dim = o.dim ?? (() => false);
  paintLabels(ctx, g, dim);
  const prev = o.reuse ? kPainted.get(canvas) : undefined;
  const same = prev && prev.data === data && prev.offset === offset && prev.L === L && prev.S === S;
  /** @type {HTMLCanvasElement | null} */
  let image = null;
  if (cell <= 10) {
    image =
      same && prev.cell === cell ? prev.image : pixelCanvas(canvas.ownerDocument, cellPixels(data, offset, L, S, cell));
    ctx.imageSmoothingEnabled = false;
    if (image) ctx.drawImage(image, left, top, cell * S, cell * L);
  }
  for (let i = 0; i < L && (cell > 10 || o.masked); i++) {
    for (let j = 0; j < S; j++) paintCell(ctx, g, data[offset + i * S + j], i, j, o.masked);
  }
  if (o.cursor) {
    // A box of the cell, or, for cells under 6 px, of 6 px around its centre (visible at 1 px a cell).
    const side = Math.max(cell, 6);
    const x = left + (o.cursor[1] + 0.5) * cell - side / 2;
    const y = top + (o.cursor[0] + 0.5) * cell - side / 2;
    ctx.strokeStyle = '#f00';
    ctx.lineWidth = 2;
    ctx.strokeRect(x + 1, y + 1, side - 2, side - 2);
    ctx.lineWidth = 1;
  }
  canvas.dataset.rows = String(L);
  canvas.dataset.cols = String(S);
  kPainted.set(canvas, { ...g, data, offset, L, S, dim, image });
  return { left, top, cell, width, height };
}

/**
 * Row labels right-aligned at the left, column labels above (horizontal when they fit a cell, else rotated).
 * @param {CanvasRenderingContext2D} ctx
 * @param {ReturnType<typeof layout>} g
 * @param {(k: number) => boolean} dim
 */
function paintLabels(ctx, g, dim) {
  const { left, top, cell, flat } = g;
  ctx.font = `${g.fontSize}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  g.rowLabels.forEach((s, i) => {
    ctx.fillStyle = dim(i) ? '#aaa' : '#333';
    ctx.fillText(s, left - 4, top + i * cell + cell / 2);
  });
  ctx.textAlign = flat ? 'center' : 'left';
  g.colLabels.forEach((s, j) => {
    ctx.fillStyle = dim(j) ? '#aaa' : '#333';
    if (flat) return ctx.fillText(s, left + j * cell + cell / 2, top / 2);
    ctx.save();
    ctx.translate(left + j * cell + cell / 2, top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(s, 0, 0);
    ctx.restore();
  });
}

/**
 * Cell (i, j) where cells are larger than 10 px (smaller ones came in one image), its cross when masked, and its
 * value inside when it fits.
 * @param {CanvasRenderingContext2D} ctx
 * @param {ReturnType<typeof layout>} g
 * @param {number} v
 * @param {number} i
 * @param {number} j
 * @param {((i: number, j: number) => boolean) | undefined} masked
 */
function paintCell(ctx, g, v, i, j, masked) {
  const { cell } = g;
  const gap = cell > 10 ? 1 : 0;
  const x = g.left + j * cell;
  const y = g.top + i * cell;
  if (gap) {
    ctx.fillStyle = weightColour(v);
    ctx.fillRect(x, y, cell - gap, cell - gap);
  }
  if (masked && masked(i, j)) {
    ctx.strokeStyle = 'rgba(255,255,255,0.6)';
    ctx.beginPath();
    ctx.moveTo(x + 1, y + cell - gap - 1);
    ctx.lineTo(x + cell - gap - 1, y + 1);
    ctx.stroke();
  }
  if (cell >= 30 && v >= 0.005) {
    ctx.fillStyle = v > 0.6 ? '#223' : '#fff';
    ctx.textAlign = 'center';
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillText(v.toFixed(2).replace(/^0/, ''), x + cell / 2, y + cell / 2);
  }
}

/** Maps of more cells than this are exported as one embedded PNG instead of one rect a cell. */
export const kSvgCells = 4096;

/** A number for an SVG attribute (at most 2 decimals). */
export const num = (/** @type {number} */ x) => String(Math.round(x * 100) / 100);

/**
 * Text for XML: the five special characters escaped, and characters XML cannot hold (controls, lone surrogates)
 * replaced by U+FFFD.
 * @param {unknown} s
 */
export function escapeXml(s) {
  return String(s)
    .replace(kNotXml, '\uFFFD')
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
/* eslint-disable no-control-regex -- the control characters are what it finds */
const kNotXml =
  /[\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/* eslint-enable no-control-regex */

/**
 * An SVG text element at (x, y), vertically centred there.
 * @param {number} x
 * @param {number} y
 * @param {unknown} s
 * @param {string} attrs more attributes (anchor, font, fill)
 */
export const svgText = (x, y, s, attrs) =>
  `<text x="${num(x)}" y="${num(y)}" dominant-baseline="central" ${attrs}>${escapeXml(s)}</text>`;

/**
 * The map heatMap last painted into `canvas` as SVG elements in its CSS px (origin at its top-left): a white
 * background, the labels as text, and the cells as rects, or, past kSvgCells cells, as one embedded PNG of
 * cellPixels (one pixel a cell, drawn unsmoothed), with its size; null for a canvas heatMap has not painted. The
 * cursor is left out.
 * @param {HTMLCanvasElement} canvas
 * @returns {{ svg: string, width: number, height: number } | null}
 */
export function heatMapSVG(canvas) {
  const p = kPainted.get(canvas);
  if (!p) return null;
  const { left, top, cell, L, S } = p;
  const font = `font-family="system-ui, sans-serif" font-size="${p.fontSize}"`;
  const fill = (/** @type {number} */ k) => `fill="${p.dim(k) ? '#aaa' : '#333'}"`;
  const out = [`<rect width="${num(p.width)}" height="${num(p.height)}" fill="#fff"/>`];
  p.rowLabels.forEach((s, i) =>
    out.push(svgText(left - 4, top + (i + 0.5) * cell, s, `text-anchor="end" ${font} ${fill(i)}`)),
  );
  p.colLabels.forEach((s, j) => {
    const x = left + (j + 0.5) * cell;
    if (p.flat) return out.push(svgText(x, top / 2, s, `text-anchor="middle" ${font} ${fill(j)}`));
    out.push(
      `<g transform="translate(${num(x)} ${num(top - 4)}) rotate(-90)">${svgText(0, 0, s, `${font} ${fill(j)}`)}</g>`,
    );
  });
  const pixels = () => p.image ?? pixelCanvas(canvas.ownerDocument, cellPixels(p.data, p.offset, L, S, cell));
  const image = L * S > kSvgCells ? pixels() : null;
  if (image) {
    const size = `x="${num(left)}" y="${num(top)}" width="${num(cell * S)}" height="${num(cell * L)}"`;
    const style = 'preserveAspectRatio="none" style="image-rendering:pixelated"';
    out.push(`<image ${size} ${style} href="${image.toDataURL('image/png')}"/>`);
    return { svg: out.join(''), width: p.width, height: p.height };
  }
  const side = num(cell - (cell > 10 ? 1 : 0));
  for (let i = 0; i < L; ++i) {
    for (let j = 0; j < S; ++j) {
      const at = `x="${num(left + j * cell)}" y="${num(top + i * cell)}"`;
      out.push(`<rect ${at} width="${side}" height="${side}" fill="${weightColour(p.data[p.offset + i * S + j])}"/>`);
    }
  }
  return { svg: out.join(''), width: p.width, height: p.height };
}
