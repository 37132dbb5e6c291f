// One head's GEMM-heavy work, compiled once per Highway target (foreach_target) and called from the per-target code
// of kernels_sdpa.cc and kernels_mha.cc (declared in attention-inl.h and attention_backward-inl.h): the forward of
// a packed head (exact or online path), its pre-softmax scores, and its backward. Inlined at every caller instead,
// each whole GEMM would compile once per call site (about twenty per target), most of the kernels' build time.
// Nothing here is exported: dispatch stays at the public entry points of the other two units.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/attention/kernels_heads.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/attention/attention_backward-inl.h"
#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/ops/softmax-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Runs one head whose keys and values are packed (PackHeadKV); lk > 0.
void RunPackedHead(const HeadProblem& p, HeadScratch& scratch) {
  if (p.weights) {
    AttendHeadExact(p);
  } else {
    scratch.logits.resize(kKeyTile * kOnlineQueries);
    AttendHeadOnline(p, scratch.logits.data(), scratch.qt);
  }
}

// scores (lq, lk) of one head at `stage` (ScoresStage 1, 2, 3): s = (q · k) · scale for every key (1); then
// c · tanh(s / c) when softcap c > 0 (2); then plus the biases, -inf wherever a bias is -inf or the key is
// outside the row's range (3). k (lk, dk) with row stride k_stride.
void HeadScores(const HeadProblem& p, const float* HWY_RESTRICT k, size_t k_stride, int stage,
                float* HWY_RESTRICT scores, std::vector<float>& pack) {
  if (p.lq == 0 || p.lk == 0) return;
  GemmUnpacked(p.lq, p.lk, p.dk, p.q, p.q_stride, 1, k, k_stride, /*b_transposed=*/true, scores, p.lk, nullptr, false,
               pack);
  const float cap = stage >= 2 ? p.softcap : 0.0f;
  for (size_t i = 0; i < p.lq; ++i) {
    float* row = scores + i * p.lk;
    if (stage < 3) {
      ScaleBiasMax(row, p.lk, p.scale, nullptr, nullptr, 0, cap);
      continue;
    }
    const KeyRange range = VisibleRange(p, i);
    const BiasFrom bias = BiasesFrom(p, i, range.begin);
    ScaleBiasMax(row + range.begin, range.end - range.begin, p.scale, bias.row_bias, bias.key_bias, bias.cols, cap);
    std::fill(row, row + range.begin, kNegInf);
    std::fill(row + range.end, row + p.lk, kNegInf);
  }
}

// pack_buffer and ds_buffer are resized scratch.
void AttendHeadBackward(const HeadGradProblem& p, std::vector<float>& pack_buffer, std::vector<float>& ds_buffer) {
  // dV (lk, dv) = Wᵀ (lk, lq) · dO (lq, dv): Wᵀ read in place.
  GemmUnpacked(p.lk, p.dv, p.lq, p.weights, 1, p.lk, p.d_out, p.d_out_stride, false, p.d_v, p.d_v_stride, nullptr,
               p.accumulate_kv, pack_buffer);
  // dW (lq, lk) = dO (lq, dv) · Vᵀ (dv, lk).
  ds_buffer.resize(p.lq * p.lk);
  float* ds = ds_buffer.data();
  GemmUnpacked(p.lq, p.lk, p.dv, p.d_out, p.d_out_stride, 1, p.v, p.v_stride, true, ds, p.lk, nullptr, false,
               pack_buffer);
  for (size_t i = 0; i < p.lq; ++i) SoftmaxGradRow(p.weights + i * p.lk, ds + i * p.lk, p.lk, p.scale);
  if (p.softcapped) {  // d(c · tanh(s / c)) / ds = 1 - tanh²; masked keys have ds = 0 already
    for (size_t i = 0; i < p.lq * p.lk; ++i) {
      const float t = p.softcapped[i] / p.cap;
      ds[i] *= 1.0f - t * t;
    }
  }
  // dQ (lq, dk) = dS · K;  dK (lk, dk) = dSᵀ · Q.
  GemmUnpacked(p.lq, p.dk, p.lk, ds, p.lk, 1, p.k, p.k_stride, false, p.d_q, p.d_q_stride, nullptr, false, pack_buffer);
  GemmUnpacked(p.lk, p.dk, p.lq, ds, 1, p.lk, p.q, p.q_stride, false, p.d_k, p.d_k_stride, nullptr, p.accumulate_kv,
               pack_buffer);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();
