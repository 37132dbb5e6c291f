// @ts-check
// Part "From X to heads and back" (§6.2–6.4, §7.2–7.3): every tensor of compute.js's chain as a table with its
// shape, columns coloured by head, the check against mha.forward, and the wrong-transpose toggle.

import { headColour } from '../../attnlab-viz.js';
import { h } from '../../widgets/dom.js';
import { matrixTable } from '../../widgets/matrix-table.js';
import { divColor, seqColor, QKV } from '../../widgets/colours.js';
import { select, labelled, inline } from '../../widgets/controls.js';
import { fmt } from '../../shared/format.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import { L, E, H, DK, headsChain, wrongTransposeShapes, wrongTransposeWeights } from './compute.js';

/** @typedef {ReturnType<typeof headsChain>} Chain */

/**
 * @typedef {object} TableOptions
 * @property {boolean} [seq] weights (sequential colours) rather than signed values
 * @property {string} [caption]
 * @property {string} [id]
 * @property {string[]} [rowLabels]
 * @property {string[]} [colLabels]
 * @property {boolean} [headCols] underline each column in its head's colour
 * @property {number} [head] underline every column in this head's colour
 * @property {string} [accent] Q's, K's or V's colour (QKV) for the caption
 */

/**
 * @param {Float32Array} data
 * @param {number} rows
 * @param {number} cols
 * @param {TableOptions} [opts]
 */
function table(data, rows, cols, opts = {}) {
  const m = data.reduce((a, v) => Math.max(a, Math.abs(v)), 0) || 1;
  const tb = matrixTable(data, {
    rows,
    cols,
    digits: 2,
    color: opts.seq ? seqColor : (v) => divColor(v, m),
    caption: opts.caption,
    accent: opts.accent,
    id: opts.id,
    rowLabels: opts.rowLabels || Array.from({ length: rows }, (_, i) => `t${i}`),
    colLabels: opts.colLabels || Array.from({ length: cols }, (_, c) => `${c}`),
  });
  const underline = (/** @type {string} */ colour) => `inset 0 -3px 0 ${colour}`;
  if (opts.headCols)
    tb.querySelectorAll('th.col').forEach((th, c) => {
      /** @type {HTMLElement} */ (th).style.boxShadow = underline(headColour(Math.floor(c / (cols / H))));
    });
  if (opts.head !== undefined)
    tb.querySelectorAll('th.col').forEach((th) => {
      /** @type {HTMLElement} */ (th).style.boxShadow = underline(headColour(opts.head));
    });
  return tb;
}

/**
 * One step of the chain: its code, its shape, a note and its tables.
 * @param {string} code
 * @param {number[]} shape
 * @param {string} note
 * @param {...(Node | Node[])} body
 */
const step = (code, shape, note, ...body) =>
  h(
    'div.stage.heads-step',
    { 'data-shape': JSON.stringify(shape) },
    h('h4', {}, h('code', { text: code }), ' → ', h('span.shape', { text: `(${shape.join(', ')})` })),
    note ? h('div.formula', { html: note }) : '',
    h('div.scroll.inputs-row', {}, body),
  );

/** Batch item 0 of a (B, …) tensor. @param {Float32Array} d @param {number} size */
const item0 = (d, size) => d.subarray(0, size);

/**
 * One (L, dk) table per head of a (B, H, L, dk) tensor (batch item 0).
 * @param {Float32Array} d
 * @param {string} [id]
 * @param {string} [accent] QKV's colour when the tensor is Q, K or V
 */
const perHead = (d, id, accent) =>
  Array.from({ length: H }, (_, hh) =>
    table(d.subarray(hh * L * DK, (hh + 1) * L * DK), L, DK, {
      head: hh,
      accent,
      caption: t('heads.head', { h: hh + 1 }),
      id: id ? `${id}-${hh}` : undefined,
    }),
  );

/** @param {number} B */
function shapeChain(B) {
  const chain = [
    ['x', [B, L, E]],
    ['W_Q / W_K / W_V', [B, L, E]],
    ['.view', [B, L, H, DK]],
    ['.transpose(1, 2)', [B, H, L, DK]],
    ['softmax(QKᵀ/√dₖ)', [B, H, L, L]],
    ['· V', [B, H, L, DK]],
    ['.transpose(1, 2).view', [B, L, E]],
    ['W_O', [B, L, E]],
  ];
  return h(
    'p.mono.shape-chain',
    { id: 'heads-chain', 'data-shapes': JSON.stringify(chain.map((c) => c[1])) },
    chain.map(([name, s], i) => [
      i ? ' → ' : '',
      h('span', { text: `${name} (${/** @type {number[]} */ (s).join(', ')})` }),
    ]),
  );
}

/** x, the projections, the view and the transpose. @param {Chain} c */
function inputSteps(c) {
  const { B } = c;
  return [
    step('x', [B, L, E], t('heads.xNote', { B }), table(item0(c.x, L * E), L, E, { id: 'heads-x' })),
    step(
      'Q = x W_Qᵀ, K = x W_Kᵀ, V = x W_Vᵀ',
      [B, L, E],
      t('heads.projNote'),
      ['Q', 'K', 'V'].map((n, p) =>
        table(item0([c.Q, c.K, c.V][p], L * E), L, E, { caption: n, headCols: true, accent: Object.values(QKV)[p] }),
      ),
    ),
    step(
      'Q.view(B, L, 2, 4)',
      [B, L, H, DK],
      t('heads.viewNote'),
      table(item0(c.Q, L * E), L, E, {
        headCols: true,
        accent: QKV.q,
        colLabels: Array.from({ length: E }, (_, col) => `h${Math.floor(col / DK) + 1}·${col % DK}`),
      }),
    ),
    step('.transpose(1, 2)', [B, H, L, DK], t('heads.transposeNote'), perHead(c.Qh, 'heads-qh', QKV.q)),
  ];
}

/**
 * The wrong transpose's result: a shape error, or silently wrong weights.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Chain} c
 */
function wrongStep(attn, c) {
  const w = wrongTransposeShapes(c.B);
  const qk = `Q (${w.q.join(', ')}) @ K.transpose(0, 1) (${w.k.join(', ')})`;
  if (w.error) {
    const text = `${qk}\n${w.error}\n${t('heads.wrongFix')}`;
    return h('div.error-box', { id: 'heads-wrong-result', 'data-error': '1', text });
  }
  // the shapes happen to fit: what it gives (batch item 0, head 0), compared
  const wrong = wrongTransposeWeights(attn, c);
  return h(
    'div.error-box',
    { id: 'heads-wrong-result', 'data-error': '0', 'data-diff': wrong.diff },
    h('div', { text: `${qk} → (${w.out.join(', ')})\n${t('heads.wrongSilent', { d: fmt(wrong.diff, 3) })}` }),
    table(wrong.weights, L, L, { seq: true, caption: t('heads.wrongW') }),
  );
}

/** The attention weights, the heads' outputs, the merge, W_O and the check. @param {Chain} c */
function outputSteps(c) {
  const { B } = c;
  const ok = c.diff < 1e-5;
  const weights = Array.from({ length: H }, (_, hh) =>
    table(c.weights.subarray(hh * L * L, (hh + 1) * L * L), L, L, {
      seq: true,
      head: hh,
      caption: t('heads.head', { h: hh + 1 }),
      id: `heads-w-${hh}`,
      colLabels: ['t0', 't1', 't2', 't3'],
    }),
  );
  return [
    step('softmax(Q Kᵀ / √dₖ)', [B, H, L, L], t('heads.attnNote'), weights),
    step('weights · V', [B, H, L, DK], t('heads.outNote'), perHead(c.heads, 'heads-oh')),
    step(
      '.transpose(1, 2).contiguous().view(B, L, 8)',
      [B, L, E],
      t('heads.mergeNote'),
      table(item0(c.merged, L * E), L, E, { headCols: true, id: 'heads-merged' }),
    ),
    step('W_O', [B, L, E], t('heads.woNote'), table(item0(c.y, L * E), L, E, { id: 'heads-y' })),
    h(`div.${ok ? 'ok-box' : 'error-box'}`, {
      id: 'heads-check',
      'data-ok': ok ? '1' : '0',
      'data-diff': c.diff,
      html: t(ok ? 'heads.checkOk' : 'heads.checkBad', { d: c.diff.toExponential(1), B }),
    }),
  ];
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore({ B: 2, wrong: false });
  const bSel = select({
    id: 'heads-batch',
    label: t('heads.batchAria'),
    options: [1, 2, 3].map((b) => [b, String(b)]),
    value: store.get().B,
    onChange: (v) => store.set({ B: Number(v) }),
  });
  const wrongIn = h('input', { type: 'checkbox', id: 'heads-wrong' });
  wrongIn.addEventListener('change', () => store.set({ wrong: wrongIn.checked }));
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  const out = h('div', { id: 'heads-out' });
  // 进阶: the steps after the weights (each head's output, the merge, W_O), kept open or shut across redraws
  const foldBody = h('div.heads-steps');
  const fold = h('details.advanced', { id: 'heads-advanced' }, h('summary', { text: t('heads.advanced') }), foldBody);
  root.append(
    h(
      'div.controls',
      {},
      labelled('heads-batch', t('heads.batch'), bSel),
      inline(wrongIn, h('span', {}, t('heads.wrong'), ' ', h('code', { text: 'K.transpose(0, 1)' }))),
    ),
    h('p.note', { html: t('heads.init') }),
    out,
  );
  /** @param {{ B: number, wrong: boolean }} s */
  function draw({ B, wrong }) {
    const c = headsChain(attn, mha, B);
    const [attention, ...rest] = outputSteps(c);
    const check = rest.pop();
    foldBody.replaceChildren(...rest);
    out.replaceChildren(
      shapeChain(B),
      h('p.note', { text: t('heads.item0', { B }) }),
      h('div.heads-steps', {}, inputSteps(c), wrong ? wrongStep(attn, c) : attention),
      ...(wrong ? [] : [fold, check]),
    );
  }
  store.subscribe(draw);
  draw(store.get());
}
