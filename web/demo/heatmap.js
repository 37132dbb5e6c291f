// Heat maps of the page, painted by attnlab/viz's heatMap (the package's one painter, also behind headMaps): an
// L × S weight matrix with query (row) and key (column) labels, crossed cells where masked, numbers inside cells large
// enough, and a localised tooltip on hover. Used by the multi-head part and the training part. The matrix also goes
// to data-matrix (rows = queries) for tests.

import { heatMap } from '/dist/viz.mjs';
import { fmt, full, showTip, hideTip } from './util.js';
import { t } from './i18n.js';

/**
 * opts: { rows, cols, rowLabels, colLabels, cell? | target? (width in px), masked?(i, j), dim?(k) (grey label),
 *         title, labelLen? (characters kept per label) }
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
  canvas.geom = { lw: g.left, tw: g.top, cell: g.cell, W: g.width, Ht: g.height, L, S, rowLabels, colLabels };
  Object.assign(canvas.geom, { title: opts.title, masked: opts.masked, data });
  const matrix = [];
  for (let i = 0; i < L; i++) matrix.push(Array.from(data.subarray(i * S, (i + 1) * S)));
  canvas.dataset.matrix = JSON.stringify(matrix);
  if (!canvas.hoverable) {
    canvas.hoverable = true;
    canvas.addEventListener('mousemove', (ev) => {
      const g = canvas.geom;
      const r = canvas.getBoundingClientRect();
      const j = Math.floor((((ev.clientX - r.left) / r.width) * g.W - g.lw) / g.cell);
      const i = Math.floor((((ev.clientY - r.top) / r.height) * g.Ht - g.tw) / g.cell);
      if (i < 0 || j < 0 || i >= g.L || j >= g.S) return hideTip();
      const v = g.data[i * g.S + j];
      showTip(
        t('heat.tip', {
          title: g.title,
          i,
          q: g.rowLabels[i],
          j,
          k: g.colLabels[j],
          w: fmt(v, 5),
          full: full(v),
          m: g.masked && g.masked(i, j) ? t('heat.masked') : '',
        }),
        ev.pageX,
        ev.pageY,
      );
    });
    canvas.addEventListener('mouseleave', hideTip);
  }
}
