// Backward pass of one attention head, given its softmax weights W (lq, lk) from the forward pass:
//   dV = Wᵀ dO;  dW = dO Vᵀ;  dS = W ⊙ (dW − rowsum(W ⊙ dW)) [⊙ (1 − tanh²) with softcap];
//   dQ = scale · dS K;  dK = scale · dSᵀ Q.
// Masked keys and fully masked rows have W = 0, so they pass no gradient (zeros, never NaN).
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_ATTENTION_BACKWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_ATTENTION_BACKWARD_INL_H_
#undef ATTNLAB_SRC_ATTENTION_ATTENTION_BACKWARD_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_ATTENTION_BACKWARD_INL_H_
#endif

#include <cstddef>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One head's backward problem; every matrix is row-major with its own row stride.
// q (lq, dk), k (lk, dk), v (lk, dv), weights (lq, lk) contiguous, d_out (lq, dv) →
// d_q (lq, dk), d_k (lk, dk), d_v (lk, dv), overwritten.
struct HeadGradProblem : HeadDims {
  const float* q;
  size_t q_stride;
  const float* k;
  size_t k_stride;
  const float* v;
  size_t v_stride;
  const float* weights;
  const float* d_out;
  size_t d_out_stride;
  float* d_q;
  size_t d_q_stride;
  float* d_k;
  size_t d_k_stride;
  float* d_v;
  size_t d_v_stride;
  // Soft-capping (cap > 0): softcapped (lq, lk) holds c · tanh(s / c) of the scaled logits s, whose derivative
  // 1 - (softcapped / c)² the logit gradient picks up. Null without.
  const float* softcapped = nullptr;
  float cap = 0.0f;
  bool accumulate_kv = false;  // d_k, d_v += (grouped queries: the group's later heads) instead of =
};

// A head whose q, k, d_q and d_k rows are qk_stride floats apart and v, d_out and d_v rows v_stride apart
// (SDPA: dk and dv; MHA: E).
HWY_INLINE HeadGradProblem MakeHeadGradProblem(const HeadDims& dims, size_t qk_stride, size_t v_stride, const float* q,
                                               const float* k, const float* v, const float* weights, const float* d_out,
                                               float* d_q, float* d_k, float* d_v) {
  // Each matrix with its row stride, in the struct's order.
  return HeadGradProblem{dims, q,         qk_stride, k,         qk_stride, v,        v_stride, weights, d_out, v_stride,
                         d_q,  qk_stride, d_k,       qk_stride, d_v,       v_stride, nullptr,  0.0f,    false};
}

// dS row in place: ds = scale · w ⊙ (ds − Σ w ⊙ ds) over n entries.
HWY_INLINE void SoftmaxGradRow(const float* HWY_RESTRICT w, float* HWY_RESTRICT ds, size_t n, float scale) {
  const hn::ScalableTag<float> d;
  auto vdot = hn::Zero(d);
  float sdot = 0.0f;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto prod = hn::Mul(hn::LoadU(dd, w + j), hn::LoadU(dd, ds + j));
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      sdot += hn::GetLane(prod);
    } else {
      vdot = hn::Add(vdot, prod);
    }
  });
  const float dot = sdot + hn::GetLane(hn::SumOfLanes(d, vdot));
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto centered = hn::Sub(hn::LoadU(dd, ds + j), hn::Set(dd, dot));
    hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(dd, w + j), centered), hn::Set(dd, scale)), dd, ds + j);
  });
}

// One head's backward; pack_buffer and ds_buffer are resized scratch. Compiled once per target in
// kernels_heads.cc (four whole GEMMs: not inlined at each caller).
void AttendHeadBackward(const HeadGradProblem& p, std::vector<float>& pack_buffer, std::vector<float>& ds_buffer);

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_ATTENTION_BACKWARD_INL_H_ toggle
