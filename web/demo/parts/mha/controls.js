// @ts-check
// The multi-head part's controls (view.js holds the state): the weight source, the file button, the tokens, the
// example buttons, heads, causal, padding and per-head/average. Every control writes to the part's store.

import { h } from '../../widgets/dom.js';
import { radios, select, labelled, inline, group } from '../../widgets/controls.js';
import { FORMAT_DOC, EXPORT_SNIPPET } from '../../shared/statedict.js';
import { t } from '../../i18n.js';
import { MAX_TOKENS } from './compute.js';

/**
 * @typedef {object} MhaState
 * @property {'random' | 'toy-reverse' | 'toy-recall' | 'user'} source
 * @property {number} heads of the untrained layer
 * @property {boolean} causal
 * @property {number} padTo
 * @property {'per-head' | 'average'} view
 * @property {Record<string, string>} text the tokens of each source
 */
/** @typedef {import('../../store.js').Store<MhaState>} MhaStore */
/** @typedef {ReturnType<typeof buildControls>} MhaUi */

/**
 * A labelled button over a hidden file input (the browser words its own file input, "Choose File", in its language,
 * not the page's), and the picked file's name.
 * @param {(file: File) => void} onFile
 */
function fileButton(onFile) {
  const fileIn = h('input.visually-hidden', {
    type: 'file',
    id: 'mha-file',
    accept: '.json,application/json',
    'aria-label': t('mha.fileAria'),
  });
  const fileName = h('span.note', { id: 'mha-file-name', text: t('mha.noFile') });
  fileIn.addEventListener('change', () => {
    const f = fileIn.files && fileIn.files[0];
    fileName.textContent = f ? f.name : t('mha.noFile');
    if (f) onFile(f);
  });
  return { fileBtn: h('label.file-btn', { for: 'mha-file' }, t('mha.chooseFile'), fileIn), fileName };
}

/**
 * The layer's settings: heads (of the untrained layer), causal, padding, per-head or average.
 * @param {MhaStore} store
 */
function settings(store) {
  const st = store.get();
  const headsSel = select({
    id: 'mha-heads',
    label: t('mha.headsAria'),
    options: [1, 2, 4, 8].map((n) => [n, String(n)]),
    value: st.heads,
    onChange: (v) => store.set({ heads: Number(v) }),
  });
  const causalIn = h('input', { type: 'checkbox', id: 'mha-causal' });
  causalIn.addEventListener('change', () => store.set({ causal: causalIn.checked }));
  const padIn = h('input', {
    type: 'number',
    id: 'mha-pad',
    min: '0',
    max: String(MAX_TOKENS),
    value: '0',
    'aria-label': t('mha.padAria'),
  });
  padIn.addEventListener('change', () => {
    const padTo = Math.max(0, Math.min(MAX_TOKENS, Math.round(Number(padIn.value) || 0)));
    padIn.value = String(padTo);
    store.set({ padTo });
  });
  const viewRadios = radios({
    name: 'mha-view',
    options: [
      ['per-head', t('mha.viewPerHead')],
      ['average', t('mha.viewAverage')],
    ],
    value: st.view,
    onChange: (view) => store.set({ view }),
  });
  const headsNote = h('span.note', {});
  const row = h(
    'div.controls',
    {},
    labelled('mha-heads', t('mha.heads'), h('span', {}, headsSel, ' ', headsNote)),
    inline(causalIn, t('mha.causal')),
    labelled('mha-pad', t('mha.pad'), padIn),
    group(t('mha.show'), h('div.radio-row', {}, viewRadios)),
  );
  return { headsSel, headsNote, row };
}

/**
 * Every control, built once and appended to root with the part's output elements; returns them by name.
 * @param {HTMLElement} root
 * @param {MhaStore} store
 * @param {(file: File) => void} onFile a file was picked
 */
export function buildControls(root, store, onFile) {
  const st = store.get();
  const sourceRadios = radios({
    name: 'mha-source',
    options: /** @type {[MhaState['source'], string][]} */ (
      ['random', 'toy-reverse', 'toy-recall', 'user'].map((v) => [v, t(`mha.src.${v}`)])
    ),
    value: st.source,
    id: (v) => `mha-src-${v}`,
    onChange: (source) => store.set({ source }),
  });
  const { fileBtn, fileName } = fileButton(onFile);
  const textIn = h('input', {
    type: 'text',
    id: 'mha-text',
    style: 'width: min(560px, calc(100vw - 40px))',
    'aria-label': t('mha.tokens'),
  });
  const setText = () => store.set({ text: { ...store.get().text, [store.get().source]: textIn.value } });
  textIn.addEventListener('change', setText);
  textIn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') setText();
  });
  const { headsSel, headsNote, row } = settings(store);
  const ui = {
    sourceRadios,
    fileName,
    fileMsg: h('div', { id: 'mha-file-msg', 'aria-live': 'polite' }),
    desc: h('div.source-desc.note', { id: 'mha-source-desc' }),
    textIn,
    exampleBtns: h('span', {}),
    headsSel,
    headsNote,
    msg: h('div', { id: 'mha-msg' }),
    answers: h('div.answers-wrap', { id: 'mha-answers' }),
    view: /** @type {import('./draw.js').MhaView} */ ({
      grid: h('div.heat-grid', { id: 'mha-heatmaps' }),
      legendBox: h('div'),
      chips: h('div.head-chips', { id: 'mha-head-chips' }),
      links: h('div.links', { id: 'mha-links' }),
    }),
  };
  root.append(
    group(t('mha.source'), h('div.source-row', {}, sourceRadios, fileBtn, fileName)),
    ui.fileMsg,
    ui.desc,
    h('div.controls', {}, labelled('mha-text', t('mha.tokens'), textIn), ui.exampleBtns),
    row,
    h('p.note', { html: t('mha.maskConvention') }),
    ui.msg,
    ui.answers,
    ui.view.legendBox,
    ui.view.grid,
    h('h3', { text: t('mha.linksTitle') }),
    h('p.note', { text: t('mha.linksNote') }),
    ui.view.chips,
    ui.view.links,
    h(
      'details',
      { id: 'mha-format' },
      h('summary', { text: t('mha.formatSummary') }),
      h('p.note', { text: t('mha.formatNote') }),
      h('pre.format', { text: EXPORT_SNIPPET }),
      h('pre.format', { text: FORMAT_DOC }),
    ),
  );
  return ui;
}
