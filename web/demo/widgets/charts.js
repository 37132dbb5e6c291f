// @ts-check
// The page's SVG charts: a line chart (the √dₖ part) and grouped bars (the speed test). Every mark carries a <title>
// and data- attributes.

import { fmt } from '../shared/format.js';
import { svg } from './dom.js';

/** @typedef {{ l: number, r: number, t: number, b: number }} Margins */
/** @typedef {{ name: string, color: string, values: number[], dash?: boolean }} LineSeries */

/**
 * @typedef {object} LineChartOptions
 * @property {number} [width] default 340
 * @property {number} [height] default 210
 * @property {number[]} x
 * @property {string[]} [xLabels] '' = no label at that x
 * @property {string} [xName] in the marks' titles (default 'x')
 * @property {string} [xTitle]
 * @property {string} [yTitle]
 * @property {string} [title] aria-label
 * @property {number} [yMin] default 0
 * @property {number} yMax
 * @property {number} [yTicks] default 4
 * @property {LineSeries[]} series
 * @property {{ y: number, label: string }[]} [guides] dashed horizontal lines
 */

/**
 * The chart's <svg> root.
 * @param {number} W
 * @param {number} H
 * @param {string} [title]
 */
function chartRoot(W, H, title) {
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': title || '' });
}

/**
 * A horizontal grid line at y with its tick label on the left.
 * @param {Margins} m
 * @param {number} iw inner width
 * @param {number} y
 * @param {string} label
 */
function gridLine(m, iw, y, label) {
  return [
    svg('line', { x1: m.l, x2: m.l + iw, y1: y, y2: y, stroke: '#e6e9ee' }),
    svg('text', { x: m.l - 5, y: y + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#667', text: label }),
  ];
}

/**
 * The y axis title of an SVG chart with margins m and inner height ih, written upwards along the left edge.
 * @param {Margins} m
 * @param {number} ih
 * @param {string} [title]
 */
function yAxisTitle(m, ih, title) {
  const y = m.t + ih / 2;
  return svg('text', {
    x: 12,
    y,
    'text-anchor': 'middle',
    'font-size': 11,
    fill: '#334',
    transform: `rotate(-90 12 ${y})`,
    text: title || '',
  });
}

/** @param {LineChartOptions} opts */
export function lineChart(opts) {
  const W = opts.width ?? 340;
  const H = opts.height ?? 210;
  const m = { l: 46, r: 12, t: 12, b: 40 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const xs = opts.x;
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [opts.yMin ?? 0, opts.yMax];
  /** @param {number} v */
  const X = (v) => m.l + ((v - x0) / (x1 - x0 || 1)) * iw;
  /** @param {number} v */
  const Y = (v) => m.t + ih - ((v - y0) / (y1 - y0 || 1)) * ih;
  const root = chartRoot(W, H, opts.title);
  const yTicks = opts.yTicks ?? 4;
  for (let i = 0; i <= yTicks; i++) {
    const v = y0 + ((y1 - y0) * i) / yTicks;
    root.append(...gridLine(m, iw, Y(v), fmt(v, 2)));
  }
  xs.forEach((v, i) => {
    if (opts.xLabels && opts.xLabels[i] === '') return;
    const text = opts.xLabels ? opts.xLabels[i] : fmt(v);
    root.append(
      svg('text', { x: X(v), y: m.t + ih + 14, 'text-anchor': 'middle', 'font-size': 10, fill: '#667', text }),
    );
  });
  root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: m.t + ih, y2: m.t + ih, stroke: '#99a' }));
  root.append(svg('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + ih, stroke: '#99a' }));
  const xTitle = opts.xTitle || '';
  root.append(
    svg('text', { x: m.l + iw / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11, fill: '#334', text: xTitle }),
  );
  root.append(yAxisTitle(m, ih, opts.yTitle));
  for (const g of opts.guides || []) {
    root.append(
      svg('line', { x1: m.l, x2: m.l + iw, y1: Y(g.y), y2: Y(g.y), stroke: '#888', 'stroke-dasharray': '2 3' }),
    );
    const at = { x: m.l + iw - 2, y: Y(g.y) - 3 };
    root.append(svg('text', { ...at, 'text-anchor': 'end', 'font-size': 10, fill: '#666', text: g.label }));
  }
  /** @param {number} v */
  const clampY = (v) => Y(Math.min(y1, Math.max(y0, v)));
  for (const s of opts.series) root.append(...lineSeries(s, xs, X, clampY, opts));
  return root;
}

/**
 * One series of a line chart: its path and a circle with a <title> at every point.
 * @param {LineSeries} s
 * @param {number[]} xs
 * @param {(v: number) => number} X
 * @param {(v: number) => number} Y clamped to the chart
 * @param {LineChartOptions} opts
 */
function lineSeries(s, xs, X, Y, opts) {
  const d = s.values.map((v, i) => `${i ? 'L' : 'M'}${X(xs[i]).toFixed(1)},${Y(v).toFixed(1)}`).join(' ');
  const path = svg('path', {
    d,
    fill: 'none',
    stroke: s.color,
    'stroke-width': 2,
    'stroke-dasharray': s.dash ? '5 3' : null,
    'data-series': s.name,
  });
  const marks = s.values.map((v, i) => {
    const at = opts.xLabels ? opts.xLabels[i] || xs[i] : xs[i];
    const title = svg('title', { text: `${s.name}\n${opts.xName || 'x'} = ${at}: ${fmt(v, 4)}` });
    const style = { fill: s.dash ? '#fff' : s.color, stroke: s.color, 'stroke-width': 1.5, 'data-value': v };
    return svg('circle', { cx: X(xs[i]), cy: Y(v), r: 3.2, ...style }, title);
  });
  return [path, ...marks];
}

/** @typedef {{ value: number, label?: string, hatched?: boolean } | null | undefined} Bar */

/**
 * @typedef {object} BarChartOptions
 * @property {number} [width]
 * @property {number} [height] default 240
 * @property {{ label: string }[]} groups a label's '\n' breaks it into lines
 * @property {{ name: string, color: string }[]} series
 * @property {(group: number, series: number) => Bar} values a missing or non-positive bar is not drawn
 * @property {string} [yTitle]
 * @property {string} [title] aria-label
 * @property {boolean} [log] a log10 y axis
 */

/**
 * The y range and scale of a bar chart: linear from 0, or log10 over whole decades.
 * @param {BarChartOptions} opts
 * @param {number} ih inner height
 * @param {number} top the top margin
 */
function barScale(opts, ih, top) {
  let vmax = 0;
  let vmin = Infinity;
  opts.groups.forEach((_, g) =>
    opts.series.forEach((__, s) => {
      const c = opts.values(g, s);
      if (c && c.value > 0) {
        vmax = Math.max(vmax, c.value);
        vmin = Math.min(vmin, c.value);
      }
    }),
  );
  if (!(vmax > 0)) vmax = 1;
  const log = !!opts.log;
  const lo = log ? 10 ** Math.floor(Math.log10(Math.min(vmin, vmax))) : 0;
  const hi = log ? 10 ** Math.ceil(Math.log10(vmax)) : niceCeil(vmax);
  const span = Math.log10(hi) - Math.log10(lo) || 1;
  /** @param {number} v */
  const Y = (v) => top + ih - (log ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span : v / hi) * ih;
  const ticks = log ? decades(lo, hi) : [0, hi / 4, hi / 2, (3 * hi) / 4, hi];
  return { Y, ticks };
}

/** @param {BarChartOptions} opts */
export function barChart(opts) {
  const { groups, series } = opts;
  const W = opts.width ?? Math.max(360, groups.length * (series.length * 18 + 26) + 70);
  const H = opts.height ?? 240;
  const m = { l: 54, r: 10, t: 14, b: 44 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const { Y, ticks } = barScale(opts, ih, m.t);
  const root = chartRoot(W, H, opts.title);
  for (const v of ticks) root.append(...gridLine(m, iw, Y(v), tick(v)));
  root.append(yAxisTitle(m, ih, opts.yTitle));
  const gw = iw / groups.length;
  const bw = Math.min(22, (gw - 10) / series.length);
  groups.forEach((grp, g) => {
    const gx = m.l + g * gw + (gw - bw * series.length) / 2;
    series.forEach((s, si) => {
      const c = opts.values(g, si);
      if (!c || !(c.value > 0)) return;
      const y = Y(c.value);
      const attrs = {
        x: gx + si * bw + 1,
        y,
        width: bw - 2,
        height: m.t + ih - y,
        fill: c.hatched ? 'url(#hatch-' + si + ')' : s.color,
        stroke: c.hatched ? s.color : undefined,
        'data-series': s.name,
        'data-group': grp.label,
        'data-value': c.value,
      };
      root.append(svg('rect', attrs, svg('title', { text: `${s.name}, ${grp.label}: ${c.label ?? fmt(c.value, 3)}` })));
    });
    String(grp.label)
      .split('\n')
      .forEach((ln, k) => {
        const at = { x: m.l + g * gw + gw / 2, y: m.t + ih + 14 + k * 12 };
        root.append(svg('text', { ...at, 'text-anchor': 'middle', 'font-size': 10, fill: '#334', text: ln }));
      });
  });
  root.prepend(hatches(series));
  root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: m.t + ih, y2: m.t + ih, stroke: '#99a' }));
  return root;
}

/**
 * One hatch pattern per series (#hatch-<index>), for bars marked hatched.
 * @param {{ color: string }[]} series
 */
function hatches(series) {
  const defs = svg('defs');
  series.forEach((s, si) => {
    const attrs = {
      id: 'hatch-' + si,
      width: 5,
      height: 5,
      patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)',
    };
    defs.append(
      svg(
        'pattern',
        attrs,
        svg('rect', { width: 5, height: 5, fill: '#fff' }),
        svg('rect', { width: 2.5, height: 5, fill: s.color }),
      ),
    );
  });
  return defs;
}

/** @param {number} v */
function tick(v) {
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (v >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return fmt(v, 2);
}

/**
 * @param {number} lo
 * @param {number} hi
 */
function decades(lo, hi) {
  const out = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) out.push(v);
  return out;
}

/**
 * 50, 100, 200, 250, 500, …: a round upper end for an axis, so that fifths are whole steps.
 * @param {number} v
 */
export function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= v) return k * p;
  return 10 * p;
}
