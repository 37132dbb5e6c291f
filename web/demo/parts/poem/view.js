// @ts-check
// Part "A small Transformer that has read Tang poems" (§7.2, §8.1, §8.2, §10.1, §11): the shipped poem model
// (models/tang-song-quatrains-char-llama/, loaded with readSafetensors + loadModel like any checkpoint) writes a
// quatrain character by character with its attention rows (generate's onToken); the layers × heads grid with the
// names measured on held-out poems (the model folder's heads.json; the random model's measured here); the same
// architecture at random initialisation; heads switched off (headMask) with the held-out loss and the poem; and a
// small model trained from scratch in a worker (scratch.js). The numbers are in compute.js and heads.js.

import { h } from '../../widgets/dom.js';
import { radios } from '../../widgets/controls.js';
import { fmt, errText } from '../../shared/format.js';
import { readSafetensors } from '../../attnlab.js';
import { t } from '../../i18n.js';
import { charTokenizer } from '../../shared/char-tokenizer.js';
import * as C from './compute.js';
import {
  ablationAnswer,
  NAME_MIN_LIFT,
  NAME_MIN_SCORE,
  headScores,
  meanLoss,
  nameHeads,
  poemFromText,
  readHeadsJson,
} from './heads.js';
import { poemLines, drawRows, headGrid, drawHead, sharpnessTable, layerHead, weightLegend } from './draw.js';
import { ScratchTrainer } from './scratch.js';
import { ArchCard } from './arch-view.js';
import { headImportanceAll, nextTokenBatch } from '../explain/compute.js';
import { guessCard } from '../../widgets/guess.js';
import { sentenceStudy } from './sentence.js';
import { sentenceBody, showSentence, enableSentence } from './sentence-view.js';

/** Held-out poems the random model's heads are measured on here (pattern scores, entropy, names). */
const LIVE_POEMS = 24;
/** Seven-character held-out quatrains (34 tokens: one batch, no padding) each head's effect is measured on. */
const EFFECT_POEMS = 16;
/** Held-out poems of the change in loss under the reader's head mask (the first of them: fast enough per click). */
const MASK_POEMS = 16;
/** Held-out poems per slice of the random model's loss on all of them (the page stays responsive between slices). */
const LOSS_SLICE = 25;
/** ms between two characters of a generated poem appearing. */
const REVEAL_MS = 70;

/** @typedef {import('../../attnlab.js').Transformer} Model */
/**
 * @typedef {Pick<import('./heads.js').HeadsJson, 'patterns' | 'entropy' | 'names'> & { loss: number }} MeasuredHeads
 */

/**
 * Fetch the model folder's files.
 * @param {URL} dir
 */
async function fetchFolder(dir) {
  /** @param {string} f */
  const get = async (f) => {
    const r = await fetch(new URL(f, dir));
    if (!r.ok) throw new Error(t('poem.httpError', { f, s: r.status }));
    return r;
  };
  const [config, bytes, tokenizer, heldOut, summary, heads] = await Promise.all([
    get('config.json').then((r) => r.json()),
    get('model.safetensors').then((r) => r.arrayBuffer()),
    get('tokenizer.json').then((r) => r.json()),
    get('held-out.jsonl').then((r) => r.text()),
    get('summary.json').then((r) => r.json()),
    get('heads.json').then((r) => r.json()),
  ]);
  return { config, bytes: new Uint8Array(bytes), tokenizer, heldOut, summary, heads };
}

/**
 * A panel: heading (with the tutorial's §), a note and a body.
 * @param {string} id
 * @param {string} key  poem.<key>.title / .note
 * @param {...any} body
 */
function panel(id, key, ...body) {
  return h(
    `section.poem-panel#${id}`,
    {},
    h('h3', {}, t(`poem.${key}.title`), h('span.sec', { text: t(`poem.${key}.sec`) })),
    h('p.note', { html: t(`poem.${key}.note`) }),
    ...body,
  );
}

/** The part: the model(s), the held-out poems and the panels. */
class PoemPart {
  /**
   * @param {HTMLElement} root
   * @param {import('../../attnlab.js').Attnlab} attn
   */
  constructor(root, attn) {
    this.root = root;
    this.attn = attn;
    /** @type {'trained' | 'random'} */
    this.kind = 'trained';
    /** @type {{ trained?: Model, random?: Model }} */
    this.models = {};
    /** @type {{ trained?: MeasuredHeads, random?: MeasuredHeads }} measured heads per model */
    this.heads = {};
    /** @type {{ tokens: import('./compute.js').GeneratedToken[], labels: string[], ids: Int32Array } | null} */
    this.poem = null;
    this.pick = { l: 0, h: 0, token: -1 };
    this.timer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
    /** @type {ReturnType<typeof sentenceStudy> | null} the tutorial's sentence through the trained model */
    this.study = null;
    this.build();
    this.scratch = new ScratchTrainer(root.querySelector('#poem-train'), attn);
  }

  build() {
    const status = h('p.poem-status#poem-status', { text: t('poem.loading') });
    const facts = h('p.poem-facts#poem-facts');
    this.root.append(
      status,
      facts,
      this.genPanel(),
      this.switchPanel(),
      this.gridPanel(),
      this.sentencePanel(),
      this.advanced(),
    );
    this.root.append(panel('poem-train', 'train'));
    this.arch = new ArchCard(panel, this.attn);
    this.root.append(this.arch.el);
    this.root.dataset.state = 'loading';
  }

  genPanel() {
    const len = h('select#poem-len', { 'aria-label': t('poem.lenAria') });
    for (const [v, k] of [
      ['0', 'poem.lenAuto'],
      ['5', 'poem.len5'],
      ['7', 'poem.len7'],
    ])
      len.append(h('option', { value: v, text: t(k) }));
    const temp = h('input#poem-temp', { type: 'range', min: 0, max: 1.5, step: 0.1, value: 0.8 });
    const tempV = h('output#poem-temp-v', { text: '0.8' });
    temp.addEventListener('input', () => (tempV.textContent = temp.value));
    const seed = h('input#poem-seed', { type: 'number', min: 0, max: 999999, value: 1, 'aria-label': t('poem.seed') });
    const form = h('input#poem-form', { type: 'checkbox', checked: true });
    const go = h('button#poem-go', { type: 'button', disabled: true, text: t('poem.write') });
    const again = h('button#poem-next', { type: 'button', disabled: true, text: t('poem.nextSeed') });
    go.addEventListener('click', () => this.generate());
    again.addEventListener('click', () => {
      seed.value = String(Number(seed.value) + 1);
      this.generate();
    });
    const measure = h('button#poem-measure', { type: 'button', disabled: true, text: t('poem.measure') });
    measure.addEventListener('click', () => this.measureForm());
    const controls = h(
      'div.controls',
      {},
      h('label', { for: 'poem-len' }, t('poem.len'), ' ', len),
      h('label', { for: 'poem-temp' }, t('poem.temp'), ' ', temp, tempV),
      h('label', { for: 'poem-seed' }, t('poem.seed'), ' ', seed),
      h('label', { for: 'poem-form' }, form, ' ', t('poem.keepForm')),
      go,
      again,
    );
    const out = h('div.poem-out#poem-out', { lang: 'zh-CN' });
    const rows = h('canvas#poem-rows');
    const rate = h('p.note#poem-rate');
    const gen = panel('poem-gen', 'gen', controls, out, h('p.note#poem-form-note'), h('p.note#poem-rows-note'));
    gen.append(h('div.poem-scroll', {}, rows), weightLegend(), h('div.controls', {}, measure), rate);
    this.els = { len, temp, seed, form, go, again, out, rows, measure, rate };
    return gen;
  }

  switchPanel() {
    const r = radios({
      name: 'poem-model',
      options: [
        ['trained', t('poem.model.trained')],
        ['random', t('poem.model.random')],
      ],
      value: 'trained',
      id: (v) => `poem-model-${v}`,
      onChange: (v) => this.setModel(v),
    });
    return panel('poem-switch', 'switch', h('div.controls', {}, ...r), h('p.poem-compare#poem-compare'));
  }

  gridPanel() {
    const body = h(
      'div.poem-head-detail',
      {},
      h('p#poem-head-caption'),
      h('div.poem-scroll', {}, h('canvas#poem-head-map')),
      h('div.poem-links#poem-head-links'),
    );
    return panel('poem-heads', 'grid', h('div.poem-grid#poem-grid'), weightLegend(), h('p.note#poem-names-note'), body);
  }

  /** The tutorial's sentence through the trained model (sentence.js), computed once the model is there. */
  sentencePanel() {
    return panel('poem-sentence', 'sentence', ...sentenceBody((p) => this.showSentence(p)));
  }

  /** @param {'comma' | 'plain'} preset */
  showSentence(preset) {
    this.study ??= sentenceStudy(this.models.trained, this.tok);
    const box = /** @type {HTMLElement} */ (this.root.querySelector('#poem-sentence'));
    const width = Math.max(280, this.root.clientWidth - 40);
    showSentence(box, this.study, preset, { names: this.headsJson.names, width });
  }

  /**
   * 进阶: switching heads off (§8.2), folded so that the chapter's main line stays short; the table's effects are
   * measured (seconds on the page's thread) when the fold is first opened, once the model is there.
   */
  advanced() {
    const summary = h('summary', { text: t('poem.advanced') });
    const fold = h('details.advanced', { id: 'poem-advanced' }, summary, this.maskPanel());
    fold.addEventListener('toggle', () => {
      if (fold.open) this.table();
    });
    return fold;
  }

  maskPanel() {
    const reset = h('button#poem-mask-reset', { type: 'button', text: t('poem.maskReset') });
    reset.addEventListener('click', () => {
      for (const c of this.root.querySelectorAll('#poem-mask input'))
        /** @type {HTMLInputElement} */ (c).checked = true;
      this.ablate();
    });
    return panel(
      'poem-ablate-panel',
      'mask',
      h('div.poem-mask#poem-mask'),
      h('div.controls', {}, reset),
      h('div.poem-ablate#poem-ablate', {}, t('poem.waiting')),
      h('div#poem-table-box', {}, t('poem.waiting')),
    );
  }

  /** Load the folder and the model, then fill the panels. */
  async load() {
    const dir = new URL(C.MODEL_DIR, import.meta.url);
    const f = await fetchFolder(dir);
    this.models.trained = this.attn.loadModel({ config: f.config, tensors: readSafetensors(f.bytes) });
    this.tok = charTokenizer(f.tokenizer);
    const all = C.parseHeldOut(f.heldOut);
    this.quatrains = all.filter((p) => p.split === 'test');
    /** every held-out poem: the one sample of the held-out loss on this page (heads.json's, the table's) */
    this.heldOut = this.quatrains.map((p) => poemFromText(this.tok, p.text, p.strains));
    this.inputs = this.heldOut.slice(0, LIVE_POEMS);
    this.summary = f.summary;
    this.headsJson = readHeadsJson(f.heads, this.models.trained.config);
    this.showFacts();
    for (const b of [this.els.go, this.els.again, this.els.measure]) b.disabled = false;
    this.buildMask();
    enableSentence(/** @type {HTMLElement} */ (this.root.querySelector('#poem-sentence')));
    this.showSentence('comma');
    this.root.dataset.state = 'ready';
    this.root.querySelector('#poem-status').textContent = '';
    this.generate();
    this.scratch.setPoems(
      this.quatrains.map((p) => p.text),
      new URL('train-subset.txt', dir),
    );
    this.arch.show(this.models.trained, this.inputs);
    await this.measureModel();
  }

  showFacts() {
    const c = /** @type {import('../../attnlab.js').LlamaConfig} */ (this.models.trained.config);
    const s = this.summary;
    this.root.querySelector('#poem-facts').innerHTML = t('poem.facts', {
      p: (s.parameters / 1e6).toFixed(2),
      L: c.numLayers,
      H: c.numHeads,
      E: c.embedDim,
      V: c.vocabSize,
      loss: fmt(this.headsJson.loss.test, 3),
      poems: this.heldOut.length,
      chars: C.targetCount(this.heldOut),
      bigram: fmt(s.bigram.test, 2),
      unigram: fmt(s.unigram.test, 2),
      n: s.f16.test.targets,
    });
  }

  /** @returns {Model} */
  current() {
    if (this.kind === 'random' && !this.models.random)
      this.models.random = this.attn.createModel({ ...this.models.trained.config, seed: 1 });
    return this.models[this.kind];
  }

  /** @param {'trained' | 'random'} kind */
  async setModel(kind) {
    this.kind = kind;
    this.root.dataset.model = kind;
    this.generate();
    await this.measureModel();
  }

  /** Form, length, temperature and seed from the controls. */
  settings() {
    const { len, temp, seed, form } = this.els;
    const s = Math.round(Number(seed.value));
    return {
      lineLen: Number(len.value),
      temperature: Number(temp.value),
      seed: Number.isSafeInteger(s) && s >= 0 ? s : 0,
      form: form.checked,
    };
  }

  /** A new poem: generated at once, then revealed one character at a time with its rows. */
  generate() {
    if (!this.tok) return;
    const o = this.settings();
    const r = C.generatePoem(this.current(), this.tok, o);
    const labels = ['[BOS]', ...r.tokens.map((g) => g.s)];
    this.poem = { tokens: r.tokens, labels, ids: Int32Array.of(this.tok.special.bos, ...r.tokens.map((g) => g.id)) };
    const out = this.els.out;
    Object.assign(out.dataset, {
      text: r.tokens.map((g) => g.s).join(''),
      forced: r.forced,
      formOk: r.form.ok ? '1' : '0',
      lineLen: r.form.lineLen,
      seed: o.seed,
      model: this.kind,
    });
    this.formNote(r, o);
    this.reveal(0);
    this.drawGrid();
    if (this.maskReady) this.ablate();
  }

  /**
   * @param {ReturnType<typeof C.generatePoem>} r
   * @param {{ form: boolean }} o
   */
  formNote(r, o) {
    const note = this.root.querySelector('#poem-form-note');
    const wanted = r.tokens.filter((g) => g.forced).map((g) => `${g.wanted}→${g.s}`);
    if (!o.form) note.textContent = t(r.form.ok ? 'poem.free.ok' : 'poem.free.broken');
    else if (!r.forced) note.textContent = t('poem.form.none');
    else note.textContent = t('poem.form.some', { n: r.forced, list: wanted.join('、') });
  }

  /** @param {number} k  characters shown so far */
  reveal(k) {
    if (this.timer) clearTimeout(this.timer);
    const { tokens } = this.poem;
    this.showPoem(k);
    if (k < tokens.length) this.timer = setTimeout(() => this.reveal(k + 1), REVEAL_MS);
    else this.els.out.dataset.done = '1';
  }

  /** @param {number} shown */
  showPoem(shown) {
    const { tokens } = this.poem;
    this.els.out.dataset.done = shown >= tokens.length ? '1' : '';
    this.els.out.replaceChildren(...poemLines(tokens, shown, (i) => this.showRows(i)));
    if (shown > 0) this.showRows(shown - 1);
  }

  /** @param {number} i  the generated token whose rows to show */
  showRows(i) {
    const g = this.poem.tokens[i];
    for (const c of this.els.out.querySelectorAll('.poem-char'))
      c.classList.toggle('picked', Number(/** @type {HTMLElement} */ (c).dataset.i) === i);
    const width = Math.max(280, this.root.clientWidth - 40);
    drawRows(this.els.rows, g.rows, this.poem.labels.slice(0, i + 1), width);
    this.els.rows.dataset.token = String(i);
    this.root.querySelector('#poem-rows-note').textContent = t('poem.rowsNote', { c: g.s, n: i + 1 });
  }

  /** The grid of the current model on the current poem (one forward with every layer's attention). */
  drawGrid() {
    if (!this.poem) return;
    const { ids, labels } = this.poem;
    const { attentions } = this.current().forward({ data: ids, shape: [1, ids.length] }, { outputAttentions: true });
    this.maps = attentions.map((a) => a.data);
    const names =
      this.heads[this.kind]?.names ??
      this.maps.map((m) =>
        Array.from({ length: m.length / ids.length ** 2 }, () => ({ pattern: '', score: 0, lift: 0 })),
      );
    const grid = /** @type {HTMLElement} */ (this.root.querySelector('#poem-grid'));
    headGrid(grid, { maps: this.maps, T: ids.length, labels, names, pick: this.pick }, (l, hh) => this.pickHead(l, hh));
    this.showHead(labels);
  }

  /** @param {number} l @param {number} hh */
  pickHead(l, hh) {
    this.pick = { ...this.pick, l, h: hh };
    this.drawGrid();
  }

  /** @param {string[]} labels */
  showHead(labels) {
    const { l, h: hh } = this.pick;
    const T = labels.length;
    const m = this.maps[l].subarray(hh * T * T, (hh + 1) * T * T);
    const name = this.heads[this.kind]?.names[l][hh]?.pattern;
    const caption = t('poem.headCaption', {
      lh: layerHead(l, hh),
      name: name ? t(`poem.pattern.${name}`) : t('poem.noRole'),
    });
    this.root.querySelector('#poem-head-caption').textContent = caption;
    const map = /** @type {HTMLCanvasElement} */ (this.root.querySelector('#poem-head-map'));
    map.dataset.layer = String(l);
    map.dataset.head = String(hh);
    const links = /** @type {HTMLElement} */ (this.root.querySelector('#poem-head-links'));
    // 18 px cells where the page is wide enough: the characters' labels upright at 12 px
    const width = Math.max(260, Math.min(this.root.clientWidth - 60, 18 * T + 40));
    drawHead({ map, links }, m, labels, caption, width, { bosMark: true });
  }
  /**
   * The heads of the current model: the trained model's from heads.json, the random model's measured here on
   * LIVE_POEMS held-out poems; each with its loss on MASK_POEMS. Then the comparison line and the table.
   */
  async measureModel() {
    const kind = this.kind;
    if (!this.heads[kind]) {
      const loss = kind === 'trained' ? this.headsJson.loss.test : await this.slicedLoss(this.current());
      const live = kind === 'random' && headScores(this.current(), this.inputs);
      const m = live ? { ...live, names: nameHeads(live.patterns) } : this.headsJson;
      this.heads[kind] = { patterns: m.patterns, entropy: m.entropy, names: m.names, loss };
    }
    this.showCompare();
    this.drawGrid();
    const names = this.heads[kind].names.flat();
    this.root.querySelector('#poem-names-note').textContent = t('poem.namesNote', {
      n: names.filter((n) => n.pattern).length,
      all: names.length,
      src:
        kind === 'trained'
          ? t('poem.src.json', { n: this.headsJson.poems.test })
          : t('poem.src.live', { n: LIVE_POEMS }),
      s: fmt(NAME_MIN_SCORE, 1),
      r: NAME_MIN_LIFT,
    });
    const fold = /** @type {HTMLDetailsElement} */ (this.root.querySelector('#poem-advanced'));
    if (kind === 'trained' && fold?.open) this.table();
  }

  /**
   * The loss on every held-out poem, LOSS_SLICE poems at a time (heads.js's meanLoss, weighted by characters).
   * @param {Model} model
   */
  async slicedLoss(model) {
    let sum = 0;
    for (let i = 0; i < this.heldOut.length; i += LOSS_SLICE) {
      const part = this.heldOut.slice(i, i + LOSS_SLICE);
      sum += meanLoss(model, part) * C.targetCount(part);
      await new Promise((res) => setTimeout(res, 0));
    }
    return sum / C.targetCount(this.heldOut);
  }

  showCompare() {
    const box = /** @type {HTMLElement} */ (this.root.querySelector('#poem-compare'));
    const V = this.models.trained.config.vocabSize;
    const parts = /** @type {const} */ (['trained', 'random'])
      .filter((k) => this.heads[k])
      .map((k) => {
        const { loss, entropy } = this.heads[k];
        const ent = entropy.mean.flat().reduce((a, b) => a + b, 0) / entropy.mean.flat().length;
        box.dataset[`loss${k === 'trained' ? 'Trained' : 'Random'}`] = String(loss);
        box.dataset[`entropy${k === 'trained' ? 'Trained' : 'Random'}`] = String(ent);
        return t(`poem.compare.${k}`, { loss: fmt(loss, 2), e: fmt(ent, 2), u: fmt(entropy.uniform, 2) });
      });
    box.dataset.lnV = String(Math.log(V));
    const sample = t('poem.compare.sample', { n: this.heldOut.length, c: C.targetCount(this.heldOut) });
    box.textContent = [sample, ...parts, t('poem.compare.lnV', { v: fmt(Math.log(V), 2), V })].join(' ');
  }

  /**
   * The table "sharpness vs effect", built once: heads.json's entropy and names beside each head's effect measured
   * here three ways on the same EFFECT_POEMS seven-character quatrains (zeroed, replaced by its mean output, the head
   * mask's gradient: model.headImportance), shown with the guess's answer.
   */
  async table() {
    const box = this.root.querySelector('#poem-table-box');
    if (this.tableStarted || !this.headsJson) return;
    this.tableStarted = true;
    box.textContent = t('poem.tableMeasuring', { n: EFFECT_POEMS });
    await new Promise((r) => setTimeout(r, 0)); // the message shows before the forwards
    const seqs = this.heldOut.filter((p) => p.ids.length === 34).slice(0, EFFECT_POEMS);
    const eff = await headImportanceAll(this.models.trained, nextTokenBatch(seqs.map((p) => p.ids)));
    const H = this.models.trained.config.numHeads;
    const { entropy, names } = this.headsJson;
    const grid = (/** @type {'zero' | 'mean' | 'gradient'} */ k) =>
      entropy.mean.map((_, l) => eff.rows.slice(l * H, (l + 1) * H).map((r) => r[k]));
    const other = { mean: grid('mean'), gradient: grid('gradient') };
    const table = C.sharpnessTable(entropy.mean, entropy.uniform, grid('zero'), names, other);
    const vars = { rho: fmt(table.rho, 2), am: fmt(table.agree.mean, 2), ag: fmt(table.agree.gradient, 2) };
    const src = t('poem.src.effects', { n: seqs.length, json: this.headsJson.poems.test });
    const shown = h(
      'div',
      { hidden: true },
      h('div.scroll-x', {}, sharpnessTable(table, entropy.uniform)),
      h('p.note#poem-table-note', { text: t('poem.tableNote', { ...vars, base: fmt(eff.loss, 3), src }) }),
    );
    const answer = { entropy, ablation: { delta: grid('zero') } };
    box.replaceChildren(
      this.ablationGuess(answer, table, () => (shown.hidden = false)),
      shown,
    );
  }

  /**
   * "Guess first" (§8.2): which head, switched off, raises the loss most? Answered from the table's own numbers
   * (ablationAnswer), with what the same head costs replaced by its mean, and the costliest head by that measure.
   * @param {Parameters<typeof ablationAnswer>[0]} heads
   * @param {ReturnType<typeof C.sharpnessTable>} table
   * @param {() => void} onReveal
   */
  ablationGuess(heads, table, onReveal) {
    const a = ablationAnswer(heads);
    const at = (/** @type {{ layer: number, head: number }} */ r) => layerHead(r.layer, r.head);
    const row = table.rows.find((r) => r.layer === a.top.layer && r.head === a.top.head);
    const byMean = table.rows.reduce((x, y) => (y.mean > x.mean ? y : x));
    return guessCard('poem', t('poem.guessQ', { n: a.heads }), () => {
      onReveal();
      const vars = { top: at(a.top), d: fmt(a.top.delta, 3), n: a.heads, e: fmt(a.top.entropy, 2), rank: a.rank };
      const contrast = { sharp: at(a.sharpest), se: fmt(a.sharpest.entropy, 2), sd: fmt(a.sharpest.delta, 3) };
      const mean = { tm: fmt(row.mean, 3), mtop: at(byMean), mm: fmt(byMean.mean, 3) };
      const html = t('poem.guessAnswer', { ...vars, ...contrast, ...mean, u: fmt(a.uniform, 2) });
      return { html, value: `${a.top.layer},${a.top.head}` };
    });
  }

  /** Unaided: how many of 100 poems keep the form, sampled in slices so that the page stays responsive. */
  async measureForm() {
    const { measure, rate } = this.els;
    measure.disabled = true;
    const o = this.settings();
    let ok = 0;
    const N = 100;
    for (let k = 0; k < N; k++) {
      const r = C.generatePoem(this.current(), this.tok, { ...o, seed: o.seed + k, lineLen: 0, form: false });
      ok += r.form.ok ? 1 : 0;
      if (k % 5 === 4) {
        rate.textContent = t('poem.measuring', { k: k + 1, n: N });
        await new Promise((res) => setTimeout(res, 0));
      }
    }
    Object.assign(rate.dataset, { ok, total: N, temperature: o.temperature });
    rate.textContent = t('poem.rate', { ok, n: N, temp: o.temperature, s: o.seed, e: o.seed + N - 1 });
    measure.disabled = false;
  }

  /** The checkboxes of the head mask: one per layer and head, all on. */
  buildMask() {
    const { numLayers: L, numHeads: H } = this.models.trained.config;
    const box = this.root.querySelector('#poem-mask');
    for (let l = 0; l < L; l++) {
      const row = h('div.poem-mask-row', {}, h('span', { text: t('poem.layer', { l: l + 1 }) }));
      for (let hh = 0; hh < H; hh++) {
        const id = `poem-mask-${l}-${hh}`;
        const input = h('input', { type: 'checkbox', id, checked: true, 'data-layer': l, 'data-head': hh });
        input.addEventListener('change', () => this.ablate());
        row.append(h('label', { for: id }, input, t('poem.headN', { h: hh + 1 })));
      }
      box.append(row);
    }
    this.maskReady = true;
  }

  /** The loss on held-out poems and the poem (same seed, same draws) with the heads switched off. */
  ablate() {
    const { numLayers: L, numHeads: H } = this.models.trained.config;
    const mask = new Float32Array(L * H).fill(1);
    const off = [];
    for (const c of this.root.querySelectorAll('#poem-mask input')) {
      const e = /** @type {HTMLInputElement} */ (c);
      const k = Number(e.dataset.layer) * H + Number(e.dataset.head);
      if (!e.checked) ((mask[k] = 0), off.push(layerHead(Number(e.dataset.layer), Number(e.dataset.head))));
    }
    const model = this.current();
    const poems = this.inputs.slice(0, MASK_POEMS);
    const intact = this.heads[this.kind]?.loss ?? meanLoss(model, poems);
    const masked = off.length ? meanLoss(model, poems, mask) : intact;
    const o = { ...this.settings(), lineLen: this.poem?.tokens.length ? this.settingsLen() : 5 };
    const a = C.samplePoemMasked(model, this.tok, { ...o, headMask: null }).join('');
    const b = off.length ? C.samplePoemMasked(model, this.tok, { ...o, headMask: mask }).join('') : a;
    const box = /** @type {HTMLElement} */ (this.root.querySelector('#poem-ablate'));
    Object.assign(box.dataset, { intact, masked, off: off.length, poemIntact: a, poemMasked: b });
    const sample = { n: MASK_POEMS, c: C.targetCount(poems) };
    const loss = off.length
      ? t('poem.maskLoss', { ...sample, d: fmt(masked - intact, 3), off: off.join('、') })
      : t('poem.maskNone', sample);
    box.replaceChildren(
      h('p', { text: loss }),
      h('p', {}, h('span.poem-label', { text: t('poem.maskIntact') }), h('span.poem-text', { lang: 'zh-CN', text: a })),
      h('p', {}, h('span.poem-label', { text: t('poem.maskMasked') }), h('span.poem-text', { lang: 'zh-CN', text: b })),
    );
  }

  /** The line length of the generated poem (5 or 7), for the masked samples. */
  settingsLen() {
    const n = Number(this.els.out.dataset.lineLen);
    return n === 5 || n === 7 ? n : 5;
  }
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const part = new PoemPart(root, attn);
  part.load().catch((e) => {
    console.error(e);
    root.dataset.state = 'error';
    root
      .querySelector('#poem-status')
      .replaceChildren(h('div.error-box', { role: 'alert', text: t('poem.loadFailed', { err: errText(e) }) }));
  });
}
