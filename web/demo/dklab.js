// Part "why √dₖ" (§4.4): random Q, K with growing dₖ; the largest weight and the row entropy, with and without
// 1/√dₖ, from attnlab's scaledDotProductAttention (scale = 1/√dₖ vs scale = 1).

import { h, rng } from './util.js';
import { entropy } from './reference.js';
import { lineChart } from './charts.js';
import { t } from './i18n.js';

const DKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

export function dkLabData(attn, { keys = 16, queries = 32, seed = 1 } = {}) {
  const r = rng(seed);
  const out = { dk: DKS, keys, scaled: { maxWeight: [], entropy: [] }, unscaled: { maxWeight: [], entropy: [] } };
  for (const dk of DKS) {
    const q = Float32Array.from({ length: queries * dk }, r.normal);
    const k = Float32Array.from({ length: keys * dk }, r.normal);
    const v = new Float32Array(keys);
    for (const [name, scale] of [
      ['scaled', undefined],
      ['unscaled', 1],
    ]) {
      const { weights } = attn.scaledDotProductAttention(
        { data: q, shape: [queries, dk] },
        { data: k, shape: [keys, dk] },
        { data: v, shape: [keys, 1] },
        { scale, needWeights: true },
      );
      let mx = 0;
      let en = 0;
      for (let i = 0; i < queries; i++) {
        let m = 0;
        for (let j = 0; j < keys; j++) m = Math.max(m, weights.data[i * keys + j]);
        mx += m;
        en += entropy(weights.data, i * keys, keys);
      }
      out[name].maxWeight.push(mx / queries);
      out[name].entropy.push(en / queries);
    }
  }
  return out;
}

export function mount(root, attn) {
  let seed = 1;
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
    onclick: () => {
      seed += 1;
      draw();
    },
  });
  const charts = h('div.charts', { id: 'dk-lab' });
  root.append(
    h('p.note', { text: t('dk.note') }),
    h('div.controls', {}, h('label.ctl', { for: 'dk-keys' }, h('span', { text: t('dk.keys') }), keysIn), resample),
    charts,
  );
  keysIn.addEventListener('change', draw);

  function draw() {
    const keys = Math.max(2, Math.min(64, Math.round(Number(keysIn.value) || 16)));
    const d = dkLabData(attn, { keys, seed });
    const x = DKS.map((v) => Math.log2(v));
    const xLabels = DKS.map((v, i) => (i % 2 === 0 ? String(v) : ''));
    const withS = t('dk.with');
    const without = t('dk.without');
    const key = () =>
      h(
        'div.chart-key',
        {},
        h('span', {}, h('i', { style: 'background:#1f5fbf' }), withS),
        h('span', { style: 'color:#c0392b' }, h('i.dash', { style: 'background:#c0392b' }), without),
      );
    const series = (f) => [
      { name: withS, color: '#1f5fbf', values: d.scaled[f] },
      { name: without, color: '#c0392b', values: d.unscaled[f], dash: true },
    ];
    const common = { x, xLabels, xName: 'dₖ', xTitle: t('dk.xTitle'), yMin: 0 };
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
    const w1 = h(
      'div.chart',
      {
        'data-chart': 'max-weight',
        'data-series': JSON.stringify({ dk: DKS, scaled: d.scaled.maxWeight, unscaled: d.unscaled.maxWeight }),
      },
      key(),
      c1,
    );
    const w2 = h(
      'div.chart',
      {
        'data-chart': 'entropy',
        'data-series': JSON.stringify({ dk: DKS, scaled: d.scaled.entropy, unscaled: d.unscaled.entropy }),
      },
      key(),
      c2,
    );
    charts.replaceChildren(w1, w2);
  }
  draw();
}
