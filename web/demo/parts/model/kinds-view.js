// @ts-check
// Part "Your model", the views of the kinds that do not generate on their own text (#33 item 6): an encoder on text
// (BERT, RoBERTa: one forward, the top predictions at each mask token, a classifier's labels), ViT on an image (picked
// or dropped; [CLS]'s attention over the patches laid on the image) and an encoder–decoder (T5, Marian: generate with
// Stop, then the cross-attention alignment and both stacks' self-attention). Each builds its controls in the panel's
// box below the loading message; every layer × heads grid and head map is the poem chapter's draw.js. The numbers:
// kinds.js. Test hooks: #model-ckpt[data-kind][data-task][data-ids][data-source][data-mask][data-labels]
// [data-stopped][data-text][data-pixel-corners], #model-enc-grid / #model-dec-grid .poem-head[data-layer][data-head],
// #model-kind-map[data-stack][data-layer][data-head], #model-vit-overlay[data-layer][data-head][data-grid][data-cells]
// [data-cls], #model-align[data-layer][data-head][data-rows][data-cols] (data-matrix: target × source).

import { h } from '../../widgets/dom.js';
import { labelled, select } from '../../widgets/controls.js';
import { drawHeatmap } from '../../widgets/heatmap.js';
import { seqColor } from '../../widgets/colours.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { headGrid, drawHead, layerHead } from '../poem/draw.js';
import { generateTokens } from './checkpoint.js';
import * as K from './kinds.js';

/**
 * @typedef {object} Host  what a kind's panel gets from the whole-checkpoint panel
 * @property {HTMLElement} box  #model-ckpt (its data- attributes)
 * @property {HTMLElement} root  the kind's own container
 * @property {import('../../attnlab.js').Attnlab} attn  the page's instance (softmax)
 * @property {any} model  the worker's model
 * @property {import('./checkpoint.js').TextTokenizer | null} tok
 * @property {import('./checkpoint.js').Folder} folder
 * @property {(s: string) => void} setState
 * @property {(text: string) => void} problem
 */

/** @param {string} id @param {string} caption */
const button = (id, caption) => h(`button#${id}`, { type: 'button', text: caption });
/** @param {string} id @param {number} n @param {string} caption */
const indexSelect = (id, n, caption) =>
  select({ id, label: caption, value: 0, options: Array.from({ length: n }, (_, i) => [i, String(i + 1)]) });

/**
 * Grids of every layer and head (one per stack) and one head's map below them, drawn on a click.
 */
class MapsView {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.caption = h('p#model-kind-caption', { text: t('model.kind.pickHead') });
    this.map = h('canvas#model-kind-map');
    this.links = h('div.poem-links#model-kind-links');
    this.detail = h('div.poem-head-detail', {}, this.caption, h('div.poem-scroll', {}, this.map), this.links);
  }

  /**
   * One stack's grid: its title, note and head buttons; a click draws that head's map.
   * @param {string} id  the grid's id
   * @param {string} title
   * @param {K.Maps} m  square maps (T × T)
   * @param {string[]} labels
   */
  grid(id, title, m, labels) {
    const box = h(`div.poem-grid#${id}`);
    const note = h('p.note', { text: t('model.s2s.gridNote', { L: m.maps.length, H: m.H, T: m.T }) });
    const pick = { l: -1, h: -1 };
    const draw = () =>
      headGrid(box, { maps: m.maps, T: m.T, labels, pick }, (l, hh) => {
        Object.assign(pick, { l, h: hh });
        draw();
        this.head(id, m, labels, pick);
      });
    draw();
    this.root.append(h('h4', { text: title }), note, box);
    return { box, note };
  }

  /**
   * @param {string} stack
   * @param {K.Maps} m
   * @param {string[]} labels
   * @param {{ l: number, h: number }} pick
   */
  head(stack, m, labels, { l, h: hh }) {
    const caption = t('model.kind.headCaption', { lh: layerHead(l, hh) });
    this.caption.textContent = caption;
    Object.assign(this.map.dataset, { stack, layer: l, head: hh });
    const width = Math.min(520, Math.max(260, this.root.clientWidth - 60));
    const T = m.T;
    drawHead(
      { map: this.map, links: this.links },
      m.maps[l].subarray(hh * T * T, (hh + 1) * T * T),
      labels,
      caption,
      width,
    );
  }

  done() {
    this.root.append(this.detail);
  }
}

/**
 * A table of rows of cells.
 * @param {string} id
 * @param {string[]} heads
 * @param {{ data: Record<string, string>, cells: string[] }[]} rows
 */
function table(id, heads, rows) {
  const body = rows.map((r) => {
    const tr = h('tr', {}, ...r.cells.map((c) => h('td', { text: c })));
    Object.assign(tr.dataset, r.data);
    return tr;
  });
  return h(`table.matrix#${id}`, {}, h('tr', {}, ...heads.map((x) => h('th', { text: x }))), ...body);
}

/**
 * The labels' probabilities as a table and in #model-ckpt[data-labels].
 * @param {Host} o
 * @param {Float32Array} logits
 */
function labelTable(o, logits) {
  const probs = K.classProbabilities(o.attn, logits, o.folder.config.id2label);
  o.box.dataset.labels = JSON.stringify(probs.map(({ label, p }) => ({ label, p })));
  const rows = probs.map(({ label, p }) => ({ data: { label, p: String(p) }, cells: [label, fmt(p, 4)] }));
  return [
    h('h4', { text: t('model.enc.labelsTitle') }),
    table('model-labels', [t('model.enc.label'), t('model.enc.prob')], rows),
  ];
}

/** BERT / RoBERTa: the text, one forward, the mask predictions or labels, the encoder's grid. */
export class TextEncoderPanel {
  /** @param {Host} o */
  constructor(o) {
    this.o = o;
    this.mask = K.maskTokenId(o.tok.tk, o.folder.tokenizerConfig);
    this.maskName = this.mask === null ? '[MASK]' : o.tok.tk.id_to_token(this.mask);
    const start = o.model.task === 'masked-lm' ? `The cat sat on the ${this.maskName}.` : 'The cat sat on the mat.';
    this.text = h('textarea#model-enc-text', { rows: 2, 'aria-label': t('model.enc.textAria'), style: 'width: 100%' });
    this.text.value = start;
    this.run = button('model-enc-run', t('model.enc.run'));
    this.run.addEventListener('click', () => this.forward());
    this.out = h('div');
    o.root.append(
      labelled('model-enc-text', t('model.enc.text'), this.text),
      h('div.controls', {}, this.run),
      this.out,
    );
  }

  async forward() {
    const { o } = this;
    const ids = o.tok.tk.encode(this.text.value).ids.slice();
    if (!ids.length) return o.problem(t('model.enc.empty'));
    const ctx = o.model.config.contextLength;
    if (ids.length > ctx) return o.problem(t('model.enc.tooLong', { n: ids.length, ctx }));
    o.setState('running');
    try {
      const r = await K.encoderForward(o.model, ids);
      this.show(ids, r);
      o.setState('done');
    } catch (e) {
      o.problem(e.message);
    }
  }

  /**
   * @param {number[]} ids
   * @param {K.Maps & { logits: Float32Array | null }} r
   */
  show(ids, r) {
    const { o } = this;
    const labels = ids.map((id) => o.tok.label(id));
    o.box.dataset.ids = JSON.stringify(ids);
    this.out.replaceChildren();
    if (o.model.task === 'masked-lm') this.out.append(...this.maskTable(ids, labels, r.logits));
    if (o.model.task === 'sequence-classification') this.out.append(...labelTable(o, r.logits));
    const v = new MapsView(this.out);
    v.grid('model-enc-grid', t('model.kind.gridTitle'), r, labels);
    v.done();
  }

  /**
   * @param {number[]} ids
   * @param {string[]} labels
   * @param {Float32Array} logits
   */
  maskTable(ids, labels, logits) {
    const title = h('h4', { text: t('model.enc.maskTitle', { mask: this.maskName }) });
    const found = this.mask === null ? [] : K.maskPredictions(this.o.attn, logits, ids, this.mask, 5);
    this.o.box.dataset.mask = JSON.stringify(found.map((m) => ({ i: m.i, top: m.top.map((x) => x.id) })));
    if (!found.length) return [title, h('p.note', { text: t('model.enc.noMask', { mask: this.maskName }) })];
    const name = (/** @type {number} */ id) => this.o.tok.label(id);
    const rows = found.map((m) => ({
      data: { i: String(m.i), top: JSON.stringify(m.top.map((x) => x.id)) },
      cells: [
        `${t('model.enc.position', { n: m.i + 1 })} (${labels[m.i]})`,
        m.top.map((x) => `${name(x.id)} ${fmt(x.p, 3)}`).join(' · '),
      ],
    }));
    return [title, table('model-mask', [t('model.enc.where'), t('model.enc.guesses')], rows)];
  }
}

/**
 * A picked or dropped image file drawn at size × size (the canvas resizes it): its RGBA bytes.
 * @param {Blob} file
 * @param {number} size
 * @param {HTMLCanvasElement} canvas
 */
async function readImage(file, size, canvas) {
  const bitmap = await createImageBitmap(file);
  Object.assign(canvas, { width: size, height: size });
  const g = canvas.getContext('2d', { willReadFrequently: true });
  g.imageSmoothingQuality = 'high';
  g.drawImage(bitmap, 0, 0, size, size);
  bitmap.close();
  return g.getImageData(0, 0, size, size).data;
}

/** ViT: an image, one forward, the labels, [CLS] over the patches on the image, the encoder's grid. */
export class VisionPanel {
  /** @param {Host} o */
  constructor(o) {
    this.o = o;
    this.s = K.imageSettings(o.folder.config, o.folder.preprocessor);
    /** @type {(K.Maps & { logits: Float32Array | null }) | null} */
    this.r = null;
    this.small = h('canvas', { style: 'display: none' });
    this.out = h('div');
    o.root.append(this.dropZone(), h('p.note#model-vit-norm', { text: this.normNote() }), this.out);
  }

  normNote() {
    const s = this.s;
    const list = (/** @type {number[]} */ v) => `[${v.map((x) => fmt(x, 3)).join(', ')}]`;
    const vars = { size: s.size, ch: t(s.channels === 1 ? 'model.vit.grey' : 'model.vit.rgb'), scale: fmt(s.scale, 6) };
    return t(s.fromFile ? 'model.vit.norm' : 'model.vit.normDefault', {
      ...vars,
      mean: list(s.mean),
      std: list(s.std),
    });
  }

  dropZone() {
    const input = h('input.visually-hidden#model-image', {
      type: 'file',
      accept: 'image/*',
      'aria-label': t('model.vit.pick'),
    });
    input.addEventListener('change', () => {
      if (input.files.length) this.image(input.files[0]);
      input.value = '';
    });
    const style = 'border: 2px dashed #9aa; border-radius: 6px; padding: 10px; margin: 8px 0';
    const zone = h('div#model-image-drop', { style });
    const pick = h('label.file-btn', { for: 'model-image' }, t('model.vit.pick'), input);
    zone.append(h('p', { text: t('model.vit.drop'), style: 'margin: 0 0 6px' }), pick);
    zone.addEventListener('dragover', (e) => e.preventDefault());
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      const f = e.dataTransfer?.files?.[0];
      if (f) this.image(f);
    });
    return zone;
  }

  /** @param {File} file */
  async image(file) {
    const { o, s } = this;
    o.setState('running');
    let rgba;
    try {
      rgba = await readImage(file, s.size, this.small);
    } catch (e) {
      return o.problem(t('model.vit.notImage', { f: file.name, err: e?.message ?? String(e) }));
    }
    try {
      const px = K.pixelValues(rgba, s);
      const n = s.size * s.size;
      const corners = [0, s.size - 1, n - s.size, n - 1].map((i) =>
        Array.from({ length: s.channels }, (_, c) => px.data[c * n + i]),
      );
      o.box.dataset.pixelCorners = JSON.stringify(corners);
      this.r = await K.encoderForward(o.model, px);
      this.show();
      o.setState('done');
    } catch (e) {
      o.problem(e.message);
    }
  }

  show() {
    const { o, r } = this;
    const g = Math.floor(this.s.size / this.s.patch);
    const labels = ['[CLS]', ...Array.from({ length: g * g }, (_, i) => t('model.vit.patch', { n: i + 1 }))];
    this.out.replaceChildren();
    if (o.model.task === 'image-classification') this.out.append(...labelTable(o, r.logits));
    this.layer = indexSelect('model-vit-layer', r.maps.length, t('model.s2s.layer'));
    this.head = indexSelect('model-vit-head', r.H, t('model.s2s.head'));
    for (const sel of [this.layer, this.head]) sel.addEventListener('change', () => this.overlay(g));
    this.caption = h('p#model-vit-caption');
    this.canvas = h('canvas#model-vit-overlay', { role: 'img' });
    const controls = h(
      'div.controls',
      {},
      labelled('model-vit-layer', t('model.s2s.layer'), this.layer),
      labelled('model-vit-head', t('model.s2s.head'), this.head),
    );
    this.out.append(controls, this.caption, this.canvas);
    this.overlay(g);
    const v = new MapsView(this.out);
    v.grid('model-enc-grid', t('model.kind.gridTitle'), r, labels);
    v.done();
  }

  /** The chosen head's [CLS] row, one cell a patch, over the image. @param {number} g */
  overlay(g) {
    const l = Number(this.layer.value);
    const hh = Number(this.head.value);
    const { cells, cls } = K.clsPatches(this.r.maps[l], hh, g);
    const max = Math.max(...cells);
    this.caption.textContent = t('model.vit.overlayTitle', {
      lh: layerHead(l, hh),
      g,
      max: fmt(max, 3),
      cls: fmt(cls, 3),
    });
    const side = Math.max(1, Math.floor(240 / this.s.size)) * this.s.size;
    const c = this.canvas;
    Object.assign(c, { width: side, height: side });
    c.setAttribute('aria-label', t('model.vit.overlayAria'));
    Object.assign(c.dataset, {
      layer: l,
      head: hh,
      grid: g,
      cls: String(cls),
      cells: JSON.stringify(Array.from(cells)),
    });
    const x = c.getContext('2d');
    x.imageSmoothingEnabled = false;
    x.drawImage(this.small, 0, 0, side, side);
    const cell = (side * this.s.patch) / this.s.size;
    for (let i = 0; i < cells.length; i++) {
      x.globalAlpha = max > 0 ? cells[i] / max : 0;
      x.fillStyle = seqColor(1);
      x.fillRect((i % g) * cell, Math.floor(i / g) * cell, cell, cell);
    }
    x.globalAlpha = 1;
  }
}

/** T5 / Marian: the source, generate token by token (Stop), then the alignment and both stacks' grids. */
export class Seq2SeqPanel {
  /** @param {Host} o */
  constructor(o) {
    this.o = o;
    this.src = h('textarea#model-src', { rows: 2, 'aria-label': t('model.s2s.srcAria'), style: 'width: 100%' });
    this.src.value = 'The cat sat on the mat.';
    this.max = h('input#model-s2s-max', { type: 'number', min: 1, max: 200, value: 16, style: 'width: 5.5em' });
    this.go = button('model-translate', t('model.s2s.go'));
    this.stop = button('model-s2s-stop', t('model.gen.stop'));
    this.stop.disabled = true;
    this.go.addEventListener('click', () => this.generate());
    this.stop.addEventListener('click', () => this.controller?.abort());
    this.progress = h('span.note#model-s2s-progress');
    this.tokens = h('div.model-out#model-s2s-out');
    this.text = h('p.model-text#model-s2s-text');
    this.out = h('div');
    const run = h(
      'div.controls',
      {},
      labelled('model-s2s-max', t('model.gen.max'), this.max),
      this.go,
      this.stop,
      this.progress,
    );
    o.root.append(labelled('model-src', t('model.s2s.src'), this.src), run, this.tokens, this.text, this.out);
  }

  /** @param {boolean} on */
  busy(on) {
    this.go.disabled = on;
    this.stop.disabled = !on;
    this.o.setState(on ? 'generating' : 'done');
  }

  async generate() {
    const { o } = this;
    const source = o.tok.encode(this.src.value);
    const n = Number(this.max.value);
    if (!source.length) return o.problem(t('model.s2s.empty'));
    if (source.length > o.model.config.contextLength)
      return o.problem(t('model.enc.tooLong', { n: source.length, ctx: o.model.config.contextLength }));
    if (!Number.isInteger(n) || n < 1 || n > 200) return o.problem(t('model.gen.badMax', { max: 200 }));
    this.controller = new AbortController();
    /** @type {number[]} */
    const ids = [];
    this.out.replaceChildren();
    this.busy(true);
    try {
      const onToken = (/** @type {number} */ id) => {
        ids.push(id);
        this.showText(ids, n);
      };
      const r = await generateTokens(
        o.model,
        source,
        { maxNewTokens: n, temperature: 0 },
        { onToken, signal: this.controller.signal },
      );
      this.showText(r.ids, n);
      Object.assign(o.box.dataset, {
        source: JSON.stringify(source),
        ids: JSON.stringify(r.ids),
        stopped: r.stopped ? '1' : '0',
      });
      this.progress.textContent = t(r.stopped ? 'model.gen.stopped' : 'model.gen.done', { n: r.ids.length });
      if (r.ids.length) await this.maps(source, r.ids);
      this.busy(false);
    } catch (e) {
      this.busy(false);
      o.problem(e.message);
    }
  }

  /**
   * @param {number[]} ids
   * @param {number} max
   */
  showText(ids, max) {
    const tk = this.o.tok;
    this.tokens.replaceChildren(...ids.map((id) => h('span.model-tok.gen', { text: tk.label(id) })));
    this.progress.textContent = t('model.gen.progress', { n: ids.length, max });
    this.text.textContent = this.o.box.dataset.text = tk.decode(ids);
  }

  /**
   * @param {number[]} source
   * @param {number[]} ids
   */
  async maps(source, ids) {
    const { o } = this;
    const r = await K.seq2seqMaps(o.model, source, ids, o.model.config.decoderStartTokenId);
    const name = (/** @type {number} */ id) => o.tok.label(id);
    this.labels = { src: source.map(name), tgt: ids.map(name), dec: r.decoderInput.map(name) };
    this.r = r;
    this.layer = indexSelect('model-align-layer', r.cross.maps.length, t('model.s2s.layer'));
    this.head = indexSelect('model-align-head', r.cross.H, t('model.s2s.head'));
    for (const sel of [this.layer, this.head]) sel.addEventListener('change', () => this.align());
    this.note = h('p.note#model-align-note');
    this.canvas = h('canvas#model-align');
    const controls = h(
      'div.controls',
      {},
      labelled('model-align-layer', t('model.s2s.layer'), this.layer),
      labelled('model-align-head', t('model.s2s.head'), this.head),
    );
    this.out.append(
      h('h4', { text: t('model.s2s.alignTitle') }),
      controls,
      this.note,
      h('div.poem-scroll', {}, this.canvas),
    );
    this.align();
    const v = new MapsView(this.out);
    v.grid('model-enc-grid', t('model.s2s.encTitle'), r.encoder, this.labels.src);
    v.grid('model-dec-grid', t('model.s2s.decTitle'), r.decoder, this.labels.dec);
    v.done();
  }

  /** The chosen layer and head's (T, S) cross-attention, target rows × source columns. */
  align() {
    const l = Number(this.layer.value);
    const hh = Number(this.head.value);
    const { T, S } = this.r.cross;
    const lh = layerHead(l, hh);
    this.note.textContent = t('model.s2s.alignNote', { lh });
    Object.assign(this.canvas.dataset, { layer: l, head: hh, rows: T, cols: S });
    const width = Math.min(560, Math.max(260, this.out.clientWidth - 20));
    drawHeatmap(this.canvas, K.alignment(this.r.cross, l, hh), {
      rows: T,
      cols: S,
      rowLabels: this.labels.tgt,
      colLabels: this.labels.src,
      target: width,
      title: `${t('model.s2s.alignTitle')}: ${lh}`,
    });
  }
}
