// The whole-model part of attnlab's types (re-exported by index.d.ts): the normalised configuration of each model
// type, createModel's and loadModel's options, a Transformer's methods, their options and results.

import type {
  AbortSignalLike,
  Attnlab,
  KVCache,
  KVCacheOptions,
  LossAndGrad,
  Tensor,
  TensorInput,
  Tokens,
} from './index.js';
import type { BlobLike } from './interop.js';

/** The normalised configuration of a GPT-2 ({@link Transformer.config}; docs/api.md, "Transformer models"). */
export interface Gpt2Config {
  arch: 'gpt2';
  /** V: token ids. */
  vocabSize: number;
  /** Positions a forward (with its cache) may reach: `n_positions`. */
  contextLength: number;
  /** E: `n_embd`, divisible by `numHeads`. */
  embedDim: number;
  /** L: blocks. */
  numLayers: number;
  /** H: heads of E / H features. */
  numHeads: number;
  /** LayerNorm's epsilon (`layer_norm_epsilon`). Default 1e-5. */
  normEps: number;
}

/** The normalised configuration of a Llama-family model (Llama, Mistral, Qwen2). */
export interface LlamaConfig {
  arch: 'llama';
  vocabSize: number;
  /** `max_position_embeddings`. */
  contextLength: number;
  /** E: `hidden_size`. */
  embedDim: number;
  numLayers: number;
  /** H: query heads. */
  numHeads: number;
  /** Key/value heads, a divisor of `numHeads` (grouped-query attention). Default `numHeads`. */
  numKVHeads: number;
  /** Features per head, even. Default E / H. */
  headDim: number;
  /** The SwiGLU MLP's width (`intermediate_size`). Default 4·E. */
  hiddenDim: number;
  /** RMSNorm's epsilon. Default 1e-6. */
  normEps: number;
  /** RoPE's base θ. Default 10000. */
  ropeTheta: number;
  /** Whether the LM head is the embedding (no `lm_head.weight`). Default false. */
  tieEmbeddings: boolean;
  /** Biases of q/k/v (`'qkv'`, Qwen2) or of q/k/v and o_proj (`'all'`, Llama's `attention_bias`). Default `'none'`. */
  attentionBias: 'none' | 'qkv' | 'all';
  /** Mistral's sliding window W: a query at position p sees keys p − W < j ≤ p. null = none (the default). */
  slidingWindow: number | null;
}

/**
 * The normalised configuration of a Qwen3 model: the Llama family's fields but `slidingWindow`, and an RMSNorm of
 * each query and key head before RoPE (`q_norm`, `k_norm`).
 */
export interface Qwen3Config extends Omit<LlamaConfig, 'arch' | 'attentionBias' | 'slidingWindow' | 'headDim'> {
  arch: 'qwen3';
  /** Features per head, even. Default 128 (`Qwen3Config`'s). */
  headDim: number;
  /** Biases of q/k/v and o_proj (`'all'`, Qwen3's `attention_bias`). Default `'none'`. */
  attentionBias: 'none' | 'all';
}

/** The head an encoder computes ({@link Transformer.task}); loadModel reads it from the checkpoint's head tensors. */
export type EncoderTask = 'base' | 'masked-lm' | 'sequence-classification' | 'image-classification';

/** An encoder–decoder's head ({@link Transformer.task}): `'seq2seq-lm'` (the LM head) or `'base'`. */
export type EncoderDecoderTask = 'base' | 'seq2seq-lm';

/**
 * The normalised configuration of a BERT or RoBERTa encoder (docs/api.md, "Encoders"): post-LayerNorm blocks,
 * learned positions, token types; the head from the checkpoint (`task`, `pooler`).
 */
export interface EncoderConfig {
  arch: 'bert' | 'roberta';
  vocabSize: number;
  /** Tokens a forward may hold: `max_position_embeddings` (RoBERTa: less `pad_token_id` + 1). */
  contextLength: number;
  /** E: `hidden_size`, divisible by `numHeads`. */
  embedDim: number;
  numLayers: number;
  numHeads: number;
  /** The MLP's width (`intermediate_size`). Default 4·E. */
  hiddenDim: number;
  /** LayerNorm's epsilon (`layer_norm_eps`). Default 1e-12. */
  normEps: number;
  /** `hidden_act`: `'gelu'` (erf), `'gelu_new'` / `'gelu_pytorch_tanh'` (tanh), `'relu'`, `'silu'` / `'swish'`. */
  hiddenAct: 'gelu' | 'gelu_new' | 'gelu_pytorch_tanh' | 'relu' | 'silu' | 'swish';
  /** Token types (`type_vocab_size`). Default 2. */
  typeVocabSize: number;
  /** `pad_token_id` (RoBERTa's positions count from it). Default 0. */
  padTokenId: number;
  /** Default `'base'`. */
  task: EncoderTask;
  /** Whether the model has the pooler (`pooledOutput`). Default true. */
  pooler: boolean;
  /** Classes of a `'sequence-classification'` head (`num_labels`). Default 2. */
  numLabels: number;
}

/**
 * A ViT (`model_type` `'vit'`): pre-LayerNorm blocks over [CLS] and the (imageSize / patchSize)² patches of a
 * stride-patchSize convolution, learned positions, a final `layernorm`; an image-classification head on token 0.
 */
export interface VitConfig extends Pick<
  EncoderConfig,
  'embedDim' | 'numLayers' | 'numHeads' | 'hiddenDim' | 'normEps' | 'hiddenAct'
> {
  arch: 'vit';
  /** None: a vision model has no vocabulary (absent). */
  vocabSize?: undefined;
  /** 1 + (imageSize / patchSize)²: the tokens of every forward. */
  contextLength: number;
  /** pixelValues are (B, numChannels, imageSize, imageSize). */
  imageSize: number;
  patchSize: number;
  numChannels: number;
  /** Biases of q, k and v (`qkv_bias`). */
  qkvBias: boolean;
  /** `'base'` or `'image-classification'`; the pooler and numLabels as an encoder's. */
  task: EncoderTask;
  pooler: boolean;
  numLabels: number;
}

/**
 * A Marian encoder–decoder (Helsinki-NLP opus-mt, `model_type` `'marian'`): numLayers encoder blocks and
 * decoderLayers decoder blocks (self-attention, cross-attention, MLP; post-LayerNorm), sinusoidal positions.
 */
export interface MarianConfig {
  arch: 'marian';
  vocabSize: number;
  /** `max_position_embeddings`: positions of each stack. */
  contextLength: number;
  embedDim: number;
  /** The encoder's blocks (`encoder_layers`). */
  numLayers: number;
  /** The decoder's blocks (`decoder_layers`). */
  decoderLayers: number;
  numHeads: number;
  hiddenDim: number;
  hiddenAct: EncoderConfig['hiddenAct'];
  padTokenId: number;
  /** The decoder's first input (generate). */
  decoderStartTokenId: number;
  /** generate stops after it. */
  eosTokenId: number;
  /** generate's last id when it runs to maxNewTokens (`forced_eos_token_id`, MarianConfig's default 0); null: none. */
  forcedEosTokenId: number | null;
  /** Token embeddings × √embedDim. */
  scaleEmbedding: boolean;
  tieEmbeddings: boolean;
  task: EncoderDecoderTask;
}

export interface T5Config {
  arch: 't5';
  vocabSize: number;
  /** `n_positions` (positions are relative: the longest sequence generate and the memory checks allow). */
  contextLength: number;
  embedDim: number;
  /** The encoder's blocks (`num_layers`). */
  numLayers: number;
  /** The decoder's blocks (`num_decoder_layers`). */
  decoderLayers: number;
  numHeads: number;
  /** `d_kv`: numHeads × headDim may differ from embedDim. */
  headDim: number;
  /** `d_ff`. */
  hiddenDim: number;
  /** `relu` (T5 v1.0) or `gated-gelu` (v1.1, flan-t5: gelu_new(wi_0 x) ⊙ wi_1 x). */
  feedForwardProj: 'relu' | 'gated-gelu';
  /** RMSNorm ε (`layer_norm_epsilon`). */
  normEps: number;
  /** `relative_attention_num_buckets`, `relative_attention_max_distance`. */
  relativeBuckets: number;
  relativeMaxDistance: number;
  padTokenId: number;
  decoderStartTokenId: number;
  eosTokenId: number;
  /** The LM head is `shared` (the decoder's output scaled by embedDim^−0.5 first). */
  tieEmbeddings: boolean;
  task: EncoderDecoderTask;
}

/** {@link Transformer.config}: what {@link Attnlab.createModel} takes back to build the same architecture. */
export type ModelConfig = Gpt2Config | LlamaConfig | Qwen3Config | EncoderConfig | VitConfig | MarianConfig | T5Config;

/** Options of {@link Attnlab.createModel}: a {@link ModelConfig} (fields with defaults optional) and a seed. */
export type CreateModelOptions =
  | (Pick<Gpt2Config, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'> &
      Partial<Pick<Gpt2Config, 'normEps'>> & { seed?: number })
  | (Pick<LlamaConfig, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'> &
      Partial<Omit<LlamaConfig, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'>> & {
        /** Seed of the initialisation (normal(0, 0.02) matrices and embeddings, norms 1, biases 0). Default 0. */
        seed?: number;
      })
  | (Pick<Qwen3Config, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'> &
      Partial<Omit<Qwen3Config, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'>> & {
        seed?: number;
      })
  | (Pick<EncoderConfig, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'> &
      Partial<Omit<EncoderConfig, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'>> & {
        seed?: number;
      })
  | (Pick<VitConfig, 'arch' | 'embedDim' | 'numLayers' | 'numHeads' | 'imageSize' | 'patchSize' | 'numChannels'> &
      Partial<Omit<VitConfig, 'arch' | 'embedDim' | 'numLayers' | 'numHeads'>> & { seed?: number })
  | (Pick<
      MarianConfig,
      'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'decoderLayers' | 'numHeads'
    > &
      Partial<Omit<MarianConfig, 'arch' | 'vocabSize' | 'contextLength' | 'embedDim' | 'numLayers' | 'numHeads'>> & {
        seed?: number;
      })
  | (Pick<T5Config, 'arch' | 'vocabSize' | 'embedDim' | 'numLayers' | 'decoderLayers' | 'numHeads'> &
      Partial<Omit<T5Config, 'arch' | 'vocabSize' | 'embedDim' | 'numLayers' | 'decoderLayers' | 'numHeads'>> & {
        seed?: number;
      });

/**
 * A Hugging Face `config.json` object, as parsed (`model_type` `'gpt2'`, `'llama'`, `'mistral'`, `'qwen2'`, `'qwen3'`,
 * `'bert'`, `'roberta'`, `'vit'`, `'marian'` or `'t5'`).
 */
export interface HuggingFaceConfig {
  model_type: string;
  [field: string]: unknown;
}

/** A checkpoint tensor: {@link readSafetensors}' (a non-float dtype has `data: null`) or any float32 tensor. */
export type CheckpointTensor =
  TensorInput | { data: Float32Array | null; shape: number[]; dtype?: string; bytes?: Uint8Array; bits?: Uint16Array };

/** Options of {@link Attnlab.loadModel}. */
export interface LoadModelOptions {
  /** The checkpoint's `config.json` as parsed, or a normalised {@link ModelConfig} (with `arch`). */
  config: HuggingFaceConfig | ModelConfig;
  /**
   * The checkpoint's tensors, e.g. `readSafetensors(bytes)` (or, awaited, of a `File`): Hugging Face's names with
   * or without the checkpoint's prefix (`transformer.`, `model.`, `bert.`, `roberta.`); the buffers checkpoints carry
   * (and BERT's next-sentence head) are ignored; a tied copy (lm_head, a masked-LM decoder) must equal its tie.
   */
  tensors: Record<string, CheckpointTensor>;
}

/** Options of {@link Attnlab.loadModel} with the checkpoint's file: the model comes as a Promise. */
export interface LoadModelFromBlobOptions {
  /** The checkpoint's `config.json` as parsed, or a normalised {@link ModelConfig} (with `arch`). */
  config: HuggingFaceConfig | ModelConfig;
  /** The `model.safetensors` file itself (a `Blob`, a `File`, Node's `fs.openAsBlob`): read one tensor at a time. */
  tensors: BlobLike;
}

/** Options of {@link Transformer.forward}. */
export interface ModelForwardOptions {
  /** `true` (every layer) or layer indices: `attentions[l]` (B, H, T, P + T) for those layers, `null` for the others. */
  outputAttentions?: boolean | number[];
  /** Also return the L + 1 hidden states (B, T, E): block inputs, then after the final norm. Default false. */
  outputHiddenStates?: boolean;
  /** (B, P + T), **1 = token, 0 = padding** (Hugging Face's `attention_mask`). Positions stay P … P + T − 1. */
  attentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (L, H): multiplies head h's weights in layer l after the softmax (Hugging Face's `head_mask`). */
  headMask?: TensorInput | null;
  /** Decoding: a cache of this model; the tokens continue its sequences at positions P = `kvCache.length` …. */
  kvCache?: KVCache | null;
  /**
   * Return only each sequence's last logits, (B, 1, vocabSize): all that choosing the next token needs (what
   * {@link Transformer.generate} uses), without T · vocabSize floats. Default false.
   */
  lastLogitsOnly?: boolean;
}

/** Options of an encoder's {@link Transformer.forward} (no causal mask; no kvCache, no lastLogitsOnly). */
export interface EncoderForwardOptions {
  /** (B, T) token types in [0, typeVocabSize) (BERT's segments). Default zeros. */
  tokenTypeIds?: { data: Int32Array; shape: number[] } | null;
  /** (B, T), 1 = token, 0 = padding: no query attends to a padded key. */
  attentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (L, H): multiplies head h's weights in layer l after the softmax (Hugging Face's `head_mask`). */
  headMask?: TensorInput | null;
  /** `true` (every layer) or layer indices: `attentions[l]` (B, H, T, T), `null` for the layers not asked for. */
  outputAttentions?: boolean | number[];
  /** Also return the L + 1 hidden states (B, T, E): the embeddings' output, then each block's. Default false. */
  outputHiddenStates?: boolean;
}

/** What an encoder's {@link Transformer.forward} returns. */
export interface EncoderOutput {
  /** (B, T, E): the last block's output. */
  lastHiddenState: Tensor;
  /** (B, E) `tanh(dense(h[:, 0]))`, when the model has a pooler. */
  pooledOutput?: Tensor;
  /** 'masked-lm': (B, T, vocabSize); 'sequence-classification': (B, numLabels); 'base': absent. */
  logits?: Tensor;
  attentions?: Array<Tensor | null>;
  hiddenStates?: Tensor[];
}

/** A vision model's input: normalised pixels (B, numChannels, imageSize, imageSize), row-major. */
export interface PixelValues {
  data: Float32Array;
  shape: number[];
}

/**
 * An encoder's training batch ({@link Transformer.lossAndGrad}, {@link Transformer.trainStep}; docs/api.md,
 * "Training an encoder"): the input the model takes (`pixelValues` for ViT, `inputIds` for a text encoder), its
 * padding and token types as forward's, and the labels.
 */
export interface EncoderTrainBatch {
  inputIds?: Tokens | null;
  pixelValues?: PixelValues | null;
  /** (B, T), 1 = token, 0 = padding: no query attends to a padded key. */
  attentionMask?: { data: Uint8Array; shape: number[] } | null;
  tokenTypeIds?: { data: Int32Array; shape: number[] } | null;
  /** (B) class ids in [0, numLabels), −100 ignored (at least one counted). */
  labels: { data: Int32Array; shape: number[] };
}

/** Options of an encoder–decoder's {@link Transformer.forward} (tokens: the encoder's ids (B, S)). */
export interface EncoderDecoderForwardOptions {
  /** (B, T): the decoder's inputs (Hugging Face: `shift_right(labels)`). Required: a RangeError naming it. */
  decoderInputIds: { data: Int32Array; shape: number[] };
  /** (B, S), 1 = token, 0 = padding: the encoder's keys and the cross-attention's. */
  attentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (B, T), the decoder's padding. */
  decoderAttentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (numLayers, H), (decoderLayers, H), (decoderLayers, H): Hugging Face's `head_mask` of each attention kind. */
  headMask?: TensorInput | null;
  decoderHeadMask?: TensorInput | null;
  crossAttnHeadMask?: TensorInput | null;
  /** `true` (every layer) or layer indices (of either stack): the three attention lists, null where not asked for. */
  outputAttentions?: boolean | number[];
  /** Both stacks' hidden states: numLayers + 1 and decoderLayers + 1 tensors. */
  outputHiddenStates?: boolean;
}

/**
 * An encoder–decoder's training batch ({@link Transformer.lossAndGrad}, {@link Transformer.trainStep}): the
 * encoder's ids and the decoder's labels, Hugging Face's `input_ids` and `labels`.
 */
export interface EncoderDecoderTrainBatch {
  /** (B, S): the encoder's ids. */
  inputIds: Tokens;
  /** (B, S), 1 = token, 0 = padding: the encoder's keys and the cross-attention's. */
  attentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (B, T): the decoder's inputs; default `shift_right(labels)` (decoderStartTokenId, then the labels but the last,
   * −100 replaced by padTokenId), as Hugging Face's. */
  decoderInputIds?: Tokens | null;
  /** (B, T), the decoder's padding. */
  decoderAttentionMask?: { data: Uint8Array; shape: number[] } | null;
  /** (B, T): the target ids, −100 = ignored; the loss is their mean cross-entropy. */
  labels: Tokens;
}

/** What an encoder–decoder's {@link Transformer.forward} returns. */
export interface EncoderDecoderOutput {
  /** 'seq2seq-lm': (B, T, vocabSize) (the decoder's output, `final_logits_bias` added). */
  logits?: Tensor;
  /** 'base': the decoder's last hidden state (B, T, E). */
  lastHiddenState?: Tensor;
  /** (B, S, E). */
  encoderLastHiddenState: Tensor;
  /** (B, H, S, S) per encoder layer. */
  encoderAttentions?: Array<Tensor | null>;
  /** (B, H, T, T) per decoder layer. */
  decoderAttentions?: Array<Tensor | null>;
  /** (B, H, T, S) per decoder layer: queries of the decoder, keys of the encoder. */
  crossAttentions?: Array<Tensor | null>;
  encoderHiddenStates?: Tensor[];
  decoderHiddenStates?: Tensor[];
}

/** What {@link Transformer.forward} returns. */
export interface ModelOutput {
  /** (B, T, vocabSize). */
  logits: Tensor;
  /** With `outputAttentions`: one entry per layer, (B, H, T, P + T) softmax weights, or null for a layer not asked for. */
  attentions?: Array<Tensor | null>;
  /** With `outputHiddenStates`: L + 1 tensors (B, T, E). */
  hiddenStates?: Tensor[];
}

/** What `onToken` gets as its third argument when {@link GenerateOptions.outputAttentions} asks for it. */
export interface GenerateTokenInfo {
  /** Per layer: (H, S), the weights of the query that chose the id over its S = prompt.length + step keys; null for a layer not asked for. */
  attentions: Array<Tensor | null>;
}

/** Options of {@link Transformer.generate}. */
export interface GenerateOptions {
  /** How many ids to generate (≥ 0); prompt.length + maxNewTokens must not pass contextLength (RangeError up front). */
  maxNewTokens: number;
  /** ≥ 0; 0 = greedy (argmax). Default 1. */
  temperature?: number;
  /** Sample among the topK largest logits only. Default: all. */
  topK?: number;
  /** In (0, 1]: nucleus sampling (Hugging Face's `top_p`). Default 1. */
  topP?: number;
  /** The sampler's seed (`createRng`'s), a non-negative safe integer: same seed, same ids. Default 0. */
  seed?: number;
  /** Called after each new id; returning false stops (the ids so far are returned). */
  onToken?: (id: number, step: number, info?: GenerateTokenInfo) => unknown;
  /** Passes each new id's attention rows to `onToken` (`true`: every layer, or layer indices). */
  outputAttentions?: boolean | number[];
  /** Stop after generating one of these ids (it is returned). */
  eosTokenId?: number | number[];
  /** Checked before each step: an aborted signal throws its reason (by default an `AbortError`). */
  signal?: AbortSignalLike;
}

/** Options of {@link Transformer.trainStep}: one `torch.optim.AdamW` step, after `clip_grad_norm_` when asked for. */
export interface ModelTrainStepOptions {
  /** The learning rate, a finite number > 0. Required. */
  lr: number;
  /** Decoupled weight decay (≥ 0), on tensors of ≥ 2 dimensions only (nanoGPT's groups). Default 0.01. */
  weightDecay?: number;
  /** `[beta1, beta2]`, each in [0, 1). Default `[0.9, 0.999]`. */
  betas?: [number, number];
  /** ≥ 0. Default 1e-8. */
  eps?: number;
  /** Clip the gradients' total norm to this (> 0) first, as `torch.nn.utils.clip_grad_norm_`. Default: no clipping. */
  clipGradNorm?: number | null;
}

/** Options of {@link Transformer.headImportance}. */
export interface HeadImportanceOptions {
  /** 'gradient' (default): one backward; 'ablation': a forward per head. */
  method?: 'gradient' | 'ablation';
  /** Method 'ablation' only: 'zero' (default, ξ_{l,h} = 0) or 'mean' (the head's mean output over the batch). */
  ablation?: 'zero' | 'mean';
}

/** What {@link Transformer.headImportance} returns. */
export interface HeadImportanceResult {
  /** (L, H). */
  importance: Tensor;
  /** The mean over rows with a target of each row's mean cross-entropy (without any ablation). */
  loss: number;
}

/** Options of {@link Transformer.attribution}. */
export interface AttributionOptions {
  /** The logit's position, in [0, T). */
  position: number;
  /** The logit's token id, in [0, vocabSize). */
  target: number;
  /** 'gradient-x-input' (default), 'gradient' or 'occlusion'. */
  method?: 'gradient-x-input' | 'gradient' | 'occlusion';
}

/** Options of {@link Transformer.patchHeads}: the logit looked at. */
export interface PatchHeadsOptions {
  /** In [0, T). */
  position: number;
  /** In [0, vocabSize). */
  target: number;
}

/** What {@link Transformer.patchHeads} returns. */
export interface PatchHeadsResult {
  /** (L, H): the patched forward's logit minus corruptedLogit. */
  effect: Tensor;
  cleanLogit: number;
  corruptedLogit: number;
}

/** An encoder–decoder's three kinds of head: (L, H) encoder, (Ld, H) decoder self-attention, (Ld, H) cross. */
export interface HeadsByKind {
  encoder: Tensor;
  decoder: Tensor;
  cross: Tensor;
}

/**
 * The batch of {@link Transformer.headImportance} for an encoder or encoder–decoder (the API contract's batch
 * object): the inputs as forward takes them and labels, (B, T) token ids (masked-LM: the tokens' positions;
 * seq2seq-lm: the decoder's) or (B) class ids (classification), −100 = ignored.
 */
export interface LabelledBatch {
  /** Token ids (B, T) (an encoder–decoder's source ids (B, S)); a vision model takes pixelValues instead. */
  inputIds?: Tokens;
  pixelValues?: PixelValues;
  /** (B, T), 1 = token, 0 = padding; mean ablation averages over the tokens only. */
  attentionMask?: { data: Uint8Array; shape: number[] };
  tokenTypeIds?: Tokens;
  /** An encoder–decoder's decoder inputs (B, T); default Hugging Face's shift_right(labels). */
  decoderInputIds?: Tokens;
  labels: { data: Int32Array; shape: number[] };
}

/** The options of an encoder's or encoder–decoder's attribution and patching: the inputs' other parts. */
export interface EncoderLogitOptions {
  /** A masked-LM's token position or a seq2seq-lm's decoder position; a classifier's: 0 (the default). */
  position?: number;
  /** A token id, or a class of a classifier. */
  target: number;
  tokenTypeIds?: Tokens;
  /** An encoder–decoder's decoder inputs (1, T): required. */
  decoderInputIds?: Tokens;
}

/** What {@link Transformer.trainStep} returns. */
export interface ModelTrainStepResult {
  /** The loss on this batch before the update (as {@link Transformer.lossAndGrad} would give). */
  loss: number;
  /** The gradients' total norm before clipping (`clip_grad_norm_`'s return value), with or without `clipGradNorm`. */
  gradNorm: number;
}

/** One batch of {@link Transformer.train}: tokens and their targets, both (B, T). */
export interface TrainBatch {
  tokens: Tokens;
  /** Target ids, −100 = ignored. */
  targets: Tokens;
}

/**
 * {@link Transformer.train}'s random batches: each step takes `batchSize` windows of `blockLength` ids from `ids`
 * (starts drawn uniformly from the ES module entry's `createRng(seed)`), the targets being the ids one position
 * later.
 */
export interface TrainSampler {
  /** The token sequence (e.g. a whole corpus); copied once. */
  ids: Int32Array;
  batchSize: number;
  /** T, at most contextLength; `ids` must hold at least blockLength + 1 ids. */
  blockLength: number;
  /** The windows' seed, a non-negative safe integer. Default 0: the same seed draws the same windows. */
  seed?: number;
}

/** What `onStep` of {@link Transformer.train} gets after each step. */
export interface TrainStepInfo {
  /** 0, 1, … */
  step: number;
  loss: number;
  gradNorm: number;
}

/** Options of {@link Transformer.train}. */
export interface TrainOptions extends ModelTrainStepOptions {
  /** How many steps (≥ 0). Default: one per batch of an array; required with a {@link TrainSampler}. */
  steps?: number;
  /** Called after each step; returning false stops (the steps so far are kept and returned). */
  onStep?: (info: TrainStepInfo) => unknown;
  /** Checked before each step: an aborted signal throws its reason (by default an `AbortError`); the steps done stay. */
  signal?: AbortSignalLike;
}

/** What {@link Transformer.train} returns: one entry per step done. */
export interface TrainResult {
  losses: Float32Array;
  gradNorms: Float32Array;
}

/**
 * A whole model in eval mode, owning wasm memory: a decoder (GPT-2, the Llama family, Qwen3), an encoder (BERT,
 * RoBERTa, ViT) or an encoder–decoder (Marian, T5: {@link Transformer.kind}; createKVCache and generate are the
 * decoders' and the encoder–decoders'; lossAndGrad and trainStep every kind's, an encoder's and an encoder–decoder's
 * in the batch form; train the decoders' only, a TypeError naming the method on the others). Create with {@link Attnlab.createModel} or
 * {@link Attnlab.loadModel}; **call {@link Transformer.dispose}** (or use `using`) when done.
 */
export interface Transformer {
  /** The normalised configuration (frozen): `createModel(model.config)` builds the same architecture. */
  readonly config: ModelConfig;
  /** `'decoder'` (GPT-2, the Llama family, Qwen3), `'encoder'` (BERT, RoBERTa, ViT) or `'encoder-decoder'` (Marian). */
  readonly kind: 'decoder' | 'encoder' | 'encoder-decoder';
  /** `'causal-lm'` for decoders; an encoder's head ({@link EncoderTask}); an encoder–decoder's. */
  readonly task: 'causal-lm' | EncoderTask | EncoderDecoderTask;
  /**
   * Logits, and on request attention weights and hidden states.
   * @throws TypeError for a wrong type; RangeError for a bad shape, a token id outside [0, vocabSize), T + P past
   *   contextLength or the cache's maxLength, a bad mask shape or layer index; Error after dispose.
   */
  forward(tokens: Tokens, options?: ModelForwardOptions): ModelOutput;
  /**
   * An encoder's forward (`model.kind === 'encoder'`): lastHiddenState, pooledOutput and logits as its head gives.
   * @throws as above; RangeError for tokenTypeIds of another shape than tokens or out of [0, typeVocabSize);
   *   TypeError for a decoder's option (kvCache, lastLogitsOnly).
   */
  forward(tokens: Tokens, options?: EncoderForwardOptions): EncoderOutput;
  /**
   * A vision model's forward (ViT): over [CLS] and the patches.
   * @throws RangeError naming pixelValues for a shape other than (B, numChannels, imageSize, imageSize), or tokens
   *   for token ids; pixelValues to a text model: RangeError naming pixelValues.
   */
  forward(pixelValues: PixelValues, options?: Omit<EncoderForwardOptions, 'tokenTypeIds'>): EncoderOutput;
  /**
   * An encoder–decoder's forward (`model.kind === 'encoder-decoder'`): tokens are the encoder's ids (B, S).
   * @throws RangeError naming decoderInputIds when it is missing; as above for shapes, ids and masks.
   */
  forward(tokens: Tokens, options: EncoderDecoderForwardOptions): EncoderDecoderOutput;
  /** An empty KV cache of batchSize sequences of up to maxLength (≤ contextLength) positions. */
  createKVCache(options: KVCacheOptions): KVCache;
  /**
   * New ids after `prompt`: greedy at temperature 0, else seeded sampling (temperature, topK, topP). An
   * encoder–decoder's prompt is its source: the decoder starts at decoderStartTokenId, never chooses padTokenId,
   * ends with forcedEosTokenId when it reaches maxNewTokens (if set) and stops after eosTokenId.
   * @throws RangeError up front when prompt.length + maxNewTokens passes contextLength (an encoder–decoder: either
   *   passes it) or an id is out of range.
   */
  generate(prompt: Int32Array, options: GenerateOptions): Int32Array;
  /**
   * The mean cross-entropy of the logits of `tokens` (B, T) against `targets` (B, T), over the targets that are not
   * −100, and its gradient for every parameter under {@link Transformer.stateDict}'s names (a tied embedding once:
   * the lookup's and the LM head's parts summed). Causal, positions 0 … T − 1, no padding, dropout off.
   * @throws TypeError for a wrong type; RangeError for shapes that differ, T past contextLength, a token id outside
   *   [0, vocabSize), a target outside it that is not −100, no target that is not −100, or a batch whose training
   *   memory cannot fit (before anything is copied); Error after dispose.
   */
  lossAndGrad(tokens: Tokens, targets: Tokens): LossAndGrad;
  /**
   * An encoder–decoder (t5, marian): the mean cross-entropy of the decoder's logits against `batch.labels` (−100
   * ignored) and every parameter's gradient (the shared embedding's from both stacks and the tied head, each
   * stack's relative position bias table's, the cross-attention's; Marian's `final_logits_bias` is a buffer: none).
   * @throws TypeError for a missing `batch.inputIds` or `batch.labels`, an unknown field, a wrong type; RangeError
   *   naming the field for shapes that differ, S or T past contextLength, an id out of range, no label that is not
   *   −100, or a batch whose training memory cannot fit (before anything is copied).
   */
  lossAndGrad(batch: EncoderDecoderTrainBatch): LossAndGrad;
  /**
   * An encoder's (kind 'encoder'): the mean cross-entropy of its head's
   * logits against `batch.labels` (−100 ignored) and the gradient of every parameter on the loss path (a pooler
   * that the head does not read has no entry). Bidirectional, padded keys (`attentionMask`) pass nothing.
   * @throws TypeError for a wrong type or a further argument; RangeError naming `batch.inputIds` /
   *   `batch.pixelValues` (the input the model does not take, or a wrong shape), `batch.labels` (shape, a class id
   *   outside [0, numLabels), none counted), `batch.attentionMask`, or `task` for a model this release does not
   *   train; a batch whose training memory cannot fit (before anything is copied).
   */
  lossAndGrad(batch: EncoderTrainBatch): LossAndGrad;
  /**
   * One `torch.optim.AdamW` step on this batch (gradients clipped first with `clipGradNorm`); AdamW's moments and
   * step count stay in the model until its parameters are replaced (loadStateDict).
   * @throws as {@link Transformer.lossAndGrad}; TypeError / RangeError naming `lr` (required), `weightDecay`,
   *   `betas`, `eps` or `clipGradNorm`.
   */
  trainStep(tokens: Tokens, targets: Tokens, options: ModelTrainStepOptions): ModelTrainStepResult;
  /** An encoder–decoder: one AdamW step on `batch` as {@link Transformer.lossAndGrad}'s. */
  trainStep(batch: EncoderDecoderTrainBatch, options: ModelTrainStepOptions): ModelTrainStepResult;
  /**
   * An encoder's AdamW step on one batch, as decoders' (weight decay on ≥ 2-D tensors as stored: ViT's `cls_token`
   * and `position_embeddings` too; a tensor off the loss path is not updated).
   * @throws as the batch form of {@link Transformer.lossAndGrad}, and as trainStep's options.
   */
  trainStep(batch: EncoderTrainBatch, options: ModelTrainStepOptions): ModelTrainStepResult;
  /**
   * `steps` AdamW steps over `data`: batches in turn (again from the first after the last), or random windows of a
   * token sequence. Every argument is checked before the first step.
   * @throws as {@link Transformer.trainStep} (naming `data[i].tokens`, `data.ids`, …); the signal's reason when it
   *   aborts; what `onStep` throws.
   */
  train(data: TrainBatch[] | TrainSampler, options: TrainOptions): TrainResult;
  /**
   * Head importance (docs/api.md, "Looking past the weights"): loss_b is row b's mean cross-entropy (rows without a
   * target left out), `loss` their mean. 'gradient': the mean over rows of |∂loss_b/∂ξ_{l,h}| at ξ = 1 (ξ the head
   * mask; one backward); 'ablation': the loss with head (l, h) ablated minus `loss` (L·H forwards), by `ablation`
   * 'zero' (ξ_{l,h} = 0) or 'mean' (the head's output replaced by its mean over the batch's B·T positions).
   * @throws as {@link Transformer.lossAndGrad} (naming `batch.tokens`, `batch.targets`); TypeError / RangeError
   *   naming `options.method` or `options.ablation` (given with method 'gradient' too).
   */
  headImportance(batch: TrainBatch, options?: HeadImportanceOptions): HeadImportanceResult;
  /**
   * An encoder's or encoder–decoder's head importance: importance (L, H), or an encoder–decoder's { encoder,
   * decoder, cross }. 'gradient' (default): the mean over rows of |∂loss_b/∂ξ_{l,h}| at ξ = 1 for each kind's head
   * mask (one backward of the training path, sized as training before anything is copied; a post-norm
   * encoder–decoder (arch marian): a RangeError, no head-mask gradients in its backward yet); 'ablation': each head's kind ablated by its head mask (zero) or its
   * output replaced by its mean (mean: over the positions attentionMask marks as tokens; the decoder's: all).
   */
  headImportance(
    batch: LabelledBatch,
    options?: HeadImportanceOptions,
  ): { importance: Tensor | HeadsByKind; loss: number };
  /**
   * The logit of id `target` at `position`, attributed to each position j's block-0 input e_j (hiddenStates[0]):
   * (T). 'gradient-x-input' Σ ∂logit/∂e_j · e_j, 'gradient' ‖∂logit/∂e_j‖₂, 'occlusion' logit − the logit with
   * e_j set to 0. Positions after `position` get 0.
   * @throws TypeError / RangeError naming `tokens` (shape [1, T], ids, T past contextLength), `options.position`
   *   (in [0, T)), `options.target` (in [0, vocabSize)) or `options.method`.
   */
  attribution(tokens: Tokens, options: AttributionOptions): Tensor;
  /**
   * An encoder's or encoder–decoder's attribution to its inputs j: tokens, (T) (an encoder–decoder's source tokens:
   * (S)), or a vision model's patches, (imageSize / patchSize)² as a (G, G) grid. 'gradient-x-input' (default) and
   * 'gradient' on e_j, the encoder's block-0 input (hiddenStates[0]; a vision model's patch j: token 1 + j), one
   * backward of the training path (a post-norm encoder–decoder, arch marian: a RangeError); 'occlusion': logit −
   * the logit with token j replaced by padTokenId, or with patch j set to 0 in every channel (normalised pixels).
   */
  attribution(
    inputs: Tokens | PixelValues,
    options: EncoderLogitOptions & { method?: 'gradient-x-input' | 'gradient' | 'occlusion' },
  ): Tensor;
  /**
   * Activation patching: for each head (l, h), the logit of id `target` at `position` of a forward of `corrupted`
   * whose head (l, h) output (every position) is the one of a forward of `clean`, minus the corrupted forward's.
   * @throws TypeError / RangeError naming `clean`, `corrupted` (shape [1, T], the same T; ids), `options.position` or
   *   `options.target`.
   */
  patchHeads(clean: Tokens, corrupted: Tokens, options: PatchHeadsOptions): PatchHeadsResult;
  /**
   * An encoder's or encoder–decoder's activation patching (inputs of batch 1 and one shape; an encoder–decoder's
   * decoderInputIds shared): effect (L, H), or { encoder, decoder, cross }.
   */
  patchHeads(
    clean: Tokens | PixelValues,
    corrupted: Tokens | PixelValues,
    options: EncoderLogitOptions,
  ): { effect: Tensor | HeadsByKind; cleanLogit: number; corruptedLogit: number };
  /** Copies of every parameter under Hugging Face's names (no prefix). */
  stateDict(): Record<string, Tensor>;
  /**
   * Replaces every parameter (names with or without the checkpoint's prefix; buffers ignored), one tensor at a
   * time; every name and shape is checked first. @throws RangeError naming a missing, unknown or misshapen tensor.
   */
  loadStateDict(stateDict: Record<string, CheckpointTensor | Float32Array>): void;
  /** Frees the model and its KV caches. Calling it again does nothing; any other method then throws an Error. */
  dispose(): void;
  /** Same as {@link Transformer.dispose}, for `using` declarations. */
  [Symbol.dispose](): void;
}
