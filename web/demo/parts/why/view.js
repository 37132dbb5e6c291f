// @ts-check
// Part "why attention" (§3): a picture of path length, RNN (a chain of n − 1 state updates from the first word to
// the last) against attention (one step from any word to any word), and the O(L²) count of scores that the speed
// part measures. Plain SVG.

import { h, svg } from '../../widgets/dom.js';
import { t, LANG } from '../../i18n.js';
import { SENTENCE, LENGTHS, LINKED, pathRow, cnnLayers, receptiveField } from './compute.js';
import { guessCard } from '../../widgets/guess.js';

/**
 * The two rows of nodes: the RNN's chain on top, attention's arcs from the last word below.
 * @param {string[]} words
 * @param {boolean} narrow
 */
function picture(words, narrow) {
  const n = words.length;
  const gap = narrow ? 22 : 52;
  const W = 40 + gap * (n - 1) + 40;
  const H = 190;
  /** @param {number} i */
  const x = (i) => 40 + gap * i;
  const el = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    role: 'img',
    class: 'why-pic',
    'aria-label': t('why.picAria', { n }),
  });
  const label = { x: 4, 'font-size': 12, fill: '#334', 'font-weight': 600 };
  el.append(svg('text', { ...label, y: 14, text: t('why.rnnLabel', { steps: n - 1 }) }));
  el.append(svg('text', { ...label, y: 104, text: t('why.attnLabel') }));
  for (let i = 0; i < n; i++) {
    const ends = i === 0 || i === n - 1;
    const word = { 'text-anchor': 'middle', 'font-size': 11, fill: '#333', text: words[i] };
    el.append(svg('circle', { cx: x(i), cy: 40, r: 8, fill: ends ? '#1f5fbf' : '#c9d6ea' }));
    if (i > 0) {
      const line = { x1: x(i - 1) + 8, y1: 40, x2: x(i) - 8, y2: 40 };
      el.append(svg('line', { ...line, stroke: '#c0392b', 'stroke-width': 2, 'marker-end': 'url(#why-arrow)' }));
    }
    el.append(svg('text', { x: x(i), y: 66, ...word }));
    el.append(svg('circle', { cx: x(i), cy: 160, r: 8, fill: ends ? '#1f5fbf' : '#c9d6ea' }));
    el.append(svg('text', { x: x(i), y: 184, ...word }));
    if (i < n - 1) {
      // the last word attends to every word directly
      const d = `M${x(n - 1)},152 Q${(x(i) + x(n - 1)) / 2},${120 - (n - 1 - i) * 2} ${x(i)},152`;
      const first = i === 0;
      el.append(
        svg('path', { d, fill: 'none', stroke: first ? '#1e7b34' : '#9cc7a6', 'stroke-width': first ? 2.5 : 1.2 }),
      );
    }
  }
  const marker = {
    id: 'why-arrow',
    viewBox: '0 0 6 6',
    refX: 5,
    refY: 3,
    markerWidth: 6,
    markerHeight: 6,
    orient: 'auto',
  };
  el.prepend(svg('defs', {}, svg('marker', marker, svg('path', { d: 'M0,0 L6,3 L0,6 z', fill: '#c0392b' }))));
  return el;
}

/** The cost table: path lengths and scores for each L. */
function costTable() {
  const head = [
    'L',
    t('why.colRnnPath'),
    t('why.colAttnPath'),
    t('why.colCnn'),
    t('why.colRnnSeq'),
    t('why.colScores'),
  ];
  return h(
    'table.answers',
    { id: 'why-table' },
    h(
      'tr',
      {},
      head.map((c) => h('th', { scope: 'col', text: c })),
    ),
    LENGTHS.map(pathRow).map((r) =>
      h(
        'tr',
        { 'data-l': r.L, 'data-scores': r.scores, 'data-cnn': r.cnnLayers },
        h('td', { text: String(r.L) }),
        h('td', { text: String(r.rnnPath) }),
        h('td', { text: String(r.attnPath) }),
        h('td', { text: String(r.cnnLayers) }),
        h('td', { text: String(r.rnnSteps) }),
        h('td', { text: r.scores.toLocaleString('en') }),
      ),
    ),
  );
}

/**
 * "Guess first" on §3.2: width-3 convolutions between the two words the tutorial links, against one attention layer.
 * @param {string[]} words
 * @param {[number, number]} at their positions
 */
function cnnGuess(words, [i, j]) {
  const [a, b, d] = [words[i], words[j], j - i];
  return guessCard('why', t('why.guessQ', { a, b, d }), () => {
    const n = cnnLayers(d);
    const vars = { a, b, n, rf: receptiveField(n), span: d + 1, n1: n - 1, rf1: receptiveField(n - 1) };
    return { html: t('why.guessAnswer', vars), value: n };
  });
}

/** @param {HTMLElement} root */
export function mount(root) {
  const words = SENTENCE[LANG];
  const narrow = (root.clientWidth || 800) < 600;
  root.append(
    h('div.scroll-x', {}, picture(words, narrow)),
    h('p.note', { text: t('why.picNote', { n: words.length }) }),
    cnnGuess(words, /** @type {[number, number]} */ (LINKED[LANG])),
    h('p.note', { text: t('why.cnnNote') }),
    h('div.table-scroll', {}, costTable()),
    h('p.note', { text: t('why.costNote') }),
  );
}
