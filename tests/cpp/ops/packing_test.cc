// Tests of cpp/src/ops/packing.h and packing-inl.h: PackA (per target, on every compiled target) against its
// documented layout; PackB (plain C++) round trip: every element of B, or of Bᵀ, read back at PackedIndex and through
// PackedB::At, the last panel's padding 0, the buffer grow-only; F16ToFloat and BF16ToFloat exact for all 65536 bit
// patterns against the value the bits encode (float64 ldexp); PackB16 and PackB16Into against PackB's layout.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/packing_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cpp/src/ops/packing-inl.h"
#include "cpp/src/ops/packing.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

// A float that no packing writes: memory that must stay untouched.
constexpr float kSentinel = -1234.5f;

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

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(PackASweep, "packing: PackA writes its documented layout, on every target",
                             "[packing][kernels]");

namespace attnlab {
namespace {

constexpr float kUnwritten = -1234.5f;  // memory PackB must not touch

TEST_CASE("packing: PackB round trip, B and Bᵀ, through PackedIndex and PackedB::At; padding 0; grow-only",
          "[packing]") {
  attnlab_test::Rng rng(61);
  for (const size_t k : {size_t{0}, size_t{1}, size_t{6}}) {
    for (const size_t n : {size_t{1}, kPanel - 1, kPanel, kPanel + 1, 3 * kPanel + 5}) {
      for (const bool transposed : {false, true}) {
        const size_t ldb = (transposed ? k : n) + 3;
        const std::vector<float> b =
            attnlab_test::RandomVector(rng, int64_t(std::max<size_t>(1, (transposed ? n : k) * ldb)));
        auto b_at = [&](size_t p, size_t j) { return transposed ? b[j * ldb + p] : b[p * ldb + j]; };
        std::vector<float> out(PackedSize(k, n) + 5, kUnwritten);  // larger than needed: kept, the rest untouched
        const PackedB packed = PackB(b.data(), ldb, k, n, transposed, out);
        INFO("k " << k << " n " << n << " transposed " << transposed);
        REQUIRE(packed.data == out.data());
        REQUIRE(packed.panel_stride == kPanel * k);
        REQUIRE(out.size() == PackedSize(k, n) + 5);
        REQUIRE(PackedSize(k, n) == (n + kPanel - 1) / kPanel * kPanel * k);
        for (size_t p = 0; p < k; ++p) {
          for (size_t j = 0; j < PackedPanels(n) * kPanel; ++j) {
            REQUIRE(out[PackedIndex(packed.panel_stride, p, j)] == (j < n ? b_at(p, j) : 0.0f));
          }
        }
        for (size_t t = PackedSize(k, n); t < out.size(); ++t) REQUIRE(out[t] == kUnwritten);
        if (k > 1 && n > kPanel) {  // At(p0, j0): the element (p0 + p, j0 + j) at its (p, j)
          const PackedB at = packed.At(1, kPanel);
          REQUIRE(at.data[PackedIndex(at.panel_stride, 0, 0)] == b_at(1, kPanel));
          REQUIRE(at.data[PackedIndex(at.panel_stride, k - 2, n - kPanel - 1)] == b_at(k - 1, n - 1));
        }
        std::vector<float> small;
        PackB(b.data(), ldb, k, n, transposed, small);
        REQUIRE(small.size() == PackedSize(k, n));
        REQUIRE(std::equal(small.begin(), small.end(), out.begin()));
      }
    }
  }
}

bool SameFloatBits(float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; }

TEST_CASE("packing: F16ToFloat and BF16ToFloat are exact for every bit pattern", "[packing][gemm16]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    const float f = F16ToFloat(static_cast<uint16_t>(h));
    INFO("F16 bits " << h);
    REQUIRE(std::signbit(f) == (sign != 0));
    if (exp == 0x1F && man != 0) {  // NaN: quiet, payload kept
      REQUIRE(std::isnan(f));
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      REQUIRE(bits == ((sign << 31) | 0x7FC00000u | (man << 13)));
      continue;
    }
    const double magnitude = exp == 0x1F ? std::numeric_limits<double>::infinity()
                             : exp == 0  ? std::ldexp(static_cast<double>(man), -24)
                                         : std::ldexp(1.0 + man / 1024.0, static_cast<int>(exp) - 15);
    REQUIRE(static_cast<double>(f) == (sign ? -magnitude : magnitude));
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = BF16ToFloat(static_cast<uint16_t>(h));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    REQUIRE(bits == h << 16);
  }
}

TEST_CASE("packing: PackB16 and PackB16Into write the panel layout of PackB", "[packing][gemm16]") {
  attnlab_test::Rng rng(41);
  for (const size_t k : {size_t{0}, size_t{1}, size_t{5}}) {
    for (const size_t n : {size_t{1}, kPanel - 1, kPanel, 2 * kPanel + 3}) {
      for (const bool transposed : {false, true}) {
        const size_t ldb = (transposed ? k : n) + 2;
        std::vector<uint16_t> b16(std::max<size_t>(1, (transposed ? n : k) * ldb));
        for (uint16_t& x : b16) x = static_cast<uint16_t>(rng.Int(1, 65535));
        std::vector<float> b32(b16.size());
        for (size_t t = 0; t < b16.size(); ++t) b32[t] = BF16ToFloat(b16[t]);
        std::vector<uint16_t> pack16(3, 7);  // PackB16 resizes and zero-fills
        std::vector<float> pack32;
        const PackedB16 p16 = PackB16(b16.data(), ldb, k, n, transposed, Dtype16::kBF16, pack16);
        const PackedB p32 = PackB(b32.data(), ldb, k, n, transposed, pack32);
        REQUIRE(pack16.size() == PackedSize(k, n));
        REQUIRE(p16.panel_stride == p32.panel_stride);
        REQUIRE(p16.dtype == Dtype16::kBF16);
        for (size_t t = 0; t < pack16.size(); ++t) REQUIRE(SameFloatBits(BF16ToFloat(pack16[t]), pack32[t]));
        for (size_t p = 0; p < k; ++p) {
          for (size_t j = 0; j < n; ++j) {
            REQUIRE(p16.Bits(p, j) == (transposed ? b16[j * ldb + p] : b16[p * ldb + j]));
            REQUIRE(SameFloatBits(p16.Get(p, j), b32[transposed ? j * ldb + p : p * ldb + j]));
          }
        }
        // Into columns [j0, j0 + n) of a wider matrix of k + 2 rows: nothing else written.
        for (const size_t j0 : {size_t{0}, size_t{3}, kPanel - 1, kPanel, kPanel + 9}) {
          const size_t rows = k + 2, total = j0 + n + 4, stride = kPanel * rows;
          std::vector<uint16_t> dst(PackedSize(rows, total), 0xABCD);
          PackB16Into(b16.data(), ldb, k, n, transposed, dst.data(), stride, j0);
          const PackedB16 view{dst.data(), stride, Dtype16::kF16};
          for (size_t p = 0; p < rows; ++p) {
            for (size_t j = 0; j < PackedPanels(total) * kPanel; ++j) {
              const bool inside = p < k && j >= j0 && j < j0 + n;
              const uint16_t want = !inside      ? uint16_t{0xABCD}
                                    : transposed ? b16[(j - j0) * ldb + p]
                                                 : b16[p * ldb + j - j0];
              INFO("k " << k << " n " << n << " j0 " << j0 << " (" << p << ", " << j << ")");
              REQUIRE(view.Bits(p, j) == want);
            }
          }
          REQUIRE(view.At(1, kPanel).data == dst.data() + stride + kPanel);
        }
      }
    }
  }
}

}  // namespace
}  // namespace attnlab
#endif  // HWY_ONCE
