// Row normalisations of a Transformer block and their gradients, one row of e floats at a time (each row by one
// thread):
//   LayerNorm: y = (x − mean) / √(var + eps) · w + b, var the biased variance (torch.nn.LayerNorm);
//   RMSNorm:   y = x / √(mean(x²) + eps) · w (Llama's LlamaRMSNorm).
// Sums run in float vectors, then across lanes in double. Per-target code: include after hwy/highway.h, inside the
// foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_NORM_INL_H_
#undef ATTNLAB_SRC_OPS_NORM_INL_H_
#else
#define ATTNLAB_SRC_OPS_NORM_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Σ_j f(x[j]) over [0, n), where f maps a vector to a vector (lanes summed in double at the end).
template <class F>
HWY_INLINE double SumOver(const float* HWY_RESTRICT x, size_t n, const F& f) {
  const hn::ScalableTag<float> d;
  HWY_ALIGN float lanes[hn::MaxLanes(hn::ScalableTag<float>())];
  auto acc = hn::Zero(d);
  double tail = 0.0;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto v = f(dd, hn::LoadU(dd, x + j));
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      tail += static_cast<double>(hn::GetLane(v));
    } else {
      acc = hn::Add(acc, v);
    }
  });
  hn::Store(acc, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) tail += static_cast<double>(lanes[i]);
  return tail;
}

// y (e) = LayerNorm(x (e)) with weight w and bias b (b may be null).
HWY_INLINE void LayerNormRow(const float* HWY_RESTRICT x, size_t e, const float* HWY_RESTRICT w,
                             const float* HWY_RESTRICT b, float eps, float* HWY_RESTRICT y) {
  const float mean = static_cast<float>(SumOver(x, e, [](auto, auto v) { return v; }) / static_cast<double>(e));
  const double sq = SumOver(x, e, [&](auto dd, auto v) HWY_ATTR {
    const auto c = hn::Sub(v, hn::Set(dd, mean));
    return hn::Mul(c, c);
  });
  const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(e) + static_cast<double>(eps)));
  ForEachLane(0, e, [&](auto dd, size_t j) HWY_ATTR {
    const auto c = hn::Mul(hn::Sub(hn::LoadU(dd, x + j), hn::Set(dd, mean)), hn::Set(dd, inv));
    const auto scaled = hn::Mul(c, hn::LoadU(dd, w + j));
    hn::StoreU(b ? hn::Add(scaled, hn::LoadU(dd, b + j)) : scaled, dd, y + j);
  });
}

// y (e) = RMSNorm(x (e)) with weight w.
HWY_INLINE void RmsNormRow(const float* HWY_RESTRICT x, size_t e, const float* HWY_RESTRICT w, float eps,
                           float* HWY_RESTRICT y) {
  const double sq = SumOver(x, e, [](auto, auto v) HWY_ATTR { return hn::Mul(v, v); });
  const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(e) + static_cast<double>(eps)));
  ForEachLane(0, e, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(dd, x + j), hn::Set(dd, inv)), hn::LoadU(dd, w + j)), dd, y + j);
  });
}

// Gradient of y = LayerNorm(x) (bias b may be null) for one row: dx += r (ĝ − mean(ĝ) − x̂ mean(ĝ x̂)) with
// x̂ = (x − mean) r, ĝ = dy ⊙ w; dw += dy ⊙ x̂; db += dy (dw, db null: not wanted). (Scalar: the reductions are small
// next to the GEMMs.)
HWY_INLINE void LayerNormGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT w, const float* HWY_RESTRICT dy,
                                 size_t e, float eps, float* HWY_RESTRICT dx, float* HWY_RESTRICT dw,
                                 float* HWY_RESTRICT db) {
  double sum = 0, sq = 0;
  for (size_t j = 0; j < e; ++j) sum += x[j];
  const double mean = sum / static_cast<double>(e);
  for (size_t j = 0; j < e; ++j) sq += (x[j] - mean) * (x[j] - mean);
  const double r = 1.0 / std::sqrt(sq / static_cast<double>(e) + static_cast<double>(eps));
  double g_mean = 0, gx_mean = 0;
  for (size_t j = 0; j < e; ++j) {
    const double xhat = (x[j] - mean) * r, g = static_cast<double>(dy[j]) * w[j];
    g_mean += g;
    gx_mean += g * xhat;
    if (dw) dw[j] += static_cast<float>(dy[j] * xhat);
    if (db) db[j] += dy[j];
  }
  g_mean /= static_cast<double>(e);
  gx_mean /= static_cast<double>(e);
  for (size_t j = 0; j < e; ++j) {
    const double xhat = (x[j] - mean) * r, g = static_cast<double>(dy[j]) * w[j];
    dx[j] += static_cast<float>(r * (g - g_mean - xhat * gx_mean));
  }
}

// Gradient of y = RMSNorm(x) for one row: dx += r ĝ − x r³ mean(ĝ x) with ĝ = dy ⊙ w; dw += dy ⊙ x r (dw null:
// not wanted).
HWY_INLINE void RmsNormGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT w, const float* HWY_RESTRICT dy,
                               size_t e, float eps, float* HWY_RESTRICT dx, float* HWY_RESTRICT dw) {
  double sq = 0, gx = 0;
  for (size_t j = 0; j < e; ++j) {
    sq += static_cast<double>(x[j]) * x[j];
    gx += static_cast<double>(dy[j]) * w[j] * x[j];
  }
  const double r = 1.0 / std::sqrt(sq / static_cast<double>(e) + static_cast<double>(eps));
  const double c = r * r * r * gx / static_cast<double>(e);
  for (size_t j = 0; j < e; ++j) {
    if (dw) dw[j] += static_cast<float>(dy[j] * x[j] * r);
    dx[j] += static_cast<float>(r * dy[j] * w[j] - x[j] * c);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_NORM_INL_H_ toggle
