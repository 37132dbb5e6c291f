// Tests of cpp/src/ops/activation-inl.h below the public API, on every compiled target: GeluTanhRow and SwiGluRow
// over lengths 0…2N+1 and a long row, misaligned, in place or not, against float64 (GPT-2's gelu_new and Llama's
// silu(gate) · up); their gradients GeluTanhGradRow, SwiGluGradRow and SiluGradRow (Marian's swish MLP) against the
// float64 derivative and central differences of the float64 function; NaN stays NaN, and arguments past the clamps
// give the limits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/activation_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "cpp/src/ops/activation-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

constexpr double kEps32 = 1.0 / 16777216.0;  // 2^-24, float32's unit roundoff
constexpr float kSentinel = -1234.5f;

double Gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double Silu(double g) { return g / (1 + std::exp(-g)); }

// Gelu'(x) = ½ (1 + t) + ½ x (1 − t²) √(2/π) (1 + 3 · 0.044715 x²), t = tanh(√(2/π) (x + 0.044715 x³)).
double GeluGrad(double x) {
  const double c = 0.7978845608028654, t = std::tanh(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
}
// silu'(g) = σ(g) (1 + g (1 − σ(g))).
double SiluGrad(double g) {
  const double s = 1 / (1 + std::exp(-g));
  return s * (1 + g * (1 - s));
}
// Central difference (step 1e-4: truncation ~1e-9 |f'''|, float64 rounding ~1e-12 |f|).
template <class F>
double Central(F f, double x) {
  return (f(x + 1e-4) - f(x - 1e-4)) / 2e-4;
}

// A tolerance check: within tol of ref, NaN for NaN.
bool Near(float got, double ref, double tol) { return std::isnan(ref) ? std::isnan(got) : std::fabs(got - ref) <= tol; }

// Tolerances, from Highway's Tanh and Exp (a few ulp) and the float arithmetic around them: GELU's 1 + t has an
// absolute error of ~4 ε, times ½|x|, and the inner argument's relative error (~3 ε) moves t by up to that times
// |inner|: |y − ref| ≤ 16 ε (|x| + |ref|). The derivative's ½ x (1 − t²) d_inner term carries t's error times
// |x| |d_inner| (|d_inner| ≤ 1 + 0.11 x²): 16 ε (1 + |x|) (1 + 0.11 x²) |dy|. silu(g) · up: Exp's and the
// division's relative errors, 16 ε |ref|; its derivative's 1 − σ carries σ's absolute error ε times |g|:
// 16 ε (1 + |g|) |dy · up|. Central differences add 1e-8.

// Rows of n random floats at offset off in [lo, hi), a sentinel after them.
std::vector<float> RandomRow(size_t n, size_t off, float lo, float hi, attnlab_test::Rng& rng) {
  std::vector<float> v(off + n + 1, kSentinel);
  for (size_t j = 0; j < n; ++j) v[off + j] = rng.Uniform(lo, hi);
  return v;
}

void CheckGelu(size_t n, size_t off, bool in_place, attnlab_test::Rng& rng, SweepResult& result) {
  const std::vector<float> x = RandomRow(n, off, -6.0f, 6.0f, rng), dy = RandomRow(n, off, -1.0f, 1.0f, rng);
  std::vector<float> y = in_place ? x : std::vector<float>(x.size(), kSentinel), dx(x.size(), kSentinel);
  GeluTanhRow((in_place ? y : x).data() + off, n, y.data() + off);  // in place: y holds x and receives y
  GeluTanhGradRow(x.data() + off, dy.data() + off, n, dx.data() + off);
  ++result.cases;
  for (size_t j = 0; j < n; ++j) {
    const double v = x[off + j], g = dy[off + j];
    const double ref = Gelu(v), tol = 16 * kEps32 * (std::fabs(v) + std::fabs(ref));
    const double dref = g * GeluGrad(v), dcentral = g * Central(Gelu, v);
    const double dtol = 16 * kEps32 * (1 + std::fabs(v)) * (1 + 0.11 * v * v) * std::fabs(g);
    if (!Near(y[off + j], ref, tol)) {
      return result.Fail("GeluTanhRow n ", n, " in place ", in_place, ": x ", v, " → ", y[off + j], ", reference ",
                         ref);
    }
    if (!Near(dx[off + j], dref, dtol) || !Near(dx[off + j], dcentral, dtol + 1e-8)) {
      return result.Fail("GeluTanhGradRow n ", n, ": x ", v, " → ", dx[off + j], ", derivative ", dref, ", central ",
                         dcentral);
    }
  }
  if (y[off + n] != kSentinel || dx[off + n] != kSentinel) result.Fail("GELU n ", n, ": wrote past n");
}

void CheckSwiGlu(size_t n, size_t off, bool in_place, attnlab_test::Rng& rng, SweepResult& result) {
  const std::vector<float> gate = RandomRow(n, off, -12.0f, 12.0f, rng), up = RandomRow(n, off, -2.0f, 2.0f, rng);
  const std::vector<float> dy = RandomRow(n, off, -1.0f, 1.0f, rng);
  std::vector<float> y = in_place ? gate : std::vector<float>(gate.size(), kSentinel);
  std::vector<float> d_gate(gate.size(), kSentinel), d_up = d_gate;
  SwiGluRow((in_place ? y : gate).data() + off, up.data() + off, n, y.data() + off);
  SwiGluGradRow(gate.data() + off, up.data() + off, dy.data() + off, n, d_gate.data() + off, d_up.data() + off);
  ++result.cases;
  for (size_t j = 0; j < n; ++j) {
    const double g = gate[off + j], u = up[off + j], grad = dy[off + j];
    const double ref = Silu(g) * u, dg = grad * u * SiluGrad(g), dg_central = grad * u * Central(Silu, g);
    const double du = grad * Silu(g), dtol = 16 * kEps32 * (1 + std::fabs(g)) * std::fabs(grad * u);
    if (!Near(y[off + j], ref, 16 * kEps32 * std::fabs(ref))) {
      return result.Fail("SwiGluRow n ", n, " in place ", in_place, ": gate ", g, " up ", u, " → ", y[off + j],
                         ", reference ", ref);
    }
    if (!Near(d_gate[off + j], dg, dtol) || !Near(d_gate[off + j], dg_central, dtol + 1e-8) ||
        !Near(d_up[off + j], du, 16 * kEps32 * std::fabs(du))) {
      return result.Fail("SwiGluGradRow n ", n, ": gate ", g, " up ", u, " dy ", grad, " → d_gate ", d_gate[off + j],
                         " (", dg, ", central ", dg_central, "), d_up ", d_up[off + j], " (", du, ")");
    }
  }
  if (y[off + n] != kSentinel || d_gate[off + n] != kSentinel || d_up[off + n] != kSentinel) {
    result.Fail("SwiGLU n ", n, ": wrote past n");
  }
}

// SiluGradRow (dx may not alias): dy · silu'(x) within SwiGLU's d_gate bound with up = 1.
void CheckSiluGrad(size_t n, size_t off, attnlab_test::Rng& rng, SweepResult& result) {
  const std::vector<float> x = RandomRow(n, off, -12.0f, 12.0f, rng), dy = RandomRow(n, off, -1.0f, 1.0f, rng);
  std::vector<float> dx(x.size(), kSentinel);
  SiluGradRow(x.data() + off, dy.data() + off, n, dx.data() + off);
  ++result.cases;
  for (size_t j = 0; j < n; ++j) {
    const double v = x[off + j], g = dy[off + j];
    const double dref = g * SiluGrad(v), dcentral = g * Central(Silu, v);
    const double dtol = 16 * kEps32 * (1 + std::fabs(v)) * std::fabs(g);
    if (!Near(dx[off + j], dref, dtol) || !Near(dx[off + j], dcentral, dtol + 1e-8)) {
      return result.Fail("SiluGradRow n ", n, ": x ", v, " dy ", g, " → ", dx[off + j], ", derivative ", dref,
                         ", central ", dcentral);
    }
  }
  if (dx[off + n] != kSentinel) result.Fail("SiluGradRow n ", n, ": wrote past n");
}

SweepResult ActivationSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(59);
  SweepResult result;
  for (const size_t n : attnlab_test::SweepLengths(lanes, 0, {300})) {
    for (const size_t off : misalign) {
      for (const bool in_place : {false, true}) {
        CheckGelu(n, off, in_place, rng, result);
        CheckSwiGlu(n, off, in_place, rng, result);
        if (!in_place) CheckSiluGrad(n, off, rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  return result;
}

// Past the clamps and NaN: GELU(x) is x for x ≥ 50 and 0 for x ≤ −50 (derivative 1 and 0), NaN gives NaN
// everywhere; silu(g) · up is within 16 ε of float64 for g ≥ −50 (up to 1e30) and within 1e-30 of 0 (the clamp at
// −80) for g = −100. (Only Exp's argument is clamped, not the gate: silu(−1e30) comes out −1e30 / e⁸⁰ ≈ −1.8e-5,
// not −0 as in PyTorch; not asserted here.)
SweepResult SpecialsSweep() {
  SweepResult result;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{nan, -1e30f, -50.0f, 50.0f, 1e30f, -100.0f, 100.0f, 3e20f};
  const size_t n = x.size();
  std::vector<float> ones(n, 1.0f), up(n, 1.5f), y(n), dx(n), d_gate(n), d_up(n), s(n);
  GeluTanhRow(x.data(), n, y.data());
  GeluTanhGradRow(x.data(), ones.data(), n, dx.data());
  SwiGluRow(x.data(), up.data(), n, s.data());
  SwiGluGradRow(x.data(), up.data(), ones.data(), n, d_gate.data(), d_up.data());
  ++result.cases;
  if (!std::isnan(y[0]) || !std::isnan(dx[0]) || !std::isnan(s[0]) || !std::isnan(d_gate[0]) || !std::isnan(d_up[0])) {
    result.Fail("NaN in: GELU ", y[0], " grad ", dx[0], ", SwiGLU ", s[0], " grads ", d_gate[0], " ", d_up[0]);
    return result;
  }
  for (size_t j = 1; j < n; ++j) {
    const bool gelu_ok = x[j] < 0 ? y[j] == 0.0f : y[j] == x[j];
    const bool grad_ok = std::fabs(x[j]) > 60 || dx[j] == (x[j] < 0 ? 0.0f : 1.0f);
    const double silu_ref = Silu(x[j]) * up[j];
    const bool silu_ok = x[j] < -100.0f   ? true
                         : x[j] <= -80.0f ? std::fabs(s[j]) <= 1e-30f && !(s[j] > 0)
                                          : Near(s[j], silu_ref, 16 * kEps32 * std::fabs(silu_ref));
    if (!gelu_ok || !grad_ok || !silu_ok) {
      result.Fail("x ", x[j], ": GELU ", y[j], " grad ", dx[j], ", silu(x) · 1.5 ", s[j]);
      return result;
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(
    ActivationSweep,
    "activation: GELU-tanh, SwiGLU, their gradients and SiLU's vs float64 and central differences, on every target",
    "[activation][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(SpecialsSweep,
                             "activation: NaN stays NaN, arguments past the clamps give the limits, on every target",
                             "[activation][kernels]");
#endif  // HWY_ONCE
