// @ts-check
// Part "self vs cross, batches" (§4.6, §6.1): the weights table of self- or cross-attention (a radio switch) and
// the batched call's tables with its check against one call per item (compute.js).

import { h } from '../../widgets/dom.js';
import { matrixTable } from '../../widgets/matrix-table.js';
import { seqColor } from '../../widgets/colours.js';
import { radios, group } from '../../widgets/controls.js';
import { fmt } from '../../shared/format.js';
import { createStore } from '../../store.js';
import { t, LANG } from '../../i18n.js';
import { D, SEQS, BATCH, attend, batchCheck } from './compute.js';

/**
 * @param {Float32Array} w
 * @param {number} rows
 * @param {number} cols
 * @param {string[]} rl
 * @param {string[]} cl
 * @param {string} id
 */
const weightsTable = (w, rows, cols, rl, cl, id) =>
  matrixTable(w, { rows, cols, rowLabels: rl, colLabels: cl, id, color: (v) => seqColor(v), digits: 2 });

/**
 * The self- or cross-attention weights with their shapes and note.
 * @param {HTMLElement} root
 * @param {HTMLElement} out
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {'self' | 'cross'} mode
 */
function drawMode(root, out, attn, mode) {
  const r = attend(attn, mode, SEQS[LANG]);
  out.replaceChildren(
    h('p.mono.small', {
      id: 'cross-shapes',
      text: `Q (${r.Lq}, ${D}) · K (${r.Lk}, ${D})ᵀ → ${t('cross.weights')} (${r.Lq}, ${r.Lk}) · V (${r.Lk}, ${D}) → ${t('cross.output')} (${r.Lq}, ${D})`,
    }),
    h('div.table-scroll', {}, weightsTable(r.weights.data, r.Lq, r.Lk, r.qTok, r.kTok, 'cross-weights')),
    h('p.note', { text: t(mode === 'self' ? 'cross.selfNote' : 'cross.crossNote') }),
  );
  root.dataset.mode = mode;
  root.dataset.weightsShape = JSON.stringify(r.weights.shape);
}

/**
 * The batch in one call: each item's weights (items numbered from 1 for the reader) and the check.
 * @param {HTMLElement} batch
 * @param {import('../../attnlab.js').Attnlab} attn
 */
function drawBatch(batch, attn) {
  const { B, L, dk } = BATCH;
  const { items, diff } = batchCheck(attn);
  const tables = items.map((wb, b) => {
    const labels = Array.from({ length: L }, (_, i) => `${b}:${i}`);
    return h(
      'div',
      {},
      h('div.small.strong', { text: t('cross.item', { b: b + 1 }) }),
      weightsTable(wb, L, L, labels, labels, `cross-batch-${b}`),
    );
  });
  batch.dataset.diff = String(diff);
  batch.replaceChildren(
    h('p.mono.small', {
      text: `x (${B}, ${L}, ${dk}) → ${t('cross.scores')}, ${t('cross.weights')} (${B}, ${L}, ${L}) → ${t('cross.output')} (${B}, ${L}, ${dk})`,
    }),
    h('div.inputs-row', {}, tables),
    h('p.note', { id: 'cross-batch-check', text: t('cross.batchNote', { d: diff === 0 ? '0' : fmt(diff, 2) }) }),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore({ mode: /** @type {'self' | 'cross'} */ ('cross') });
  const modeRadios = radios({
    name: 'cross-mode',
    options: [
      ['self', t('cross.self')],
      ['cross', t('cross.cross')],
    ],
    value: store.get().mode,
    id: (v) => `cross-mode-${v}`,
    onChange: (mode) => store.set({ mode }),
  });
  const out = h('div', { id: 'cross-out' });
  const batch = h('div', { id: 'cross-batch' });
  root.append(
    h('div.controls', {}, group(t('cross.mode'), h('div.radio-row', {}, modeRadios))),
    out,
    h('h3', { text: t('cross.batchTitle') }),
    batch,
  );
  store.subscribe(({ mode }) => drawMode(root, out, attn, mode));
  drawMode(root, out, attn, store.get().mode);
  drawBatch(batch, attn);
}
