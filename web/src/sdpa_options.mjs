// @ts-check
// The modern options of scaledDotProductAttention(Backward) (docs/api.md, "Modern attention"): enableGQA, isCausal's
// alignment, kvLengths, window, softcap, returnScores, pastKey/pastValue. Read and checked here, in their JS
// spelling, before anything touches wasm memory; the C++ side checks them again (its messages are translated by
// validate.mjs's jsNames).

import { describe, readBool, readInt32Array, readTensor } from './validate.mjs';

/** @typedef {ReturnType<typeof readTensor>} Buffer */

const kAlignments = ['upper-left', 'lower-right'];
const kScoreStages = ['scaled', 'softcapped', 'masked'];

/**
 * isCausal: a boolean (true = 'upper-left') or one of the alignment strings.
 * @param {string} ctx
 * @param {unknown} value
 * @returns {{ isCausal: boolean, align: string }}
 */
export function readCausal(ctx, value) {
  if (value === undefined || value === null || typeof value === 'boolean') {
    return { isCausal: value === true, align: 'upper-left' };
  }
  if (typeof value !== 'string') {
    throw new TypeError(`${ctx}: isCausal must be a boolean or 'upper-left' | 'lower-right', got ${describe(value)}`);
  }
  if (!kAlignments.includes(value)) {
    throw new RangeError(`${ctx}: isCausal must be true, false, 'upper-left' or 'lower-right', got ${describe(value)}`);
  }
  return { isCausal: true, align: value };
}

/**
 * window: [left, right], each an integer >= -1 (-1 = unbounded); undefined/null gives [-1, -1].
 * @param {string} ctx
 * @param {unknown} value
 * @returns {[number, number]}
 */
export function readWindow(ctx, value) {
  if (value === undefined || value === null) return [-1, -1];
  if (!Array.isArray(value)) {
    throw new TypeError(`${ctx}: window must be an array [left, right] of integers >= -1, got ${describe(value)}`);
  }
  if (value.length !== 2) {
    throw new RangeError(`${ctx}: window must be [left, right] (2 entries), got ${value.length} entries`);
  }
  const out = /** @type {[number, number]} */ ([0, 0]);
  for (let i = 0; i < 2; ++i) {
    const x = value[i];
    const side = i === 0 ? 'left' : 'right';
    if (typeof x !== 'number') {
      throw new TypeError(`${ctx}: window[${i}] (${side}) must be an integer >= -1, got ${describe(x)}`);
    }
    if (!Number.isInteger(x) || x < -1 || x > 2 ** 31 - 1) {
      throw new RangeError(`${ctx}: window[${i}] (${side}) must be an integer >= -1 (-1 = unbounded), got ${x}`);
    }
    out[i] = x;
  }
  return out;
}

/**
 * softcap: a finite number > 0 that fits a float32; undefined/null gives 0 (none).
 * @param {string} ctx
 * @param {unknown} value
 */
export function readSoftcap(ctx, value) {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number') throw new TypeError(`${ctx}: softcap must be a number, got ${describe(value)}`);
  if (!(value > 0) || !Number.isFinite(Math.fround(value)) || Math.fround(value) === 0) {
    throw new RangeError(`${ctx}: softcap must be a finite number > 0 (a float32), got ${value}`);
  }
  return value;
}

/**
 * returnScores: 'scaled' | 'softcapped' | 'masked'; undefined/null gives null.
 * @param {string} ctx
 * @param {unknown} value
 * @returns {string | null}
 */
export function readScores(ctx, value) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new TypeError(`${ctx}: returnScores must be 'scaled', 'softcapped' or 'masked', got ${describe(value)}`);
  }
  if (!kScoreStages.includes(value)) {
    throw new RangeError(`${ctx}: returnScores must be 'scaled', 'softcapped' or 'masked', got ${describe(value)}`);
  }
  return value;
}

/**
 * With enableGQA: query and key have the same rank (>= 3), the same batch dims but the last (the heads), and
 * key's heads divide query's.
 * @param {string} ctx
 * @param {Buffer} q
 * @param {Buffer} k
 */
function checkGroups(ctx, q, k) {
  const r = q.shape.length;
  if (r < 3 || k.shape.length !== r) {
    throw new RangeError(
      `${ctx}: enableGQA needs query and key of the same rank with a head dimension (*batch, H, L, d): got ` +
        `query [${q.shape.join(', ')}] and key [${k.shape.join(', ')}]`,
    );
  }
  for (let i = 0; i < r - 3; ++i) {
    if (q.shape[i] !== k.shape[i]) {
      throw new RangeError(
        `${ctx}: with enableGQA, key's batch dimension ${i} must equal query's (${q.shape[i]}), got ${k.shape[i]}`,
      );
    }
  }
  const hq = q.shape[r - 3];
  const hkv = k.shape[r - 3];
  if (hkv === 0 ? hq !== 0 : hq % hkv !== 0) {
    throw new RangeError(
      `${ctx}: with enableGQA, key's heads (its last batch dimension, ${hkv}) must divide query's (${hq})`,
    );
  }
}

/**
 * kvLengths: one length per item of query's first batch dimension (1 without batch dimensions), each in
 * [0, number of keys] (pastKey's included).
 * @param {string} ctx
 * @param {ReturnType<typeof readInt32Array>} lengths
 * @param {Buffer} q
 * @param {number} keys
 */
function checkLengths(ctx, lengths, q, keys) {
  const items = q.shape.length > 2 ? q.shape[0] : 1;
  if (lengths.size !== items) {
    throw new RangeError(
      `${ctx}: kvLengths must have ${items} entries (one per item of query's first batch dimension), ` +
        `got ${lengths.size}`,
    );
  }
  for (let i = 0; i < lengths.size; ++i) {
    const n = lengths.data[i];
    if (n < 0 || n > keys) {
      throw new RangeError(`${ctx}: kvLengths[${i}] must be in [0, ${keys}] (the number of keys), got ${n}`);
    }
  }
}

/**
 * Reads the modern options of a checked call (`o` from readOptions; `known` tells which it accepts).
 * @param {string} ctx
 * @param {Record<string, unknown>} o
 * @param {string[]} known
 * @param {Buffer} q
 * @param {Buffer} k
 */
export function readModernOptions(ctx, o, known, q, k) {
  const { isCausal, align } = readCausal(ctx, o.isCausal);
  const enableGQA = readBool(ctx, o.enableGQA, 'enableGQA', false);
  const kvLengths = readInt32Array(ctx, o.kvLengths, 'kvLengths');
  const window = readWindow(ctx, o.window);
  const softcap = readSoftcap(ctx, o.softcap);
  const returnScores = known.includes('returnScores') ? readScores(ctx, o.returnScores) : null;
  const has = (/** @type {unknown} */ x) => x !== undefined && x !== null;
  const pastKey = has(o.pastKey) ? readTensor(ctx, o.pastKey, 'pastKey') : null;
  const pastValue = has(o.pastValue) ? readTensor(ctx, o.pastValue, 'pastValue') : null;
  if (!pastKey !== !pastValue) {
    const [given, missing] = pastKey ? ['pastKey', 'pastValue'] : ['pastValue', 'pastKey'];
    throw new TypeError(`${ctx}: ${missing} is required when ${given} is given (the cache has both)`);
  }
  if (enableGQA) checkGroups(ctx, q, k);
  if (kvLengths) {
    const r = k.shape.length;
    const past = pastKey && pastKey.shape.length === r ? pastKey.shape[r - 2] : 0;
    checkLengths(ctx, kvLengths, q, (r >= 2 ? k.shape[r - 2] : 0) + past);
  }
  return { isCausal, align, enableGQA, kvLengths, window, softcap, returnScores, pastKey, pastValue };
}
