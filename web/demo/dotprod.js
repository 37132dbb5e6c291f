// Part "Q/K/V and the dot product" (§4.2–4.3): a 2-D plane with a query q and three keys (the library's titles)
// to drag; the dot products q·kⱼ, the angle between them, and the weights softmax(q·kⱼ/√2) that attnlab's
// scaledDotProductAttention gives (V = the identity, so the output row is the weights: each book's share).

import { h, svg, fmt, seqColor } from './util.js';
import { t } from './i18n.js';

const R = 2.5; // the plane shows [-R, R]²
const COLORS = ['#d62728', '#2ca02c', '#9467bd'];

export function mount(root, attn) {
  const vec = { q: [1.5, 0.8], k0: [1.8, 0.6], k1: [-0.4, 1.6], k2: [-1.2, -1.4] };
  const size = Math.min(320, Math.max(220, (root.clientWidth || 400) - 24));
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
  const readout = h('div', { id: 'dot-readout' });
  root.append(h('div.dot-wrap', {}, plane, readout), h('p.note', { text: t('dot.note') }));

  function draw() {
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
    const arrow = (name, color, label) => {
      const [x, y] = P(...vec[name]);
      return svg(
        'g',
        { 'data-vec': name },
        svg('line', { x1: ox, y1: oy, x2: x, y2: y, stroke: color, 'stroke-width': name === 'q' ? 3 : 2 }),
        svg(
          'circle',
          { cx: x, cy: y, r: 9, fill: color, 'fill-opacity': 0.25, stroke: color, class: 'handle', 'data-name': name },
          svg('title', { text: t('dot.drag', { name: label }) }),
        ),
        svg('text', { x: x + 10, y: y - 8, 'font-size': 13, 'font-weight': 600, fill: color, text: label }),
      );
    };
    plane.replaceChildren(
      ...grid,
      arrow('k0', COLORS[0], 'k₀'),
      arrow('k1', COLORS[1], 'k₁'),
      arrow('k2', COLORS[2], 'k₂'),
      arrow('q', '#1f3f7a', 'q'),
    );

    const K = Float32Array.from([...vec.k0, ...vec.k1, ...vec.k2]);
    const I3 = Float32Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1);
    const res = attn.scaledDotProductAttention(
      { data: Float32Array.from(vec.q), shape: [1, 2] },
      { data: K, shape: [3, 2] },
      { data: I3, shape: [3, 3] },
      { needWeights: true },
    );
    const w = res.weights.data;
    const nq = Math.hypot(...vec.q);
    const rows = [0, 1, 2].map((j) => {
      const k = vec[`k${j}`];
      const dot = vec.q[0] * k[0] + vec.q[1] * k[1];
      const cos = dot / (nq * Math.hypot(...k) || 1);
      return { j, dot, angle: (Math.acos(Math.max(-1, Math.min(1, cos))) * 180) / Math.PI, w: w[j] };
    });
    root.dataset.scores = JSON.stringify(rows.map((r) => r.dot));
    root.dataset.weights = JSON.stringify(Array.from(w));
    readout.replaceChildren(
      h(
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
            h('th', { scope: 'row', style: `color:${COLORS[r.j]}`, text: t('dot.book', { j: r.j }) }),
            h('td', { text: fmt(r.dot, 3) }),
            h('td', { text: `${r.angle.toFixed(0)}°` }),
            h('td', {
              style: `background:${seqColor(r.w)}; color:${r.w > 0.55 ? '#fff' : '#111'}`,
              'data-value': r.w,
              text: fmt(r.w, 3),
            }),
          ),
        ),
      ),
      h('p.note', { text: t('dot.formula') }),
    );
  }

  /** Move a vector (also used by the end-to-end test). */
  root.setVector = (name, x, y) => {
    vec[name] = [Math.max(-R, Math.min(R, x)), Math.max(-R, Math.min(R, y))];
    draw();
  };
  let dragging = null;
  plane.addEventListener('pointerdown', (ev) => {
    const name = ev.target.dataset?.name;
    if (!name) return;
    dragging = name;
    plane.setPointerCapture(ev.pointerId);
  });
  plane.addEventListener('pointermove', (ev) => {
    if (!dragging) return;
    const r = plane.getBoundingClientRect();
    const sx = ((ev.clientX - r.left) / r.width) * size;
    const sy = ((ev.clientY - r.top) / r.height) * size;
    root.setVector(dragging, ((sx - size / 2) / (size / 2 - 10)) * R, (-(sy - size / 2) / (size / 2 - 10)) * R);
  });
  plane.addEventListener('pointerup', () => {
    dragging = null;
  });
  draw();
}
