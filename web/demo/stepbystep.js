// Part 1: attention step by step on a small editable Q, K, V, plus the "d_k lab".
// The intermediate stages (QKᵀ, × scale, + mask) are plain JS, labelled so; the softmax weights and the
// output are attnlab's scaledDotProductAttention (the public API), with a plain-JS cross-check shown.

import { h, matrixTable, divColor, seqColor, legend, fmt, full, showTip, hideTip, rng, errText } from './util.js';
import { sdpaStages, entropy } from './reference.js';
import { lineChart } from './charts.js';

const DEFAULT = '1 0 1 0\n0 1 0 1\n1 1 0 0';
const MAX = 8;

/** "1 0 1\n0, 1, 2" or "[[1,0],[0,1]]" → rows of numbers, or throws an Error in words. */
export function parseMatrix(text, name) {
  const lines = text.replace(/\]\s*,?\s*\[/g, '\n').replace(/[[\]]/g, '').split(/\n|;/).map((l) => l.trim()).filter(Boolean);
  if (!lines.length) throw new Error(`${name} is empty: write one row per line, e.g. "1 0 1 0".`);
  const rows = lines.map((line, i) => line.split(/[\s,]+/).filter(Boolean).map((tok) => {
    const v = Number(tok);
    if (!Number.isFinite(v)) throw new Error(`${name}, row ${i + 1}: "${tok}" is not a number.`);
    return v;
  }));
  const w = rows[0].length;
  rows.forEach((r, i) => {
    if (r.length !== w) throw new Error(`${name}: row ${i + 1} has ${r.length} numbers but row 1 has ${w}; every row needs the same length.`);
  });
  if (rows.length > MAX || w > MAX) throw new Error(`${name} is ${rows.length}×${w}; this view shows at most ${MAX}×${MAX}.`);
  return rows;
}

export function mount(root, attn) {
  const st = { scaleMode: 'default', custom: 0.5, temp: 1, causal: false, masked: new Set() };

  const ta = (name) => h('textarea', { id: `sbs-in-${name.toLowerCase()}`, spellcheck: 'false', 'aria-label': `${name} matrix, one row per line` }, DEFAULT);
  const qIn = ta('Q');
  const kIn = ta('K');
  const vIn = ta('V');
  const resetBtn = h('button', { type: 'button', text: 'Reset Q, K, V', onclick: () => {
    qIn.value = kIn.value = vIn.value = DEFAULT;
    st.masked.clear();
    render();
  } });

  const scaleRadios = ['default', 'off', 'custom'].map((mode) => h('label', {},
    h('input', { type: 'radio', name: 'sbs-scale', value: mode, checked: mode === 'default', onchange: () => { st.scaleMode = mode; render(); } }),
    { default: '1/√dₖ', off: 'off (1)', custom: 'custom' }[mode]));
  const customIn = h('input', { type: 'number', id: 'sbs-scale-custom', step: '0.05', value: '0.5', 'aria-label': 'custom scale',
    oninput: () => { st.custom = Number(customIn.value); st.scaleMode = 'custom'; scaleRadios[2].firstChild.checked = true; render(); } });
  const tempVal = h('span.mono', { text: '1.00' });
  const tempIn = h('input', { type: 'range', id: 'sbs-temp', min: '0.1', max: '5', step: '0.05', value: '1', 'aria-label': 'temperature',
    oninput: () => { st.temp = Number(tempIn.value); tempVal.textContent = st.temp.toFixed(2); render(); } });
  const causalIn = h('input', { type: 'checkbox', id: 'sbs-causal', onchange: () => { st.causal = causalIn.checked; render(); } });
  const clearBtn = h('button', { type: 'button', id: 'sbs-clear-masks', text: 'Clear clicked masks', onclick: () => { st.masked.clear(); render(); } });

  const msg = h('div');
  const pipeline = h('div.pipeline', { id: 'sbs-pipeline' });
  root.append(
    h('div.qkv-inputs', {},
      h('label', { for: 'sbs-in-q', title: 'queries: one row per query, dₖ columns' }, 'Q (Lq × dₖ)', qIn),
      h('label', { for: 'sbs-in-k', title: 'keys: one row per key, dₖ columns' }, 'K (Lk × dₖ)', kIn),
      h('label', { for: 'sbs-in-v', title: 'values: one row per key, dᵥ columns' }, 'V (Lk × dᵥ)', vIn)),
    h('div.controls', {},
      h('div.ctl', {}, h('span', { text: 'Scale' }), h('div.radio-row', {}, scaleRadios, customIn)),
      h('label.ctl', { for: 'sbs-temp' }, h('span', {}, 'Temperature T = ', tempVal), tempIn),
      h('label.ctl.inline', { for: 'sbs-causal' }, causalIn, h('span', { text: 'Causal (query i sees keys j ≤ i)' })),
      clearBtn, resetBtn),
    msg, pipeline);
  for (const t of [qIn, kIn, vIn]) t.addEventListener('input', () => { st.masked.clear(); render(); });

  // ---------------------------------------------------------------------------------------------------
  function render() {
    msg.replaceChildren();
    pipeline.replaceChildren();
    let Q;
    let K;
    let V;
    try {
      Q = parseMatrix(qIn.value, 'Q');
      K = parseMatrix(kIn.value, 'K');
      V = parseMatrix(vIn.value, 'V');
      if (Q[0].length !== K[0].length) throw new Error(`Q has ${Q[0].length} columns but K has ${K[0].length}: queries and keys need the same dₖ.`);
      if (K.length !== V.length) throw new Error(`K has ${K.length} rows but V has ${V.length}: every key needs one value row.`);
    } catch (e) {
      msg.append(h('div.error-box', { role: 'alert', text: e.message }));
      return;
    }
    const Lq = Q.length;
    const Lk = K.length;
    const dk = Q[0].length;
    const dv = V[0].length;
    const base = st.scaleMode === 'default' ? 1 / Math.sqrt(dk) : st.scaleMode === 'off' ? 1 : st.custom;
    if (!Number.isFinite(base)) {
      msg.append(h('div.error-box', { text: 'The custom scale must be a number.' }));
      return;
    }
    const scale = base / st.temp;
    const q = Float32Array.from(Q.flat());
    const k = Float32Array.from(K.flat());
    const v = Float32Array.from(V.flat());
    const isMasked = (i, j) => (st.causal && j > i) || st.masked.has(`${i},${j}`);
    const addMask = new Float32Array(Lq * Lk);
    const keep = new Uint8Array(Lq * Lk); // SDPA bool mask: 1 = may attend
    let anyClicked = false;
    for (let i = 0; i < Lq; i++) {
      for (let j = 0; j < Lk; j++) {
        addMask[i * Lk + j] = isMasked(i, j) ? -Infinity : 0;
        keep[i * Lk + j] = st.masked.has(`${i},${j}`) ? 0 : 1;
        if (st.masked.has(`${i},${j}`)) anyClicked = true;
      }
    }
    const js = sdpaStages(q, k, v, Lq, Lk, dk, dv, scale, addMask);
    let res;
    try {
      res = attn.scaledDotProductAttention(
        { data: q, shape: [Lq, dk] }, { data: k, shape: [Lk, dk] }, { data: v, shape: [Lk, dv] },
        { scale, isCausal: st.causal, attnMask: anyClicked ? { data: keep, shape: [Lq, Lk] } : undefined, needWeights: true });
    } catch (e) {
      msg.append(h('div.error-box', { text: `attnlab.scaledDotProductAttention threw ${errText(e)}` }));
      return;
    }
    const W = res.weights.data;
    const O = res.output.data;
    let maxDiff = 0;
    for (let i = 0; i < W.length; i++) maxDiff = Math.max(maxDiff, Math.abs(W[i] - js.weights[i]));
    const deadRows = [];
    for (let i = 0; i < Lq; i++) {
      let all = true;
      for (let j = 0; j < Lk; j++) if (!isMasked(i, j)) all = false;
      if (all) deadRows.push(i);
    }

    const qL = Array.from({ length: Lq }, (_, i) => `q${i}`);
    const kL = Array.from({ length: Lk }, (_, j) => `k${j}`);
    const dL = (n) => Array.from({ length: n }, (_, c) => `d${c}`);
    const mAbs = (a) => a.reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 0) || 1;
    const scoreOpts = (label, m) => ({
      rows: Lq, cols: Lk, rowLabels: qL, colLabels: kL, color: (x) => divColor(x, m), className: 'clickable', noTitle: true,
      cellAttrs: (x, i, j) => (isMasked(i, j) ? { class: 'masked' } : {}),
    });

    const inputs = h('div.stage', {}, h('h4', { text: 'Inputs' }), h('div.formula', { text: 'rows = tokens' }),
      h('div.scroll.inputs-row', {},
        matrixTable(q, { rows: Lq, cols: dk, rowLabels: qL, colLabels: dL(dk), id: 'sbs-q', caption: 'Q', cellTitle: (x, i, j) => `Q[${i}, ${j}] = ${full(x)}` }),
        matrixTable(k, { rows: Lk, cols: dk, rowLabels: kL, colLabels: dL(dk), id: 'sbs-k', caption: 'K', cellTitle: (x, i, j) => `K[${i}, ${j}] = ${full(x)}` }),
        matrixTable(v, { rows: Lk, cols: dv, rowLabels: kL.map((s) => s.replace('k', 'v')), colLabels: dL(dv), id: 'sbs-v', caption: 'V', cellTitle: (x, i, j) => `V[${i}, ${j}] = ${full(x)}` })));

    const m1 = mAbs(js.scores);
    const m2 = mAbs(js.scaled);
    const s1 = stage('① QKᵀ', 'scores[i, j] = q_i · k_j', 'js',
      matrixTable(js.scores, { ...scoreOpts('QKᵀ', m1), id: 'sbs-scores' }), legend('div', -m1, m1, 'score'));
    const baseText = st.scaleMode === 'default' ? `× 1/√${dk} = ${fmt(base, 4)}` : st.scaleMode === 'off' ? '× 1 (scale off)' : `× ${fmt(base, 4)} (custom)`;
    const s2 = stage('② × scale', st.temp !== 1 ? `${baseText}, ÷ T ${fmt(st.temp, 3)} → × ${fmt(scale, 4)}` : baseText, 'js',
      matrixTable(js.scaled, { ...scoreOpts('scaled', m2), id: 'sbs-scaled' }), legend('div', -m2, m2, 'scaled score'));
    const s3 = stage('③ + mask', st.causal || st.masked.size ? '−∞ where a key is hidden' : 'no mask: + 0 everywhere', 'js',
      matrixTable(js.masked, { ...scoreOpts('masked', m2), id: 'sbs-masked' }), legend('div', -m2, m2, 'masked score (hatched = −∞)'));
    const sums = [];
    for (let i = 0; i < Lq; i++) {
      let s = 0;
      for (let j = 0; j < Lk; j++) s += W[i * Lk + j];
      sums.push(s);
    }
    const wTable = matrixTable(W, {
      rows: Lq, cols: Lk, rowLabels: qL, colLabels: kL, color: (x) => seqColor(x), id: 'sbs-weights', className: 'clickable', noTitle: true,
      rowExtra: (i) => `Σ ${fmt(sums[i], 4)}`, rowExtraLabel: 'row sum',
      cellAttrs: (x, i, j) => (isMasked(i, j) ? { class: 'masked' } : {}),
    });
    wTable.dataset.lq = Lq;
    wTable.dataset.lk = Lk;
    wTable.dataset.causal = st.causal ? '1' : '0';
    wTable.dataset.deadRows = deadRows.join(',');
    const s4 = stage('④ softmax (rows)', 'each row sums to 1', 'attnlab', wTable, legend('seq', 0, 1, 'weight'),
      h('div.check-note', { text: `plain-JS softmax of ③ agrees to ${maxDiff === 0 ? 'the bit' : `max |Δ| = ${maxDiff.toExponential(1)}`}` }),
      deadRows.map((i) => h('div.row-note', { 'data-dead-row': i, text:
        `Row q${i} is fully masked: every key is −∞, so softmax would compute 0/0. attnlab returns zeros for this row's weights and output (PyTorch's F.scaled_dot_product_attention gives NaN here). Unmask a cell or turn causal off to bring it back.` })));
    const mo = mAbs(O);
    const s5 = stage('⑤ · V', 'output_i = Σ_j weight[i, j] · v_j', 'attnlab',
      matrixTable(O, { rows: Lq, cols: dv, rowLabels: qL.map((s) => s.replace('q', 'o')), colLabels: dL(dv), id: 'sbs-output', color: (x) => divColor(x, mo),
        cellTitle: (x, i, j) => `output[${i}, ${j}] = ${full(x)}` }), legend('div', -mo, mo, 'output'));

    pipeline.append(inputs, arrow(), s1, arrow(), s2, arrow(), s3, arrow(), s4, arrow(), s5);
    pipeline.dataset.scale = scale;

    // hover highlighting and click-to-mask
    pipeline.querySelectorAll('table.clickable td[data-i]').forEach((td) => {
      const i = Number(td.dataset.i);
      const j = Number(td.dataset.j);
      const tipText = () => `weight[q${i}, k${j}] = ${fmt(W[i * Lk + j], 5)}  (row q${i} of Q · row k${j} of K)\n` +
        `score q${i}·k${j} = ${fmt(js.scores[i * Lk + j], 4)}, × scale = ${fmt(js.scaled[i * Lk + j], 4)}${isMasked(i, j) ? ', masked (−∞)' : ''}\n` +
        `click to ${st.masked.has(`${i},${j}`) ? 'unmask' : 'mask'} this pair`;
      td.addEventListener('mouseenter', (ev) => {
        highlight(i, j, true);
        showTip(tipText(), ev.pageX, ev.pageY);
      });
      td.addEventListener('mousemove', (ev) => showTip(tipText(), ev.pageX, ev.pageY));
      td.addEventListener('mouseleave', () => { highlight(i, j, false); hideTip(); });
      td.addEventListener('click', () => {
        const key = `${i},${j}`;
        if (st.masked.has(key)) st.masked.delete(key);
        else st.masked.add(key);
        hideTip();
        render();
      });
    });
    function highlight(i, j, on) {
      const tog = (sel, cls = 'hl-row') => pipeline.querySelectorAll(sel).forEach((e) => e.classList.toggle(cls, on));
      tog(`#sbs-q tr[data-row="${i}"]`);
      tog(`#sbs-k tr[data-row="${j}"]`);
      tog(`#sbs-v tr[data-row="${j}"]`);
      tog(`#sbs-output tr[data-row="${i}"]`);
      tog(`table.clickable td[data-i="${i}"][data-j="${j}"]`, 'hl');
    }
  }

  function stage(title, formula, who, ...body) {
    return h('div.stage', {}, h('h4', {}, title, ' ', who === 'js' ? h('span.tag.js', { text: 'plain JS', title: 'computed in plain JavaScript for display' })
      : h('span.tag.attnlab', { text: 'attnlab', title: 'from attn.scaledDotProductAttention' })), h('div.formula', { text: formula }), h('div.scroll', {}, body[0]), body.slice(1));
  }
  function arrow() {
    return h('div.arrow', { 'aria-hidden': 'true', text: '→' });
  }

  render();
  mountDkLab(root, attn);
}

// -------------------------------------------------------------------------------------------------------
// d_k lab: random Q, K with growing d_k; largest weight and row entropy with and without 1/√d_k
// -------------------------------------------------------------------------------------------------------

const DKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

export function dkLabData(attn, { keys = 16, queries = 32, seed = 1 } = {}) {
  const r = rng(seed);
  const out = { dk: DKS, keys, scaled: { maxWeight: [], entropy: [] }, unscaled: { maxWeight: [], entropy: [] } };
  for (const dk of DKS) {
    const q = Float32Array.from({ length: queries * dk }, r.normal);
    const k = Float32Array.from({ length: keys * dk }, r.normal);
    const v = new Float32Array(keys);
    for (const [name, scale] of [['scaled', undefined], ['unscaled', 1]]) {
      const { weights } = attn.scaledDotProductAttention({ data: q, shape: [queries, dk] }, { data: k, shape: [keys, dk] },
        { data: v, shape: [keys, 1] }, { scale, needWeights: true });
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

function mountDkLab(root, attn) {
  let seed = 1;
  const keysIn = h('input', { type: 'number', id: 'dk-keys', min: '2', max: '64', value: '16', 'aria-label': 'number of keys' });
  const resample = h('button', { type: 'button', text: 'New random Q, K', onclick: () => { seed += 1; draw(); } });
  const charts = h('div.charts', { id: 'dk-lab' });
  root.append(h('h3', { text: 'The dₖ lab: why divide by √dₖ?' }),
    h('p.note', { text: 'Random Q, K with N(0, 1) entries. A dot product of two dₖ-long random vectors has variance dₖ, so without the scale the logits grow like √dₖ and softmax saturates: one key takes nearly all the weight and the row entropy collapses. With 1/√dₖ the logits keep variance 1 at every dₖ. Weights from attnlab (scale = 1/√dₖ vs scale = 1); averages over 32 query rows.' }),
    h('div.controls', {}, h('label.ctl', { for: 'dk-keys' }, h('span', { text: 'Keys per row' }), keysIn), resample),
    charts);
  keysIn.addEventListener('change', draw);

  function draw() {
    const keys = Math.max(2, Math.min(64, Math.round(Number(keysIn.value) || 16)));
    const d = dkLabData(attn, { keys, seed });
    const x = DKS.map((v) => Math.log2(v));
    const xLabels = DKS.map((v, i) => (i % 2 === 0 ? String(v) : ''));
    const key = (extra) => h('div.chart-key', {},
      h('span', {}, h('i', { style: 'background:#1f5fbf' }), 'with 1/√dₖ'),
      h('span', { style: 'color:#c0392b' }, h('i.dash', { style: 'background:#c0392b' }), 'without (scale 1)'), extra);
    const c1 = lineChart({ x, xLabels, xName: 'dₖ', xTitle: 'dₖ (log scale)', yTitle: 'largest weight in a row', yMin: 0, yMax: 1, title: 'largest weight vs dk',
      series: [{ name: 'with 1/√dₖ', color: '#1f5fbf', values: d.scaled.maxWeight }, { name: 'without scale', color: '#c0392b', values: d.unscaled.maxWeight, dash: true }],
      guides: [{ y: 1 / keys, label: `uniform 1/${keys}` }] });
    const hmax = Math.log(keys);
    const c2 = lineChart({ x, xLabels, xName: 'dₖ', xTitle: 'dₖ (log scale)', yTitle: 'row entropy (nats)', yMin: 0, yMax: Math.ceil(hmax * 2) / 2, title: 'entropy vs dk',
      series: [{ name: 'with 1/√dₖ', color: '#1f5fbf', values: d.scaled.entropy }, { name: 'without scale', color: '#c0392b', values: d.unscaled.entropy, dash: true }],
      guides: [{ y: hmax, label: `max ln ${keys}` }] });
    const w1 = h('div.chart', { 'data-chart': 'max-weight', 'data-series': JSON.stringify({ dk: DKS, scaled: d.scaled.maxWeight, unscaled: d.unscaled.maxWeight }) }, key(), c1);
    const w2 = h('div.chart', { 'data-chart': 'entropy', 'data-series': JSON.stringify({ dk: DKS, scaled: d.scaled.entropy, unscaled: d.unscaled.entropy }) }, key(), c2);
    charts.replaceChildren(w1, w2);
  }
  draw();
}
