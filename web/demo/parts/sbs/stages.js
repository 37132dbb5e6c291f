// @ts-check
// Part 1's pipeline: the inputs, then one box per stage of compute.js's runStages (QKᵀ, × scale, softcap, mask,
// softmax, · V), every number a table cell; hovering a cell explains it, clicking it toggles the tutorial's mask.

import { h } from '../../widgets/dom.js';
import { matrixTable } from '../../widgets/matrix-table.js';
import { divColor, seqColor, QKV } from '../../widgets/colours.js';
import { legend } from '../../widgets/legend.js';
import { showTip, hideTip } from '../../widgets/tooltip.js';
import { fmt, full } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { maxAbs, ruleText } from './compute.js';

/** @typedef {import('./compute.js').SbsState} SbsState */
/** @typedef {Extract<ReturnType<typeof import('./compute.js').runStages>, { ok: true }>} Run */

const STAGE_NUMBERS = ['①', '②', '③', '④', '⑤', '⑥'];
// The mask table's colours: may attend, and why a cell is masked.
const MASK_COLOURS = {
  keep: 'rgb(226, 244, 230)',
  click: 'rgb(253, 231, 229)',
  causal: 'rgb(232, 222, 248)',
  window: 'rgb(255, 236, 204)',
};

/**
 * One stage: its title, formula, the returnScores (or result field) it shows, its table and notes.
 * @param {string} name
 * @param {string} title
 * @param {string} formula
 * @param {string} field
 * @param {Node} table
 * @param {...(Node | Node[])} notes
 */
function stage(name, title, formula, field, table, ...notes) {
  return h(
    'div.stage',
    { 'data-stage': name },
    h('h4', {}, title, ' ', h('span.tag.attnlab', { text: 'attnlab', title: t('sbs.tagAttnTitle') })),
    h('div.formula', { text: formula }),
    h('div.formula', {}, h('code', { text: field })),
    h('div.scroll', {}, table),
    notes,
  );
}

/** @param {string} prefix @param {number} n */
const labels = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Options of a clickable (Lq, Lk) score table on a diverging scale [-m, m]. @param {Run} r @param {number} m */
const scoreOpts = (r, m) => ({
  rows: r.Lq,
  cols: r.Lk,
  rowLabels: labels('q', r.Lq),
  colLabels: labels('k', r.Lk),
  color: (/** @type {number} */ x) => divColor(x, m),
  className: 'clickable',
  noTitle: true,
  cellAttrs: (/** @type {number} */ x, /** @type {number} */ i, /** @type {number} */ j) =>
    r.why(i, j) !== null ? { class: 'masked' } : {},
});

/** Q, K and V as tables. @param {Run} r */
function inputsBox(r) {
  /** @param {Float32Array} data @param {number} rows @param {number} cols @param {string[]} rl @param {string} id @param {string} name */
  const input = (data, rows, cols, rl, id, name) =>
    matrixTable(data, {
      rows,
      cols,
      rowLabels: rl,
      colLabels: labels('d', cols),
      id,
      caption: name,
      accent: QKV[/** @type {'q' | 'k' | 'v'} */ (name.toLowerCase())],
      cellTitle: (x, i, j) => `${name}[${i}, ${j}] = ${full(x)}`,
    });
  return h(
    'div.stage',
    { 'data-stage': 'inputs' },
    h('h4', { text: t('sbs.inputs') }),
    h('div.formula', { text: t('sbs.inputsNote') }),
    h(
      'div.scroll.inputs-row',
      {},
      input(r.q, r.Lq, r.dk, labels('q', r.Lq), 'sbs-q', 'Q'),
      input(r.k, r.Lk, r.dk, labels('k', r.Lk), 'sbs-k', 'K'),
      input(r.v, r.Lk, r.dv, labels('v', r.Lk), 'sbs-v', 'V'),
    ),
  );
}

/** ① QKᵀ, ② × scale and, with softcap, its stage. @param {Run} r @param {SbsState} st */
function scoreStages(r, st) {
  const m1 = maxAbs(r.raw);
  const m2 = maxAbs(r.scaled);
  const baseText =
    st.scaleMode === 'default'
      ? `× 1/√${r.dk} = ${fmt(r.base, 4)}`
      : st.scaleMode === 'off'
        ? t('sbs.scaleOffText')
        : t('sbs.scaleCustomText', { s: fmt(r.base, 4) });
  const out = [
    stage(
      'scores',
      t('sbs.s1'),
      'scores[i, j] = q_i · k_j',
      "returnScores: 'scaled', scale: 1",
      matrixTable(r.raw, { ...scoreOpts(r, m1), id: 'sbs-scores' }),
      legend('div', -m1, m1, t('sbs.legScore')),
    ),
    stage(
      'scaled',
      t('sbs.s2'),
      st.temp !== 1 ? `${baseText}, ÷ T ${fmt(st.temp, 3)} → × ${fmt(r.scale, 4)}` : baseText,
      "returnScores: 'scaled'",
      matrixTable(r.scaled, { ...scoreOpts(r, m2), id: 'sbs-scaled' }),
      legend('div', -m2, m2, t('sbs.legScaled')),
    ),
  ];
  if (r.capped) {
    const mc = maxAbs(r.capped);
    out.push(
      stage(
        'softcapped',
        t('sbs.sCap'),
        `c · tanh(s / c), c = ${fmt(r.cap, 4)}`,
        "returnScores: 'softcapped'",
        matrixTable(r.capped, { ...scoreOpts(r, mc), id: 'sbs-softcapped' }),
        legend('div', -mc, mc, t('sbs.legSoftcapped')),
      ),
    );
  }
  return out;
}

/** @param {string} colour @param {string} text */
const swatch = (colour, text) =>
  h(
    'span',
    { style: 'white-space: nowrap; margin-right: 10px' },
    h('span', {
      'aria-hidden': 'true',
      style: `display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border: 1px solid #bbb; background: ${colour}`,
    }),
    text,
  );

/** ③ the mask (the tutorial's 0/1 matrix, coloured by rule) and the masked scores. @param {Run} r @param {SbsState} st */
function maskStage(r, st) {
  const { Lq, Lk } = r;
  const maskTable = matrixTable(
    Float32Array.from({ length: Lq * Lk }, (_, n) => (r.why(Math.floor(n / Lk), n % Lk) !== null ? 0 : 1)),
    {
      rows: Lq,
      cols: Lk,
      rowLabels: labels('q', Lq),
      colLabels: labels('k', Lk),
      id: 'sbs-mask',
      className: 'clickable.mask01',
      caption: t('sbs.maskCaption'),
      color: (x, i, j) => MASK_COLOURS[r.why(i, j) ?? 'keep'],
      digits: 0,
      noTitle: true,
      cellAttrs: (x, i, j) => (r.why(i, j) !== null ? { class: 'masked', 'data-why': r.why(i, j) } : {}),
    },
  );
  const maskKey = h(
    'div.note',
    { id: 'sbs-mask-key' },
    swatch(MASK_COLOURS.keep, t('sbs.legKeep')),
    swatch(MASK_COLOURS.click, st.fill === '-1e9' ? t('sbs.legClick1e9') : t('sbs.legClickInf')),
    st.causal !== 'off' && swatch(MASK_COLOURS.causal, t('sbs.legCausal')),
    (r.win[0] >= 0 || r.win[1] >= 0) && swatch(MASK_COLOURS.window, t('sbs.legWindow')),
  );
  const m3 = maxAbs(r.masked);
  return stage(
    'masked',
    t('sbs.s3'),
    ruleText({ fill: st.fill, causal: st.causal, offset: r.offset, win: r.win }),
    "returnScores: 'masked', needWeights: true → result.scores",
    h(
      'div.inputs-row',
      {},
      maskTable,
      matrixTable(r.masked, { ...scoreOpts(r, m3), id: 'sbs-masked', caption: t('sbs.maskedCaption') }),
    ),
    maskKey,
    legend('div', -m3, m3, t('sbs.legMasked')),
  );
}

/** ④ the weights with row sums and a note per fully masked row. @param {Run} r @param {SbsState} st */
function weightsStage(r, st) {
  const { Lq, Lk, W } = r;
  const sums = Array.from({ length: Lq }, (_, i) => W.subarray(i * Lk, (i + 1) * Lk).reduce((a, b) => a + b, 0));
  const wTable = matrixTable(W, {
    ...scoreOpts(r, 1),
    color: (x) => seqColor(x),
    id: 'sbs-weights',
    rowExtra: (i) => `Σ ${fmt(sums[i], 4)}`,
    rowExtraLabel: t('sbs.rowSum'),
  });
  Object.assign(wTable.dataset, {
    lq: Lq,
    lk: Lk,
    causal: st.causal,
    offset: r.offset,
    window: r.win.join(','),
    softcap: r.cap === null ? 'off' : r.cap,
    fill: st.fill,
    deadRows: r.deadRows.join(','),
  });
  /** The masked scores attnlab returned: the −∞ ones get nothing, the −1e9 ones share the row. @param {number} i */
  const deadNote = (i) => {
    let n = 0;
    for (let j = 0; j < Lk; j++) if (Number.isFinite(r.masked[i * Lk + j])) n++;
    const text =
      n === 0
        ? t('sbs.deadRowInf', { i })
        : n === Lk
          ? t('sbs.deadRow1e9', { i, lk: Lk, u: fmt(1 / Lk, 4) })
          : t('sbs.deadRowMixed', { i, n, u: fmt(1 / n, 4) });
    return h('div.row-note', { 'data-dead-row': i, text });
  };
  return stage(
    'weights',
    t('sbs.s4'),
    t('sbs.s4Formula'),
    'result.weights',
    wTable,
    legend('seq', 0, 1, t('sbs.legWeight'), undefined, { value: 1 / r.Lk, label: t('legend.uniform', { n: r.Lk }) }),
    r.deadRows.map(deadNote),
  );
}

/** ⑤ the output. @param {Run} r */
function outputStage(r) {
  const mo = maxAbs(r.O);
  return stage(
    'output',
    t('sbs.s5'),
    'output_i = Σ_j weight[i, j] · v_j',
    'result.output',
    matrixTable(r.O, {
      rows: r.Lq,
      cols: r.dv,
      rowLabels: labels('o', r.Lq),
      colLabels: labels('d', r.dv),
      id: 'sbs-output',
      color: (x) => divColor(x, mo),
      cellTitle: (x, i, j) => `output[${i}, ${j}] = ${full(x)}`,
    }),
    legend('div', -mo, mo, t('sbs.legOutput')),
  );
}

/**
 * The whole pipeline into its element, with the cells' hover and click.
 * @param {HTMLElement} pipeline
 * @param {Run} r
 * @param {SbsState} st
 * @param {(i: number, j: number) => void} onToggle a cell was clicked
 */
export function drawPipeline(pipeline, r, st, onToggle) {
  const stages = [...scoreStages(r, st), maskStage(r, st), weightsStage(r, st), outputStage(r)];
  pipeline.append(inputsBox(r));
  stages.forEach((s, n) => {
    s.querySelector('h4').prepend(`${STAGE_NUMBERS[n]} `);
    pipeline.append(h('div.arrow', { 'aria-hidden': 'true', text: '→' }), s);
  });
  pipeline.dataset.scale = String(r.scale);
  pipeline
    .querySelectorAll('table.clickable td[data-i]')
    .forEach((td) => wireCell(pipeline, /** @type {HTMLElement} */ (td), r, st, onToggle));
}

/** @param {import('./compute.js').Why} w */
const whyText = (w) => (w === 'causal' ? t('sbs.whyCausal') : w === 'window' ? t('sbs.whyWindow') : t('sbs.whyClick'));

/**
 * A cell's tooltip (every stage's number for it), its highlight of q_i, k_j, v_j and o_i, and its click.
 * @param {HTMLElement} pipeline
 * @param {HTMLElement} td
 * @param {Run} r
 * @param {SbsState} st
 * @param {(i: number, j: number) => void} onToggle
 */
function wireCell(pipeline, td, r, st, onToggle) {
  const i = Number(td.dataset.i);
  const j = Number(td.dataset.j);
  const ij = i * r.Lk + j;
  const tipText = () =>
    t('sbs.tip', {
      i,
      j,
      w: fmt(r.W[ij], 5),
      s: fmt(r.raw[ij], 4),
      ss: fmt(r.scaled[ij], 4),
      sc: r.capped ? t('sbs.tipSoftcap', { c: fmt(r.capped[ij], 4) }) : '',
      ms: fmt(r.masked[ij], 4),
      m: r.why(i, j) !== null ? t('sbs.tipMasked', { why: whyText(r.why(i, j)) }) : '',
      act: t(st.masked.has(`${i},${j}`) ? 'sbs.tipUnmask' : 'sbs.tipMask'),
    });
  /** @param {boolean} on */
  const highlight = (on) => {
    /** @param {string} sel */
    const tog = (sel, cls = 'hl-row') => pipeline.querySelectorAll(sel).forEach((e) => e.classList.toggle(cls, on));
    tog(`#sbs-q tr[data-row="${i}"]`);
    tog(`#sbs-k tr[data-row="${j}"]`);
    tog(`#sbs-v tr[data-row="${j}"]`);
    tog(`#sbs-output tr[data-row="${i}"]`);
    tog(`table.clickable td[data-i="${i}"][data-j="${j}"]`, 'hl');
  };
  td.addEventListener('mouseenter', (ev) => {
    highlight(true);
    showTip(tipText(), ev.pageX, ev.pageY);
  });
  td.addEventListener('mousemove', (ev) => showTip(tipText(), ev.pageX, ev.pageY));
  td.addEventListener('mouseleave', () => {
    highlight(false);
    hideTip();
  });
  td.addEventListener('click', () => {
    hideTip();
    onToggle(i, j);
  });
}
