// @ts-check
// Part 1's opening box: the tutorial's §5 example (Q = K = V) with the weights the tutorial prints for it next to
// attnlab's (compute.js sec5Weights), and why the printed ones cannot be right.

import { h } from '../../widgets/dom.js';
import { t } from '../../i18n.js';
import { guessCard } from '../../widgets/guess.js';
import { PRINTED, sec5Weights } from './compute.js';

/**
 * @param {string} label
 * @param {number[]} vals
 * @param {(j: number) => Record<string, any>} attrs
 * @param {number} digits
 */
const row = (label, vals, attrs, digits) =>
  h(
    'tr',
    {},
    h('th', { scope: 'row', text: label }),
    vals.map((v, j) => h('td', { ...attrs(j), text: v.toFixed(digits) })),
  );

/** @param {import('../../attnlab.js').Attnlab} attn */
export function sec5Box(attn) {
  const w = sec5Weights(attn);
  const body = [];
  for (let i = 0; i < 3; i++) {
    body.push(row(t('sbs.printedRow', { i }), PRINTED[i], () => ({ class: 'printed' }), 4));
    body.push(
      row(
        t('sbs.computedRow', { i }),
        Array.from(w.subarray(i * 3, i * 3 + 3)),
        (j) => ({ class: 'computed', 'data-i': i, 'data-j': j, 'data-value': w[i * 3 + j] }),
        5,
      ),
    );
  }
  const answer = sec5Answer(body);
  return h(
    'div.sec5',
    { id: 'sbs-sec5' },
    h('h3', { text: t('sbs.sec5Title') }),
    h('p.note', { text: t('sbs.sec5Note') }),
    guessCard('sbs', t('sbs.sec5Guess'), () => {
      answer.hidden = false;
      return { html: t('sbs.sec5Answer', row0(w)), value: w[0] };
    }),
    answer,
  );
}

/**
 * The answer's numbers: the key with the largest weight in row 0, by attnlab and as the tutorial prints it.
 * @param {Float32Array} w
 */
function row0(w) {
  const top = (/** @type {number[]} */ r) => r.indexOf(Math.max(...r));
  const [j, p] = [top(Array.from(w.subarray(0, 3))), top(PRINTED[0])];
  return { j, w: w[j].toFixed(5), p, pw: PRINTED[0][p].toFixed(4) };
}

/**
 * The table (the tutorial's rows and attnlab's) and why the printed ones cannot be right: shown with the answer.
 * @param {HTMLElement[]} body
 */
function sec5Answer(body) {
  return h(
    'div',
    { id: 'sbs-sec5-answer', hidden: true },
    h(
      'div.table-scroll',
      {},
      h(
        'table.answers.sec5-table',
        {},
        h(
          'tr',
          {},
          h('th', { text: '' }),
          ['k0', 'k1', 'k2'].map((k) => h('th', { scope: 'col', text: k })),
        ),
        body,
      ),
    ),
    h('p.warn-box', { id: 'sbs-sec5-why', text: t('sbs.sec5Why') }),
  );
}
