// Whole Transformers in eval mode (decoders, and the BERT-family encoders: Task), on the same GEMM, softmax and
// attention kernels as the attention API. Parameters use Hugging Face's names (ParameterShapes); results match
// PyTorch's forward to float32 accuracy. One Highway dispatch per Forward. Which Hugging Face model types exist, and
// how each reads its config.json, is data: one file per type in cpp/src/model/types/ (docs/architecture.md, "Adding a
// model type").
//
// A block is made of features (TransformerConfig's `norm`, `positions`, `mlp`, `qk_norm`, biases, window):
//   x = embed[ids] (+ wpe[pos] with learned positions); per block:
//   x += o(attn(pos(qknorm(q)), pos(qknorm(k)), v) of norm₁(x)); x += mlp(norm₂(x)); logits = norm_f(x) headᵀ,
// norm LayerNorm, RMSNorm or none, pos RoPE (rotate-half) or nothing, mlp GELU-tanh (down(gelu(up h))), SwiGLU
// (down(silu(gate h) ⊙ up h)) or none. GPT-2 is LayerNorm + learned positions + GELU; Llama, Mistral, Qwen2 and
// Qwen3 are RMSNorm + RoPE + SwiGLU (Qwen3 with q/k norm); the tiny model (arch 'tiny', TinyTransformer) is no
// norm + fixed sinusoidal positions + no MLP, with a head bias.
// Attention is causal (lower-right with a cache: new token t sits at position P + t) unless `causal` is false,
// optionally within a sliding window (key j is visible from position p when p − window < j ≤ p, as Mistral), over
// grouped key/value heads. Encoders (bert, roberta) are post-norm (x = norm₁(x + attn(x)), x = norm₂(x + mlp(x)),
// no final norm) after the embeddings' LayerNorm of word + position + token type, non-causal, with the head the
// checkpoint holds (TransformerConfig::task). ViT (vit) embeds pixels instead ([CLS], then each patch through the
// patch projection, + learned positions) into pre-norm non-causal blocks with a final LayerNorm. An encoder–decoder
// (marian) is a post-norm non-causal encoder stack as BERT's and a causal decoder stack whose post-norm blocks add
// x = norm₃(x + o(attn(q(x), k(enc), v(enc)))) after self-attention, the encoder's padding masking its keys;
// embeddings × √E (scaleEmbedding) + sinusoidal positions, no embedding norm.
#ifndef ATTNLAB_TRANSFORMER_H_
#define ATTNLAB_TRANSFORMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/tiny_transformer.h"  // TokensView

namespace attnlab {

// What a block is made of (set from the model type by NormalisedConfig; the kernels test only these).
enum class NormKind {
  kLayerNorm,  // LayerNorm (weight and bias)
  kRmsNorm,    // RMSNorm (weight)
  kNone,       // no norms: norm₁, norm₂ and the final norm are the identity (the tiny model)
};
enum class PositionKind {
  kLearned,     // learned absolute positions (wpe)
  kRope,        // rotary (rotate-half)
  kSinusoidal,  // fixed, added to the embedding: pe[p, 2i] = sin(p / 10000^(2i/E)), pe[p, 2i+1] = cos(…) (PyTorch's
                // tutorial layout, interleaved; no parameter)
  kSinusoidalSplit,  // the same angles, Marian's layout: pe[p, i] = sin(p / 10000^(2i/E)) for i < ⌈E/2⌉, then the
                     // cos of each in the rest (MarianSinusoidalPositionalEmbedding; no parameter)
  kRelative,         // none added to the embedding: a bucketed bias of key − query position in each self-attention
                     // (relativeBuckets; T5)
};
enum class MlpKind {
  kGeluTanh,     // down(gelu_tanh(up h))
  kSwiGlu,       // down(silu(gate h) ⊙ up h)
  kNone,         // no MLP: a block is x += attention(norm₁(x)) only
  kGeluErf,      // down(gelu(up h)), GELU with erf (BERT's 'gelu')
  kRelu,         // down(relu(up h))
  kSilu,         // down(silu(up h)) (BERT's 'silu' / 'swish')
  kGeluTanhGlu,  // down(gelu_tanh(gate h) ⊙ up h) (T5's 'gated-gelu')
};

// What the model computes after its last block: the head its checkpoint holds (model.task).
enum class Task {
  kCausalLm,                // decoders: logits (B, T, V) of norm_f(x)
  kBase,                    // encoders without a head: the last hidden state (and the pooled output with a pooler)
  kMaskedLm,                // logits (B, T, V) = norm(act(dense(h))) · embeddingᵀ + bias, the decoder tied
  kSequenceClassification,  // logits (B, numLabels) of token 0: classifier(pooled) or out_proj(tanh(dense(h₀)))
  kImageClassification,     // vision: logits (B, numLabels) = classifier(h₀), token 0 after the final norm
  kSeq2SeqLm,               // encoder–decoders: logits (B, T, V) of the decoder's last hidden state (+ its bias)
};

// How the weight matrices (embedding, projections, MLP, LM head) are held in memory: float32, or the 16 bits of an
// F16 / BF16 checkpoint, converted exactly to float32 inside the GEMM as they are read (half the memory, the same
// results as float32 storage of the converted values). Vectors (norms, biases, GPT-2's positions) are float32.
enum class WeightStorage { kFloat32, kF16, kBF16 };

// Which attention projections carry a bias.
enum class AttentionBias {
  kNone,  // Llama, Mistral
  kQkv,   // Qwen2: q_proj, k_proj, v_proj
  kAll,   // GPT-2; Llama's and Qwen3's attention_bias: q/k/v and o_proj
  kOut,   // the out-projection only (ViT's qkv_bias false)
};

// The normalised configuration (docs/api.md, "Transformer models"; JS names in brackets).
struct TransformerConfig {
  std::string arch = "gpt2";   // [arch] a family of parameter names: an ArchType of cpp/src/model/types/
                               //   (several Hugging Face model_types may read into one)
  int64_t vocab_size = 0;      // [vocabSize]
  int64_t context_length = 0;  // [contextLength] positions a forward (with its cache) may reach
  int64_t embed_dim = 0;       // [embedDim] E
  int64_t num_layers = 0;      // [numLayers] L
  int64_t num_heads = 0;       // [numHeads] H
  int64_t num_kv_heads = 0;    // [numKVHeads] a divisor of H; 0 = H (GPT-2: always H)
  int64_t head_dim = 0;        // [headDim] 0 = E / H (GPT-2: always E / H)
  int64_t hidden_dim = 0;      // [hiddenDim] MLP width; 0 = 4E (GPT-2: always 4E)
  double norm_eps = 1e-5;      // [normEps] LayerNorm / RMSNorm epsilon
  double rope_theta = 10000;   // [ropeTheta] with RoPE
  bool tie_embeddings = true;  // [tieEmbeddings] GPT-2: always tied
  AttentionBias attention_bias = AttentionBias::kNone;  // [attentionBias] 'none' | 'qkv' | 'all'
  int64_t sliding_window = 0;                           // [slidingWindow] 0 = none (JS null)
  // Features: what a block is made of. NormalisedConfig sets them from `arch` (they are not options of their own).
  NormKind norm = NormKind::kLayerNorm;
  PositionKind positions = PositionKind::kLearned;
  MlpKind mlp = MlpKind::kGeluTanh;
  bool mlp_bias = true;    // biases of the MLP's projections (GPT-2)
  bool qk_norm = false;    // RMSNorm of each query and key head (weight (headDim)) before positions (Qwen3)
  bool causal = true;      // [causal] position p attends keys ≤ p; false: every key (no KV cache then)
  bool head_bias = false;  // the LM head has a bias (V) (the tiny model's readout)
  // Encoders (bert, roberta; docs/api.md "Encoders, encoder–decoders and vision models"):
  std::string hidden_act;             // [hiddenAct] the MLP's activation as config.json names it ('gelu', 'relu', ...)
  int64_t type_vocab_size = 0;        // [typeVocabSize] token-type embeddings (types, E) added to the input; 0: none
  int64_t pad_token_id = 0;           // [padTokenId]
  int64_t num_labels = 0;             // [numLabels] classes of a sequence-classification head
  Task task = Task::kCausalLm;        // [task] 'causal-lm' | 'base' | 'masked-lm' | 'sequence-classification'
  bool pooler = false;                // [pooler] pooled output tanh(dense(h[:, 0])) (BERT's pooler)
  bool post_norm = false;             // x = norm₁(x + attn(x)), x = norm₂(x + mlp(x)); no final norm
  bool embed_norm = false;            // LayerNorm of the embeddings' sum
  bool pad_offset_positions = false;  // positions padTokenId + 1 + cumsum(ids != pad), pad at pads (RoBERTa)
  MlpKind head_act = MlpKind::kGeluErf;  // the masked-LM head's activation (of the MLP kind of that name)
  bool classifier_dense = false;         // the classifier's own dense + tanh on token 0 before its out-projection
  bool pad_embedding = false;  // the embedding's padTokenId row gets no gradient from lookups (padding_idx; Marian)
  // Vision models (vit; 0: a text model): pixels (B, numChannels, imageSize, imageSize) cut into patches of
  // patchSize² pixels (trailing pixels dropped), contextLength = 1 + (imageSize / patchSize)² tokens with [CLS].
  int64_t image_size = 0;    // [imageSize]
  int64_t patch_size = 0;    // [patchSize]
  int64_t num_channels = 0;  // [numChannels]
  // Encoder–decoders (marian): numLayers encoder blocks, then decoderLayers decoder blocks with a cross-attention
  // stage (queries from the decoder, keys and values from the encoder's last hidden state) after self-attention.
  int64_t decoder_layers = 0;          // [decoderLayers] 0: not an encoder–decoder
  int64_t decoder_start_token_id = 0;  // [decoderStartTokenId]
  int64_t eos_token_id = 0;            // [eosTokenId]
  int64_t forced_eos_token_id = -1;    // [forcedEosTokenId] generation's last token when it runs to maxNewTokens;
                                       //   -1 (JS null): none
  bool scale_embedding = false;        // [scaleEmbedding] the token embeddings × √embedDim (both stacks)
  // T5: a stack's self-attention adds a learned bias per head of the bucket of key − query position (held by the
  // stack's first block; bidirectional in the encoder, causal in the decoder), no 1/√headDim, and a tied LM head
  // reads the decoder's output × embedDim^−0.5.
  int64_t relative_buckets = 0;       // [relativeBuckets] buckets of the relative position bias; 0: none
  int64_t relative_max_distance = 0;  // [relativeMaxDistance] distances beyond share the last bucket
  bool scale_attention = true;        // logits × 1/√headDim (false: T5)
  bool scale_tied_head = false;       // the tied LM head's input × embedDim^−0.5
};

// A vision model's input: normalised pixel values (B, C, H, W), row-major, H = W = imageSize (no interpolation).
struct PixelsView {
  const float* data = nullptr;
  Shape shape;
};

// A configuration value of the wrong JSON type (a TypeError in JS).
class ConfigTypeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A Hugging Face config.json (its text) → the normalised configuration. An unknown model_type, or a key value
// attnlab does not compute (RoPE scaling, another activation, ...), throws std::invalid_argument naming the key
// ("config.<key>"); a key of the wrong JSON type throws ConfigTypeError.
TransformerConfig ConfigFromHuggingFace(const std::string& config_json);
// The configuration with the head a checkpoint holds, from its tensor names (task, pooler: encoders; a decoder's
// configuration comes back as it is).
TransformerConfig ConfigWithHeads(const TransformerConfig& config, const std::vector<std::string>& names);
// createModel's options as JSON ({ "arch": ..., "vocabSize": ..., ... }, JS names; absent = the type's default)
// → the normalised configuration; an unknown field throws ConfigTypeError naming it.
TransformerConfig ConfigFromOptions(const std::string& options_json);
// The normalised configuration as model.config gives it (JSON, JS names); ConfigFromOptions reads it back.
std::string OptionsJson(const TransformerConfig& config);
// The normalised configuration as a Hugging Face config.json (for writers); ConfigFromHuggingFace reads it back.
std::string HuggingFaceConfigJson(const TransformerConfig& config);

class Transformer;

// Keys and values of every layer for decoding, (batch, kv_heads, max_length, head_dim) each; made by
// Transformer::CreateKVCache and used only with that model. Length() positions are filled.
class TransformerKVCache {
 public:
  ~TransformerKVCache();
  TransformerKVCache(TransformerKVCache&&) noexcept;
  TransformerKVCache& operator=(TransformerKVCache&&) noexcept;

  int64_t Length() const;
  int64_t BatchSize() const;
  int64_t MaxLength() const;
  void Reset();

 private:
  friend class Transformer;
  struct Impl;
  explicit TransformerKVCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct TransformerForwardOptions {
  // (B, P + T), 1 = token, 0 = padding (Hugging Face's attention_mask), or null: every key is a token. A query row
  // with no visible key gets zero weights and a zero attention output.
  const uint8_t* attention_mask = nullptr;
  Shape attention_mask_shape;
  // (L, H): head h of layer l's weights are multiplied by head_mask[l, h] after softmax (Hugging Face's
  // head_mask), or null.
  const float* head_mask = nullptr;
  Shape head_mask_shape;
  // Layers whose attention weights are returned (any order; repeats allowed). Nothing of size T² is allocated
  // for the others.
  std::vector<int64_t> output_attentions;
  bool output_hidden_states = false;
  // (B, T) token types in [0, typeVocabSize) (encoders with token types), or null: all 0.
  const int32_t* token_type_ids = nullptr;
  Shape token_type_ids_shape;
  // (B): per row, a position whose block-0 input (hidden_states[0]) is set to 0 before the first block (occlusion),
  // or −1: none; or null.
  const int64_t* occlude = nullptr;
  Shape occlude_shape;
  // Heads' outputs (their context vectors, before the output projection) set from outside: head_values[l · H + h],
  // if non-null, is (B, T, hd) and replaces head h of layer l at every position (ablation by mean, activation
  // patching). Empty, or L·H entries; an encoder–decoder's (L + 2·Ld)·H: the encoder's heads (each (B, S, hd)), the
  // decoder's self-attention heads, then its cross-attention heads (each (B, T, hd)).
  std::vector<const float*> head_values;
  // Every layer's head outputs (as they go into the output projection) in TransformerOutput::head_outputs (an
  // encoder–decoder's also in encoder_head_outputs and cross_head_outputs).
  bool output_head_outputs = false;
  // Logits of each sequence's last position only, (B, 1, V) (generation needs no more; saves T·V floats).
  bool last_logits_only = false;
  // Decoding: the tokens continue the cache's sequences at position P = cache->Length(); their keys and values
  // are appended. Null: a fresh sequence (P = 0).
  TransformerKVCache* cache = nullptr;
  // Encoder–decoders: the tokens are the encoder's (B, S), attention_mask (B, S) its padding (also the
  // cross-attention's keys), head_mask (L, H) its heads; the decoder's inputs (B, T) are required, its padding
  // (B, T) and head masks (Ld, H) optional. output_attentions names layers of either stack (in [0, max(L, Ld))).
  // With a cache (CreateKVCache: the decoder's layers), the decoder inputs continue its sequences at P =
  // cache->Length() (decoder_attention_mask then (B, P + T)); the call that starts the cache runs the encoder and
  // keeps every decoder block's cross-attention keys and values and the source's padding in it; later calls skip the
  // encoder (tokens: the same shape; its outputs stay empty).
  const int32_t* decoder_input_ids = nullptr;
  Shape decoder_input_ids_shape;
  const uint8_t* decoder_attention_mask = nullptr;
  Shape decoder_attention_mask_shape;
  const float* decoder_head_mask = nullptr;
  Shape decoder_head_mask_shape;
  const float* cross_attn_head_mask = nullptr;
  Shape cross_attn_head_mask_shape;
};

struct TransformerOutput {
  Tensor logits;                   // (B, T, V), or (B, 1, V) with last_logits_only; (B, numLabels)
                                   //   classification; empty for an encoder without a head
  Tensor last_hidden_state;        // encoders: (B, T, E), after a final norm (ViT's layernorm)
  Tensor pooled_output;            // encoders with a pooler: (B, E)
  std::vector<Tensor> attentions;  // L entries, (B, H, T, P + T) for a layer asked for, else empty
  // L + 1 entries (B, T, E) when asked for: block inputs, then a decoder's after the final norm, an encoder's before
  // it (Hugging Face's: ViT's last is the last block's output, not last_hidden_state). A vision model's T: 1 + N.
  std::vector<Tensor> hidden_states;
  std::vector<Tensor> head_outputs;  // L entries (B, T, H, hd) with output_head_outputs
  // Encoder–decoders: the fields above are the decoder's (attentions its self-attention (B, H, T, T), hidden_states
  // Ld + 1 entries, last_hidden_state with task 'base'); the encoder's (S source positions) and the cross-attention:
  Tensor encoder_last_hidden_state;           // (B, S, E)
  std::vector<Tensor> encoder_attentions;     // L entries, (B, H, S, S) for a layer asked for, else empty
  std::vector<Tensor> cross_attentions;       // Ld entries, (B, H, T, S) for a layer asked for, else empty
  std::vector<Tensor> encoder_hidden_states;  // L + 1 entries (B, S, E) when asked for
  std::vector<Tensor> encoder_head_outputs;   // L entries (B, S, H, hd) with output_head_outputs
  std::vector<Tensor> cross_head_outputs;     // Ld entries (B, T, H, hd) with output_head_outputs
};

class Transformer {
 public:
  // Validates `config` (std::invalid_argument naming the field) and refuses a model whose parameters would not
  // fit in memory before allocating; initialises like GPT-2 / Llama (normal(0, 0.02) matrices and embeddings,
  // norms 1, biases 0) from a generator seeded with `seed`. initialise false skips the random draws (norms 1, all
  // else 0): for a model whose every parameter is about to be loaded.
  // `storage` other than kFloat32 needs initialise false (a checkpoint is loaded next, by LoadTensor16).
  explicit Transformer(const TransformerConfig& config, uint64_t seed = 0, bool initialise = true,
                       WeightStorage storage = WeightStorage::kFloat32);
  ~Transformer();
  Transformer(Transformer&&) noexcept;
  Transformer& operator=(Transformer&&) noexcept;

  const TransformerConfig& config() const;
  // Floats of all parameters (each tensor once; the tied head is not counted twice).
  int64_t ParameterCount() const;

  // Every parameter with its shape, Hugging Face's names without prefix (docs/api.md).
  std::vector<std::pair<std::string, Shape>> ParameterShapes() const;

  // Checks a whole checkpoint's names and shapes before anything is loaded: names may carry the prefix
  // `transformer.` (GPT-2), `model.` (Llama: the layers and norms; lm_head never has it), `bert.` / `roberta.` (the
  // encoders' bodies; their heads never have it); the buffers checkpoints carry (GPT-2's attn.bias /
  // attn.masked_bias, rotary_emb.inv_freq, the encoders' embeddings.position_ids, BERT's next-sentence head
  // cls.seq_relationship.*) are ignored, as are names of non-float tensors among them (shape given, data null).
  // Every parameter must be present once; an unknown name, a wrong shape or a missing parameter throws
  // std::invalid_argument naming it. Tied copies are accepted: with tied embeddings an lm_head.weight, in a
  // masked-LM encoder the decoder's weight and bias (LoadStateDict checks that each equals its tie).
  void CheckStateDict(const std::vector<std::pair<std::string, Shape>>& names_and_shapes) const;
  // A checkpoint name as this model's parameter name (its type's prefixes removed), or "" for a buffer that loading
  // ignores. (An unknown name comes back as it is: CheckStateDict refuses it.)
  std::string CanonicalName(const std::string& name) const;
  // The parameter that the checkpoint tensor `name` must equal (a tied lm_head: the embedding), or "".
  std::string TiedTo(const std::string& name) const;
  // Copies one tensor in (its name as CheckStateDict accepts it; ignored names are no-ops).
  void LoadTensor(const std::string& name, const TensorView& tensor);
  // Copies one tensor of F16 or BF16 bits (`dtype` kF16 / kBF16) in: kept as they are in a weight matrix held in
  // that storage, else converted exactly to float32 (LoadTensor's checks and errors).
  void LoadTensor16(const std::string& name, const uint16_t* bits, const Shape& shape, WeightStorage dtype);
  // The same for rows [first_row, first_row + shape[0]) of the tensor (`shape`: those rows, then the rest of its
  // shape), so that a large tensor can be copied in pieces of whole rows (a tied head: compared piece by piece).
  // (Loaders that come in pieces keep each to at most kLoadPieceBytes: TransformerParameterMemoryNeeds counts on it.)
  void LoadTensorRows(const std::string& name, const TensorView& tensor, int64_t first_row);
  void LoadTensor16Rows(const std::string& name, const uint16_t* bits, const Shape& shape, WeightStorage dtype,
                        int64_t first_row);
  // kFloat32 once any matrix is float32 (every LoadTensor of a matrix, and training, widen it exactly), else the
  // 16-bit storage that every matrix still has.
  WeightStorage storage() const;
  // CheckStateDict, then LoadTensor for each, then the tied lm_head's equality check.
  void LoadStateDict(const std::map<std::string, TensorView>& state_dict);
  std::map<std::string, Tensor> StateDict() const;
  // One parameter by its name in ParameterShapes (a copy), so that a caller can export the weights one tensor at a
  // time instead of holding a second copy of all of them.
  Tensor Parameter(const std::string& name) const;

  TransformerOutput Forward(const TokensView& tokens, const TransformerForwardOptions& options = {});
  // A vision model's forward (token ids to a vision model, or pixels to a text model: std::invalid_argument).
  TransformerOutput Forward(const PixelsView& pixels, const TransformerForwardOptions& options = {});

  // Encoder–decoders: greedy decoding of at most max_new_tokens tokens per item from decoderStartTokenId, the encoder
  // run once over `tokens` (options.attention_mask its padding; the other options unused) and the decoder over a KV
  // cache (cross-attention keys and values computed once). Each step's next id is the argmax of its logits; an item
  // that has emitted eosTokenId continues with padTokenId (as Hugging Face's generate), and decoding stops once every
  // item has. on_step, when given, receives each step's output (logits (B, 1, V)). → B rows of the ids generated
  // (the start token excluded).
  std::vector<std::vector<int32_t>> GenerateGreedy(
      const TokensView& tokens, const TransformerForwardOptions& options, int64_t max_new_tokens,
      const std::function<void(const TransformerOutput&)>& on_step = nullptr);

  // A cache for batch_size sequences of up to max_length (≤ contextLength) positions.
  TransformerKVCache CreateKVCache(int64_t batch_size, int64_t max_length) const;

  // Training (causal attention, positions 0 … T − 1, no padding). Mean cross-entropy of the logits of tokens
  // (B, T) against targets (B, T) (−100 ignored, as PyTorch's ignore_index; at least one target counted), and the
  // gradient of every parameter under its ParameterShapes name (the tied head's contribution is in the
  // embedding's).
  struct LossAndGrad {
    float loss = 0.0f;
    std::map<std::string, Tensor> grad_params;
    Tensor head_mask_grad;  // (B, L, H) with GradientOptions::head_mask_gradient, else empty
    Tensor input_grad;      // (B, T, E) with GradientOptions::input_gradient, else empty
    Tensor input;           // (B, T, E) block 0's input (hidden_states[0]) with input_gradient, else empty
    // An encoder–decoder's analyses (head_mask_grad: its encoder's; input_grad and input: its encoder's, (B, S, E)):
    Tensor decoder_head_mask_grad, cross_head_mask_grad;  // (B, Ld, H) each with head_mask_gradient, else empty
  };
  // On a model with 16-bit storage both first widen every matrix to float32 (exactly; the storage stays float32).
  LossAndGrad LossAndGradient(const TokensView& tokens, const TokensView& targets);

  // What LossAndGradient differentiates, and what else it returns (the analysis methods below use it).
  enum class Objective {
    kMeanCrossEntropy,     // the mean over every counted target (LossAndGradient's loss)
    kRowMeanCrossEntropy,  // Σ_b loss_b, loss_b row b's mean cross-entropy (rows without a target add 0); the loss
                           //   returned is the mean of loss_b over rows with a target
    kLogit,                // Σ_b logits[b, position, target]; targets are not read (pass an empty view)
  };
  struct GradientOptions {
    Objective objective = Objective::kMeanCrossEntropy;
    int64_t position = 0, target = 0;  // kLogit: in [0, T) and [0, V) (std::invalid_argument naming them)
    bool head_mask_gradient = false;   // d objective / d ξ (ξ = head_mask) at ξ = 1, of each row: head_mask_grad
    bool input_gradient = false;       // d objective / d block 0's input: input_grad, and input
  };
  LossAndGrad LossAndGradient(const TokensView& tokens, const TokensView& targets, const GradientOptions& options);

  // Head importance (docs/api.md, "Looking past the weights"), decoders: importance (L, H) and loss, the mean over
  // rows with a target of loss_b (row b's mean cross-entropy of tokens against targets, as LossAndGradient's).
  // kGradient: mean over those rows of |∂ loss_b / ∂ ξ_{l,h}| at ξ = 1 (Michel et al. 2019; one backward);
  // kAblation: the loss with head (l, h) ablated minus the loss (L·H forwards): kZero sets ξ_{l,h} = 0; kMean
  // replaces the head's output (its context vector, before the output projection) at every position by its mean
  // over the batch's positions (all B·T rows).
  enum class ImportanceMethod { kGradient, kAblation };
  enum class Ablation { kZero, kMean };
  struct HeadImportanceResult {
    Tensor importance;  // (L, H); an encoder–decoder's encoder heads
    float loss = 0.0f;
    Tensor decoder_importance, cross_importance;  // an encoder–decoder's: (Ld, H) each (else empty)
  };
  HeadImportanceResult HeadImportance(const TokensView& tokens, const TokensView& targets, ImportanceMethod method,
                                      Ablation ablation = Ablation::kZero);
  // Encoders and encoder–decoders: what a forward reads, tokens (B, T) (an encoder–decoder's source ids (B, S)) or a
  // vision model's pixels, with options: attention_mask, token_type_ids and decoder_input_ids only (the last
  // required by an encoder–decoder except in HeadImportance, whose default is Hugging Face's shift_right(labels)).
  struct ModelInput {
    TokensView tokens;
    const PixelsView* pixels = nullptr;
    TransformerForwardOptions options;
  };
  // Head importance of an encoder or encoder–decoder against labels: (B, T) token ids, −100 ignored (masked-LM: the
  // tokens' positions; seq2seq-lm: the decoder's), or (B) class ids (classification, −100 ignored); loss_b is row
  // b's mean cross-entropy. kGradient: one backward of their training path (each kind of head's mask gradient);
  // kAblation: kMean's mean is over the stack's B·T positions that attention_mask marks as tokens (the decoder's:
  // all).
  HeadImportanceResult HeadImportance(const ModelInput& input, const TokensView& labels, ImportanceMethod method,
                                      Ablation ablation = Ablation::kZero);
  // Attribution of the logit of id `target` at `position` (tokens (1, T)) to each position j's block-0 input e_j
  // (Tensor (T)): kGradientXInput Σ_features ∂logit/∂e_j · e_j, kGradient ‖∂logit/∂e_j‖₂, kOcclusion logit − the
  // logit with e_j set to 0. (Causal models: positions after `position` get exactly 0, and are not computed.)
  enum class AttributionMethod { kGradientXInput, kGradient, kOcclusion };
  Tensor Attribution(const TokensView& tokens, int64_t position, int64_t target, AttributionMethod method);
  // Attribution of an encoder's or encoder–decoder's logit of `target` at `position` (input of batch 1;
  // classification logits (1, numLabels): position 0) to its inputs j: a text model's tokens (an encoder–decoder's
  // source tokens) → (T) (S); a vision model's patches, row-major → (imageSize / patchSize)². kOcclusion: logit − the
  // logit with input j occluded (token j replaced by padTokenId; patch j's pixels set to 0, normalised space). The
  // gradient methods (one backward of the training path) on e_j, the encoder's block-0 input (hidden_states[0]) at
  // token j (a vision model's: at patch j's token, 1 + j, after [CLS]), as the decoders' method.
  Tensor Attribution(const ModelInput& input, int64_t position, int64_t target, AttributionMethod method);
  // Activation patching: clean and corrupted tokens (1, T) of one length; for each head (l, h), a forward of
  // `corrupted` with head (l, h)'s output (every position) taken from a forward of `clean`: effect[l, h] = its logit
  // of `target` at `position` minus the corrupted forward's.
  struct PatchingResult {
    Tensor effect;  // (L, H); an encoder–decoder's encoder heads
    float clean_logit = 0.0f, corrupted_logit = 0.0f;
    Tensor decoder_effect, cross_effect;  // an encoder–decoder's: (Ld, H) each (else empty)
  };
  PatchingResult PatchHeads(const TokensView& clean, const TokensView& corrupted, int64_t position, int64_t target);
  // The same for encoders and encoder–decoders: inputs of batch 1 and one shape (the options as ModelInput's; the
  // decoder inputs of both must be equal), each kind of head patched in turn; classification: position 0.
  PatchingResult PatchHeads(const ModelInput& clean, const ModelInput& corrupted, int64_t position, int64_t target);

  // One torch.optim.AdamW step on this batch: gradients clipped first when clip_grad_norm > 0 (as
  // torch.nn.utils.clip_grad_norm_), weight decay on ≥ 2-D tensors only (nanoGPT's parameter groups). The state
  // (moments, step count) lives in the model; LoadStateDict resets it.
  struct AdamWOptions {
    float lr = 0.0f;  // required: > 0
    float weight_decay = 0.01f;
    float beta1 = 0.9f, beta2 = 0.999f;
    float eps = 1e-8f;
    float clip_grad_norm = 0.0f;  // 0: no clipping
  };
  struct StepResult {
    float loss = 0.0f;
    float grad_norm = 0.0f;  // the total gradient norm before clipping
  };
  StepResult TrainStep(const TokensView& tokens, const TokensView& targets, const AdamWOptions& options);

  // Training of encoders and encoder–decoders (docs/api.md, "training, encoders and encoder–decoders"): one batch.
  // The inputs are `tokens` (B, T) (text encoders; an encoder–decoder's source (B, S)) or `pixels` (vit; tokens
  // empty); `options` carries attention_mask, token_type_ids, decoder_input_ids and decoder_attention_mask as for
  // Forward (nothing else). labels: (B, T) token ids, −100 ignored (masked-LM; seq2seq: the decoder's (B, T), and
  // decoder_input_ids default to shift_right(labels) as Hugging Face's), or (B) class ids (classification). The loss
  // is the mean cross-entropy; tensors off the loss path and buffers (final_logits_bias) get no gradient.
  struct TrainBatch {
    TokensView tokens;
    const PixelsView* pixels = nullptr;
    TransformerForwardOptions options;
    TokensView labels;
  };
  LossAndGrad LossAndGradient(const TrainBatch& batch);
  StepResult TrainStep(const TrainBatch& batch, const AdamWOptions& options);

 private:
  struct Impl;
  struct CallArgs;
  void PrepareCall(const TokensView& tokens, size_t past, size_t cache_max, CallArgs& call) const;
  // The forward of checked tokens (B, T), or of `pixels` (then tokens has their shape (B, 1 + N) and no data).
  TransformerOutput Run(const TokensView& tokens, const PixelsView* pixels, const TransformerForwardOptions& options);
  // Forward of an encoder–decoder (seq2seq.cc): the encoder's stack over the tokens, then the decoder's.
  TransformerOutput ForwardEncoderDecoder(const TokensView& tokens, const TransformerForwardOptions& options) const;
  // Forward with saved activations and backward (into the training state's gradients with parameter_gradients;
  // else only the objective's, the head mask's and the input's gradients asked for); returns the loss.
  double ComputeGradients(const TokensView& tokens, const TokensView& targets, const GradientOptions& options,
                          LossAndGrad* extra, bool parameter_gradients);
  // A TrainBatch's forward and backward into the training state's gradients (train.cc: by kind, an
  // encoder–decoder's in seq2seq_train.cc, an encoder's in encoder_train.cc); returns the loss.
  // With `extra` (the analyses): no parameter gradient, the objective and the extra outputs of `options` (labels
  // unread under kLogit but an encoder–decoder's still shaped and checked).
  double BatchGradients(const TrainBatch& batch);
  double Seq2SeqGradients(const TrainBatch& batch, const GradientOptions& options, LossAndGrad* extra);
  double EncoderGradients(const TrainBatch& batch, const GradientOptions& options, LossAndGrad* extra);
  // An encoder's or encoder–decoder's analysis backward (no parameter gradient; analysis_encoders.cc), and the
  // gradient methods of HeadImportance and Attribution on a ModelInput.
  double InputGradients(const ModelInput& input, const TokensView& labels, const GradientOptions& options,
                        LossAndGrad& out);
  HeadImportanceResult GradientHeadImportance(const ModelInput& input, const TokensView& labels);
  Tensor GradientAttribution(const ModelInput& input, int64_t position, int64_t target, AttributionMethod method);
  // The state's gradients of every parameter on the loss path into out.grad_params.
  void SaveGradients(LossAndGrad& out) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlab

#endif  // ATTNLAB_TRANSFORMER_H_
