// Internals of MultiHeadAttention shared by its source files: the parameters, the module's state (Impl), the KV
// cache's state and the validation of Forward's arguments (multi_head_attention.cc: construction, state dict,
// Forward, Backward; mha_prepare.cc: PrepareMha; kv_cache.cc: KVCache and the decoding Forward).
#ifndef ATTNLAB_SRC_ATTENTION_MULTI_HEAD_ATTENTION_IMPL_H_
#define ATTNLAB_SRC_ATTENTION_MULTI_HEAD_ATTENTION_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/ops/packing.h"

namespace attnlab {

// The parameters in PyTorch's layouts: w_q (E, E), w_k (Ekv, kdim), w_v (Ekv, vdim), w_o (E, E); b_q, b_o (E);
// b_k, b_v (Ekv); bias_k, bias_v (Ekv), where Ekv = num_kv_heads * head_dim (E without grouped-query heads).
// Backward's gradients have the same layout.
struct MhaParams {
  std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, bias_k, bias_v;
};

inline float* DataOrNull(std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// The bias-like parameters of p (or the gradients kept in its layout), null where absent.
template <class T>
MhaBiasParams<T> BiasParamsOf(MhaParams& p) {
  return {DataOrNull(p.b_q), DataOrNull(p.b_k),    DataOrNull(p.b_v),
          DataOrNull(p.b_o), DataOrNull(p.bias_k), DataOrNull(p.bias_v)};
}

struct MultiHeadAttention::Impl {
  MhaConfig config;  // kdim, vdim and num_kv_heads resolved
  size_t e = 0, kdim = 0, vdim = 0, ekv = 0;
  uint64_t id = 0;              // distinct per module: a KV cache remembers its creator's
  uint64_t params_version = 0;  // counts LoadStateDict calls: cached keys/values belong to one version
  MhaParams params;
  // Wᵀ (in_features, out_features), packed once per load for the kernels' GEMM.
  std::vector<float> w_q_t, w_k_t, w_v_t, w_o_t;
  PackedB w_q_packed, w_k_packed, w_v_packed, w_o_packed;

  // What the last Forward with requires_grad left for Backward: copies of its inputs, its intermediates and
  // its arguments (pointing at those copies).
  struct Saved {
    bool valid = false;
    std::vector<float> query, key, value, q, k, v, ctx, weights;
    MhaSaved buffers;
    MhaArgs args;
    Shape output_shape;
    Shape query_shape, key_shape, value_shape;
  } saved;

  void Pack() {
    w_q_packed = PackB(params.w_q.data(), e, e, e, /*transposed=*/true, w_q_t);
    w_k_packed = PackB(params.w_k.data(), kdim, kdim, ekv, /*transposed=*/true, w_k_t);
    w_v_packed = PackB(params.w_v.data(), vdim, vdim, ekv, /*transposed=*/true, w_v_t);
    w_o_packed = PackB(params.w_o.data(), e, e, e, /*transposed=*/true, w_o_t);
  }

  // The parameters' part of MhaArgs.
  void SetParameters(MhaArgs& args) {
    args.wq_t = w_q_packed;
    args.wk_t = w_k_packed;
    args.wv_t = w_v_packed;
    args.wo_t = w_o_packed;
    args.biases = BiasParamsOf<const float>(params);
  }
};

// Projected keys and values, k and v (batch_size, num_kv_heads, max_length, head_dim) each, of the first `length`
// positions of every item; the rest is unused memory.
struct KVCache::State {
  std::vector<float> k, v;
  int64_t batch_size = 0, kv_heads = 0, max_length = 0, head_dim = 0, length = 0;
  uint64_t owner = 0;           // Impl::id of the module that created it
  uint64_t params_version = 0;  // that module's parameters the cached keys and values were projected with
};

// Validates Forward's arguments against configuration c (kdim, vdim and num_kv_heads resolved) and fills in every
// size, the layout and the masks of MhaArgs (not the parameters, out, weights or the cache); weights_shape gets
// the returned weights' shape. With cache_past >= 0 (decoding: that many positions are cached already) the keys
// attended are the cache_past + S cached ones: key_padding_mask covers them, and weights are over them. The mask
// storages hold bool masks' additive form. Every size check comes before the first allocation: a rejected call
// allocates nothing.
MhaArgs PrepareMha(const MhaConfig& c, const TensorView& query, const TensorView& key, const TensorView& value,
                   const MhaForwardOptions& options, std::vector<float>& kpm_storage, std::vector<float>& mask_storage,
                   Shape& weights_shape, int64_t cache_past = -1);

// Forward's result: output (query's shape) and, with need_weights, weights (weights_shape), both set in args.
AttentionResult AllocateMhaResult(const Shape& query_shape, const Shape& weights_shape, bool need_weights,
                                  MhaArgs& args);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_ATTENTION_MULTI_HEAD_ATTENTION_IMPL_H_
