// @ts-check
// readSafetensors: a .safetensors file (8-byte little-endian header length N, N bytes of JSON header, then the
// tensors' bytes) → { name: { data: Float32Array, shape, dtype } }. F32, F16 and BF16 become float32 exactly (F16
// and BF16 also keep their 16-bit values as `bits`, which loadModel keeps 16-bit in wasm memory); other valid dtypes
// come as { data: null, bytes, shape, dtype }. Every offset and size is checked against the
// buffer before anything is read or allocated: a lying header is a RangeError, never a read out of bounds.

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

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
  const out = new Float32Array(count);
  if (dtype === 'F32') {
    if (littleEndian) {
      out.set(new Float32Array(view.buffer.slice(view.byteOffset + begin, view.byteOffset + begin + 4 * count)));
    } else {
      for (let i = 0; i < count; ++i) out[i] = view.getFloat32(begin + 4 * i, true);
    }
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
 * Parses a safetensors file.
 * @param {ArrayBuffer | Uint8Array} bytes
 */
export function readSafetensors(bytes) {
  /** @type {Uint8Array} */
  let u8;
  if (bytes instanceof ArrayBuffer || Object.prototype.toString.call(bytes) === '[object ArrayBuffer]') {
    u8 = new Uint8Array(/** @type {ArrayBuffer} */ (bytes));
  } else if (typedArrayName(bytes) === 'Uint8Array') {
    // A plain view: a Node Buffer's slice() would share memory instead of copying.
    const b = /** @type {Uint8Array} */ (bytes);
    u8 = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } else {
    throw new TypeError(`${ctx}: bytes must be an ArrayBuffer or a Uint8Array, got ${describe(bytes)}`);
  }
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (u8.byteLength < 8) {
    throw new RangeError(
      `${ctx}: the file has ${u8.byteLength} bytes; a safetensors file starts with an 8-byte header length`,
    );
  }
  const headerBytes = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerBytes > u8.byteLength - 8 || headerBytes > kMaxHeaderBytes) {
    throw new RangeError(
      `${ctx}: the header length ${headerBytes} runs past the end of the file (${u8.byteLength - 8} bytes follow it)` +
        (headerBytes > kMaxHeaderBytes ? ` and exceeds the format's ${kMaxHeaderBytes}-byte limit` : ''),
    );
  }
  let header;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(u8.subarray(8, 8 + headerBytes));
    header = JSON.parse(text);
  } catch (e) {
    throw new RangeError(`${ctx}: the header is not valid UTF-8 JSON (${/** @type {Error} */ (e).message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new RangeError(`${ctx}: the header must be a JSON object, got ${describe(header)}`);
  }
  const dataStart = 8 + headerBytes;
  const dataBytes = u8.byteLength - dataStart;
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
  const out = {};
  for (const { name, dtype, shape, begin, end, count } of entries) {
    /** @type {Record<string, unknown>} */
    const value =
      dtype === 'F32' || dtype === 'F16' || dtype === 'BF16'
        ? { data: toFloat32(view, dtype, dataStart + begin, count), shape, dtype }
        : { data: null, bytes: u8.slice(dataStart + begin, dataStart + end), shape, dtype };
    if (dtype === 'F16' || dtype === 'BF16') value.bits = bitsOf(u8, view, dataStart + begin, count);
    // defineProperty: a tensor named "__proto__" stays an ordinary entry.
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
