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
// { element, update(weights), destroy() }; destroy() removes the root and every listener it added.
// Colours: a viridis-like ramp for weights (readable with red-green colour blindness), Okabe–Ito colours for heads.
// heatMap (viz-heatmap.mjs) is the painter every heat map uses, the demo page's included; options.text translates.
// Hover shows the number; every view is keyboard reachable (Tab, then arrow keys) and announces the value.

import { headColour, heatMap, weightColour } from './viz-heatmap.mjs';

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
 * The weights as { data, dims } of exactly `rank` dimensions (leading 1s dropped, missing leading dims added).
 * @param {string} ctx
 * @param {any} weights
 * @param {number} rank
 */
function readWeights(ctx, weights, rank) {
  if (Array.isArray(weights)) {
    // One tensor per layer (transformers.js `attentions`): stack them.
    const layers = weights.map((w, i) => readWeights(`${ctx} (layer ${i})`, w, rank - 1));
    const dims = layers[0]?.dims ?? [];
    if (layers.some((l) => l.dims.join() !== dims.join())) {
      throw new RangeError(
        `${ctx}: weights of every layer must have one shape, got ${layers.map((l) => `[${l.dims}]`).join(', ')}`,
      );
    }
    const data = new Float32Array(layers.length * (layers[0]?.data.length ?? 0));
    layers.forEach((l, i) => data.set(l.data, i * l.data.length));
    return { data, dims: [layers.length, ...dims] };
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
  return { data, dims };
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
  const on = (/** @type {EventTarget} */ target, /** @type {string} */ type, /** @type {EventListener} */ fn) => {
    target.addEventListener(type, fn);
    listeners.push([target, type, fn]);
  };
  const offAll = () => {
    for (const [target, type, fn] of listeners.splice(0)) target.removeEventListener(type, fn);
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
  return { doc, root, body, on, offAll, show, hide, destroy };
}

/**
 * Draws the first weights; a view whose first weights are refused leaves nothing behind.
 * @param {ReturnType<typeof makeRoot>} r
 * @param {(weights: any) => void} draw
 * @param {any} weights
 */
function start(r, draw, weights) {
  try {
    draw(weights);
  } catch (e) {
    r.destroy();
    throw e;
  }
  return { element: r.root, update: draw, destroy: r.destroy };
}

/**
 * One heat map (the shared painter, viz-heatmap.mjs) in a figure with its caption, hover and keyboard cursor.
 * Returns the number of cells drawn.
 * @param {ReturnType<typeof makeRoot>} r
 * @param {{ data: ArrayLike<number>, offset: number, rows: string[], cols: string[], caption: string, cell: number,
 *           showLabels?: boolean, text: Text }} m  rows/cols name the tokens (tooltips always use them; showLabels
 *           draws them)
 */
function heatFigure(r, m) {
  const { rows, cols } = m;
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
  const labelled = m.showLabels ?? true;
  /** @type {[number, number] | null} */
  let cursor = null;
  let geometry = { left: 0, top: 0, cell: m.cell, width: 0, height: 0 };
  const paint = () => {
    if (!canvas.getContext('2d')) return; // no 2-D context (a DOM without canvas): the structure is still there
    geometry = heatMap(canvas, m.data, {
      rows: L,
      cols: S,
      offset: m.offset,
      rowLabels: labelled ? rows : [],
      colLabels: labelled ? cols : [],
      cell: m.cell,
      cursor,
    });
  };
  const value = (/** @type {number} */ i, /** @type {number} */ j) => Number(m.data[m.offset + i * S + j]);
  const describeCell = (/** @type {number} */ i, /** @type {number} */ j) =>
    m.text.cell(m.caption, rows[i], cols[j], value(i, j).toFixed(4));
  r.on(canvas, 'mousemove', (ev) => {
    const e = /** @type {MouseEvent} */ (ev);
    const b = canvas.getBoundingClientRect();
    const k = geometry.width / (b.width || geometry.width || 1); // CSS may shrink the canvas
    const x = (e.clientX - b.left) * k;
    const y = (e.clientY - b.top) * k;
    const i = Math.floor((y - geometry.top) / geometry.cell);
    const j = Math.floor((x - geometry.left) / geometry.cell);
    if (i < 0 || j < 0 || i >= L || j >= S) return r.hide();
    r.show(canvas, x / k, y / k, describeCell(i, j));
  });
  r.on(canvas, 'mouseleave', () => r.hide());
  r.on(canvas, 'blur', () => {
    cursor = null;
    paint();
    r.hide();
  });
  r.on(canvas, 'keydown', (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (!move || L === 0 || S === 0) return;
    e.preventDefault();
    // The first key press shows the top-left cell; later ones move the cursor.
    cursor = cursor
      ? [Math.max(0, Math.min(L - 1, cursor[0] + move[0])), Math.max(0, Math.min(S - 1, cursor[1] + move[1]))]
      : [0, 0];
    paint();
    const { left, top, cell } = geometry;
    r.show(canvas, left + cursor[1] * cell, top + cursor[0] * cell, describeCell(cursor[0], cursor[1]));
  });
  paint();
  figure.append(caption, canvas);
  r.body.append(figure);
  return L * S;
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
  const { data, dims } = readWeights(fn, weights, rank);
  r.offAll();
  r.body.replaceChildren();
  const [L, S] = dims.slice(-2);
  return {
    data,
    dims,
    rows: labels(options.queryTokens, L),
    cols: labels(options.keyTokens ?? options.queryTokens, S),
  };
}

/**
 * Cell size that fits `cols` columns in about `width` px.
 * @param {number | undefined} cell
 * @param {number} cols
 * @param {number} width
 */
function cellFor(cell, cols, width) {
  return cell ?? Math.max(4, Math.min(28, Math.floor(width / Math.max(cols, 1))));
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
  const draw = (/** @type {any} */ w) => {
    const { data, dims, rows, cols } = redraw(r, 'headMaps', w, 3, options);
    const [H, L, S] = dims;
    const cell = cellFor(options.cellSize, S, options.width ?? 240);
    const text = textOf(options);
    let cells = 0;
    for (let h = 0; h < H; ++h) {
      cells += heatFigure(r, { data, offset: h * L * S, rows, cols, caption: text.head(h), cell, text });
    }
    if ((options.average ?? true) && H > 1) {
      const mean = new Float32Array(L * S);
      for (let h = 0; h < H; ++h) for (let k = 0; k < L * S; ++k) mean[k] += data[h * L * S + k] / H;
      cells += heatFigure(r, { data: mean, offset: 0, rows, cols, caption: text.mean, cell, text });
    }
    r.root.dataset.cells = String(cells);
  };
  return start(r, draw, weights);
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
  const threshold = options.threshold ?? 0.01;
  const rowHeight = options.rowHeight ?? 20;
  /** @type {Set<number>} */
  const hidden = new Set();
  const draw = (/** @type {any} */ w) => {
    const { data, dims, rows, cols } = redraw(r, 'tokenLinks', w, 3, options);
    const [H, L, S] = dims;
    const text = textOf(options);
    const legend = r.doc.createElement('div');
    const shown = (/** @type {number} */ h) => !hidden.has(h) && (!options.heads || options.heads.includes(h));
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
    const width = 360;
    canvas.width = width;
    canvas.height = Math.max(L, S) * rowHeight + 8;
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `Token links of ${H} heads, ${L} queries to ${S} keys. Arrow keys pick a query.`);
    const ctx = canvas.getContext('2d');
    const x0 = 110;
    const x1 = width - 110;
    let focus = -1;
    const paint = () => {
      const links = new Array(H).fill(0);
      Object.assign(r.root.dataset, { focus: String(focus), links: '0', linksByHead: JSON.stringify(links) });
      if (!ctx) return;
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.font = '12px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      for (let h = 0; h < H; ++h) {
        if (!shown(h)) continue;
        ctx.strokeStyle = headColour(h);
        for (let i = 0; i < L; ++i) {
          if (focus >= 0 && i !== focus) continue;
          for (let j = 0; j < S; ++j) {
            const v = data[(h * L + i) * S + j];
            if (!(v >= threshold)) continue;
            ctx.globalAlpha = Math.min(1, v);
            ctx.lineWidth = 1 + 2 * v;
            ctx.beginPath();
            ctx.moveTo(x0, 4 + i * rowHeight + rowHeight / 2);
            ctx.lineTo(x1, 4 + j * rowHeight + rowHeight / 2);
            ctx.stroke();
            links[h] += 1;
          }
        }
      }
      ctx.globalAlpha = 1;
      ctx.fillStyle = '#222';
      ctx.textAlign = 'right';
      rows.forEach((s, i) => ctx.fillText(s, x0 - 6, 4 + i * rowHeight + rowHeight / 2, x0 - 8));
      ctx.textAlign = 'left';
      cols.forEach((s, j) => ctx.fillText(s, x1 + 6, 4 + j * rowHeight + rowHeight / 2, width - x1 - 8));
      r.root.dataset.links = String(links.reduce((a, b) => a + b, 0));
      r.root.dataset.linksByHead = JSON.stringify(links);
    };
    const describeQuery = (/** @type {number} */ i) => {
      const parts = [];
      for (let h = 0; h < H; ++h) {
        if (!shown(h)) continue;
        let best = 0;
        for (let j = 1; j < S; ++j) if (data[(h * L + i) * S + j] > data[(h * L + i) * S + best]) best = j;
        if (S > 0) parts.push(`${text.head(h)} → ${cols[best]} ${data[(h * L + i) * S + best].toFixed(3)}`);
      }
      return text.query(rows[i], parts.join('; '));
    };
    const pick = (/** @type {number} */ i) => {
      focus = i;
      paint();
      if (i >= 0) r.show(canvas, x0, 4 + i * rowHeight, describeQuery(i));
      else r.hide();
    };
    r.on(canvas, 'mousemove', (ev) => {
      const e = /** @type {MouseEvent} */ (ev);
      const b = canvas.getBoundingClientRect();
      const k = canvas.width / (b.width || canvas.width);
      const x = (e.clientX - b.left) * k;
      const i = Math.floor(((e.clientY - b.top) * k - 4) / rowHeight);
      pick(x < (x0 + x1) / 2 && i >= 0 && i < L ? i : -1);
    });
    r.on(canvas, 'mouseleave', () => pick(-1));
    r.on(canvas, 'blur', () => pick(-1));
    r.on(canvas, 'keydown', (ev) => {
      const e = /** @type {KeyboardEvent} */ (ev);
      const step = { ArrowUp: -1, ArrowDown: 1 }[e.key];
      if (!step || L === 0) return;
      e.preventDefault();
      pick(Math.max(0, Math.min(L - 1, focus < 0 ? 0 : focus + step)));
    });
    r.body.append(legend, canvas);
    paint();
  };
  return start(r, draw, weights);
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
  const draw = (/** @type {any} */ w) => {
    const { data, dims, rows, cols } = redraw(r, 'modelGrid', w, 4, options);
    const [layers, H, L, S] = dims;
    const grid = r.doc.createElement('div');
    grid.style.cssText = `display:grid;grid-template-columns:repeat(${H}, auto);gap:6px`;
    r.body.append(grid);
    const cell = options.cellSize ?? Math.max(2, Math.min(8, Math.floor(96 / Math.max(S, 1))));
    const text = textOf(options);
    let cells = 0;
    const sub = { ...r, body: grid };
    for (let l = 0; l < layers; ++l) {
      for (let h = 0; h < H; ++h) {
        const caption = text.layerHead(l, h);
        const offset = (l * H + h) * L * S;
        cells += heatFigure(sub, { data, offset, rows, cols, caption, cell, showLabels: false, text });
      }
    }
    r.root.dataset.cells = String(cells);
  };
  return start(r, draw, weights);
}
