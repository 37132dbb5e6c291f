// @ts-check
// The poem chapter's drawing: the poem as lines of cells, a token's attention rows (every layer and head), the
// layers × heads grid with the measured names, one head's map and token links, the table "sharpness vs effect" and
// the curves of training from scratch.

import { h } from '../../widgets/dom.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { canvasLineChart } from '../../widgets/canvas-chart.js';
import { tokenLinks, headColour, weightColour } from '../../attnlab-viz.js';
import { legend } from '../../widgets/legend.js';
import { drawable, codePoint } from '../../widgets/glyph.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';

/** @typedef {import('./compute.js').GeneratedToken} GeneratedToken */

/**
 * The poem as lines: one cell per character, a line break after each line's punctuation; forced cells marked.
 * @param {GeneratedToken[]} tokens
 * @param {number} shown  how many are visible yet
 * @param {(i: number) => void} onPick
 */
export function poemLines(tokens, shown, onPick) {
  /** @type {HTMLElement[]} */
  const lines = [h('div.poem-line')];
  tokens.slice(0, shown).forEach((g, i) => {
    const tip = g.forced ? t('poem.forcedTip', { want: g.wanted ?? '' }) : t('poem.cellTip', { i: i + 1 });
    // a character no font of this browser has: its code point, not a box
    const missing = !drawable(g.s);
    const title = missing ? `${tip} ${t('poem.noGlyph', { u: codePoint(g.s) })}` : tip;
    const text = missing ? h('span.poem-missing', { text: codePoint(g.s).slice(2) }) : g.s;
    const cls = `button.poem-char${g.forced ? '.forced' : ''}${missing ? '.no-glyph' : ''}`;
    const cell = h(cls, { type: 'button', title, 'data-i': i, 'data-char': g.s }, text);
    cell.addEventListener('click', () => onPick(i));
    lines.at(-1).append(cell);
    if (g.s === '，' || g.s === '。') lines.push(h('div.poem-line'));
  });
  return lines.filter((l) => l.childElementCount);
}

/**
 * A head's label, counted from 1 like the rest of the page (头 1…H, layers from 1): indices are 0-based.
 * @param {number} l
 * @param {number} hh
 */
export const layerHead = (l, hh) => t('poem.lh', { l: l + 1, h: hh + 1 });

/** The heat maps' label of [BOS]: one character wide, so that the characters' labels stay upright and readable. */
export const BOS_MARK = '◆';
/** @param {string[]} labels */
const mapLabels = (labels) => labels.map((s) => (s === '[BOS]' ? BOS_MARK : s));

/** The colour legend of the chapter's maps (weights 0…1, attnlab/viz's colours), saying what ◆ is. */
export const weightLegend = () => legend('seq', 0, 1, t('poem.legend', { bos: BOS_MARK }), weightColour);

/**
 * A token's attention rows: one row per layer and head (L·H), one column per key of its prefix.
 * @param {HTMLCanvasElement} canvas
 * @param {Float32Array[]} rows  per layer (H, S)
 * @param {string[]} keys  S labels
 * @param {number} width
 * @param {string} [title]
 */
export function drawRows(canvas, rows, keys, width, title = t('poem.rowsTitle')) {
  const H = rows[0].length / keys.length;
  const data = new Float32Array(rows.length * rows[0].length);
  rows.forEach((r, l) => data.set(r, l * r.length));
  const labels = rows.flatMap((_, l) => Array.from({ length: H }, (_, hh) => layerHead(l, hh)));
  drawHeatmap(canvas, data, {
    rows: rows.length * H,
    cols: keys.length,
    rowLabels: labels,
    colLabels: mapLabels(keys),
    target: Math.min(width, 24 * keys.length + 60),
    labelLen: 16,
    title,
  });
}

/**
 * The layers × heads grid: a button per head with a thumbnail of its map on the text and, when `names` are given,
 * its measured name (the poem's; "Your model" has none). Thumbnails shrink for long texts; their tooltips name the
 * tokens by `labels`.
 * @param {HTMLElement} box
 * @param {{ maps: Float32Array[], T: number, labels: string[], names?: { pattern: string }[][] | null, pick: { l: number, h: number } }} o
 * @param {(l: number, h: number) => void} onPick
 */
export function headGrid(box, { maps, T, labels, names = null, pick }, onPick) {
  const H = maps[0].length / (T * T);
  const cell = Math.max(1, Math.min(12, Math.floor(96 / T)));
  const rows = maps.map((m, l) =>
    h(
      'div.poem-grid-row',
      {},
      h('span.poem-grid-layer', { text: t('poem.layer', { l: l + 1 }) }),
      ...Array.from({ length: H }, (_, hh) =>
        headCell(m, { T, cell, labels }, { l, h: hh }, names?.[l][hh], pick, onPick),
      ),
    ),
  );
  box.replaceChildren(...rows);
}

/**
 * @param {Float32Array} m  the layer's (H, T, T)
 * @param {{ T: number, cell: number, labels: string[] }} size
 * @param {{ l: number, h: number }} at
 * @param {{ pattern: string } | undefined} name  nameHeads' ('' for none); undefined: no name shown
 * @param {{ l: number, h: number }} pick
 * @param {(l: number, h: number) => void} onPick
 */
function headCell(m, { T, cell, labels }, at, name, pick, onPick) {
  const canvas = h('canvas.poem-thumb');
  drawHeatmap(canvas, m.subarray(at.h * T * T, (at.h + 1) * T * T), {
    rows: T,
    cols: T,
    rowLabels: [],
    colLabels: [],
    tipLabels: labels,
    cell,
    title: layerHead(at.l, at.h),
  });
  const on = pick.l === at.l && pick.h === at.h;
  const btn = h(
    `button.poem-head${on ? '.on' : ''}`,
    {
      type: 'button',
      'data-layer': at.l,
      'data-head': at.h,
      'data-name': name?.pattern ?? '',
      'aria-pressed': String(on),
    },
    canvas,
    h('span.poem-head-id', { text: t('poem.headN', { h: at.h + 1 }) }),
  );
  if (name) {
    const label = name.pattern ? t(`poem.pattern.${name.pattern}`) : t('poem.noRole');
    btn.append(h('span.poem-head-name', { text: label }));
  }
  btn.addEventListener('click', () => onPick(at.l, at.h));
  return btn;
}

/**
 * One head's map over the text and token links (attnlab/viz): by default the head's every query; `o.links` draws
 * others instead, e.g. one token's rows in every head of the layer, (H, 1, S) over the first S labels.
 * @param {{ map: HTMLCanvasElement, links: HTMLElement }} els
 * @param {Float32Array} m  the head's (T, T)
 * @param {string[]} labels
 * @param {string} title
 * @param {number} width
 * @param {{ links?: { data: Float32Array, shape: number[] }, query?: string[], aria?: string, bosMark?: boolean }} [o]
 *   bosMark: [BOS] labelled BOS_MARK on the map (the poem chapter, whose legend says so)
 */
export function drawHead(els, m, labels, title, width, o = {}) {
  const T = labels.length;
  const short = o.bosMark ? mapLabels(labels) : labels;
  drawHeatmap(els.map, m, { rows: T, cols: T, rowLabels: short, colLabels: short, target: width, title });
  els.links.replaceChildren();
  const w = o.links ?? { data: m, shape: [1, T, T] };
  const links = tokenLinks(els.links, w, {
    queryTokens: o.query ?? labels,
    keyTokens: labels.slice(0, w.shape[2]),
    legend: false,
    threshold: 0.05,
    rowHeight: 18,
    text: {
      cell: (c, q, k, v) => t('poem.linkTip', { q, k, v }),
      query: (tok, best) => t('poem.linkQuery', { tok, best }),
    },
  });
  links.element.querySelector('canvas')?.setAttribute('aria-label', o.aria ?? t('poem.linksAria'));
}

/**
 * The table "attention sharpness vs effect when removed".
 * @param {{ rows: { layer: number, head: number, entropy: number, sharpness: number, delta: number, mean: number | null, gradient: number | null, name: string }[], rho: number }} table
 * @param {number} uniform
 */
export function sharpnessTable(table, uniform) {
  const three = table.rows[0].mean !== null;
  const cols = ['poem.col.head', 'poem.col.name', 'poem.col.entropy', 'poem.col.sharp', 'poem.col.delta'];
  const head = h(
    'tr',
    {},
    ...[...cols, ...(three ? ['poem.col.mean', 'poem.col.gradient'] : [])].map((k) =>
      h('th', { text: t(k, { u: fmt(uniform, 2) }) }),
    ),
  );
  const signed = (/** @type {number} */ v) => `${v >= 0 ? '+' : ''}${fmt(v, 3)}`;
  const body = table.rows.map((r) =>
    h(
      'tr',
      { 'data-layer': r.layer, 'data-head': r.head, 'data-delta': r.delta, 'data-entropy': r.entropy },
      h('td', { text: layerHead(r.layer, r.head) }),
      h('td', { text: r.name ? t(`poem.pattern.${r.name}`) : t('poem.noRole') }),
      h('td.num', { text: fmt(r.entropy, 2) }),
      h('td.num', { text: fmt(r.sharpness, 2) }),
      h('td.num', { text: signed(r.delta) }),
      three ? [h('td.num', { text: signed(r.mean) }), h('td.num', { text: fmt(r.gradient, 3) })] : [],
    ),
  );
  return h('table.poem-table#poem-table', { 'data-rho': table.rho }, h('thead', {}, head), h('tbody', {}, ...body));
}

/**
 * y ticks from lo to hi, about five.
 * @param {number} lo
 * @param {number} hi
 * @returns {[number, string][]}
 */
function ticks(lo, hi) {
  const step = (hi - lo) / 4;
  return Array.from({ length: 5 }, (_, k) => [lo + k * step, fmt(lo + k * step, 1)]);
}

/**
 * The curves of a from-scratch run: training loss and the held-out probes' (the axis reaches the highest of either),
 * the best head's score per attention pattern, each head's entropy against the uniform level.
 * @param {{ loss: HTMLCanvasElement, patterns: HTMLCanvasElement, entropy: HTMLCanvasElement }} els
 * @param {import('./scratch.js').History} hist
 * @param {number} width
 */
export function drawCurves(els, hist, width) {
  const xMax = Math.max(10, hist.losses.length);
  const top = Math.max(hist.lnV, ...hist.losses.slice(0, 5), ...hist.probe.map((p) => p[1])) * 1.05;
  canvasLineChart(els.loss, {
    width,
    height: 180,
    xMax,
    xTitle: t('poem.steps'),
    yMin: 0,
    yMax: top,
    yTicks: ticks(0, top),
    series: [
      { points: hist.losses.map((v, i) => [i + 1, v]), color: '#3366cc' },
      { points: hist.probe, color: '#dc3912', dash: true },
    ],
    guides: [{ y: hist.lnV, label: t('poem.lnV', { v: fmt(hist.lnV, 2) }) }],
  });
  els.loss.dataset.points = String(hist.losses.length);
  els.loss.dataset.yMax = String(top);
  drawPatternCurves(els.patterns, hist, width, xMax);
  const series = hist.entropy[0]?.[1].flatMap((row, l) =>
    row.map((_, hh) => ({
      points: /** @type {[number, number][]} */ (hist.entropy.map(([s, e]) => [s, e[l][hh]])),
      color: headColour(hh),
      dash: l > 0,
      width: 1.5,
    })),
  );
  canvasLineChart(els.entropy, {
    width,
    height: 180,
    xMax,
    xTitle: t('poem.steps'),
    yMin: 0,
    yMax: hist.uniform * 1.1,
    yTicks: ticks(0, hist.uniform * 1.1),
    series: series ?? [],
    guides: [{ y: hist.uniform, label: t('poem.uniformLine', { v: fmt(hist.uniform, 2) }) }],
  });
  els.entropy.dataset.uniform = String(hist.uniform);
}

/** The patterns the from-scratch chart draws, with their colours. */
const PATTERN_COLOURS = /** @type {const} */ ([
  ['previous', '#3366cc'],
  ['couplet', '#dc3912'],
  ['rhyme', '#ff9900'],
  ['punctuation', '#109618'],
  ['lineStart', '#990099'],
  ['bos', '#777777'],
]);

/**
 * The best head's score on each pattern over the steps (0 … 1), and a legend beside the canvas. Past `dashFrom` (a
 * step) the lines are dashed: no snapshot between the points there.
 * @param {HTMLCanvasElement} canvas
 * @param {{ patterns: [number, Record<string, { best: number }>][] }} hist
 * @param {number} width
 * @param {number} xMax
 * @param {number} [dashFrom]
 */
export function drawPatternCurves(canvas, hist, width, xMax, dashFrom = Infinity) {
  const shown = PATTERN_COLOURS.filter(([name]) => hist.patterns[0]?.[1][name]);
  const curve = (/** @type {string} */ name, /** @type {typeof hist.patterns} */ part) =>
    /** @type {[number, number][]} */ (part.map(([s, p]) => [s, p[name].best]));
  const solid = hist.patterns.filter(([s]) => s <= dashFrom);
  const dashed = hist.patterns.slice(Math.max(0, solid.length - 1));
  canvasLineChart(canvas, {
    width,
    height: 180,
    xMax,
    xTitle: t('poem.steps'),
    yMin: 0,
    yMax: 1,
    yTicks: ticks(0, 1),
    series: shown.flatMap(([name, color]) => [
      { points: curve(name, solid), color, width: 1.5 },
      ...(dashed.length > 1 ? [{ points: curve(name, dashed), color, width: 1.5, dash: true }] : []),
    ]),
  });
  const box = canvas.parentElement?.querySelector('.poem-legend');
  if (box && box.childElementCount !== shown.length)
    box.replaceChildren(
      ...shown.map(([name, color]) =>
        h('span', {}, h('i', { style: `background:${color}` }), t(`poem.pattern.${name}`)),
      ),
    );
}

/**
 * The shipped model's own run: its training loss and its validation loss over the steps.
 * @param {HTMLCanvasElement} canvas
 * @param {import('./shipped-run.js').ShippedRun} run
 * @param {number} width
 */
export function drawShippedRun(canvas, run, width) {
  const top = Math.max(...run.train.map((p) => p[1])) * 1.05;
  canvasLineChart(canvas, {
    width,
    height: 180,
    xMax: run.steps,
    xTitle: t('poem.steps'),
    yMin: 0,
    yMax: top,
    yTicks: ticks(0, top),
    series: [
      { points: run.train, color: '#3366cc' },
      { points: run.validation, color: '#dc3912', dash: true },
    ],
  });
}

/**
 * Every head's map of a probe, one small canvas each (layer.head titles).
 * @param {Element} box
 * @param {Float32Array[]} maps  per layer (H·T·T)
 * @param {string[]} labels  the probe's T tokens
 */
export function drawProbeMaps(box, maps, labels) {
  const T = labels.length;
  const H = maps[0].length / (T * T);
  box.replaceChildren(
    ...maps.flatMap((m, l) =>
      Array.from({ length: H }, (_, hh) => {
        const canvas = h('canvas', { 'data-layer': l, 'data-head': hh });
        const title = layerHead(l, hh);
        drawHeatmap(canvas, m.subarray(hh * T * T, (hh + 1) * T * T), {
          rows: T,
          cols: T,
          rowLabels: labels,
          colLabels: labels,
          cell: 4,
          title,
          labelLen: 1,
        });
        return h('figure', {}, canvas, h('figcaption', { text: title }));
      }),
    ),
  );
}
