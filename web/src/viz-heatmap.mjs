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

/** @param {number} v a weight in [0, 1] (clamped; NaN shows as grey) */
export function weightColour(v) {
  if (!(v >= 0)) return Number.isNaN(v) ? '#999' : `rgb(${kRamp[0].join(',')})`;
  const x = Math.min(v, 1) * (kRamp.length - 1);
  const i = Math.min(Math.floor(x), kRamp.length - 2);
  const f = x - i;
  const c = kRamp[i].map((a, k) => Math.round(a + (kRamp[i + 1][k] - a) * f));
  return `rgb(${c.join(',')})`;
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
 * Paints data[offset + i·S + j] for i < L, j < S into `canvas` (sized here, sharp on high-DPI screens).
 * Returns the geometry in CSS px, for callers' hit tests: cell (i, j) spans [left + j·cell, +cell) × [top + i·cell, +cell).
 * @param {HTMLCanvasElement} canvas
 * @param {ArrayLike<number>} data
 * @param {{ rows: number, cols: number, offset?: number, rowLabels?: string[], colLabels?: string[],
 *           cell?: number, width?: number, labelLength?: number, masked?: (i: number, j: number) => boolean,
 *           dim?: (k: number) => boolean, cursor?: [number, number] | null }} o
 *   cell: cell size in px, or fit `width`; no labels: no margins; dim(k): label k greyed; cursor: a cell outlined
 */
export function heatMap(canvas, data, o) {
  const { rows: L, cols: S } = o;
  const offset = o.offset ?? 0;
  const n = o.labelLength ?? 9;
  const rowLabels = (o.rowLabels ?? []).map((s) => shorten(String(s), n));
  const colLabels = (o.colLabels ?? []).map((s) => shorten(String(s), n));
  const probe = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  probe.font = '12px system-ui, sans-serif';
  const widest = (/** @type {string[]} */ labels) => Math.max(0, ...labels.map((s) => probe.measureText(s).width));
  const left = rowLabels.length ? Math.ceil(Math.min(90, widest(rowLabels))) + 8 : 0;
  const colWidth = widest(colLabels);
  const cell = o.cell ?? Math.max(8, Math.min(34, Math.floor(((o.width ?? 240) - left) / Math.max(S, 1))));
  const flat = colWidth <= cell - 2; // short labels (CJK characters, letters) stay horizontal
  const top = !colLabels.length ? 0 : flat ? 18 : Math.ceil(Math.min(90, colWidth)) + 8;
  const width = left + cell * S + 2;
  const height = top + cell * L + 2;
  const dpr = Math.min(2, (typeof window === 'object' && window.devicePixelRatio) || 1);
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = probe;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  ctx.font = `${Math.min(12, Math.max(9, cell - 4))}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  const dim = o.dim ?? (() => false);
  rowLabels.forEach((s, i) => {
    ctx.fillStyle = dim(i) ? '#aaa' : '#333';
    ctx.fillText(s, left - 4, top + i * cell + cell / 2);
  });
  ctx.textAlign = flat ? 'center' : 'left';
  colLabels.forEach((s, j) => {
    ctx.fillStyle = dim(j) ? '#aaa' : '#333';
    if (flat) return ctx.fillText(s, left + j * cell + cell / 2, top / 2);
    ctx.save();
    ctx.translate(left + j * cell + cell / 2, top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(s, 0, 0);
    ctx.restore();
  });
  const gap = cell > 10 ? 1 : 0;
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < S; j++) {
      const v = data[offset + i * S + j];
      const x = left + j * cell;
      const y = top + i * cell;
      ctx.fillStyle = weightColour(v);
      ctx.fillRect(x, y, cell - gap, cell - gap);
      if (o.masked && o.masked(i, j)) {
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
  }
  if (o.cursor) {
    ctx.strokeStyle = '#f00';
    ctx.lineWidth = 2;
    ctx.strokeRect(left + o.cursor[1] * cell + 1, top + o.cursor[0] * cell + 1, cell - 2, cell - 2);
    ctx.lineWidth = 1;
  }
  canvas.dataset.rows = String(L);
  canvas.dataset.cols = String(S);
  return { left, top, cell, width, height };
}
