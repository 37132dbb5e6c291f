// Rotary position embedding in Hugging Face's rotate-half layout: a head of d features is two halves x₁ = x[0, d/2),
// x₂ = x[d/2, d); at position p with angles θᵢ = p · ropeθ^(−2i/d),
//   y₁ = x₁ cos θ − x₂ sin θ,   y₂ = x₂ cos θ + x₁ sin θ     (x·cos + rotate_half(x)·sin).
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_ROPE_INL_H_
#undef ATTNLAB_SRC_OPS_ROPE_INL_H_
#else
#define ATTNLAB_SRC_OPS_ROPE_INL_H_
#endif

#include <cstddef>

#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rotates `heads` heads of d features, head h at x + h * d, in place, by the angles whose cos and sin (d / 2 each)
// are given.
HWY_INLINE void RopeHeads(float* HWY_RESTRICT x, size_t heads, size_t d, const float* HWY_RESTRICT cos,
                          const float* HWY_RESTRICT sin) {
  const size_t half = d / 2;
  for (size_t h = 0; h < heads; ++h) {
    float* x1 = x + h * d;
    float* x2 = x1 + half;
    ForEachLane(0, half, [&](auto dd, size_t i) HWY_ATTR {
      const auto a = hn::LoadU(dd, x1 + i), b = hn::LoadU(dd, x2 + i);
      const auto c = hn::LoadU(dd, cos + i), s = hn::LoadU(dd, sin + i);
      hn::StoreU(hn::NegMulAdd(b, s, hn::Mul(a, c)), dd, x1 + i);
      hn::StoreU(hn::MulAdd(a, s, hn::Mul(b, c)), dd, x2 + i);
    });
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_ROPE_INL_H_ toggle
