// @ts-check
// A line chart on a canvas against training step (many points, redrawn ≈ 16 times a second): the training part's
// curves.

/**
 * Device-pixel-ratio aware canvas sizing; returns the 2-D context scaled to CSS pixels.
 * @param {HTMLCanvasElement} canvas
 * @param {number} w
 * @param {number} hgt
 */
export function sizeCanvas(canvas, w, hgt) {
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(hgt * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${hgt}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** @typedef {{ points: [number, number][], color: string, width?: number, dash?: boolean }} CanvasSeries */

/**
 * @typedef {object} CanvasChartOptions
 * @property {number} width
 * @property {number} height
 * @property {number} xMax
 * @property {string} xTitle
 * @property {boolean} [log] y on a log10 scale
 * @property {number} yMin
 * @property {number} yMax
 * @property {[number, string][]} yTicks [value, label]
 * @property {CanvasSeries[]} series a series with more points than pixel columns is drawn as bucket means
 * @property {{ y: number, label?: string, color?: string }[]} [guides] dashed horizontal lines
 */

const MARGINS = { l: 44, r: 10, t: 10, b: 32 };

/**
 * @param {HTMLCanvasElement} canvas
 * @param {CanvasChartOptions} opts
 */
export function canvasLineChart(canvas, opts) {
  const { width: W, height: H } = opts;
  const m = MARGINS;
  const ctx = sizeCanvas(canvas, W, H);
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  /** @type {(v: number) => number} */
  const f = opts.log ? (v) => Math.log10(Math.max(v, opts.yMin)) : (v) => v;
  const [lo, hi] = [f(opts.yMin), f(opts.yMax)];
  /** @param {number} v */
  const Y = (v) => m.t + ih - ((f(v) - lo) / (hi - lo || 1)) * ih;
  /** @param {number} s */
  const X = (s) => m.l + (s / opts.xMax) * iw;
  axes(ctx, opts, iw, ih, Y);
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
  for (const s of opts.series)
    if (s.points.length) drawSeries(ctx, s, iw, X, (v) => Y(Math.min(opts.yMax, Math.max(opts.yMin, v))));
}

/**
 * White background, y grid with tick labels, x ticks at fifths, the axes and the x title.
 * @param {CanvasRenderingContext2D} ctx
 * @param {CanvasChartOptions} opts
 * @param {number} iw
 * @param {number} ih
 * @param {(v: number) => number} Y
 */
function axes(ctx, opts, iw, ih, Y) {
  const m = MARGINS;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, opts.width, opts.height);
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
  ctx.fillText(opts.xTitle, m.l + iw / 2, opts.height - 7);
}

/**
 * One series, as bucket means when it has more points than the chart has pixel columns.
 * @param {CanvasRenderingContext2D} ctx
 * @param {CanvasSeries} s
 * @param {number} iw
 * @param {(x: number) => number} X
 * @param {(y: number) => number} Y clamped to the chart
 */
function drawSeries(ctx, s, iw, X, Y) {
  const pts = s.points;
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
    if (i === 0) ctx.moveTo(X(sx / c), Y(sy / c));
    else ctx.lineTo(X(sx / c), Y(sy / c));
  }
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.lineWidth = 1;
}
