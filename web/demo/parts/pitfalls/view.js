// @ts-check
// Part "troubleshooting" (§9): every row of the tutorial's table, live: a wrong column next to attnlab's right one
// (compute.js), in the table's order, each row with its own control.

import { h } from '../../widgets/dom.js';
import { matrixTable } from '../../widgets/matrix-table.js';
import { seqColor } from '../../widgets/colours.js';
import { select, labelled } from '../../widgets/controls.js';
import { fmt, errText } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { sum, noMax, wrongAxis, headsDivide, transposeRow, noScale, maskZero, MASK_LOGITS } from './compute.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {(wrong: HTMLElement, right: HTMLElement, el: HTMLElement) => void} Update */

/**
 * @param {ArrayLike<number>} w
 * @param {number} rows
 * @param {number} cols
 * @param {string[]} labels
 */
const weightsTable = (w, rows, cols, labels, digits = 3) =>
  matrixTable(w, {
    rows,
    cols,
    colLabels: labels,
    rowLabels: rows === 1 ? ['w'] : Array.from({ length: rows }, (_, i) => `q${i}`),
    digits,
    color: (v) => seqColor(v),
    rowExtra: (i) => `Σ ${fmt(sum(w, i * cols, cols), 4)}`,
    rowExtraLabel: t('pf.rowSum'),
  });
/** @param {number} n */
const kLabels = (n) => Array.from({ length: n }, (_, j) => `k${j}`);
/** @param {boolean} ok @param {string} text */
const verdict = (ok, text) => h(`div.verdict.${ok ? 'good' : 'bad'}`, { text: `${ok ? '✓' : '✗'} ${text}` });
/** @param {Node} el */
const scroll = (el) => h('div.scroll', {}, el);
/** @param {string} text */
const mono = (text) => h('div.mono.small', { text });

/**
 * One row of the table: its title, symptom, controls, the wrong and the right column and the explanation. Returns
 * the function that recomputes it (run once here).
 * @param {HTMLElement} list
 * @param {string} id
 * @param {number} n
 * @param {Node | Node[] | null} controls
 * @param {Update} update
 */
function pitfall(list, id, n, controls, update) {
  const wrongBody = h('div');
  const rightBody = h('div');
  const wrong = h('div.col', {}, h('div', {}, h('span.tag.wrong', { text: t('pf.wrongTag') })), wrongBody);
  const right = h('div.col', {}, h('div', {}, h('span.tag.right', { text: t('pf.rightTag') })), rightBody);
  const el = h(
    'div.pitfall',
    { 'data-pitfall': id },
    h('h3', { text: `${n} · ${t(`pf.${id}.title`)}` }),
    h('p.symptom.small', { text: t(`pf.${id}.symptom`) }),
    controls ? h('div.controls', {}, controls) : '',
    h('div.cols', {}, wrong, right),
    h('div.why', { html: t(`pf.${id}.why`) }),
  );
  list.append(el);
  const run = () => {
    try {
      update(wrongBody, rightBody, el);
    } catch (e) {
      rightBody.replaceChildren(h('div.errmsg', { text: errText(e) }));
    }
  };
  run();
  return run;
}

/** 1. NaN loss: softmax without subtracting the max. @param {HTMLElement} list @param {Attnlab} attn */
function noMaxRow(list, attn) {
  const bigIn = h('input', {
    type: 'range',
    id: 'pf-big',
    min: '1',
    max: '200',
    step: '1',
    value: '100',
    'aria-label': t('pf.no-max.aria'),
  });
  const bigVal = h('span.mono', { text: '100' });
  const caption = h('span', {}, t('pf.no-max.ctl'), ' a = ', bigVal, '  (a, a − 1, a − 3)');
  const run = pitfall(list, 'no-max', 1, labelled('pf-big', caption, bigIn), (wrongBody, rightBody, el) => {
    const a = Number(bigIn.value);
    bigVal.textContent = String(a);
    const r = noMax(attn, a);
    const labels = r.logits.map((x) => `${fmt(x, 1)}`);
    wrongBody.replaceChildren(
      scroll(weightsTable(r.wrong, 1, 3, labels)),
      verdict(r.nans === 0, r.nans ? t('pf.no-max.bad', { n: r.nans }) : t('pf.no-max.fine')),
    );
    rightBody.replaceChildren(
      scroll(weightsTable(r.right, 1, 3, labels)),
      verdict(r.right.every(Number.isFinite), t('pf.no-max.good', { s: fmt(sum(r.right), 5) })),
    );
    el.dataset.wrong = JSON.stringify(Array.from(r.wrong, String));
    el.dataset.right = JSON.stringify(Array.from(r.right));
  });
  bigIn.addEventListener('input', run);
}

/** 2. Row sums ≠ 1: softmax over the wrong axis (new random Q, K on demand). @param {HTMLElement} list @param {Attnlab} attn */
function wrongAxisRow(list, attn) {
  let seed = 3;
  const axisBtn = h('button', { type: 'button', id: 'pf-axis-new', text: t('pf.wrong-axis.new') });
  const run = pitfall(list, 'wrong-axis', 2, axisBtn, (wrongBody, rightBody, el) => {
    const r = wrongAxis(attn, seed);
    wrongBody.replaceChildren(
      scroll(weightsTable(r.wrong, 3, 4, kLabels(4))),
      verdict(false, t('pf.wrong-axis.bad', { s: r.wrongSums.map((x) => fmt(x, 3)).join(', ') })),
    );
    rightBody.replaceChildren(scroll(weightsTable(r.right, 3, 4, kLabels(4))), verdict(true, t('pf.wrong-axis.good')));
    el.dataset.wrongRowSums = JSON.stringify(r.wrongSums);
    el.dataset.rightRowSums = JSON.stringify(r.rightSums);
  });
  axisBtn.addEventListener('click', () => {
    seed += 1;
    run();
  });
}

/** 3. d_model not divisible by num_heads. @param {HTMLElement} list @param {Attnlab} attn */
function headsRow(list, attn) {
  const eIn = h('input', { type: 'number', id: 'pf-embed', min: '1', value: '10', 'aria-label': 'embedDim' });
  const hIn = h('input', { type: 'number', id: 'pf-heads', min: '1', value: '3', 'aria-label': 'numHeads' });
  const controls = [labelled('pf-embed', 'embedDim (d_model)', eIn), labelled('pf-heads', 'numHeads', hIn)];
  const run = pitfall(list, 'heads', 3, controls, (wrongBody, rightBody, el) => {
    const E = Math.round(Number(eIn.value));
    const H = Math.round(Number(hIn.value));
    const r = headsDivide(attn, E, H);
    if (!r.positive) {
      // the wrong column has nothing to compute: say so instead of dividing by 0
      wrongBody.replaceChildren(verdict(false, t('pf.heads.positive')));
    } else {
      const bad =
        r.hd === 0
          ? t('pf.heads.zero', { H, E })
          : t('pf.heads.dropped', { H, hd: r.hd, used: r.used, E, lost: r.lost });
      wrongBody.replaceChildren(
        mono(`const headDim = Math.floor(${E} / ${H}); // ${r.hd}`),
        r.exact ? verdict(true, t('pf.heads.exact', { H, hd: r.hd, E })) : verdict(false, bad),
      );
    }
    el.dataset.error = r.error ? errText(r.error) : '';
    rightBody.replaceChildren(
      mono(`attn.createMultiHeadAttention({ embedDim: ${E}, numHeads: ${H} })`),
      r.error
        ? h('div.errmsg', { id: 'pf-heads-error', text: t('pf.heads.throws', { err: errText(r.error) }) })
        : verdict(true, t('pf.heads.created', { H, d: E / H })),
    );
  });
  eIn.addEventListener('input', run);
  hIn.addEventListener('input', run);
}

/** 4. Shape error after QKᵀ: transpose on the wrong dimensions. @param {HTMLElement} list @param {Attnlab} attn */
function transposeRowView(list, attn) {
  const options = /** @type {[number, string][]} */ ([1, 2, 3].map((b) => [b, String(b)]));
  const tbSel = select({ id: 'pf-transpose-b', label: t('heads.batchAria'), options, value: 3 });
  const run = pitfall(
    list,
    'transpose',
    4,
    labelled('pf-transpose-b', t('heads.batch'), tbSel),
    (wrongBody, rightBody, el) => {
      const B = Number(tbSel.value);
      const { wrong: w, shape, rightShape } = transposeRow(attn, B);
      wrongBody.replaceChildren(
        mono(`q ${JSON.stringify(w.q)} @ k.transpose(0, 1) ${JSON.stringify(w.k)}`),
        w.error
          ? h('div.errmsg', { text: w.error })
          : verdict(false, t('pf.transpose.silent', { s: w.out.join(', ') })),
      );
      rightBody.replaceChildren(
        mono(`q ${JSON.stringify(shape)} @ k.transpose(-2, -1) [${B}, 2, 4, 4]`),
        verdict(true, t('pf.transpose.good', { s: rightShape.join(', ') })),
      );
      el.dataset.wrongError = w.error ? '1' : '0';
      el.dataset.rightShape = JSON.stringify(rightShape);
    },
  );
  tbSel.addEventListener('change', run);
}

/** 5. Output barely changes: no 1/√dₖ. @param {HTMLElement} list @param {Attnlab} attn */
function noScaleRow(list, attn) {
  const options = /** @type {[number, string][]} */ ([4, 16, 64, 256, 1024].map((d) => [d, String(d)]));
  const dkSel = select({ id: 'pf-dk', label: 'd_k', options, value: 256 });
  const run = pitfall(
    list,
    'no-scale',
    5,
    labelled('pf-dk', t('pf.no-scale.ctl'), dkSel),
    (wrongBody, rightBody, el) => {
      const r = noScale(attn, Number(dkSel.value));
      /** @param {ReturnType<typeof noScale>['right']} s */
      const stats = (s) =>
        t('pf.no-scale.stats', { m: fmt(s.max, 3), e: fmt(s.entropy, 2), u: fmt(r.uniform, 2), g: fmt(s.grad, 3) });
      wrongBody.replaceChildren(
        scroll(weightsTable(r.wrong.w, 1, 8, kLabels(8), 2)),
        verdict(r.wrong.max < 0.9, stats(r.wrong)),
      );
      rightBody.replaceChildren(scroll(weightsTable(r.right.w, 1, 8, kLabels(8), 2)), verdict(true, stats(r.right)));
      Object.assign(el.dataset, {
        wrongMax: r.wrong.max,
        rightMax: r.right.max,
        wrongGrad: r.wrong.grad,
        rightGrad: r.right.grad,
      });
    },
  );
  dkSel.addEventListener('change', run);
}

/** 6. Masked positions still get weight: fill 0 instead of a large negative number. @param {HTMLElement} list @param {Attnlab} attn */
function maskZeroRow(list, attn) {
  const options = /** @type {[number, string][]} */ ([1, 2, 3].map((n) => [n, String(n)]));
  const padSel = select({ id: 'pf-pad', label: t('pf.mask-zero.ctl'), options, value: 2 });
  const run = pitfall(
    list,
    'mask-zero',
    6,
    labelled('pf-pad', t('pf.mask-zero.ctl'), padSel),
    (wrongBody, rightBody, el) => {
      const r = maskZero(attn, Number(padSel.value));
      const labels = MASK_LOGITS.map((_, j) => (r.keep[j] ? `k${j}` : t('pf.mask-zero.pad', { k: `k${j}` })));
      const n = MASK_LOGITS.length;
      wrongBody.replaceChildren(
        mono('scores.masked_fill(mask == 0, 0)'),
        scroll(weightsTable(r.wrong, 1, n, labels)),
        verdict(false, t('pf.mask-zero.bad', { p: (r.leak * 100).toFixed(1) })),
      );
      rightBody.replaceChildren(
        mono(t('pf.mask-zero.rightCode')),
        scroll(weightsTable(r.right, 1, n, labels)),
        verdict(r.rightLeak === 0, t('pf.mask-zero.good')),
      );
      el.dataset.wrongLeak = String(r.leak);
      el.dataset.rightLeak = String(r.rightLeak);
    },
  );
  padSel.addEventListener('change', run);
}

/**
 * @param {HTMLElement} root
 * @param {Attnlab} attn
 */
export function mount(root, attn) {
  const list = h('div.pitfalls');
  root.append(list);
  for (const row of [noMaxRow, wrongAxisRow, headsRow, transposeRowView, noScaleRow, maskZeroRow]) row(list, attn);
}
