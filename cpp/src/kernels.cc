// The one translation unit compiled once per Highway target (foreach_target). It HWY_EXPORTs the public
// kernel entry points; everything below them (GEMM, softmax, attention tiles) runs inside the chosen target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/src/attention-inl.h"
#include "cpp/src/gemm-inl.h"
#include "cpp/src/kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// q (batch, lq, dk), k (batch, lk, dk), v (batch, lk, dv) → out (batch, lq, dv), weights (batch, lq, lk).
void SdpaForwardImpl(const SdpaArgs& a) {
  std::vector<float> kt, scratch;
  for (size_t b = 0; b < a.batch; ++b) {
    HeadProblem p;
    p.q = a.q + b * a.lq * a.dk;
    p.q_stride = a.dk;
    p.v = a.v + b * a.lk * a.dv;
    p.v_stride = a.dv;
    p.out = a.out + b * a.lq * a.dv;
    p.out_stride = a.dv;
    p.weights = a.weights ? a.weights + b * a.lq * a.lk : nullptr;
    p.lq = a.lq;
    p.lk = a.lk;
    p.dk = a.dk;
    p.dv = a.dv;
    p.scale = a.scale;
    p.causal = a.causal;
    p.row_bias = a.bias.row_bias ? a.bias.row_bias + b * a.bias.row_bias_batch_stride : nullptr;
    p.key_bias = a.bias.key_bias ? a.bias.key_bias + b * a.bias.key_bias_batch_stride : nullptr;
    p.mask_cols = a.bias.mask_cols;
    AttendHead(p, a.k + b * a.lk * a.dk, a.dk, kt, scratch);
  }
}

// Projections x Wᵀ + b into batch-first buffers q (n, l, e), k and v (n, s', e) (bias_k / zero-attention rows
// appended at positions s, s+1), heads of hd = e / heads consecutive features, out-projection of the
// batch-first context (n, l, e) back into query's layout.
void MhaForwardImpl(const MhaArgs& a) {
  const size_t e = a.e, hd = a.e / a.heads;
  const size_t extra = (a.bias_k ? 1 : 0) + (a.add_zero_attn ? 1 : 0);
  const size_t s_all = a.s + extra;
  // Item b, position 0 of a sequence of length len, and the stride between its positions (in rows).
  auto first_row = [&](size_t b, size_t len) { return a.batch_first ? b * len : b; };
  const size_t pos_stride = a.batch_first ? 1 : a.n;

  std::vector<float> q(a.n * a.l * e), k(a.n * s_all * e), v(a.n * s_all * e), ctx(a.n * a.l * e);
  for (size_t b = 0; b < a.n; ++b) {
    Gemm(a.l, e, e, a.query + first_row(b, a.l) * e, pos_stride * e, a.wq_t, e, q.data() + b * a.l * e, e, a.bq,
         false);
    float* kb = k.data() + b * s_all * e;
    float* vb = v.data() + b * s_all * e;
    Gemm(a.s, e, a.kdim, a.key + first_row(b, a.s) * a.kdim, pos_stride * a.kdim, a.wk_t, e, kb, e, a.bk, false);
    Gemm(a.s, e, a.vdim, a.value + first_row(b, a.s) * a.vdim, pos_stride * a.vdim, a.wv_t, e, vb, e, a.bv,
         false);
    size_t row = a.s;
    if (a.bias_k) {
      std::copy(a.bias_k, a.bias_k + e, kb + row * e);
      std::copy(a.bias_v, a.bias_v + e, vb + row * e);
      ++row;
    }
    if (a.add_zero_attn) {
      std::fill(kb + row * e, kb + (row + 1) * e, 0.0f);
      std::fill(vb + row * e, vb + (row + 1) * e, 0.0f);
    }
  }

  std::vector<float> kt, scratch, head_weights;
  if (a.weights && a.average_weights) {
    head_weights.resize(a.l * s_all);
    std::fill(a.weights, a.weights + a.n * a.l * s_all, 0.0f);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (size_t b = 0; b < a.n; ++b) {
    for (size_t h = 0; h < a.heads; ++h) {
      const size_t bh = b * a.heads + h;
      HeadProblem p;
      p.q = q.data() + b * a.l * e + h * hd;
      p.q_stride = e;
      p.v = v.data() + b * s_all * e + h * hd;
      p.v_stride = e;
      p.out = ctx.data() + b * a.l * e + h * hd;
      p.out_stride = e;
      p.weights = !a.weights ? nullptr : a.average_weights ? head_weights.data() : a.weights + bh * a.l * s_all;
      p.lq = a.l;
      p.lk = s_all;
      p.dk = hd;
      p.dv = hd;
      p.scale = scale;
      p.causal = false;
      p.row_bias = a.bias.row_bias ? a.bias.row_bias + bh * a.bias.row_bias_batch_stride : nullptr;
      p.key_bias = a.bias.key_bias ? a.bias.key_bias + b * a.bias.key_bias_batch_stride : nullptr;
      p.mask_cols = a.s;
      AttendHead(p, k.data() + b * s_all * e + h * hd, e, kt, scratch);
      if (a.weights && a.average_weights) {
        float* avg = a.weights + b * a.l * s_all;
        for (size_t i = 0; i < a.l * s_all; ++i) avg[i] += head_weights[i];
      }
    }
  }
  if (a.weights && a.average_weights) ScaleRow(a.weights, a.n * a.l * s_all, 1.0f / static_cast<float>(a.heads));

  for (size_t b = 0; b < a.n; ++b) {
    Gemm(a.l, e, e, ctx.data() + b * a.l * e, e, a.wo_t, e, a.out + first_row(b, a.l) * e, pos_stride * e, a.bo,
         false);
  }
}

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(SdpaForwardImpl);
HWY_EXPORT(MhaForwardImpl);
HWY_EXPORT(TargetNameImpl);

void SdpaForward(const SdpaArgs& args) { HWY_DYNAMIC_DISPATCH(SdpaForwardImpl)(args); }
void MhaForward(const MhaArgs& args) { HWY_DYNAMIC_DISPATCH(MhaForwardImpl)(args); }
const char* ChosenTargetName() { return HWY_DYNAMIC_DISPATCH(TargetNameImpl)(); }

}  // namespace attnlab
#endif  // HWY_ONCE
