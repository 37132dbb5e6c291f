// Per-target helpers that both kernel units (cpp/src/attention/kernels_sdpa.cc, cpp/src/attention/kernels_mha.cc) use:
// the thread's forward scratch and the flop count that ParallelFor weighs. Per-target code: include after
// hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_KERNELS_INL_H_
#undef ATTNLAB_SRC_ATTENTION_KERNELS_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_KERNELS_INL_H_
#endif

#include <cstddef>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Grow-only buffers reused across calls on this thread, so that repeated calls neither allocate nor zero-fill
// (both showed up as a large share of an MHA forward's time). Every use overwrites what it reads.
struct ForwardScratch {
  std::vector<float> q, k, v, ctx, head_weights;
  HeadScratch head;
};

inline ForwardScratch& ThreadScratch() {
  static thread_local ForwardScratch scratch;
  return scratch;
}

static_assert(kRowBlock % kGemmMc == 0, "a row block must be whole GEMM cache blocks: splits change no arithmetic");

// Flops of one attention problem: Q Kᵀ and weights · V.
inline double HeadFlops(size_t lq, size_t lk, size_t dk, size_t dv) {
  return 2.0 * static_cast<double>(lq) * static_cast<double>(lk) * static_cast<double>(dk + dv);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_KERNELS_INL_H_ toggle
