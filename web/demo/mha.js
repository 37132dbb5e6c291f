// Part 2: multi-head attention on a sequence. Weights come from the toy models trained by
// scripts/train_toy.py, from a freshly initialised (untrained) layer, or from the user's own PyTorch layer
// (a JSON state dict, see statedict.js). The attention itself is always attnlab's
// createMultiHeadAttention(...).forward(...) with per-head weights; embeddings/readout are plain JS.

import { h, svg, seqColor, legend, fmt, full, showTip, hideTip, sizeCanvas, shortLabel, HEAD_COLORS, rng, hashString,
  positionalEncoding, errText } from './util.js';
import { loadToy, createToyMha, runToy, sampleExample, parseTokens, expectedAnswers, causalMask } from './toy.js';
import { parseLayerFile, expectedShapes, FORMAT_DOC, EXPORT_SNIPPET } from './statedict.js';

export const SENTENCES = {
  zh: '这只猫因为没有及时喂食所以一直在叫',
  en: "The animal didn't cross the street because it was too tired",
};
const MAX_TOKENS = 32;
const RANDOM_E = 32;

/** CJK text splits per character, other text per word (punctuation marks are tokens of their own). */
export function tokenize(text) {
  const re = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{N}\p{M}'’_-]+|[^\s\p{L}\p{N}]/gu;
  return text.match(re) || [];
}

/** Pseudo-embedding of a token string: N(0, 1) entries seeded by the string (the same token, the same vector). */
function pseudoEmbed(tokens, E, salt = 0) {
  const x = new Float32Array(tokens.length * E);
  const pe = positionalEncoding(tokens.length, E);
  tokens.forEach((tok, t) => {
    const r = rng(hashString(tok) ^ salt);
    for (let e = 0; e < E; e++) x[t * E + e] = (tok === null ? 0 : r.normal()) + pe[t * E + e];
  });
  return x;
}

export async function mount(root, attn, { params }) {
  const toys = {};
  for (const task of ['reverse', 'recall']) {
    const res = await fetch(new URL(`models/toy-${task}.json`, import.meta.url));
    if (!res.ok) throw new Error(`could not load models/toy-${task}.json (HTTP ${res.status})`);
    toys[task] = loadToy(await res.json());
  }
  const mods = new Map(); // cache of attnlab modules: key → mha
  let user = null; // { cfg, mha, fileName }
  let exampleCounter = 1;

  const st = {
    source: 'toy-reverse', heads: 4, causal: false, padTo: 0, view: 'per-head', visibleHeads: new Set(),
    text: { 'toy-reverse': '', 'toy-recall': '', random: SENTENCES.zh, user: SENTENCES.en },
  };
  for (const task of ['reverse', 'recall']) st.text[`toy-${task}`] = toys[task].examples[0].text;

  // ---- controls -----------------------------------------------------------------------------------------
  const SOURCES = [
    ['toy-reverse', 'Toy model: reverse'],
    ['toy-recall', 'Toy model: key-value recall'],
    ['random', 'Random weights (untrained)'],
    ['user', 'Your PyTorch layer (JSON file)'],
  ];
  const sourceRadios = SOURCES.map(([value, label]) => h('label', {},
    h('input', { type: 'radio', name: 'mha-source', value, id: `mha-src-${value}`, checked: value === st.source,
      onchange: () => { st.source = value; syncControls(); render(); } }), label));
  const fileIn = h('input', { type: 'file', id: 'mha-file', accept: '.json,application/json', 'aria-label': 'PyTorch layer state dict (JSON)' });
  const fileMsg = h('div', { id: 'mha-file-msg', 'aria-live': 'polite' });
  const desc = h('div.source-desc.note', { id: 'mha-source-desc' });
  const textIn = h('input', { type: 'text', id: 'mha-text', style: 'width: min(560px, calc(100vw - 40px))', 'aria-label': 'tokens' });
  const exampleBtns = h('span', {});
  const headsSel = h('select', { id: 'mha-heads', 'aria-label': 'number of heads' }, [1, 2, 4, 8].map((n) => h('option', { value: n, text: String(n), selected: n === st.heads })));
  const headsNote = h('span.note', {});
  const causalIn = h('input', { type: 'checkbox', id: 'mha-causal' });
  const padIn = h('input', { type: 'number', id: 'mha-pad', min: '0', max: String(MAX_TOKENS), value: '0', 'aria-label': 'pad to length' });
  const viewRadios = [['per-head', 'per head + average'], ['average', 'head average only']].map(([value, label]) => h('label', {},
    h('input', { type: 'radio', name: 'mha-view', value, checked: value === st.view, onchange: () => { st.view = value; render(); } }), label));
  const msg = h('div', { id: 'mha-msg' });
  const answers = h('div.answers-wrap', { id: 'mha-answers' });
  const heatGrid = h('div.heat-grid', { id: 'mha-heatmaps' });
  const heatLegend = h('div');
  const chips = h('div.head-chips', { id: 'mha-head-chips' });
  const links = h('div.links', { id: 'mha-links' });
  const linksNote = h('p.note', { text: 'Token links: queries on the left, keys on the right; a line\'s opacity is the weight. Hover a token to show only its links; click a head below to show or hide it.' });

  root.append(
    h('div.ctl', {}, h('span', { text: 'Weights from' }), h('div.source-row', {}, sourceRadios, fileIn)),
    fileMsg, desc,
    h('div.controls', {},
      h('label.ctl', { for: 'mha-text' }, h('span', { text: 'Tokens' }), textIn),
      exampleBtns),
    h('div.controls', {},
      h('label.ctl', { for: 'mha-heads' }, h('span', { text: 'Heads' }), h('span', {}, headsSel, ' ', headsNote)),
      h('label.ctl.inline', { for: 'mha-causal' }, causalIn, h('span', { text: 'Causal mask' })),
      h('label.ctl', { for: 'mha-pad' }, h('span', { text: 'Pad to length (0 = no padding)' }), padIn),
      h('div.ctl', {}, h('span', { text: 'Show' }), h('div.radio-row', {}, viewRadios))),
    msg, answers, heatLegend, heatGrid,
    h('h3', { text: 'Token links' }), linksNote, chips, links,
    h('details', { id: 'mha-format' }, h('summary', { text: 'The state-dict file format (for "Your PyTorch layer")' }),
      h('p.note', { text: 'A JSON object with the layer\'s constructor sizes and its state dict under PyTorch\'s names; each tensor is {"shape": [...], "data": [flat, row-major numbers]}. Separate q/k/v projection weights (kdim/vdim) and bias_k/bias_v are also read. This Python writes it:' }),
      h('pre.format', { text: EXPORT_SNIPPET }), h('pre.format', { text: FORMAT_DOC })));

  textIn.addEventListener('change', () => { st.text[st.source] = textIn.value; render(); });
  textIn.addEventListener('keydown', (e) => { if (e.key === 'Enter') { st.text[st.source] = textIn.value; render(); } });
  headsSel.addEventListener('change', () => { st.heads = Number(headsSel.value); render(); });
  causalIn.addEventListener('change', () => { st.causal = causalIn.checked; render(); });
  padIn.addEventListener('change', () => { st.padTo = Math.max(0, Math.min(MAX_TOKENS, Math.round(Number(padIn.value) || 0))); padIn.value = st.padTo; render(); });
  fileIn.addEventListener('change', async () => {
    const f = fileIn.files && fileIn.files[0];
    if (!f) return;
    await loadUserLayer(await f.text(), f.name);
  });

  async function loadUserLayer(text, fileName) {
    fileMsg.replaceChildren();
    st.source = 'user';
    sourceRadios[3].firstChild.checked = true;
    let cfg;
    try {
      cfg = parseLayerFile(text, fileName);
    } catch (e) {
      showFileError(`Could not read ${fileName}: ${e.message}`);
      syncControls();
      render();
      return;
    }
    let mha;
    try {
      mha = attn.createMultiHeadAttention({ embedDim: cfg.embedDim, numHeads: cfg.numHeads, bias: cfg.bias, addBiasKV: cfg.addBiasKV,
        addZeroAttn: cfg.addZeroAttn, kdim: cfg.kdim, vdim: cfg.vdim, batchFirst: true });
    } catch (e) {
      showFileError(`attnlab could not build this layer (createMultiHeadAttention with embed_dim ${cfg.embedDim}, num_heads ${cfg.numHeads}): ${errText(e)}`);
      syncControls();
      render();
      return;
    }
    try {
      mha.loadStateDict(cfg.stateDict);
    } catch (e) {
      mha.dispose();
      showFileError(`attnlab refused the state dict in ${fileName}: ${errText(e)}\nFor embed_dim ${cfg.embedDim}${cfg.bias ? '' : ', bias=False'} it expects: ${expectedShapes(cfg)}.\nThe file has: ${cfg.names.map((n) => `${n} [${cfg.stateDict[n].shape.join(', ')}]`).join(', ')}.`);
      syncControls();
      render();
      return;
    }
    if (user) user.mha.dispose();
    user = { cfg, mha, fileName };
    st.visibleFor = null;
    fileMsg.append(h('div.ok-box', { id: 'mha-file-ok', text: `Loaded ${fileName}: nn.MultiheadAttention(embed_dim=${cfg.embedDim}, num_heads=${cfg.numHeads}${cfg.bias ? '' : ', bias=False'}${cfg.addBiasKV ? ', add_bias_kv=True' : ''}${cfg.addZeroAttn ? ', add_zero_attn=True' : ''}${cfg.kdim !== cfg.embedDim ? `, kdim=${cfg.kdim}` : ''}${cfg.vdim !== cfg.embedDim ? `, vdim=${cfg.vdim}` : ''}) with ${cfg.names.length} tensors.` }));
    syncControls();
    render();
  }
  function showFileError(text) {
    const still = user ? `\n(The layer loaded before, ${user.fileName}, is still the one shown.)` : '';
    fileMsg.replaceChildren(h('div.error-box', { id: 'mha-file-error', role: 'alert', text: text + still }));
  }
  // exposed for scripted use (the e2e test also uses the real file picker)
  root.loadLayerText = loadUserLayer;

  function syncControls() {
    const toy = st.source.startsWith('toy-') ? toys[st.source.slice(4)] : null;
    textIn.value = st.text[st.source];
    exampleBtns.replaceChildren();
    if (toy) {
      exampleBtns.append(h('button', { type: 'button', id: 'mha-new-example', text: 'New random example', onclick: () => {
        const ex = sampleExample(toy, rng(1000 + exampleCounter++));
        st.text[st.source] = ex.tokens.map((t) => toy.vocab[t]).join(' ');
        syncControls();
        render();
      } }));
    } else {
      exampleBtns.append(
        h('button', { type: 'button', id: 'mha-example-zh', text: '中文 example', onclick: () => { st.text[st.source] = SENTENCES.zh; syncControls(); render(); } }),
        h('button', { type: 'button', id: 'mha-example-en', text: 'English example', onclick: () => { st.text[st.source] = SENTENCES.en; syncControls(); render(); } }));
    }
    const fixedH = toy ? toy.H : st.source === 'user' ? user?.cfg.numHeads : null;
    headsSel.disabled = fixedH !== null && fixedH !== undefined;
    headsNote.textContent = headsSel.disabled ? `fixed by the model: ${fixedH}` : `E = ${RANDOM_E}`;
    if (headsSel.disabled) {
      if (![...headsSel.options].some((o) => Number(o.value) === fixedH)) headsSel.append(h('option', { value: fixedH, text: String(fixedH) }));
      headsSel.value = fixedH;
    } else {
      headsSel.value = st.heads;
    }
    desc.replaceChildren();
    if (toy) {
      desc.append(h('div', {}, h('strong', { text: `Trained by scripts/train_toy.py (PyTorch). ` }), toy.description,
        ` Embedding + positional encoding + one nn.MultiheadAttention(${toy.E}, ${toy.H}${toy.bias ? '' : ', bias=False'}) + residual + linear readout; `,
        `${(toy.training.answer_accuracy * 100).toFixed(1)} % right on ${toy.training.eval_examples} fresh examples in PyTorch. `,
        'The attention runs in attnlab; the embedding and readout are plain JS. Tokens not seen in training are rejected.'));
    } else if (st.source === 'random') {
      desc.append(h('div', {}, h('strong', { text: 'Untrained: ' }),
        `a freshly created attnlab layer (embed_dim ${RANDOM_E}, PyTorch's default initialisation: Xavier-uniform projections, zero biases) on pseudo-random token embeddings + positional encoding. `,
        h('strong', { text: 'These maps look like noise' }), ' — nothing has taught the heads where to look. Compare the toy models, whose heads learned a crisp pattern.'));
    } else {
      desc.append(h('div', {}, user
        ? `Your layer from ${user.fileName}. Its inputs are pseudo-random embeddings of the tokens (one fixed vector per distinct token) + positional encoding, because the file holds only the attention layer, not your model's embedding; so the maps show how your layer's projections treat these vectors.`
        : 'Choose a JSON state-dict file with the file picker (format below). Until then nothing is shown for this source.'));
    }
  }

  // ---- compute + draw ---------------------------------------------------------------------------------------
  function getMha(key, make) {
    if (!mods.has(key)) mods.set(key, make());
    return mods.get(key);
  }

  function render() {
    msg.replaceChildren();
    answers.replaceChildren();
    hideTip();
    const toy = st.source.startsWith('toy-') ? toys[st.source.slice(4)] : null;
    let tokens;
    let ids = null;
    if (toy) {
      const p = parseTokens(toy, st.text[st.source]);
      if (p.error) return fail(p.error);
      ids = p.ids;
      tokens = ids.map((t) => toy.vocab[t]);
    } else {
      tokens = tokenize(st.text[st.source]);
      if (!tokens.length) return fail('Type some text: CJK text is split per character, other text per word.');
    }
    if (tokens.length > MAX_TOKENS) return fail(`${tokens.length} tokens; this view shows at most ${MAX_TOKENS}. Shorten the text.`);
    const L0 = tokens.length;
    const L = Math.max(L0, st.padTo);
    const labels = tokens.concat(Array(L - L0).fill('<pad>'));
    const padded = labels.map((_, i) => i >= L0);

    let H;
    let result; // { weights (H*L*S), average (L*S), S, keyLabels }
    try {
      if (toy) {
        const mha = getMha(st.source, () => createToyMha(attn, toy));
        const r = runToy(toy, mha, ids.concat(Array(L - L0).fill(-1)), { causal: st.causal });
        H = toy.H;
        result = { weights: r.weights, average: r.average, S: L, keyLabels: labels };
        showAnswers(toy, ids, r.predicted);
      } else {
        let mha;
        let E;
        let kdim;
        let vdim;
        let extraKeys = [];
        if (st.source === 'random') {
          H = st.heads;
          E = kdim = vdim = RANDOM_E;
          mha = getMha(`random-${H}`, () => attn.createMultiHeadAttention({ embedDim: RANDOM_E, numHeads: H, batchFirst: true }));
        } else {
          if (!user) {
            clearViews();
            return;
          }
          ({ mha } = user);
          H = user.cfg.numHeads;
          E = user.cfg.embedDim;
          kdim = user.cfg.kdim;
          vdim = user.cfg.vdim;
          if (user.cfg.addBiasKV) extraKeys.push('⟨bias_k⟩');
          if (user.cfg.addZeroAttn) extraKeys.push('⟨zero⟩');
        }
        const toks = labels.map((t, i) => (padded[i] ? null : t));
        const x = { data: pseudoEmbed(toks, E), shape: [1, L, E] };
        const kx = kdim === E ? x : { data: pseudoEmbed(toks, kdim, 0x9e37), shape: [1, L, kdim] };
        const vx = vdim === E ? x : { data: pseudoEmbed(toks, vdim, 0x7f4a), shape: [1, L, vdim] };
        const opts = { needWeights: true, averageAttnWeights: false };
        if (L > L0) opts.keyPaddingMask = { data: Uint8Array.from(padded, (p) => (p ? 1 : 0)), shape: [1, L] };
        if (st.causal) opts.attnMask = causalMask(L);
        const { weights } = mha.forward(x, kx, vx, opts);
        const S = weights.shape[3];
        const average = new Float32Array(L * S);
        for (let hh = 0; hh < H; hh++) for (let i = 0; i < L * S; i++) average[i] += weights.data[hh * L * S + i] / H;
        result = { weights: weights.data, average, S, keyLabels: labels.concat(extraKeys) };
      }
    } catch (e) {
      return fail(`attnlab threw ${errText(e)}`);
    }
    const layerKey = `${st.source}/${H}/${user?.fileName ?? ''}`;
    if (st.visibleFor !== layerKey) { // a new layer: show all its heads
      st.visibleFor = layerKey;
      st.visibleHeads = new Set(Array.from({ length: H }, (_, i) => i));
    }
    drawHeatmaps(labels, result, H, padded);
    drawLinks(labels, result, H, padded);
    root.dataset.tokens = JSON.stringify(labels);
    root.dataset.heads = H;
    root.dataset.source = st.source;
  }

  function fail(text) {
    msg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    clearViews();
  }
  function clearViews() {
    heatGrid.replaceChildren();
    heatLegend.replaceChildren();
    links.replaceChildren();
    chips.replaceChildren();
  }

  function showAnswers(toy, ids, predicted) {
    const expected = expectedAnswers(toy, ids);
    const scored = ids.map((_, i) => expected[i] !== null && (toy.task === 'reverse' || ids[i] >= 90));
    let right = 0;
    let n = 0;
    const table = h('table.answers', { id: 'mha-answer-table' });
    const row = (label, cells) => h('tr', {}, h('th', { scope: 'row', text: label }), cells);
    const answerText = (t) => toy.vocab[t];
    table.append(row('input', ids.map((t) => h('td', { text: toy.vocab[t] }))));
    table.append(row('model answers (attnlab)', ids.map((_, i) => {
      if (toy.task === 'recall' && ids[i] < 90) return h('td', { text: '·' });
      const ok = scored[i] && predicted[i] === expected[i];
      if (scored[i]) {
        n += 1;
        if (ok) right += 1;
      }
      return h(`td.${scored[i] ? (ok ? 'ok' : 'bad') : 'x'}`, { 'data-pos': i, 'data-predicted': answerText(predicted[i]),
        'data-expected': expected[i] === null ? '' : answerText(expected[i]), text: `${answerText(predicted[i])} ${scored[i] ? (ok ? '✓' : '✗') : ''}` });
    })));
    table.append(row('right answer', ids.map((_, i) => h('td', { text: toy.task === 'recall' && ids[i] < 90 ? '·' : expected[i] === null ? '(not stored)' : answerText(expected[i]) }))));
    table.dataset.correct = right;
    table.dataset.total = n;
    table.dataset.predicted = JSON.stringify(predicted.map(answerText));
    const summary = h('p.note', { id: 'mha-answer-summary' },
      h('strong', { text: `The model got ${right} of ${n} answers right` }),
      st.causal ? ' — with the causal mask on, queries cannot see later keys the model was trained to use, so answers break.' : '.',
      st.padTo > ids.length ? ' Padding keys are masked with keyPaddingMask.' : '');
    answers.append(summary, table);
  }

  // Heat maps -----------------------------------------------------------------------------------------------
  function drawHeatmaps(labels, res, H, padded) {
    heatGrid.replaceChildren();
    const L = labels.length;
    const { S, keyLabels } = res;
    const maps = [];
    if (st.view === 'per-head') for (let hh = 0; hh < H; hh++) maps.push({ head: hh, title: `head ${hh + 1}`, data: res.weights.subarray(hh * L * S, (hh + 1) * L * S) });
    maps.push({ head: 'avg', title: `average of ${H} heads`, data: res.average });
    const big = st.view === 'average' || H === 1;
    const avail = Math.max(160, Math.min(root.clientWidth || 600, 1200) - 24);
    for (const m of maps) {
      const perRow = Math.min(H, 4);
      const perHead = avail < 520 ? Math.floor((avail - 40) / 2) : Math.min(300, Math.floor((avail - perRow * 28) / perRow));
      const target = m.head === 'avg' || big ? Math.min(440, avail - 14) : Math.min(perHead, avail - 14);
      const canvas = h('canvas', { 'data-head': m.head, 'data-rows': L, 'data-cols': S, role: 'img',
        'aria-label': `attention weights, ${m.title}` });
      const matrix = [];
      for (let i = 0; i < L; i++) matrix.push(Array.from(m.data.subarray(i * S, (i + 1) * S)));
      canvas.dataset.matrix = JSON.stringify(matrix);
      canvas.dataset.tokens = JSON.stringify(labels);
      canvas.dataset.keys = JSON.stringify(keyLabels);
      heatmap(canvas, m.data, L, S, labels, keyLabels, target, m.title, padded);
      const titleEl = typeof m.head === 'number'
        ? h('h4', {}, h('span.swatch', { style: `background:${HEAD_COLORS[m.head % HEAD_COLORS.length]}` }), m.title)
        : h('h4', { text: m.title });
      const off = typeof m.head === 'number' && !st.visibleHeads.has(m.head);
      heatGrid.append(h('div.heat' + (off ? '.off' : ''), { 'data-head': m.head }, titleEl, canvas));
    }
    heatLegend.replaceChildren(h('div.controls', {}, legend('seq', 0, 1, 'attention weight'),
      h('span.note', { text: 'Rows: queries, columns: keys; each row sums to 1. Hover a cell for its number. Crossed cells are masked (padding or causal).' })));
  }

  function heatmap(canvas, data, L, S, rowLabels, colLabels, target, title, padded) {
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = '12px system-ui, sans-serif';
    const lw = Math.min(90, Math.max(...rowLabels.map((t) => probe.measureText(shortLabel(t, 9)).width))) + 8;
    const colW = Math.max(...colLabels.map((t) => probe.measureText(shortLabel(t, 9)).width));
    const cell = Math.max(8, Math.min(34, Math.floor((target - lw) / Math.max(S, 1))));
    const flat = colW <= cell - 2; // short labels (CJK characters, letters) stay horizontal
    const tw = flat ? 18 : Math.min(90, colW) + 8;
    const W = lw + cell * S + 2;
    const Ht = tw + cell * L + 2;
    const ctx = sizeCanvas(canvas, W, Ht);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, Ht);
    ctx.font = `${Math.min(12, cell)}px system-ui, sans-serif`;
    ctx.fillStyle = '#333';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    rowLabels.forEach((t, i) => {
      ctx.fillStyle = padded[i] ? '#aaa' : '#333';
      ctx.fillText(shortLabel(t, 9), lw - 4, tw + i * cell + cell / 2);
    });
    ctx.textAlign = flat ? 'center' : 'left';
    colLabels.forEach((t, j) => {
      if (flat) {
        ctx.fillStyle = j < L && padded[j] ? '#aaa' : '#333';
        ctx.fillText(shortLabel(t, 9), lw + j * cell + cell / 2, tw / 2);
        return;
      }
      ctx.save();
      ctx.translate(lw + j * cell + cell / 2, tw - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.fillStyle = j < L && padded[j] ? '#aaa' : '#333';
      ctx.fillText(shortLabel(t, 9), 0, 0);
      ctx.restore();
    });
    for (let i = 0; i < L; i++) {
      for (let j = 0; j < S; j++) {
        const v = data[i * S + j];
        ctx.fillStyle = seqColor(v);
        ctx.fillRect(lw + j * cell, tw + i * cell, cell - (cell > 10 ? 1 : 0), cell - (cell > 10 ? 1 : 0));
        const masked = (st.causal && j > i && j < L) || (j < L && padded[j]);
        if (masked) {
          ctx.strokeStyle = 'rgba(0,0,0,0.18)';
          ctx.beginPath();
          ctx.moveTo(lw + j * cell, tw + (i + 1) * cell);
          ctx.lineTo(lw + (j + 1) * cell, tw + i * cell);
          ctx.stroke();
        }
        if (cell >= 30 && v >= 0.005) {
          ctx.fillStyle = v > 0.55 ? '#fff' : '#223';
          ctx.textAlign = 'center';
          ctx.font = '10px system-ui, sans-serif';
          ctx.fillText(v.toFixed(2).replace(/^0/, ''), lw + j * cell + cell / 2, tw + i * cell + cell / 2);
        }
      }
    }
    const at = (ev) => {
      const r = canvas.getBoundingClientRect();
      const x = ((ev.clientX - r.left) / r.width) * W;
      const y = ((ev.clientY - r.top) / r.height) * Ht;
      const j = Math.floor((x - lw) / cell);
      const i = Math.floor((y - tw) / cell);
      return i >= 0 && i < L && j >= 0 && j < S ? [i, j] : null;
    };
    canvas.onmousemove = (ev) => {
      const p = at(ev);
      if (!p) return hideTip();
      const [i, j] = p;
      showTip(`${title}\nquery ${i} “${rowLabels[i]}” → key ${j} “${colLabels[j]}”\nweight ${fmt(data[i * S + j], 5)}  (${full(data[i * S + j])})`, ev.pageX, ev.pageY);
    };
    canvas.onmouseleave = hideTip;
  }

  // Token links ---------------------------------------------------------------------------------------------
  function drawLinks(labels, res, H, padded) {
    const L = labels.length;
    const { S, keyLabels } = res;
    chips.replaceChildren();
    const perHead = st.view === 'per-head';
    if (perHead) {
      for (let hh = 0; hh < H; hh++) {
        const on = st.visibleHeads.has(hh);
        chips.append(h('button.head-chip', { type: 'button', 'data-head': hh, 'aria-pressed': on ? 'true' : 'false',
          style: `border-color:${HEAD_COLORS[hh % HEAD_COLORS.length]}; color:${HEAD_COLORS[hh % HEAD_COLORS.length]}`,
          title: 'click to show or hide this head', text: `head ${hh + 1}`,
          onclick: () => {
            if (st.visibleHeads.has(hh)) st.visibleHeads.delete(hh);
            else st.visibleHeads.add(hh);
            drawLinks(labels, res, H, padded);
            heatGrid.querySelectorAll('.heat').forEach((el) => el.classList.toggle('off', el.dataset.head !== 'avg' && !st.visibleHeads.has(Number(el.dataset.head))));
          } }));
      }
    } else {
      chips.append(h('span.note', { text: 'Showing the head average (switch "Show" to per head to colour lines by head).' }));
    }
    const rowH = 22;
    const narrow = (root.clientWidth || 600) < 520;
    const W = narrow ? 330 : 440;
    const colL = narrow ? 100 : 130;
    const colR = W - colL;
    const Ht = Math.max(L, S) * rowH + 30;
    const el = svg('svg', { viewBox: `0 0 ${W} ${Ht}`, width: W, height: Ht, role: 'img', 'aria-label': 'token links: query tokens to key tokens' });
    const lineG = svg('g');
    const textG = svg('g');
    el.append(svg('text', { x: colL - 6, y: 13, 'text-anchor': 'end', 'font-size': 11, fill: '#667', 'font-weight': 600, text: 'queries' }),
      svg('text', { x: colR + 6, y: 13, 'font-size': 11, fill: '#667', 'font-weight': 600, text: 'keys' }));
    const yq = (i) => 38 + i * rowH;
    const yk = (j) => 38 + j * rowH;
    const heads = perHead ? [...st.visibleHeads].sort((a, b) => a - b) : ['avg'];
    for (const hh of heads) {
      const data = hh === 'avg' ? res.average : res.weights.subarray(hh * L * S, (hh + 1) * L * S);
      const color = hh === 'avg' ? '#1f3f7a' : HEAD_COLORS[hh % HEAD_COLORS.length];
      for (let i = 0; i < L; i++) {
        for (let j = 0; j < S; j++) {
          const w = data[i * S + j];
          if (!(w >= 0.01)) continue;
          lineG.append(svg('line', { x1: colL, y1: yq(i) - 4, x2: colR, y2: yk(j) - 4, stroke: color, 'stroke-width': 1 + 2.5 * w,
            'stroke-opacity': Math.min(1, w).toFixed(3), 'data-head': hh, 'data-i': i, 'data-j': j, 'data-w': w }));
        }
      }
    }
    const focus = (kind, idx) => {
      lineG.querySelectorAll('line').forEach((ln) => {
        const show = kind === null || Number(ln.dataset[kind]) === idx;
        ln.style.display = show ? '' : 'none';
      });
      textG.querySelectorAll('text').forEach((t) => t.classList.toggle('dim', kind !== null && !(t.dataset.side === (kind === 'i' ? 'q' : 'k') && Number(t.dataset.idx) === idx)));
    };
    labels.forEach((t, i) => textG.append(svg('text', { x: colL - 6, y: yq(i), 'text-anchor': 'end', 'data-side': 'q', 'data-idx': i, class: padded[i] ? 'pad' : null,
      onmouseenter: () => focus('i', i), onmouseleave: () => focus(null) }, svg('title', { text: `query ${i}: ${t}` }), shortLabel(t, 12))));
    keyLabels.forEach((t, j) => textG.append(svg('text', { x: colR + 6, y: yk(j), 'data-side': 'k', 'data-idx': j, class: j < L && padded[j] ? 'pad' : null,
      onmouseenter: () => focus('j', j), onmouseleave: () => focus(null) }, svg('title', { text: `key ${j}: ${t}` }), shortLabel(t, 12))));
    el.append(lineG, textG);
    links.replaceChildren(el);
    links.dataset.lines = lineG.childElementCount;
  }

  syncControls();
  render();
  // ?layer=URL loads a state-dict file at start (handy for sharing a link to your layer)
  if (params.get('layer')) {
    try {
      const r = await fetch(params.get('layer'));
      await loadUserLayer(await r.text(), params.get('layer'));
    } catch (e) {
      showFileError(`Could not fetch ${params.get('layer')}: ${errText(e)}`);
    }
  }
}
