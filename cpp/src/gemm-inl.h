// Register-tiled, cache-blocked single-precision matrix product for every Highway target:
// C (m, n) = A (m, k) · B (k, n) [+ bias (n)] [+ C], B and C row-major with explicit row strides, A with a
// row and a column stride (so that Aᵀ is read in place: dW = dYᵀ X needs no transpose).
// Per-target code: include after hwy/highway.h, inside the foreach_target translation unit.

#if defined(ATTNLAB_SRC_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_GEMM_INL_H_
#undef ATTNLAB_SRC_GEMM_INL_H_
#else
#define ATTNLAB_SRC_GEMM_INL_H_
#endif

#include <algorithm>
#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Cache blocking: a (kGemmKc, kGemmNc) panel of B stays in L2 while all rows of A stream past it.
constexpr size_t kGemmKc = 256;
constexpr size_t kGemmNc = 256;

// One register tile: kRows rows of C by kCols vectors of D. Broadcasts one A element per row and step, loads
// kCols vectors of one B row, multiply-adds into kRows * kCols accumulators (4 x 2 fits the 15 SIMD registers
// V8 gives wasm). `init` selects what the tile starts from: 0 zero, 1 bias, 2 the current C.
template <size_t kRows, size_t kCols, class D>
HWY_INLINE void GemmTile(D d, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                         const float* HWY_RESTRICT b,
                         size_t ldb, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias, int init) {
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  V acc[kRows][kCols];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kCols; ++j) {
      acc[r][j] = init == 2   ? hn::LoadU(d, c + r * ldc + j * N)
                  : init == 1 ? hn::LoadU(d, bias + j * N)
                              : hn::Zero(d);
    }
  }
  for (size_t p = 0; p < k; ++p) {
    V bv[kCols];
    for (size_t j = 0; j < kCols; ++j) bv[j] = hn::LoadU(d, b + p * ldb + j * N);
    for (size_t r = 0; r < kRows; ++r) {
      const V av = hn::Set(d, a[r * lda + p * a_col_stride]);
      for (size_t j = 0; j < kCols; ++j) acc[r][j] = hn::MulAdd(av, bv[j], acc[r][j]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kCols; ++j) hn::StoreU(acc[r][j], d, c + r * ldc + j * N);
  }
}

// Columns [0, n) of kRows rows: two-vector tiles, then one vector, then single lanes.
template <size_t kRows>
HWY_INLINE void GemmRowBlock(size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                             const float* HWY_RESTRICT b, size_t ldb, float* HWY_RESTRICT c, size_t ldc,
                             const float* HWY_RESTRICT bias, int init) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    GemmTile<kRows, 2>(d, k, a, lda, a_col_stride, b + j, ldb, c + j, ldc, bias ? bias + j : nullptr, init);
  }
  for (; j + N <= n; j += N) {
    GemmTile<kRows, 1>(d, k, a, lda, a_col_stride, b + j, ldb, c + j, ldc, bias ? bias + j : nullptr, init);
  }
  const hn::CappedTag<float, 1> d1;
  for (; j < n; ++j) {
    GemmTile<kRows, 1>(d1, k, a, lda, a_col_stride, b + j, ldb, c + j, ldc, bias ? bias + j : nullptr, init);
  }
}

// C (m, n) = A (m, k) · B (k, n) + (bias (n) if non-null) + (C if accumulate). k may be 0.
// A's element (i, p) is a[i * lda + p * a_col_stride]: a_col_stride 1 for A, or lda 1 and a_col_stride = the
// row stride of a (k, m) matrix for its transpose.
HWY_INLINE void Gemm(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                     const float* HWY_RESTRICT b, size_t ldb, float* HWY_RESTRICT c, size_t ldc,
                     const float* HWY_RESTRICT bias, bool accumulate) {
  if (m == 0 || n == 0) return;
  const int first_init = accumulate ? 2 : (bias ? 1 : 0);
  if (k == 0) {  // no products: C keeps its start value
    for (size_t i = 0; i < m; ++i) {
      GemmRowBlock<1>(n, 0, a, lda, a_col_stride, b, ldb, c + i * ldc, ldc, bias, first_init);
    }
    return;
  }
  for (size_t p0 = 0; p0 < k; p0 += kGemmKc) {
    const size_t kc = std::min(kGemmKc, k - p0);
    const int init = p0 == 0 ? first_init : 2;
    for (size_t j0 = 0; j0 < n; j0 += kGemmNc) {
      const size_t nc = std::min(kGemmNc, n - j0);
      const float* a_blk = a + p0 * a_col_stride;
      const float* b_blk = b + p0 * ldb + j0;
      float* c_blk = c + j0;
      const float* bias_blk = bias ? bias + j0 : nullptr;
      size_t i = 0;
      for (; i + 4 <= m; i += 4) {
        GemmRowBlock<4>(nc, kc, a_blk + i * lda, lda, a_col_stride, b_blk, ldb, c_blk + i * ldc, ldc, bias_blk, init);
      }
      for (; i < m; ++i) {
        GemmRowBlock<1>(nc, kc, a_blk + i * lda, lda, a_col_stride, b_blk, ldb, c_blk + i * ldc, ldc, bias_blk, init);
      }
    }
  }
}

// dst (cols, rows) = src (rows, cols)ᵀ; src rows have stride src_stride, dst rows are contiguous.
HWY_INLINE void Transpose(size_t rows, size_t cols, const float* HWY_RESTRICT src, size_t src_stride,
                          float* HWY_RESTRICT dst) {
  constexpr size_t kBlock = 16;
  for (size_t i0 = 0; i0 < rows; i0 += kBlock) {
    const size_t i1 = std::min(rows, i0 + kBlock);
    for (size_t j0 = 0; j0 < cols; j0 += kBlock) {
      const size_t j1 = std::min(cols, j0 + kBlock);
      for (size_t i = i0; i < i1; ++i) {
        for (size_t j = j0; j < j1; ++j) dst[j * rows + i] = src[i * src_stride + j];
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_GEMM_INL_H_ toggle
