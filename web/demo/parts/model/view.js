// @ts-check
// Part "Your model": two paths from one file picker and drop zone. A model folder (files that include config.json)
// goes to the whole checkpoint (#25: whole.js, in a worker: generation, every layer's attention); a lone
// .safetensors checkpoint (BERT, GPT-2 or ViT names) or the JSON state dict of part 7 goes to one layer (#18): pick
// the layer, feed it words, pasted hidden states or seeded random ones, and see that layer's per-head attention
// drawn by attnlab/viz (the package's own views). Reading and building: compute.js (+ checkpoint.js). One
// MultiHeadAttention lives at a time: it is disposed when the file, architecture, layer or head count changes.

import { headMaps, tokenLinks } from '../../attnlab-viz.js';
import { h } from '../../widgets/dom.js';
import { radios, labelled, inline, group } from '../../widgets/controls.js';
import { errText } from '../../shared/format.js';
import { SENTENCES } from '../../shared/inputs.js';
import { createStore } from '../../store.js';
import { t, LANG } from '../../i18n.js';
import {
  ARCHS,
  MAX_TOKENS,
  readModelFile,
  describeFile,
  guessHeads,
  buildLayer,
  readInput,
  layerWeights,
  isFolder,
} from './compute.js';
import { CheckpointPanel } from './whole.js';

/** @typedef {import('./compute.js').ModelFile} ModelFile */
/** @typedef {import('./compute.js').Arch} Arch */
/** @typedef {{ mode: 'words' | 'vectors' | 'random', text: { words: string, vectors: string } }} ModelState */

const SAMPLE = '../../models/sample-bert.safetensors';

/**
 * A labelled button over a hidden file input (the browser would word its own input in its language, not the
 * page's); its files go to onFiles.
 * @param {string} id
 * @param {string} caption
 * @param {Record<string, any>} attrs
 * @param {(files: File[]) => void} onFiles
 */
function fileButton(id, caption, attrs, onFiles) {
  const input = h('input.visually-hidden', { type: 'file', id, multiple: true, ...attrs });
  input.addEventListener('change', () => {
    if (input.files.length) onFiles([...input.files]);
    input.value = '';
  });
  return h('label.file-btn', { for: id }, caption, input);
}

/**
 * The drop zone and its buttons: files, a folder, the page's poem model (whole checkpoint), the sample BERT (layer).
 * @param {{ files: (files: File[]) => void, sample: () => void, poem: () => void }} on
 */
function dropUi(on) {
  const accept = '.safetensors,.json,application/json';
  return h(
    'div#model-drop',
    { style: 'border: 2px dashed #9aa; border-radius: 6px; padding: 12px; margin: 8px 0' },
    h('p', { text: t('model.drop'), style: 'margin: 0 0 6px' }),
    h(
      'div.controls',
      {},
      fileButton('model-file', t('model.pick'), { accept, 'aria-label': t('model.fileAria') }, on.files),
      fileButton(
        'model-folder',
        t('model.pickFolder'),
        { webkitdirectory: true, 'aria-label': t('model.folderAria') },
        on.files,
      ),
      h('button#model-poem', { type: 'button', text: t('model.ckpt.poem'), onclick: on.poem }),
      h('button#model-sample', { type: 'button', text: t('model.sample'), onclick: on.sample }),
    ),
  );
}

/**
 * A section of the part: heading and note.
 * @param {string} id
 * @param {string} key  model.<key>.title / .note
 */
const section = (id, key) =>
  h(
    `section.model-path#${id}`,
    {},
    h('h3', { text: t(`model.${key}.title`) }),
    h('p.note', { html: t(`model.${key}.note`) }),
  );

/**
 * Every control and output element, built once and appended to root; returns them by name.
 * @param {HTMLElement} root
 * @param {import('../../store.js').Store<ModelState>} store
 * @param {{ files: (files: File[]) => void, sample: () => void, poem: () => void, mode: (mode: ModelState['mode']) => void }} on
 */
function buildUi(root, store, on) {
  const ui = {
    drop: dropUi(on),
    ckpt: section('model-ckpt', 'whole'),
    layerBox: section('model-layer-path', 'one'),
    fileMsg: h('div.note', { id: 'model-file-msg', 'aria-live': 'polite', text: t('model.noFile') }),
    archSel: h(
      'select',
      { id: 'model-arch', 'aria-label': t('model.archAria') },
      ARCHS.map((a) => h('option', { value: a, text: t(`model.arch.${a}`) })),
      h('option', { value: 'json', text: t('model.arch.json'), hidden: true }),
    ),
    layerIn: h('input', { type: 'number', id: 'model-layer', min: '0', value: '0', style: 'width: 5em' }),
    headsIn: h('input', { type: 'number', id: 'model-heads', min: '1', value: '4', style: 'width: 5em' }),
    headsNote: h('span.note', { id: 'model-heads-note' }),
    causalIn: h('input', { type: 'checkbox', id: 'model-causal' }),
    textIn: h('textarea', {
      id: 'model-input',
      rows: '4',
      spellcheck: 'false',
      'aria-label': t('model.inputAria'),
      style: 'width: min(640px, calc(100vw - 40px)); font: 12px ui-monospace, monospace',
    }),
    countIn: h('input', {
      type: 'number',
      id: 'model-count',
      min: '1',
      max: String(MAX_TOKENS),
      value: '8',
      style: 'width: 5em',
    }),
    seedIn: h('input', { type: 'number', id: 'model-seed', min: '0', value: '1', style: 'width: 7em' }),
    inputNote: h('p.note', { id: 'model-input-note' }),
    msg: h('div', { id: 'model-msg' }),
    summary: h('p.note', { id: 'model-summary' }),
    maps: h('div', { id: 'model-maps' }),
    links: h('div', { id: 'model-links' }),
  };
  const randomBox = h(
    'div.controls',
    {},
    labelled('model-count', t('model.count'), ui.countIn),
    labelled('model-seed', t('model.seed'), ui.seedIn),
  );
  const modeRadios = radios({
    name: 'model-mode',
    options: /** @type {[ModelState['mode'], string][]} */ (
      ['words', 'vectors', 'random'].map((v) => [v, t(`model.mode.${v}`)])
    ),
    value: store.get().mode,
    id: (v) => `model-mode-${v}`,
    onChange: on.mode,
  });
  const runBtn = h('button', { type: 'button', id: 'model-run', text: t('model.run') });
  const viewsBox = h(
    'div',
    {},
    h('h3', { text: t('model.mapsTitle') }),
    ui.maps,
    h('h3', { text: t('model.linksTitle') }),
    ui.links,
  );
  root.append(ui.drop, ui.ckpt, ui.layerBox);
  ui.layerBox.append(
    ui.fileMsg,
    h(
      'div.controls',
      {},
      labelled('model-arch', t('model.arch'), ui.archSel),
      labelled('model-layer', t('model.layer'), ui.layerIn),
      labelled('model-heads', t('model.heads'), h('span', {}, ui.headsIn, ' ', ui.headsNote)),
      inline(ui.causalIn, t('model.causal')),
    ),
    group(t('model.input'), h('div.radio-row', {}, modeRadios)),
    ui.textIn,
    randomBox,
    ui.inputNote,
    h('div.controls', {}, runBtn),
    ui.msg,
    ui.summary,
    viewsBox,
  );
  return { ...ui, randomBox, runBtn, viewsBox };
}

/**
 * Dropping files anywhere on the zone; dragover must be cancelled for drop to fire.
 * @param {HTMLElement} drop
 * @param {(files: File[]) => void} onFiles
 */
function dropZone(drop, onFiles) {
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.style.borderColor = '#1f77b4';
  });
  drop.addEventListener('dragleave', () => {
    drop.style.borderColor = '#9aa';
  });
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.style.borderColor = '#9aa';
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length) onFiles(files);
  });
}

/** The part: its file, its one layer, its views and the controls' state. */
class ModelPart {
  /**
   * @param {HTMLElement} root
   * @param {import('../../attnlab.js').Attnlab} attn
   */
  constructor(root, attn) {
    this.root = root;
    this.attn = attn;
    /** @type {ModelFile | null} the loaded file */
    this.src = null;
    /** @type {(import('./compute.js').Layer & { key: string }) | null} */
    this.layer = null;
    /** @type {import('../../attnlab-viz.js').View[]} */
    this.views = [];
    this.store = createStore(
      /** @type {ModelState} */ ({ mode: 'words', text: { words: SENTENCES[LANG], vectors: '' } }),
    );
    /** @param {File[]} files */
    const loadFiles = (files) => this.loadFiles(files);
    this.ui = buildUi(root, this.store, {
      files: loadFiles,
      sample: () => this.loadSample(),
      poem: () => this.ckpt.loadPoem(),
      mode: (mode) => this.store.set({ text: this.savedText(), mode }),
    });
    this.ckpt = new CheckpointPanel(this.ui.ckpt, attn);
    this.wire(loadFiles);
    this.syncInput();
    this.render();
  }

  /** @param {(files: File[]) => void} loadFiles */
  wire(loadFiles) {
    const { ui } = this;
    const render = () => this.render();
    dropZone(ui.drop, loadFiles);
    ui.archSel.addEventListener('change', () => {
      ui.causalIn.checked = ui.archSel.value === 'gpt2';
      this.fillLayer();
      render();
    });
    for (const el of [ui.layerIn, ui.headsIn, ui.causalIn, ui.countIn, ui.seedIn])
      el.addEventListener('change', render);
    const commitText = () => this.store.set({ text: this.savedText() }); // renders
    ui.runBtn.addEventListener('click', commitText);
    ui.textIn.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) commitText();
    });
    ui.textIn.addEventListener('change', commitText);
    this.store.subscribe(() => {
      this.syncInput();
      render();
    });
  }

  /** The texts with the box's saved under the current mode. */
  savedText() {
    const { mode, text } = this.store.get();
    return mode === 'random' ? text : { ...text, [mode]: this.ui.textIn.value };
  }

  // ---- files ----------------------------------------------------------------------------------------------
  async loadSample() {
    try {
      const res = await fetch(new URL(SAMPLE, import.meta.url));
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      await this.loadBytes(new Uint8Array(await res.arrayBuffer()), 'sample-bert.safetensors', t('model.sampleRandom'));
    } catch (e) {
      this.fileError(t('model.sampleFailed', { err: errText(e) }));
    }
  }

  /**
   * Picked or dropped files: a model folder (with config.json) to the whole checkpoint, else the first file to the
   * one-layer path.
   * @param {File[]} files
   */
  async loadFiles(files) {
    if (!isFolder(files)) return this.loadBlob(files[0], files[0].name);
    // (the Files themselves: readFolder reads model.safetensors one tensor at a time)
    const named = files.map((f) => ({ name: f.webkitRelativePath || f.name, bytes: f }));
    const folder = files[0].webkitRelativePath.split('/')[0];
    await this.ckpt.load(named, folder || t('model.ckpt.yourFiles'));
  }

  /** @param {Blob} blob @param {string} name */
  async loadBlob(blob, name) {
    try {
      await this.loadBytes(new Uint8Array(await blob.arrayBuffer()), name);
    } catch (e) {
      this.fileError(t('model.readFailed', { f: name, err: errText(e) }));
    }
  }

  /** @param {Uint8Array} bytes @param {string} name @param {string} [note]  said after the file's description */
  async loadBytes(bytes, name, note = '') {
    let next;
    try {
      next = readModelFile(name, bytes);
    } catch (e) {
      return this.fileError(e.message);
    }
    this.src = next;
    this.dropLayer();
    this.ui.fileMsg.className = 'note';
    this.ui.fileMsg.textContent = [describeFile(next), note].filter(Boolean).join(' ');
    this.pickArchitecture(next);
    this.fillLayer();
    this.render();
    this.countLoad(); // tests wait for it
  }

  countLoad() {
    this.root.dataset.loads = String(Number(this.root.dataset.loads ?? 0) + 1);
  }

  /** The file's architecture, heads and mask, as far as it tells. @param {ModelFile} file */
  pickArchitecture(file) {
    const { ui } = this;
    const json = file.kind === 'json';
    ui.archSel.disabled = json;
    for (const o of ui.archSel.options) o.hidden = (o.value === 'json') !== json;
    if (file.kind === 'json') {
      ui.archSel.value = 'json';
      ui.headsIn.value = String(file.cfg.numHeads);
      ui.headsNote.textContent = t('model.headsFromFile');
      ui.causalIn.checked = false;
      return;
    }
    const arch = ARCHS.find((a) => file.found[a]) ?? 'bert';
    ui.archSel.value = arch;
    ui.causalIn.checked = arch === 'gpt2';
    const E = file.found[arch]?.embedDim;
    if (E) {
      const g = guessHeads(E, file.metadata);
      ui.headsIn.value = String(g.numHeads);
      ui.headsNote.textContent = t(`model.headsGuess.${g.from}`, { e: E });
    } else ui.headsNote.textContent = '';
  }

  /** A file that cannot be used: the message, and nothing drawn (the previous file is dropped). @param {string} text */
  fileError(text) {
    this.src = null;
    this.dropLayer();
    this.ui.fileMsg.className = '';
    this.ui.fileMsg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    this.render();
    this.countLoad();
  }

  fillLayer() {
    const { src, ui } = this;
    const f = src?.kind === 'hf' ? src.found[/** @type {Arch} */ (ui.archSel.value)] : null;
    ui.layerIn.disabled = src?.kind === 'json';
    if (f && !f.layers.includes(Number(ui.layerIn.value))) ui.layerIn.value = String(f.layers[0]);
    ui.layerIn.title = f ? t('model.layersInFile', { list: f.layers.join(', ') }) : '';
  }

  // ---- input ------------------------------------------------------------------------------------------------
  syncInput() {
    const { ui } = this;
    const { mode, text } = this.store.get();
    ui.textIn.style.display = mode === 'random' ? 'none' : ''; // .controls sets display, which beats [hidden]
    ui.randomBox.style.display = mode === 'random' ? '' : 'none';
    if (mode !== 'random') ui.textIn.value = text[mode];
    const E = this.layer?.embedDim ?? this.currentWidth();
    ui.inputNote.textContent = t(`model.note.${mode}`, { e: E ?? 'E', max: MAX_TOKENS });
  }

  currentWidth() {
    const { src } = this;
    if (!src) return null;
    return src.kind === 'json'
      ? src.cfg.embedDim
      : (src.found[/** @type {Arch} */ (this.ui.archSel.value)]?.embedDim ?? null);
  }

  // ---- the layer and its attention ----------------------------------------------------------------------------
  dropLayer() {
    if (this.layer) this.layer.mha.dispose();
    this.layer = null;
  }

  currentLayer() {
    const { ui } = this;
    const choice = { arch: ui.archSel.value, layer: Number(ui.layerIn.value), numHeads: Number(ui.headsIn.value) };
    const key = `${choice.arch}/${choice.layer}/${choice.numHeads}`;
    if (this.layer?.key === key) return this.layer;
    this.dropLayer();
    this.layer = { ...buildLayer(this.attn, this.src, choice), key };
    return this.layer;
  }

  clearViews() {
    for (const v of this.views) v.destroy();
    this.views = [];
    this.ui.viewsBox.hidden = true;
  }

  render() {
    const { root, ui } = this;
    this.syncInput();
    this.clearViews();
    ui.msg.replaceChildren();
    ui.summary.textContent = '';
    for (const k of ['weights', 'shape', 'input', 'tokens', 'heads', 'layer', 'arch', 'embedDim', 'causal'])
      delete root.dataset[k];
    if (!this.src) {
      root.dataset.state = 'empty';
      return;
    }
    let out;
    try {
      const l = this.currentLayer();
      const random = { count: Number(ui.countIn.value), seed: Number(ui.seedIn.value) };
      const { x, tokens } = readInput(this.store.get().mode, ui.textIn.value, l.embedDim, random);
      out = { l, x, tokens, w: layerWeights(l, x, tokens.length, ui.causalIn.checked) };
    } catch (e) {
      root.dataset.state = 'error';
      ui.msg.replaceChildren(h('div.error-box', { role: 'alert', text: e.message }));
      return;
    }
    this.drawViews(out);
  }

  /** @param {{ l: import('./compute.js').Layer, x: Float32Array, tokens: string[], w: { data: Float32Array, shape: number[] } }} out */
  drawViews({ l, x, tokens, w }) {
    const { root, ui } = this;
    ui.viewsBox.hidden = false;
    const keyTokens = tokens.concat(l.extraKeys);
    const [H, L, S] = w.shape;
    const text = vizText(H);
    const width = Math.min(240, (root.clientWidth || 600) - 60);
    this.views.push(headMaps(ui.maps, w, { queryTokens: tokens, keyTokens, width, text }));
    this.views.push(tokenLinks(ui.links, w, { queryTokens: tokens, keyTokens, text }));
    const arch = ui.archSel.value;
    const what =
      this.src.kind === 'json'
        ? t('model.arch.json')
        : `${t(`model.arch.${arch}`)} · ${t('model.layer')} ${ui.layerIn.value}`;
    const mask = ui.causalIn.checked ? t('model.summaryCausal') : '';
    ui.summary.textContent = t('model.summary', { what, e: l.embedDim, h: H, d: l.embedDim / H, l: L, s: S, mask });
    Object.assign(root.dataset, {
      state: 'ready',
      weights: JSON.stringify(Array.from(w.data)),
      shape: JSON.stringify(w.shape),
      input: JSON.stringify(Array.from(x)),
      tokens: JSON.stringify(tokens),
      heads: String(H),
      layer: ui.layerIn.value,
      arch,
      embedDim: String(l.embedDim),
      causal: String(ui.causalIn.checked),
    });
  }
}

/**
 * attnlab/viz's words in the page's language.
 * @param {number} H
 */
const vizText = (H) => ({
  head: (/** @type {number} */ hh) => t('mha.head', { h: hh + 1 }),
  mean: t('mha.average', { n: H }),
  /** @param {string} caption @param {string} q @param {string} k @param {string} v */
  cell: (caption, q, k, v) => t('model.cellTip', { caption, q, k, v }),
  /** @param {string} q @param {string} best */
  query: (q, best) => t('mha.linksQuery', { q, best }),
});

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export async function mount(root, attn) {
  new ModelPart(root, attn);
}
