// Arguments of the dispatched kernels (cpp/src/attention/kernels_*.cc). Only pointers and sizes cross the dispatch; the
// callers (sdpa.cc, multi_head_attention.cc) have validated every size before they fill these in.
#ifndef ATTNLAB_SRC_ATTENTION_KERNELS_H_
#define ATTNLAB_SRC_ATTENTION_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "cpp/src/ops/packing.h"

namespace attnlab {

// Additive biases on the scaled logits of one attention problem, already converted from bool masks
// (0 or -inf). Element (b, i, j) of the row bias is row_bias[b * row_bias_batch_stride + i * mask_cols + j];
// a batch stride of 0 broadcasts it. Key columns j >= mask_cols (MHA's bias_k and zero-attention keys) are
// never masked.
struct BiasArgs {
  const float* row_bias = nullptr;  // (*batch, Lq, mask_cols) or (Lq, mask_cols), or null
  size_t row_bias_batch_stride = 0;
  // SDPA's broadcast masks: non-null: problem b's rows start at row_bias + row_bias_offsets[b] (replaces the
  // batch stride); row_stride_zero: one row of mask_cols for every query row (a mask broadcast over Lq).
  const size_t* row_bias_offsets = nullptr;
  bool row_stride_zero = false;
  // toeplitz: row i's biases start one float before row i − 1's, bias (i, j) = row_bias[j − i] (row_bias pointing at
  // row 0): a bias that depends on j − i alone, such as T5's relative position bias, in O(Lq + Lk) floats.
  bool toeplitz = false;
  const float* key_bias = nullptr;  // (*batch, mask_cols), or null
  size_t key_bias_batch_stride = 0;
  size_t mask_cols = 0;
};

// softmax(softcap(q kᵀ · scale) + biases) v for `batch` independent problems stored contiguously:
// q (batch, lq, dk), k (batch / kv_group, lk, dk), v (batch / kv_group, lk, dv) → out (batch, lq, dv),
// weights (batch, lq, lk), scores (batch, lq, lk). Problem b reads key/value problem b / kv_group (grouped
// queries). Query i of problem b sees keys j < valid_b (valid_b = kv_lengths[b / kv_lengths_group], else lk)
// with j <= pos when causal, pos - window_left <= j when window_left >= 0, j <= pos + window_right when
// window_right >= 0, where pos = i + (lower_right ? valid_b - lq : past) (attention.h, CausalAlign).
struct SdpaArgs {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  float* out = nullptr;
  float* weights = nullptr;  // null: the tiled online-softmax path, no (lq, lk) buffer at all
  size_t batch = 0, lq = 0, lk = 0, dk = 0, dv = 0;
  float scale = 1.0f;
  bool causal = false;
  bool lower_right = false;
  size_t past = 0;
  size_t kv_group = 1;
  const int32_t* kv_lengths = nullptr;          // each in [0, lk], or null
  size_t kv_lengths_group = 1;                  // problems per entry of kv_lengths
  int64_t window_left = -1, window_right = -1;  // -1 or in [0, lq + lk]
  float softcap = 0.0f;                         // > 0: c · tanh(logit / c) after scaling
  float* scores = nullptr;                      // null, or the scores at scores_stage (1, 2, 3: ScoresStage)
  int scores_stage = 0;
  BiasArgs bias;
};

// Forward intermediates that MhaBackward needs, batch-first: q (n, l, e), k and v (n, s', ekv) after projection
// (bias_k / zero-attention rows at positions s, s+1), ctx (n, l, e) the concatenated heads before the
// out-projection, weights (n, heads, l, s') per head.
struct MhaSaved {
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* ctx = nullptr;
  float* weights = nullptr;
};

// MHA's bias-like parameters, or their gradients: b_q and b_o (e), b_k, b_v, bias_k and bias_v (ekv); each null
// where the module has none (bias = false: no b_*; add_bias_kv = false: no bias_k, bias_v).
template <class T>
struct MhaBiasParams {
  T *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  T *bias_k = nullptr, *bias_v = nullptr;
};

// torch.nn.MultiheadAttention forward for n items with l queries and s keys:
// query rows (tokens) of e floats, key rows of kdim, value rows of vdim. Token (item b, position t) of the
// query is row b * l + t when batch_first, else t * n + b (likewise key and value with s). Weights are
// transposed once at load: w*_t (in_features, out_features). out has query's layout; weights (n, h, l, s') per
// head or (n, l, s') averaged, s' = s + (bias_k != null) + add_zero_attn.
// Grouped-query attention: kv_heads (a divisor of heads; 0 = heads) key/value heads of hd = e / heads features, so
// the key and value projections have ekv = kv_heads * hd outputs; query head h reads key/value head
// h / (heads / kv_heads).
// KV cache (decoding): when cache_k is set, the s new tokens' projected keys and values are written into
// cache_k and cache_v, each (n, kv_heads, cache_max, hd), at positions [cache_past, cache_past + s), and the heads
// attend over all s' = cache_past + s cached positions (bias_k and add_zero_attn are not used then).
struct MhaArgs {
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  size_t n = 0, l = 0, s = 0, e = 0, heads = 0, kv_heads = 0, kdim = 0, vdim = 0;
  bool batch_first = true;
  PackedB wq_t;                       // (e, e)
  PackedB wk_t;                       // (kdim, ekv)
  PackedB wv_t;                       // (vdim, ekv)
  PackedB wo_t;                       // (e, e)
  MhaBiasParams<const float> biases;  // b_q, b_k, b_v, b_o, bias_k, bias_v, each or null
  bool add_zero_attn = false;
  // Biases over (n * heads) problems: row_bias_batch_stride applies per (item, head) index b * heads + h,
  // key_bias_batch_stride per item.
  BiasArgs bias;
  float* out = nullptr;
  float* weights = nullptr;  // null when weights are not requested
  bool average_weights = true;
  MhaSaved* saved = nullptr;  // non-null: keep the intermediates there (requires_grad; never with a cache)
  float* cache_k = nullptr;   // (n, kv_heads, cache_max, hd) or null, likewise cache_v
  float* cache_v = nullptr;
  size_t cache_past = 0, cache_max = 0;
};

// Gradients of sum(grad_out ⊙ MHA(query, key, value)) for the forward described by `forward` (with saved
// intermediates). Weights in PyTorch's layout (out_features, in_features): w_q (e, e), w_k (ekv, kdim),
// w_v (ekv, vdim), w_o (e, e). Every grad_* buffer must be zero-filled by the caller (gradients are accumulated);
// grad_query/key/value have the layouts of query/key/value. Bias gradients may be null when there is no bias.
struct MhaBackwardArgs {
  const MhaArgs* forward = nullptr;
  const float* w_q = nullptr;
  const float* w_k = nullptr;
  const float* w_v = nullptr;
  const float* w_o = nullptr;
  const float* grad_out = nullptr;
  float* grad_query = nullptr;
  float* grad_key = nullptr;
  float* grad_value = nullptr;
  float* grad_w_q = nullptr;
  float* grad_w_k = nullptr;
  float* grad_w_v = nullptr;
  float* grad_w_o = nullptr;
  MhaBiasParams<float> grad_biases;  // null where the module has no such parameter
};

// Gradients of sum(grad_out ⊙ SDPA(q, k, v)) for the problem in `forward` (its out/weights are ignored):
// grad_out (batch, lq, dv) → grad_q (batch, lq, dk), grad_k (batch / kv_group, lk, dk), grad_v (…, lk, dv);
// a key/value problem's gradients sum over its kv_group query problems, in order. forward->scores is ignored.
struct SdpaBackwardArgs {
  const SdpaArgs* forward = nullptr;
  const float* grad_out = nullptr;
  float* grad_q = nullptr;
  float* grad_k = nullptr;
  float* grad_v = nullptr;
};

// Dispatched entry points (defined in kernels_sdpa.cc and kernels_mha.cc).
void SdpaForward(const SdpaArgs& args);
void MhaForward(const MhaArgs& args);
void SdpaBackward(const SdpaBackwardArgs& args);
void MhaBackward(const MhaBackwardArgs& args);
const char* ChosenTargetName();

}  // namespace attnlab

#endif  // ATTNLAB_SRC_ATTENTION_KERNELS_H_
