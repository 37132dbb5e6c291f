// @ts-check
// A labelled matrix as an HTML table with numbers in coloured cells (every cell carries data-i, data-j, data-value).

import { fmt, full } from '../shared/format.js';
import { textOn } from './colours.js';
import { h } from './dom.js';

/**
 * @typedef {object} MatrixTableOptions
 * @property {number} rows
 * @property {number} cols
 * @property {string[]} [rowLabels] default 0, 1, …
 * @property {string[]} [colLabels] default 0, 1, …
 * @property {string} [id]
 * @property {string} [className] extra classes, '.'-separated
 * @property {string} [caption]
 * @property {string} [accent] the caption's colour and the table's top rule (QKV's, for Q, K and V)
 * @property {(i: number) => string | null} [rowAccent] a row label's colour
 * @property {string} [corner] the top-left header cell
 * @property {(v: number, i: number, j: number) => string | null} [color] a cell's background
 * @property {number} [digits] of fmt (default 3)
 * @property {boolean} [noTitle] no title on the cells
 * @property {(v: number, i: number, j: number) => string} [cellTitle] a cell's title (default its full value)
 * @property {(v: number, i: number, j: number) => Record<string, any>} [cellAttrs] more attributes of a cell
 * @property {(i: number) => string} [rowExtra] an extra column (e.g. row sums)
 * @property {string} [rowExtraLabel] its header
 */

/**
 * @param {ArrayLike<number>} values row-major, rows × cols
 * @param {MatrixTableOptions} opts
 */
export function matrixTable(values, opts) {
  const { rows, cols } = opts;
  const table = h('table.matrix' + (opts.className ? '.' + opts.className : ''), { id: opts.id });
  if (opts.caption) table.append(h('caption', { text: opts.caption, style: opts.accent && `color:${opts.accent}` }));
  if (opts.accent) table.style.borderTop = `3px solid ${opts.accent}`;
  const head = h('tr', {}, h('th.corner', { text: opts.corner || '' }));
  for (let j = 0; j < cols; j++)
    head.append(h('th.col', { scope: 'col', text: opts.colLabels ? opts.colLabels[j] : String(j) }));
  if (opts.rowExtra) head.append(h('th.extra', { scope: 'col', text: opts.rowExtraLabel || '' }));
  table.append(h('thead', {}, head));
  const body = h('tbody');
  for (let i = 0; i < rows; i++) body.append(matrixRow(values, i, opts));
  table.append(body);
  return table;
}

/**
 * @param {ArrayLike<number>} values
 * @param {number} i
 * @param {MatrixTableOptions} opts
 */
function matrixRow(values, i, opts) {
  const { cols } = opts;
  const tr = h(
    'tr',
    { 'data-row': i },
    h('th.row', {
      scope: 'row',
      text: opts.rowLabels ? opts.rowLabels[i] : String(i),
      style: opts.rowAccent?.(i) ? `color:${opts.rowAccent(i)}` : undefined,
    }),
  );
  for (let j = 0; j < cols; j++) {
    const v = values[i * cols + j];
    const bg = opts.color ? opts.color(v, i, j) : null;
    const td = h('td', {
      'data-i': i,
      'data-j': j,
      'data-value': full(v),
      text: fmt(v, opts.digits ?? 3),
      title: opts.noTitle ? undefined : opts.cellTitle ? opts.cellTitle(v, i, j) : full(v),
      ...(opts.cellAttrs ? opts.cellAttrs(v, i, j) : {}),
    });
    if (bg) {
      td.style.background = bg;
      td.style.color = textOn(bg);
    }
    tr.append(td);
  }
  if (opts.rowExtra) tr.append(h('td.extra', { text: opts.rowExtra(i) }));
  return tr;
}
