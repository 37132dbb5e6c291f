// @ts-check
// Validation of everything a caller hands to attnlab, before anything touches wasm memory.
//
// Rules (docs/api.md, "Errors"): TypeError for a wrong type, RangeError for a wrong size, shape or value, Error
// for a wrong state. Every message starts with the calling function, names the argument in its JS spelling and
// says what was expected and what was given.
//
// Every reader takes a caller value, reads each property it needs exactly ONCE (so getters that change their
// answer between reads cannot split validation from use) and returns a plain snapshot that the caller then
// uses. Typed-array facts (kind, length, detached) come from the engine's intrinsic getters, never from
// properties a subclass or a look-alike object could override.

/** Largest value of a single dimension: C++ receives dimensions as int and int64. */
export const kMaxDim = 2 ** 31 - 1;
/** Largest tensor rank accepted (a guard against absurd shape arrays). */
export const kMaxRank = 64;

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayTag = Object.getOwnPropertyDescriptor(TypedArrayPrototype, Symbol.toStringTag).get;
const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'length').get;
const typedArrayBuffer = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'buffer').get;
const arrayBufferDetached = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached')?.get;

/** The engine's name of a typed array ('Float32Array', …), whatever realm it comes from; undefined otherwise. */
export function typedArrayName(value) {
  return typedArrayTag.call(value);
}

function isDetached(typedArray) {
  const buffer = typedArrayBuffer.call(typedArray);
  if (arrayBufferDetached && buffer instanceof ArrayBuffer) return arrayBufferDetached.call(buffer);
  if (buffer.byteLength !== 0) return false;
  // Engines without ArrayBuffer.prototype.detached (Node 20): a detached buffer reports byteLength 0, like an
  // empty one, but refuses a new view.
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

/** A short description of a value for error messages: `Float64Array(6)`, `Array(3)`, `string "x"`, `null`. */
export function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  const tag = typedArrayName(value);
  if (tag) return `${tag}(${typedArrayLength.call(value)})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  switch (typeof value) {
    case 'number':
      return `number ${String(value)}`;
    case 'bigint':
      return `bigint ${String(value)}n`;
    case 'string':
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'boolean':
      return `boolean ${value}`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default: {
      if (value instanceof ArrayBuffer) return `ArrayBuffer(${value.byteLength})`;
      if (value instanceof Map) return 'a Map';
      return 'an object';
    }
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object';
}

/**
 * Reads an options object: undefined/null means {}; anything else must be a plain object whose keys are all in
 * `known`. Returns a null-prototype snapshot holding each known key read once.
 */
export function readOptions(ctx, options, name, known) {
  const out = Object.create(null);
  if (options === undefined || options === null) return out;
  if (!isObject(options) || Array.isArray(options) || typedArrayName(options)) {
    throw new TypeError(`${ctx}: ${name} must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(
        `${ctx}: unknown option ${JSON.stringify(key)} in ${name}; expected one of ${known.join(', ')}`,
      );
    }
  }
  for (const key of known) out[key] = options[key];
  return out;
}

/** A boolean option: true or false; undefined/null gives `defaultValue`. */
export function readBool(ctx, value, name, defaultValue) {
  if (value === undefined || value === null) return defaultValue;
  if (typeof value !== 'boolean') throw new TypeError(`${ctx}: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

/** A finite number option (e.g. scale); undefined/null gives undefined. */
export function readFiniteNumber(ctx, value, name) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw new TypeError(`${ctx}: ${name} must be a number, got ${describe(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`${ctx}: ${name} must be a finite number, got ${value}`);
  return value;
}

/**
 * A dimension given as an option (embedDim, numHeads, kdim, vdim): an integer in [min, kMaxDim].
 * undefined/null gives `defaultValue` (when that is undefined, the option is required).
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {{ min?: number, defaultValue?: number }} [limits]
 * @returns {number}
 */
export function readDim(ctx, value, name, { min = 1, defaultValue } = {}) {
  if (value === undefined || value === null) {
    if (defaultValue === undefined) throw new TypeError(`${ctx}: ${name} is required (a positive integer)`);
    return defaultValue;
  }
  if (typeof value !== 'number') {
    throw new TypeError(`${ctx}: ${name} must be a number (an integer >= ${min}), got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > kMaxDim) {
    throw new RangeError(`${ctx}: ${name} must be an integer in [${min}, ${kMaxDim}], got ${value}`);
  }
  return value;
}

/** A non-negative integer that fits a double exactly (seeds). */
export function readSafeInteger(ctx, value, name, defaultValue) {
  if (value === undefined || value === null) return defaultValue;
  if (typeof value !== 'number') throw new TypeError(`${ctx}: ${name} must be a number, got ${describe(value)}`);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${ctx}: ${name} must be a non-negative safe integer, got ${value}`);
  }
  return value;
}

/**
 * A model's outputAttentions: true (every layer), false / undefined (none: null), or a list of layer indices in
 * [0, numLayers). (Read here, not left to C++, because generate needs it before its first step.)
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} name
 * @param {number} numLayers
 * @returns {number[] | null}
 */
export function readLayers(ctx, value, name, numLayers) {
  const L = numLayers;
  if (value === undefined || value === null || value === false) return null;
  if (value === true) return Array.from({ length: L }, (_, l) => l);
  if (!Array.isArray(value)) {
    throw new TypeError(`${ctx}: ${name} must be a boolean or an array of layer indices, got ${describe(value)}`);
  }
  return value.map((l, i) => {
    if (typeof l !== 'number') throw new TypeError(`${ctx}: ${name}[${i}] must be a number, got ${describe(l)}`);
    if (!Number.isInteger(l) || l < 0 || l >= L) {
      throw new RangeError(`${ctx}: ${name}[${i}] must be a layer index in [0, ${L}), got ${l}`);
    }
    return l;
  });
}

/**
 * A loop's `signal` option: an AbortSignal (anything with a boolean `aborted`), or null when absent.
 * @param {string} ctx
 * @param {unknown} value
 * @returns {any}
 */
export function readSignal(ctx, value) {
  const signal = value ?? null;
  if (signal !== null && (typeof signal !== 'object' || typeof (/** @type {any} */ (signal).aborted) !== 'boolean')) {
    throw new TypeError(`${ctx}: signal must be an AbortSignal, got ${describe(signal)}`);
  }
  return signal;
}

/** Reads and checks a shape array; returns a fresh number[] and the element count. */
export function readShape(ctx, shape, name) {
  if (!Array.isArray(shape)) {
    throw new TypeError(`${ctx}: ${name} must be an array of non-negative integers, got ${describe(shape)}`);
  }
  const rank = shape.length;
  if (rank > kMaxRank)
    throw new RangeError(`${ctx}: ${name} has ${rank} dimensions; at most ${kMaxRank} are supported`);
  const out = new Array(rank);
  let size = 1;
  for (let i = 0; i < rank; ++i) {
    const d = shape[i];
    if (typeof d !== 'number') {
      throw new TypeError(`${ctx}: ${name}[${i}] must be a number (a non-negative integer), got ${describe(d)}`);
    }
    if (!Number.isInteger(d) || d < 0 || d > kMaxDim) {
      throw new RangeError(
        `${ctx}: ${name}[${i}] must be an integer in [0, ${kMaxDim}], got ${d} (shape [${shapeText(shape)}])`,
      );
    }
    out[i] = d;
    size *= d; // may exceed 2^53 for absurd shapes: still far above any real length, so the check below fails
  }
  return { shape: out, size };
}

function shapeText(shape) {
  return Array.from(shape, (d) => (typeof d === 'number' ? String(d) : describe(d))).join(', ');
}

function readTypedData(ctx, data, name, allowed) {
  const tag = typedArrayName(data);
  if (!tag || !allowed.includes(tag)) {
    const hint = Array.isArray(data) ? ` (convert with new ${allowed[0]}(array))` : '';
    const article = /^[AEIOU]/.test(allowed[0]) ? 'an' : 'a';
    throw new TypeError(`${ctx}: ${name} must be ${article} ${allowed.join(' or a ')}, got ${describe(data)}${hint}`);
  }
  if (isDetached(data)) throw new TypeError(`${ctx}: ${name} is backed by a detached ArrayBuffer`);
  return { data, tag, length: typedArrayLength.call(data) };
}

/** The `type` strings of onnxruntime-web's and transformers.js's tensors that match each data kind. */
const kTensorTypes = { Float32Array: ['float32'], Uint8Array: ['bool', 'uint8'], Int32Array: ['int32'] };

/**
 * `{ data, shape }`, or `{ data, dims }` as onnxruntime-web's and transformers.js's tensors (and their Tensor
 * objects) have it; such a tensor's `type`, when present, must match its data.
 */
export function readTensorLike(ctx, value, name, allowed, what) {
  if (!isObject(value) || Array.isArray(value) || typedArrayName(value)) {
    const hint = typedArrayName(value) ? ` (wrap it: { data, shape })` : '';
    throw new TypeError(`${ctx}: ${name} must be ${what}, got ${describe(value)}${hint}`);
  }
  const rawData = value.data; // each read once
  let rawShape = value.shape;
  let shapeName = `${name}.shape`;
  let type;
  if (rawShape === undefined && 'dims' in value) {
    rawShape = value.dims;
    shapeName = `${name}.dims`;
    type = value.type;
  }
  const { data, tag, length } = readTypedData(ctx, rawData, `${name}.data`, allowed);
  if (typeof type === 'string' && !kTensorTypes[tag].includes(type)) {
    throw new TypeError(
      `${ctx}: ${name}.type must be ${kTensorTypes[tag].map((t) => `'${t}'`).join(' or ')} for a ${tag}, got '${type}'`,
    );
  }
  const { shape, size } = readShape(ctx, rawShape, shapeName);
  if (length !== size) {
    throw new RangeError(
      `${ctx}: ${name}.data has ${length} elements but ${shapeName} [${shape.join(', ')}] needs ${size}`,
    );
  }
  return { data, tag, shape, size, bytes: length * (tag === 'Uint8Array' ? 1 : 4), name: `${name}.data` };
}

/**
 * Checks that a buffer read by readTensor/readMask/readTokens/readParameter still has the length it was validated
 * with: a getter of a later argument may have resized (resizable ArrayBuffer) or detached it in between.
 */
export function checkUnchanged(ctx, buffer) {
  if (isDetached(buffer.data)) {
    throw new TypeError(`${ctx}: ${buffer.name} was detached after it was checked (by a getter of a later argument?)`);
  }
  const length = typedArrayLength.call(buffer.data);
  if (length !== buffer.size) {
    throw new RangeError(
      `${ctx}: ${buffer.name} changed after it was checked: expected ${buffer.size} elements, got ${length} ` +
        '(its buffer was resized, by a getter of a later argument?)',
    );
  }
}

/** A Tensor `{ data: Float32Array, shape: number[] }`. */
export function readTensor(ctx, value, name) {
  return readTensorLike(ctx, value, name, ['Float32Array'], 'a tensor { data: Float32Array, shape: number[] }');
}

/**
 * Token ids `{ data: Int32Array, shape: [B, T] }` with B, T >= 1. The ids' range ([0, vocabSize)) is checked by
 * the model, which knows vocabSize.
 */
export function readTokens(ctx, value, name) {
  const tokens = readTensorLike(ctx, value, name, ['Int32Array'], 'an object { data: Int32Array, shape: [B, T] }');
  const { shape } = tokens;
  if (shape.length !== 2 || shape[0] < 1 || shape[1] < 1) {
    throw new RangeError(`${ctx}: ${name}.shape must be [B, T] with B, T >= 1, got [${shape.join(', ')}]`);
  }
  return tokens;
}

/**
 * An optional Mask `{ data: Uint8Array | Float32Array, shape }`; undefined/null gives null. Its `tag` says which
 * kind (bool or additive float) it is.
 */
export function readMask(ctx, value, name) {
  if (value === undefined || value === null) return null;
  return readTensorLike(
    ctx,
    value,
    name,
    ['Uint8Array', 'Float32Array'],
    'a mask { data: Uint8Array | Float32Array, shape: number[] }',
  );
}

/**
 * An optional Int32Array (e.g. kvLengths) as a checked buffer of shape [length]; undefined/null gives null.
 * A plain Array or another typed array is a TypeError.
 */
export function readInt32Array(ctx, value, name) {
  if (value === undefined || value === null) return null;
  const { data, tag, length } = readTypedData(ctx, value, name, ['Int32Array']);
  return { data, tag, shape: [length], size: length, bytes: length * 4, name };
}

/** A state-dict value: a Float32Array (takes `expectedShape`) or a Tensor. */
export function readParameter(ctx, value, name, expectedShape) {
  if (typedArrayName(value) === 'Float32Array') {
    const { data, length } = readTypedData(ctx, value, name, ['Float32Array']);
    if (!expectedShape) return { data, shape: [length], size: length, bytes: length * 4, name };
    const size = expectedShape.reduce((a, b) => a * b, 1);
    if (length !== size) {
      throw new RangeError(
        `${ctx}: ${name} has ${length} elements, expected ${size} (shape [${expectedShape.join(', ')}])`,
      );
    }
    return { data, shape: expectedShape.slice(), size, bytes: length * 4, name };
  }
  if (!isObject(value) || Array.isArray(value) || typedArrayName(value)) {
    throw new TypeError(
      `${ctx}: ${name} must be a Float32Array or a tensor { data: Float32Array, shape }, got ${describe(value)}`,
    );
  }
  return readTensor(ctx, value, name);
}

/** Formats a byte count for messages: "6.4 GB (6400000000 bytes)". */
export function formatBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    ++u;
  }
  return u === 0 ? `${bytes} bytes` : `${v.toFixed(1)} ${units[u]} (${bytes} bytes)`;
}

/**
 * Throws a RangeError before anything is allocated when the buffers of one call (`parts`, a list of
 * [description, bytes]: the inputs, and what the C++ side reports it will allocate) cannot fit in `limitBytes`,
 * the module's memory cap. `names` says which arguments are responsible, in JS spelling.
 */
export function checkFits(ctx, names, parts, limitBytes) {
  let total = 0;
  for (const [, bytes] of parts) total += bytes;
  if (total < limitBytes) return;
  const detail = parts
    .filter(([, bytes]) => bytes > 0)
    .map(([what, bytes]) => `${what}: ${formatBytes(bytes)}`)
    .join('; ');
  throw new RangeError(
    `${ctx}: ${names} too large: this call needs at least ${formatBytes(total)} of wasm memory, ` +
      `more than the ${formatBytes(limitBytes)} that attnlab's WebAssembly memory is capped at (${detail})`,
  );
}

// C++ (snake_case) argument names → the JS spelling used everywhere in the JS API. The one place that maps them.
const kCppToJsNames = {
  attn_mask: 'attnMask',
  key_padding_mask: 'keyPaddingMask',
  embed_dim: 'embedDim',
  num_heads: 'numHeads',
  add_bias_kv: 'addBiasKV',
  add_zero_attn: 'addZeroAttn',
  batch_first: 'batchFirst',
  is_causal: 'isCausal',
  need_weights: 'needWeights',
  average_attn_weights: 'averageAttnWeights',
  has_scale: 'scale',
  grad_output: 'gradOutput',
  grad_query: 'gradQuery',
  grad_key: 'gradKey',
  grad_value: 'gradValue',
  state_dict: 'stateDict',
  load_state_dict: 'loadStateDict',
  requires_grad: 'requiresGrad',
  grad_params: 'gradParams',
  vocab_size: 'vocabSize',
  enable_gqa: 'enableGQA',
  causal_align: 'isCausal',
  kv_lengths: 'kvLengths',
  num_kv_lengths: 'kvLengths.length',
  window_left: 'window[0]',
  window_right: 'window[1]',
  return_scores: 'returnScores',
  past_key: 'pastKey',
  past_value: 'pastValue',
  present_key: 'presentKey',
  present_value: 'presentValue',
  grad_past_key: 'gradPastKey',
  grad_past_value: 'gradPastValue',
  num_kv_heads: 'numKVHeads',
  kv_cache: 'kvCache',
  create_kv_cache: 'mha.createKVCache',
  max_length: 'maxLength',
  batch_size: 'batchSize',
};
const kCppNamePattern = new RegExp(`\\b(?:${Object.keys(kCppToJsNames).join('|')})\\b`, 'g');

/** Rewrites the C++ argument names in a message to their JS spelling. State-dict names (in_proj_weight…) stay. */
export function jsNames(message) {
  return String(message).replace(kCppNamePattern, (name) => kCppToJsNames[name]);
}
