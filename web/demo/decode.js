// Part "decoding": a causal toy model (decode-model.js: 4 query heads sharing 2 key/value heads, weights written
// by hand) generates token by token through attnlab's KV cache: mha.createKVCache + mha.forward(x, x, x,
// { kvCache }). Each step projects only the new token, appends its key and value to the cache and attends over
// everything cached; its query row is drawn under the earlier ones, one heat map per head, the cache growing to the
// right. Heads are coloured by the key/value head they share. After every step the page checks the steps so far
// against one causal forward over the whole sequence (no cache).
// Test hooks: #decode[data-length][data-tokens][data-max-diff], and #decode.trace (steps, state dict, inputs).

import { headColour, weightColour } from '/dist/viz.mjs';
import { h, legend } from './util.js';
import { drawHeatmap } from './heatmap.js';
import { causalMask } from './toy.js';
import { t } from './i18n.js';
import * as M from './decode-model.js';

const H = M.CONFIG.numHeads;
const E = M.CONFIG.embedDim;

export function mount(root, attn) {
  const sd = M.stateDict();
  const mha = attn.createMultiHeadAttention(M.CONFIG);
  mha.loadStateDict(sd);
  const cache = mha.createKVCache({ batchSize: 1, maxLength: M.MAX_LENGTH });
  const whole = attn.createMultiHeadAttention(M.CONFIG); // the same layer, run over the whole sequence at once
  whole.loadStateDict(sd);

  const st = { prompt: [0, 1, 2], tokens: [0, 1, 2], steps: [], running: false };
  const promptIn = h('input.mono', {
    type: 'text',
    id: 'decode-prompt',
    value: 'A B C',
    size: 12,
    'aria-label': t('decode.promptAria'),
  });
  const stepBtn = h('button.primary', { type: 'button', id: 'decode-step', text: t('decode.step') });
  const runBtn = h('button', { type: 'button', id: 'decode-run', text: t('decode.run') });
  const resetBtn = h('button', { type: 'button', id: 'decode-reset', text: t('decode.reset') });
  const lengthEl = h('span.mono', { id: 'decode-length', 'aria-live': 'polite' });
  const msg = h('div');
  const tokensEl = h('div.tok-strip', { id: 'decode-tokens' });
  const grid = h('div.heat-grid', { id: 'decode-maps' });
  const costEl = h('p.note', { id: 'decode-cost' });
  const checkEl = h('p.note', { id: 'decode-check' });
  root.append(
    h(
      'div.controls',
      {},
      h('label.ctl', { for: 'decode-prompt' }, h('span', { text: t('decode.prompt') }), promptIn),
      stepBtn,
      runBtn,
      resetBtn,
      h('div.ctl', {}, h('span', { text: t('decode.cacheLength') }), lengthEl),
    ),
    h('p.note', { text: t('decode.modelNote') }),
    msg,
    tokensEl,
    h(
      'div.controls',
      {},
      legend('seq', 0, 1, t('decode.legend'), weightColour),
      h('span.note', { text: t('decode.gqaNote') }),
    ),
    grid,
    costEl,
    checkEl,
  );

  function reset() {
    st.running = false;
    const ids = M.parsePrompt(promptIn.value);
    msg.replaceChildren();
    if (!ids) msg.append(h('div.error-box', { role: 'alert', text: t('decode.promptBad') }));
    st.prompt = ids || st.prompt;
    st.tokens = st.prompt.slice();
    st.steps = [];
    cache.reset();
    draw();
  }

  /** One decoding step: the token at position cache.length goes in; the model's next token comes out. */
  function step() {
    const pos = cache.length;
    if (pos >= M.MAX_LENGTH) return false;
    const x = M.embedToken(st.tokens[pos], pos);
    const X = { data: x, shape: [1, 1, E] };
    const res = mha.forward(X, X, X, {
      kvCache: cache,
      needWeights: true,
      averageAttnWeights: false,
    });
    const next = M.nextToken(x, res.output.data);
    st.steps.push({ token: st.tokens[pos], next, output: res.output.data, weights: res.weights.data });
    if (pos + 1 >= st.tokens.length) st.tokens.push(next);
    draw();
    return cache.length < M.MAX_LENGTH;
  }

  /** The steps so far against one causal forward over the same inputs: max |Δ| of outputs and weights. */
  function check() {
    const n = st.steps.length;
    if (!n) return null;
    const X = { data: M.embedSequence(st.tokens.slice(0, n)), shape: [1, n, E] };
    const ref = whole.forward(X, X, X, { attnMask: causalMask(n), needWeights: true, averageAttnWeights: false });
    let d = 0;
    st.steps.forEach((s, i) => {
      for (let e = 0; e < E; e++) d = Math.max(d, Math.abs(s.output[e] - ref.output.data[i * E + e]));
      for (let hh = 0; hh < H; hh++)
        for (let j = 0; j <= i; j++)
          d = Math.max(d, Math.abs(s.weights[hh * (i + 1) + j] - ref.weights.data[(hh * n + i) * n + j]));
    });
    return d;
  }

  function draw() {
    const n = st.steps.length;
    lengthEl.textContent = `${cache.length} / ${M.MAX_LENGTH}`;
    stepBtn.disabled = cache.length >= M.MAX_LENGTH;
    runBtn.textContent = t(st.running ? 'decode.pause' : 'decode.run');
    runBtn.disabled = !st.running && cache.length >= M.MAX_LENGTH;
    tokensEl.replaceChildren(
      h('span.small', { text: t('decode.tokens') }),
      ...st.tokens.map((tok, i) =>
        h(
          `span.tok.${i < st.prompt.length ? 'prompt' : 'generated'}${i < n ? '.cached' : ''}`,
          { 'data-pos': i, title: t(i < st.prompt.length ? 'decode.promptTok' : 'decode.generatedTok', { i }) },
          M.VOCAB[tok],
        ),
      ),
    );
    const labels = st.tokens.slice(0, n).map((tok, i) => `${i} ${M.VOCAB[tok]}`);
    grid.replaceChildren();
    const width = Math.min(300, Math.max(200, ((root.clientWidth || 640) - 40) / 2));
    for (let hh = 0; hh < H; hh++) {
      const g = M.kvHeadOf(hh);
      const data = new Float32Array(n * n);
      st.steps.forEach((s, i) => data.set(s.weights.subarray(hh * (i + 1), (hh + 1) * (i + 1)), i * n));
      const title = t('decode.head', { h: hh, g });
      const canvas = h('canvas', { 'data-head': hh, 'data-kv-head': g, role: 'img', 'aria-label': title });
      if (n)
        drawHeatmap(canvas, data, {
          rows: n,
          cols: n,
          rowLabels: labels,
          colLabels: labels,
          target: width,
          title,
          masked: (i, j) => j > i,
        });
      grid.append(
        h(
          'div.heat',
          { 'data-head': hh, style: `border-color:${headColour(g)}` },
          h('h4', {}, h('span.swatch', { style: `background:${headColour(g)}` }), title),
          h('div.small', { text: t(`decode.role${hh}`) }),
          n ? canvas : h('div.note', { text: t('decode.empty') }),
        ),
      );
    }
    const last = n ? n - 1 : 0;
    costEl.textContent = n
      ? t('decode.cost', {
          t: last,
          n,
          kv: M.CONFIG.numKVHeads,
          d: M.HEAD_DIM,
          f: 2 * M.CONFIG.numKVHeads * n * M.HEAD_DIM,
          full: 2 * H * n * M.HEAD_DIM,
        })
      : t('decode.costEmpty');
    const d = check();
    const dText = d === 0 ? '0' : d?.toExponential(1);
    checkEl.textContent = d === null ? '' : t(d <= 1e-5 ? 'decode.check' : 'decode.checkBad', { n, d: dText });
    checkEl.classList.toggle('warn-box', d !== null && d > 1e-5);
    Object.assign(root.dataset, {
      length: cache.length,
      tokens: JSON.stringify(st.tokens.map((tok) => M.VOCAB[tok])),
      maxDiff: d === null ? '' : String(d),
    });
  }

  async function run() {
    if (st.running) {
      st.running = false;
      draw();
      return;
    }
    st.running = true;
    draw();
    while (st.running && step()) await new Promise((r) => setTimeout(r, 150));
    st.running = false;
    draw();
  }

  stepBtn.addEventListener('click', () => step());
  runBtn.addEventListener('click', run);
  resetBtn.addEventListener('click', reset);
  promptIn.addEventListener('change', reset);
  // For tests: the steps as computed, the layer's weights and the input rows (numbers, not pixels).
  root.trace = {
    config: M.CONFIG,
    stateDict: () => sd,
    inputs: () => M.embedSequence(st.tokens.slice(0, st.steps.length)),
    steps: () =>
      st.steps.map((s) => ({ token: s.token, next: s.next, output: [...s.output], weights: [...s.weights] })),
  };
  reset();
}
