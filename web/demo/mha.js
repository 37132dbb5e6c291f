// Part "multi-head on a sentence" (§2.3, §7.1, §8.1): weights from the toy models trained by
// scripts/train_toy.py, from a freshly initialised (untrained) layer, or from the user's own PyTorch layer (a JSON
// state dict, see statedict.js). The attention is always attnlab's createMultiHeadAttention(...).forward(...)
// with per-head weights; embeddings and readout are plain JS. This file holds the state, the controls and the
// computation; mha-draw.js draws.

import { h, rng, hashString, positionalEncoding, errText, hideTip } from './util.js';
import { loadToy, createToyMha, runToy, sampleExample, parseTokens, causalMask } from './toy.js';
import { buildUserLayer, FORMAT_DOC, EXPORT_SNIPPET } from './statedict.js';
import { drawHeatmaps, drawLinks, answersTable } from './mha-draw.js';
import { t, lang } from './i18n.js';

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
  tokens.forEach((tok, i) => {
    const r = rng(hashString(tok) ^ salt);
    for (let e = 0; e < E; e++) x[i * E + e] = (tok === null ? 0 : r.normal()) + pe[i * E + e];
  });
  return x;
}

export async function mount(root, attn, { params }) {
  const toys = {};
  for (const task of ['reverse', 'recall']) {
    const res = await fetch(new URL(`models/toy-${task}.json`, import.meta.url));
    if (!res.ok) throw new Error(t('mha.loadFailed', { f: `models/toy-${task}.json`, s: res.status }));
    toys[task] = loadToy(await res.json());
  }
  const mods = new Map(); // attnlab modules by key
  let user = null; // { cfg, mha, fileName }
  let exampleCounter = 1;
  const st = {
    source: 'random',
    heads: 4,
    causal: false,
    padTo: 0,
    view: 'per-head',
    visibleHeads: new Set(),
    visibleFor: null,
    text: {
      'toy-reverse': toys.reverse.examples[0].text,
      'toy-recall': toys.recall.examples[0].text,
      random: SENTENCES[lang],
      user: SENTENCES[lang],
    },
  };

  // ---- controls -----------------------------------------------------------------------------------------
  const sourceRadios = ['random', 'toy-reverse', 'toy-recall', 'user'].map((value) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'mha-source',
        value,
        id: `mha-src-${value}`,
        checked: value === st.source,
        onchange: () => {
          st.source = value;
          syncControls();
          render();
        },
      }),
      t(`mha.src.${value}`),
    ),
  );
  // The browser words its own file input ("Choose File") in its language, not the page's: a labelled button instead.
  const fileIn = h('input.visually-hidden', {
    type: 'file',
    id: 'mha-file',
    accept: '.json,application/json',
    'aria-label': t('mha.fileAria'),
  });
  const fileName = h('span.note', { id: 'mha-file-name', text: t('mha.noFile') });
  const fileBtn = h('label.file-btn', { for: 'mha-file' }, t('mha.chooseFile'), fileIn);
  const fileMsg = h('div', { id: 'mha-file-msg', 'aria-live': 'polite' });
  const desc = h('div.source-desc.note', { id: 'mha-source-desc' });
  const textIn = h('input', {
    type: 'text',
    id: 'mha-text',
    style: 'width: min(560px, calc(100vw - 40px))',
    'aria-label': t('mha.tokens'),
  });
  const exampleBtns = h('span', {});
  const headsSel = h(
    'select',
    { id: 'mha-heads', 'aria-label': t('mha.headsAria') },
    [1, 2, 4, 8].map((n) => h('option', { value: n, text: String(n), selected: n === st.heads })),
  );
  const headsNote = h('span.note', {});
  const causalIn = h('input', { type: 'checkbox', id: 'mha-causal' });
  const padIn = h('input', {
    type: 'number',
    id: 'mha-pad',
    min: '0',
    max: String(MAX_TOKENS),
    value: '0',
    'aria-label': t('mha.padAria'),
  });
  const viewRadios = [
    ['per-head', t('mha.viewPerHead')],
    ['average', t('mha.viewAverage')],
  ].map(([value, label]) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'mha-view',
        value,
        checked: value === st.view,
        onchange: () => {
          st.view = value;
          render();
        },
      }),
      label,
    ),
  );
  const msg = h('div', { id: 'mha-msg' });
  const answers = h('div.answers-wrap', { id: 'mha-answers' });
  const view = {
    grid: h('div.heat-grid', { id: 'mha-heatmaps' }),
    legendBox: h('div'),
    chips: h('div.head-chips', { id: 'mha-head-chips' }),
    links: h('div.links', { id: 'mha-links' }),
  };

  root.append(
    h('div.ctl', {}, h('span', { text: t('mha.source') }), h('div.source-row', {}, sourceRadios, fileBtn, fileName)),
    fileMsg,
    desc,
    h(
      'div.controls',
      {},
      h('label.ctl', { for: 'mha-text' }, h('span', { text: t('mha.tokens') }), textIn),
      exampleBtns,
    ),
    h(
      'div.controls',
      {},
      h(
        'label.ctl',
        { for: 'mha-heads' },
        h('span', { text: t('mha.heads') }),
        h('span', {}, headsSel, ' ', headsNote),
      ),
      h('label.ctl.inline', { for: 'mha-causal' }, causalIn, h('span', { text: t('mha.causal') })),
      h('label.ctl', { for: 'mha-pad' }, h('span', { text: t('mha.pad') }), padIn),
      h('div.ctl', {}, h('span', { text: t('mha.show') }), h('div.radio-row', {}, viewRadios)),
    ),
    h('p.note', { text: t('mha.maskConvention') }),
    msg,
    answers,
    view.legendBox,
    view.grid,
    h('h3', { text: t('mha.linksTitle') }),
    h('p.note', { text: t('mha.linksNote') }),
    view.chips,
    view.links,
    h(
      'details',
      { id: 'mha-format' },
      h('summary', { text: t('mha.formatSummary') }),
      h('p.note', { text: t('mha.formatNote') }),
      h('pre.format', { text: EXPORT_SNIPPET }),
      h('pre.format', { text: FORMAT_DOC }),
    ),
  );

  const setText = () => {
    st.text[st.source] = textIn.value;
    render();
  };
  textIn.addEventListener('change', setText);
  textIn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') setText();
  });
  headsSel.addEventListener('change', () => {
    st.heads = Number(headsSel.value);
    render();
  });
  causalIn.addEventListener('change', () => {
    st.causal = causalIn.checked;
    render();
  });
  padIn.addEventListener('change', () => {
    st.padTo = Math.max(0, Math.min(MAX_TOKENS, Math.round(Number(padIn.value) || 0)));
    padIn.value = st.padTo;
    render();
  });
  fileIn.addEventListener('change', async () => {
    const f = fileIn.files && fileIn.files[0];
    fileName.textContent = f ? f.name : t('mha.noFile');
    if (f) await loadUserLayer(await f.text(), f.name);
  });

  async function loadUserLayer(text, fileName) {
    fileMsg.replaceChildren();
    st.source = 'user';
    sourceRadios[3].firstChild.checked = true;
    try {
      const layer = buildUserLayer(attn, text, fileName);
      if (user) user.mha.dispose();
      user = { ...layer, fileName };
      st.visibleFor = null;
      fileMsg.append(h('div.ok-box', { id: 'mha-file-ok', text: layer.summary }));
    } catch (e) {
      showFileError(e.message);
    }
    syncControls();
    render();
  }
  function showFileError(text) {
    const still = user ? `\n${t('mha.fileStill', { f: user.fileName })}` : '';
    fileMsg.replaceChildren(h('div.error-box', { id: 'mha-file-error', role: 'alert', text: text + still }));
  }
  root.loadLayerText = loadUserLayer; // for scripted use (the e2e test also uses the real file picker)

  function syncControls() {
    const toy = st.source.startsWith('toy-') ? toys[st.source.slice(4)] : null;
    textIn.value = st.text[st.source];
    exampleBtns.replaceChildren();
    const setEx = (s) => {
      st.text[st.source] = s;
      syncControls();
      render();
    };
    if (toy) {
      exampleBtns.append(
        h('button', {
          type: 'button',
          id: 'mha-new-example',
          text: t('mha.newExample'),
          onclick: () => {
            const ex = sampleExample(toy, rng(1000 + exampleCounter++));
            setEx(ex.tokens.map((tk) => toy.vocab[tk]).join(' '));
          },
        }),
      );
    } else {
      exampleBtns.append(
        h('button', {
          type: 'button',
          id: 'mha-example-zh',
          text: t('mha.exampleZh'),
          onclick: () => setEx(SENTENCES.zh),
        }),
        h('button', {
          type: 'button',
          id: 'mha-example-en',
          text: t('mha.exampleEn'),
          onclick: () => setEx(SENTENCES.en),
        }),
      );
    }
    const fixedH = toy ? toy.H : st.source === 'user' ? user?.cfg.numHeads : null;
    headsSel.disabled = fixedH !== null && fixedH !== undefined;
    headsNote.textContent = headsSel.disabled ? t('mha.headsFixed', { n: fixedH }) : `E = ${RANDOM_E}`;
    if (headsSel.disabled) {
      if (![...headsSel.options].some((o) => Number(o.value) === fixedH))
        headsSel.append(h('option', { value: fixedH, text: String(fixedH) }));
      headsSel.value = fixedH;
    } else {
      headsSel.value = st.heads;
    }
    if (toy) {
      desc.replaceChildren(
        h(
          'div',
          {},
          h('strong', { text: t('mha.toyBy') }),
          ' ',
          t(`mha.toyDesc.${toy.task}`),
          ' ',
          t('mha.toyArch', {
            e: toy.E,
            h: toy.H,
            nb: toy.bias ? '' : ', bias=False',
            p: (toy.training.answer_accuracy * 100).toFixed(1),
            n: toy.training.eval_examples,
          }),
        ),
      );
    } else if (st.source === 'random') {
      desc.replaceChildren(
        h(
          'div',
          {},
          h('strong', { text: t('mha.untrained') }),
          ' ',
          t('mha.randomDesc', { e: RANDOM_E }),
          ' ',
          h('strong', { text: t('mha.noise') }),
          ' ',
          t('mha.noiseWhy'),
        ),
      );
    } else {
      desc.replaceChildren(h('div', { text: user ? t('mha.userDesc', { f: user.fileName }) : t('mha.userNone') }));
    }
  }

  // ---- compute ------------------------------------------------------------------------------------------
  const getMha = (key, make) => {
    if (!mods.has(key)) mods.set(key, make());
    return mods.get(key);
  };
  let last = null; // what was drawn: the head chips redraw from it

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
      tokens = ids.map((tk) => toy.vocab[tk]);
    } else {
      tokens = tokenize(st.text[st.source]);
      if (!tokens.length) return fail(t('mha.typeText'));
    }
    if (tokens.length > MAX_TOKENS) return fail(t('mha.tooMany', { n: tokens.length, max: MAX_TOKENS }));
    const L0 = tokens.length;
    const L = Math.max(L0, st.padTo);
    const labels = tokens.concat(Array(L - L0).fill('<pad>'));
    const padded = labels.map((_, i) => i >= L0);
    let H;
    let result; // { weights (H·L·S), average (L·S), S, keyLabels }
    try {
      if (toy) {
        const r = runToy(
          toy,
          getMha(st.source, () => createToyMha(attn, toy)),
          ids.concat(Array(L - L0).fill(-1)),
          { causal: st.causal },
        );
        H = toy.H;
        result = { weights: r.weights, average: r.average, S: L, keyLabels: labels };
        answers.append(...answersTable(toy, ids, r.predicted, { causal: st.causal, padded: st.padTo > ids.length }));
      } else {
        if (st.source === 'user' && !user) return clearViews();
        const mha =
          st.source === 'random'
            ? getMha(`random-${st.heads}`, () =>
                attn.createMultiHeadAttention({ embedDim: RANDOM_E, numHeads: st.heads, batchFirst: true }),
              )
            : user.mha;
        const cfg =
          st.source === 'random'
            ? { numHeads: st.heads, embedDim: RANDOM_E, kdim: RANDOM_E, vdim: RANDOM_E }
            : user.cfg;
        H = cfg.numHeads;
        const E = cfg.embedDim;
        const extraKeys = [cfg.addBiasKV ? '⟨bias_k⟩' : null, cfg.addZeroAttn ? '⟨zero⟩' : null].filter(Boolean);
        const toks = labels.map((s, i) => (padded[i] ? null : s));
        const x = { data: pseudoEmbed(toks, E), shape: [1, L, E] };
        const kx = cfg.kdim === E ? x : { data: pseudoEmbed(toks, cfg.kdim, 0x9e37), shape: [1, L, cfg.kdim] };
        const vx = cfg.vdim === E ? x : { data: pseudoEmbed(toks, cfg.vdim, 0x7f4a), shape: [1, L, cfg.vdim] };
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
      return fail(t('mha.threw', { err: errText(e) }));
    }
    const layerKey = `${st.source}/${H}/${user?.fileName ?? ''}`;
    if (st.visibleFor !== layerKey) {
      // a new layer: show all its heads
      st.visibleFor = layerKey;
      st.visibleHeads = new Set(Array.from({ length: H }, (_, i) => i));
    }
    last = { labels, result, H, padded };
    draw();
    Object.assign(root.dataset, { tokens: JSON.stringify(labels), heads: H, source: st.source });
  }

  function draw() {
    Object.assign(view, {
      width: root.clientWidth || 600,
      perHead: st.view === 'per-head',
      visible: st.visibleHeads,
      causal: st.causal,
    });
    const { labels, result, H, padded } = last;
    drawHeatmaps(view, labels, result, H, padded);
    drawLinks(view, labels, result, H, padded, (hh) => {
      if (st.visibleHeads.has(hh)) st.visibleHeads.delete(hh);
      else st.visibleHeads.add(hh);
      draw();
    });
  }
  function fail(text) {
    msg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    clearViews();
  }
  function clearViews() {
    view.linksView?.destroy();
    view.linksView = null;
    for (const el of [view.grid, view.legendBox, view.links, view.chips]) el.replaceChildren();
  }

  syncControls();
  render();
  if (params.get('layer')) {
    // ?layer=URL loads a state-dict file at start (a link to share your layer)
    try {
      const r = await fetch(params.get('layer'));
      await loadUserLayer(await r.text(), params.get('layer'));
    } catch (e) {
      showFileError(t('mha.fetchFailed', { f: params.get('layer'), err: errText(e) }));
    }
  }
}
