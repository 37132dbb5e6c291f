// Type declarations of attnlab/worker (docs/api.md, "Off the calling thread"): init()'s API in a worker, every call
// returning a Promise.
import type {
  AbortSignalLike,
  AttentionGradients,
  CheckpointTensor,
  CreateModelOptions,
  EncoderDecoderForwardOptions,
  EncoderDecoderTrainBatch,
  EncoderDecoderOutput,
  EncoderDecoderTask,
  EncoderForwardOptions,
  EncoderOutput,
  EncoderTask,
  GenerateOptions,
  AttributionOptions,
  HeadImportanceOptions,
  HeadImportanceResult,
  PatchHeadsOptions,
  PatchHeadsResult,
  PixelValues,
  LoadModelFromBlobOptions,
  LoadModelOptions,
  ModelConfig,
  ModelForwardOptions,
  ModelOutput,
  AttentionResult,
  InitOptions,
  KVCacheOptions,
  LossAndGrad,
  ModelTrainStepOptions,
  ModelTrainStepResult,
  MultiHeadAttentionForwardOptions,
  MultiHeadAttentionGradients,
  MultiHeadAttentionOptions,
  SdpaBackwardOptions,
  SdpaGradients,
  SdpaOptions,
  SdpaResult,
  StateDict,
  Tensor,
  TensorInput,
  TinyTransformerOptions,
  TinyTransformerOutput,
  Tokens,
  TrainBatch,
  TrainOptions,
  TrainResult,
  TrainSampler,
  TrainStepOptions,
  TrainStepResult,
  Variant,
} from './index.js';

/** What the worker reads of an `AbortSignal` (any `AbortSignal` fits): its state and its `abort` event. */
export interface WorkerAbortSignal extends AbortSignalLike {
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * What every worker call also takes, in its options (or as a trailing argument where the synchronous method has
 * none). Calls run one at a time, in order.
 */
export interface CallOptions {
  /** Aborting drops the call if it has not started: it rejects with a DOMException named `AbortError`. */
  signal?: WorkerAbortSignal;
  /** Transfer the inputs' ArrayBuffers to the worker instead of copying them (they become detached here). */
  transfer?: boolean;
}

/** {@link KVCache} of the main API (of a module or a model), living in the worker (its length is a method here). */
export interface WorkerKVCache {
  length(call?: CallOptions): Promise<number>;
  reset(call?: CallOptions): Promise<void>;
  dispose(call?: CallOptions): Promise<void>;
}

/** {@link MultiHeadAttention} of the main API, living in the worker. */
export interface WorkerMultiHeadAttention {
  loadStateDict(stateDict: StateDict, call?: CallOptions): Promise<void>;
  stateDict(call?: CallOptions): Promise<Record<string, Tensor>>;
  forward(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    options?: Omit<MultiHeadAttentionForwardOptions, 'kvCache'> & { kvCache?: WorkerKVCache | null } & CallOptions,
  ): Promise<AttentionResult>;
  backward(gradOutput: TensorInput, call?: CallOptions): Promise<MultiHeadAttentionGradients>;
  /** A KV cache in the worker, for forward's `kvCache`. */
  createKVCache(options: KVCacheOptions, call?: CallOptions): Promise<WorkerKVCache>;
  /** Frees the object's wasm memory in the worker. */
  dispose(call?: CallOptions): Promise<void>;
}

/** {@link TinyTransformer} of the main API, living in the worker. */
export interface WorkerTinyTransformer {
  loadStateDict(stateDict: StateDict, call?: CallOptions): Promise<void>;
  stateDict(call?: CallOptions): Promise<Record<string, Tensor>>;
  forward(tokens: Tokens, call?: CallOptions): Promise<TinyTransformerOutput>;
  lossAndGrad(tokens: Tokens, targets: Tokens, call?: CallOptions): Promise<LossAndGrad>;
  trainStep(tokens: Tokens, targets: Tokens, options?: TrainStepOptions & CallOptions): Promise<TrainStepResult>;
  dispose(call?: CallOptions): Promise<void>;
}

/**
 * {@link Transformer} of the main API, living in the worker. `generate` calls `onToken` here for every token while the
 * worker goes on (returning false, or throwing, stops it), and its `signal` stops it even while it runs (AbortError).
 * `train` runs its loop in the worker and calls `onStep` here after each step (the worker waits for it: returning
 * false, or throwing, stops it there); its `signal` stops it between steps even while it runs (AbortError; the steps
 * done stay applied).
 */
export interface WorkerTransformer {
  readonly config: ModelConfig;
  /** As {@link Transformer.kind}: a plain property. */
  readonly kind: 'decoder' | 'encoder' | 'encoder-decoder';
  /** As {@link Transformer.task}: a plain property. */
  readonly task: 'causal-lm' | EncoderTask | EncoderDecoderTask;
  forward(
    tokens: Tokens,
    options?: Omit<ModelForwardOptions, 'kvCache'> & { kvCache?: WorkerKVCache | null } & CallOptions,
  ): Promise<ModelOutput>;
  /** An encoder's forward (kind 'encoder'). */
  forward(tokens: Tokens, options?: EncoderForwardOptions & CallOptions): Promise<EncoderOutput>;
  /** A vision model's forward (ViT). */
  forward(
    pixelValues: PixelValues,
    options?: Omit<EncoderForwardOptions, 'tokenTypeIds'> & CallOptions,
  ): Promise<EncoderOutput>;
  /** An encoder–decoder's forward (kind 'encoder-decoder'). */
  forward(tokens: Tokens, options: EncoderDecoderForwardOptions & CallOptions): Promise<EncoderDecoderOutput>;
  createKVCache(options: KVCacheOptions, call?: CallOptions): Promise<WorkerKVCache>;
  generate(prompt: Int32Array, options: Omit<GenerateOptions, 'signal'> & CallOptions): Promise<Int32Array>;
  lossAndGrad(tokens: Tokens, targets: Tokens, call?: CallOptions): Promise<LossAndGrad>;
  /** An encoder–decoder's training batch (kind 'encoder-decoder'). */
  lossAndGrad(batch: EncoderDecoderTrainBatch, call?: CallOptions): Promise<LossAndGrad>;
  trainStep(
    tokens: Tokens,
    targets: Tokens,
    options: ModelTrainStepOptions & CallOptions,
  ): Promise<ModelTrainStepResult>;
  trainStep(
    batch: EncoderDecoderTrainBatch,
    options: ModelTrainStepOptions & CallOptions,
  ): Promise<ModelTrainStepResult>;
  train(data: TrainBatch[] | TrainSampler, options: Omit<TrainOptions, 'signal'> & CallOptions): Promise<TrainResult>;
  headImportance(batch: TrainBatch, options?: HeadImportanceOptions & CallOptions): Promise<HeadImportanceResult>;
  attribution(tokens: Tokens, options: AttributionOptions & CallOptions): Promise<Tensor>;
  patchHeads(clean: Tokens, corrupted: Tokens, options: PatchHeadsOptions & CallOptions): Promise<PatchHeadsResult>;
  stateDict(call?: CallOptions): Promise<Record<string, Tensor>>;
  loadStateDict(stateDict: Record<string, CheckpointTensor | Float32Array>, call?: CallOptions): Promise<void>;
  dispose(call?: CallOptions): Promise<void>;
}

/** init()'s result, in a worker: the same functions, returning Promises that reject with the same errors. */
export interface AttnlabWorker {
  readonly variant: Variant;
  readonly version: string;
  readonly threads: number;
  memoryBytes(call?: CallOptions): Promise<number>;
  scaledDotProductAttention(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    options?: SdpaOptions & CallOptions,
  ): Promise<SdpaResult>;
  scaledDotProductAttentionBackward(
    query: TensorInput,
    key: TensorInput,
    value: TensorInput,
    gradOutput: TensorInput,
    options?: SdpaBackwardOptions & CallOptions,
  ): Promise<SdpaGradients>;
  createMultiHeadAttention(options: MultiHeadAttentionOptions, call?: CallOptions): Promise<WorkerMultiHeadAttention>;
  createTinyTransformer(options: TinyTransformerOptions, call?: CallOptions): Promise<WorkerTinyTransformer>;
  createModel(options: CreateModelOptions, call?: CallOptions): Promise<WorkerTransformer>;
  /**
   * `call.transfer: true` moves the checkpoint's buffers to the worker instead of copying them. `tensors` may be
   * the `model.safetensors` `File` / `Blob` itself: the worker reads it one tensor at a time (a browser clones a
   * `File` by reference; Node cannot clone `fs.openAsBlob`'s file-backed Blobs, only in-memory ones).
   */
  loadModel(options: LoadModelOptions | LoadModelFromBlobOptions, call?: CallOptions): Promise<WorkerTransformer>;
  /** Ends the worker; every call that has not finished rejects. */
  terminate(): void;
}

/**
 * Starts a module Web Worker (in a page or a worker) or a Node worker_threads Worker, loads attnlab there with
 * init()'s options, and resolves to its API. Rejects as init() would.
 */
export declare function initWorker(options?: InitOptions): Promise<AttnlabWorker>;
