// Arguments of the dispatched Transformer forward (cpp/src/model/kernels_model.cc). Only pointers and sizes cross
// the dispatch; cpp/src/model/transformer.cc has validated every size and allocated every buffer.
#ifndef ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_
#define ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "attnlab/transformer.h"
#include "cpp/src/model/architectures.h"
#include "cpp/src/ops/linear.h"
#include "cpp/src/ops/packing.h"

namespace attnlab {

// LayerNorm (bias non-null) or RMSNorm (bias null) over rows of e; the identity when weight is null (NormKind::kNone).
struct NormArgs {
  const float* weight = nullptr;
  const float* bias = nullptr;
};

// One block. qkv's outputs are the query heads (H · hd), then the key heads and the value heads (KV · hd each);
// up's are the hidden width (GELU), or gate (hidden) then up (hidden) (SwiGLU).
struct BlockArgs {
  NormArgs norm1, norm2;
  const float* q_norm = nullptr;  // (hd): RMSNorm weight of each query head, or null (no q/k norm)
  const float* k_norm = nullptr;  // (hd): of each key head
  LinearArgs qkv, o, up, down;
  float* cache_k = nullptr;                   // (B, KV, cache_max, hd): positions [past, past + T) are written here
  float* cache_v = nullptr;                   // likewise
  float* attentions = nullptr;                // (B, H, T, past + T) or null: this layer's weights are not kept
  const float* head_mask = nullptr;           // (H) or null
  const float* const* head_values = nullptr;  // (H) pointers, each (B, T, hd) replacing a head's output, or null
  float* head_outputs = nullptr;              // (B, T, H·hd): the heads' outputs as the output projection reads them
  // A decoder block of an encoder–decoder (ModelArgs::cross non-null): the cross-attention stage's norm and
  // projections (q (E, H·hd); k, v packed (E, 2·H·hd); o (H·hd, E)), its keys and values (B, H, S, hd) each (written
  // by the stage), weights (B, H, T, S) or null, head mask (H) or null, heads' outputs replaced and kept as
  // head_values and head_outputs are (both (B, T, ...): the decoder's positions).
  NormArgs norm3;
  LinearArgs cross_q, cross_kv, cross_o;
  float* cross_k = nullptr;
  float* cross_v = nullptr;
  float* cross_attentions = nullptr;
  const float* cross_head_mask = nullptr;
  const float* const* cross_head_values = nullptr;
  float* cross_head_outputs = nullptr;
};

// What a decoder stack attends across: the encoder's last hidden state (B, S, E) (null when decoding: every block's
// cross_k / cross_v already hold its keys and values) and its padding (B, S) as key biases 0 / −inf, or null.
struct CrossArgs {
  const float* memory = nullptr;
  size_t source = 0;  // S
  const float* key_bias = nullptr;
};

// What training keeps of one block's forward (each (rows, width), rows = B·T): its input x_in, the normed h1 (a
// post-norm block: the sum x_in + attention that norm₁ reads; likewise h2: x_mid + MLP, what norm₂ reads), qkv
// after the q/k norm and RoPE, qk_raw the query and key heads before the q/k norm (rows, (H + KV)·hd; qk_norm only),
// the attention weights (B, H, T, T), the heads' outputs ctx, x_mid = x_in + attention, the normed h2,
// the MLP's pre-activation up (rows, up.out) and activation act (rows, hidden). An encoder–decoder's decoder block
// also keeps its cross-attention stage's input x_cross, normed h3 (post-norm: the sum norm₃ reads), queries q_cross
// and heads' outputs ctx_cross (rows, H·hd each) and weights cross_weights (B, H, T, S) (null elsewhere: the stage
// keeps nothing).
struct BlockSaved {
  float* x_in = nullptr;
  float* h1 = nullptr;
  float* qkv = nullptr;
  float* qk_raw = nullptr;
  float* weights = nullptr;
  float* ctx = nullptr;
  float* x_mid = nullptr;
  float* h2 = nullptr;
  float* up = nullptr;
  float* act = nullptr;
  float* x_cross = nullptr;
  float* h3 = nullptr;
  float* q_cross = nullptr;
  float* cross_weights = nullptr;
  float* ctx_cross = nullptr;
};

// Gradients of one block's parameters, in the parameters' own layouts (packed matrices; zero-filled by the
// caller; the backward overwrites them).
struct BlockGrads {
  float* norm1_weight = nullptr;
  float* norm1_bias = nullptr;
  float* qkv = nullptr;
  float* qkv_bias = nullptr;
  float* o = nullptr;
  float* o_bias = nullptr;
  float* norm2_weight = nullptr;
  float* norm2_bias = nullptr;
  float* up = nullptr;
  float* up_bias = nullptr;
  float* down = nullptr;
  float* down_bias = nullptr;
  float* q_norm = nullptr;
  float* k_norm = nullptr;
};

// What the backward starts from (Transformer::Objective): the mean cross-entropy over every target, the sum over
// rows of each row's mean cross-entropy, or the sum over rows of the logit of id logit_target at logit_position.
enum class TrainObjective { kMean, kRowMeans, kLogit };

// Training: the forward of ModelArgs (past 0, no cache, no padding or head mask) keeping `saved`, the objective on
// the logits (cross-entropy against targets (B, T), −100 ignored, at least one counted; or one logit), then every
// gradient, and on request the head mask's (at ξ = 1) and the block-0 input's.
struct TrainArgs {
  const int32_t* targets = nullptr;
  TrainObjective objective = TrainObjective::kMean;
  int32_t pad_row = -1;  // the token whose lookups give embed no gradient (nn.Embedding's padding_idx), or −1
  size_t logit_position = 0, logit_target = 0;  // kLogit
  float* head_mask_grad = nullptr;              // (B, L, H) d objective / d ξ_{l,h} of each row, or null
  float* input_grad = nullptr;                  // (B, T, E) d objective / d block 0's input, or null
  BlockSaved* saved = nullptr;                  // one per block
  float* x_final = nullptr;                     // (rows, E): the last block's output
  float* h_final = nullptr;                     // (rows, E): after the final norm
  BlockGrads* grads = nullptr;                  // one per block
  float* embed = nullptr;                       // packed (E, V): the embedding's gradient, and the tied head's
  float* positions = nullptr;                   // (contextLength, E) or null
  float* norm_f_weight = nullptr;
  float* norm_f_bias = nullptr;
  float* head = nullptr;       // packed (E, V) for an untied head, else null
  float* head_bias = nullptr;  // (V) with head_bias, else null
  double loss = 0;             // out
};

struct EncoderArgs;  // (encoder_kernels.h)

// A stack's bucketed relative position bias (T5): every block's self-attention adds table[bucket(key − query), h]
// (attention/relative_bias.h; bidirectional unless the stack is causal), or table null: none.
struct RelativeBiasArgs {
  const float* table = nullptr;  // (buckets, H)
  int64_t buckets = 0, max_distance = 0;
};

// One call's arguments; its sizes (E, H, KV, hd, hidden, V, ...) are the model's ModelSizes.
struct ModelArgs : ModelSizes {
  PositionKind position_kind = PositionKind::kLearned;    // learned, sinusoidal: Embed adds `positions`; RoPE: rope_*
  MlpKind mlp = MlpKind::kGeluTanh;                       // kNone: no MLP stage
  bool causal = true;                                     // false: each query sees every key (no cache)
  size_t batch = 0, tokens = 0, past = 0, cache_max = 0;  // B, T, P; keys attended: P + T
  float norm_eps = 1e-5f;
  const int32_t* ids = nullptr;      // (B, T), each in [0, vocab)
  PackedB embed;                     // the token embedding, packed as its transpose (E, V): it is the tied head
  PackedB16 embed16;                 // the same in 16-bit storage (data non-null), else unused
  const float* positions = nullptr;  // learned positions: wpe (contextLength, E); sinusoidal: the table (P + T, E)
  const float* rope_cos = nullptr;   // RoPE: (T, hd / 2) at positions P … P + T − 1
  const float* rope_sin = nullptr;
  const float* key_bias = nullptr;  // (B, P + T): 0 or −inf (padding), or null
  int64_t window_left = -1;         // keys j ≥ p − window_left only (−1: all)
  const BlockArgs* blocks = nullptr;
  size_t num_blocks = 0;
  NormArgs norm_f;
  LinearArgs head;          // (E, V), its bias (V) or null
  float* logits = nullptr;  // (B, T, V), or (B, 1, V) when last_logits_only
  bool last_logits_only = false;
  float* const* hidden_states = nullptr;  // L + 1 buffers (B, T, E), or null
  const int64_t* occlude = nullptr;       // (B): a position of each row whose block-0 input is set to 0, −1 none
  const EncoderArgs* encoder = nullptr;   // an encoder's embeddings, post-norm blocks and heads, or null
  float embed_scale = 1.0f;               // the token embeddings' factor (scaleEmbedding: √E)
  const CrossArgs* cross = nullptr;       // a decoder stack's cross-attention source, or null: none
  bool scale_attention = true;            // logits × 1/√hd (false: none, T5), self- and cross-attention alike
  RelativeBiasArgs relative;              // the self-attention's relative position bias, or none
};

void TransformerForward(const ModelArgs& args);
// An encoder–decoder: the encoder's stack (its EncoderArgs' last_hidden is the decoder's cross->memory; null when
// decoding continues: not run), then the decoder's, in one dispatch.
void EncoderDecoderForward(const ModelArgs* encoder, const ModelArgs& decoder);
void TransformerLossAndGrad(const ModelArgs& args, TrainArgs& train);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_
