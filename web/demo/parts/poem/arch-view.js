// @ts-check
// The poem chapter's §11 card, drawn: the block diagram of the poem model (stages, shapes, parameters, the shares),
// one plain line each for RMSNorm, RoPE, SwiGLU and the residual, and the "只看本句" experiment run on demand (the
// numbers: arch.js). Test hooks: #poem-arch[data-total], #poem-window[data-only][data-full][data-targets],
// #poem-window-table rows [data-window][data-loss].

import { h } from '../../widgets/dom.js';
import { fmt, errText } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { lineOnlyLoss, llamaStages, parameterShares, windowLosses } from './arch.js';

/** A five-character quatrain: [BOS], 20 characters, 4 punctuation marks, [EOS]. */
const T_QUATRAIN = 26;
/** Held-out poems of the window experiment. */
const WINDOW_POEMS = 16;

/** @typedef {import('../../attnlab.js').Transformer} Model */

const pct = (/** @type {number} */ x) => `${(100 * x).toFixed(x < 0.01 ? 2 : 1)} %`;
const shape = (/** @type {number[]} */ s) => `(${s.join(', ')})`;

export class ArchCard {
  /**
   * @param {(id: string, key: string, ...body: any[]) => HTMLElement} panel  the chapter's panel maker
   * @param {import('../../attnlab.js').Attnlab} attn
   */
  constructor(panel, attn) {
    this.attn = attn;
    this.run = h('button#poem-window-run', { type: 'button', disabled: true, text: t('poem.window.run', { n: 0 }) });
    this.run.addEventListener('click', () => this.measure());
    this.window = h('div#poem-window');
    this.el = panel(
      'poem-arch',
      'arch',
      h('div#poem-arch-diagram', {}, t('poem.waiting')),
      h('h4', { text: t('poem.window.head') }),
      h('p.note', { text: t('poem.window.note') }),
      h('div.controls', {}, this.run),
      this.window,
    );
    const note = this.el.querySelector('p.note');
    if (note) note.innerHTML = t('poem.arch.note', { T: T_QUATRAIN });
  }

  /**
   * @param {Model} model  the trained poem model
   * @param {{ ids: Int32Array, chars: string[] }[]} poems  held-out poems, [BOS] + text
   */
  show(model, poems) {
    this.model = model;
    this.poems = poems.slice(0, WINDOW_POEMS);
    const c = /** @type {import('../../attnlab.js').LlamaConfig} */ (model.config);
    const { total, shares } = parameterShares(c);
    this.el.dataset.total = String(total);
    const box = /** @type {HTMLElement} */ (this.el.querySelector('#poem-arch-diagram'));
    const sharesText = t('poem.arch.shares', {
      total: total.toLocaleString('en-US'),
      embedding: pct(shares.embedding),
      attention: pct(shares.attention),
      mlp: pct(shares.mlp),
      norm: pct(shares.norm),
    });
    const notes = ['rmsnorm', 'rope', 'swiglu', 'residual'].map((k) => h('li', { html: t(`poem.arch.${k}`) }));
    box.replaceChildren(this.diagram(c), h('p', { text: sharesText }), h('ul.poem-arch-notes', {}, ...notes));
    this.run.textContent = t('poem.window.run', { n: this.poems.length });
    this.run.disabled = false;
  }

  /** @param {import('../../attnlab.js').LlamaConfig} c */
  diagram(c) {
    const stages = llamaStages(c, T_QUATRAIN);
    const head = h('tr', {}, ...['stage', 'shape', 'params'].map((k) => h('th', { text: t(`poem.arch.col.${k}`) })));
    /** @type {HTMLElement[]} */
    const rows = [];
    stages.forEach((s, i) => {
      if (s.block && !stages[i - 1]?.block)
        rows.push(h('tr.poem-arch-block', {}, h('td', { colspan: 3, text: t('poem.arch.block', { L: c.numLayers }) })));
      const params = s.key === 'head' && c.tieEmbeddings ? t('poem.arch.tied') : s.params.toLocaleString('en-US');
      const name = t(`poem.arch.stage.${s.key}`, { H: c.numHeads, KV: c.numKVHeads ?? c.numHeads });
      rows.push(
        h(
          `tr${s.block ? '.in-block' : ''}`,
          { 'data-stage': s.key },
          h('td', { text: name }),
          h('td', { text: shape(s.shape) }),
          h('td', { text: params }),
        ),
      );
    });
    return h('table.poem-table.poem-arch-table', {}, h('thead', {}, head), h('tbody', {}, ...rows));
  }

  /** The experiment: this line only, then each window, on the held-out poems. */
  measure() {
    if (!this.model || !this.poems) return;
    this.run.disabled = true;
    this.window.replaceChildren(h('p', { text: t('poem.window.running') }));
    // let the page paint "Computing…" before the forwards
    setTimeout(() => {
      try {
        this.showResult(lineOnlyLoss(this.model, this.poems), windowLosses(this.attn, this.model, this.poems));
      } catch (e) {
        this.window.replaceChildren(h('div.error-box', { role: 'alert', text: errText(e) }));
      } finally {
        this.run.disabled = false;
      }
    }, 30);
  }

  /**
   * @param {{ full: number, lineOnly: number, targets: number }} line
   * @param {{ window: number | null, loss: number, delta: number }[]} windows
   */
  showResult(line, windows) {
    Object.assign(this.window.dataset, { only: line.lineOnly, full: line.full, targets: line.targets });
    const lineText = t('poem.window.lineOnly', {
      only: fmt(line.lineOnly, 3),
      full: fmt(line.full, 3),
      n: line.targets,
      d: fmt(line.lineOnly - line.full, 3),
    });
    const head = h('tr', {}, ...['W', 'loss', 'delta'].map((k) => h('th', { text: t(`poem.window.col.${k}`) })));
    const rows = windows.map((r) =>
      h(
        'tr',
        { 'data-window': r.window ?? 'full', 'data-loss': r.loss },
        h('td', { text: r.window === null ? t('poem.window.full') : String(r.window) }),
        h('td', { text: fmt(r.loss, 3) }),
        h('td', { text: r.window === null ? '' : `${r.delta >= 0 ? '+' : ''}${fmt(r.delta, 3)}` }),
      ),
    );
    this.window.replaceChildren(
      h('p', { html: lineText }),
      h('table.poem-table#poem-window-table', {}, h('thead', {}, head), h('tbody', {}, ...rows)),
      h('p.note', { text: t('poem.window.after') }),
    );
  }
}
