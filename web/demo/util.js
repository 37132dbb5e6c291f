// Small helpers shared by the demo's parts: tensors, a seeded RNG, number formatting, colour scales,
// labelled matrix tables, heat maps on canvas, legends and a hover tooltip. No framework, no DOM outside
// the functions that take elements.

/** Tensor in attnlab's format: { data: Float32Array, shape: number[] } (row-major). */
export function tensor(data, shape) {
  return { data: data instanceof Float32Array ? data : Float32Array.from(data), shape: shape.slice() };
}

/** Rows of a 2-D array (array of arrays) → Tensor. */
export function fromRows(rows) {
  const r = rows.length;
  const c = r ? rows[0].length : 0;
  const data = new Float32Array(r * c);
  rows.forEach((row, i) =>
    row.forEach((v, j) => {
      data[i * c + j] = v;
    }),
  );
  return tensor(data, [r, c]);
}

/** Float32Array (r*c) → array of r plain arrays. */
export function toRows(data, r, c, offset = 0) {
  const out = [];
  for (let i = 0; i < r; i++) out.push(Array.from(data.subarray(offset + i * c, offset + (i + 1) * c)));
  return out;
}

/** mulberry32: a small seeded PRNG, deterministic across browsers and Node. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.normal = () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return next;
}

/** FNV-1a hash of a string: stable seeds for per-token pseudo-embeddings. */
export function hashString(s) {
  let h = 0x811c9dc5;
  for (const ch of s) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Sinusoidal positional encoding, pe[t, 2i] = sin(t / 10000^(2i/E)), pe[t, 2i+1] = cos(…); float64 → float32. */
export function positionalEncoding(T, E) {
  const pe = new Float32Array(T * E);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < E / 2; i++) {
      const ang = t / 10000 ** ((2 * i) / E);
      pe[t * E + 2 * i] = Math.sin(ang);
      pe[t * E + 2 * i + 1] = Math.cos(ang);
    }
  }
  return pe;
}

/** Compact number format for matrix cells. */
export function fmt(v, digits = 3) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replaceAll('-', '−');
  const r = +v.toFixed(digits);
  if (r === 0) return v.toExponential(1).replaceAll('-', '−'); // never show a non-zero value as 0
  return r.toString().replaceAll('-', '−');
}

/** Full-precision number for tooltips and data- attributes. */
export function full(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return String(v);
}

// ---------------------------------------------------------------------------------------------------------
// Colour scales
// ---------------------------------------------------------------------------------------------------------

const SEQ_STOPS = [
  // white → blue → deep indigo, for weights in [0, 1]
  [0, [247, 251, 255]],
  [0.25, [198, 219, 239]],
  [0.5, [107, 174, 214]],
  [0.75, [33, 113, 181]],
  [1, [8, 48, 107]],
];
const DIV_NEG = [33, 102, 172];
const DIV_POS = [178, 24, 43];

function lerpStops(stops, t) {
  t = Math.min(1, Math.max(0, t));
  for (let i = 1; i < stops.length; i++) {
    if (t <= stops[i][0]) {
      const [t0, c0] = stops[i - 1];
      const [t1, c1] = stops[i];
      const u = (t - t0) / (t1 - t0);
      return c0.map((c, k) => Math.round(c + (c1[k] - c) * u));
    }
  }
  return stops[stops.length - 1][1];
}

/** Colour of a weight in [0, 1]. */
export function seqColor(t) {
  if (!Number.isFinite(t)) return 'rgb(255, 214, 0)';
  const [r, g, b] = lerpStops(SEQ_STOPS, t);
  return `rgb(${r}, ${g}, ${b})`;
}

/** Colour of a signed value on a symmetric scale [-m, m]. */
export function divColor(v, m) {
  if (Number.isNaN(v)) return 'rgb(255, 214, 0)';
  if (v === -Infinity) return 'rgb(60, 60, 60)';
  if (v === Infinity) return 'rgb(120, 0, 20)';
  const t = m > 0 ? Math.min(1, Math.abs(v) / m) : 0;
  const end = v < 0 ? DIV_NEG : DIV_POS;
  const [r, g, b] = [255, 255, 255].map((c, k) => Math.round(c + (end[k] - c) * t));
  return `rgb(${r}, ${g}, ${b})`;
}

/** Black or white text for a background colour "rgb(r, g, b)". */
export function textOn(rgb) {
  const [r, g, b] = rgb.match(/\d+/g).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b < 140 ? '#fff' : '#111';
}

/** A horizontal colour legend: gradient bar with tick labels. kind 'seq' ([lo, hi]; colour(t) for t in [0, 1], default
 * seqColor, e.g. attnlab/viz's weightColour for its heat maps) or 'div' ([-m, m]). */
export function legend(kind, lo, hi, caption, colour = kind === 'seq' ? seqColor : null) {
  const el = document.createElement('div');
  el.className = caption.length > 28 ? 'legend wide' : 'legend';
  const bar = document.createElement('div');
  bar.className = 'legend-bar';
  const stops = [];
  for (let i = 0; i <= 10; i++) {
    const t = i / 10;
    stops.push(colour ? colour(t) : divColor(lo + (hi - lo) * t, Math.max(Math.abs(lo), Math.abs(hi))));
  }
  bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
  const ticks = document.createElement('div');
  ticks.className = 'legend-ticks';
  for (const v of [lo, (lo + hi) / 2, hi]) {
    const s = document.createElement('span');
    s.textContent = fmt(v, 2);
    ticks.append(s);
  }
  const cap = document.createElement('div');
  cap.className = 'legend-caption';
  cap.textContent = caption;
  el.append(cap, bar, ticks);
  return el;
}

// ---------------------------------------------------------------------------------------------------------
// Tooltip
// ---------------------------------------------------------------------------------------------------------

let tip = null;
export function showTip(text, x, y) {
  if (!tip) {
    tip = document.createElement('div');
    tip.className = 'tooltip';
    tip.setAttribute('role', 'tooltip');
    document.body.append(tip);
  }
  tip.textContent = text;
  tip.hidden = false;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  const left = Math.min(window.scrollX + window.innerWidth - w - 8, x + 14);
  const top = y + 16 + h > window.scrollY + window.innerHeight ? y - h - 10 : y + 16;
  tip.style.left = `${Math.max(window.scrollX + 4, left)}px`;
  tip.style.top = `${top}px`;
}
export function hideTip() {
  if (tip) tip.hidden = true;
}

// ---------------------------------------------------------------------------------------------------------
// DOM helpers
// ---------------------------------------------------------------------------------------------------------

/** h('div.class#id', {attrs}, ...children) */
export function h(spec, attrs = {}, ...children) {
  const [, tag = 'div', rest = ''] = spec.match(/^([a-z0-9]*)(.*)$/i);
  const el = document.createElement(tag || 'div');
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'html') el.innerHTML = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/**
 * A labelled matrix as an HTML table with numbers in coloured cells.
 * opts: { rows, cols, rowLabels, colLabels, title, note, color: (v) => rgb, digits, cellAttrs(i, j, v),
 *         id, className, rowExtra: (i) => string (an extra column, e.g. row sums) , rowExtraLabel }
 */
export function matrixTable(values, opts) {
  const { rows, cols } = opts;
  const table = h('table.matrix' + (opts.className ? '.' + opts.className : ''), { id: opts.id });
  if (opts.caption) table.append(h('caption', { text: opts.caption }));
  const head = h('tr', {}, h('th.corner', { text: opts.corner || '' }));
  for (let j = 0; j < cols; j++)
    head.append(h('th.col', { scope: 'col', text: opts.colLabels ? opts.colLabels[j] : String(j) }));
  if (opts.rowExtra) head.append(h('th.extra', { scope: 'col', text: opts.rowExtraLabel || '' }));
  table.append(h('thead', {}, head));
  const body = h('tbody');
  for (let i = 0; i < rows; i++) {
    const tr = h(
      'tr',
      { 'data-row': i },
      h('th.row', { scope: 'row', text: opts.rowLabels ? opts.rowLabels[i] : String(i) }),
    );
    for (let j = 0; j < cols; j++) {
      const v = values[i * cols + j];
      const bg = opts.color ? opts.color(v, i, j) : null;
      const td = h('td', {
        'data-i': i,
        'data-j': j,
        'data-value': full(v),
        text: fmt(v, opts.digits ?? 3),
        title: opts.noTitle ? undefined : opts.cellTitle ? opts.cellTitle(v, i, j) : full(v),
        ...(opts.cellAttrs ? opts.cellAttrs(v, i, j) : {}),
      });
      if (bg) {
        td.style.background = bg;
        td.style.color = textOn(bg);
      }
      tr.append(td);
    }
    if (opts.rowExtra) tr.append(h('td.extra', { text: opts.rowExtra(i) }));
    body.append(tr);
  }
  table.append(body);
  return table;
}

/** Device-pixel-ratio aware canvas sizing; returns the 2-D context scaled to CSS pixels. */
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

/** Shorten a token label for axes. */
export function shortLabel(s, n = 6) {
  const chars = [...s];
  return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : s;
}

export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) el.append(c);
  return el;
}

/** Error → "RangeError: message" in one line. */
export function errText(e) {
  if (e && typeof e === 'object' && 'message' in e) return `${e.name || 'Error'}: ${e.message}`;
  return String(e);
}
