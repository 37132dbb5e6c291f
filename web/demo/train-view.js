// Drawing for the training part (train.js): every head's heat map of the fixed example (heatmap.js), the
// example's answer table, the curves (charts.js: loss, accuracy, each head's row entropy against the uniform
// level, each head's attention mass on the task's target keys) and the "try it" comparison.

import { headColour } from '/dist/viz.mjs';
import { h, fmt } from './util.js';
import { drawHeatmap } from './heatmap.js';
import { canvasLineChart, niceCeil } from './charts.js';
import { entropy } from './reference.js';
import { argmax } from './train-tasks.js';
import { runToy } from './toy.js';
import { t } from './i18n.js';

export const STOP_AT = 0.95;
const COLORS = { raw: '#a9c1e6', smooth: '#1f5fbf', acc: '#1e7b34', guide: '#888' };

/** Mean row entropy (nats) of each head, and each head's mean weight on the target keys, for T×T maps. */
export function headStats(task, ids, weights, H) {
  const T = ids.length;
  const targets = task.targetKeys(ids);
  const ent = [];
  const mass = [];
  for (let hh = 0; hh < H; hh++) {
    let e = 0;
    let m = 0;
    let n = 0;
    for (let i = 0; i < T; i++) {
      e += entropy(weights, (hh * T + i) * T, T) / T;
      if (targets[i] !== null && targets[i] >= 0) {
        m += weights[(hh * T + i) * T + targets[i]];
        n += 1;
      }
    }
    ent.push(e);
    mass.push(n ? m / n : 0);
  }
  return { entropy: ent, mass };
}

/** The entropy of uniform weights over the keys each query may see: ln T, or the mean of ln(i + 1) when causal. */
export function uniformEntropy(task) {
  if (!task.causal) return Math.log(task.T);
  let s = 0;
  for (let i = 0; i < task.T; i++) s += Math.log(i + 1) / task.T;
  return s;
}

/** Cell size so that as many maps per row fit as can be read (smaller cells only for 8 or 16 heads). */
function mapCell(avail, H, T) {
  const minCell = H >= 8 ? 12 : 20;
  let cell = 0;
  for (const perRow of [Math.min(H, 4), 2, 1]) {
    cell = Math.floor((avail - perRow * 44) / Math.min(perRow, H) / T) - 2;
    if (cell >= minCell) break;
  }
  return Math.max(10, Math.min(H > 2 ? 28 : 36, cell));
}

const headTitle = (hh) =>
  h('h4', {}, h('span.swatch', { style: `background:${headColour(hh)}` }), t('mha.head', { h: hh + 1 }));

/** Every head's map of the fixed example; data-checksum changes whenever any weight changes. */
export function drawMaps(grid, task, m, avail) {
  const { heads: H, T } = m;
  const labels = task.fixedText.split(' ');
  const cell = mapCell(avail, H, T);
  if (grid.children.length !== H || grid.dataset.key !== `${task.id}/${H}`) {
    grid.replaceChildren();
    grid.dataset.key = `${task.id}/${H}`;
    for (let hh = 0; hh < H; hh++) {
      grid.append(
        h(
          'div.heat',
          { 'data-head': hh },
          headTitle(hh),
          h('canvas', {
            'data-head': hh,
            role: 'img',
            'aria-label': t('mha.mapAria', { title: t('mha.head', { h: hh + 1 }) }),
          }),
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
    canvas.dataset.step = m.step;
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
  grid.dataset.checksum = checksum;
  grid.dataset.step = m.step;
}

// ---- answer tables ----------------------------------------------------------------------------------------------

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

function rightText(task, expected, input) {
  if (task.id === 'recall') return input < 90 ? '·' : expected === null ? t('mha.notStored') : task.vocab[expected];
  if (expected === null) return task.id === 'next' ? '·' : '';
  return task.vocab[expected];
}

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

const score = (pred, expected) => pred.filter((p, i) => expected[i] !== null && p === expected[i]).length;

export function drawExample(box, task, predicted) {
  const ids = task.fixedText.split(' ').map((w) => task.index.get(w));
  const expected = task.answers(ids);
  const table = answerTable(
    [
      [t('mha.rowInput'), ids.map((id) => ({ text: task.vocab[id] }))],
      [t('train.rowNow'), predicted.map((p, i) => cellFor(task, p, expected[i], ids[i]))],
      [t('mha.rowRight'), expected.map((e, i) => ({ text: rightText(task, e, ids[i]) }))],
    ],
    'train-example-table',
  );
  table.dataset.correct = score(predicted, expected);
  table.dataset.total = expected.filter((e) => e !== null).length;
  box.replaceChildren(table);
}

// ---- curves -----------------------------------------------------------------------------------------------------

/** charts: { loss, acc, entropy, mass } canvases; hist: { losses, smooth, acc: [step, v][], stats: [step, {entropy, mass}][] }. */
export function drawCurves(charts, hist, task, H, width) {
  const n = hist.losses.length;
  const xMax = niceCeil(Math.max(50, n));
  const xTitle = t('train.step');
  const finite = hist.losses.filter((v) => v > 0 && Number.isFinite(v));
  const lo = finite.length ? Math.floor(Math.log10(Math.max(1e-4, Math.min(...finite)))) : -2;
  let hi = finite.length ? Math.ceil(Math.log10(Math.max(...finite))) : 1;
  if (hi <= lo) hi = lo + 1;
  const ticks = [];
  for (let k = lo; k <= hi; k++) ticks.push([10 ** k, fmt(10 ** k, 4)]);
  const perStep = (vals) => vals.map((v, i) => [i + 1, v]);
  canvasLineChart(charts.loss, {
    width,
    height: 170,
    xMax,
    xTitle,
    log: true,
    yMin: 10 ** lo,
    yMax: 10 ** hi,
    yTicks: ticks,
    series: [
      { points: perStep(hist.losses), color: COLORS.raw, width: 1 },
      { points: perStep(hist.smooth), color: COLORS.smooth },
    ],
  });
  const pct = [0, 0.25, 0.5, 0.75, 1].map((v) => [v, `${v * 100} %`]);
  canvasLineChart(charts.acc, {
    width,
    height: 140,
    xMax,
    xTitle,
    yMin: 0,
    yMax: 1,
    yTicks: pct,
    series: [{ points: hist.acc, color: COLORS.acc }],
    guides: [{ y: STOP_AT, label: t('train.target', { p: STOP_AT * 100 }) }],
  });
  const u = uniformEntropy(task);
  const yMaxE = Math.ceil(u * 2 + 0.01) / 2;
  const headSeries = (k) =>
    Array.from({ length: H }, (_, hh) => ({
      points: hist.stats.map(([s, st]) => [s, st[k][hh]]),
      color: headColour(hh),
    }));
  canvasLineChart(charts.entropy, {
    width,
    height: 150,
    xMax,
    xTitle,
    yMin: 0,
    yMax: yMaxE,
    yTicks: [0, yMaxE / 2, yMaxE].map((v) => [v, fmt(v, 2)]),
    series: headSeries('entropy'),
    guides: [
      {
        y: u,
        label: task.causal ? t('train.uniformCausal', { u: fmt(u, 3) }) : `ln ${task.T} = ${fmt(u, 3)}`,
        color: '#c0392b',
      },
    ],
  });
  canvasLineChart(charts.mass, {
    width,
    height: 140,
    xMax,
    xTitle,
    yMin: 0,
    yMax: 1,
    yTicks: pct,
    series: headSeries('mass'),
  });
  charts.loss.dataset.points = n;
  charts.acc.dataset.points = hist.acc.length;
  charts.acc.dataset.series = JSON.stringify(hist.acc.slice(-200));
  charts.entropy.dataset.uniform = u;
  charts.entropy.dataset.series = JSON.stringify(hist.stats.slice(-200).map(([s, st]) => [s, st.entropy]));
  charts.mass.dataset.series = JSON.stringify(hist.stats.slice(-200).map(([s, st]) => [s, st.mass]));
}

// ---- try it -----------------------------------------------------------------------------------------------------

/** Run the model trained here (and the shipped toy model of the task, if any) on ids; returns the elements to show. */
export function tryModels({ task, ids, trained, heads, toyTiny, toys, toyRecallMha, avail }) {
  const L = ids.length;
  const tokens = { data: Int32Array.from(ids), shape: [1, L] };
  const out = trained.forward(tokens);
  const mine = { predicted: Array.from(argmax(out.logits.data, L, task.V)), weights: out.weights.data, H: heads };
  let toy = null;
  if (task.toy === 'reverse') {
    const o = toyTiny.forward(tokens);
    toy = {
      predicted: Array.from(argmax(o.logits.data, L, toys.reverse.V)),
      weights: o.weights.data,
      H: toys.reverse.H,
    };
  } else if (task.toy === 'recall') {
    const o = runToy(toys.recall, toyRecallMha, ids);
    toy = { predicted: o.predicted, weights: o.weights, H: toys.recall.H };
  }
  const expected = task.answers(ids);
  const rows = [
    [t('mha.rowInput'), ids.map((id) => ({ text: task.vocab[id] }))],
    [t('train.mine'), mine.predicted.map((p, i) => cellFor(task, p, expected[i], ids[i]))],
  ];
  if (toy) rows.push([t('train.toy'), toy.predicted.map((p, i) => cellFor(task, p, expected[i], ids[i]))]);
  rows.push([t('mha.rowRight'), expected.map((e, i) => ({ text: rightText(task, e, ids[i]) }))]);
  const table = answerTable(rows, 'train-try-table');
  const total = expected.filter((e) => e !== null).length;
  Object.assign(table.dataset, {
    total,
    trainedCorrect: score(mine.predicted, expected),
    trainedPredicted: JSON.stringify(mine.predicted.map((x) => task.vocab[x])),
  });
  if (toy)
    Object.assign(table.dataset, {
      toyCorrect: score(toy.predicted, expected),
      toyPredicted: JSON.stringify(toy.predicted.map((x) => task.vocab[x])),
    });
  const summary = h(
    'p.note',
    { id: 'train-try-summary' },
    h('strong', { text: t('train.tryMine', { r: score(mine.predicted, expected), n: total }) }),
    toy ? t('train.tryToy', { r: score(toy.predicted, expected), n: total }) : '',
    L !== task.T ? t(toy ? 'train.tryLengthBoth' : 'train.tryLength', { T: task.T }) : '',
  );
  const labels = ids.map((id) => task.vocab[id]);
  const groups = [[t('train.mine'), mine, 'mine']];
  if (toy) groups.push([t('train.toy'), toy, 'toy']);
  const maxH = Math.max(...groups.map(([, g]) => g.H));
  const perRow = avail < 520 ? 2 : Math.min(4, groups.length * maxH);
  const cell = Math.max(10, Math.min(28, Math.floor((avail - perRow * 50) / perRow / L)));
  const mapGroups = groups.map(([title, g, key]) => {
    const grid = h('div.heat-grid', { 'data-model': key });
    for (let hh = 0; hh < g.H; hh++) {
      const canvas = h('canvas', {
        'data-head': hh,
        'data-model': key,
        role: 'img',
        'aria-label': `${title}, ${t('mha.head', { h: hh + 1 })}`,
      });
      drawHeatmap(canvas, g.weights.subarray(hh * L * L, (hh + 1) * L * L), {
        rows: L,
        cols: L,
        rowLabels: labels,
        colLabels: labels,
        cell,
        labelLen: 5,
        masked: task.causal ? (i, j) => j > i : null,
        title: `${title}, ${t('mha.head', { h: hh + 1 })}`,
      });
      grid.append(h('div.heat', { 'data-head': hh }, headTitle(hh), canvas));
    }
    return h('div.try-group', {}, h('div.small.strong', { text: t('train.groupTitle', { title, n: g.H }) }), grid);
  });
  return [summary, h('div.answers-wrap', {}, table), h('div.try-maps', { id: 'train-try-maps' }, mapGroups)];
}
