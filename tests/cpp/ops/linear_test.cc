// Tests of the model's projections y = x · Wᵀ + b (Linear, LinearOf, GemmRows of cpp/src/ops/linear-inl.h), on every
// compiled target: few rows (≤ kGemvMaxRows: GemvPacked over column slices) and many rows (GemmRows over row
// blocks), outputs across one and several GEMV slices, with and without bias, padded strides, a float32 weight and
// F16 / BF16 weights (packed from a torch.nn.Linear (out, in) layout) against a float64 reference; a 16-bit weight
// gives bit for bit the result of the float32 weight holding the same values; nothing outside y's (rows, out)
// block is written.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/linear_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpp/src/ops/linear-inl.h"
#include "cpp/src/ops/packing.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

using attnlab_test::DotTolerance;

constexpr float kSentinel = -1234.5f;

// Random 16-bit weights of magnitude 1/8…2 (one in 16 is ±0), as bits of `dtype`.
uint16_t RandomBits(attnlab_test::Rng& rng, Dtype16 dtype) {
  const bool f16 = dtype == Dtype16::kF16;
  const uint32_t sign = rng.Bernoulli(0.5) ? 0x8000u : 0u;
  if (rng.Bernoulli(1.0 / 16)) return static_cast<uint16_t>(sign);
  const uint32_t man_bits = f16 ? 10 : 7;
  const auto exp = static_cast<uint32_t>(f16 ? rng.Int(12, 15) : rng.Int(124, 127));
  const auto man = static_cast<uint32_t>(rng.Int(0, (int64_t{1} << man_bits) - 1));
  return static_cast<uint16_t>(sign | (exp << man_bits) | man);
}

// A torch.nn.Linear weight (out, in) and bias as float32 values, and the same values as 16-bit bits (dtype) when
// `bits16`, packed both ways.
struct LinearWeights {
  LinearWeights(size_t in, size_t out, bool bias, bool bits16, Dtype16 dtype, attnlab_test::Rng& rng)
      : w(out * in), b(out), bits(out * in) {
    for (size_t t = 0; t < w.size(); ++t) {
      bits[t] = RandomBits(rng, dtype);
      w[t] = bits16 ? Bits16ToFloat(bits[t], dtype) : rng.Uniform(-1.0f, 1.0f);
    }
    for (float& x : b) x = rng.Uniform(-1.0f, 1.0f);
    args.in = in, args.out = out, args.bias = bias ? b.data() : nullptr;
    args.w = PackB(w.data(), in, in, out, true, packed);
    if (bits16) args16 = args, args16.w16 = PackB16(bits.data(), in, in, out, true, dtype, packed16);
  }
  std::vector<float> w, b, packed;
  std::vector<uint16_t> bits, packed16;
  LinearArgs args, args16;
};

// y (rows + 1 rows of ldy = out + 2, sentinels) of Linear on x (rows, in) with row stride in + 3.
std::vector<float> RunLinear(size_t rows, const std::vector<float>& x, const LinearArgs& w) {
  const size_t ldy = w.out + 2;
  std::vector<float> y((rows + 1) * ldy, kSentinel);
  Linear(rows, x.data(), w.in + 3, w, y.data(), ldy);
  return y;
}

// One Linear call (and its 16-bit twin) against float64; a mismatch is recorded in result.
void CheckLinear(size_t rows, size_t in, size_t out, bool bias, int weights, attnlab_test::Rng& rng,
                 SweepResult& result) {
  const bool bits16 = weights > 0;
  const Dtype16 dtype = weights == 1 ? Dtype16::kF16 : Dtype16::kBF16;
  const LinearWeights lw(in, out, bias, bits16, dtype, rng);
  const std::vector<float> x = attnlab_test::RandomVector(rng, int64_t(rows * (in + 3) + 1));
  const std::vector<float> y = RunLinear(rows, x, lw.args);
  ++result.cases;
  const char* what = weights == 0 ? "float32" : weights == 1 ? "F16" : "BF16";
  if (bits16 && std::memcmp(y.data(), RunLinear(rows, x, lw.args16).data(), y.size() * sizeof(float)) != 0) {
    return result.Fail("Linear rows ", rows, " in ", in, " out ", out, ": ", what, " weights differ from float32");
  }
  const size_t ldy = out + 2;
  for (size_t i = 0; i <= rows; ++i) {
    for (size_t j = 0; j < ldy; ++j) {
      const float got = y[i * ldy + j];
      if (i == rows || j >= out) {
        if (got != kSentinel) return result.Fail("Linear rows ", rows, " out ", out, ": wrote (", i, ", ", j, ")");
        continue;
      }
      double ref = bias ? lw.b[j] : 0.0, bound = std::fabs(ref);
      for (size_t p = 0; p < in; ++p) {
        const double prod = static_cast<double>(x[i * (in + 3) + p]) * lw.w[j * in + p];
        ref += prod;
        bound += std::fabs(prod);
      }
      if (!(std::fabs(got - ref) <= DotTolerance(in, bound))) {
        return result.Fail("Linear rows ", rows, " in ", in, " out ", out, " bias ", bias, " ", what, ": y(", i, ", ",
                           j, ") = ", got, ", reference ", ref);
      }
    }
  }
}

SweepResult LinearSweep() {
  attnlab_test::Rng rng(67);
  SweepResult result;
  size_t v = 0;
  for (const size_t rows : {size_t{1}, size_t{3}, kGemvMaxRows, kGemvMaxRows + 1, 2 * kRowBlock + 3}) {
    for (const size_t out : {size_t{3}, kPanel + 5, kGemvColumns + 9}) {
      for (const size_t in : {size_t{1}, size_t{19}, size_t{70}}) {
        for (const int weights : {0, 1, 2}) {
          CheckLinear(rows, in, out, ++v % 2 == 0, weights, rng, result);
          if (result.Failed()) return result;
        }
      }
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(
    LinearSweep,
    "linear: few rows (GEMV) and many rows (GEMM), float32 and F16/BF16 weights vs float64, on every target",
    "[linear][kernels]");
#endif  // HWY_ONCE
