// Part "why attention" (§3): a picture of path length, RNN (a chain of n − 1 state updates from the first word
// to the last) against attention (one step from any word to any word), and the O(L²) count of scores that the
// speed part measures. Plain SVG; no attnlab call is needed for counting.

import { h, svg } from './util.js';
import { t, lang } from './i18n.js';

const SENTENCE = {
  zh: [...'这只猫因为没有及时喂食所以一直在叫'],
  en: 'the cat was not fed in time so it kept crying'.split(' '),
};

function picture(words, narrow) {
  const n = words.length;
  const gap = narrow ? 22 : 52;
  const W = 40 + gap * (n - 1) + 40;
  const H = 190;
  const x = (i) => 40 + gap * i;
  const el = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: 'img',
    class: 'why-pic',
    'aria-label': t('why.picAria', { n }),
  });
  el.append(
    svg('text', {
      x: 4,
      y: 14,
      'font-size': 12,
      fill: '#334',
      'font-weight': 600,
      text: t('why.rnnLabel', { steps: n - 1 }),
    }),
  );
  el.append(svg('text', { x: 4, y: 104, 'font-size': 12, fill: '#334', 'font-weight': 600, text: t('why.attnLabel') }));
  for (let i = 0; i < n; i++) {
    const first = i === 0;
    const last = i === n - 1;
    el.append(svg('circle', { cx: x(i), cy: 40, r: 8, fill: first || last ? '#1f5fbf' : '#c9d6ea' }));
    if (i > 0)
      el.append(
        svg('line', {
          x1: x(i - 1) + 8,
          y1: 40,
          x2: x(i) - 8,
          y2: 40,
          stroke: '#c0392b',
          'stroke-width': 2,
          'marker-end': 'url(#why-arrow)',
        }),
      );
    el.append(svg('text', { x: x(i), y: 66, 'text-anchor': 'middle', 'font-size': 11, fill: '#333', text: words[i] }));
    el.append(svg('circle', { cx: x(i), cy: 160, r: 8, fill: first || last ? '#1f5fbf' : '#c9d6ea' }));
    el.append(svg('text', { x: x(i), y: 184, 'text-anchor': 'middle', 'font-size': 11, fill: '#333', text: words[i] }));
    if (!last) {
      // the last word attends to every word directly
      el.append(
        svg('path', {
          d: `M${x(n - 1)},152 Q${(x(i) + x(n - 1)) / 2},${120 - (n - 1 - i) * 2} ${x(i)},152`,
          fill: 'none',
          stroke: first ? '#1e7b34' : '#9cc7a6',
          'stroke-width': first ? 2.5 : 1.2,
        }),
      );
    }
  }
  el.prepend(
    svg(
      'defs',
      {},
      svg(
        'marker',
        { id: 'why-arrow', viewBox: '0 0 6 6', refX: 5, refY: 3, markerWidth: 6, markerHeight: 6, orient: 'auto' },
        svg('path', { d: 'M0,0 L6,3 L0,6 z', fill: '#c0392b' }),
      ),
    ),
  );
  return el;
}

export function mount(root) {
  const words = SENTENCE[lang];
  const narrow = (root.clientWidth || 800) < 600;
  const lens = [8, 128, 512, 2048];
  const table = h(
    'table.answers',
    { id: 'why-table' },
    h(
      'tr',
      {},
      ['L', t('why.colRnnPath'), t('why.colAttnPath'), t('why.colRnnSeq'), t('why.colScores')].map((c) =>
        h('th', { scope: 'col', text: c }),
      ),
    ),
    lens.map((L) =>
      h(
        'tr',
        { 'data-l': L, 'data-scores': L * L },
        h('td', { text: String(L) }),
        h('td', { text: String(L - 1) }),
        h('td', { text: '1' }),
        h('td', { text: String(L) }),
        h('td', { text: (L * L).toLocaleString('en') }),
      ),
    ),
  );
  root.append(
    h('div.scroll-x', {}, picture(words, narrow)),
    h('p.note', { text: t('why.picNote', { n: words.length }) }),
    h('div.table-scroll', {}, table),
    h('p.note', { text: t('why.costNote') }),
  );
}
