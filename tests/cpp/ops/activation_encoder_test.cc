// Tests of the encoders' rows of cpp/src/ops/activation-inl.h below the public API, on every compiled target:
// GeluErfRow, ReluRow, SiluRow and TanhRow over lengths 0…2N+1 and a long row, misaligned, in place or not, against
// float64 (BERT's gelu, relu, silu; a pooler's tanh); NaN stays NaN. (A file of its own beside activation_test.cc,
// which another branch is reshaping; the two may merge.)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/activation_encoder_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "cpp/src/ops/activation-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "test_util.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace {

using attnlab_test::SweepResult;

constexpr double kEps32 = 1.0 / 16777216.0;  // 2^-24
constexpr float kSentinel = -1234.5f;

double GeluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double Relu(double x) { return x > 0 ? x : 0; }
double Silu(double x) { return x / (1 + std::exp(-x)); }

using Row = void (*)(const float*, size_t, float*);
struct Kind {
  const char* name;
  Row row;
  double (*reference)(double);
};

// One row of n values in [−8, 8) at offset off through `kind`: within 16 ε (|x| + |ref|) of float64 (std::erf and
// std::tanh are within a few ulp, Highway's Exp too), nothing written past n.
void CheckRow(const Kind& kind, size_t n, size_t off, bool in_place, attnlab_test::Rng& rng, SweepResult& result) {
  std::vector<float> x(off + n + 1, kSentinel);
  for (size_t j = 0; j < n; ++j) x[off + j] = rng.Uniform(-8.0f, 8.0f);
  std::vector<float> y = in_place ? x : std::vector<float>(x.size(), kSentinel);
  kind.row((in_place ? y : x).data() + off, n, y.data() + off);
  ++result.cases;
  for (size_t j = 0; j < n; ++j) {
    const double v = x[off + j], ref = kind.reference(v);
    if (!(std::fabs(y[off + j] - ref) <= 16 * kEps32 * (std::fabs(v) + std::fabs(ref)))) {
      return result.Fail(kind.name, " n ", n, " in place ", in_place, ": x ", v, " → ", y[off + j], ", reference ",
                         ref);
    }
  }
  if (y[off + n] != kSentinel) result.Fail(kind.name, " n ", n, ": wrote past n");
}

const Kind kKinds[] = {{"GeluErfRow", GeluErfRow, GeluErf},
                       {"ReluRow", ReluRow, Relu},
                       {"SiluRow", SiluRow, Silu},
                       {"TanhRow", TanhRow, [](double x) { return std::tanh(x); }}};

SweepResult EncoderActivationSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  attnlab_test::Rng rng(61);
  SweepResult result;
  std::vector<size_t> lengths{300};
  for (size_t n = 0; n <= 2 * lanes + 1; ++n) lengths.push_back(n);
  for (const size_t n : lengths) {
    for (const size_t off : attnlab_test::Misalignments(lanes)) {
      for (const bool in_place : {false, true}) {
        for (const Kind& kind : kKinds) CheckRow(kind, n, off, in_place, rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Kind& kind : kKinds) {
    float y = 0;
    kind.row(&nan, 1, &y);
    ++result.cases;
    if (!std::isnan(y)) result.Fail(kind.name, ": NaN in, ", y, " out");
  }
  return result;
}

}  // namespace
// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {
namespace {

HWY_EXPORT(EncoderActivationSweep);

TEST_CASE("activation: the encoders' GELU (erf), ReLU, SiLU and tanh vs float64, on every target",
          "[activation][kernels]") {
  attnlab_test::CheckSweepOnEveryTarget([] { return HWY_DYNAMIC_DISPATCH(EncoderActivationSweep)(); });
}

}  // namespace
}  // namespace attnlab
#endif  // HWY_ONCE
