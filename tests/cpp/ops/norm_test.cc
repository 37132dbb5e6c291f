// Tests of cpp/src/ops/norm-inl.h below the public API, on every compiled target: LayerNormRow (with and without
// bias) and RmsNormRow over row lengths 1…2N+1 and two long rows, misaligned, against a float64 reference; their
// gradients LayerNormGradRow and RmsNormGradRow against the float64 Jacobian written out element by element
// (dx_i = Σ_j ĝ_j ∂x̂_j/∂x_i, not the kernels' folded formula) and against central differences of the float64
// forward; dx, dw and db add to what they hold.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/norm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "cpp/src/ops/norm-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

constexpr double kEps32 = 1.0 / 16777216.0;  // 2^-24, float32's unit roundoff
constexpr float kSentinel = -1234.5f;

// One row of e features at offset off: x = offset + U(-2, 2) (LayerNorm's mean is not 0), w, b, dy.
struct NormRow {
  NormRow(size_t e, size_t off, attnlab_test::Rng& rng) : e(e), off(off) {
    const float offset = rng.Uniform(-1.0f, 1.0f);
    for (std::vector<float>* v : {&x, &w, &b, &dy}) v->assign(off + e + 1, kSentinel);
    for (size_t j = 0; j < e; ++j) {
      x[off + j] = offset + rng.Uniform(-2.0f, 2.0f);
      w[off + j] = rng.Uniform(-1.5f, 1.5f);
      b[off + j] = rng.Uniform(-1.0f, 1.0f);
      dy[off + j] = rng.Uniform(-1.0f, 1.0f);
    }
  }
  std::vector<double> X() const { return std::vector<double>(x.begin() + off, x.begin() + off + e); }
  size_t e, off;
  std::vector<float> x, w, b, dy;
};

// float64 normalisation of x: x̂ = (x − mean) r (LayerNorm) or x r (RMSNorm, mean 0), r = 1/√(mean((x − mean)²) + eps).
struct Normalised {
  double mean = 0, r = 0;
  std::vector<double> xhat;
};

Normalised Normalise(const std::vector<double>& x, bool layer, double eps) {
  Normalised n;
  const double e = static_cast<double>(x.size());
  if (layer) {
    for (double v : x) n.mean += v / e;
  }
  double var = 0;
  for (double v : x) var += (v - n.mean) * (v - n.mean) / e;
  n.r = 1.0 / std::sqrt(var + eps);
  for (double v : x) n.xhat.push_back((v - n.mean) * n.r);
  return n;
}

// L = Σ_j dy_j y_j of the float64 forward at x (with w, b of the row): the scalar whose gradient the kernels give.
double Loss(const NormRow& row, const std::vector<double>& x, bool layer, bool bias, double eps) {
  const Normalised n = Normalise(x, layer, eps);
  double loss = 0;
  for (size_t j = 0; j < row.e; ++j) {
    loss += row.dy[row.off + j] * (n.xhat[j] * row.w[row.off + j] + (bias ? row.b[row.off + j] : 0.0));
  }
  return loss;
}

// The forward of one row (layer: LayerNormRow, with bias or not; else RmsNormRow) against float64. Tolerance, by
// the rounding steps of the kernel (float32 sums in lanes, then double): the mean is off by up to (e + 1) ε·mean|x|,
// r by (e + 5)/2 ε relative, and the centring, scaling and multiply-add add 3 ε: |y − ref| ≤ (2e + 10) ε ·
// r (|x_j| + mean|x|) |w_j| + 2 ε |b_j|.
void CheckForward(size_t e, size_t off, bool layer, bool bias, attnlab_test::Rng& rng, SweepResult& result) {
  const NormRow row(e, off, rng);
  const float eps = layer ? 1e-5f : 1e-6f;
  std::vector<float> y(off + e + 1, kSentinel);
  if (layer) {
    LayerNormRow(row.x.data() + off, e, row.w.data() + off, bias ? row.b.data() + off : nullptr, eps, y.data() + off);
  } else {
    RmsNormRow(row.x.data() + off, e, row.w.data() + off, eps, y.data() + off);
  }
  ++result.cases;
  const std::vector<double> x = row.X();
  const Normalised n = Normalise(x, layer, eps);
  double mean_abs = 0;
  for (double v : x) mean_abs += std::fabs(v) / static_cast<double>(e);
  for (size_t j = 0; j < e; ++j) {
    const double bj = bias ? row.b[off + j] : 0.0, w = row.w[off + j];
    const double ref = n.xhat[j] * w + bj;
    const double tol = (2.0 * e + 10) * kEps32 * n.r * (std::fabs(x[j]) + mean_abs) * std::fabs(w) +
                       2 * kEps32 * std::fabs(bj) + 1e-30;
    if (!(std::fabs(y[off + j] - ref) <= tol)) {
      return result.Fail(layer ? "LayerNormRow" : "RmsNormRow", " e ", e, " bias ", bias, " misalign ", off, ": y[", j,
                         "] = ", y[off + j], ", reference ", ref, " (tolerance ", tol, ")");
    }
  }
  if (y[off + e] != kSentinel) result.Fail(layer ? "LayerNormRow" : "RmsNormRow", " e ", e, ": wrote past e");
}

SweepResult ForwardSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(43);
  SweepResult result;
  for (const size_t e : attnlab_test::SweepLengths(lanes, 1, {64, 257})) {
    for (const size_t off : misalign) {
      for (const int kind : {0, 1, 2}) {  // LayerNorm with bias, LayerNorm without, RMSNorm
        CheckForward(e, off, kind < 2, kind == 0, rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  return result;
}

// float64 ∂L/∂x by the Jacobian of x̂ written out: LayerNorm ∂x̂_j/∂x_i = r (δ_ij − 1/e) − r x̂_i x̂_j / e, RMSNorm
// r δ_ij − r x̂_i x̂_j / e; dx_i = Σ_j dy_j w_j ∂x̂_j/∂x_i.
std::vector<double> JacobianDx(const NormRow& row, bool layer, double eps) {
  const Normalised n = Normalise(row.X(), layer, eps);
  const double e = static_cast<double>(row.e);
  std::vector<double> dx(row.e, 0.0);
  for (size_t i = 0; i < row.e; ++i) {
    for (size_t j = 0; j < row.e; ++j) {
      const double d = n.r * ((i == j ? 1.0 : 0.0) - (layer ? 1.0 / e : 0.0)) - n.r * n.xhat[i] * n.xhat[j] / e;
      dx[i] += static_cast<double>(row.dy[row.off + j]) * row.w[row.off + j] * d;
    }
  }
  return dx;
}

// Central difference of L in x_i (step 1e-4: truncation ~1e-9 and float64 rounding ~1e-12 of the scale below).
double CentralDx(const NormRow& row, size_t i, bool layer, double eps) {
  std::vector<double> plus = row.X(), minus = row.X();
  plus[i] += 1e-4;
  minus[i] -= 1e-4;
  return (Loss(row, plus, layer, true, eps) - Loss(row, minus, layer, true, eps)) / 2e-4;
}

// One gradient call on accumulators that start from random values. The kernels compute in float64 and round once
// into the float sum: |got − (start + ref)| ≤ 2 ε (|start| + |ref|), plus 1e-12 of the scale r Σ|ĝ| (1 + max|x̂|)²
// for float64 cancellation. Central differences: 1e-6 of that scale.
void CheckGrad(size_t e, bool layer, attnlab_test::Rng& rng, SweepResult& result) {
  const NormRow row(e, 0, rng);
  const float eps = 1e-5f;
  const std::vector<float> dx0 = attnlab_test::RandomVector(rng, int64_t(e)), dw0 = dx0;
  const std::vector<float> db0 = attnlab_test::RandomVector(rng, int64_t(e));
  std::vector<float> dx = dx0, dw = dw0, db = db0;
  if (layer) {
    LayerNormGradRow(row.x.data(), row.w.data(), row.dy.data(), e, eps, dx.data(), dw.data(), db.data());
  } else {
    RmsNormGradRow(row.x.data(), row.w.data(), row.dy.data(), e, eps, dx.data(), dw.data());
  }
  ++result.cases;
  const Normalised n = Normalise(row.X(), layer, eps);
  const std::vector<double> jac = JacobianDx(row, layer, eps);
  double scale = 0, xhat_max = 0;
  for (size_t j = 0; j < e; ++j) {
    scale += std::fabs(row.dy[j] * row.w[j]) * n.r;
    xhat_max = std::max(xhat_max, std::fabs(n.xhat[j]));
  }
  scale *= (1 + xhat_max) * (1 + xhat_max);
  auto near = [&](float got, double start, double ref, double extra) {
    return std::fabs(got - (start + ref)) <= 2 * kEps32 * (std::fabs(start) + std::fabs(ref)) + extra;
  };
  const char* what = layer ? "LayerNormGradRow" : "RmsNormGradRow";
  for (size_t i = 0; i < e && !result.Failed(); ++i) {
    const double central = CentralDx(row, i, layer, eps), dw_ref = static_cast<double>(row.dy[i]) * n.xhat[i];
    if (!near(dx[i], dx0[i], jac[i], 1e-12 * scale) || !near(dx[i], dx0[i], central, 1e-6 * scale)) {
      result.Fail(what, " e ", e, ": dx[", i, "] = ", dx[i] - dx0[i], ", Jacobian ", jac[i], ", central ", central);
    } else if (!near(dw[i], dw0[i], dw_ref, 1e-12 * scale)) {
      result.Fail(what, " e ", e, ": dw[", i, "] = ", dw[i] - dw0[i], ", reference ", dw_ref);
    } else if (layer ? !near(db[i], db0[i], row.dy[i], 0.0) : db[i] != db0[i]) {
      result.Fail(what, " e ", e, ": db[", i, "] = ", db[i], ", start ", db0[i], " + dy ", row.dy[i]);
    }
  }
}

SweepResult GradSweep() {
  attnlab_test::Rng rng(47);
  SweepResult result;
  for (const size_t e : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{16}, size_t{33}}) {
    for (const bool layer : {true, false}) {
      CheckGrad(e, layer, rng, result);
      if (result.Failed()) return result;
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(
    ForwardSweep, "norm: LayerNormRow and RmsNormRow over lengths 1…2N+1 and long rows vs float64, on every target",
    "[norm][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(
    GradSweep,
    "norm: LayerNormGradRow and RmsNormGradRow vs the float64 Jacobian and central differences, on every target",
    "[norm][kernels]");
#endif  // HWY_ONCE
