// The one heat-map painter of the page: an L × S weight matrix on a canvas with query (row) and key (column)
// labels, crossed cells where masked, numbers inside cells large enough, and a tooltip on hover. Used by the
// multi-head part and the training part. The matrix also goes to data-matrix (rows = queries) for tests.

import { seqColor, fmt, full, sizeCanvas, shortLabel, showTip, hideTip } from './util.js';
import { t } from './i18n.js';

/**
 * opts: { rows, cols, rowLabels, colLabels, cell? | target? (width in px), masked?(i, j), dim?(k) (grey label),
 *         title, labelLen? (characters kept per label) }
 */
export function drawHeatmap(canvas, data, opts) {
  const { rows: L, cols: S, rowLabels, colLabels } = opts;
  const n = opts.labelLen ?? 9;
  const probe = canvas.getContext('2d');
  probe.font = '12px system-ui, sans-serif';
  const lw = Math.ceil(Math.min(90, Math.max(...rowLabels.map((s) => probe.measureText(shortLabel(s, n)).width)))) + 8;
  const colW = Math.max(...colLabels.map((s) => probe.measureText(shortLabel(s, n)).width));
  const cell = opts.cell ?? Math.max(8, Math.min(34, Math.floor((opts.target - lw) / Math.max(S, 1))));
  const flat = colW <= cell - 2; // short labels (CJK characters, letters) stay horizontal
  const tw = flat ? 18 : Math.ceil(Math.min(90, colW)) + 8;
  const W = lw + cell * S + 2;
  const Ht = tw + cell * L + 2;
  const ctx = sizeCanvas(canvas, W, Ht);
  canvas.geom = { lw, tw, cell, W, Ht, L, S, rowLabels, colLabels, title: opts.title, masked: opts.masked, data };
  const dim = opts.dim || (() => false);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, Ht);
  ctx.font = `${Math.min(12, Math.max(9, cell - 4))}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  rowLabels.forEach((s, i) => {
    ctx.fillStyle = dim(i) ? '#aaa' : '#333';
    ctx.fillText(shortLabel(s, n), lw - 4, tw + i * cell + cell / 2);
  });
  ctx.textAlign = flat ? 'center' : 'left';
  colLabels.forEach((s, j) => {
    ctx.fillStyle = dim(j) ? '#aaa' : '#333';
    if (flat) {
      ctx.fillText(shortLabel(s, n), lw + j * cell + cell / 2, tw / 2);
      return;
    }
    ctx.save();
    ctx.translate(lw + j * cell + cell / 2, tw - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(shortLabel(s, n), 0, 0);
    ctx.restore();
  });
  const gap = cell > 10 ? 1 : 0;
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < S; j++) {
      const v = data[i * S + j];
      const x = lw + j * cell;
      const y = tw + i * cell;
      ctx.fillStyle = seqColor(v);
      ctx.fillRect(x, y, cell - gap, cell - gap);
      if (opts.masked && opts.masked(i, j)) {
        ctx.strokeStyle = 'rgba(0,0,0,0.2)';
        ctx.beginPath();
        ctx.moveTo(x + 1, y + cell - gap - 1);
        ctx.lineTo(x + cell - gap - 1, y + 1);
        ctx.stroke();
      }
      if (cell >= 30 && v >= 0.005) {
        ctx.fillStyle = v > 0.55 ? '#fff' : '#223';
        ctx.textAlign = 'center';
        ctx.font = '10px system-ui, sans-serif';
        ctx.fillText(v.toFixed(2).replace(/^0/, ''), x + cell / 2, y + cell / 2);
      }
    }
  }
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
