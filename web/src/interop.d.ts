// Type declarations of attnlab's interop functions (docs/api.md, "Interop"): readSafetensors and fromHuggingFace,
// exported by the ES module entry (index.d.ts re-exports them in its ESM-only region).
import type { MultiHeadAttentionOptions, Tensor, TensorInput } from './index.js';

/** A float tensor read from a safetensors file: F32, F16 and BF16 are converted to float32 exactly. */
export interface SafetensorsFloatTensor {
  data: Float32Array;
  shape: number[];
  dtype: 'F32' | 'F16' | 'BF16';
  /**
   * F16 and BF16: the file's 16-bit values (a view of `bytes` where aligned), which `loadModel` keeps 16-bit in wasm
   * memory while they still equal `data`.
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
 * Reads a `.safetensors` file (8-byte little-endian header length, JSON header, tensor bytes). `__metadata__` is
 * not a tensor. Every offset and size is checked against the buffer before anything is read or allocated.
 *
 * @throws TypeError when `bytes` is neither an ArrayBuffer nor a Uint8Array.
 * @throws RangeError for a malformed file, saying what is wrong: header length past the end (or over the format's
 *   100 MB limit), a header that is not a JSON object, an entry without dtype/shape/data_offsets, an unknown dtype,
 *   negative or fractional dims, offsets outside the data or reversed, a byte count that is not shape × dtype size,
 *   overlapping tensors.
 * @example
 * ```ts
 * const tensors = readSafetensors(await (await fetch('model.safetensors')).arrayBuffer());
 * ```
 */
export declare function readSafetensors(bytes: ArrayBuffer | Uint8Array): Record<string, SafetensorsTensor>;

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
