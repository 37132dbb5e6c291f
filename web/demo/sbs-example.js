// The step-by-step part's inputs: the tutorial's §5 example (Q = K = V) with the weights the tutorial prints for
// it next to attnlab's, and the parsers of the editable Q, K, V text boxes and of the softcap and window boxes.

import { h } from './util.js';
import { t } from './i18n.js';

export const DEFAULT = '1 0 1 0\n0 1 0 1\n1 1 0 0';
const MAX = 8;
// What the tutorial's §5 prints for this Q = K = V (its own code cannot produce it; see sbs.sec5Why).
export const PRINTED = [
  [0.2665, 0.1462, 0.5873],
  [0.1462, 0.2665, 0.5873],
  [0.2201, 0.2201, 0.5599],
];
export const EXAMPLE = [
  [1, 0, 1, 0],
  [0, 1, 0, 1],
  [1, 1, 0, 0],
];

/** "1 0 1\n0, 1, 2" or "[[1,0],[0,1]]" → rows of numbers, or throws an Error in words. */
export function parseMatrix(text, name) {
  const lines = text
    .replace(/\]\s*,?\s*\[/g, '\n')
    .replace(/[[\]]/g, '')
    .split(/\n|;/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (!lines.length) throw new Error(t('sbs.errEmpty', { name }));
  const rows = lines.map((line, i) =>
    line
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((tok) => {
        const v = Number(tok);
        if (!Number.isFinite(v)) throw new Error(t('sbs.errNumber', { name, row: i + 1, tok }));
        return v;
      }),
  );
  const w = rows[0].length;
  rows.forEach((r, i) => {
    if (r.length !== w) throw new Error(t('sbs.errRagged', { name, row: i + 1, n: r.length, w }));
  });
  if (rows.length > MAX || w > MAX) throw new Error(t('sbs.errBig', { name, r: rows.length, c: w, max: MAX }));
  return rows;
}

/** A side of the sliding window from its box: a whole number ≥ −1 (−1 = unbounded), or throws an Error in words. */
export function parseWindowSide(text) {
  const s = String(text).trim();
  const v = s === '' ? NaN : Number(s);
  if (!Number.isInteger(v) || v < -1 || v > 2 ** 31 - 1) throw new Error(t('sbs.errWindow', { v: s }));
  return v;
}

/** The softcap c from its box: a finite number > 0, or throws an Error in words. */
export function parseSoftcap(text) {
  const s = String(text).trim();
  const v = s === '' ? NaN : Number(s);
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(t('sbs.errSoftcap', { v: s }));
  return v;
}

/** The §5 box: the tutorial's printed weights next to attnlab's for its Q = K = V. */
export function sec5Box(attn) {
  const x = { data: Float32Array.from(EXAMPLE.flat()), shape: [3, 4] };
  const w = attn.scaledDotProductAttention(x, x, x, { needWeights: true }).weights.data;
  const row = (label, vals, attrs, digits) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row', text: label }),
      vals.map((v, j) => h('td', { ...attrs(j), text: v.toFixed(digits) })),
    );
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
  return h(
    'div.sec5',
    { id: 'sbs-sec5' },
    h('h3', { text: t('sbs.sec5Title') }),
    h('p.note', { text: t('sbs.sec5Note') }),
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
