// @ts-check
// Part "why √dₖ" (§4.4): line charts against dₖ (largest weight, row entropy, the median gradient over many
// draws), with and without 1/√dₖ, from compute.js; the number of keys and a new random draw are the controls.

import { h } from '../../widgets/dom.js';
import { lineChart } from '../../widgets/charts.js';
import { labelled } from '../../widgets/controls.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import { DKS, GUESS_DKS, dkLabData, gradData, keyCount, scoreSpread } from './compute.js';
import { guessCard } from '../../widgets/guess.js';
import { fmt } from '../../shared/format.js';

const X = DKS.map((v) => Math.log2(v));
const X_LABELS = DKS.map((v, i) => (i % 2 === 0 ? String(v) : ''));

/** The colour key of a chart: scaled solid blue, unscaled dashed red. */
const chartKey = () =>
  h(
    'div.chart-key',
    {},
    h('span', {}, h('i', { style: 'background:#1f5fbf' }), t('dk.with')),
    h('span', { style: 'color:#c0392b' }, h('i.dash', { style: 'background:#c0392b' }), t('dk.without')),
  );

/**
 * The median ‖∂/∂q‖ over many draws against dₖ, with its note.
 * @param {ReturnType<typeof gradData>} g
 */
function gradChart(g) {
  const chart = lineChart({
    x: X,
    xLabels: X_LABELS,
    xName: 'dₖ',
    xTitle: t('dk.xTitle'),
    yTitle: t('dk.yGrad'),
    yMin: 0,
    yMax: 1.25,
    title: t('dk.yGrad'),
    series: [
      { name: t('dk.with'), color: '#1f5fbf', values: g.scaled.median },
      { name: t('dk.without'), color: '#c0392b', values: g.unscaled.median, dash: true },
    ],
  });
  const at = (/** @type {number} */ dk) => DKS.indexOf(dk);
  const note = t('dk.gradNote', {
    n: g.draws,
    s256: Math.round(100 * g.unscaled.small[at(256)]),
    s1024: Math.round(100 * g.unscaled.small[at(1024)]),
  });
  const series = JSON.stringify({ dk: DKS, scaled: g.scaled, unscaled: g.unscaled });
  return h(
    'div.chart',
    { 'data-chart': 'gradient', 'data-series': series },
    chartKey(),
    chart,
    h('p.note', { text: note }),
  );
}

/**
 * The two charts for the given key count.
 * @param {ReturnType<typeof dkLabData>} d
 * @param {number} keys
 */
function charts(d, keys) {
  const withS = t('dk.with');
  const without = t('dk.without');
  /** @param {'maxWeight' | 'entropy'} f */
  const series = (f) => [
    { name: withS, color: '#1f5fbf', values: d.scaled[f] },
    { name: without, color: '#c0392b', values: d.unscaled[f], dash: true },
  ];
  const common = { x: X, xLabels: X_LABELS, xName: 'dₖ', xTitle: t('dk.xTitle'), yMin: 0 };
  const c1 = lineChart({
    ...common,
    yTitle: t('dk.yMax'),
    yMax: 1,
    title: t('dk.yMax'),
    series: series('maxWeight'),
    guides: [{ y: 1 / keys, label: t('dk.uniform', { n: keys }) }],
  });
  const hmax = Math.log(keys);
  const c2 = lineChart({
    ...common,
    yTitle: t('dk.yEntropy'),
    yMax: Math.ceil(hmax * 2) / 2,
    title: t('dk.yEntropy'),
    series: series('entropy'),
    guides: [{ y: hmax, label: t('dk.maxEntropy', { n: keys }) }],
  });
  /** @param {string} name @param {'maxWeight' | 'entropy'} f @param {SVGSVGElement} chart */
  const wrap = (name, f, chart) =>
    h(
      'div.chart',
      { 'data-chart': name, 'data-series': JSON.stringify({ dk: DKS, scaled: d.scaled[f], unscaled: d.unscaled[f] }) },
      chartKey(),
      chart,
    );
  return [wrap('max-weight', 'maxWeight', c1), wrap('entropy', 'entropy', c2)];
}

/**
 * "Guess first": how the unscaled scores' spread grows from dₖ 16 to 256, measured by attnlab when asked.
 * @param {import('../../attnlab.js').Attnlab} attn
 */
function spreadGuess(attn) {
  const [a, b] = GUESS_DKS;
  const x = b / a;
  return guessCard('dk', t('dk.guessQ', { a, b, x }), () => {
    const [A, B] = GUESS_DKS.map((dk) => scoreSpread(attn, dk));
    const [sa, sb, n] = [A.std, B.std, A.n];
    const r = sb / sa;
    return {
      html: t('dk.guessAnswer', { a, b, x, r: fmt(r, 2), s: Math.sqrt(x), n, sa: fmt(sa, 2), sb: fmt(sb, 2) }),
      value: r,
    };
  });
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore({ seed: 1, keys: 16 });
  const keysIn = h('input', {
    type: 'number',
    id: 'dk-keys',
    min: '2',
    max: '64',
    value: '16',
    'aria-label': t('dk.keysAria'),
  });
  const resample = h('button', {
    type: 'button',
    text: t('dk.resample'),
    onclick: () => store.set({ seed: store.get().seed + 1, keys: keyCount(keysIn.value) }),
  });
  const box = h('div.charts', { id: 'dk-lab' });
  root.append(
    h('p.note', { text: t('dk.note') }),
    spreadGuess(attn),
    h('div.controls', {}, labelled('dk-keys', t('dk.keys'), keysIn), resample),
    box,
  );
  keysIn.addEventListener('change', () => store.set({ keys: keyCount(keysIn.value) }));
  /** @param {{ seed: number, keys: number }} s */
  const draw = (s) =>
    box.replaceChildren(
      ...charts(dkLabData(attn, { keys: s.keys, seed: s.seed }), s.keys),
      gradChart(gradData(attn, { seed: s.seed })),
    );
  store.subscribe(draw);
  draw(store.get());
}
