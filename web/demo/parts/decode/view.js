// @ts-check
// Part "decoding": the causal toy model of compute.js (4 query heads sharing 2 key/value heads, weights written by
// hand) generates token by token through attnlab's KV cache. Each step projects only the new token, appends its key
// and value to the cache and attends over everything cached; its query row is drawn under the earlier ones, one heat
// map per head, the cache growing to the right. Heads are coloured by the key/value head they share. After every
// step the page checks the steps so far against one causal forward over the whole sequence (no cache).
// Test hooks: #decode[data-length][data-tokens][data-max-diff], and #decode.trace (steps, state dict, inputs).

import { headColour, weightColour } from '../../attnlab-viz.js';
import { h } from '../../widgets/dom.js';
import { legend } from '../../widgets/legend.js';
import { labelled, group } from '../../widgets/controls.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import * as M from './compute.js';

const H = M.CONFIG.numHeads;

/** @typedef {{ prompt: number[], tokens: number[], steps: M.Step[], running: boolean }} DecodeState */

/**
 * One heat map per query head of the steps so far (rows = steps, keys = cached positions).
 * @param {HTMLElement} grid
 * @param {DecodeState} st
 * @param {number} width
 */
function drawMaps(grid, st, width) {
  const n = st.steps.length;
  const labels = st.tokens.slice(0, n).map((tok, i) => `${i} ${M.VOCAB[tok]}`);
  grid.replaceChildren();
  for (let hh = 0; hh < H; hh++) {
    const g = M.kvHeadOf(hh);
    const title = t('decode.head', { h: hh + 1, g: g + 1 });
    const canvas = h('canvas', { 'data-head': hh, 'data-kv-head': g, role: 'img', 'aria-label': title });
    if (n) {
      const masked = (/** @type {number} */ i, /** @type {number} */ j) => j > i;
      drawHeatmap(canvas, M.headMap(st.steps, hh), {
        rows: n,
        cols: n,
        rowLabels: labels,
        colLabels: labels,
        target: width,
        title,
        masked,
      });
    }
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
}

/**
 * The tokens so far: the prompt's, then the generated ones; the cached ones marked.
 * @param {DecodeState} st
 */
function tokenStrip(st) {
  const n = st.steps.length;
  return [
    h('span.small', { text: t('decode.tokens') }),
    ...st.tokens.map((tok, i) =>
      h(
        `span.tok.${i < st.prompt.length ? 'prompt' : 'generated'}${i < n ? '.cached' : ''}`,
        { 'data-pos': i, title: t(i < st.prompt.length ? 'decode.promptTok' : 'decode.generatedTok', { i }) },
        M.VOCAB[tok],
      ),
    ),
  ];
}

/**
 * The step's cost: the floats read from the cache, with and without grouped heads.
 * @param {number} n steps so far
 */
function costText(n) {
  if (!n) return t('decode.costEmpty');
  const kv = M.CONFIG.numKVHeads;
  return t('decode.cost', { t: n - 1, n, kv, d: M.HEAD_DIM, f: 2 * kv * n * M.HEAD_DIM, full: 2 * H * n * M.HEAD_DIM });
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const model = M.createModel(attn);
  const store = createStore(
    /** @type {DecodeState} */ ({ prompt: [0, 1, 2], tokens: [0, 1, 2], steps: [], running: false }),
  );
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
      labelled('decode-prompt', t('decode.prompt'), promptIn),
      stepBtn,
      runBtn,
      resetBtn,
      group(t('decode.cacheLength'), lengthEl),
    ),
    h('p.note', { html: t('decode.modelNote') }),
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
    const ids = M.parsePrompt(promptIn.value);
    msg.replaceChildren();
    if (!ids) msg.append(h('div.error-box', { role: 'alert', text: t('decode.promptBad') }));
    const prompt = ids || store.get().prompt;
    model.cache.reset();
    store.set({ running: false, prompt, tokens: prompt.slice(), steps: [] });
  }

  /** One step; false once the cache is full. */
  function step() {
    const pos = model.cache.length;
    if (pos >= M.MAX_LENGTH) return false;
    const { tokens, steps } = store.get();
    const s = M.step(model, tokens[pos]);
    store.set({ steps: [...steps, s], tokens: pos + 1 >= tokens.length ? [...tokens, s.next] : tokens });
    return model.cache.length < M.MAX_LENGTH;
  }

  /** @param {DecodeState} st */
  function draw(st) {
    const n = st.steps.length;
    const full = model.cache.length >= M.MAX_LENGTH;
    lengthEl.textContent = `${model.cache.length} / ${M.MAX_LENGTH}`;
    stepBtn.disabled = full;
    runBtn.textContent = t(st.running ? 'decode.pause' : 'decode.run');
    runBtn.disabled = !st.running && full;
    tokensEl.replaceChildren(...tokenStrip(st));
    drawMaps(grid, st, Math.min(300, Math.max(200, ((root.clientWidth || 640) - 40) / 2)));
    costEl.textContent = costText(n);
    const d = M.check(model, st.steps, st.tokens);
    const dText = d === 0 ? '0' : d?.toExponential(1);
    checkEl.textContent = d === null ? '' : t(d <= 1e-5 ? 'decode.check' : 'decode.checkBad', { n, d: dText });
    checkEl.classList.toggle('warn-box', d !== null && d > 1e-5);
    Object.assign(root.dataset, {
      length: model.cache.length,
      tokens: JSON.stringify(st.tokens.map((tok) => M.VOCAB[tok])),
      maxDiff: d === null ? '' : String(d),
    });
  }
  store.subscribe(draw);

  async function run() {
    if (store.get().running) return store.set({ running: false });
    store.set({ running: true });
    while (store.get().running && step()) await new Promise((r) => setTimeout(r, 150));
    store.set({ running: false });
  }

  stepBtn.addEventListener('click', () => step());
  runBtn.addEventListener('click', run);
  resetBtn.addEventListener('click', reset);
  promptIn.addEventListener('change', reset);
  // For tests: the steps as computed, the layer's weights and the input rows (numbers, not pixels).
  const trace = {
    config: M.CONFIG,
    stateDict: () => model.sd,
    inputs: () => M.embedSequence(store.get().tokens.slice(0, store.get().steps.length)),
    steps: () =>
      store.get().steps.map((s) => ({ token: s.token, next: s.next, output: [...s.output], weights: [...s.weights] })),
  };
  Object.assign(root, { trace });
  reset();
}
