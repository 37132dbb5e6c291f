// Tests of cpp/src/gemm-inl.h and packing-inl.h below the public API, on every compiled target: Gemm /
// GemmUnpacked for m, n, k across every tile remainder (n 0…2 tile widths + 1, partial 4-row tiles, several k
// blocks, the packed-A path), A and B transposed or not, padded strides and misaligned pointers, against a float64
// reference; nothing outside C's (m, n) block may change. PackA against its documented layout. GemvPacked (the
// few-row path of decoding) the same way: every panel remainder, k across its interleaved sets, bias or none.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/gemm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "cpp/src/gemm-inl.h"
#include "cpp/src/packing-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "test_util.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace {

using attnlab_test::SweepResult;

// A float that no computation produces: padding that must stay untouched.
constexpr float kSentinel = -1234.5f;

struct GemmShape {
  size_t m, n, k;
};

// flags: bit 0 A transposed, 1 B transposed, 2 bias, 3 accumulate.
struct GemmCase {
  GemmCase(GemmShape shape, size_t flags, size_t misalign)
      : m(shape.m),
        n(shape.n),
        k(shape.k),
        a_transposed(flags & 1),
        b_transposed(flags & 2),
        bias(flags & 4),
        accumulate(flags & 8),
        misalign(misalign) {}
  size_t m, n, k;
  bool a_transposed, b_transposed, bias, accumulate;
  size_t misalign;
};

// One GemmUnpacked call against a float64 reference; C has two padding columns and a padding row of sentinels.
void CheckGemm(const GemmCase& g, attnlab_test::Rng& rng, SweepResult& result) {
  const size_t m = g.m, n = g.n, k = g.k, off = g.misalign;
  // A (m, k) with row stride lda, or stored transposed (k, m) with row stride ldt.
  const size_t lda = k + 3, ldt = m + 2;
  std::vector<float> a(off + std::max<size_t>(1, g.a_transposed ? k * ldt : m * lda));
  for (float& x : a) x = rng.Uniform(-1.0f, 1.0f);
  auto a_at = [&](size_t i, size_t p) { return g.a_transposed ? a[off + p * ldt + i] : a[off + i * lda + p]; };
  // B (k, n) with row stride ldb, or stored transposed (n, k).
  const size_t ldb = g.b_transposed ? k + 1 : n + 5;
  std::vector<float> b(off + std::max<size_t>(1, (g.b_transposed ? n : k) * ldb));
  for (float& x : b) x = rng.Uniform(-1.0f, 1.0f);
  auto b_at = [&](size_t p, size_t j) { return g.b_transposed ? b[off + j * ldb + p] : b[off + p * ldb + j]; };
  std::vector<float> bias(off + std::max<size_t>(1, n));
  for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
  const size_t ldc = n + 2;
  std::vector<float> c(off + (m + 1) * ldc, kSentinel);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) c[off + i * ldc + j] = rng.Uniform(-1.0f, 1.0f);
  }
  const std::vector<float> c0 = c;

  std::vector<float> pack;
  GemmUnpacked(m, n, k, a.data() + off, g.a_transposed ? 1 : lda, g.a_transposed ? ldt : 1, b.data() + off, ldb,
               g.b_transposed, c.data() + off, ldc, g.bias ? bias.data() + off : nullptr, g.accumulate, pack);
  ++result.cases;

  for (size_t i = 0; i <= m; ++i) {
    for (size_t j = 0; j < ldc; ++j) {
      const size_t at = off + i * ldc + j;
      if (i == m || j >= n) {
        if (std::memcmp(&c[at], &c0[at], sizeof(float)) != 0) {
          return result.Fail("m ", m, " n ", n, " k ", k, ": C outside (m, n) changed at (", i, ", ", j, ")");
        }
        continue;
      }
      // The start value: C itself when accumulating (bias not read), else the bias or 0.
      const double start = g.accumulate ? c0[at] : g.bias ? bias[off + j] : 0.0;
      double ref = start, bound = std::fabs(start);
      for (size_t p = 0; p < k; ++p) {
        const double prod = static_cast<double>(a_at(i, p)) * b_at(p, j);
        ref += prod;
        bound += std::fabs(prod);
      }
      const double tol = 1.2e-7 * static_cast<double>(k + 2) * bound + 1e-30;
      if (!(std::fabs(c[at] - ref) <= tol)) {
        return result.Fail("m ", m, " n ", n, " k ", k, " a_transposed ", g.a_transposed, " b_transposed ",
                           g.b_transposed, " bias ", g.bias, " accumulate ", g.accumulate, " misalign ", g.misalign,
                           ": C(", i, ", ", j, ") = ", c[at], ", reference ", ref, " (tolerance ", tol, ")");
      }
    }
  }
}

SweepResult GemmSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const size_t width = 2 * lanes;  // a column tile
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(17);
  SweepResult result;
  // Every tile remainder: m across 4-row tiles, n across two column tiles, short k; flags and misalignment cycle.
  size_t v = 0;
  for (size_t m = 0; m <= 9; ++m) {
    for (size_t n = 0; n <= 2 * width + 1; ++n) {
      for (const size_t k : {size_t{0}, size_t{1}, size_t{3}, lanes + 1}) {
        ++v;
        CheckGemm(GemmCase({m, n, k}, v % 16, misalign[v % misalign.size()]), rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  // Cache blocks: several row and k blocks, the packed-A path (>= kPackAMinTiles column tiles); every flag.
  const size_t wide = kPackAMinTiles * width;
  const GemmShape big[] = {{kGemmMc + 5, wide + 3, kGemmKc + 7},
                           {2 * kGemmMc + 1, wide, 5},
                           {4, wide + width / 2 + 1, 2 * kGemmKc + 1},
                           {kGemmMc, 1, kGemmKc}};
  for (const GemmShape& shape : big) {
    for (size_t flags = 0; flags < 16; ++flags) {
      CheckGemm(GemmCase(shape, flags, misalign[flags % misalign.size()]), rng, result);
      if (result.Failed()) return result;
    }
  }
  return result;
}

// GemvPacked: C (m, n) = A (m, k) · B (k, n) [+ bias] for m <= kGemvMaxRows, B packed from a row-major (k, n)
// or a transposed (n, k) matrix, A rows with padding, C with two padding columns and a padding row of sentinels.
SweepResult GemvSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(29);
  SweepResult result;
  size_t v = 0;
  for (size_t m = 0; m <= kGemvMaxRows; ++m) {
    for (const size_t n : {size_t{1}, size_t{3}, kPanel - 1, kPanel, kPanel + 1, 2 * kPanel + 7}) {
      for (const size_t k : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{8}, size_t{9}, size_t{67}}) {
        ++v;
        const bool bias_on = v % 2 == 0, transposed = v % 3 == 0;
        const size_t off = misalign[v % misalign.size()], lda = k + 3, ldc = n + 2;
        std::vector<float> a(off + std::max<size_t>(1, m * lda)), b(std::max<size_t>(1, k * n)), bias(off + n);
        for (float& x : a) x = rng.Uniform(-1.0f, 1.0f);
        for (float& x : b) x = rng.Uniform(-1.0f, 1.0f);
        for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
        auto b_at = [&](size_t p, size_t j) { return transposed ? b[j * k + p] : b[p * n + j]; };
        std::vector<float> pack;
        const PackedB packed = PackB(b.data(), transposed ? k : n, k, n, transposed, pack);
        std::vector<float> c(off + (m + 1) * ldc, kSentinel);
        GemvPacked(m, n, k, a.data() + off, lda, packed, c.data() + off, ldc, bias_on ? bias.data() + off : nullptr);
        ++result.cases;
        for (size_t i = 0; i <= m; ++i) {
          for (size_t j = 0; j < ldc; ++j) {
            const float got = c[off + i * ldc + j];
            if (i == m || j >= n) {
              if (std::memcmp(&got, &kSentinel, sizeof(float)) != 0) {
                result.Fail("GemvPacked m ", m, " n ", n, " k ", k, ": C outside (m, n) changed at (", i, ", ", j, ")");
                return result;
              }
              continue;
            }
            double ref = bias_on ? bias[off + j] : 0.0, bound = std::fabs(ref);
            for (size_t p = 0; p < k; ++p) {
              const double prod = static_cast<double>(a[off + i * lda + p]) * b_at(p, j);
              ref += prod;
              bound += std::fabs(prod);
            }
            const double tol = 1.2e-7 * static_cast<double>(k + 2) * bound + 1e-30;
            if (!(std::fabs(got - ref) <= tol)) {
              result.Fail("GemvPacked m ", m, " n ", n, " k ", k, " bias ", bias_on, " transposed ", transposed, ": C(",
                          i, ", ", j, ") = ", got, ", reference ", ref, " (tolerance ", tol, ")");
              return result;
            }
          }
        }
      }
    }
  }
  return result;
}

// PackA of rows x kc: groups of 4 rows interleaved (out[g·4·kc + p·4 + r]), then the remaining rows contiguous;
// nothing written past rows · kc.
SweepResult PackASweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(23);
  SweepResult result;
  for (size_t rows = 0; rows <= 9; ++rows) {
    for (size_t kc = 0; kc <= 2 * lanes + 5; ++kc) {
      for (const bool transposed : {false, true}) {
        const size_t off = misalign[(rows + kc) % misalign.size()];
        const size_t lda = transposed ? 1 : kc + 2, col_stride = transposed ? rows + 3 : 1;
        std::vector<float> a(off + std::max(rows * lda, kc * col_stride) + rows + 3);
        for (float& x : a) x = rng.Uniform(-1.0f, 1.0f);
        std::vector<float> out(off + rows * kc + 4, kSentinel);
        PackA(rows, kc, a.data() + off, lda, col_stride, out.data() + off);
        ++result.cases;
        const size_t grouped = rows / 4 * 4;
        for (size_t i = 0; i < rows; ++i) {
          for (size_t p = 0; p < kc; ++p) {
            const size_t at = i < grouped ? (i / 4) * 4 * kc + p * 4 + i % 4 : i * kc + p;
            if (out[off + at] != a[off + i * lda + p * col_stride]) {
              result.Fail("PackA rows ", rows, " kc ", kc, " transposed ", transposed, ": element (", i, ", ", p,
                          ") not at ", at);
              return result;
            }
          }
        }
        for (size_t t = off + rows * kc; t < out.size(); ++t) {
          if (out[t] != kSentinel) {
            result.Fail("PackA rows ", rows, " kc ", kc, ": wrote past rows * kc");
            return result;
          }
        }
      }
    }
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

HWY_EXPORT(GemmSweep);
HWY_EXPORT(PackASweep);
HWY_EXPORT(GemvSweep);

TEST_CASE("gemm: every tile remainder, block and layout vs float64, on every target", "[gemm][kernels]") {
  attnlab_test::CheckSweepOnEveryTarget([] { return HWY_DYNAMIC_DISPATCH(GemmSweep)(); });
}

TEST_CASE("gemm: GemvPacked (few rows) vs float64 for every panel remainder, on every target", "[gemm][kernels]") {
  attnlab_test::CheckSweepOnEveryTarget([] { return HWY_DYNAMIC_DISPATCH(GemvSweep)(); });
}

TEST_CASE("gemm: PackA writes its documented layout, on every target", "[gemm][kernels]") {
  attnlab_test::CheckSweepOnEveryTarget([] { return HWY_DYNAMIC_DISPATCH(PackASweep)(); });
}

}  // namespace
}  // namespace attnlab
#endif  // HWY_ONCE
