// The page's one chart module: SVG charts (line chart for the √dₖ part, grouped bars for the speed test; every
// mark carries a <title> and data- attributes) and a canvas line chart against training step (the training part).

import { svg, fmt, sizeCanvas } from './util.js';

/**
 * Line chart. opts: { width, height, x: number[], xLabels: string[], xTitle, yTitle, yMin, yMax,
 * series: [{ name, color, values: number[], dash, marker }], guides: [{ y, label }] }
 */
export function lineChart(opts) {
  const W = opts.width ?? 340;
  const H = opts.height ?? 210;
  const m = { l: 46, r: 12, t: 12, b: 40 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const xs = opts.x;
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const y0 = opts.yMin ?? 0;
  const y1 = opts.yMax;
  const X = (v) => m.l + ((v - x0) / (x1 - x0 || 1)) * iw;
  const Y = (v) => m.t + ih - ((v - y0) / (y1 - y0 || 1)) * ih;
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: 'img',
    'aria-label': opts.title || '',
  });
  // grid + axes
  const yTicks = opts.yTicks ?? 4;
  for (let i = 0; i <= yTicks; i++) {
    const v = y0 + ((y1 - y0) * i) / yTicks;
    root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: Y(v), y2: Y(v), stroke: '#e6e9ee' }));
    root.append(
      svg('text', { x: m.l - 5, y: Y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#667', text: fmt(v, 2) }),
    );
  }
  xs.forEach((v, i) => {
    if (opts.xLabels && opts.xLabels[i] === '') return;
    root.append(
      svg('text', {
        x: X(v),
        y: m.t + ih + 14,
        'text-anchor': 'middle',
        'font-size': 10,
        fill: '#667',
        text: opts.xLabels ? opts.xLabels[i] : fmt(v),
      }),
    );
  });
  root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: m.t + ih, y2: m.t + ih, stroke: '#99a' }));
  root.append(svg('line', { x1: m.l, x2: m.l, y1: m.t, y2: m.t + ih, stroke: '#99a' }));
  root.append(
    svg('text', {
      x: m.l + iw / 2,
      y: H - 6,
      'text-anchor': 'middle',
      'font-size': 11,
      fill: '#334',
      text: opts.xTitle || '',
    }),
  );
  root.append(yAxisTitle(m, ih, opts.yTitle));
  for (const g of opts.guides || []) {
    root.append(
      svg('line', { x1: m.l, x2: m.l + iw, y1: Y(g.y), y2: Y(g.y), stroke: '#888', 'stroke-dasharray': '2 3' }),
    );
    root.append(
      svg('text', {
        x: m.l + iw - 2,
        y: Y(g.y) - 3,
        'text-anchor': 'end',
        'font-size': 10,
        fill: '#666',
        text: g.label,
      }),
    );
  }
  for (const s of opts.series) {
    const d = s.values
      .map((v, i) => `${i ? 'L' : 'M'}${X(xs[i]).toFixed(1)},${Y(Math.min(y1, Math.max(y0, v))).toFixed(1)}`)
      .join(' ');
    root.append(
      svg('path', {
        d,
        fill: 'none',
        stroke: s.color,
        'stroke-width': 2,
        'stroke-dasharray': s.dash ? '5 3' : null,
        'data-series': s.name,
      }),
    );
    s.values.forEach((v, i) => {
      root.append(
        svg(
          'circle',
          {
            cx: X(xs[i]),
            cy: Y(Math.min(y1, Math.max(y0, v))),
            r: 3.2,
            fill: s.dash ? '#fff' : s.color,
            stroke: s.color,
            'stroke-width': 1.5,
            'data-value': v,
          },
          svg('title', {
            text: `${s.name}\n${opts.xName || 'x'} = ${opts.xLabels ? opts.xLabels[i] || xs[i] : xs[i]}: ${fmt(v, 4)}`,
          }),
        ),
      );
    });
  }
  return root;
}

/**
 * Grouped bar chart. opts: { width, groups: [{ label }], series: [{ name, color }],
 * values: (groupIndex, seriesIndex) → { value, label?, hatched? } | null, yTitle, log }
 */
export function barChart(opts) {
  const groups = opts.groups;
  const series = opts.series;
  const W = opts.width ?? Math.max(360, groups.length * (series.length * 18 + 26) + 70);
  const H = opts.height ?? 240;
  const m = { l: 54, r: 10, t: 14, b: 44 };
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  let vmax = 0;
  let vmin = Infinity;
  groups.forEach((_, g) =>
    series.forEach((__, s) => {
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
  const Y = (v) =>
    m.t +
    ih -
    (log ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo) || 1) : v / hi) * ih;
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: 'img',
    'aria-label': opts.title || '',
  });
  const ticks = log ? decades(lo, hi) : [0, hi / 4, hi / 2, (3 * hi) / 4, hi];
  for (const v of ticks) {
    root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: Y(v), y2: Y(v), stroke: '#e6e9ee' }));
    root.append(
      svg('text', { x: m.l - 5, y: Y(v) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#667', text: tick(v) }),
    );
  }
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
        fill: s.color,
        'data-series': s.name,
        'data-group': grp.label,
        'data-value': c.value,
      };
      if (c.hatched) {
        attrs.fill = 'url(#hatch-' + si + ')';
        attrs.stroke = s.color;
      }
      root.append(svg('rect', attrs, svg('title', { text: `${s.name}, ${grp.label}: ${c.label ?? fmt(c.value, 3)}` })));
    });
    const lines = String(grp.label).split('\n');
    lines.forEach((ln, k) =>
      root.append(
        svg('text', {
          x: m.l + g * gw + gw / 2,
          y: m.t + ih + 14 + k * 12,
          'text-anchor': 'middle',
          'font-size': 10,
          fill: '#334',
          text: ln,
        }),
      ),
    );
  });
  const defs = svg('defs');
  series.forEach((s, si) => {
    defs.append(
      svg(
        'pattern',
        { id: 'hatch-' + si, width: 5, height: 5, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
        svg('rect', { width: 5, height: 5, fill: '#fff' }),
        svg('rect', { width: 2.5, height: 5, fill: s.color }),
      ),
    );
  });
  root.prepend(defs);
  root.append(svg('line', { x1: m.l, x2: m.l + iw, y1: m.t + ih, y2: m.t + ih, stroke: '#99a' }));
  return root;
}

/** The y axis title of an SVG chart with margins m and inner height ih, written upwards along the left edge. */
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

function tick(v) {
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (v >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return fmt(v, 2);
}

function decades(lo, hi) {
  const out = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) out.push(v);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Canvas line charts against training step (many points, redrawn ≈ 16 times a second)
// ---------------------------------------------------------------------------------------------------------

/** 50, 100, 200, 250, 500, …: a round upper end for the step axis, so that fifths are whole steps. */
export function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= v) return k * p;
  return 10 * p;
}

/**
 * A line chart on a canvas. opts: { width, height, xMax, xTitle, log (y on a log10 scale), yMin, yMax,
 * yTicks: [value, label][], series: [{ points: [[x, y]], color, width?, dash? }], guides: [{ y, label, color? }] }.
 * A series with more points than pixel columns is drawn as bucket means.
 */
export function canvasLineChart(canvas, opts) {
  const W = opts.width;
  const H = opts.height;
  const m = { l: 44, r: 10, t: 10, b: 32 };
  const ctx = sizeCanvas(canvas, W, H);
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  const f = opts.log ? (v) => Math.log10(Math.max(v, opts.yMin)) : (v) => v;
  const [lo, hi] = [f(opts.yMin), f(opts.yMax)];
  const Y = (v) => m.t + ih - ((f(v) - lo) / (hi - lo || 1)) * ih;
  const X = (s) => m.l + (s / opts.xMax) * iw;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  ctx.font = '10px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (const [v, label] of opts.yTicks) {
    ctx.strokeStyle = '#e6e9ee';
    ctx.beginPath();
    ctx.moveTo(m.l, Y(v));
    ctx.lineTo(m.l + iw, Y(v));
    ctx.stroke();
    ctx.fillStyle = '#667';
    ctx.textAlign = 'right';
    ctx.fillText(label, m.l - 5, Y(v));
  }
  ctx.textAlign = 'center';
  for (let k = 0; k <= 5; k++) ctx.fillText(String(Math.round((opts.xMax * k) / 5)), m.l + (iw * k) / 5, m.t + ih + 11);
  ctx.strokeStyle = '#99a';
  ctx.beginPath();
  ctx.moveTo(m.l, m.t);
  ctx.lineTo(m.l, m.t + ih);
  ctx.lineTo(m.l + iw, m.t + ih);
  ctx.stroke();
  ctx.fillStyle = '#334';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText(opts.xTitle, m.l + iw / 2, H - 7);
  for (const g of opts.guides || []) {
    ctx.strokeStyle = g.color || '#888';
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(m.l, Y(g.y));
    ctx.lineTo(m.l + iw, Y(g.y));
    ctx.stroke();
    ctx.setLineDash([]);
    if (g.label) {
      ctx.fillStyle = g.color || '#666';
      ctx.font = '10px system-ui, sans-serif';
      ctx.textAlign = 'right';
      ctx.fillText(g.label, m.l + iw - 2, Y(g.y) - 7);
    }
  }
  for (const s of opts.series) {
    const pts = s.points;
    if (!pts.length) continue;
    const k = Math.max(1, Math.ceil(pts.length / iw));
    ctx.strokeStyle = s.color;
    ctx.lineWidth = s.width || 2;
    ctx.setLineDash(s.dash ? [5, 3] : []);
    ctx.beginPath();
    for (let i = 0; i < pts.length; i += k) {
      let sx = 0;
      let sy = 0;
      let c = 0;
      for (let q = i; q < Math.min(pts.length, i + k); q++) {
        sx += pts[q][0];
        sy += pts[q][1];
        c++;
      }
      const x = X(sx / c);
      const y = Y(Math.min(opts.yMax, Math.max(opts.yMin, sy / c)));
      if (i === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
  }
}
