// @ts-check
// The couplet chapter's drawings (view.js builds the panels): a couplet's (lower × upper) cross-attention map of one
// head, the four couplets of a poem side by side (parallel 颔联/颈联 against the control 首联/尾联), the heads' table
// from heads.json, and the loss curve of losses.csv with the replay's step marked.

import { h } from '../../widgets/dom.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { canvasLineChart } from '../../widgets/canvas-chart.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { chars, headMatrix, isParallel } from './compute.js';

/** "layer l · head h" (1-based on the page). */
export const layerHead = (/** @type {number} */ l, /** @type {number} */ hh) =>
  t('couplet.lh', { l: l + 1, h: hh + 1 });

/** A couplet's name: 首联 … 尾联, and whether it must be parallel. */
export const coupletName = (/** @type {number} */ k) =>
  t(`couplet.k${k}`) + ' · ' + t(isParallel(k) ? 'couplet.parallel' : 'couplet.control');

/**
 * One head's map: rows = lower characters written (then [EOS]), columns = the upper line's characters and [EOS].
 * @param {HTMLCanvasElement} canvas
 * @param {Float32Array} m  (T·S)
 * @param {{ rows: string[], cols: string[], title: string, width?: number, cell?: number }} o
 */
export function drawAlignment(canvas, m, o) {
  drawHeatmap(canvas, m, {
    rows: o.rows.length,
    cols: o.cols.length,
    rowLabels: o.rows,
    colLabels: o.cols,
    target: o.width,
    cell: o.cell,
    title: o.title,
    labelLen: 5,
  });
}

/** The mean weight of row t on column t over the characters (the last row and column, [EOS], aside). */
export function diagonalMean(/** @type {Float32Array} */ m, /** @type {number} */ T) {
  let s = 0;
  for (let i = 0; i < T - 1; i++) s += m[i * T + i];
  return s / (T - 1);
}

/**
 * The four couplets of a poem, each one head's map (teacher-forced on the poem's own lower line), side by side.
 * @param {Element} box
 * @param {{ k: number, upper: string, lower: string, maps: { maps: Float32Array[], T: number, S: number } }[]} couplets
 * @param {number} layer
 * @param {number} head
 * @param {(c: string) => string} label  a character as the tokenizer sees it ([UNK] when unknown)
 */
export function drawCouplets(box, couplets, layer, head, label) {
  box.replaceChildren(
    ...couplets.map((c) => {
      const m = headMatrix(c.maps, layer, head);
      const canvas = h('canvas', { 'data-k': c.k, 'data-layer': layer, 'data-head': head });
      const eos = '[EOS]';
      drawAlignment(canvas, m, {
        rows: [...chars(c.lower).map(label), eos],
        cols: [...chars(c.upper).map(label), eos],
        title: `${coupletName(c.k)}: ${layerHead(layer, head)}`,
        cell: 18,
      });
      const d = diagonalMean(m, c.maps.T);
      return h(
        `figure.couplet-fig${isParallel(c.k) ? '.parallel' : ''}`,
        { 'data-k': c.k, 'data-diagonal': d },
        h('figcaption', {}, h('b', { text: coupletName(c.k) }), ` ${c.upper}，${c.lower}`),
        canvas,
        h('p.note', { text: t('couplet.diag', { w: fmt(d, 3) }) }),
      );
    }),
  );
}

/**
 * The heads' table of heads.json: per layer and head, the aligned weight on parallel and control couplets and the
 * ablation cost; the aligning head marked.
 * @param {import('./view.js').HeadsJson} heads
 */
export function headsTable(heads) {
  const { aligned, ablation, aligning } = heads;
  const th = (/** @type {string} */ s) => h('th', { scope: 'col', text: s });
  const rows = aligned.parallel.flatMap((row, l) =>
    row.map((w, hh) =>
      h(
        `tr${l === aligning.layer && hh === aligning.head ? '.on' : ''}`,
        { 'data-layer': l, 'data-head': hh },
        h('th', { scope: 'row', text: layerHead(l, hh) }),
        h('td', { text: fmt(w, 3) }),
        h('td', { text: fmt(aligned.control[l][hh], 3) }),
        h('td', { text: fmt(ablation.delta.parallel[l][hh], 4) }),
        h('td', { text: fmt(ablation.delta.control[l][hh], 4) }),
      ),
    ),
  );
  return h(
    'div.poem-scroll',
    {},
    h(
      'table.couplet-heads#couplet-heads',
      {},
      h('thead', {}, h('tr', {}, ...['head', 'par', 'ctl', 'abPar', 'abCtl'].map((k) => th(t(`couplet.heads.${k}`))))),
      h('tbody', {}, rows),
    ),
  );
}

/**
 * The loss curve (training loss, validation dashed) with the replay's step as a vertical line.
 * @param {HTMLCanvasElement} canvas
 * @param {import('../poem/shipped-run.js').ShippedRun} run
 * @param {number} step
 * @param {number} width
 */
export function drawReplayCurve(canvas, run, step, width) {
  const top = Math.max(...run.train.map((p) => p[1]), ...run.validation.map((p) => p[1])) * 1.05;
  canvasLineChart(canvas, {
    width,
    height: 170,
    xMax: run.steps,
    xTitle: t('couplet.steps'),
    yMin: 0,
    yMax: top,
    yTicks: [0, 2, 4, 6, 8, 10].filter((v) => v <= top).map((v) => [v, String(v)]),
    series: [
      { points: run.train, color: '#3366cc' },
      { points: run.validation, color: '#dc3912', dash: true },
      {
        points: [
          [step, 0],
          [step, top],
        ],
        color: '#888',
      },
    ],
  });
}
