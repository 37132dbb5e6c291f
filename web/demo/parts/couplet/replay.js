// @ts-check
// The couplet chapter's training replay (§10.1): a step slider over the model folder's snapshots.json
// (scripts/couplet/snapshots.mjs: per snapshot, the held-out loss and every head's aligned weight, parallel and
// control, and the probe poems' cross-attention maps), the loss curve of losses.csv with the step marked, and the
// probe poem's four couplets at the aligning head (heads.json) as the weights were at that step: uniform → diagonal.

import { h } from '../../widgets/dom.js';
import { labelled } from '../../widgets/controls.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { parseLossesCsv } from '../poem/shipped-run.js';
import { chars, parseCoupletSnapshots } from './compute.js';
import { drawCouplets, drawReplayCurve, layerHead } from './draw.js';

export class ReplayPanel {
  /** @param {(id: string, key: string, ...body: any[]) => HTMLElement} panel */
  constructor(panel) {
    this.slider = h('input#couplet-step', { type: 'range', min: 0, max: 0, step: 1, value: 0, disabled: true });
    this.stepOut = h('output#couplet-step-v', { for: 'couplet-step' });
    this.probe = h('select#couplet-probe', { 'aria-label': t('couplet.replay.probe') });
    this.numbers = h('p.note#couplet-replay-numbers', { 'aria-live': 'polite' });
    this.curve = h('canvas#couplet-curve');
    this.maps = h('div.couplet-pairs#couplet-replay-maps');
    for (const el of [this.slider, this.probe]) el.addEventListener('input', () => this.show());
    this.el = panel(
      'couplet-replay-panel',
      'replay',
      h(
        'div.controls',
        {},
        labelled('couplet-step', t('couplet.replay.step'), this.slider, this.stepOut),
        labelled('couplet-probe', t('couplet.replay.probe'), this.probe),
      ),
      this.numbers,
      h('div.poem-scroll', {}, this.curve),
      this.maps,
    );
  }

  /**
   * @param {{ snapshots: any, losses: string }} f  the folder's files
   * @param {{ decoderLayers: number, numHeads: number }} config  the loaded model's (normalised) config
   * @param {import('./view.js').HeadsJson} heads
   * @param {import('../../shared/char-tokenizer.js').CharTokenizer} tok
   */
  load(f, config, heads, tok) {
    this.snaps = parseCoupletSnapshots(f.snapshots, { layers: config.decoderLayers, heads: config.numHeads });
    this.run = parseLossesCsv(f.losses);
    this.heads = heads;
    this.tok = tok;
    this.slider.max = String(this.snaps.steps.length - 1);
    this.slider.value = '0';
    this.slider.disabled = false;
    this.probe.replaceChildren(
      ...this.snaps.probes.map((p, i) => h('option', { value: i, text: `${p[0].upper}，${p[0].lower}……` })),
    );
    this.show();
  }

  show() {
    const s = this.snaps.steps[Number(this.slider.value)];
    const { layer, head } = this.heads.aligning;
    const i = Number(this.probe.value);
    this.stepOut.textContent = t('couplet.replay.stepN', { s: s.step });
    this.el.dataset.step = String(s.step);
    this.numbers.textContent = t('couplet.replay.numbers', {
      s: s.step,
      lossPar: fmt(s.loss.parallel, 3),
      lossCtl: fmt(s.loss.control, 3),
      lh: layerHead(layer, head),
      par: fmt(s.aligned.parallel[layer][head], 3),
      ctl: fmt(s.aligned.control[layer][head], 3),
      n: this.snaps.pairs,
    });
    const couplets = this.snaps.probes[i].map((c, k) => {
      const n = chars(c.upper).length + 1;
      return { ...c, maps: { maps: s.maps[i][k], T: n, S: n } };
    });
    const label = (/** @type {string} */ c) => (this.tok.ids.has(c) ? c : '[UNK]');
    drawCouplets(this.maps, couplets, layer, head, label);
    const width = Math.min(560, Math.max(260, (this.el.clientWidth || 560) - 20));
    drawReplayCurve(this.curve, this.run, s.step, width);
  }
}
