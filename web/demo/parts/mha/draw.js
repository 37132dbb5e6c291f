// @ts-check
// Drawing for the multi-head part (view.js): the per-head heat maps (widgets/heatmap.js) and the token links, both
// painted by attnlab/viz, and the toy models' answer table. No state of its own: every function takes what it draws.

import { headColour, tokenLinks, weightColour } from '../../attnlab-viz.js';
import { h } from '../../widgets/dom.js';
import { legend } from '../../widgets/legend.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { shortLabel } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { scoreAnswers } from './compute.js';

/**
 * Where and how the part draws.
 * @typedef {object} MhaView
 * @property {HTMLElement} grid the heat maps
 * @property {HTMLElement} legendBox
 * @property {HTMLElement} chips the head toggles
 * @property {HTMLElement} links
 * @property {import('../../attnlab-viz.js').View | null} [linksView] the token links' view, destroyed on redraw
 * @property {number} [width]
 * @property {boolean} [perHead] one map per head (else the average only)
 * @property {Set<number>} [visible] the heads shown
 * @property {boolean} [causal]
 */
/** @typedef {import('./compute.js').HeadWeights} HeadWeights */

/**
 * One heat map per head (when perHead) and their average.
 * @param {MhaView} view
 * @param {string[]} labels the query tokens
 * @param {HeadWeights} res
 * @param {number} H
 * @param {boolean[]} padded
 */
export function drawHeatmaps(view, labels, res, H, padded) {
  const { grid } = view;
  grid.replaceChildren();
  const L = labels.length;
  const { S, keyLabels } = res;
  /** @type {{ head: number | 'avg', title: string, data: Float32Array }[]} */
  const maps = [];
  if (view.perHead)
    for (let hh = 0; hh < H; hh++)
      maps.push({
        head: hh,
        title: t('mha.head', { h: hh + 1 }),
        data: res.weights.subarray(hh * L * S, (hh + 1) * L * S),
      });
  maps.push({ head: 'avg', title: t('mha.average', { n: H }), data: res.average });
  const big = !view.perHead || H === 1;
  const avail = Math.max(160, Math.min(view.width, 1200) - 24);
  const perRow = Math.min(H, 4);
  const perHead =
    avail < 520 ? Math.floor((avail - 40) / 2) : Math.min(300, Math.floor((avail - perRow * 28) / perRow));
  /** @param {number} i @param {number} j */
  const masked = (i, j) => (view.causal && j > i && j < L) || (j < L && padded[j]);
  for (const m of maps) {
    const target = m.head === 'avg' || big ? Math.min(440, avail - 14) : Math.min(perHead, avail - 14);
    const canvas = h('canvas', {
      'data-head': m.head,
      'data-rows': L,
      'data-cols': S,
      role: 'img',
      'aria-label': t('mha.mapAria', { title: m.title }),
    });
    canvas.dataset.tokens = JSON.stringify(labels);
    canvas.dataset.keys = JSON.stringify(keyLabels);
    drawHeatmap(canvas, m.data, {
      rows: L,
      cols: S,
      rowLabels: labels,
      colLabels: keyLabels,
      target,
      title: m.title,
      masked,
      dim: (/** @type {number} */ k) => k < L && padded[k],
    });
    const titleEl =
      typeof m.head === 'number'
        ? h('h4', {}, h('span.swatch', { style: `background:${headColour(m.head)}` }), m.title)
        : h('h4', { title: t('mha.averageTitle') }, m.title);
    const off = typeof m.head === 'number' && !view.visible.has(m.head);
    grid.append(
      h(
        'div.heat' + (off ? '.off' : ''),
        { 'data-head': m.head },
        titleEl,
        canvas,
        m.head === 'avg' ? h('div.note.small.avg-note', { text: t('mha.averageNote') }) : '',
      ),
    );
  }
  view.legendBox.replaceChildren(
    h(
      'div.controls',
      {},
      legend('seq', 0, 1, t('mha.legend'), weightColour, { value: 1 / S, label: t('legend.uniform', { n: S }) }),
      h('span.note', { text: t('mha.legendNote') }),
    ),
  );
}

/**
 * Token links, drawn by attnlab/viz's tokenLinks (queries left, keys right, a line's opacity = the weight; hover or
 * arrow keys show one query's lines); the page's head chips choose the heads, so viz's own legend is off.
 * @param {MhaView} view
 * @param {string[]} labels
 * @param {HeadWeights} res
 * @param {number} H
 * @param {boolean[]} padded
 * @param {(head: number) => void} onToggle a head chip was clicked
 */
export function drawLinks(view, labels, res, H, padded, onToggle) {
  const L = labels.length;
  const { S, keyLabels } = res;
  const { chips, links } = view;
  chips.replaceChildren();
  if (view.perHead) {
    for (let hh = 0; hh < H; hh++) {
      const color = headColour(hh);
      chips.append(
        h('button.head-chip', {
          type: 'button',
          'data-head': hh,
          'aria-pressed': view.visible.has(hh) ? 'true' : 'false',
          style: `border-color:${color}; color:${color}`,
          title: t('mha.chipTitle'),
          text: t('mha.head', { h: hh + 1 }),
          onclick: () => onToggle(hh),
        }),
      );
    }
  } else {
    chips.append(h('span.note', { text: t('mha.avgOnly') }));
  }
  view.linksView?.destroy();
  const perHead = view.perHead;
  view.linksView = tokenLinks(
    links,
    perHead ? { data: res.weights, dims: [H, L, S] } : { data: res.average, dims: [1, L, S] },
    {
      queryTokens: labels.map((s, i) => (padded[i] ? `(${shortLabel(s, 10)})` : shortLabel(s, 12))),
      keyTokens: keyLabels.map((s) => shortLabel(s, 12)),
      rowHeight: 22,
      heads: perHead ? [...view.visible] : [0],
      legend: false,
      text: {
        head: (hh) => (perHead ? t('mha.head', { h: hh + 1 }) : t('mha.average', { n: H })),
        query: (q, best) => t('mha.linksQuery', { q, best }),
      },
    },
  );
  view.linksView.element.querySelector('canvas').setAttribute('aria-label', t('mha.linksAria'));
}

/**
 * The toy model's answers under the tokens, scored against the task's rule (compute.js scoreAnswers).
 * @param {import('../../shared/toy-model.js').ToyModel} toy
 * @param {number[]} ids
 * @param {number[]} predicted
 * @param {{ causal: boolean, padded: boolean }} how
 */
export function answersTable(toy, ids, predicted, { causal, padded }) {
  const { expected, scored, ok, right, n } = scoreAnswers(toy, ids, predicted);
  /** @param {number} tk */
  const word = (tk) => toy.vocab[tk];
  /** @param {string} label @param {Node[]} cells */
  const row = (label, cells) => h('tr', {}, h('th', { scope: 'row', text: label }), cells);
  /** @param {number} i */
  const modelCell = (i) => {
    if (toy.task === 'recall' && ids[i] < 90) return h('td', { text: '·' });
    return h(`td.${scored[i] ? (ok[i] ? 'ok' : 'bad') : 'x'}`, {
      'data-pos': i,
      'data-predicted': word(predicted[i]),
      'data-expected': expected[i] === null ? '' : word(expected[i]),
      text: `${word(predicted[i])} ${scored[i] ? (ok[i] ? '✓' : '✗') : ''}`,
    });
  };
  /** @param {number} i */
  const rightText = (i) =>
    toy.task === 'recall' && ids[i] < 90 ? '·' : expected[i] === null ? t('mha.notStored') : word(expected[i]);
  const table = h(
    'table.answers',
    { id: 'mha-answer-table' },
    row(
      t('mha.rowInput'),
      ids.map((tk) => h('td', { text: word(tk) })),
    ),
    row(
      t('mha.rowModel'),
      ids.map((_, i) => modelCell(i)),
    ),
    row(
      t('mha.rowRight'),
      ids.map((_, i) => h('td', { text: rightText(i) })),
    ),
  );
  Object.assign(table.dataset, { correct: right, total: n, predicted: JSON.stringify(predicted.map(word)) });
  const summary = h(
    'p.note',
    { id: 'mha-answer-summary' },
    h('strong', { text: t('mha.score', { right, n }) }),
    causal ? t('mha.scoreCausal') : '',
    padded ? t('mha.scorePad') : '',
  );
  return [summary, table];
}
