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

#if HWY_TARGET != HWY_SCALAR
// 4 x 4 transposes of rows r0..r3 (row stride lda, steps [0, kc / 4 * 4)): step p's 4 elements go to
// out[p * group, + 4).
HWY_INLINE void Transpose4Rows(size_t kc, const float* HWY_RESTRICT row, size_t lda, size_t group,
                               float* HWY_RESTRICT out) {
  const hn::FixedTag<float, 4> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  for (size_t p0 = 0; p0 + 4 <= kc; p0 += 4) {
    const auto r0 = hn::LoadU(d, row + p0), r1 = hn::LoadU(d, row + lda + p0);
    const auto r2 = hn::LoadU(d, row + 2 * lda + p0), r3 = hn::LoadU(d, row + 3 * lda + p0);
    const auto t0 = hn::BitCast(d64, hn::InterleaveLower(d, r0, r1));  // r0[0] r1[0] r0[1] r1[1]
    const auto t1 = hn::BitCast(d64, hn::InterleaveLower(d, r2, r3));  // r2[0] r3[0] r2[1] r3[1]
    const auto t2 = hn::BitCast(d64, hn::InterleaveUpper(d, r0, r1));  // r0[2] r1[2] r0[3] r1[3]
    const auto t3 = hn::BitCast(d64, hn::InterleaveUpper(d, r2, r3));
    float* dst = out + p0 * group;
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t0, t1)), d, dst);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t0, t1)), d, dst + group);
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, t2, t3)), d, dst + 2 * group);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, t2, t3)), d, dst + 3 * group);
  }
}
#endif

// Packs rows [0, rows) x steps [0, kc) of A (element (i, p) at a[i * lda + p * a_col_stride]) for GemmTile: groups
// of kGroup rows (a multiple of 4) interleaved (out[g * kGroup * kc + p * kGroup + r]), then each remaining row
// contiguous. PackA: groups of 4 (the attention's keys, the 4-row tiles).
template <size_t kGroup>
HWY_INLINE void PackARows(size_t rows, size_t kc, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                          float* HWY_RESTRICT out) {
  static_assert(kGroup % 4 == 0, "groups of whole 4 x 4 transposes");
  size_t i = 0;
  for (; i + kGroup <= rows; i += kGroup, out += kGroup * kc) {
    size_t p0 = 0;
#if HWY_TARGET != HWY_SCALAR
    if (a_col_stride == 1) {
      for (size_t s = 0; s < kGroup; s += 4) Transpose4Rows(kc, a + (i + s) * lda, lda, kGroup, out + s);
      p0 = kc / 4 * 4;
    }
#endif
    for (size_t r = 0; r < kGroup; ++r) {
      const float* src = a + (i + r) * lda;
      for (size_t p = p0; p < kc; ++p) out[p * kGroup + r] = src[p * a_col_stride];
    }
  }
  for (; i < rows; ++i, out += kc) {
    const float* src = a + i * lda;
    for (size_t p = 0; p < kc; ++p) out[p] = src[p * a_col_stride];
  }
}

HWY_INLINE void PackA(size_t rows, size_t kc, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                      float* HWY_RESTRICT out) {
  PackARows<4>(rows, kc, a, lda, a_col_stride, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_PACKING_INL_H_ toggle
