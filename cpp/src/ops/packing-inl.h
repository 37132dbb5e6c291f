// Packing of the left GEMM operand, per target: PackA lays a block of A out in the order GemmTile reads it (the
// right operand's panel layout and PackB, plain C++ used at load time too, are in packing.h).
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_PACKING_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_PACKING_INL_H_
#undef ATTNLAB_SRC_OPS_PACKING_INL_H_
#else
#define ATTNLAB_SRC_OPS_PACKING_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "cpp/src/ops/packing.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Packs rows [0, rows) x steps [0, kc) of A (element (i, p) at a[i * lda + p * a_col_stride]) for GemmTile: groups
// of 4 rows interleaved (out[g * 4 * kc + p * 4 + r]), then each remaining row contiguous.
HWY_INLINE void PackA(size_t rows, size_t kc, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                      float* HWY_RESTRICT out) {
  size_t i = 0;
  for (; i + 4 <= rows; i += 4, out += 4 * kc) {
    size_t p0 = 0;
#if HWY_TARGET != HWY_SCALAR
    if (a_col_stride == 1) {  // 4 x 4 transposes: rows r0..r3 (p..p+3) → out (p..p+3, 4)
      const hn::FixedTag<float, 4> d;
      const hn::Repartition<uint64_t, decltype(d)> d64;
      const float* row = a + i * lda;
      for (; p0 + 4 <= kc; p0 += 4) {
        const auto r0 = hn::LoadU(d, row + p0), r1 = hn::LoadU(d, row + lda + p0);
        const auto r2 = hn::LoadU(d, row + 2 * lda + p0), r3 = hn::LoadU(d, row + 3 * lda + p0);
        const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));  // r0[0] r1[0] r0[1] r1[1]
        const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));  // r2[0] r3[0] r2[1] r3[1]
        const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));  // r0[2] r1[2] r0[3] r1[3]
        const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
        float* dst = out + p0 * 4;
        hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), d, dst);
        hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), d, dst + 4);
        hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), d, dst + 8);
        hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), d, dst + 12);
      }
    }
#endif
    for (size_t r = 0; r < 4; ++r) {
      const float* src = a + (i + r) * lda;
      for (size_t p = p0; p < kc; ++p) out[p * 4 + r] = src[p * a_col_stride];
    }
  }
  for (; i < rows; ++i, out += kc) {
    const float* src = a + i * lda;
    for (size_t p = 0; p < kc; ++p) out[p] = src[p * a_col_stride];
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_PACKING_INL_H_ toggle
