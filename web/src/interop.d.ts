// Type declarations of attnlab's interop functions (docs/api.md, "Interop"): readSafetensors and fromHuggingFace,
// exported by the ES module entry (index.d.ts re-exports them in its ESM-only region).
import type { MultiHeadAttentionOptions, Tensor, TensorInput } from './index.js';

/**
 * A float tensor read from a safetensors file: F32, F16 and BF16 are converted to float32 exactly. F32 `data` is
 * read at once; F16 and BF16 `data` is a getter that widens `bits` when first read and then keeps the result (an
 * ordinary property from then on, which may be set or changed in place).
 */
export interface SafetensorsFloatTensor {
  data: Float32Array;
  shape: number[];
  dtype: 'F32' | 'F16' | 'BF16';
  /**
   * F16 and BF16: the file's 16-bit values (a view of `bytes` where aligned), which `loadModel` keeps 16-bit in wasm
   * memory: as they are while `data` was never read, else while they still equal `data`.
   */
  bits?: Uint16Array;
}

/** A tensor of any other dtype (e.g. `I64` `position_ids`): its raw little-endian bytes, not converted. */
export interface SafetensorsRawTensor {
  data: null;
  bytes: Uint8Array;
  shape: number[];
  dtype: 'F64' | 'F8_E4M3' | 'F8_E5M2' | 'I64' | 'I32' | 'I16' | 'I8' | 'U64' | 'U32' | 'U16' | 'U8' | 'BOOL';
}

export type SafetensorsTensor = SafetensorsFloatTensor | SafetensorsRawTensor;

/**
 * {@link readSafetensors}' result: the tensors by name (own enumerable properties), and the header's
 * `__metadata__` (strings; `{}` when the file has none) as a non-enumerable property, so that `Object.keys`,
 * spreading and `loadModel` see tensors only.
 */
export type SafetensorsTensors = Record<string, SafetensorsTensor> & {
  readonly __metadata__: Record<string, string>;
};

/**
 * Reads a `.safetensors` file (8-byte little-endian header length, JSON header, tensor bytes). `__metadata__` is
 * not a tensor: it is the result's non-enumerable `__metadata__`. Every offset and size is checked against the file
 * before anything is read or allocated.
 *
 * From an `ArrayBuffer` or `Uint8Array`, the result comes at once. From a `Blob` (a page's `File`, Node's
 * `fs.openAsBlob(path)`), a Promise: the header is read first, then each tensor's byte range on its own
 * (`blob.slice`), so that memory never holds the whole file beside the tensors; F32 data and raw bytes are then
 * views of each tensor's own buffer (no copy), and errors are rejections.
 *
 * @throws TypeError when `bytes` is neither an ArrayBuffer, a Uint8Array nor a Blob.
 * @throws RangeError for a malformed file, saying what is wrong: header length past the end (or over the format's
 *   100 MB limit), a header that is not a JSON object, an entry without dtype/shape/data_offsets, an unknown dtype,
 *   negative or fractional dims, offsets outside the data or reversed, a byte count that is not shape × dtype size,
 *   overlapping tensors.
 * @example
 * ```ts
 * const tensors = readSafetensors(await (await fetch('model.safetensors')).arrayBuffer());
 * const fromFile = await readSafetensors(input.files[0]);
 * ```
 */
export declare function readSafetensors(bytes: ArrayBuffer | Uint8Array): SafetensorsTensors;
export declare function readSafetensors(file: BlobLike): Promise<SafetensorsTensors>;
export declare function readSafetensors(
  bytes: ArrayBuffer | Uint8Array | BlobLike,
): SafetensorsTensors | Promise<SafetensorsTensors>;

/**
 * What {@link readSafetensors} reads of a `Blob` or `File` (structurally, so that the types need no DOM library):
 * its size and byte ranges.
 */
export interface BlobLike {
  readonly size: number;
  slice(start?: number, end?: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

/**
 * Writes a `.safetensors` file: the inverse of {@link readSafetensors}. A tensor's `dtype` (default `'F32'`) says
 * what is written: F32 from `data` (a Float32Array), F16 / BF16 from `bits` (a Uint16Array; a `data` that was read
 * must still equal them: changed values are written as F32), any other dtype from `bytes`. `metadata` (strings)
 * becomes `__metadata__` (left out when empty). Compact JSON padded with spaces to a multiple of 8 bytes, tensors
 * in the object's order: a file written by PyTorch's or the safetensors package's writer in that order is
 * reproduced byte for byte from its `readSafetensors` result.
 *
 * @throws TypeError for a tensor that is not an object, a bad shape, the wrong array for its dtype, or metadata
 *   that is not an object of strings.
 * @throws RangeError for an unknown dtype, an array whose size is not the shape's, 16-bit `data` that no longer
 *   equals its `bits`, or a tensor named `__metadata__`.
 * @example
 * ```ts
 * const bytes = writeSafetensors(model.stateDict(), { format: 'pt' });
 * ```
 */
export declare function writeSafetensors(
  tensors: Record<string, SafetensorsTensor | { data: Float32Array; shape: number[]; dtype?: 'F32' }>,
  metadata?: Record<string, string>,
): Uint8Array;

/** Options of {@link fromHuggingFace}. */
export interface FromHuggingFaceOptions {
  /**
   * `'bert'` (BERT-style encoders, `…attention.self.query/key/value` + `…attention.output.dense`), `'gpt2'`
   * (`attn.c_attn` and `attn.c_proj`, Conv1D layout, transposed here) or `'vit'`
   * (`…attention.attention.query/key/value` + `…attention.output.dense`).
   */
  arch: 'bert' | 'gpt2' | 'vit';
  /** Which layer: `encoder.layer.{layer}` (BERT, ViT) or `h.{layer}` (GPT-2). */
  layer: number;
  /** The model's number of attention heads (Hugging Face's `num_attention_heads` / `n_head`). */
  numHeads: number;
  /**
   * The prefix of the layer names. Default: the first that the checkpoint has of `'bert.'`, `'roberta.'`, `''`
   * (bert); `'transformer.'`, `''` (gpt2); `'vit.'`, `''` (vit).
   */
  prefix?: string;
}

/**
 * Maps one Hugging Face attention layer to {@link Attnlab.createMultiHeadAttention}'s options (with
 * `batchFirst: true`, Hugging Face's layout) and a state dict for {@link MultiHeadAttention.loadStateDict}. The
 * layer's output is the attention block's output projection (before the residual and LayerNorm). GPT-2 attends
 * causally: pass a causal `attnMask` to `forward`.
 *
 * @param tensors the checkpoint's tensors by name, e.g. from {@link readSafetensors} (float data needed).
 * @throws RangeError for an unknown architecture, a missing tensor (named) or one of the wrong shape.
 * @example
 * ```ts
 * const { config, stateDict } = fromHuggingFace(readSafetensors(bytes), { arch: 'bert', layer: 0, numHeads: 12 });
 * const mha = attn.createMultiHeadAttention(config);
 * mha.loadStateDict(stateDict);
 * const { output, weights } = mha.forward(x, x, x, { averageAttnWeights: false });
 * ```
 */
export declare function fromHuggingFace(
  tensors: Record<string, SafetensorsTensor | TensorInput | { data: Float32Array | null }>,
  options: FromHuggingFaceOptions,
): { config: MultiHeadAttentionOptions & { batchFirst: true }; stateDict: Record<string, Tensor> };
