// @ts-check
// Part 1 (step by step), the numbers: the parsers of the editable Q, K, V and of the softcap and window boxes, the
// tutorial's §5 example, and every stage of one attention call from attnlab: scaledDotProductAttention is called
// once per stage with the same options and another returnScores ('scaled' with scale 1 for QKᵀ, 'scaled',
// 'softcapped' when softcap is on, 'masked', whose call also gives the weights and the output). The clicked cells are
// the tutorial's 0/1 mask, filled with −1e9 (as its masked_fill does: passed as an additive float mask) or −∞ (a bool
// mask); isCausal (upper-left or lower-right) and window are attnlab's own masks, always −∞. No DOM.

import { errText } from '../../shared/format.js';
import { t } from '../../i18n.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').SdpaOptions} SdpaOptions */
/** @typedef {'off' | 'upper-left' | 'lower-right'} Causal */
/** @typedef {'causal' | 'window' | 'click'} Why why a cell is masked */

/**
 * What the controls set.
 * @typedef {object} SbsState
 * @property {string} q the Q box's text
 * @property {string} k
 * @property {string} v
 * @property {'default' | 'off' | 'custom'} scaleMode 1/√dₖ, 1 or custom
 * @property {number} custom
 * @property {number} temp the temperature T: the scale is divided by it
 * @property {Causal} causal
 * @property {'-1e9' | '-inf'} fill how the clicked cells are masked
 * @property {Set<string>} masked the clicked cells, 'i,j'
 * @property {boolean} softcapOn
 * @property {string} softcap the softcap box's text
 * @property {[string, string]} window the window boxes' texts
 */

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

/** @type {SbsState} */
export const START = {
  q: DEFAULT,
  k: DEFAULT,
  v: DEFAULT,
  scaleMode: 'default',
  custom: 0.5,
  temp: 1,
  causal: 'off',
  fill: '-1e9',
  masked: new Set(),
  softcapOn: false,
  softcap: '1',
  window: ['-1', '-1'],
};

/**
 * "1 0 1\n0, 1, 2" or "[[1,0],[0,1]]" → rows of numbers, or throws an Error in words.
 * @param {string} text
 * @param {string} name
 */
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

/**
 * A side of the sliding window from its box: a whole number ≥ −1 (−1 = unbounded), or throws an Error in words.
 * @param {string} text
 */
export function parseWindowSide(text) {
  const s = String(text).trim();
  const v = s === '' ? NaN : Number(s);
  if (!Number.isInteger(v) || v < -1 || v > 2 ** 31 - 1) throw new Error(t('sbs.errWindow', { v: s }));
  return v;
}

/**
 * The softcap c from its box: a finite number > 0, or throws an Error in words.
 * @param {string} text
 */
export function parseSoftcap(text) {
  const s = String(text).trim();
  const v = s === '' ? NaN : Number(s);
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(t('sbs.errSoftcap', { v: s }));
  return v;
}

/**
 * attnlab's weights for the §5 example (Q = K = V), next to which the page prints the tutorial's.
 * @param {Attnlab} attn
 */
export function sec5Weights(attn) {
  const x = { data: Float32Array.from(EXAMPLE.flat()), shape: [3, 4] };
  return attn.scaledDotProductAttention(x, x, x, { needWeights: true }).weights.data;
}

/**
 * Which of attnlab's rules removes key j from query i: 'causal', 'window' or null. Query i sits at the aligned
 * position p = i + offset (offset Lk − Lq with 'lower-right', else 0), as docs/api.md defines isCausal and window.
 * @param {number} i
 * @param {number} j
 * @param {{ causal: Causal, offset: number, window: number[] }} rules
 * @returns {'causal' | 'window' | null}
 */
export function ruleAt(i, j, { causal, offset, window: [left, right] }) {
  const p = i + offset;
  if (causal !== 'off' && j > p) return 'causal';
  if ((left >= 0 && j < p - left) || (right >= 0 && j > p + right)) return 'window';
  return null;
}

/**
 * "i + 2", "i − 1", "i" for the aligned position.
 * @param {number} offset
 */
export const aligned = (offset) => (offset === 0 ? 'i' : offset > 0 ? `i + ${offset}` : `i − ${-offset}`);

/**
 * The options as code, for the page.
 * @param {SdpaOptions} o
 */
export function optionsText(o) {
  const parts = [`scale: ${+o.scale.toPrecision(4)}`];
  if (o.isCausal) parts.push(`isCausal: '${o.isCausal}'`);
  if (o.window[0] !== -1 || o.window[1] !== -1) parts.push(`window: [${o.window.join(', ')}]`);
  if (o.softcap !== null) parts.push(`softcap: ${o.softcap}`);
  if (o.attnMask) parts.push(o.attnMask.data instanceof Uint8Array ? 'attnMask /* 0/1 */' : 'attnMask /* 0, -1e9 */');
  return `attn.scaledDotProductAttention(Q, K, V, { ${parts.join(', ')} })`;
}

/**
 * The masked stage's rule, as the tutorial would write it: masked_fill, then attnlab's causal and window rules.
 * @param {{ fill: string, causal: Causal, offset: number, win: number[] }} r
 */
export function ruleText({ fill, causal, offset, win }) {
  const text = [fill === '-1e9' ? 'masked_fill(mask == 0, -1e9)' : 'masked_fill(mask == 0, -inf)'];
  if (causal !== 'off') text.push(`isCausal: j > ${aligned(offset)} → −∞`);
  if (win[0] >= 0 || win[1] >= 0) {
    const p = offset === 0 ? 'i' : 'p';
    const lo = win[0] >= 0 ? `${p} − ${win[0]} ≤ ` : '';
    const hi = win[1] >= 0 ? ` ≤ ${p} + ${win[1]}` : '';
    text.push(`window: keeps ${lo}j${hi}${offset === 0 ? '' : `, p = ${aligned(offset)}`}, others → −∞`);
  }
  return text.join('; ');
}

/**
 * The inputs read from the boxes: Q, K, V as rows, the window and the softcap; throws an Error in words.
 * @param {SbsState} st
 */
function readInputs(st) {
  const Q = parseMatrix(st.q, 'Q');
  const K = parseMatrix(st.k, 'K');
  const V = parseMatrix(st.v, 'V');
  if (Q[0].length !== K[0].length) throw new Error(t('sbs.errDk', { q: Q[0].length, k: K[0].length }));
  if (K.length !== V.length) throw new Error(t('sbs.errKv', { k: K.length, v: V.length }));
  const win = st.window.map(parseWindowSide);
  const cap = st.softcapOn ? parseSoftcap(st.softcap) : null;
  return { Q, K, V, win, cap };
}

/**
 * The call's options: the scale (÷ T), isCausal, window, softcap, and the clicked cells as the tutorial's mask
 * (filled with −1e9: an additive float mask; with −∞: a bool mask, 1 = may attend).
 * @param {SbsState} st
 * @param {{ Lq: number, Lk: number, scale: number, win: number[], cap: number | null }} d
 * @returns {SdpaOptions}
 */
function callOptions(st, { Lq, Lk, scale, win, cap }) {
  const keep = new Uint8Array(Lq * Lk).fill(1);
  const add = new Float32Array(Lq * Lk);
  for (const key of st.masked) {
    const [i, j] = key.split(',').map(Number);
    keep[i * Lk + j] = 0;
    add[i * Lk + j] = -1e9;
  }
  const mask = st.fill === '-1e9' ? { data: add, shape: [Lq, Lk] } : { data: keep, shape: [Lq, Lk] };
  return {
    scale,
    isCausal: st.causal === 'off' ? false : st.causal,
    window: /** @type {[number, number]} */ (win),
    softcap: cap,
    attnMask: st.masked.size === 0 ? null : mask,
  };
}

/**
 * Every stage of the call for the state (ok: true), or { ok: false, error } (a message in words; role 'alert' for an
 * input that does not parse).
 * @param {Attnlab} attn
 * @param {SbsState} st
 */
export function runStages(attn, st) {
  let inputs;
  try {
    inputs = readInputs(st);
  } catch (e) {
    return { ok: /** @type {false} */ (false), error: /** @type {string} */ (e.message), role: 'alert' };
  }
  const { Q, K, V, win, cap } = inputs;
  const [Lq, Lk, dk, dv] = [Q.length, K.length, Q[0].length, V[0].length];
  const base = st.scaleMode === 'default' ? 1 / Math.sqrt(dk) : st.scaleMode === 'off' ? 1 : st.custom;
  if (!Number.isFinite(base)) return { ok: /** @type {false} */ (false), error: t('sbs.errScale'), role: undefined };
  const scale = base / st.temp;
  const [q, k, v] = [Q, K, V].map((m) => Float32Array.from(m.flat()));
  const offset = st.causal === 'lower-right' ? Lk - Lq : 0;
  const options = callOptions(st, { Lq, Lk, scale, win, cap });
  /** @param {SdpaOptions} extra */
  const call = (extra) =>
    attn.scaledDotProductAttention(
      { data: q, shape: [Lq, dk] },
      { data: k, shape: [Lk, dk] },
      { data: v, shape: [Lk, dv] },
      { ...options, needWeights: false, ...extra },
    );
  let stages;
  try {
    const raw = call({ scale: 1, returnScores: 'scaled' }).scores.data;
    const scaled = call({ returnScores: 'scaled' }).scores.data;
    const capped = cap !== null ? call({ returnScores: 'softcapped' }).scores.data : null;
    const res = call({ returnScores: 'masked', needWeights: true });
    stages = { raw, scaled, capped, masked: res.scores.data, W: res.weights.data, O: res.output.data };
  } catch (e) {
    return { ok: /** @type {false} */ (false), error: t('sbs.errAttn', { err: errText(e) }), role: undefined };
  }
  const rules = { causal: st.causal, offset, window: win };
  /** Why a cell is masked: attnlab's rules first (they are −∞ whatever the fill), then the clicked cells. */
  const why = (/** @type {number} */ i, /** @type {number} */ j) =>
    /** @type {Why | null} */ (ruleAt(i, j, rules) ?? (st.masked.has(`${i},${j}`) ? 'click' : null));
  const deadRows = [];
  for (let i = 0; i < Lq; i++) {
    let all = true;
    for (let j = 0; j < Lk && all; j++) all = why(i, j) !== null;
    if (all) deadRows.push(i);
  }
  return {
    ok: /** @type {true} */ (true),
    Lq,
    Lk,
    dk,
    dv,
    q,
    k,
    v,
    base,
    scale,
    offset,
    win,
    cap,
    options,
    why,
    deadRows,
    ...stages,
  };
}

/**
 * The largest |x| below 1e8 (a colour scale that the −1e9 fill does not flatten), or 1.
 * @param {ArrayLike<number>} a
 */
export function maxAbs(a) {
  let m = 0;
  for (let n = 0; n < a.length; n++) if (Number.isFinite(a[n]) && Math.abs(a[n]) < 1e8) m = Math.max(m, Math.abs(a[n]));
  return m || 1;
}

/**
 * The state with cell (i, j) clicked: masked if it was not, unmasked if it was.
 * @param {Set<string>} masked
 * @param {number} i
 * @param {number} j
 */
export function toggled(masked, i, j) {
  const next = new Set(masked);
  const key = `${i},${j}`;
  if (next.has(key)) next.delete(key);
  else next.add(key);
  return next;
}
