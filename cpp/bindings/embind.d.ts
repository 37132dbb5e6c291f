// The raw module's contract: what cpp/bindings/embind.cc exports to JS. Private to web/src/, which is
// type-checked against it (`// @ts-check`; `tsc -p web/tsconfig.json` runs in npm test). Not shipped.
//
// Every name starts with '_' so it cannot be confused with the public API. Calls take value objects: plain JS
// objects with EVERY field present (Embind throws on a missing one). Pointers are byte offsets into wasm memory
// (0 for a size query or an absent mask). C++ errors arrive as RangeError (std::invalid_argument, bad_alloc) or
// Error, with C++ (snake_case) argument names.

/** A JS-owned copy and its shape, as every raw result tensor comes back. */
export type RawTensor = [data: Float32Array, shape: number[]];
/** `[[name, Float32Array, shape], …]`, sorted by name. */
export type RawTensorList = Array<[name: string, data: Float32Array, shape: number[]]>;
/** `[[what, bytes], …]`: what a call will allocate besides its inputs (attnlab/memory_needs.h). */
export type RawMemoryNeeds = Array<[what: string, bytes: number]>;

// The argument structs (TensorArg, SdpaCallArgs, …) are generated from cpp/bindings/args.h.
import type {
  AdamWArgs,
  MhaConfigArgs,
  MhaForwardArgs,
  SdpaCallArgs,
  TensorArg,
  TinyTransformerArgs,
  TransformerForwardArgs,
} from './embind-args';
export * from './embind-args';

export interface RawEnumValue {
  readonly value: number;
}
export interface RawMaskKinds {
  readonly None: RawEnumValue;
  readonly Bool: RawEnumValue;
  readonly Float: RawEnumValue;
}
/** attnlab::CausalAlign: how isCausal and the window align queries with keys. */
export interface RawCausalAligns {
  readonly UpperLeft: RawEnumValue;
  readonly LowerRight: RawEnumValue;
}
/** attnlab::ScoresStage: which pre-softmax scores SDPA also returns. */
export interface RawScoresStages {
  readonly None: RawEnumValue;
  readonly Scaled: RawEnumValue;
  readonly Softcapped: RawEnumValue;
  readonly Masked: RawEnumValue;
}

/** attnlab::WeightStorage: how a Transformer holds its weight matrices (16-bit: as the checkpoint's bits). */
export interface RawWeightStorages {
  readonly Float32: RawEnumValue;
  readonly F16: RawEnumValue;
  readonly BF16: RawEnumValue;
}

export interface RawTransformerOutput {
  /** Absent only for an encoder without a head (task 'base'). */
  logits: RawTensor;
  /** Encoders: (B, T, E), and (B, E) when the model has a pooler. */
  lastHiddenState?: RawTensor;
  pooledOutput?: RawTensor;
  /** L entries: (B, H, T, P + T), or null for a layer not asked for. */
  attentions: Array<RawTensor | null>;
  /** L + 1 tensors (B, T, E) when outputHiddenStates. */
  hiddenStates?: RawTensor[];
  /**
   * Encoder–decoders (the fields above are then the decoder's): the encoder's outputs when its stack ran (not in a
   * cached step after the first), each list null for a layer not asked for; crossAttentions (B, H, T, S).
   */
  encoderLastHiddenState?: RawTensor;
  encoderAttentions?: Array<RawTensor | null>;
  encoderHiddenStates?: RawTensor[];
  /** Ld entries for an encoder–decoder; empty for other models. */
  crossAttentions: Array<RawTensor | null>;
}

export interface RawResult {
  output: RawTensor;
  /** Present when needWeights. */
  weights?: RawTensor;
  /** SDPA: present when returnScores is not None. */
  scores?: RawTensor;
  /** SDPA: present with a past. */
  presentKey?: RawTensor;
  presentValue?: RawTensor;
}

export interface RawGradients {
  gradQuery: RawTensor;
  gradKey: RawTensor;
  gradValue: RawTensor;
  /** SDPA backward with a past. */
  gradPastKey?: RawTensor;
  gradPastValue?: RawTensor;
}

/** What every model binding offers. */
export interface RawModel {
  parameterShapes(): Array<[name: string, shape: number[]]>;
  /** Views of `[[name, ptr, shape], …]` in wasm memory; every parameter must be present. */
  loadStateDict(entries: Array<[name: string, ptr: number, shape: number[]]>): void;
  stateDict(): RawTensorList;
  delete(): void;
}

export interface RawMultiHeadAttention extends RawModel {
  forward(args: MhaForwardArgs): RawResult;
  forwardMemory(args: MhaForwardArgs): RawMemoryNeeds;
  backward(gradOutput: TensorArg): RawGradients & { gradParams: RawTensorList };
  /** A decoding step: appends the new tokens' keys/values to `cache` (made from this module) and attends over it. */
  forwardCached(args: MhaForwardArgs, cache: RawKVCache): RawResult;
  forwardCachedMemory(args: MhaForwardArgs, cache: RawKVCache): RawMemoryNeeds;
  kvCacheMemory(batchSize: number, maxLength: number): RawMemoryNeeds;
}

/** attnlab::KVCache: keys and values of past tokens, allocated once. */
export interface RawKVCache {
  length(): number;
  reset(): void;
  delete(): void;
}

export interface RawTinyTransformer extends RawModel {
  forward(tokens: TensorArg): { logits: RawTensor; weights: RawTensor };
  lossAndGrad(tokens: TensorArg, targets: TensorArg): { loss: number; gradParams: RawTensorList };
  trainStep(tokens: TensorArg, targets: TensorArg, lr: number): number;
  stepMemory(tokens: TensorArg, withGradient: boolean): RawMemoryNeeds;
}

/** attnlab::Transformer: a whole GPT-2 or Llama-family model. stateDict() copies one tensor at a time. */
export interface RawTransformer extends RawModel {
  /** The normalised configuration as JSON text (JS names, `arch`, defaults filled in). */
  config(): string;
  /** A checkpoint name without its model type's prefix, or '' for a buffer that loading ignores. */
  canonicalName(name: string): string;
  /** The parameter that checkpoint tensor `name` must equal (a tied lm_head: the embedding), or ''. */
  tiedTo(name: string): string;
  /** Names and shapes of a whole checkpoint (prefixes and known buffers allowed), checked before anything loads. */
  checkStateDict(entries: Array<[name: string, shape: number[]]>): void;
  /** Copies one float32 tensor in (a name checkStateDict accepts; ignored buffers are no-ops, even with ptr 0). */
  loadTensor(name: string, tensor: TensorArg): void;
  /** Copies one tensor of F16 / BF16 bits (uint16 in wasm memory) in: kept 16-bit in a matrix of that storage. */
  loadTensor16(name: string, tensor: TensorArg, dtype: RawEnumValue): void;
  /** Rows [firstRow, firstRow + tensor.shape[0]) of one float32 tensor (a large tensor copied in pieces). */
  loadTensorRows(name: string, tensor: TensorArg, firstRow: number): void;
  /** The same of F16 / BF16 bits. */
  loadTensor16Rows(name: string, tensor: TensorArg, dtype: RawEnumValue, firstRow: number): void;
  /** Float32 once any weight matrix is float32 (loadTensor and training widen), else the 16-bit storage. */
  storage(): RawEnumValue;
  /** A forward pass; with a cache (made from this model) the tokens continue its sequences. */
  forward(args: TransformerForwardArgs, cache: RawKVCache | null): RawTransformerOutput;
  forwardMemory(args: TransformerForwardArgs, pastLength: number, withCache: boolean): RawMemoryNeeds;
  kvCacheMemory(batchSize: number, maxLength: number): RawMemoryNeeds;
  /** Mean cross-entropy of int32 tokens (B, T) against targets (B, T) (-100 ignored) and every gradient. */
  lossAndGrad(tokens: TensorArg, targets: TensorArg): { loss: number; gradParams: RawTensorList };
  /** One AdamW step on the batch; gradNorm is the total norm before clipping. */
  trainStep(tokens: TensorArg, targets: TensorArg, options: AdamWArgs): { loss: number; gradNorm: number };
  /** lossAndGrad (returnGradients true) or trainStep on tokens of this shape (ptr unused). */
  /** call: 0 trainStep, 1 lossAndGrad, 2 a gradient analysis (headImportance, attribution) */
  trainMemory(tokens: TensorArg, call: 0 | 1 | 2): RawMemoryNeeds;
  /** An encoder's or encoder–decoder's batch: inputs and options as a forward's (an encoder–decoder's decoderInputIds
   * absent: shift_right(labels)), labels (B) class ids or (B, T) token ids (-100 ignored); the mean cross-entropy
   * and every gradient on the loss path. */
  lossAndGradBatch(args: TransformerForwardArgs, labels: TensorArg): { loss: number; gradParams: RawTensorList };
  /** One AdamW step on such a batch; gradNorm is the total norm before clipping. */
  trainStepBatch(
    args: TransformerForwardArgs,
    labels: TensorArg,
    options: AdamWArgs,
  ): { loss: number; gradNorm: number };
  /** trainStepBatch (call 0), lossAndGradBatch (1) or a gradient analysis (2) on a source (B, S) and labels (B, T)
   *  (an analysis's decoder inputs) of these shapes. */
  trainBatchMemory(tokens: TensorArg, labels: TensorArg, call: 0 | 1 | 2): RawMemoryNeeds;
  /** method 0 gradient, 1 ablation; ablation 0 zero, 1 mean. importance (L, H). */
  headImportance(tokens: TensorArg, targets: TensorArg, method: number, ablation: number): {
    importance: RawTensor;
    loss: number;
  };
  /** tokens (1, T); method 0 gradient × input, 1 gradient, 2 occlusion: (T). */
  attribution(tokens: TensorArg, position: number, target: number, method: number): RawTensor;
  /** clean and corrupted (1, T): effect (L, H) on one logit of patching each head's clean output in. */
  patchHeads(
    clean: TensorArg,
    corrupted: TensorArg,
    position: number,
    target: number,
  ): { effect: RawTensor; cleanLogit: number; corruptedLogit: number };
  /** Encoders and encoder–decoders, on forward's arguments: ablation 0 zero, 1 mean; an encoder–decoder's
   *  importance is its encoder's, with decoderImportance and crossImportance. */
  inputHeadImportance(
    args: TransformerForwardArgs,
    labels: TensorArg,
    ablation: number,
  ): { importance: RawTensor; loss: number; decoderImportance?: RawTensor; crossImportance?: RawTensor };
  /** The same by the head masks' gradients (one backward of the training path; size it with trainMemory or
   *  trainBatchMemory, call 2). */
  encoderGradHeadImportance(
    args: TransformerForwardArgs,
    labels: TensorArg,
  ): { importance: RawTensor; loss: number; decoderImportance?: RawTensor; crossImportance?: RawTensor };
  /** Attribution of one logit over the tokens (T) or a vision model's patches (G, G): method 0 gradient × input,
   *  1 gradient (both on the encoder's block-0 input), 2 occlusion. */
  inputAttribution(args: TransformerForwardArgs, position: number, target: number, method: number): RawTensor;
  inputPatchHeads(
    clean: TransformerForwardArgs,
    corrupted: TransformerForwardArgs,
    position: number,
    target: number,
  ): {
    effect: RawTensor;
    cleanLogit: number;
    corruptedLogit: number;
    decoderEffect?: RawTensor;
    crossEffect?: RawTensor;
  };
}

export interface RawModule {
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  HEAPU8: Uint8Array;
  HEAPF32: Float32Array;
  HEAP32: Int32Array;
  /** The module's memory (shared in a threaded variant, whose workers may grow it: re-read its buffer). */
  wasmMemory?: WebAssembly.Memory;

  _MaskKind: RawMaskKinds;
  _CausalAlign: RawCausalAligns;
  _ScoresStage: RawScoresStages;
  /** Highway's target: 'WASM' (SIMD128) or 'EMU128' (scalar). */
  _targetName(): string;
  /** The cap on this module's wasm memory in bytes (-sMAXIMUM_MEMORY). */
  _maxMemoryBytes(): number;
  /** Sets the threads a call may use (1 for the single-thread variants, which ignore it); called once, at init. */
  _setThreads(n: number): void;
  /** The threads a call may use, the calling one included. */
  _threads(): number;
  _sdpa(args: SdpaCallArgs): RawResult;
  _sdpaMemory(args: SdpaCallArgs): RawMemoryNeeds;
  _sdpaBackward(args: SdpaCallArgs, gradOutput: TensorArg): RawGradients;
  _sdpaBackwardMemory(args: SdpaCallArgs): RawMemoryNeeds;
  _multiHeadAttentionMemory(args: MhaConfigArgs): RawMemoryNeeds;
  _tinyTransformerMemory(args: TinyTransformerArgs): RawMemoryNeeds;
  _MultiHeadAttention: new (args: MhaConfigArgs) => RawMultiHeadAttention;
  _KVCache: new (mha: RawMultiHeadAttention, batchSize: number, maxLength: number) => RawKVCache;
  _TinyTransformer: new (args: TinyTransformerArgs) => RawTinyTransformer;
  _WeightStorage: RawWeightStorages;
  /**
   * The parameters of a Transformer with this configuration and weight storage. A configuration is JSON text:
   * createModel's options (JS names, `arch`), or with huggingFace true a config.json. A bad field: RangeError naming
   * it; a field of the wrong JSON type: TypeError.
   */
  /** loading: the checkpoint is copied in pieces of _loadPieceBytes() (else initialising holds a whole tensor). */
  _transformerMemory(configJson: string, huggingFace: boolean, storage: RawEnumValue, loading: boolean): RawMemoryNeeds;
  /** The most bytes of a tensor that loadModel stages at once (whole rows). */
  _loadPieceBytes(): number;
  /** The configuration with the heads (an encoder's task, pooler) that a checkpoint's tensor names hold, as options JSON. */
  _transformerConfigWithHeads(configJson: string, huggingFace: boolean, names: string[]): string;
  /** initialise false: no random initialisation (every parameter is loaded next); 16-bit storage needs it false. */
  _Transformer: new (
    configJson: string,
    huggingFace: boolean,
    seed: number,
    initialise: boolean,
    storage: RawEnumValue,
  ) => RawTransformer;
  /** attnlab::TransformerKVCache (length, reset), made by CreateKVCache of `model`. */
  _TransformerKVCache: new (model: RawTransformer, batchSize: number, maxLength: number) => RawKVCache;
}
