// @ts-check
// Part "对仗: the lower line of a couplet" (issue 34 §1; §6.1 cross-attention, §10.1, §11): the shipped encoder–decoder
// (models/song-couplet-char-marian/, a t5 trained by attnlab on Song regulated verses, loaded in an attnlab/worker with
// readSafetensors + loadModel) writes the lower line of a Tang couplet the reader picks (held-out.jsonl) or an upper
// line the reader types, token by token (greedy or sampled, with Stop); the cross-attention alignment (lower × upper)
// per layer and head; the aligning head named from heads.json (scripts/couplet/heads.mjs); the poem's four couplets
// side by side (颔联/颈联 must be parallel, 首联/尾联 are the control); the training replay (replay.js); a guess-first
// card. Every number comes from the model folder or from the model run here (compute.js).

import { h } from '../../widgets/dom.js';
import { labelled, select } from '../../widgets/controls.js';
import { guessCard } from '../../widgets/guess.js';
import { fmt, errText } from '../../shared/format.js';
import { readSafetensors } from '../../attnlab.js';
import { initWorker } from '../../attnlab-worker.js';
import { t } from '../../i18n.js';
import { charTokenizer } from '../../shared/char-tokenizer.js';
import * as C from './compute.js';
import { coupletName, drawAlignment, drawCouplets, headsTable, layerHead } from './draw.js';
import { ReplayPanel } from './replay.js';

/**
 * @typedef {object} HeadsJson  scripts/couplet/heads.mjs's output
 * @property {{ parallel: number, control: number }} pairs
 * @property {{ parallel: number[][], control: number[][] }} aligned
 * @property {{ base: { parallel: number, control: number }, delta: { parallel: number[][], control: number[][] } }} ablation
 * @property {{ layer: number, head: number, parallel: number, control: number, ablation: { parallel: number, control: number } }} aligning
 */

/**
 * Fetch the model folder's files.
 * @param {URL} dir
 */
async function fetchFolder(dir) {
  const get = async (/** @type {string} */ f) => {
    const r = await fetch(new URL(f, dir));
    if (!r.ok) throw new Error(t('couplet.httpError', { f, s: r.status }));
    return r;
  };
  const [config, bytes, tokenizer, heldOut, heads, snapshots, losses] = await Promise.all([
    get('config.json').then((r) => r.json()),
    get('model.safetensors').then((r) => r.arrayBuffer()),
    get('tokenizer.json').then((r) => r.json()),
    get('held-out.jsonl').then((r) => r.text()),
    get('heads.json').then((r) => r.json()),
    get('snapshots.json').then((r) => r.json()),
    get('losses.csv').then((r) => r.text()),
  ]);
  return { config, bytes: new Uint8Array(bytes), tokenizer, heldOut, heads, snapshots, losses };
}

/**
 * A panel: heading (with the tutorial's §), a note and a body.
 * @param {string} id
 * @param {string} key  couplet.<key>.title / .sec / .note
 * @param {...any} body
 */
export function panel(id, key, ...body) {
  return h(
    `section.poem-panel#${id}`,
    {},
    h('h3', {}, t(`couplet.${key}.title`), h('span.sec', { text: t(`couplet.${key}.sec`) })),
    h('p.note', { html: t(`couplet.${key}.note`) }),
    ...body,
  );
}

/** A button with an id. */
const button = (/** @type {string} */ id, /** @type {string} */ text) => h('button', { type: 'button', id, text });

/** The part: the model in a worker, the picker, the writing, the alignment, the heads, the couplets, the replay. */
class CoupletPart {
  /**
   * @param {HTMLElement} root
   * @param {import('../../attnlab.js').Attnlab} attn
   */
  constructor(root, attn) {
    this.root = root;
    this.attn = attn;
    /** @type {any} the worker's model */
    this.model = null;
    this.status = h('p.poem-status#couplet-status', { text: t('couplet.loading') });
    this.facts = h('p.poem-facts#couplet-facts');
    root.append(this.status, this.facts, this.writePanel(), this.alignPanel(), this.pairsPanel());
    this.replay = new ReplayPanel(panel);
    root.append(this.replay.el);
    root.dataset.state = 'loading';
  }

  writePanel() {
    this.poemSel = h('select#couplet-poem', { 'aria-label': t('couplet.poemAria') });
    this.kSel = select({
      id: 'couplet-k',
      label: t('couplet.kAria'),
      options: [1, 2, 3, 4].map((k) => [k, coupletName(k)]),
      value: 2,
    });
    this.upper = h('input#couplet-upper', { type: 'text', maxlength: 12, size: 12, lang: 'zh', autocomplete: 'off' });
    this.mode = select({
      id: 'couplet-mode',
      label: t('couplet.mode'),
      options: [
        ['greedy', t('couplet.greedy')],
        ['sample', t('couplet.sample')],
      ],
      value: 'greedy',
    });
    this.seed = h('input#couplet-seed', { type: 'number', min: 0, step: 1, value: 1, style: 'width: 6em' });
    this.go = button('couplet-write', t('couplet.go'));
    this.stop = button('couplet-stop', t('couplet.stop'));
    this.go.disabled = this.stop.disabled = true;
    this.go.addEventListener('click', () => this.guarded(() => this.write()));
    this.stop.addEventListener('click', () => this.controller?.abort());
    this.poemSel.addEventListener('change', () => this.guarded(() => this.pickCouplet()));
    this.kSel.addEventListener('change', () => this.guarded(() => this.pickCouplet()));
    this.progress = h('span.note#couplet-progress', { 'aria-live': 'polite' });
    this.out = h('div.couplet-out#couplet-out', { lang: 'zh' });
    return panel(
      'couplet-write-panel',
      'write',
      h(
        'div.controls',
        {},
        labelled('couplet-poem', t('couplet.poem'), this.poemSel),
        labelled('couplet-k', t('couplet.k'), this.kSel),
        labelled('couplet-upper', t('couplet.upper'), this.upper),
      ),
      h(
        'div.controls',
        {},
        labelled('couplet-mode', t('couplet.mode'), this.mode),
        labelled('couplet-seed', t('couplet.seed'), this.seed),
        this.go,
        this.stop,
        this.progress,
      ),
      this.out,
    );
  }

  alignPanel() {
    this.layerSel = h('select#couplet-layer', { 'aria-label': t('couplet.layer') });
    this.headSel = h('select#couplet-head', { 'aria-label': t('couplet.head') });
    for (const s of [this.layerSel, this.headSel]) s.addEventListener('change', () => this.redraw());
    this.alignNote = h('p.note#couplet-align-note');
    this.alignCanvas = h('canvas#couplet-align');
    this.named = h('p.poem-card#couplet-named');
    this.guessBox = h('div');
    this.headsBox = h('div');
    return panel(
      'couplet-align-panel',
      'align',
      h(
        'div.controls',
        {},
        labelled('couplet-layer', t('couplet.layer'), this.layerSel),
        labelled('couplet-head', t('couplet.head'), this.headSel),
      ),
      this.alignNote,
      h('div.poem-scroll', {}, this.alignCanvas),
      this.guessBox,
      this.named,
      this.headsBox,
    );
  }

  pairsPanel() {
    this.pairsBox = h('div.couplet-pairs#couplet-pairs');
    return panel('couplet-pairs-panel', 'pairs', this.pairsBox);
  }

  async load() {
    try {
      const f = await fetchFolder(new URL(C.MODEL_DIR, import.meta.url));
      this.tok = charTokenizer(f.tokenizer);
      this.poems = C.parseCoupletHeldOut(f.heldOut);
      /** @type {HeadsJson} */
      this.heads = f.heads;
      const worker = await initWorker({ variant: this.attn.variant });
      this.model = await worker.loadModel({ config: f.config, tensors: readSafetensors(f.bytes) }, { transfer: true });
      this.ready(f);
    } catch (e) {
      this.status.textContent = t('couplet.loadFailed', { err: errText(e) });
      this.root.dataset.state = 'error';
    }
  }

  /** @param {Awaited<ReturnType<typeof fetchFolder>>} f */
  ready(f) {
    const c = this.model.config;
    this.status.textContent = t('couplet.loaded');
    this.facts.innerHTML = t('couplet.facts', {
      L: c.numLayers,
      Ld: c.decoderLayers,
      H: c.numHeads,
      E: c.embedDim,
      V: c.vocabSize,
      poems: this.poems.length,
      pairs: this.heads.pairs.parallel + this.heads.pairs.control,
    });
    this.poemSel.replaceChildren(
      ...this.poems.map((p, i) => h('option', { value: i, text: `${p.author}《${p.title}》` })),
    );
    const opts = (/** @type {number} */ n, /** @type {string} */ key) =>
      Array.from({ length: n }, (_, i) => h('option', { value: i, text: t(key, { n: i + 1 }) }));
    this.layerSel.replaceChildren(...opts(c.decoderLayers, 'couplet.layerN'));
    this.headSel.replaceChildren(...opts(c.numHeads, 'couplet.headN'));
    this.layerSel.value = String(this.heads.aligning.layer);
    this.headSel.value = String(this.heads.aligning.head);
    this.showHeads();
    this.replay.load(f, this.model.config, this.heads, this.tok);
    this.go.disabled = false;
    this.root.dataset.state = 'ready';
    // the first poem's 颔联, written greedily, so that the maps are there before any click
    this.guarded(async () => {
      await this.pickCouplet();
      await this.write();
    });
  }

  /**
   * Runs an action of the panel; a failure is said in the status line (data-state "error").
   * @param {() => Promise<void>} action
   */
  async guarded(action) {
    try {
      await action();
    } catch (e) {
      this.status.textContent = t('couplet.failed', { err: errText(e) });
      this.root.dataset.state = 'error';
    }
  }

  /** The guess card, the aligning head named with its numbers, and the table of every head. */
  showHeads() {
    const a = this.heads.aligning;
    const values = {
      lh: layerHead(a.layer, a.head),
      par: fmt(a.parallel, 3),
      ctl: fmt(a.control, 3),
      u5: fmt(1 / 6, 3),
      u7: fmt(1 / 8, 3),
      dPar: fmt(a.ablation.parallel, 3),
      dCtl: fmt(a.ablation.control, 3),
      n: this.heads.pairs.parallel,
    };
    const answer = () => ({ html: t('couplet.guess.answer', values), value: `${a.layer}.${a.head}` });
    this.guessBox.replaceChildren(guessCard('couplet', t('couplet.guess.q'), answer));
    this.named.innerHTML = t('couplet.named', values);
    Object.assign(this.named.dataset, { layer: a.layer, head: a.head });
    this.headsBox.replaceChildren(headsTable(this.heads));
  }

  /** The picked poem's couplet into the upper line; the poem's four couplets drawn. */
  async pickCouplet() {
    const poem = this.poems[Number(this.poemSel.value)];
    this.upper.value = poem.couplets[Number(this.kSel.value) - 1].upper;
    const couplets = [];
    for (const c of poem.couplets) {
      const written = [...C.encodeLine(this.tok, c.lower)];
      couplets.push({ ...c, maps: await C.alignmentMaps(this.model, C.encodeLine(this.tok, c.upper), written) });
    }
    this.couplets = couplets;
    this.pairsBox.dataset.poem = poem.id;
    this.redraw();
  }

  /** The reader's upper line → the model writes the lower line, token by token; then its alignment. */
  async write() {
    const up = C.readUpper(this.tok, this.upper.value);
    if ('error' in up) {
      this.progress.textContent = t('couplet.badLength', { n: up.n });
      return;
    }
    const sample = this.mode.value === 'sample';
    const options = { maxNewTokens: up.ids.length, temperature: sample ? 1 : 0, seed: Number(this.seed.value) || 0 };
    this.controller = new AbortController();
    /** @type {number[]} */
    const ids = [];
    this.busy(true);
    this.show(up.labels, ids);
    try {
      await this.model.generate(up.ids, {
        ...options,
        signal: this.controller.signal,
        onToken: (/** @type {number} */ id) => {
          ids.push(id);
          this.show(up.labels, ids);
        },
      });
      this.progress.textContent = t('couplet.done', { n: ids.length });
      this.root.dataset.stopped = '0';
    } catch (e) {
      if (e?.name !== 'AbortError') throw e; // guarded() says it
      this.progress.textContent = t('couplet.stopped', { n: ids.length });
      this.root.dataset.stopped = '1';
    } finally {
      this.busy(false);
    }
    Object.assign(this.out.dataset, { source: JSON.stringify([...up.ids]), ids: JSON.stringify(ids) });
    this.written = ids.length ? { maps: await C.alignmentMaps(this.model, up.ids, ids), ids, labels: up.labels } : null;
    this.redraw();
    this.root.dataset.state = 'done';
  }

  /** @param {boolean} on */
  busy(on) {
    this.go.disabled = on;
    this.stop.disabled = !on;
    this.root.dataset.state = on ? 'generating' : 'ready';
  }

  /**
   * The upper line and the lower line as written so far.
   * @param {string[]} labels  the upper line's tokens ([UNK] where unknown), then [EOS]
   * @param {number[]} ids
   */
  show(labels, ids) {
    const cell = (/** @type {string} */ s, /** @type {string} */ cls) => h(`span.poem-char.${cls}`, { text: s });
    this.out.replaceChildren(
      h('div.poem-line', {}, ...labels.slice(0, -1).map((s) => cell(s, 'up'))),
      h('div.poem-line#couplet-lower', {}, ...ids.map((id) => cell(this.tok.tokens[id], 'low'))),
    );
    this.out.dataset.text = this.tok.decode(ids);
    this.progress.textContent = t('couplet.progress', { n: ids.length, max: labels.length });
  }

  /** The written line's alignment and the four couplets, at the chosen layer and head. */
  redraw() {
    const l = Number(this.layerSel.value);
    const hh = Number(this.headSel.value);
    const label = (/** @type {string} */ c) => (this.tok.ids.has(c) ? c : '[UNK]');
    if (this.couplets) drawCouplets(this.pairsBox, this.couplets, l, hh, label);
    const w = this.written;
    this.alignCanvas.hidden = !w;
    if (!w) return;
    const { T, S } = w.maps;
    this.alignNote.textContent = t('couplet.alignNote', { lh: layerHead(l, hh) });
    Object.assign(this.alignCanvas.dataset, { layer: l, head: hh, rows: T, cols: S });
    drawAlignment(this.alignCanvas, C.headMatrix(w.maps, l, hh), {
      rows: w.ids.map((id) => this.tok.tokens[id]),
      cols: w.labels,
      title: `${t('couplet.align.title')}: ${layerHead(l, hh)}`,
      width: Math.min(420, Math.max(220, this.root.clientWidth - 20)),
    });
  }
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export async function mount(root, attn) {
  const part = new CoupletPart(root, attn);
  await part.load();
}
