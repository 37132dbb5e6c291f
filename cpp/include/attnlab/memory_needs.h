// How much memory a call will allocate for its results and kept state, from shapes alone, so that a caller with
// a hard memory cap (the JS wrapper: wasm memory is capped at ATTNLAB_WASM_MAXIMUM_MEMORY) can refuse a call that
// cannot fit with a message that lists the parts, before copying anything. Lower bounds: the kernels' per-head
// scratch (O(block · L)) is left out. Sizes are doubles so that absurd shapes give huge numbers, not overflow.
// Shapes that the call would reject give only the parts that can be derived; the call itself names the error.
#ifndef ATTNLAB_MEMORY_NEEDS_H_
#define ATTNLAB_MEMORY_NEEDS_H_

#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"

namespace attnlab {

struct MemoryPart {
  std::string what;  // e.g. "weights (*batch, Lq, Lk)"
  double bytes = 0;
};
using MemoryNeeds = std::vector<MemoryPart>;

// ScaledDotProductAttention: output (*batch, Lq, dv) and, when need_weights, weights (*batch, Lq, Lk).
MemoryNeeds SdpaMemoryNeeds(const Shape& query, const Shape& key, const Shape& value, bool need_weights);

// ScaledDotProductAttentionBackward: the three gradients, the weights and their gradient.
MemoryNeeds SdpaBackwardMemoryNeeds(const Shape& query, const Shape& key, const Shape& value);

// The same with SdpaOptions (their shapes only; data pointers may be null): Lk counts the past's keys, and the
// forward adds scores (*batch, Lq, Lk) with return_scores and present key/value with a past; the backward adds the
// past's gradients (gradPastKey, gradPastValue).
MemoryNeeds SdpaMemoryNeeds(const Shape& query, const Shape& key, const Shape& value, const SdpaOptions& options);
MemoryNeeds SdpaBackwardMemoryNeeds(const Shape& query, const Shape& key, const Shape& value,
                                    const SdpaOptions& options);

// The parameters of a MultiHeadAttention with this configuration.
MemoryNeeds MhaParameterMemoryNeeds(const MhaConfig& config);

// MultiHeadAttention::Forward: projections, output, weights and, with requires_grad, what Backward keeps. With
// cache_length >= 0 (a step with a KV cache holding that many tokens) the weights cover cache_length + S keys.
MemoryNeeds MhaForwardMemoryNeeds(const MhaConfig& config, const Shape& query, const Shape& key, const Shape& value,
                                  bool need_weights, bool requires_grad, int64_t cache_length = -1);

// MultiHeadAttention::CreateKVCache: keys and values (batch_size, num_kv_heads, max_length, head_dim) each.
MemoryNeeds KVCacheMemoryNeeds(const MhaConfig& config, int64_t batch_size, int64_t max_length);

// The parameters of a TinyTransformer with this configuration.
MemoryNeeds TinyTransformerParameterMemoryNeeds(const TinyTransformerConfig& config);

// TinyTransformer::Forward (with_gradient false) or LossAndGradient / TrainStep (true) on tokens (B, T).
MemoryNeeds TinyTransformerStepMemoryNeeds(const TinyTransformerConfig& config, const Shape& tokens,
                                           bool with_gradient);

// The most bytes of a checkpoint tensor that a loader stages at once (whole rows; JS loadModel's pieces).
inline constexpr int64_t kLoadPieceBytes = int64_t{16} << 20;

// The parameters of a Transformer with this configuration (normalised first: a bad field throws
// std::invalid_argument naming it), and what building it holds beside them: initialising, one whole tensor in
// float32; `loading` (initialise false, the checkpoint copied in pieces of at most kLoadPieceBytes by
// LoadTensorRows / LoadTensor16Rows), one piece and its float32 copies. `storage`: how the weight matrices are held
// (2 bytes an element in 16-bit storage).
MemoryNeeds TransformerParameterMemoryNeeds(const TransformerConfig& config,
                                            WeightStorage storage = WeightStorage::kFloat32, bool loading = false);

// Transformer::Forward on tokens (B, T) after `past` cached positions: logits ((B, 1, V) with last_logits_only), the
// attentions of the layers listed (repeats counted once), hidden states when asked for, the keys and values of one
// step when there is no cache (with_cache false), and the activations.
MemoryNeeds TransformerForwardMemoryNeeds(const TransformerConfig& config, const Shape& tokens, int64_t past,
                                          const std::vector<int64_t>& output_attentions, bool output_hidden_states,
                                          bool with_cache, bool last_logits_only = false);

// An encoder–decoder's Transformer::Forward: the encoder's stack over `source` (B, S) unless `encode` is false (a
// cached step after the first), its outputs and the cross-attention's keys and values of every decoder block, then
// the decoder's over `decoder` (B, T) after `past` cached positions as TransformerForwardMemoryNeeds counts it, and
// the cross-attention weights of the layers listed.
MemoryNeeds TransformerEncoderDecoderForwardMemoryNeeds(const TransformerConfig& config, const Shape& source,
                                                        const Shape& decoder, int64_t past,
                                                        const std::vector<int64_t>& output_attentions,
                                                        bool output_hidden_states, bool with_cache, bool encode,
                                                        bool last_logits_only = false);

// The training calls, by what they make and keep: TrainStep (the parameters' gradients, and AdamW's two moments on
// the first step), LossAndGradient (the gradients, and the copies of every gradient it returns), and the analyses
// that run a backward (HeadImportance by gradient, Attribution by gradient): no parameter gradient, only the head
// mask's or the input's.
enum class TrainCall { kTrainStep, kLossAndGradient, kGradientAnalysis };

// Transformer::TrainStep, LossAndGradient or a gradient analysis (`call`) on tokens (B, T): the training state the
// call makes and the model keeps (for TrainStep gradients and AdamW's moments, each the parameters' size; for
// LossAndGradient the gradients), the activations saved per block (attention weights (B, H, T, T) included), the
// logits and their gradient, and the backward's scratch; with a model's 16-bit `storage`, also the float32 matrices
// that training widens them to.
MemoryNeeds TransformerTrainMemoryNeeds(const TransformerConfig& config, const Shape& tokens, TrainCall call,
                                        WeightStorage storage = WeightStorage::kFloat32);

// An encoder–decoder's Transformer::TrainStep or LossAndGradient of a TrainBatch, or a gradient analysis
// (HeadImportance, Attribution: every kind's head mask gradient or the source's input gradient): source tokens
// (B, S), labels (B, T) (an attribution's: its decoder inputs): the same training state, both stacks' saved
// activations (the cross-attention's weights (B, H, T, S) and keys and values included), the logits and the
// backward's scratch.
MemoryNeeds TransformerSeq2SeqTrainMemoryNeeds(const TransformerConfig& config, const Shape& tokens,
                                               const Shape& labels, TrainCall call,
                                               WeightStorage storage = WeightStorage::kFloat32);

// Transformer::CreateKVCache: keys and values of every layer, (batch_size, num_kv_heads, max_length, head_dim).
MemoryNeeds TransformerKVCacheMemoryNeeds(const TransformerConfig& config, int64_t batch_size, int64_t max_length);

}  // namespace attnlab

#endif  // ATTNLAB_MEMORY_NEEDS_H_
