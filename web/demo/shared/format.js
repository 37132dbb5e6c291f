// @ts-check
// Numbers and errors as the page writes them. No DOM.

/**
 * Compact number format for matrix cells: −, ∞ and NaN spelled out, a non-zero value never shown as 0.
 * @param {number} v
 */
export function fmt(v, digits = 3) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replaceAll('-', '−');
  const r = +v.toFixed(digits);
  if (r === 0) return v.toExponential(1).replaceAll('-', '−');
  return r.toString().replaceAll('-', '−');
}

/**
 * Full-precision number for tooltips and data- attributes.
 * @param {number} v
 */
export function full(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return String(v);
}

/**
 * Error → "RangeError: message" in one line.
 * @param {unknown} e
 */
export function errText(e) {
  if (e && typeof e === 'object' && 'message' in e) return `${/** @type {Error} */ (e).name || 'Error'}: ${e.message}`;
  return String(e);
}

/**
 * A token label shortened for an axis: at most n characters, the last one an ellipsis.
 * @param {string} s
 */
export function shortLabel(s, n = 6) {
  const chars = [...s];
  return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : s;
}
