// @ts-check
// Heat maps of the page, painted by attnlab/viz's heatMap (the package's one painter, also behind headMaps): an
// L × S weight matrix with query (row) and key (column) labels, crossed cells where masked, numbers inside cells large
// enough, and a localised tooltip on hover. Used by the multi-head, decoding and training parts. The matrix also goes
// to data-matrix (rows = queries) for tests.

import { heatMap } from '../attnlab-viz.js';
import { fmt, full } from '../shared/format.js';
import { t } from '../i18n.js';
import { showTip, hideTip } from './tooltip.js';

/**
 * @typedef {object} HeatmapOptions
 * @property {number} rows L
 * @property {number} cols S
 * @property {string[]} rowLabels
 * @property {string[]} colLabels
 * @property {number} [cell] cell size in px
 * @property {number} [target] width in px (instead of cell)
 * @property {((i: number, j: number) => boolean) | null} [masked] crossed cells
 * @property {(k: number) => boolean} [dim] grey key labels
 * @property {string} title for the tooltip
 * @property {string[]} [tipLabels] the tooltip's row and column labels where the map draws none (square thumbnails)
 * @property {number} [labelLen] characters kept per label (default 9)
 */

/**
 * What a canvas's tooltip needs: where the cells are and what they hold (the latest drawing).
 * @typedef {{ lw: number, tw: number, cell: number, W: number, Ht: number, data: Float32Array } & HeatmapOptions} Geometry
 */

/** @type {WeakMap<HTMLCanvasElement, Geometry>} */
const GEOMETRY = new WeakMap();

/**
 * @param {HTMLCanvasElement} canvas
 * @param {Float32Array} data rows × cols, row-major
 * @param {HeatmapOptions} opts
 */
export function drawHeatmap(canvas, data, opts) {
  const { rows: L, cols: S, rowLabels, colLabels } = opts;
  const g = heatMap(canvas, data, {
    rows: L,
    cols: S,
    rowLabels,
    colLabels,
    cell: opts.cell,
    width: opts.target,
    labelLength: opts.labelLen ?? 9,
    masked: opts.masked,
    dim: opts.dim,
  });
  const hoverable = GEOMETRY.has(canvas);
  GEOMETRY.set(canvas, { ...opts, lw: g.left, tw: g.top, cell: g.cell, W: g.width, Ht: g.height, data });
  const matrix = [];
  for (let i = 0; i < L; i++) matrix.push(Array.from(data.subarray(i * S, (i + 1) * S)));
  canvas.dataset.matrix = JSON.stringify(matrix);
  if (!hoverable) {
    canvas.addEventListener('mousemove', (ev) => hover(canvas, ev));
    canvas.addEventListener('mouseleave', hideTip);
  }
}

/**
 * The tooltip of the cell under the mouse.
 * @param {HTMLCanvasElement} canvas
 * @param {MouseEvent} ev
 */
function hover(canvas, ev) {
  const g = GEOMETRY.get(canvas);
  const r = canvas.getBoundingClientRect();
  const j = Math.floor((((ev.clientX - r.left) / r.width) * g.W - g.lw) / g.cell);
  const i = Math.floor((((ev.clientY - r.top) / r.height) * g.Ht - g.tw) / g.cell);
  if (i < 0 || j < 0 || i >= g.rows || j >= g.cols) return hideTip();
  const v = g.data[i * g.cols + j];
  const text = t('heat.tip', {
    title: g.title,
    i,
    q: (g.tipLabels ?? g.rowLabels)[i],
    j,
    k: (g.tipLabels ?? g.colLabels)[j],
    w: fmt(v, 5),
    full: full(v),
    m: g.masked && g.masked(i, j) ? t('heat.masked') : '',
  });
  showTip(text, ev.pageX, ev.pageY);
}
