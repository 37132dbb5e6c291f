// @ts-check
// Generation: sampling (temperature, topK, topP over the package's seeded generator, rng.mjs) and the step loop of
// model.generate, one forward per token through a KV cache. The worker host (worker-host.mjs) runs the same
// loop one step at a time (startGeneration), yielding to its messages in between; model.generate runs it through.

import { decoderOnly } from './encoder.mjs';
import { kUsable } from './model.mjs';
import { createRng } from './rng.mjs';
import { startSeq2SeqGeneration } from './seq2seq.mjs';
import {
  describe,
  readDim,
  readFiniteNumber,
  readLayers,
  readOptions,
  readSafeInteger,
  readSignal,
  readTokens,
  typedArrayName,
} from './validate.mjs';

/** @typedef {import('./transformer.mjs').Transformer} Transformer */
/** @typedef {import('./kv_cache.mjs').KVCache} KVCache */

const kGenerateOptions = [
  'maxNewTokens',
  'temperature',
  'topK',
  'topP',
  'seed',
  'onToken',
  'outputAttentions',
  'eosTokenId',
  'signal',
];

/**
 * The model's one forward of checked inputs, as generation calls it (transformer.mjs defines it):
 * model[kRawForward](ctx, tokens, { layers, hidden, mask, headMask, cache, last }) → the raw result.
 */
export const kRawForward = Symbol('attnlab.rawForward');
/** model[kForwardArgs](tokens, options) → { args, inputs, place }: kRawForward's raw arguments (transformer.mjs). */
export const kForwardArgs = Symbol('attnlab.forwardArgs');

// ---------------------------------------------------------------------------------------------------------------
// Sampling.

/**
 * The next id from one row of logits: argmax at temperature 0 (the first maximum), else a draw from
 * softmax(logits / temperature) restricted to the topK largest (ties: smaller id first), then to the smallest
 * prefix of those, by decreasing probability, whose probability reaches topP (Hugging Face's warpers, in their
 * order). One uniform number per draw; candidates are walked by decreasing probability (ids in order when neither
 * topK nor topP restricts them).
 * @param {Float32Array} row
 * @param {{ temperature: number, topK: number, topP: number }} s
 * @param {() => number} random
 */
export function sampleToken(row, { temperature, topK, topP }, random) {
  const n = row.length;
  const value = (/** @type {number} */ i) => (Number.isNaN(row[i]) ? -Infinity : row[i]);
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < n; ++i) if (value(i) > value(best)) best = i;
    return best;
  }
  const better = (/** @type {number} */ a, /** @type {number} */ b) => value(b) - value(a) || a - b;
  /** @type {number[] | null} candidates by decreasing probability; null: every id, in id order */
  let ids = topK < n ? largest(n, topK, better) : null;
  if (topP < 1) ids = nucleus(row, value, ids, temperature, topP, better);
  const count = ids ? ids.length : n;
  const id = (/** @type {number} */ j) => (ids ? ids[j] : j);
  let max = -Infinity;
  for (let j = 0; j < count; ++j) max = Math.max(max, value(id(j)));
  const weights = new Float64Array(count);
  let total = 0;
  for (let j = 0; j < count; ++j) {
    weights[j] = max === -Infinity ? 1 : Math.exp((value(id(j)) - max) / temperature);
    total += weights[j];
  }
  let u = random() * total;
  for (let j = 0; j < count; ++j) {
    u -= weights[j];
    if (u < 0) return id(j);
  }
  return id(count - 1);
}

/**
 * topP: the smallest prefix of the candidates (by decreasing probability) whose probability reaches topP · their
 * total, at least one. Without topK, found from a native sort of the values, not of the ids.
 * @param {Float32Array} row
 * @param {(i: number) => number} value row[i], NaN as -Infinity
 * @param {number[] | null} ids candidates by decreasing probability, or null for all
 * @param {number} temperature
 * @param {number} topP
 * @param {(a: number, b: number) => number} better
 */
function nucleus(row, value, ids, temperature, topP, better) {
  let values;
  if (ids) {
    values = Float64Array.from(ids, value);
  } else {
    values = new Float64Array(row.length);
    for (let i = 0; i < row.length; ++i) values[i] = value(i);
    values.sort().reverse();
  }
  const max = values[0];
  const weight = (/** @type {number} */ v) => (max === -Infinity ? 1 : Math.exp((v - max) / temperature));
  let total = 0;
  for (const v of values) total += weight(v);
  let count = 0;
  for (let before = 0; count < values.length && (count === 0 || before < topP * total); ++count) {
    before += weight(values[count]);
  }
  if (ids) return ids.slice(0, count);
  // The ids of the first `count` values: those above the last one kept, then its ties by id.
  const last = values[count - 1];
  const kept = [];
  for (let i = 0; i < row.length; ++i) if (value(i) > last) kept.push(i);
  for (let i = 0; i < row.length && kept.length < count; ++i) if (value(i) === last) kept.push(i);
  return kept.sort(better);
}

/**
 * The k ids of [0, n) first in `before`'s order, in that order: a heap of k (O(n log k)), for topK ≪ vocabSize.
 * @param {number} n
 * @param {number} k
 * @param {(a: number, b: number) => number} before
 */
function largest(n, k, before) {
  /** @type {number[]} */
  const heap = []; // heap[0]: the last of the k kept so far
  const sift = (/** @type {number} */ i) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l], heap[m]) > 0) m = l;
      if (r < heap.length && before(heap[r], heap[m]) > 0) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  for (let id = 0; id < n; ++id) {
    if (heap.length < k) {
      heap.push(id);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (before(heap[i], heap[parent]) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (before(id, heap[0]) < 0) {
      heap[0] = id;
      sift(0);
    }
  }
  return heap.sort(before);
}

/**
 * The error a generation or training loop stopped by `signal` throws: its reason when that is an Error, else an
 * AbortError.
 * @param {string} ctx
 * @param {any} signal
 */
export function abortError(ctx, signal) {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(`${ctx}: aborted`, 'AbortError');
}

// ---------------------------------------------------------------------------------------------------------------
// The step loop.

/**
 * A generation checked up front and run one token per step() (worker-host.mjs yields to its messages between
 * steps; generate() runs it through).
 * @typedef {{ step: () => ({ id: number, step: number, attentions?: Array<{ data: Float32Array, shape: number[] }
 *   | null> } | null), close: () => void, onToken: Function | null, signal: any }} Generation
 */

/**
 * New ids after `prompt`, one forward per token through a KV cache: greedy at temperature 0, else seeded
 * sampling (sampleToken). Returns an Int32Array of the new ids (model.generate).
 * @param {Transformer} model
 * @param {unknown} prompt Int32Array
 * @param {unknown} [options]
 */
export function generate(model, prompt, options) {
  const ctx = 'model.generate';
  const run = startGeneration(model, ctx, prompt, options);
  /** @type {number[]} */
  const ids = [];
  try {
    for (;;) {
      if (run.signal?.aborted) throw abortError(ctx, run.signal);
      const next = run.step();
      if (!next) break;
      ids.push(next.id);
      if (run.onToken) {
        const info = next.attentions ? { attentions: next.attentions } : undefined;
        if (run.onToken(next.id, next.step, info) === false) break;
      }
    }
  } finally {
    run.close();
  }
  return Int32Array.from(ids);
}

/**
 * A generation of `model`, checked up front (as model.generate checks its arguments) and run one token per step():
 * { step() → { id, step, attentions? } | null, close(), onToken, signal }. step() returns null once maxNewTokens
 * ids (or an eosTokenId) have come.
 * @param {unknown} model a Transformer
 * @param {string} ctx
 * @param {unknown} prompt
 * @param {unknown} options
 * @returns {Generation}
 */
export function startGeneration(model, ctx, prompt, options) {
  if (typeof (/** @type {any} */ (model)?.[kRawForward]) !== 'function') {
    throw new TypeError(`${ctx}: not a model made by createModel or loadModel`);
  }
  const m = /** @type {Transformer} */ (model);
  m[kUsable](ctx);
  const seq2seq = m.kind === 'encoder-decoder'; // (prompt: the encoder's ids; seq2seq.mjs runs the steps)
  if (!seq2seq) decoderOnly(m, ctx);
  const config = /** @type {any} */ (m.config); // (a text model's: decoderOnly let no vision model through)
  const ids = readPrompt(ctx, prompt, config.vocabSize);
  const o = readGenerateOptions(ctx, options, seq2seq ? 0 : ids.length, config);
  const random = createRng(o.seed);
  if (seq2seq) {
    if (o.layers || o.stops.size > 0) {
      const name = o.layers ? 'outputAttentions' : 'eosTokenId';
      throw new RangeError(`${ctx}: ${name}: not available for an encoder–decoder (eos is config.eosTokenId)`);
    }
    return startSeq2SeqGeneration(m, ctx, ids, { ...o, random });
  }
  const H = m.config.numHeads;
  const layers = o.layers;
  let cache = /** @type {KVCache | null} */ (null);
  let step = 0;
  let last = -1;
  const forward = (/** @type {Int32Array} */ data, /** @type {boolean} */ withAttentions) => {
    const t = readTokens(ctx, { data, shape: [1, data.length] }, 'tokens');
    // (only the last position's logits: a long prompt never holds T · vocabSize floats)
    const f = { layers: withAttentions ? layers : null, hidden: false, mask: null, headMask: null, cache, last: true };
    return m[kRawForward](ctx, t, f);
  };
  return {
    onToken: o.onToken,
    signal: o.signal,
    step: () => {
      if (step >= o.maxNewTokens || o.stops.has(last)) return null;
      let raw;
      if (step === 0) {
        cache = m.createKVCache({ batchSize: 1, maxLength: Math.max(ids.length, ids.length + o.maxNewTokens - 1) });
        // With attention rows asked for, the prompt's last token runs alone: only its rows are of size T.
        if (layers && ids.length > 1) forward(ids.subarray(0, ids.length - 1), false);
        raw = forward(layers ? ids.subarray(ids.length - 1) : ids, layers !== null);
      } else {
        raw = forward(Int32Array.of(last), layers !== null);
      }
      const [row] = raw.logits; // (1, 1, V)
      last = sampleToken(row, o.sampling, random);
      /** @type {{ id: number, step: number, attentions?: Array<{ data: Float32Array, shape: number[] } | null> }} */
      const out = { id: last, step: step++ };
      if (layers) {
        const S = /** @type {KVCache} */ (cache).length; // the keys of the query that chose the id
        out.attentions = raw.attentions.map((a) => (a ? { data: a[0], shape: [H, S] } : null));
      }
      return out;
    },
    close: () => {
      cache?.dispose();
      cache = null;
    },
  };
}

/**
 * generate's prompt: an Int32Array of at least one token id in [0, V), copied (the caller may change theirs).
 * @param {string} ctx
 * @param {unknown} prompt
 * @param {number} V
 */
function readPrompt(ctx, prompt, V) {
  if (typedArrayName(prompt) !== 'Int32Array') {
    const hint = Array.isArray(prompt) ? ' (convert with new Int32Array(array))' : '';
    throw new TypeError(`${ctx}: prompt must be an Int32Array of token ids, got ${describe(prompt)}${hint}`);
  }
  const ids = Int32Array.from(/** @type {Int32Array} */ (prompt));
  if (ids.length === 0) throw new RangeError(`${ctx}: prompt must hold at least one token id, got none`);
  ids.forEach((id, i) => {
    if (id < 0 || id >= V) throw new RangeError(`${ctx}: prompt[${i}] must be a token id in [0, ${V}), got ${id}`);
  });
  return ids;
}

/**
 * generate's options, every one checked before the first step.
 * @param {string} ctx
 * @param {unknown} options
 * @param {number} promptLength
 * @param {{ vocabSize: number, contextLength: number, numLayers: number }} config
 */
function readGenerateOptions(ctx, options, promptLength, { vocabSize: V, contextLength, numLayers }) {
  if (options === undefined || options === null) {
    throw new TypeError(`${ctx}: options { maxNewTokens, … } are required, got ${describe(options)}`);
  }
  const o = readOptions(ctx, options, 'options', kGenerateOptions);
  const maxNewTokens = readDim(ctx, o.maxNewTokens, 'maxNewTokens', { min: 0 });
  if (promptLength + maxNewTokens > contextLength) {
    throw new RangeError(
      `${ctx}: prompt length ${promptLength} + maxNewTokens ${maxNewTokens} must be at most contextLength ` +
        `${contextLength}, got ${promptLength + maxNewTokens}`,
    );
  }
  const temperature = readFiniteNumber(ctx, o.temperature, 'temperature') ?? 1;
  if (temperature < 0) throw new RangeError(`${ctx}: temperature must be >= 0 (0 = greedy), got ${temperature}`);
  const topK = o.topK === undefined || o.topK === null ? V : readDim(ctx, o.topK, 'topK');
  const topP = readFiniteNumber(ctx, o.topP, 'topP') ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new RangeError(`${ctx}: topP must be in (0, 1], got ${topP}`);
  const seed = readSafeInteger(ctx, o.seed, 'seed', 0);
  const onToken = o.onToken ?? null;
  if (onToken !== null && typeof onToken !== 'function') {
    throw new TypeError(`${ctx}: onToken must be a function (id, step, info) => …, got ${describe(onToken)}`);
  }
  const layers = readLayers(ctx, o.outputAttentions, 'outputAttentions', numLayers);
  const stops = readEos(ctx, o.eosTokenId, V);
  const signal = readSignal(ctx, o.signal);
  return { maxNewTokens, sampling: { temperature, topK, topP }, seed, onToken, layers, stops, signal };
}

/**
 * generate's eosTokenId: an id or a list of ids after which generation stops (the id is returned); none by default.
 * @param {string} ctx
 * @param {unknown} value
 * @param {number} V
 */
function readEos(ctx, value, V) {
  if (value === undefined || value === null) return new Set();
  const list = Array.isArray(value) ? value : [value];
  const name = Array.isArray(value) ? (/** @type {number} */ i) => `eosTokenId[${i}]` : () => 'eosTokenId';
  return new Set(
    list.map((id, i) => {
      if (typeof id !== 'number') throw new TypeError(`${ctx}: ${name(i)} must be a token id, got ${describe(id)}`);
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new RangeError(`${ctx}: ${name(i)} must be a token id in [0, ${V}), got ${id}`);
      }
      return id;
    }),
  );
}
