// @ts-check
// Part "Your model", the whole checkpoint (issue #25 item 4): a Hugging Face model folder (config.json,
// model.safetensors, tokenizer.json, tokenizer_config.json; picked, dropped, or the page's poem model by one click)
// loads with loadModel in a module Web Worker (attnlab/worker), so that the page stays responsive; a prompt is
// tokenised with @huggingface/tokenizers, generate adds tokens one by one (each shown as it comes, with progress and a
// Stop button that aborts), then one forward with outputAttentions gives every layer's attention: the layers × heads
// grid, one head's map and the chosen token's links, drawn by the poem chapter's draw.js. The numbers: checkpoint.js.
// Test hooks: #model-ckpt[data-state][data-loads][data-model][data-prompt-len][data-ids][data-stopped][data-text],
// #model-grid .poem-head[data-layer][data-head], #model-head-map[data-layer][data-head][data-token].

import { LOADED_MODEL } from '../../shared/loaded-model.js';
import { h } from '../../widgets/dom.js';
import { labelled, inline } from '../../widgets/controls.js';
import { errText } from '../../shared/format.js';
import { initWorker } from '../../attnlab-worker.js';
import { t } from '../../i18n.js';
import { readFolder, loadFolder, generateOptions, generateTokens, attentionGrid, tokenRows } from './checkpoint.js';
import { FOLDER_FILES, MAX_NEW } from './checkpoint.js';
import { headGrid, drawHead, layerHead } from '../poem/draw.js';
import { MODEL_DIR } from '../poem/compute.js';
import { TextEncoderPanel, VisionPanel, Seq2SeqPanel } from './kinds-view.js';

/** @typedef {import('../../attnlab-worker.js').WorkerTransformer} WorkerModel */
/** @typedef {{ name: string, bytes: Uint8Array | Blob }} NamedBytes  a folder's file, read or a Blob (a File) */

/**
 * A number input.
 * @param {string} id
 * @param {Record<string, any>} attrs
 */
const num = (id, attrs) => h('input', { type: 'number', id, style: 'width: 5.5em', ...attrs });

/** The panel's controls and outputs, by name. */
function buildControls() {
  return {
    msg: h('div#model-ckpt-msg', { 'aria-live': 'polite', text: t('model.ckpt.none') }),
    facts: h('p.note#model-ckpt-facts'),
    prompt: h('textarea#model-prompt', { rows: 2, 'aria-label': t('model.gen.promptAria'), style: 'width: 100%' }),
    max: num('model-max', { min: 1, max: MAX_NEW, value: 24 }),
    temp: num('model-temp', { min: 0, step: 0.1, value: 0.8 }),
    seed: num('model-gen-seed', { min: 0, value: 1 }),
    topK: num('model-topk', { min: 0, value: 0 }),
    topP: num('model-topp', { min: 0.05, max: 1, step: 0.05, value: 1 }),
    eos: h('input#model-eos', { type: 'checkbox', checked: true }),
    go: h('button#model-generate', { type: 'button', disabled: true, text: t('model.gen.go') }),
    stop: h('button#model-stop', { type: 'button', disabled: true, text: t('model.gen.stop') }),
    progress: h('progress#model-progress', { max: 1, value: 0 }),
    progressText: h('span.note#model-progress-text'),
    out: h('div.model-out#model-out'),
    text: h('p.model-text#model-text'),
    gridNote: h('p.note#model-grid-note'),
    grid: h('div.poem-grid#model-grid'),
    caption: h('p#model-head-caption'),
    map: h('canvas#model-head-map'),
    links: h('div.poem-links#model-head-links'),
    decoder: h('div#model-decoder-ui'),
    kind: h('div#model-kind-ui'),
  };
}

/** The whole-checkpoint panel of the part: its worker, its model and tokenizer, the last generation. */
export class CheckpointPanel {
  /**
   * @param {HTMLElement} box  the panel's section
   * @param {import('../../attnlab.js').Attnlab} attn  the page's instance (its variant is the worker's)
   */
  constructor(box, attn) {
    this.box = box;
    this.attn = attn;
    /** @type {Promise<import('../../attnlab-worker.js').AttnlabWorker> | null} */
    this.worker = null;
    /** @type {WorkerModel | null} */
    this.model = null;
    /** @type {import('./checkpoint.js').TextTokenizer | null} */
    this.tok = null;
    /** @type {number[]} prompt and generated ids */
    this.ids = [];
    this.promptLen = 0;
    /** @type {AbortController | null} */
    this.controller = null;
    /** @type {{ maps: Float32Array[], T: number } | null} */
    this.grid = null;
    this.pick = { l: 0, h: 0, i: -1 };
    /** @type {import('./checkpoint.js').Folder | null} */
    this.folder = null;
    /** @type {object | null} the kind's panel (kinds-view.js) of an encoder or encoder–decoder */
    this.kindView = null;
    this.ui = buildControls();
    this.build();
    this.setState('empty');
  }

  build() {
    const u = this.ui;
    u.go.addEventListener('click', () => this.generate());
    u.stop.addEventListener('click', () => this.controller?.abort());
    u.prompt.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) this.generate();
    });
    const settings = h(
      'div.controls',
      {},
      labelled('model-max', t('model.gen.max'), u.max),
      labelled('model-temp', t('model.gen.temp'), u.temp),
      labelled('model-gen-seed', t('model.gen.seed'), u.seed),
      labelled('model-topk', t('model.gen.topK'), u.topK),
      labelled('model-topp', t('model.gen.topP'), u.topP),
      inline(u.eos, t('model.gen.eos')),
    );
    const run = h('div.controls', {}, u.go, u.stop, u.progress, u.progressText);
    const head = h('div.poem-head-detail', {}, u.caption, h('div.poem-scroll', {}, u.map), u.links);
    u.decoder.append(labelled('model-prompt', t('model.gen.prompt'), u.prompt), settings, run);
    u.decoder.append(u.out, u.text, h('h4', { text: t('model.gen.gridTitle') }), u.gridNote, u.grid, head);
    this.box.append(u.msg, u.facts, u.decoder, u.kind);
  }

  /** @param {'empty' | 'loading' | 'ready' | 'generating' | 'running' | 'done' | 'error'} s */
  setState(s) {
    this.box.dataset.state = s;
    this.ui.go.disabled = !this.model || s === 'generating' || s === 'loading';
    this.ui.stop.disabled = s !== 'generating';
  }

  /** @param {string} text */
  problem(text) {
    this.ui.msg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    this.setState('error');
  }

  // ---- loading ----------------------------------------------------------------------------------------------
  /** The page's poem model, fetched, through the same path as dropped files. */
  async loadPoem() {
    const dir = new URL(MODEL_DIR, import.meta.url);
    try {
      const files = await Promise.all(
        FOLDER_FILES.map(async (name) => {
          const r = await fetch(new URL(name, dir));
          if (!r.ok) throw new Error(`${name}: HTTP ${r.status}`);
          return { name, bytes: new Uint8Array(await r.arrayBuffer()) };
        }),
      );
      await this.load(files, t('model.ckpt.poemName'));
    } catch (e) {
      this.failLoad(t('model.ckpt.poemFailed', { err: errText(e) }));
    }
  }

  /**
   * A model folder's files → the model (in the worker) and its tokenizer; the previous model is disposed.
   * @param {NamedBytes[]} files
   * @param {string} label  what the message calls it
   */
  async load(files, label) {
    if (this.box.dataset.state === 'generating') this.controller?.abort();
    this.setState('loading');
    this.ui.msg.textContent = t('model.ckpt.loading', { f: label });
    try {
      const folder = await readFolder(files);
      const worker = await (this.worker ??= initWorker({ variant: this.attn.variant }));
      const old = this.model;
      this.model = null;
      LOADED_MODEL.set({ model: null, tok: null, label: '' });
      this.ui.kind.replaceChildren();
      if (old) await old.dispose();
      const r = await loadFolder((o) => worker.loadModel(o, { transfer: true }), folder);
      Object.assign(this, { model: r.model, tok: r.tok, ids: [], grid: null, folder });
    } catch (e) {
      return this.failLoad(e.message);
    }
    this.loaded(label);
  }

  /** @param {string} label */
  loaded(label) {
    const c = this.model.config;
    const { kind, task } = this.model;
    const facts = { f: label, arch: c.arch, L: c.numLayers, H: c.numHeads, E: c.embedDim, V: c.vocabSize };
    this.ui.msg.textContent = kind === 'decoder' ? t('model.ckpt.loaded', facts) : this.kindFacts(label);
    const vit = c.arch === 'vit';
    this.ui.facts.innerHTML = t(vit ? 'model.vit.facts' : 'model.ckpt.facts', {
      ctx: c.contextLength,
      variant: this.attn.variant,
    });
    Object.assign(this.box.dataset, { model: label, kind, task });
    this.clearOutput();
    this.ui.decoder.hidden = kind !== 'decoder';
    if (kind === 'decoder') LOADED_MODEL.set({ model: this.model, tok: this.tok, label });
    else this.kindPanel();
    this.setState('ready');
    this.countLoad();
  }

  /** What an encoder or encoder–decoder is: arch, kind, task, layers × heads. @param {string} label */
  kindFacts(label) {
    const c = this.model.config;
    const two = this.model.kind === 'encoder-decoder';
    const layers = two
      ? t('model.kind.layers2', { L: c.numLayers, D: /** @type {any} */ (c).decoderLayers, H: c.numHeads })
      : t('model.kind.layers', { L: c.numLayers, H: c.numHeads });
    const kind = t(two ? 'model.kind.encoderDecoder' : 'model.kind.encoder');
    return t('model.kind.loaded', { f: label, arch: c.arch, kind, task: this.model.task, layers, E: c.embedDim });
  }

  /** The kind's own controls and views (kinds-view.js) in #model-kind-ui. */
  kindPanel() {
    const root = this.ui.kind;
    const o = {
      box: this.box,
      root,
      attn: this.attn,
      model: this.model,
      tok: this.tok,
      folder: this.folder,
      setState: (/** @type {any} */ s) => this.setState(s),
      problem: (/** @type {string} */ text) => this.problem(text),
    };
    if (this.model.kind === 'encoder-decoder') this.kindView = new Seq2SeqPanel(o);
    else if (this.model.config.arch === 'vit') this.kindView = new VisionPanel(o);
    else this.kindView = new TextEncoderPanel(o);
  }

  /** @param {string} text */
  failLoad(text) {
    this.problem(text);
    this.countLoad();
  }

  countLoad() {
    this.box.dataset.loads = String(Number(this.box.dataset.loads ?? 0) + 1);
  }

  clearOutput() {
    const u = this.ui;
    for (const el of [u.out, u.grid, u.links, u.caption, u.kind]) el.replaceChildren();
    u.text.textContent = '';
    u.gridNote.textContent = '';
    u.progress.value = 0;
    u.progressText.textContent = '';
    for (const k of ['ids', 'promptLen', 'stopped', 'text', 'source', 'mask', 'labels', 'pixelCorners'])
      delete this.box.dataset[k];
  }

  // ---- generation ----------------------------------------------------------------------------------------------
  settings() {
    const u = this.ui;
    return {
      maxNewTokens: Number(u.max.value),
      temperature: Number(u.temp.value),
      seed: Number(u.seed.value),
      topK: Number(u.topK.value),
      topP: Number(u.topP.value),
    };
  }

  /** The prompt, then generate token by token; then the attention of every layer on the whole text. */
  async generate() {
    if (!this.model || this.box.dataset.state === 'generating') return;
    let prompt, opts;
    try {
      prompt = this.tok.encode(this.ui.prompt.value);
      if (!prompt.length) throw new Error(t('model.gen.empty'));
      opts = generateOptions(this.settings(), prompt.length, this.model.config.contextLength);
    } catch (e) {
      return this.problem(e.message);
    }
    const controller = (this.controller = new AbortController());
    const eos = this.ui.eos.checked ? this.tok.eos : [];
    try {
      this.start(prompt, opts.maxNewTokens);
      const onToken = (/** @type {number} */ id) => this.onToken(id, opts.maxNewTokens);
      const r = await generateTokens(this.model, prompt, opts, { eos, onToken, signal: controller.signal });
      this.ids = [...prompt, ...r.ids];
      await this.finish(r.stopped);
    } catch (e) {
      this.problem(e.message);
    }
  }

  /**
   * @param {number[]} prompt
   * @param {number} max
   */
  start(prompt, max) {
    this.clearOutput();
    this.ui.msg.textContent = '';
    Object.assign(this, { ids: prompt.slice(), promptLen: prompt.length, grid: null });
    this.box.dataset.promptLen = String(prompt.length);
    this.ui.progress.max = max;
    this.setState('generating');
    this.showTokens();
  }

  /**
   * One new id, as generate gives it.
   * @param {number} id
   * @param {number} max
   */
  onToken(id, max) {
    this.ids.push(id);
    const n = this.ids.length - this.promptLen;
    this.ui.progress.value = n;
    this.ui.progressText.textContent = t('model.gen.progress', { n, max });
    this.showTokens();
  }

  /** @param {boolean} stopped */
  async finish(stopped) {
    const n = this.ids.length - this.promptLen;
    this.ui.progressText.textContent = t(stopped ? 'model.gen.stopped' : 'model.gen.done', { n });
    Object.assign(this.box.dataset, { stopped: stopped ? '1' : '0', ids: JSON.stringify(this.ids) });
    this.grid = await attentionGrid(this.model, this.ids);
    this.pick.i = this.ids.length - 1;
    this.setState('done');
    this.showTokens();
    this.drawGrid();
  }

  /** The text as token buttons (prompt, then generated), and the generated part decoded. */
  showTokens() {
    const { ids, promptLen, tok } = this;
    const cells = ids.map((id, i) => {
      const cls = `button.model-tok${i < promptLen ? '.prompt' : '.gen'}${i === this.pick.i && this.grid ? '.picked' : ''}`;
      const b = h(cls, { type: 'button', 'data-i': i, title: t('model.gen.tokTip', { i: i + 1, id }) }, tok.label(id));
      b.addEventListener('click', () => this.pickToken(i));
      return b;
    });
    this.ui.out.replaceChildren(...cells);
    const text = tok.decode(ids.slice(promptLen));
    this.ui.text.textContent = text;
    this.box.dataset.text = text;
  }

  // ---- attention ----------------------------------------------------------------------------------------------
  /** @param {number} i */
  pickToken(i) {
    if (!this.grid) return;
    this.pick.i = i;
    this.showTokens();
    this.drawGrid();
  }

  drawGrid() {
    const { maps, T } = this.grid;
    const labels = this.ids.map((id) => this.tok.label(id));
    headGrid(this.ui.grid, { maps, T, labels, pick: this.pick }, (l, hh) => {
      Object.assign(this.pick, { l, h: hh });
      this.drawGrid();
    });
    const { l, h: hh, i } = this.pick;
    this.ui.gridNote.textContent = t('model.gen.gridNote', { L: maps.length, H: maps[0].length / (T * T), T });
    const caption = t('model.gen.headCaption', { lh: layerHead(l, hh), tok: labels[i], n: i + 1 });
    this.ui.caption.textContent = caption;
    Object.assign(this.ui.map.dataset, { layer: l, head: hh, token: i });
    const width = Math.min(520, Math.max(260, this.box.clientWidth - 60));
    const m = maps[l].subarray(hh * T * T, (hh + 1) * T * T);
    const links = tokenRows(maps[l], T, i);
    drawHead({ map: this.ui.map, links: this.ui.links }, m, labels, caption, width, {
      links,
      query: [labels[i]],
      aria: t('model.gen.linksAria'),
    });
  }
}
