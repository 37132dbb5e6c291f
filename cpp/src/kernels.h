// Arguments of the dispatched kernels (cpp/src/kernels.cc). Only pointers and sizes cross the dispatch; the
// callers (sdpa.cc, multi_head_attention.cc) have validated every size before they fill these in.
#ifndef ATTNLAB_SRC_KERNELS_H_
#define ATTNLAB_SRC_KERNELS_H_

#include <cstddef>

namespace attnlab {

// Additive biases on the scaled logits of one attention problem, already converted from bool masks
// (0 or -inf). Element (b, i, j) of the row bias is row_bias[b * row_bias_batch_stride + i * mask_cols + j];
// a batch stride of 0 broadcasts it. Key columns j >= mask_cols (MHA's bias_k and zero-attention keys) are
// never masked.
struct BiasArgs {
  const float* row_bias = nullptr;  // (*batch, Lq, mask_cols) or (Lq, mask_cols), or null
  size_t row_bias_batch_stride = 0;
  const float* key_bias = nullptr;  // (*batch, mask_cols), or null
  size_t key_bias_batch_stride = 0;
  size_t mask_cols = 0;
};

// softmax(q kᵀ · scale + biases) v for `batch` independent problems stored contiguously:
// q (batch, lq, dk), k (batch, lk, dk), v (batch, lk, dv) → out (batch, lq, dv), weights (batch, lq, lk).
struct SdpaArgs {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  float* out = nullptr;
  float* weights = nullptr;  // null: the tiled online-softmax path, no (lq, lk) buffer at all
  size_t batch = 0, lq = 0, lk = 0, dk = 0, dv = 0;
  float scale = 1.0f;
  bool causal = false;
  BiasArgs bias;
};

// torch.nn.MultiheadAttention forward for n items with l queries and s keys:
// query rows (tokens) of e floats, key rows of kdim, value rows of vdim. Token (item b, position t) of the
// query is row b * l + t when batch_first, else t * n + b (likewise key and value with s). Weights are
// transposed once at load: w*_t (in_features, e). out has query's layout; weights (n, h, l, s') per head or
// (n, l, s') averaged, s' = s + (bias_k != null) + add_zero_attn.
struct MhaArgs {
  const float* query = nullptr;
  const float* key = nullptr;
  const float* value = nullptr;
  size_t n = 0, l = 0, s = 0, e = 0, heads = 0, kdim = 0, vdim = 0;
  bool batch_first = true;
  const float* wq_t = nullptr;  // (e, e)
  const float* wk_t = nullptr;  // (kdim, e)
  const float* wv_t = nullptr;  // (vdim, e)
  const float* bq = nullptr;    // (e) or null, likewise bk, bv, bo
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bias_k = nullptr;  // (e) or null
  const float* bias_v = nullptr;
  bool add_zero_attn = false;
  const float* wo_t = nullptr;  // (e, e)
  const float* bo = nullptr;
  // Biases over (n * heads) problems: row_bias_batch_stride applies per (item, head) index b * heads + h,
  // key_bias_batch_stride per item.
  BiasArgs bias;
  float* out = nullptr;
  float* weights = nullptr;  // null when weights are not requested
  bool average_weights = true;
};

// Dispatched entry points (defined in kernels.cc).
void SdpaForward(const SdpaArgs& args);
void MhaForward(const MhaArgs& args);
const char* ChosenTargetName();

}  // namespace attnlab

#endif  // ATTNLAB_SRC_KERNELS_H_
