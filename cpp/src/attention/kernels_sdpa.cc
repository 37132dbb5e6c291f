// The SDPA kernels (forward, backward) and the chosen target's name, compiled once per Highway target
// (foreach_target). The MHA kernels are a unit of their own (kernels_mha.cc), so that the two compile side by side.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/attention/kernels_sdpa.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/attention/attention_backward-inl.h"
#include "cpp/src/attention/kernels-inl.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

HeadDims SdpaDims(const SdpaArgs& a) { return HeadDims{a.lq, a.lk, a.dk, a.dv, a.scale}; }

// Visible keys of problem b (SdpaArgs).
KeyWindow SdpaWindow(const SdpaArgs& a, size_t b) {
  KeyWindow w;
  w.valid = a.kv_lengths ? a.kv_lengths[b / a.kv_lengths_group] : static_cast<int64_t>(a.lk);
  w.offset = a.lower_right ? w.valid - static_cast<int64_t>(a.lq) : static_cast<int64_t>(a.past);
  w.causal = a.causal;
  w.left = a.window_left;
  w.right = a.window_right;
  return w;
}

// Problem b of an SdpaArgs batch (reading key/value problem b / kv_group), with the caller's output and weights
// pointers.
HeadProblem SdpaHead(const SdpaArgs& a, size_t b, float* out, float* weights) {
  HeadProblem p = MakeHeadProblem(SdpaDims(a), a.q + b * a.lq * a.dk, a.dk, a.v + b / a.kv_group * a.lk * a.dv, a.dv,
                                  out, weights, SdpaWindow(a, b), a.bias, b, b);
  p.softcap = a.softcap;
  return p;
}

// q (batch, lq, dk), k and v (batch / kv_group, lk, ·) → out (batch, lq, dv), weights and scores (batch, lq, lk).
// One ParallelFor item per key/value problem: its keys and values are packed once for the kv_group query
// problems that read them, which run in order on that thread.
void SdpaForwardImpl(const SdpaArgs& a) {
  if (a.lq == 0) return;  // nothing to write, however large the batch
  const size_t group = a.kv_group, kv_batch = a.batch / group;
  if (a.scores) {
    ParallelFor(a.batch, HeadFlops(a.lq, a.lk, a.dk, 0), [&](size_t b) {
      const HeadProblem p = SdpaHead(a, b, nullptr, nullptr);
      HeadScores(p, a.k + b / group * a.lk * a.dk, a.dk, a.scores_stage, a.scores + b * a.lq * a.lk,
                 ThreadScratch().head.qt);
    });
  }
  if (a.dv == 0 && !a.weights) return;
  ParallelFor(kv_batch, group * HeadFlops(a.lq, a.lk, a.dk, a.dv), [&](size_t kb) {
    HeadScratch& scratch = ThreadScratch().head;
    HeadProblem first;
    for (size_t g = 0; g < group; ++g) {
      const size_t b = kb * group + g;
      HeadProblem p = SdpaHead(a, b, a.out + b * a.lq * a.dv, a.weights ? a.weights + b * a.lq * a.lk : nullptr);
      if (TrivialHead(p)) continue;
      if (g == 0) {
        PackHeadKV(p, a.k + kb * a.lk * a.dk, a.dk, scratch);
        first = p;
      } else {
        SharePacking(first, p);
      }
      RunPackedHead(p, scratch);
    }
  });
}

// Per key/value problem, for each of its query problems in order: recompute the weights (exact path) and, with
// softcap, the softcapped scores, then the head backward, the group's key/value gradients summed in head order
// (so the result does not depend on the thread count).
void SdpaBackwardImpl(const SdpaBackwardArgs& g) {
  const SdpaArgs& a = *g.forward;
  if (a.lq == 0 || a.lk == 0) return;  // every gradient is 0 (the caller's zero-filled buffers) or empty
  const size_t group = a.kv_group;
  ParallelFor(a.batch / group, group * 3 * HeadFlops(a.lq, a.lk, a.dk, a.dv), [&](size_t kb) {
    HeadScratch scratch;
    std::vector<float> weights(a.lq * a.lk), out(a.lq * a.dv), softcapped(a.softcap > 0.0f ? a.lq * a.lk : 0), pack, ds;
    const float* k = a.k + kb * a.lk * a.dk;
    for (size_t h = 0; h < group; ++h) {
      const size_t b = kb * group + h;
      const HeadProblem p = SdpaHead(a, b, out.data(), weights.data());
      AttendHead(p, k, a.dk, scratch);
      if (a.softcap > 0.0f) HeadScores(p, k, a.dk, /*stage=*/2, softcapped.data(), pack);
      HeadGradProblem gp =
          MakeHeadGradProblem(SdpaDims(a), a.dk, a.dv, p.q, k, p.v, weights.data(), g.grad_out + b * a.lq * a.dv,
                              g.grad_q + b * a.lq * a.dk, g.grad_k + kb * a.lk * a.dk, g.grad_v + kb * a.lk * a.dv);
      if (a.softcap > 0.0f) {
        gp.softcapped = softcapped.data();
        gp.cap = a.softcap;
      }
      gp.accumulate_kv = h > 0;
      AttendHeadBackward(gp, pack, ds);
    }
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
