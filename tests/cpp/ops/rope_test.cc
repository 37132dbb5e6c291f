// Tests of cpp/src/ops/rope-inl.h below the public API, on every compiled target: RopeHeads against a float64
// reference written as Hugging Face writes it (x · cat(cos, cos) + rotate_half(x) · cat(sin, sin), rotate_half(x) =
// cat(−x₂, x₁)) for head dims 2…2(2N+1) and 64, 1 and 3 heads, misaligned, positions up to 4095 (angles θᵢ = p ·
// 10000^(−2i/d)); rotating by −θ (the backward's −sin) gives x back; nothing past the heads is written.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/rope_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/src/ops/rope-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

constexpr double kEps32 = 1.0 / 16777216.0;  // 2^-24, float32's unit roundoff
constexpr float kSentinel = -1234.5f;

// cos θᵢ and sin θᵢ (d / 2 each) at position p, computed in float64 and rounded to float as the model's tables.
void Angles(size_t d, double p, std::vector<float>& cos, std::vector<float>& sin) {
  cos.resize(d / 2);
  sin.resize(d / 2);
  for (size_t i = 0; i < d / 2; ++i) {
    const double theta = p * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    cos[i] = static_cast<float>(std::cos(theta));
    sin[i] = static_cast<float>(std::sin(theta));
  }
}

// Hugging Face's apply_rotary_pos_emb for one head of d features, in float64 on the float cos and sin.
std::vector<double> ReferenceRope(const float* x, size_t d, const std::vector<float>& cos,
                                  const std::vector<float>& sin) {
  const size_t half = d / 2;
  std::vector<double> y(d);
  for (size_t j = 0; j < d; ++j) {
    const double rotated = j < half ? -static_cast<double>(x[j + half]) : static_cast<double>(x[j - half]);
    y[j] = x[j] * static_cast<double>(cos[j % half]) + rotated * sin[j % half];
  }
  return y;
}

// One call on `heads` heads of d features at offset off. Each output is a·c ∓ b·s with one rounded product and one
// fused multiply-add (or two roundings without FMA): |y − ref| ≤ 3 ε (|a c| + |b s|). Rotating back: that error
// (≤ 3 ε (|a| + |b|) per output) passes through a rotation (≤ √2 ·), the second call adds the same again (on
// outputs ≤ √2 (|a| + |b|)), and the float cos² + sin² is 1 within 2 ε: |x' − x| ≤ 12 ε (|x₁| + |x₂|).
void CheckRope(size_t d, size_t heads, size_t off, attnlab_test::Rng& rng, SweepResult& result) {
  const size_t n = heads * d, half = d / 2;
  std::vector<float> x(off + n + 1, kSentinel);
  for (size_t j = 0; j < n; ++j) x[off + j] = rng.Uniform(-3.0f, 3.0f);
  const std::vector<float> x0 = x;
  std::vector<float> cos, sin;
  Angles(d, static_cast<double>(rng.Int(0, 4095)), cos, sin);
  RopeHeads(x.data() + off, heads, d, cos.data(), sin.data());
  ++result.cases;
  for (size_t h = 0; h < heads; ++h) {
    const float* in = x0.data() + off + h * d;
    const std::vector<double> ref = ReferenceRope(in, d, cos, sin);
    for (size_t j = 0; j < d; ++j) {
      const double tol =
          3 * kEps32 * (std::fabs(in[j] * cos[j % half]) + std::fabs(in[(j + half) % d] * sin[j % half]));
      if (!(std::fabs(x[off + h * d + j] - ref[j]) <= tol)) {
        return result.Fail("RopeHeads d ", d, " heads ", heads, " misalign ", off, ": head ", h, " y[", j,
                           "] = ", x[off + h * d + j], ", reference ", ref[j], " (tolerance ", tol, ")");
      }
    }
  }
  if (x[off + n] != kSentinel) return result.Fail("RopeHeads d ", d, " heads ", heads, ": wrote past the heads");
  std::vector<float> minus_sin(half);
  for (size_t i = 0; i < half; ++i) minus_sin[i] = -sin[i];
  RopeHeads(x.data() + off, heads, d, cos.data(), minus_sin.data());
  for (size_t j = 0; j < n; ++j) {
    const size_t head = j / d * d, i = j % d;
    const double tol =
        12 * kEps32 * (std::fabs(x0[off + head + i % half]) + std::fabs(x0[off + head + half + i % half]));
    if (!(std::fabs(x[off + j] - x0[off + j]) <= tol)) {
      return result.Fail("RopeHeads d ", d, " by θ then −θ: x[", j, "] = ", x[off + j], ", was ", x0[off + j]);
    }
  }
}

SweepResult RopeSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(53);
  SweepResult result;
  for (const size_t half : attnlab_test::SweepLengths(lanes, 1, {32})) {  // head dims 2 · half
    const size_t d = 2 * half;
    for (const size_t heads : {size_t{1}, size_t{3}}) {
      for (const size_t off : misalign) {
        CheckRope(d, heads, off, rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(RopeSweep,
                             "rope: RopeHeads is rotate-half RoPE vs float64, and −θ undoes θ, on every target",
                             "[rope][kernels]");
#endif  // HWY_ONCE
