// @ts-check
// Drawing for the training part (view.js): every head's heat map of the fixed example (widgets/heatmap.js), the
// example's answer table, the curves (widgets/canvas-chart.js: loss, accuracy, each head's row entropy against the
// uniform level, each head's attention mass on the task's target keys) and the "try it" comparison.

import { headColour } from '../../attnlab-viz.js';
import { h } from '../../widgets/dom.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { canvasLineChart } from '../../widgets/canvas-chart.js';
import { niceCeil } from '../../widgets/charts.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { STOP_AT, uniformEntropy, fixedIds, score } from './compute.js';

/** @typedef {import('./compute.js').Task} Task */
/** @typedef {import('./compute.js').History} History */
/** @typedef {{ text: string, cls?: string, attrs?: Record<string, string> }} Cell */

const COLORS = { raw: '#a9c1e6', smooth: '#1f5fbf', acc: '#1e7b34', guide: '#888' };

/**
 * Cell size so that as many maps per row fit as can be read (smaller cells only for 8 or 16 heads).
 * @param {number} avail
 * @param {number} H
 * @param {number} T
 */
function mapCell(avail, H, T) {
  const minCell = H >= 8 ? 12 : 20;
  let cell = 0;
  for (const perRow of [Math.min(H, 4), 2, 1]) {
    cell = Math.floor((avail - perRow * 44) / Math.min(perRow, H) / T) - 2;
    if (cell >= minCell) break;
  }
  return Math.max(10, Math.min(H > 2 ? 28 : 36, cell));
}

/** @param {number} hh */
const headTitle = (hh) =>
  h('h4', {}, h('span.swatch', { style: `background:${headColour(hh)}` }), t('mha.head', { h: hh + 1 }));

/**
 * Every head's map of the fixed example; data-checksum changes whenever any weight changes.
 * @param {HTMLElement} grid
 * @param {Task} task
 * @param {{ heads: number, T: number, weights: Float32Array, step: number }} m
 * @param {number} avail
 */
export function drawMaps(grid, task, m, avail) {
  const { heads: H, T } = m;
  const labels = task.fixedText.split(' ');
  const cell = mapCell(avail, H, T);
  if (grid.children.length !== H || grid.dataset.key !== `${task.id}/${H}`) {
    grid.replaceChildren();
    grid.dataset.key = `${task.id}/${H}`;
    for (let hh = 0; hh < H; hh++) {
      const aria = t('mha.mapAria', { title: t('mha.head', { h: hh + 1 }) });
      grid.append(
        h(
          'div.heat',
          { 'data-head': hh },
          headTitle(hh),
          h('canvas', { 'data-head': hh, role: 'img', 'aria-label': aria }),
        ),
      );
    }
  }
  let checksum = 0;
  for (let hh = 0; hh < H; hh++) {
    const data = m.weights.subarray(hh * T * T, (hh + 1) * T * T);
    const canvas = grid.children[hh].querySelector('canvas');
    data.forEach((v, k) => {
      checksum += v * (1 + ((k * 7919 + hh * 104729) % 97));
    });
    canvas.dataset.step = String(m.step);
    drawHeatmap(canvas, data, {
      rows: T,
      cols: T,
      rowLabels: labels,
      colLabels: labels,
      cell,
      labelLen: 5,
      masked: task.causal ? (i, j) => j > i : null,
      title: t('mha.head', { h: hh + 1 }),
    });
  }
  grid.dataset.checksum = String(checksum);
  grid.dataset.step = String(m.step);
}

// ---- answer tables ----------------------------------------------------------------------------------------------

/**
 * @param {Task} task
 * @param {number} predicted
 * @param {number | null} expected
 * @param {number} input
 * @returns {Cell}
 */
function cellFor(task, predicted, expected, input) {
  const text = task.vocab[predicted];
  if (task.id === 'recall' && input < 90) return { text: '·', cls: 'x' };
  if (expected === null) return { text, cls: 'x', attrs: { 'data-predicted': text, 'data-expected': '' } };
  const ok = predicted === expected;
  return {
    text: `${text} ${ok ? '✓' : '✗'}`,
    cls: ok ? 'ok' : 'bad',
    attrs: { 'data-predicted': text, 'data-expected': task.vocab[expected] },
  };
}

/**
 * @param {Task} task
 * @param {number | null} expected
 * @param {number} input
 */
function rightText(task, expected, input) {
  if (task.id === 'recall') return input < 90 ? '·' : expected === null ? t('mha.notStored') : task.vocab[expected];
  if (expected === null) return task.id === 'next' ? '·' : '';
  return task.vocab[expected];
}

/**
 * @param {[string, Cell[]][]} rows
 * @param {string} id
 */
function answerTable(rows, id) {
  return h(
    'table.answers',
    { id },
    rows.map(([label, cells]) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row', text: label }),
        cells.map((c, i) =>
          h(`td${c.cls ? '.' + c.cls : ''}`, { 'data-pos': c.attrs ? i : undefined, ...(c.attrs || {}), text: c.text }),
        ),
      ),
    ),
  );
}

/**
 * The input row, the given models' answers and the right ones.
 * @param {Task} task
 * @param {number[]} ids
 * @param {[string, number[]][]} models label and answers
 * @param {(number | null)[]} expected
 * @returns {[string, Cell[]][]}
 */
const answerRows = (task, ids, models, expected) => [
  [t('mha.rowInput'), ids.map((id) => ({ text: task.vocab[id] }))],
  ...models.map(
    ([label, predicted]) =>
      /** @type {[string, Cell[]]} */ ([label, predicted.map((p, i) => cellFor(task, p, expected[i], ids[i]))]),
  ),
  [t('mha.rowRight'), expected.map((e, i) => ({ text: rightText(task, e, ids[i]) }))],
];

/**
 * The fixed example's answers now.
 * @param {HTMLElement} box
 * @param {Task} task
 * @param {number[]} predicted
 */
export function drawExample(box, task, predicted) {
  const ids = fixedIds(task);
  const expected = task.answers(ids);
  const table = answerTable(answerRows(task, ids, [[t('train.rowNow'), predicted]], expected), 'train-example-table');
  table.dataset.correct = String(score(predicted, expected));
  table.dataset.total = String(expected.filter((e) => e !== null).length);
  box.replaceChildren(table);
}

// ---- curves -----------------------------------------------------------------------------------------------------

/**
 * The loss on a log axis over whole decades, raw and smoothed.
 * @param {HTMLCanvasElement} canvas
 * @param {History} hist
 * @param {{ width: number, xMax: number, xTitle: string }} common
 */
function lossChart(canvas, hist, common) {
  const finite = hist.losses.filter((v) => v > 0 && Number.isFinite(v));
  const lo = finite.length ? Math.floor(Math.log10(Math.max(1e-4, Math.min(...finite)))) : -2;
  let hi = finite.length ? Math.ceil(Math.log10(Math.max(...finite))) : 1;
  if (hi <= lo) hi = lo + 1;
  /** @type {[number, string][]} */
  const ticks = [];
  for (let k = lo; k <= hi; k++) ticks.push([10 ** k, fmt(10 ** k, 4)]);
  /** @param {number[]} vals @returns {[number, number][]} */
  const perStep = (vals) => vals.map((v, i) => [i + 1, v]);
  canvasLineChart(canvas, {
    ...common,
    height: 170,
    log: true,
    yMin: 10 ** lo,
    yMax: 10 ** hi,
    yTicks: ticks,
    series: [
      { points: perStep(hist.losses), color: COLORS.raw, width: 1 },
      { points: perStep(hist.smooth), color: COLORS.smooth },
    ],
  });
}

/**
 * charts: { loss, acc, entropy, mass } canvases; hist: the run's curves.
 * @param {Record<'loss' | 'acc' | 'entropy' | 'mass', HTMLCanvasElement>} charts
 * @param {History} hist
 * @param {Task} task
 * @param {number} H
 * @param {number} width
 */
export function drawCurves(charts, hist, task, H, width) {
  const n = hist.losses.length;
  const common = { width, xMax: niceCeil(Math.max(50, n)), xTitle: t('train.step') };
  lossChart(charts.loss, hist, common);
  /** @type {[number, string][]} */
  const pct = [0, 0.25, 0.5, 0.75, 1].map((v) => [v, `${v * 100} %`]);
  const guides = [{ y: STOP_AT, label: t('train.target', { p: STOP_AT * 100 }) }];
  canvasLineChart(charts.acc, {
    ...common,
    height: 140,
    yMin: 0,
    yMax: 1,
    yTicks: pct,
    series: [{ points: hist.acc, color: COLORS.acc }],
    guides,
  });
  const u = uniformEntropy(task);
  const yMaxE = Math.ceil(u * 2 + 0.01) / 2;
  /** @param {'entropy' | 'mass'} k */
  const headSeries = (k) =>
    Array.from({ length: H }, (_, hh) => ({
      points: hist.stats.map(([s, st]) => /** @type {[number, number]} */ ([s, st[k][hh]])),
      color: headColour(hh),
    }));
  const label = task.causal ? t('train.uniformCausal', { u: fmt(u, 3) }) : `ln ${task.T} = ${fmt(u, 3)}`;
  canvasLineChart(charts.entropy, {
    ...common,
    height: 150,
    yMin: 0,
    yMax: yMaxE,
    yTicks: [0, yMaxE / 2, yMaxE].map((v) => /** @type {[number, string]} */ ([v, fmt(v, 2)])),
    series: headSeries('entropy'),
    guides: [{ y: u, label, color: '#c0392b' }],
  });
  canvasLineChart(charts.mass, { ...common, height: 140, yMin: 0, yMax: 1, yTicks: pct, series: headSeries('mass') });
  charts.loss.dataset.points = String(n);
  charts.acc.dataset.points = String(hist.acc.length);
  charts.acc.dataset.series = JSON.stringify(hist.acc.slice(-200));
  charts.entropy.dataset.uniform = String(u);
  charts.entropy.dataset.series = JSON.stringify(hist.stats.slice(-200).map(([s, st]) => [s, st.entropy]));
  charts.mass.dataset.series = JSON.stringify(hist.stats.slice(-200).map(([s, st]) => [s, st.mass]));
}

// ---- try it -----------------------------------------------------------------------------------------------------

/**
 * One group of maps (a model's heads) for "try it".
 * @param {Task} task
 * @param {string[]} labels
 * @param {[string, { weights: Float32Array, H: number }, string]} group title, model, key
 * @param {number} cell
 */
function tryMaps(task, labels, [title, g, key], cell) {
  const L = labels.length;
  const grid = h('div.heat-grid', { 'data-model': key });
  for (let hh = 0; hh < g.H; hh++) {
    const name = `${title}, ${t('mha.head', { h: hh + 1 })}`;
    const canvas = h('canvas', { 'data-head': hh, 'data-model': key, role: 'img', 'aria-label': name });
    drawHeatmap(canvas, g.weights.subarray(hh * L * L, (hh + 1) * L * L), {
      rows: L,
      cols: L,
      rowLabels: labels,
      colLabels: labels,
      cell,
      labelLen: 5,
      masked: task.causal ? (i, j) => j > i : null,
      title: name,
    });
    grid.append(h('div.heat', { 'data-head': hh }, headTitle(hh), canvas));
  }
  return h('div.try-group', {}, h('div.small.strong', { text: t('train.groupTitle', { title, n: g.H }) }), grid);
}

/**
 * "Try it": the answers of the model trained here (and of the shipped toy model) on the user's ids, and their maps.
 * @param {Task} task
 * @param {number[]} ids
 * @param {ReturnType<typeof import('./compute.js').tryModels>} r
 * @param {number} avail
 */
export function tryView(task, ids, { mine, toy, expected }, avail) {
  const L = ids.length;
  /** @type {[string, number[]][]} */
  const models = [[t('train.mine'), mine.predicted]];
  if (toy) models.push([t('train.toy'), toy.predicted]);
  const table = answerTable(answerRows(task, ids, models, expected), 'train-try-table');
  const total = expected.filter((e) => e !== null).length;
  const words = (/** @type {number[]} */ p) => JSON.stringify(p.map((x) => task.vocab[x]));
  Object.assign(table.dataset, {
    total,
    trainedCorrect: score(mine.predicted, expected),
    trainedPredicted: words(mine.predicted),
  });
  if (toy)
    Object.assign(table.dataset, { toyCorrect: score(toy.predicted, expected), toyPredicted: words(toy.predicted) });
  const summary = h(
    'p.note',
    { id: 'train-try-summary' },
    h('strong', { text: t('train.tryMine', { r: score(mine.predicted, expected), n: total }) }),
    toy ? t('train.tryToy', { r: score(toy.predicted, expected), n: total }) : '',
    L !== task.T ? t(toy ? 'train.tryLengthBoth' : 'train.tryLength', { T: task.T }) : '',
  );
  const labels = ids.map((id) => task.vocab[id]);
  /** @type {[string, { weights: Float32Array, H: number }, string][]} */
  const groups = [[t('train.mine'), mine, 'mine']];
  if (toy) groups.push([t('train.toy'), toy, 'toy']);
  const maxH = Math.max(...groups.map(([, g]) => g.H));
  const perRow = avail < 520 ? 2 : Math.min(4, groups.length * maxH);
  const cell = Math.max(10, Math.min(28, Math.floor((avail - perRow * 50) / perRow / L)));
  const maps = groups.map((g) => tryMaps(task, labels, g, cell));
  return [summary, h('div.answers-wrap', {}, table), h('div.try-maps', { id: 'train-try-maps' }, maps)];
}
