// @ts-check
// The one safetensors codec of attnlab's JavaScript (the package, the demo, the scripts and the tests use it).
// A .safetensors file is an 8-byte little-endian header length N, N bytes of JSON header, then the tensors' bytes.
// readSafetensors(bytes) → { name: { data: Float32Array, shape, dtype } }: F32 is copied; F16 and BF16 keep their
// 16-bit values (`bits`, which loadModel keeps 16-bit in wasm memory) and widen to float32 exactly only when `data`
// is first read (a lazy getter, cached); other valid dtypes come as { data: null, bytes, shape, dtype }. The header's
// __metadata__ is the result's non-enumerable `__metadata__`. readSafetensors(blob) reads a Blob / File one tensor's
// byte range at a time (a Promise). Every offset and size is checked against the file before anything is read or
// allocated: a lying header is a RangeError, never a read out of bounds. writeSafetensors is the inverse.

import { describe, typedArrayName } from './validate.mjs';

const ctx = 'readSafetensors';

const kLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The `count` little-endian 16-bit values at byte `begin`: a view of the file's bytes where it can be (aligned, on
 * a little-endian host), else a copy.
 * @param {Uint8Array} u8
 * @param {DataView} view
 * @param {number} begin
 * @param {number} count
 */
function bitsOf(u8, view, begin, count) {
  if (kLittleEndian && (u8.byteOffset + begin) % 2 === 0)
    return new Uint16Array(u8.buffer, u8.byteOffset + begin, count);
  const out = new Uint16Array(count);
  for (let i = 0; i < count; ++i) out[i] = view.getUint16(begin + 2 * i, true);
  return out;
}

/** @type {Map<string, Float32Array>} */
const kSixteenBitTables = new Map();

/**
 * The float32 value of each of the 65536 patterns of 'F16' or 'BF16', as readSafetensors converts them (built once
 * per dtype): loadModel's check that a tensor's `bits` are still its `data`.
 * @param {string} dtype
 */
export function sixteenBitValues(dtype) {
  let table = kSixteenBitTables.get(dtype);
  if (!table) {
    const view = new DataView(new ArrayBuffer(2 * 65536));
    for (let h = 0; h < 65536; ++h) view.setUint16(2 * h, h, true);
    table = toFloat32(view, dtype, 0, 65536);
    kSixteenBitTables.set(dtype, table);
  }
  return table;
}

/** Bytes per element of every dtype the format defines. */
const kDtypeBytes = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
};
/** The format caps the header at 100 MB; a larger declared length is a corrupt or hostile file. */
const kMaxHeaderBytes = 100_000_000;

/**
 * float32 value of every float16 bit pattern's magnitude: sign handled by the caller. Exact: subnormals are
 * m · 2^-24, normals (1 + m/1024) · 2^(e-15), e = 31 gives ±Infinity (m = 0) or NaN.
 * @param {number} h a 16-bit pattern
 */
function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/**
 * The tensor's elements as float32, read from `view` at [begin, end) (any alignment).
 * @param {DataView} view
 * @param {string} dtype 'F32' | 'F16' | 'BF16'
 * @param {number} begin
 * @param {number} count
 */
function toFloat32(view, dtype, begin, count) {
  if (dtype === 'F32' && kLittleEndian) {
    // one copy, in a buffer of its own (slice: any alignment of the file's data)
    return new Float32Array(view.buffer.slice(view.byteOffset + begin, view.byteOffset + begin + 4 * count));
  }
  const out = new Float32Array(count);
  if (dtype === 'F32') {
    for (let i = 0; i < count; ++i) out[i] = view.getFloat32(begin + 4 * i, true);
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer); // bfloat16 is the top half of a float32: exact, NaN payloads kept
    for (let i = 0; i < count; ++i) bits[i] = view.getUint16(begin + 2 * i, true) << 16;
  } else {
    for (let i = 0; i < count; ++i) out[i] = halfToFloat(view.getUint16(begin + 2 * i, true));
  }
  return out;
}

/**
 * @param {string} name
 * @param {unknown} entry
 * @param {number} dataBytes size of the data section
 */
function readEntry(name, entry, dataBytes) {
  const where = `tensor ${JSON.stringify(name)}`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new RangeError(`${ctx}: ${where} must be an object { dtype, shape, data_offsets }, got ${describe(entry)}`);
  }
  const { dtype, shape, data_offsets: offsets } = /** @type {Record<string, unknown>} */ (entry);
  if (dtype === undefined || shape === undefined || offsets === undefined) {
    const missing = ['dtype', 'shape', 'data_offsets'].filter((k) => /** @type {any} */ (entry)[k] === undefined);
    throw new RangeError(`${ctx}: ${where} has no ${missing.join(', ')}`);
  }
  if (typeof dtype !== 'string' || !Object.hasOwn(kDtypeBytes, dtype)) {
    throw new RangeError(
      `${ctx}: ${where} has unknown dtype ${JSON.stringify(dtype)}; expected one of ${Object.keys(kDtypeBytes).join(', ')}`,
    );
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new RangeError(
      `${ctx}: ${where} shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`,
    );
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    throw new RangeError(
      `${ctx}: ${where} data_offsets must be [begin, end] (non-negative integers), got ${JSON.stringify(offsets)}`,
    );
  }
  const [begin, end] = offsets;
  if (begin > end) throw new RangeError(`${ctx}: ${where} data_offsets [${begin}, ${end}] are reversed`);
  if (end > dataBytes) {
    throw new RangeError(
      `${ctx}: ${where} data_offsets [${begin}, ${end}] lie outside the data (${dataBytes} bytes after the header)`,
    );
  }
  const count = shape.reduce((a, d) => a * d, 1); // may lose precision for absurd shapes: then it cannot match
  const expected = count * kDtypeBytes[/** @type {keyof typeof kDtypeBytes} */ (dtype)];
  if (expected !== end - begin) {
    throw new RangeError(
      `${ctx}: ${where} has ${end - begin} bytes, but shape [${shape.join(', ')}] of ${dtype} needs ${expected}`,
    );
  }
  return { name, dtype, shape: shape.slice(), begin, end, count };
}

/**
 * The header length N from the file's first 8 bytes, checked against the file's size.
 * @param {DataView} first the first 8 bytes
 * @param {number} fileBytes
 */
function headerLength(first, fileBytes) {
  const headerBytes = first.getUint32(0, true) + first.getUint32(4, true) * 2 ** 32;
  if (headerBytes > fileBytes - 8 || headerBytes > kMaxHeaderBytes) {
    throw new RangeError(
      `${ctx}: the header length ${headerBytes} runs past the end of the file (${fileBytes - 8} bytes follow it)` +
        (headerBytes > kMaxHeaderBytes ? ` and exceeds the format's ${kMaxHeaderBytes}-byte limit` : ''),
    );
  }
  return headerBytes;
}

/** @param {number} fileBytes */
function checkFileLength(fileBytes) {
  if (fileBytes < 8) {
    throw new RangeError(
      `${ctx}: the file has ${fileBytes} bytes; a safetensors file starts with an 8-byte header length`,
    );
  }
}

/**
 * The JSON header's tensors (checked: fields, dtypes, sizes, offsets inside the data, no overlaps) and its
 * __metadata__ (a copy; {} when there is none).
 * @param {Uint8Array} text the header's bytes
 * @param {number} dataBytes size of the data section
 */
function parseHeader(text, dataBytes) {
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(text));
  } catch (e) {
    throw new RangeError(`${ctx}: the header is not valid UTF-8 JSON (${/** @type {Error} */ (e).message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new RangeError(`${ctx}: the header must be a JSON object, got ${describe(header)}`);
  }
  const metadata = header.__metadata__;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))) {
    throw new RangeError(`${ctx}: __metadata__ must be an object of strings, got ${describe(metadata)}`);
  }
  const entries = Object.keys(header)
    .filter((name) => name !== '__metadata__')
    .map((name) => readEntry(name, header[name], dataBytes));
  const sorted = entries.filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; ++i) {
    if (sorted[i].begin < sorted[i - 1].end) {
      throw new RangeError(
        `${ctx}: tensors ${JSON.stringify(sorted[i - 1].name)} [${sorted[i - 1].begin}, ${sorted[i - 1].end}) and ` +
          `${JSON.stringify(sorted[i].name)} [${sorted[i].begin}, ${sorted[i].end}) overlap`,
      );
    }
  }
  return { entries, metadata: Object.fromEntries(Object.entries(metadata ?? {})) };
}

/**
 * The tensors still unread: readSafetensors' 16-bit tensor → its `bits`, its dtype and its lazy `data` getter,
 * until `data` is read or set.
 * @type {WeakMap<object, { bits: Uint16Array, dtype: string, get: () => Float32Array }>}
 */
const kUnread = new WeakMap();

/**
 * A 16-bit tensor { data, shape, dtype, bits } whose `data` widens `bits` to float32 when first read (then it is an
 * ordinary property, which may be set or changed in place).
 * @param {Uint16Array} bits
 * @param {string} dtype 'F16' | 'BF16'
 * @param {number[]} shape
 */
export function lazySixteenBit(bits, dtype, shape) {
  const t = {};
  /** @param {unknown} data */
  const settle = (data) => {
    kUnread.delete(t);
    Object.defineProperty(t, 'data', { value: data, writable: true, enumerable: true, configurable: true });
  };
  const get = () => {
    const data = widenBits(bits, dtype);
    settle(data);
    return data;
  };
  Object.defineProperty(t, 'data', { get, set: settle, enumerable: true, configurable: true });
  Object.assign(t, { shape, dtype, bits });
  kUnread.set(t, { bits, dtype, get });
  return t;
}

/**
 * The `bits` of a readSafetensors 16-bit tensor whose `data` was never read nor set (so it cannot differ from them),
 * else null: loadModel keeps them without widening anything.
 * @param {unknown} value
 */
export function unreadBits(value) {
  const state = value !== null && typeof value === 'object' ? kUnread.get(value) : undefined;
  if (!state) return null;
  const v = /** @type {any} */ (value);
  const same = v.bits === state.bits && v.dtype === state.dtype;
  return same && Object.getOwnPropertyDescriptor(v, 'data')?.get === state.get ? state.bits : null;
}

/**
 * float32 values of 16-bit patterns, exactly (BF16: the top half of a float32, NaN payloads kept).
 * @param {Uint16Array} bits
 * @param {string} dtype 'F16' | 'BF16'
 */
export function widenBits(bits, dtype) {
  const out = new Float32Array(bits.length);
  if (dtype === 'BF16') {
    const words = new Uint32Array(out.buffer);
    for (let i = 0; i < bits.length; ++i) words[i] = bits[i] << 16;
  } else {
    const table = sixteenBitValues('F16');
    for (let i = 0; i < bits.length; ++i) out[i] = table[bits[i]];
  }
  return out;
}

/**
 * Whether float32 `data` holds exactly the values of the 16-bit `bits` (NaN matches any NaN).
 * @param {Uint16Array} bits
 * @param {Float32Array} data
 * @param {string} dtype 'F16' | 'BF16'
 */
export function bitsMatch(bits, data, dtype) {
  if (bits.length !== data.length) return false;
  const table = sixteenBitValues(dtype);
  for (let i = 0; i < bits.length; ++i) {
    const x = table[bits[i]];
    if (x !== data[i] && !(Number.isNaN(x) && Number.isNaN(data[i]))) return false;
  }
  return true;
}

/**
 * One tensor from its bytes at `at` in `u8`. `own`: the bytes are this tensor's alone (read from a Blob), so F32
 * data and raw bytes may be views of them; else F32 and raw bytes are copies of the caller's buffer.
 * @param {{ dtype: string, shape: number[], begin: number, end: number, count: number }} entry
 * @param {Uint8Array} u8
 * @param {number} at
 * @param {boolean} own
 */
function tensorOf({ dtype, shape, begin, end, count }, u8, at, own) {
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (dtype === 'F16' || dtype === 'BF16') return lazySixteenBit(bitsOf(u8, view, at, count), dtype, shape);
  if (dtype === 'F32') {
    const aligned = own && kLittleEndian && (u8.byteOffset + at) % 4 === 0;
    const data = aligned ? new Float32Array(u8.buffer, u8.byteOffset + at, count) : toFloat32(view, dtype, at, count);
    return { data, shape, dtype };
  }
  const bytes = own ? u8.subarray(at, at + end - begin) : u8.slice(at, at + end - begin);
  return { data: null, bytes, shape, dtype };
}

/**
 * { name: tensor } with the metadata as the non-enumerable `__metadata__`.
 * @param {Array<[string, object]>} named
 * @param {Record<string, string>} metadata
 */
function resultOf(named, metadata) {
  const out = {};
  // defineProperty: a tensor named "__proto__" stays an ordinary entry.
  for (const [name, value] of named) {
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  Object.defineProperty(out, '__metadata__', {
    value: metadata,
    enumerable: false,
    writable: true,
    configurable: true,
  });
  return out;
}

/**
 * Parses a safetensors file: its bytes (→ the tensors), or a Blob / File (→ a Promise of them, each tensor read
 * from its own byte range: the file is never held whole).
 * @param {ArrayBuffer | Uint8Array | Blob} bytes
 */
export function readSafetensors(bytes) {
  if (isBlob(bytes)) return readBlob(/** @type {any} */ (bytes));
  /** @type {Uint8Array} */
  let u8;
  if (bytes instanceof ArrayBuffer || Object.prototype.toString.call(bytes) === '[object ArrayBuffer]') {
    u8 = new Uint8Array(/** @type {ArrayBuffer} */ (bytes));
  } else if (typedArrayName(bytes) === 'Uint8Array') {
    // A plain view: a Node Buffer's slice() would share memory instead of copying.
    const b = /** @type {Uint8Array} */ (bytes);
    u8 = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } else {
    throw new TypeError(`${ctx}: bytes must be an ArrayBuffer, a Uint8Array or a Blob, got ${describe(bytes)}`);
  }
  checkFileLength(u8.byteLength);
  const headerBytes = headerLength(new DataView(u8.buffer, u8.byteOffset, 8), u8.byteLength);
  const dataStart = 8 + headerBytes;
  const { entries, metadata } = parseHeader(u8.subarray(8, dataStart), u8.byteLength - dataStart);
  const named = entries.map(
    (e) => /** @type {[string, object]} */ ([e.name, tensorOf(e, u8, dataStart + e.begin, false)]),
  );
  return resultOf(named, metadata);
}

/**
 * A Blob or File (of any realm), or anything with their size and byte ranges (interop.d.ts's BlobLike).
 * @param {unknown} value
 */
export function isBlob(value) {
  if (typeof Blob === 'function' && value instanceof Blob) return true;
  const tag = Object.prototype.toString.call(value);
  if (tag === '[object Blob]' || tag === '[object File]') return true;
  const v = /** @type {any} */ (value);
  return v !== null && typeof v === 'object' && Number.isSafeInteger(v.size) && typeof v.slice === 'function';
}

/**
 * readSafetensors of a Blob: the header first, then each tensor's byte range on its own (blob.slice), so that
 * memory holds the tensors once and never the whole file beside them.
 * @param {BlobLike} blob
 */
async function readBlob(blob) {
  const file = await openSafetensors(blob);
  /** @type {Array<[string, object]>} */
  const named = [];
  for (const e of file.entries) named.push([e.name, await file.read(e)]);
  return resultOf(named, file.metadata);
}

/** @typedef {{ size: number, slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> } }} BlobLike */
/** @typedef {{ name: string, dtype: string, shape: number[], begin: number, end: number, count: number }} Entry */

/**
 * A safetensors Blob's header, read and checked: its tensors' entries (name, dtype, shape, byte range) in header
 * order, its __metadata__, and read(entry), which reads that one tensor (readSafetensors' form) from its own byte
 * range, or readBytes(entry, from, to) a piece of its data as stored. loadModel of a Blob copies each tensor into
 * the model piece by piece (a few MiB held in JS at a time).
 * @param {unknown} blob a Blob, File or BlobLike
 */
export async function openSafetensors(blob) {
  const b = /** @type {BlobLike} */ (blob);
  const size = b.size;
  checkFileLength(size);
  const headerBytes = headerLength(new DataView(await b.slice(0, 8).arrayBuffer()), size);
  const dataStart = 8 + headerBytes;
  const text = new Uint8Array(await b.slice(8, dataStart).arrayBuffer());
  const { entries, metadata } = parseHeader(text, size - dataStart);
  /**
   * The bytes [from, to) of one tensor's data, as stored (little-endian).
   * @param {Entry} e
   * @param {number} from
   * @param {number} to
   */
  const readBytes = async (e, from, to) => {
    const u8 = new Uint8Array(await b.slice(dataStart + e.begin + from, dataStart + e.begin + to).arrayBuffer());
    if (u8.byteLength !== to - from) {
      throw new RangeError(`${ctx}: tensor ${JSON.stringify(e.name)}: the file changed while it was read`);
    }
    return u8;
  };
  /** @param {Entry} e */
  const read = async (e) => tensorOf(e, await readBytes(e, 0, e.end - e.begin), 0, true);
  return { entries, metadata, read, readBytes };
}

/**
 * One tensor's bytes for writeSafetensors: F32 from `data`, F16 / BF16 from `bits` (which `data`, if it was read,
 * must still equal), other dtypes from `bytes`.
 * @param {string} label
 * @param {unknown} value
 */
function payloadOf(label, value) {
  const w = 'writeSafetensors';
  if (value === null || typeof value !== 'object' || Array.isArray(value) || typedArrayName(value)) {
    throw new TypeError(`${w}: ${label} must be a tensor { data, shape, dtype? }, got ${describe(value)}`);
  }
  const t = /** @type {any} */ (value);
  const dtype = t.dtype ?? 'F32';
  if (typeof dtype !== 'string' || !Object.hasOwn(kDtypeBytes, dtype)) {
    throw new RangeError(
      `${w}: ${label}.dtype must be one of ${Object.keys(kDtypeBytes).join(', ')}, got ${describe(dtype)}`,
    );
  }
  const shape = t.shape;
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new TypeError(`${w}: ${label}.shape must be an array of non-negative integers, got ${describe(shape)}`);
  }
  const count = shape.reduce((a, d) => a * d, 1);
  const field = dtype === 'F32' ? 'data' : dtype === 'F16' || dtype === 'BF16' ? 'bits' : 'bytes';
  const kind = { data: 'Float32Array', bits: 'Uint16Array', bytes: 'Uint8Array' }[field];
  const array = t[field];
  if (typedArrayName(array) !== kind) {
    throw new TypeError(`${w}: ${label}.${field} must be a ${kind} for dtype ${dtype}, got ${describe(array)}`);
  }
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  const need = count * kDtypeBytes[/** @type {keyof typeof kDtypeBytes} */ (dtype)];
  if (bytes.length !== need) {
    throw new RangeError(
      `${w}: ${label}.${field} has ${bytes.length} bytes, but shape [${shape.join(', ')}] of ${dtype} needs ${need}`,
    );
  }
  if (
    field === 'bits' &&
    !unreadBits(t) &&
    typedArrayName(t.data) === 'Float32Array' &&
    !bitsMatch(array, t.data, dtype)
  ) {
    throw new RangeError(`${w}: ${label}.data no longer equals its ${dtype} bits; write it as F32 ({ data, shape })`);
  }
  return { dtype, shape: shape.slice(), bytes };
}

/**
 * A safetensors file of `tensors` ({ name: { data: Float32Array, shape } } for F32; readSafetensors' tensors as
 * they were read) with `metadata` (strings; none when empty) as its __metadata__: compact JSON, padded with spaces
 * to a multiple of 8 bytes (so the data start 8-byte aligned), the tensors in the object's order.
 * @param {Record<string, unknown>} tensors
 * @param {Record<string, string>} [metadata]
 * @returns {Uint8Array}
 */
export function writeSafetensors(tensors, metadata) {
  const w = 'writeSafetensors';
  if (tensors === null || typeof tensors !== 'object' || Array.isArray(tensors)) {
    throw new TypeError(`${w}: tensors must be an object { name: tensor }, got ${describe(tensors)}`);
  }
  if (!kLittleEndian) throw new Error(`${w}: needs a little-endian host`);
  /** @type {Record<string, unknown>} */
  const header = {};
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
      throw new TypeError(`${w}: metadata must be an object of strings, got ${describe(metadata)}`);
    }
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string')
        throw new TypeError(`${w}: metadata[${JSON.stringify(k)}] must be a string, got ${describe(v)}`);
    }
    if (Object.keys(metadata).length > 0) header.__metadata__ = { ...metadata };
  }
  const payloads = [];
  let offset = 0;
  for (const name of Object.keys(tensors)) {
    if (name === '__metadata__') throw new RangeError(`${w}: "__metadata__" cannot name a tensor`);
    const p = payloadOf(`tensors[${JSON.stringify(name)}]`, tensors[name]);
    const entry = { dtype: p.dtype, shape: p.shape, data_offsets: [offset, offset + p.bytes.length] };
    Object.defineProperty(header, name, { value: entry, enumerable: true }); // also for a name like __proto__
    payloads.push(p.bytes);
    offset += p.bytes.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.fill(0x20, 8, 8 + padded);
  out.set(json, 8);
  let at = 8 + padded;
  for (const bytes of payloads) {
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

/**
 * `value` (a call's arguments) with readSafetensors' unread 16-bit tensors as plain { attnlabUnreadBits, shape,
 * dtype, bits } (attnlab/worker posts these: cloning the tensor would read, so widen, its `data`). Plain objects
 * and arrays are copied, anything else kept.
 * @param {unknown} value
 * @returns {any}
 */
export function unreadToWire(value) {
  if (unreadBits(value)) {
    const t = /** @type {any} */ (value);
    return { attnlabUnreadBits: true, shape: t.shape, dtype: t.dtype, bits: t.bits };
  }
  return mapPlain(value, unreadToWire);
}

/**
 * The inverse of unreadToWire (worker-host.mjs): each { attnlabUnreadBits } is a lazy 16-bit tensor again.
 * @param {unknown} value
 * @returns {any}
 */
export function unreadFromWire(value) {
  const t = /** @type {any} */ (value);
  if (t?.attnlabUnreadBits === true && t.bits instanceof Uint16Array) return lazySixteenBit(t.bits, t.dtype, t.shape);
  return mapPlain(value, unreadFromWire);
}

/**
 * An array or plain object with `fn` applied to each element or own enumerable property; anything else as is.
 * @param {unknown} value
 * @param {(v: unknown) => unknown} fn
 */
function mapPlain(value, fn) {
  if (Array.isArray(value)) return value.map(fn);
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out = {};
  for (const key of Object.keys(value)) {
    const v = fn(/** @type {any} */ (value)[key]);
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
