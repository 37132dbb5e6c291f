// General per-lane helpers of the kernels: a whole-vectors-then-single-lanes loop, row scaling and zeroing, the
// largest lane, a finiteness scan. Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_VECTOR_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_VECTOR_OPS_INL_H_
#undef ATTNLAB_SRC_OPS_VECTOR_OPS_INL_H_
#else
#define ATTNLAB_SRC_OPS_VECTOR_OPS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kPosInf = std::numeric_limits<float>::infinity();

// Calls body(d, i) for whole vectors of d over [begin, end), then body(d1, i) for the remaining single lanes.
template <class Body>
HWY_INLINE void ForEachLane(size_t begin, size_t end, const Body& body) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t i = begin;
  for (; i + N <= end; i += N) body(d, i);
  const hn::CappedTag<float, 1> d1;
  for (; i < end; ++i) body(d1, i);
}

// Largest lane of v. (MaxOfLanes of Highway 1.0.3's EMU128 starts from the lowest finite float, not -inf,
// which would hide fully masked rows.)
template <class D>
HWY_INLINE float MaxLane(D d, hn::Vec<D> v) {
  HWY_ALIGN float lanes[hn::MaxLanes(D())];
  hn::Store(v, d, lanes);
  float max = lanes[0];
  for (size_t i = 1; i < hn::Lanes(d); ++i) max = std::max(max, lanes[i]);
  return max;
}

// x[j] *= factor for j in [0, n).
HWY_INLINE void ScaleRow(float* HWY_RESTRICT x, size_t n, float factor) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Mul(hn::LoadU(dd, x + j), hn::Set(dd, factor)), dd, x + j);
  });
}

HWY_INLINE void ZeroRow(float* HWY_RESTRICT x, size_t n) { std::fill(x, x + n, 0.0f); }

// Whether x[0, n) holds no NaN or ±∞: x - x is 0 for a finite x and NaN otherwise, and a NaN stays in the sum.
HWY_INLINE bool AllFinite(const float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  auto sum = hn::Zero(d);
  bool finite = true;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto v = hn::LoadU(dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      finite = finite && std::isfinite(hn::GetLane(v));
    } else {
      sum = hn::Add(sum, hn::Sub(v, v));
    }
  });
  return finite && hn::AllTrue(d, hn::Eq(sum, sum));
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_VECTOR_OPS_INL_H_ toggle
