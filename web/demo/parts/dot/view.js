// @ts-check
// Part "Q/K/V and the dot product" (§4.2–4.3): a 2-D plane with a query q and three keys (the library's titles) to
// drag, and the table of dot products, angles and attnlab's weights (compute.js).

import { h, svg } from '../../widgets/dom.js';
import { seqColor, QKV } from '../../widgets/colours.js';
import { fmt } from '../../shared/format.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import { R, START, clampToPlane, readout, doubledQuery } from './compute.js';
import { guessCard } from '../../widgets/guess.js';

/** @typedef {import('./compute.js').Vectors} Vectors */

/**
 * The plane's grid and the four arrows.
 * @param {Vectors} vec
 * @param {number} size
 * @param {(x: number, y: number) => number[]} P plane → pixels
 */
function planeChildren(vec, size, P) {
  const grid = [];
  for (let v = -2; v <= 2; v++) {
    const [a] = P(v, 0);
    const [, b] = P(0, v);
    grid.push(
      svg('line', { x1: a, x2: a, y1: 0, y2: size, stroke: v ? '#eef1f5' : '#c5ccd6' }),
      svg('line', { x1: 0, x2: size, y1: b, y2: b, stroke: v ? '#eef1f5' : '#c5ccd6' }),
    );
  }
  const [ox, oy] = P(0, 0);
  /** @param {keyof Vectors} name @param {string} color @param {string} label */
  const arrow = (name, color, label) => {
    const [x, y] = P(vec[name][0], vec[name][1]);
    const handle = {
      cx: x,
      cy: y,
      r: 9,
      fill: color,
      'fill-opacity': 0.25,
      stroke: color,
      class: 'handle',
      'data-name': name,
    };
    return svg(
      'g',
      { 'data-vec': name },
      svg('line', { x1: ox, y1: oy, x2: x, y2: y, stroke: color, 'stroke-width': name === 'q' ? 3 : 2 }),
      svg('circle', handle, svg('title', { text: t('dot.drag', { name: label }) })),
      svg('text', { x: x + 10, y: y - 8, 'font-size': 13, 'font-weight': 600, fill: color, text: label }),
    );
  };
  return [
    ...grid,
    arrow('k0', QKV.k, 'k₀'),
    arrow('k1', QKV.k, 'k₁'),
    arrow('k2', QKV.k, 'k₂'),
    arrow('q', QKV.q, 'q'),
  ];
}

/**
 * The answer to "q twice as long?": the largest weight before and after, from attnlab.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Vectors} vec
 */
function doubledAnswer(attn, vec) {
  const d = doubledQuery(attn, vec);
  const html = t(d.grows ? 'dot.guessUp' : 'dot.guessSame', { j: d.j, a: fmt(d.before, 3), b: fmt(d.after, 3) });
  return { html, value: d.after };
}

/**
 * The table beside the plane.
 * @param {ReturnType<typeof readout>['rows']} rows
 */
function table(rows) {
  return h(
    'table.answers',
    { id: 'dot-table' },
    h(
      'tr',
      {},
      ['', 'q · kⱼ', t('dot.angle'), t('dot.weight')].map((c) => h('th', { scope: 'col', text: c })),
    ),
    rows.map((r) =>
      h(
        'tr',
        { 'data-j': r.j },
        h('th', { scope: 'row', style: `color:${QKV.k}`, text: t('dot.book', { n: r.j + 1, j: r.j }) }),
        h('td', { text: fmt(r.dot, 3) }),
        h('td', { text: `${r.angle.toFixed(0)}°` }),
        h('td', {
          style: `background:${seqColor(r.w)}; color:${r.w > 0.55 ? '#fff' : '#111'}`,
          'data-value': r.w,
          text: fmt(r.w, 3),
        }),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore(/** @type {Vectors} */ ({ ...START }));
  const size = Math.min(320, Math.max(220, (root.clientWidth || 400) - 24));
  /** @param {number} x @param {number} y */
  const P = (x, y) => [size / 2 + (x / R) * (size / 2 - 10), size / 2 - (y / R) * (size / 2 - 10)];
  const plane = svg('svg', {
    viewBox: `0 0 ${size} ${size}`,
    width: size,
    height: size,
    role: 'img',
    'aria-label': t('dot.aria'),
    id: 'dot-plane',
    class: 'dot-plane',
  });
  const readoutEl = h('div', { id: 'dot-readout' });
  root.append(
    h('div.dot-wrap', {}, plane, readoutEl),
    guessCard('dot', t('dot.guessQ'), () => doubledAnswer(attn, store.get())),
    h('p.note', { text: t('dot.note') }),
  );

  /** @param {Vectors} vec */
  function draw(vec) {
    plane.replaceChildren(...planeChildren(vec, size, P));
    const { rows, weights } = readout(attn, vec);
    root.dataset.scores = JSON.stringify(rows.map((r) => r.dot));
    root.dataset.weights = JSON.stringify(Array.from(weights));
    readoutEl.replaceChildren(table(rows), h('p.note', { text: t('dot.formula') }));
  }
  store.subscribe(draw);

  /** Move a vector (also used by the end-to-end test). @param {keyof Vectors} name @param {number} x @param {number} y */
  const setVector = (name, x, y) => store.set({ [name]: clampToPlane(x, y) });
  Object.assign(root, { setVector });
  dragHandles(plane, size, setVector);
  draw(store.get());
}

/**
 * Dragging a vector's handle moves it.
 * @param {SVGSVGElement} plane
 * @param {number} size
 * @param {(name: keyof Vectors, x: number, y: number) => void} setVector
 */
function dragHandles(plane, size, setVector) {
  /** @type {keyof Vectors | null} */
  let dragging = null;
  plane.addEventListener('pointerdown', (ev) => {
    const name = /** @type {SVGElement} */ (ev.target).dataset?.name;
    if (!name) return;
    dragging = /** @type {keyof Vectors} */ (name);
    plane.setPointerCapture(ev.pointerId);
  });
  plane.addEventListener('pointermove', (ev) => {
    if (!dragging) return;
    const r = plane.getBoundingClientRect();
    const sx = ((ev.clientX - r.left) / r.width) * size;
    const sy = ((ev.clientY - r.top) / r.height) * size;
    setVector(dragging, ((sx - size / 2) / (size / 2 - 10)) * R, (-(sy - size / 2) / (size / 2 - 10)) * R);
  });
  plane.addEventListener('pointerup', () => {
    dragging = null;
  });
}
