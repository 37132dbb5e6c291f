// Register-tiled, cache-blocked single-precision matrix product for every Highway target:
// C (m, n) = A (m, k) · B (k, n) [+ bias (n)] [+ C]: C row-major, A with a row and a column stride (so that Aᵀ
// is read in place: dW = dYᵀ X needs no transpose), B in the panel layout of packing.h.
// Per-target code: include after hwy/highway.h, inside the foreach_target translation unit.

#if defined(ATTNLAB_SRC_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_GEMM_INL_H_
#undef ATTNLAB_SRC_GEMM_INL_H_
#else
#define ATTNLAB_SRC_GEMM_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cpp/src/packing.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Cache blocking: a (kGemmKc, kGemmNc) block of packed B stays in L2 while all rows of A stream past it.
constexpr size_t kGemmKc = 256;
constexpr size_t kGemmNc = 256;  // a multiple of kPanel

// One register tile: kRows rows of C by kCols vectors of D. Broadcasts one A element per row and step, loads
// kCols vectors of one packed B row (bp, rows kPanel floats apart), multiply-adds into kRows * kCols
// accumulators (4 x 2 fits the 15 SIMD registers V8 gives wasm). `init` selects what the tile starts from:
// 0 zero, 1 bias, 2 the current C.
template <size_t kRows, size_t kCols, class D>
HWY_INLINE void GemmTile(D d, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                         const float* HWY_RESTRICT bp, float* HWY_RESTRICT c, size_t ldc,
                         const float* HWY_RESTRICT bias, int init) {
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
  for (size_t p = 0; p < k; ++p, bp += kPanel) {
    V bv[kCols];
    for (size_t j = 0; j < kCols; ++j) bv[j] = hn::LoadU(d, bp + j * N);
    for (size_t r = 0; r < kRows; ++r) {
      const V av = hn::Set(d, a[r * lda + p * a_col_stride]);
      for (size_t j = 0; j < kCols; ++j) acc[r][j] = hn::MulAdd(av, bv[j], acc[r][j]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kCols; ++j) hn::StoreU(acc[r][j], d, c + r * ldc + j * N);
  }
}

// Columns [0, n) of kRows rows, in tiles of two vectors. B's zero padding lets the last tile compute past n; it
// runs on a local copy of its C block so that nothing past column n is read or written.
template <size_t kRows>
HWY_INLINE void GemmRowBlock(size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                             const PackedB& b, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias,
                             int init) {
  const hn::ScalableTag<float> d;
  constexpr size_t kMaxWidth = 2 * hn::MaxLanes(hn::ScalableTag<float>());
  const size_t width = 2 * hn::Lanes(d);
  for (size_t j = 0; j < n; j += width) {
    const float* bp = b.data + (j / kPanel) * b.panel_stride + j % kPanel;
    if (j + width <= n) {
      GemmTile<kRows, 2>(d, k, a, lda, a_col_stride, bp, c + j, ldc, bias ? bias + j : nullptr, init);
      continue;
    }
    const size_t valid = n - j;
    HWY_ALIGN float tile[kRows * kMaxWidth];
    for (size_t r = 0; r < kRows; ++r) {
      for (size_t jj = 0; jj < width; ++jj) {
        tile[r * width + jj] = jj >= valid ? 0.0f
                               : init == 2 ? c[r * ldc + j + jj]
                               : init == 1 ? bias[j + jj]
                                           : 0.0f;
      }
    }
    GemmTile<kRows, 2>(d, k, a, lda, a_col_stride, bp, tile, width, nullptr, 2);
    for (size_t r = 0; r < kRows; ++r) std::copy(tile + r * width, tile + r * width + valid, c + r * ldc + j);
  }
}

// C (m, n) = A (m, k) · B (k, n) + (bias (n) if non-null) + (C if accumulate), B packed (packing.h). k may be 0.
// A's element (i, p) is a[i * lda + p * a_col_stride]: a_col_stride 1 for A, or lda 1 and a_col_stride = the
// row stride of a (k, m) matrix for its transpose.
HWY_INLINE void Gemm(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                     const PackedB& b, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias,
                     bool accumulate) {
  if (m == 0 || n == 0) return;
  const int first_init = accumulate ? 2 : (bias ? 1 : 0);
  if (k == 0) {  // no products: C keeps its start value (B is empty: its data may be null)
    if (accumulate) return;
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] = bias ? bias[j] : 0.0f;
    }
    return;
  }
  for (size_t p0 = 0; p0 < k; p0 += kGemmKc) {
    const size_t kc = std::min(kGemmKc, k - p0);
    const int init = p0 == 0 ? first_init : 2;
    for (size_t j0 = 0; j0 < n; j0 += kGemmNc) {
      const size_t nc = std::min(kGemmNc, n - j0);
      const float* a_blk = a + p0 * a_col_stride;
      const PackedB b_blk = b.At(p0, j0);
      float* c_blk = c + j0;
      const float* bias_blk = bias ? bias + j0 : nullptr;
      size_t i = 0;
      for (; i + 4 <= m; i += 4) {
        GemmRowBlock<4>(nc, kc, a_blk + i * lda, lda, a_col_stride, b_blk, c_blk + i * ldc, ldc, bias_blk, init);
      }
      for (; i < m; ++i) {
        GemmRowBlock<1>(nc, kc, a_blk + i * lda, lda, a_col_stride, b_blk, c_blk + i * ldc, ldc, bias_blk, init);
      }
    }
  }
}

// Gemm with a row-major B (k, n) of row stride ldb, or Bᵀ given as (n, k) when b_transposed; packs B into
// pack_buffer first.
HWY_INLINE void GemmUnpacked(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda,
                             size_t a_col_stride, const float* HWY_RESTRICT b, size_t ldb, bool b_transposed,
                             float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias, bool accumulate,
                             std::vector<float>& pack_buffer) {
  const PackedB packed = PackB(b, ldb, k, n, b_transposed, pack_buffer);
  Gemm(m, n, k, a, lda, a_col_stride, packed, c, ldc, bias, accumulate);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_GEMM_INL_H_ toggle
