// @ts-check
// The poem chapter's "train from scratch" (§10.1): a small Llama (compute.js SMALL) trains in a module Web Worker
// (worker.js) on the training subset (train-subset.txt of the model folder: about 5,000 quatrains of the poem
// model's training split, fetched when the panel first needs them) or on the reader's text; the page plots the loss
// and the loss on PROBES held-out poems (never trained on; the axis shows all of it), the best head's score on each
// attention pattern there, each head's attention entropy against the uniform level, the live maps of a probe
// sequence and kept snapshots of them. Pause, resume, reset; a learning-rate choice. Test hooks:
// #poem-train[data-state][data-step][data-loss][data-probe-loss][data-patterns][data-entropy][data-entropy-initial]
// [data-lr][data-train-poems].

import { h } from '../../widgets/dom.js';
import { radios } from '../../widgets/controls.js';
import { fmt, errText } from '../../shared/format.js';
import { t } from '../../i18n.js';
import * as C from './compute.js';
import { drawCurves, drawProbeMaps } from './draw.js';
import { PROBES, probeTexts } from './shipped-run.js';
import { shippedFigure, showShippedRun } from './shipped-view.js';

/** The learning rates offered (AdamW); the first run uses LR. */
const LRS = [1e-3, 3e-3, 1e-2];
const LR = 3e-3;
const BATCH = 16;
/** Snapshots of the maps are kept at these steps (and the latest). */
const SNAP_STEPS = [0, 10, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400];

/**
 * @typedef {object} History  one run's curves and kept maps
 * @property {number[]} losses
 * @property {[number, number][]} probe
 * @property {[number, Record<string, { best: number, baseline: number }>][]} patterns
 * @property {[number, number[][]][]} entropy
 * @property {number} uniform
 * @property {number} lnV
 * @property {{ step: number, maps: Float32Array[], live: boolean }[]} snaps
 * @property {string[]} [labels]
 * @property {any} [config]
 */

export class ScratchTrainer {
  /**
   * @param {HTMLElement} box  the panel
   * @param {import('../../attnlab.js').Attnlab} attn
   */
  constructor(box, attn) {
    this.box = box;
    /** @type {'poems' | 'text'} */
    this.source = 'poems';
    /** @type {string[]} held-out poems: the probes */
    this.probes = [];
    /** @type {string[] | null} the training subset, once fetched */
    this.subset = null;
    /** @type {URL | null} */
    this.subsetUrl = null;
    this.gen = 0;
    this.seed = 1;
    this.lr = LR;
    this.build();
    this.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = (ev) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => {
      ev.preventDefault();
      this.fail(ev.message || 'worker error');
    };
    this.worker.postMessage({ type: 'init', variant: attn.variant });
    this.setState('loading');
  }

  controls() {
    const src = radios({
      name: 'poem-src',
      options: [
        ['poems', t('poem.src.poems')],
        ['text', t('poem.src.text')],
      ],
      value: 'poems',
      id: (v) => `poem-src-${v}`,
      onChange: (v) => ((this.source = v), this.reset()),
    });
    const text = h('textarea#poem-text', {
      rows: 4,
      'aria-label': t('poem.textAria'),
      placeholder: t('poem.textPlaceholder'),
    });
    const start = h('button#poem-train-start', { type: 'button', text: t('poem.train.start') });
    const pause = h('button#poem-train-pause', { type: 'button', text: t('poem.train.pause') });
    const reset = h('button#poem-train-reset', { type: 'button', text: t('poem.train.reset') });
    start.addEventListener('click', () => this.run());
    pause.addEventListener('click', () => this.worker.postMessage({ type: 'pause' }));
    reset.addEventListener('click', () => ((this.seed += 1), this.reset()));
    text.addEventListener('change', () => this.source === 'text' && this.reset());
    const lr = h('select#poem-lr', { 'aria-label': t('poem.lrAria') });
    for (const v of LRS) lr.append(h('option', { value: v, text: String(v), selected: v === LR }));
    lr.addEventListener('change', () => ((this.lr = Number(lr.value)), this.reset()));
    const snap = h('input#poem-snap', { type: 'range', min: 0, max: 0, value: 0, 'aria-label': t('poem.snapAria') });
    snap.addEventListener('input', () => this.showSnap(Number(snap.value)));
    const stats = h('p.poem-stats#poem-train-stats');
    this.ui = { src, lr, start, pause, reset, text, snap, stats, msg: h('div#poem-train-msg') };
  }

  build() {
    this.controls();
    const { src, lr, text, start, pause, reset, snap } = this.ui;
    this.charts = {
      loss: h('canvas#poem-loss-chart'),
      patterns: h('canvas#poem-pattern-chart'),
      entropy: h('canvas#poem-entropy-chart'),
    };
    this.shipped = shippedFigure();
    this.box.append(
      this.shipped,
      h('div.controls', {}, ...src),
      text,
      h('div.controls', {}, h('label', { for: 'poem-lr' }, t('poem.lr'), ' ', lr), start, pause, reset),
      h('p.note', { text: t('poem.lrNote') }),
      this.ui.msg,
      this.ui.stats,
      h(
        'div.poem-charts',
        {},
        h('figure', {}, h('figcaption', { text: t('poem.lossCaption', { n: PROBES }) }), this.charts.loss),
        h(
          'figure',
          {},
          h('figcaption', { text: t('poem.patternCaption') }),
          this.charts.patterns,
          h('div.poem-legend#poem-pattern-legend'),
        ),
        h('figure', {}, h('figcaption', { text: t('poem.entropyCaption') }), this.charts.entropy),
      ),
      h('div.controls', {}, h('label', { for: 'poem-snap' }, t('poem.snap'), ' ', snap), h('span#poem-snap-step')),
      h('div.poem-train-maps#poem-train-maps'),
    );
  }

  /**
   * @param {string[]} heldOut  the held-out quatrains: the last PROBES are the probes, the last one drawn
   * @param {URL} subsetUrl  the training subset, one poem per line
   */
  setPoems(heldOut, subsetUrl) {
    this.probes = probeTexts(heldOut);
    this.subsetUrl = subsetUrl;
    if (this.ready) this.reset();
    showShippedRun(this.shipped, subsetUrl, Math.min(520, this.box.clientWidth || 520));
  }

  /** The training subset, fetched once. */
  async loadSubset() {
    if (this.subset) return this.subset;
    const r = await fetch(/** @type {URL} */ (this.subsetUrl));
    if (!r.ok) throw new Error(t('poem.httpError', { f: 'train-subset.txt', s: r.status }));
    this.subset = (await r.text()).split('\n').filter(Boolean);
    this.box.dataset.trainPoems = String(this.subset.length);
    return this.subset;
  }

  /** @param {string} s */
  setState(s) {
    this.state = s;
    this.box.dataset.state = s;
    this.ui.start.disabled = !['ready', 'paused'].includes(s);
    this.ui.pause.disabled = s !== 'running';
    this.ui.reset.disabled = s === 'loading';
    this.ui.start.textContent = t(s === 'paused' ? 'poem.train.resume' : 'poem.train.start');
  }

  /** A new model for the current source: the worker answers with a tick at step 0. */
  async reset() {
    if (!this.ready || !this.probes.length) return;
    const base = { type: 'reset', gen: ++this.gen, seed: this.seed, lr: this.lr, batch: BATCH };
    /** @type {History} */
    this.hist = { losses: [], probe: [], patterns: [], entropy: [], uniform: 1, lnV: 1, snaps: [] };
    this.ui.msg.replaceChildren();
    if (this.source === 'text') {
      const text = this.ui.text.value;
      const n = [...text].length;
      if (n < C.MIN_TEXT) return this.problem(t('poem.textShort', { n, min: C.MIN_TEXT }));
      this.worker.postMessage({ ...base, source: 'text', text });
      this.setState('loading');
    } else {
      this.setState('loading');
      try {
        const poems = await this.loadSubset();
        if (base.gen === this.gen) this.worker.postMessage({ ...base, source: 'poems', poems, probes: this.probes });
      } catch (e) {
        this.fail(errText(e));
      }
    }
  }

  /** @param {string} text */
  problem(text) {
    this.ui.msg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    this.setState('error');
  }

  run() {
    if (!['ready', 'paused'].includes(this.state)) return;
    this.setState('running');
    this.worker.postMessage({ type: 'run' });
  }

  /** @param {Record<string, any>} m */
  onMessage(m) {
    if (m.type === 'ready') {
      this.ready = true;
      this.box.dataset.variant = m.variant;
      this.reset();
    } else if (m.gen !== this.gen) return;
    else if (m.type === 'tick') this.onTick(m);
    else if (m.type === 'stopped') this.setState('paused');
    else if (m.type === 'error') this.fail(m.message);
  }

  /** @param {string} err */
  fail(err) {
    this.problem(t('poem.train.failed', { err }));
  }

  /** @param {Record<string, any>} m */
  onTick(m) {
    const hist = this.hist;
    if (m.step === 0) {
      Object.assign(hist, { lnV: Math.log(m.vocab), labels: m.probeTokens, uniform: m.uniform, config: m.config });
      this.box.dataset.entropyInitial = JSON.stringify(m.entropy);
      this.box.dataset.vocab = String(m.vocab);
      this.box.dataset.lr = String(this.lr);
      if (this.state === 'loading') this.setState('ready');
    }
    hist.losses.push(...m.losses);
    hist.probe.push([m.step, m.probeLoss]);
    if (m.patterns) hist.patterns.push([m.step, m.patterns]);
    hist.entropy.push([m.step, m.entropy]);
    // kept: one snapshot per step of SNAP_STEPS passed; the last entry is the live one, replaced every tick
    if (hist.snaps.at(-1)?.live) hist.snaps.pop();
    const passed = SNAP_STEPS.filter((s) => s <= m.step).length;
    hist.snaps.push({ step: m.step, maps: m.maps, live: passed <= hist.snaps.length });
    this.showStats(m);
    this.ui.snap.max = String(hist.snaps.length - 1);
    this.ui.snap.value = this.ui.snap.max;
    this.showSnap(hist.snaps.length - 1);
    drawCurves(this.charts, hist, Math.max(260, Math.min(520, (this.box.clientWidth || 600) / 2 - 20)));
  }

  /** @param {Record<string, any>} m */
  showStats(m) {
    const loss = this.hist.losses.at(-1);
    const sps = m.runMs ? (m.step * 1000) / m.runMs : 0;
    const ent = m.entropy.flat();
    const c = this.hist.config;
    this.ui.stats.textContent = t('poem.train.stats', {
      s: m.step,
      loss: loss === undefined ? '—' : fmt(loss, 3),
      probe: fmt(m.probeLoss, 3),
      sps: fmt(sps, 1),
      sec: (m.runMs / 1000).toFixed(1),
      e: fmt(Math.min(...ent), 2),
      u: fmt(m.uniform, 2),
      cfg: t('poem.train.cfg', { E: c.embedDim, L: c.numLayers, H: c.numHeads, V: c.vocabSize }),
    });
    Object.assign(this.box.dataset, { step: m.step, entropy: JSON.stringify(m.entropy), uniform: m.uniform });
    Object.assign(this.box.dataset, { probeLoss: m.probeLoss, patterns: JSON.stringify(m.patterns ?? {}) });
    if (loss !== undefined) Object.assign(this.box.dataset, { loss, lossInitial: this.hist.losses[0] });
  }

  /** @param {number} k  a kept snapshot: every head's map of the probe */
  showSnap(k) {
    const snap = this.hist.snaps[k];
    if (!snap) return;
    drawProbeMaps(this.box.querySelector('#poem-train-maps'), snap.maps, this.hist.labels);
    this.box.querySelector('#poem-snap-step').textContent = t('poem.snapStep', { s: snap.step });
  }
}
