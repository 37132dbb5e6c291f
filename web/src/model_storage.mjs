// @ts-check
// How a checkpoint's tensors reach a Transformer's weights (transformer.mjs's loader): the pieces a tensor is copied
// in, a 16-bit tensor's own bits as a heap buffer or read lazily, and the weight storage a checkpoint gets.

import { bitsMatch, unreadBits, widenBits } from './safetensors.mjs';
import { readShape, typedArrayName } from './validate.mjs';

/**
 * How a tensor of `bytes` and `shape` is copied in: whole ([{ first: −1, count }]) when it fits in a piece, else in
 * pieces of whole rows of at most the module's _loadPieceBytes() (the memory it counts on for loading).
 * @param {any} M the raw module
 * @param {number} bytes
 * @param {number[]} shape
 */
export function piecesOf(M, bytes, shape) {
  const rows = shape.length ? shape[0] : 1;
  const step = rows ? Math.max(1, Math.floor(M._loadPieceBytes() / (bytes / rows))) : 1;
  if (rows <= step) return [{ first: -1, count: rows }];
  const pieces = [];
  for (let first = 0; first < rows; first += step) pieces.push({ first, count: Math.min(step, rows - first) });
  return pieces;
}

/**
 * The 16-bit values of a readSafetensors tensor of dtype `dtype` ('F16' / 'BF16') as a withHeap buffer, when it has
 * them (`bits`) and they are still its float32 `data` (`unread`: data never read, so it cannot differ; else checked
 * element by element: data changed after reading is loaded as data), else null.
 * @param {any} value
 * @param {{ data: Float32Array, shape: number[], size: number, name: string }} buffer readParameter's
 * @param {string} dtype
 * @param {boolean} unread
 */
export function bitsBuffer(value, buffer, dtype, unread) {
  const bits = value?.bits;
  if (value?.dtype !== dtype || !(bits instanceof Uint16Array) || bits.length !== buffer.size) return null;
  if (!unread && !bitsMatch(bits, buffer.data, dtype)) return null;
  const bytes = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
  return {
    data: bytes,
    tag: 'Uint8Array',
    shape: buffer.shape,
    size: bytes.length,
    bytes: bytes.length,
    name: buffer.name,
  };
}

/**
 * readParameter's buffer for a 16-bit tensor whose `data` was never read: its shape checked against its `bits`;
 * `data` widens them only if asked (the tied-head check), without keeping the result.
 * @param {string} ctx
 * @param {any} value
 * @param {string} label
 * @param {Uint16Array} bits
 */
export function lazyBuffer(ctx, value, label, bits) {
  const { shape, size } = readShape(ctx, value.shape, `${label}.shape`);
  if (size !== bits.length) {
    throw new RangeError(
      `${ctx}: ${label}.bits has ${bits.length} elements but ${label}.shape [${shape.join(', ')}] needs ${size}`,
    );
  }
  const dtype = value.dtype;
  const name = `${label}.data`;
  return {
    tag: 'Float32Array',
    shape,
    size,
    bytes: size * 4,
    name,
    get data() {
      return widenBits(bits, dtype);
    },
  };
}

/**
 * The weight storage loadModel gives a checkpoint: 16-bit when every float tensor is F16 (or every one BF16) with
 * its readSafetensors `bits`, else float32.
 * @param {any} M
 * @param {Record<string, unknown>} tensors
 */
export function storageOf(M, tensors) {
  const dtypes = new Set();
  for (const value of Object.values(tensors)) {
    const v = /** @type {any} */ (value);
    if (v === null || typeof v !== 'object' || typedArrayName(v)) return M._WeightStorage.Float32;
    if (unreadBits(v)) {
      dtypes.add(v.dtype); // (data never read: not widened here)
      continue;
    }
    if (v.data === null) continue; // (a non-float buffer)
    dtypes.add(v.bits instanceof Uint16Array ? v.dtype : 'F32');
  }
  if (dtypes.size !== 1) return M._WeightStorage.Float32;
  const [dtype] = dtypes;
  return dtype === 'F16' ? M._WeightStorage.F16 : dtype === 'BF16' ? M._WeightStorage.BF16 : M._WeightStorage.Float32;
}
