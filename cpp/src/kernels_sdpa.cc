// The SDPA kernels (forward, backward) and the chosen target's name, compiled once per Highway target
// (foreach_target). The MHA kernels are a unit of their own (kernels_mha.cc), so that the two compile side by side.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/kernels_sdpa.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>
#include <vector>

#include "cpp/src/attention-inl.h"
#include "cpp/src/attention_backward-inl.h"
#include "cpp/src/kernels-inl.h"
#include "cpp/src/kernels.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

HeadDims SdpaDims(const SdpaArgs& a) { return HeadDims{a.lq, a.lk, a.dk, a.dv, a.scale}; }

// Problem b of an SdpaArgs batch, with the caller's output and weights pointers.
HeadProblem SdpaHead(const SdpaArgs& a, size_t b, float* out, float* weights) {
  return MakeHeadProblem(SdpaDims(a), a.q + b * a.lq * a.dk, a.dk, a.v + b * a.lk * a.dv, a.dv, out, weights, a.causal,
                         a.bias, b, b);
}

// q (batch, lq, dk), k (batch, lk, dk), v (batch, lk, dv) → out (batch, lq, dv), weights (batch, lq, lk).
// The batch's problems are independent: one per ParallelFor item, each on its thread's scratch.
void SdpaForwardImpl(const SdpaArgs& a) {
  if (a.lq == 0 || (a.dv == 0 && !a.weights)) return;  // nothing to write, however large the batch
  ParallelFor(a.batch, HeadFlops(a.lq, a.lk, a.dk, a.dv), [&](size_t b) {
    const HeadProblem p = SdpaHead(a, b, a.out + b * a.lq * a.dv, a.weights ? a.weights + b * a.lq * a.lk : nullptr);
    AttendHead(p, a.k + b * a.lk * a.dk, a.dk, ThreadScratch().head);
  });
}

// Per problem: recompute the weights (exact path), then the head backward.
void SdpaBackwardImpl(const SdpaBackwardArgs& g) {
  const SdpaArgs& a = *g.forward;
  if (a.lq == 0 || a.lk == 0) return;  // every gradient is 0 (the caller's zero-filled buffers) or empty
  // Each problem writes only its own gradients: one ParallelFor item each, with buffers of its own.
  ParallelFor(a.batch, 3 * HeadFlops(a.lq, a.lk, a.dk, a.dv), [&](size_t b) {
    HeadScratch scratch;
    std::vector<float> weights(a.lq * a.lk), out(a.lq * a.dv), pack, ds;
    const float* k = a.k + b * a.lk * a.dk;
    const HeadProblem p = SdpaHead(a, b, out.data(), weights.data());
    AttendHead(p, k, a.dk, scratch);
    const HeadGradProblem gp =
        MakeHeadGradProblem(SdpaDims(a), a.dk, a.dv, p.q, k, p.v, weights.data(), g.grad_out + b * a.lq * a.dv,
                            g.grad_q + b * a.lq * a.dk, g.grad_k + b * a.lk * a.dk, g.grad_v + b * a.lk * a.dv);
    AttendHeadBackward(gp, pack, ds);
  });
}

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(SdpaForwardImpl);
HWY_EXPORT(SdpaBackwardImpl);
HWY_EXPORT(TargetNameImpl);

void SdpaForward(const SdpaArgs& args) { HWY_DYNAMIC_DISPATCH(SdpaForwardImpl)(args); }
void SdpaBackward(const SdpaBackwardArgs& args) { HWY_DYNAMIC_DISPATCH(SdpaBackwardImpl)(args); }
const char* ChosenTargetName() { return HWY_DYNAMIC_DISPATCH(TargetNameImpl)(); }

}  // namespace attnlab
#endif  // HWY_ONCE
