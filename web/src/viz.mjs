// @ts-check
// attnlab/viz: attention weights drawn into a page, framework-free and independent of the wasm build.
//
//   headMaps(element, weights (H, Lq, Lk), options)    one heat map per head, plus the head average
//   tokenLinks(element, weights (H, Lq, Lk), options)  BertViz's head view: query tokens → key tokens, one colour a head
//   modelGrid(element, weights (layers, H, Lq, Lk), options)   BertViz's model view: a layers × heads grid
//
// weights: { data, shape } or { data, dims } (attnlab's results, onnxruntime-web's and transformers.js's tensors;
// leading dimensions of size 1, e.g. a batch of one, are dropped); modelGrid also takes an array with one such tensor
// per layer (transformers.js's `attentions`). Each function appends one root element to `element` and returns
// { element, update(weights), destroy(), toSVG(), toPNG() }; destroy() removes the root and every listener it added.
// Colours: a viridis-like ramp for weights (readable with red-green colour blindness), Okabe–Ito colours for heads.
// heatMap (viz-heatmap.mjs) is the painter every heat map uses, the demo page's included; options.text translates.
// Hover shows the number; every view is keyboard reachable (Tab, then arrow keys; on heat maps PageUp/PageDown move
// a sixteenth of the rows, Home/End to a row's ends) and announces the value.
// Views export: toSVG() → a standalone SVG string, toPNG() → Promise<Blob> (viz-export.mjs). Large views (more than
// kEagerCells cells in all) paint each map when it comes into view, about 12 ms of maps a frame, so that 1,024 tokens
// stay interactive.

import { chipSVG, figuresSVG, svgDocument, svgText, svgToPNG } from './viz-export.mjs';
import { headColour, heatMap, weightColour } from './viz-heatmap.mjs';

/** Views with more cells than this in all paint their maps on demand (when shown) instead of at once. */
const kEagerCells = 1 << 20;

export { headColour, heatMap, weightColour };

/**
 * The words a view shows (captions, tooltips, legend); pass `options.text` to translate them.
 * @typedef {{ head: (h: number) => string, mean: string, layerHead: (l: number, h: number) => string,
 *             cell: (caption: string, query: string, key: string, value: string) => string,
 *             query: (token: string, best: string) => string }} Text
 * @type {Text}
 */
const kText = {
  head: (h) => `head ${h}`,
  mean: 'mean of heads',
  layerHead: (l, h) => `layer ${l} head ${h}`,
  cell: (caption, q, k, v) => `${caption}: query ${q} → key ${k}: ${v}`,
  query: (token, best) => `query ${token}: ${best}`,
};
const textOf = (/** @type {{ text?: Partial<Text> }} */ options) => ({ ...kText, ...options.text });

/**
 * The weights as `dims` of exactly `rank` dimensions (leading 1s dropped, missing leading dims added) and `at(m)`,
 * where the m-th (Lq, Lk) matrix starts: { data, offset }. The data are held, not copied (an array of per-layer
 * tensors stays an array).
 * @param {string} ctx
 * @param {any} weights
 * @param {number} rank
 * @returns {{ dims: number[], at: (m: number) => { data: Float32Array | Float64Array, offset: number } }}
 */
function readWeights(ctx, weights, rank) {
  if (Array.isArray(weights)) {
    // One tensor per layer (transformers.js `attentions`).
    const layers = weights.map((w, i) => readWeights(`${ctx} (layer ${i})`, w, rank - 1));
    const dims = layers[0]?.dims ?? [];
    if (layers.some((l) => l.dims.join() !== dims.join())) {
      throw new RangeError(
        `${ctx}: weights of every layer must have one shape, got ${layers.map((l) => `[${l.dims}]`).join(', ')}`,
      );
    }
    const per = dims.slice(0, -2).reduce((a, b) => a * b, 1); // matrices in a layer
    return { dims: [layers.length, ...dims], at: (m) => layers[Math.floor(m / per)].at(m % per) };
  }
  const data = weights?.data;
  const shape = weights?.shape ?? weights?.dims;
  if (!(data instanceof Float32Array || data instanceof Float64Array) || !Array.isArray(shape)) {
    throw new TypeError(
      `${ctx}: weights must be { data: Float32Array, shape } or { data, dims }, got ${typeof weights}`,
    );
  }
  let dims = shape.map(Number);
  while (dims.length > rank && dims[0] === 1) dims = dims.slice(1);
  while (dims.length < rank) dims = [1, ...dims];
  const size = dims.reduce((a, b) => a * b, 1);
  if (dims.length !== rank || size !== data.length) {
    throw new RangeError(
      `${ctx}: weights of shape [${shape.join(', ')}] (${data.length} values) are not ${rank}-D here`,
    );
  }
  const n = dims.slice(-2).reduce((a, b) => a * b, 1);
  return { dims, at: (m) => ({ data, offset: m * n }) };
}

/** Labels for n positions: the given tokens, else 0 … n-1. */
function labels(tokens, n) {
  return Array.from({ length: n }, (_, i) => String(tokens?.[i] ?? i));
}

/**
 * A root element plus the bookkeeping every view shares: listeners removed on destroy, a tooltip, a live region.
 * @param {HTMLElement} element
 * @param {string} fn the view function, for messages
 * @param {string} kind the root's class suffix
 */
function makeRoot(element, fn, kind) {
  if (!element || typeof element.appendChild !== 'function') {
    throw new TypeError(`${fn}: element must be a DOM element, got ${element === null ? 'null' : typeof element}`);
  }
  const doc = element.ownerDocument;
  const root = doc.createElement('div');
  root.className = `attnlab-viz attnlab-${kind}`;
  root.style.cssText = 'position:relative;display:flex;flex-wrap:wrap;gap:12px;font:12px system-ui,sans-serif';
  const tip = doc.createElement('div');
  tip.className = 'attnlab-viz-tip';
  tip.style.cssText =
    'position:absolute;pointer-events:none;background:#222;color:#fff;padding:2px 6px;border-radius:3px;display:none;z-index:1;white-space:nowrap';
  const live = doc.createElement('div');
  live.className = 'attnlab-viz-live';
  live.setAttribute('aria-live', 'polite');
  live.style.cssText = 'position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)';
  /** @type {Array<[EventTarget, string, EventListener]>} */
  const listeners = [];
  /** @type {Array<() => void>} */
  const cleanups = [];
  const on = (/** @type {EventTarget} */ target, /** @type {string} */ type, /** @type {EventListener} */ fn) => {
    target.addEventListener(type, fn);
    listeners.push([target, type, fn]);
  };
  const offAll = () => {
    for (const [target, type, fn] of listeners.splice(0)) target.removeEventListener(type, fn);
    for (const fn of cleanups.splice(0)) fn();
  };
  /** Shows `text` next to (x, y) of `over` (CSS px inside it), and announces it. */
  const show = (
    /** @type {HTMLElement} */ over,
    /** @type {number} */ x,
    /** @type {number} */ y,
    /** @type {string} */ text,
  ) => {
    tip.textContent = text;
    tip.style.display = 'block';
    tip.style.left = `${over.offsetLeft + x + 12}px`;
    tip.style.top = `${over.offsetTop + y + 12}px`;
    live.textContent = text;
  };
  const hide = () => {
    tip.style.display = 'none';
  };
  const body = doc.createElement('div');
  body.style.cssText = 'display:contents';
  root.append(body, tip, live);
  element.appendChild(root);
  const destroy = () => {
    offAll();
    root.remove();
  };
  const onClean = (/** @type {() => void} */ fn) => cleanups.push(fn);
  return { doc, root, body, on, onClean, offAll, show, hide, destroy };
}

/**
 * Paints maps on demand: with `lazy`, each when it comes within 200 px of the viewport (IntersectionObserver), about
 * 12 ms of them per animation frame so that the page stays responsive; otherwise (or without IntersectionObserver)
 * at once. The observer and any pending frame end with the drawing (r.offAll).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {boolean} lazy
 * @returns {(el: Element, paint: () => void) => void}
 */
function scheduler(r, lazy) {
  const win = r.doc.defaultView;
  if (!lazy || !win?.IntersectionObserver) return (_el, paint) => paint();
  /** @type {Map<Element, () => void>} */
  const paints = new Map();
  /** @type {Set<Element>} */
  const shown = new Set();
  let timer = 0;
  const run = () => {
    timer = 0;
    const t0 = performance.now();
    for (const el of shown) {
      if (performance.now() - t0 > 12) break;
      shown.delete(el);
      paints.get(el)?.();
    }
    if (shown.size) timer = win.requestAnimationFrame(run);
  };
  const io = new win.IntersectionObserver(
    (entries) => {
      for (const e of entries) if (e.isIntersecting) shown.add(e.target);
      if (shown.size && !timer) timer = win.requestAnimationFrame(run);
    },
    { rootMargin: '200px' },
  );
  r.onClean(() => {
    io.disconnect();
    win.cancelAnimationFrame(timer);
    paints.clear();
    shown.clear();
  });
  return (el, paint) => {
    paints.set(el, paint);
    io.observe(el);
  };
}

/**
 * Draws the first weights; a view whose first weights are refused leaves nothing behind.
 * @param {ReturnType<typeof makeRoot>} r
 * @param {(weights: any) => void} draw
 * @param {any} weights
 * @param {() => string} toSVG
 */
function start(r, draw, weights, toSVG) {
  try {
    draw(weights);
  } catch (e) {
    r.destroy();
    throw e;
  }
  const view = {
    element: r.root,
    update: draw,
    destroy: r.destroy,
    toSVG,
    toPNG: async (/** @type {{ scale?: number }} */ o = {}) => svgToPNG(r.doc, view.toSVG(), o.scale),
  };
  return view;
}

/**
 * One heat map (the shared painter, viz-heatmap.mjs) in a figure with its caption, hover and keyboard cursor,
 * painted when `schedule` says (its matrix `at()` is asked for then, or on the first hover or key).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {{ at: () => { data: ArrayLike<number>, offset: number }, rows: string[], cols: string[], caption: string,
 *           cell: number, showLabels?: boolean, text: Text }} m  rows/cols name the tokens (tooltips always use them;
 *           showLabels draws them, where cells are 4 px or more)
 * @param {ReturnType<typeof scheduler>} schedule
 * @returns {{ cells: number, canvas: HTMLCanvasElement, caption: string, captionElement: HTMLElement,
 *             ensure: () => void }}
 */
function heatFigure(r, m, schedule) {
  const { rows, cols, cell } = m;
  const L = rows.length;
  const S = cols.length;
  const figure = r.doc.createElement('figure');
  figure.style.cssText = 'margin:0';
  const caption = r.doc.createElement('figcaption');
  caption.textContent = m.caption;
  const canvas = r.doc.createElement('canvas');
  canvas.tabIndex = 0;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${m.caption}: ${L} × ${S}`);
  canvas.style.width = `${cell * S + 2}px`; // until painted (labels add margins then)
  canvas.style.height = `${cell * L + 2}px`;
  const labelled = (m.showLabels ?? true) && cell >= 4;
  /** @type {[number, number] | null} */
  let cursor = null;
  /** @type {{ data: ArrayLike<number>, offset: number } | null} */
  let src = null;
  let geometry = { left: 0, top: 0, cell, width: cell * S + 2, height: cell * L + 2 };
  const paint = () => {
    src ??= m.at();
    if (!canvas.getContext('2d')) return; // no 2-D context (a DOM without canvas): the structure is still there
    const first = !canvas.dataset.rows;
    geometry = heatMap(canvas, src.data, {
      rows: L,
      cols: S,
      offset: src.offset,
      rowLabels: labelled ? rows : [],
      colLabels: labelled ? cols : [],
      cell,
      cursor,
      reuse: !first,
    });
    if (first) r.root.dataset.painted = String(Number(r.root.dataset.painted ?? 0) + 1);
  };
  const ensure = () => {
    if (!src) paint();
  };
  const value = (/** @type {number} */ i, /** @type {number} */ j) => {
    ensure();
    const { data, offset } = /** @type {{ data: ArrayLike<number>, offset: number }} */ (src);
    return Number(data[offset + i * S + j]);
  };
  const describeCell = (/** @type {number} */ i, /** @type {number} */ j) =>
    m.text.cell(m.caption, rows[i], cols[j], value(i, j).toFixed(4));
  listenCells(r, canvas, { L, S, geometry: () => geometry, describeCell, paint, setCursor: (c) => (cursor = c) });
  figure.append(caption, canvas);
  r.body.append(figure);
  schedule(canvas, ensure);
  return { cells: L * S, canvas, caption: m.caption, captionElement: caption, ensure };
}

/**
 * A heat map's hover read-out and keyboard cursor (Tab, then the arrow keys; PageUp/PageDown and Home/End jump).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {HTMLCanvasElement} canvas
 * @param {{ L: number, S: number, geometry: () => { left: number, top: number, cell: number, width: number },
 *           describeCell: (i: number, j: number) => string, paint: () => void,
 *           setCursor: (c: [number, number] | null) => void }} f
 */
function listenCells(r, canvas, f) {
  const { L, S } = f;
  /** @type {[number, number] | null} */
  let cursor = null;
  r.on(canvas, 'mousemove', (ev) => {
    const e = /** @type {MouseEvent} */ (ev);
    const g = f.geometry();
    const b = canvas.getBoundingClientRect();
    const k = g.width / (b.width || g.width || 1); // CSS may shrink the canvas
    const x = (e.clientX - b.left) * k;
    const y = (e.clientY - b.top) * k;
    const i = Math.floor((y - g.top) / g.cell);
    const j = Math.floor((x - g.left) / g.cell);
    if (i < 0 || j < 0 || i >= L || j >= S) return r.hide();
    r.show(canvas, x / k, y / k, f.describeCell(i, j));
  });
  r.on(canvas, 'mouseleave', () => r.hide());
  r.on(canvas, 'blur', () => {
    f.setCursor((cursor = null));
    f.paint();
    r.hide();
  });
  r.on(canvas, 'keydown', (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    const page = Math.max(1, Math.round(L / 16)); // PageUp/PageDown: a sixteenth of the rows; Home/End: a row's ends
    const move = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
      PageUp: [-page, 0],
      PageDown: [page, 0],
      Home: [0, -S],
      End: [0, S],
    }[e.key];
    if (!move || L === 0 || S === 0) return;
    e.preventDefault();
    // The first key press shows the top-left cell; later ones move the cursor.
    cursor = cursor
      ? [Math.max(0, Math.min(L - 1, cursor[0] + move[0])), Math.max(0, Math.min(S - 1, cursor[1] + move[1]))]
      : [0, 0];
    f.setCursor(cursor);
    f.paint();
    const { left, top, cell } = f.geometry();
    r.show(canvas, left + cursor[1] * cell, top + cursor[0] * cell, f.describeCell(cursor[0], cursor[1]));
  });
}

/**
 * Starts a (re)draw: reads the weights, removes the previous drawing and its listeners, and labels the rows and
 * columns (the last two dimensions).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {string} fn
 * @param {any} weights
 * @param {number} rank
 * @param {{ queryTokens?: string[], keyTokens?: string[] }} options
 */
function redraw(r, fn, weights, rank, options) {
  const { at, dims } = readWeights(fn, weights, rank);
  r.offAll();
  r.body.replaceChildren();
  r.root.dataset.painted = '0';
  const [L, S] = dims.slice(-2);
  return {
    at,
    dims,
    rows: labels(options.queryTokens, L),
    cols: labels(options.keyTokens ?? options.queryTokens, S),
  };
}

/**
 * Cell size that fits `cols` columns in about `width` px: 4 to 28 px, and, where 4 px cells would take more than
 * 1,024 px (past 256 columns), 1,024 px / cols (1 px at 1,024 tokens).
 * @param {number | undefined} cell
 * @param {number} cols
 * @param {number} width
 */
function cellFor(cell, cols, width) {
  const fit = Math.max(4, Math.min(28, Math.floor(width / Math.max(cols, 1))));
  return cell ?? (fit * cols > 1024 ? 1024 / cols : fit);
}

/**
 * The mean over heads of the H matrices `at(0)` … `at(H - 1)`, each n values.
 * @param {(m: number) => { data: ArrayLike<number>, offset: number }} at
 * @param {number} H
 * @param {number} n
 */
function meanOfHeads(at, H, n) {
  const mean = new Float32Array(n);
  for (let h = 0; h < H; ++h) {
    const { data, offset } = at(h);
    for (let k = 0; k < n; ++k) mean[k] += data[offset + k] / H;
  }
  return mean;
}

/**
 * Per-head heat maps of weights (H, Lq, Lk), plus their average over heads (PyTorch's
 * `average_attn_weights` diagnostic; what the layer combines is the heads' outputs, not their weights).
 * @param {HTMLElement} element
 * @param {any} weights
 * @param {{ queryTokens?: string[], keyTokens?: string[], average?: boolean, cellSize?: number, width?: number,
 *           text?: Partial<Text> }} [options]
 */
export function headMaps(element, weights, options = {}) {
  const r = makeRoot(element, 'headMaps', 'head-maps');
  /** @type {Array<ReturnType<typeof heatFigure>>} */
  let figures = [];
  const draw = (/** @type {any} */ w) => {
    const { at, dims, rows, cols } = redraw(r, 'headMaps', w, 3, options);
    const [H, L, S] = dims;
    const cell = cellFor(options.cellSize, S, options.width ?? 240);
    const text = textOf(options);
    const average = (options.average ?? true) && H > 1;
    const schedule = scheduler(r, (H + (average ? 1 : 0)) * L * S > kEagerCells);
    const fig = (/** @type {string} */ caption, /** @type {() => any} */ of) =>
      heatFigure(r, { at: of, rows, cols, caption, cell, text }, schedule);
    figures = Array.from({ length: H }, (_, h) => fig(text.head(h), () => at(h)));
    if (average) figures.push(fig(text.mean, () => ({ data: meanOfHeads(at, H, L * S), offset: 0 })));
    r.root.dataset.cells = String(figures.reduce((a, f) => a + f.cells, 0));
  };
  return start(r, draw, weights, () => exportFigures(r, figures));
}

/**
 * toSVG of a view of heat maps: every map painted (those not yet shown are, now), then composed.
 * @param {ReturnType<typeof makeRoot>} r
 * @param {Array<ReturnType<typeof heatFigure>>} figures
 */
function exportFigures(r, figures) {
  figures.forEach((f) => f.ensure());
  return figuresSVG(r.root, figures);
}

/**
 * Token links of weights (H, Lq, Lk): query tokens on the left, key tokens on the right, one line per (head, query,
 * key) at least `threshold` (default 0.01), its opacity the weight, its colour the head's. Hover or focus a query
 * token (arrow keys) to see only its links and their values; the legend's buttons show or hide heads. options.heads
 * limits the heads drawn (a caller with its own head toggles passes them and legend: false). The root's data-links
 * holds the number of links drawn, data-links-by-head one count per head, data-focus the focused query (or -1).
 * @param {HTMLElement} element
 * @param {any} weights
 * @param {{ queryTokens?: string[], keyTokens?: string[], threshold?: number, rowHeight?: number,
 *           heads?: number[], legend?: boolean, text?: Partial<Text> }} [options]
 */
export function tokenLinks(element, weights, options = {}) {
  const r = makeRoot(element, 'tokenLinks', 'token-links');
  /** @type {Set<number>} */
  const hidden = new Set();
  /** @type {ReturnType<typeof linkGeometry> | null} */
  let shape = null;
  const draw = (/** @type {any} */ w) => {
    const { at, dims, rows, cols } = redraw(r, 'tokenLinks', w, 3, options);
    const [H, L, S] = dims;
    const text = textOf(options);
    const g = linkGeometry(H, L, S, options, (h) => !hidden.has(h) && (!options.heads || options.heads.includes(h)));
    shape = g;
    const legend = r.doc.createElement('div');
    for (let h = 0; h < H && options.legend !== false; ++h) {
      const b = r.doc.createElement('button');
      b.type = 'button';
      b.textContent = text.head(h);
      b.style.cssText = `border:2px solid ${headColour(h)};margin:0 4px 4px 0;background:#fff`;
      b.setAttribute('aria-pressed', String(!hidden.has(h)));
      r.on(b, 'click', () => {
        if (hidden.has(h)) hidden.delete(h);
        else hidden.add(h);
        draw(w);
      });
      legend.append(b);
    }
    const canvas = r.doc.createElement('canvas');
    canvas.width = g.width;
    canvas.height = g.height;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `Token links of ${H} heads, ${L} queries to ${S} keys. Arrow keys pick a query.`);
    const ctx = canvas.getContext('2d');
    const paint = () => paintLinks(r, ctx, g, at, { rows, cols });
    const describeQuery = (/** @type {number} */ i) => {
      const parts = [];
      for (let h = 0; h < H && S > 0; ++h) {
        if (!g.shown(h)) continue;
        const { data, offset } = at(h);
        const row = offset + i * S;
        let best = 0;
        for (let j = 1; j < S; ++j) if (data[row + j] > data[row + best]) best = j;
        parts.push(`${text.head(h)} → ${cols[best]} ${data[row + best].toFixed(3)}`);
      }
      return text.query(rows[i], parts.join('; '));
    };
    const pick = (/** @type {number} */ i) => {
      if (i === g.focus) return; // the same query: nothing changes
      g.focus = i;
      paint();
      if (i >= 0) r.show(canvas, g.x0, 4 + i * g.rowHeight, describeQuery(i));
      else r.hide();
    };
    listenLinks(r, canvas, g, pick);
    r.body.append(legend, canvas);
    paint();
    g.svg = () => linksSVG(g, at, { rows, cols, heads: options.legend !== false ? text.head : null });
  };
  return start(r, draw, weights, () => shape?.svg() ?? '');
}

/**
 * tokenLinks' layout and state: a canvas `width` × `height` px, query tokens right-aligned at x0, keys from x1, one
 * row of `rowHeight` px each; `shown(h)` whether head h is drawn, `focus` the query shown alone (-1: all).
 * @param {number} H
 * @param {number} L
 * @param {number} S
 * @param {{ threshold?: number, rowHeight?: number }} options
 * @param {(h: number) => boolean} shown
 */
function linkGeometry(H, L, S, options, shown) {
  const rowHeight = options.rowHeight ?? 20;
  const width = 360;
  return {
    H,
    L,
    S,
    shown,
    rowHeight,
    threshold: options.threshold ?? 0.01,
    width,
    height: Math.max(L, S) * rowHeight + 8,
    x0: 110,
    x1: width - 110,
    focus: -1,
    /** @type {HTMLCanvasElement | null | undefined} the tokens, painted once (tokenLabels) */
    labels: undefined,
    /** @type {() => string} */
    svg: () => '',
  };
}

/**
 * Calls `fn(h, i, j, v)` for every link drawn: shown heads, the focused query (or all), weights ≥ threshold.
 * @param {ReturnType<typeof linkGeometry>} g
 * @param {(m: number) => { data: ArrayLike<number>, offset: number }} at
 * @param {(h: number, i: number, j: number, v: number) => void} fn
 */
function eachLink(g, at, fn) {
  for (let h = 0; h < g.H; ++h) {
    if (!g.shown(h)) continue;
    const { data, offset } = at(h);
    for (let i = 0; i < g.L; ++i) {
      if (g.focus >= 0 && i !== g.focus) continue;
      for (let j = 0; j < g.S; ++j) {
        const v = data[offset + i * g.S + j];
        if (v >= g.threshold) fn(h, i, j, v);
      }
    }
  }
}

/**
 * Paints the links and tokens, and records on the root the number of links (data-links, data-links-by-head) and the
 * focused query (data-focus).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {CanvasRenderingContext2D | null} ctx
 * @param {ReturnType<typeof linkGeometry>} g
 * @param {(m: number) => { data: ArrayLike<number>, offset: number }} at
 * @param {{ rows: string[], cols: string[] }} t
 */
function paintLinks(r, ctx, g, at, t) {
  const links = new Array(g.H).fill(0);
  Object.assign(r.root.dataset, { focus: String(g.focus), links: '0', linksByHead: JSON.stringify(links) });
  if (!ctx) return;
  const { x0, x1, rowHeight } = g;
  ctx.clearRect(0, 0, g.width, g.height);
  eachLink(g, at, (h, i, j, v) => {
    ctx.strokeStyle = headColour(h);
    ctx.globalAlpha = Math.min(1, v);
    ctx.lineWidth = 1 + 2 * v;
    ctx.beginPath();
    ctx.moveTo(x0, 4 + i * rowHeight + rowHeight / 2);
    ctx.lineTo(x1, 4 + j * rowHeight + rowHeight / 2);
    ctx.stroke();
    links[h] += 1;
  });
  ctx.globalAlpha = 1;
  g.labels ??= tokenLabels(r.doc, g, t);
  if (g.labels) ctx.drawImage(g.labels, 0, 0);
  r.root.dataset.links = String(links.reduce((a, b) => a + b, 0));
  r.root.dataset.linksByHead = JSON.stringify(links);
}

/**
 * The tokens of tokenLinks on a transparent canvas of its size, painted once a drawing (a hover repaints the links
 * over a copy of it: at 1,024 tokens, 2,048 texts would take most of a repaint); null without a 2-D context.
 * @param {Document} doc
 * @param {ReturnType<typeof linkGeometry>} g
 * @param {{ rows: string[], cols: string[] }} t
 */
function tokenLabels(doc, g, t) {
  const canvas = doc.createElement('canvas');
  canvas.width = g.width;
  canvas.height = g.height;
  const ctx = canvas.getContext('2d');
  if (!ctx) return null;
  const { x0, x1, rowHeight, width } = g;
  ctx.font = '12px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = '#222';
  ctx.textAlign = 'right';
  t.rows.forEach((s, i) => ctx.fillText(s, x0 - 6, 4 + i * rowHeight + rowHeight / 2, x0 - 8));
  ctx.textAlign = 'left';
  t.cols.forEach((s, j) => ctx.fillText(s, x1 + 6, 4 + j * rowHeight + rowHeight / 2, width - x1 - 8));
  return canvas;
}

/**
 * tokenLinks' hover (the query under the mouse, left half) and keys (up and down move the focused query).
 * @param {ReturnType<typeof makeRoot>} r
 * @param {HTMLCanvasElement} canvas
 * @param {ReturnType<typeof linkGeometry>} g
 * @param {(i: number) => void} pick
 */
function listenLinks(r, canvas, g, pick) {
  r.on(canvas, 'mousemove', (ev) => {
    const e = /** @type {MouseEvent} */ (ev);
    const b = canvas.getBoundingClientRect();
    const k = canvas.width / (b.width || canvas.width);
    const x = (e.clientX - b.left) * k;
    const i = Math.floor(((e.clientY - b.top) * k - 4) / g.rowHeight);
    pick(x < (g.x0 + g.x1) / 2 && i >= 0 && i < g.L ? i : -1);
  });
  r.on(canvas, 'mouseleave', () => pick(-1));
  r.on(canvas, 'blur', () => pick(-1));
  r.on(canvas, 'keydown', (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    const step = { ArrowUp: -1, ArrowDown: 1 }[e.key];
    if (!step || g.L === 0) return;
    e.preventDefault();
    pick(Math.max(0, Math.min(g.L - 1, g.focus < 0 ? 0 : g.focus + step)));
  });
}

/**
 * tokenLinks as shown, as an SVG document: the legend's head chips (when `heads` names them), one line a link (the
 * head's colour, the weight as opacity and width) and the tokens as text.
 * @param {ReturnType<typeof linkGeometry>} g
 * @param {(m: number) => { data: ArrayLike<number>, offset: number }} at
 * @param {{ rows: string[], cols: string[], heads: ((h: number) => string) | null }} t
 */
function linksSVG(g, at, t) {
  const out = [];
  let x = 0;
  for (let h = 0; h < g.H && t.heads; ++h) {
    const chip = chipSVG(x, 0, t.heads(h), headColour(h), g.shown(h));
    out.push(chip.svg);
    x += chip.width + 4;
  }
  const top = t.heads ? 26 : 0;
  const y = (/** @type {number} */ k) => top + 4 + (k + 0.5) * g.rowHeight;
  eachLink(g, at, (h, i, j, v) => {
    const a = `stroke="${headColour(h)}" stroke-opacity="${Math.min(1, v).toFixed(3)}" stroke-width="${(1 + 2 * v).toFixed(2)}"`;
    out.push(`<line x1="${g.x0}" y1="${y(i)}" x2="${g.x1}" y2="${y(j)}" ${a}/>`);
  });
  const font = 'font-family="system-ui, sans-serif" font-size="12" fill="#222"';
  t.rows.forEach((s, i) => out.push(svgText(g.x0 - 6, y(i), s, `text-anchor="end" ${font}`)));
  t.cols.forEach((s, j) => out.push(svgText(g.x1 + 6, y(j), s, `text-anchor="start" ${font}`)));
  return svgDocument(Math.max(g.width, x), top + g.height, out.join(''));
}

/**
 * BertViz's model view: a grid of small heat maps, one row per layer and one column per head, of weights
 * (layers, H, Lq, Lk) or an array of per-layer (H, Lq, Lk) tensors.
 * @param {HTMLElement} element
 * @param {any} weights
 * @param {{ queryTokens?: string[], keyTokens?: string[], cellSize?: number, text?: Partial<Text> }} [options]
 */
export function modelGrid(element, weights, options = {}) {
  const r = makeRoot(element, 'modelGrid', 'model-grid');
  /** @type {Array<ReturnType<typeof heatFigure>>} */
  let figures = [];
  const draw = (/** @type {any} */ w) => {
    const { at, dims, rows, cols } = redraw(r, 'modelGrid', w, 4, options);
    const [layers, H, L, S] = dims;
    const grid = r.doc.createElement('div');
    grid.style.cssText = `display:grid;grid-template-columns:repeat(${H}, auto);gap:6px`;
    r.body.append(grid);
    const fit = Math.max(2, Math.min(8, Math.floor(96 / Math.max(S, 1))));
    const cell = options.cellSize ?? (fit * S > 192 ? 96 / S : fit);
    const text = textOf(options);
    const sub = { ...r, body: grid };
    const schedule = scheduler(r, layers * H * L * S > kEagerCells);
    figures = Array.from({ length: layers * H }, (_, m) => {
      const caption = text.layerHead(Math.floor(m / H), m % H);
      return heatFigure(sub, { at: () => at(m), rows, cols, caption, cell, showLabels: false, text }, schedule);
    });
    r.root.dataset.cells = String(figures.reduce((a, f) => a + f.cells, 0));
  };
  return start(r, draw, weights, () => exportFigures(r, figures));
}
