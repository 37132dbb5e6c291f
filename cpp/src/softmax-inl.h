// Masked, max-subtracted softmax over rows of logits, and the online (running max and sum) variant used by the
// tiled attention path. Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_SOFTMAX_INL_H_
#undef ATTNLAB_SRC_SOFTMAX_INL_H_
#else
#define ATTNLAB_SRC_SOFTMAX_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

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

HWY_INLINE bool HasNaN(const float* HWY_RESTRICT x, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    if (std::isnan(x[j])) return true;
  }
  return false;
}

// x[j] = x[j] * scale + row_bias[j] + key_bias[j] for j in [0, n) (biases only on j < mask_cols; either may be
// null). Returns max_j x[j] (-inf when n == 0).
HWY_INLINE float ScaleBiasMax(float* HWY_RESTRICT x, size_t n, float scale, const float* HWY_RESTRICT row_bias,
                              const float* HWY_RESTRICT key_bias, size_t mask_cols) {
  const hn::ScalableTag<float> d;
  auto vmax = hn::Set(d, kNegInf);
  float smax = kNegInf;
  const size_t biased = std::min(n, mask_cols);
  auto step = [&](auto dd, size_t j, bool with_bias) HWY_ATTR {
    auto v = hn::Mul(hn::LoadU(dd, x + j), hn::Set(dd, scale));
    if (with_bias) {
      if (row_bias) v = hn::Add(v, hn::LoadU(dd, row_bias + j));
      if (key_bias) v = hn::Add(v, hn::LoadU(dd, key_bias + j));
    }
    hn::StoreU(v, dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      smax = std::max(smax, hn::GetLane(v));
    } else {
      vmax = hn::Max(vmax, v);
    }
  };
  ForEachLane(0, biased, [&](auto dd, size_t j) HWY_ATTR { step(dd, j, true); });
  ForEachLane(biased, n, [&](auto dd, size_t j) HWY_ATTR { step(dd, j, false); });
  return std::max(smax, MaxLane(d, vmax));
}

// x[j] = exp(x[j] - max) for j in [0, n); returns the sum.
HWY_INLINE float ExpSubtractSum(float* HWY_RESTRICT x, size_t n, float max) {
  const hn::ScalableTag<float> d;
  auto vsum = hn::Zero(d);
  float ssum = 0.0f;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto e = hn::Exp(dd, hn::Sub(hn::LoadU(dd, x + j), hn::Set(dd, max)));
    hn::StoreU(e, dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      ssum += hn::GetLane(e);
    } else {
      vsum = hn::Add(vsum, e);
    }
  });
  return ssum + hn::GetLane(hn::SumOfLanes(d, vsum));
}

// x[j] *= factor for j in [0, n).
HWY_INLINE void ScaleRow(float* HWY_RESTRICT x, size_t n, float factor) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Mul(hn::LoadU(dd, x + j), hn::Set(dd, factor)), dd, x + j);
  });
}

HWY_INLINE void ZeroRow(float* HWY_RESTRICT x, size_t n) { std::fill(x, x + n, 0.0f); }

// Softmax of one row of raw logits q·k in place: x (n) → softmax(x · scale + biases) over the first `valid`
// entries, 0 for entries [valid, n) (causally hidden keys). A row with no attendable key (all -inf) becomes 0;
// a NaN anywhere in the row makes the whole row NaN (IEEE propagation, never hidden as "masked").
HWY_INLINE void MaskedSoftmaxRow(float* HWY_RESTRICT x, size_t n, size_t valid, float scale,
                                 const float* HWY_RESTRICT row_bias, const float* HWY_RESTRICT key_bias,
                                 size_t mask_cols) {
  ZeroRow(x + valid, n - valid);
  const float max = ScaleBiasMax(x, valid, scale, row_bias, key_bias, mask_cols);
  if (max == kNegInf) {  // NaN compares false everywhere, so it can hide behind a -inf maximum
    std::fill(x, x + valid, HasNaN(x, valid) ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
    return;
  }
  const float sum = ExpSubtractSum(x, valid, max);
  ScaleRow(x, valid, 1.0f / sum);
}

// Running state of one query row in the tiled (online) softmax: the largest logit seen and the sum of
// exp(logit - max) over the keys seen so far.
struct OnlineRowState {
  float max = kNegInf;
  float sum = 0.0f;
};

// Folds one tile of raw logits x (n, of which the first `valid` are visible) into `state`: x becomes the tile's
// unnormalised probabilities exp(x · scale + bias - new_max) (0 where hidden or masked). Returns the factor
// exp(old_max - new_max) by which the row's accumulated output must be rescaled.
HWY_INLINE float OnlineSoftmaxTile(float* HWY_RESTRICT x, size_t n, size_t valid, float scale,
                                   const float* HWY_RESTRICT row_bias, const float* HWY_RESTRICT key_bias,
                                   size_t mask_cols, OnlineRowState& state) {
  ZeroRow(x + valid, n - valid);
  const float tile_max = ScaleBiasMax(x, valid, scale, row_bias, key_bias, mask_cols);
  const float new_max = std::max(state.max, tile_max);
  if (new_max == kNegInf) {  // nothing attendable yet; a hidden NaN poisons the row's sum
    if (HasNaN(x, valid)) state.sum = std::numeric_limits<float>::quiet_NaN();
    ZeroRow(x, valid);
    return 1.0f;
  }
  const float rescale = state.max == kNegInf ? 0.0f : std::exp(state.max - new_max);
  state.sum = state.sum * rescale + ExpSubtractSum(x, valid, new_max);
  state.max = new_max;
  return rescale;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_SOFTMAX_INL_H_ toggle
