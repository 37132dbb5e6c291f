// Cross-entropy of one row of logits against a target id, fused with its gradient: three passes over the row (the
// largest logit; exp(x − max) and its sum; the scaling to softmax · weight), vectorised with softmax-inl.h's exp.
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_CROSS_ENTROPY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_CROSS_ENTROPY_INL_H_
#undef ATTNLAB_SRC_OPS_CROSS_ENTROPY_INL_H_
#else
#define ATTNLAB_SRC_OPS_CROSS_ENTROPY_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cpp/src/ops/softmax-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The largest of x[0, n), n >= 1 (NaN may be skipped: it reaches the sum through exp anyway).
HWY_INLINE float LargestOf(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  auto vmax = hn::Set(d, kNegInf);
  float smax = kNegInf;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto v = hn::LoadU(dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      smax = std::max(smax, hn::GetLane(v));
    } else {
      vmax = hn::Max(vmax, v);
    }
  });
  return std::max(smax, MaxLane(d, vmax));
}

// Cross-entropy log Σ_j exp(x_j) − x_target of row x (v), returned; x becomes its gradient times `weight`:
// softmax(x) · weight, minus weight at the target. The sum runs in float lanes over chunks of 1,024 logits, the
// chunks added in double (a vocabulary of 50,257 stays within float's rounding of one chunk).
HWY_INLINE double CrossEntropyRowInPlace(float* HWY_RESTRICT x, size_t v, size_t target, double weight) {
  constexpr size_t kChunk = 1024;
  const float max = LargestOf(x, v), logit = x[target];
  double sum = 0;
  for (size_t j0 = 0; j0 < v; j0 += kChunk) sum += ExpSubtractSum(x + j0, std::min(kChunk, v - j0), max);
  ScaleRow(x, v, static_cast<float>(weight / sum));
  x[target] -= static_cast<float>(weight);
  return std::log(sum) + static_cast<double>(max) - static_cast<double>(logit);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_CROSS_ENTROPY_INL_H_
