// Linear layers for every Highway target, on weights packed by packing.h (float32 or 16-bit):
//   GemmRows:  C (m, n) = A (m, k) · B (+ bias (n)), or C += A · B, split over row blocks of C;
//   Linear:    y (rows, out) = x (rows, in) · W + bias, W (in, out) = PyTorch's weight (out, in) transposed
//              (LinearArgs, linear.h): row blocks of the GEMM for many rows, matrix-vector products over column
//              slices for a few (decoding);
//   AddRows:   x (n) += y (n) (a residual).
// Each output element's arithmetic does not depend on the split or the thread count.
// Per-target code: include after hwy/highway.h, inside the foreach_target translation unit.

#if defined(ATTNLAB_SRC_OPS_LINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_LINEAR_INL_H_
#undef ATTNLAB_SRC_OPS_LINEAR_INL_H_
#else
#define ATTNLAB_SRC_OPS_LINEAR_INL_H_
#endif

#include <algorithm>
#include <cstddef>

#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/ops/linear.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Output columns per piece when a projection has too few rows to split by rows (decoding).
constexpr size_t kGemvColumns = 8 * kPanel;

// The most rows of one GemmRows piece: Gemm reads B once per call, so the fewer pieces the less B traffic; at this
// many rows its packed A block (kGemmKc floats a row: 256 KiB) still streams from L2.
constexpr size_t kGemmPieceRows = 256;

// C (m, n) = A (m, k) · B (+ bias), or += when accumulate, B packed (PackedB, or PackedB16 converted as it is read);
// A's element (i, p) at a[i·lda + p·a_col_stride]. Split over pieces of whole kRowBlock row blocks, at least one per
// thread and at most kGemmPieceRows rows each: each element's arithmetic does not depend on the split.
template <class PackedMatrixB>
HWY_INLINE void GemmRows(size_t m, size_t n, size_t k, const float* a, size_t lda, size_t a_col_stride,
                         const PackedMatrixB& b, float* c, size_t ldc, const float* bias, bool accumulate) {
  const size_t per_thread = (RowBlocks(m) + ThreadCount() - 1) / ThreadCount();
  const size_t piece = kRowBlock * std::max<size_t>(1, std::min(kGemmPieceRows / kRowBlock, per_thread));
  ParallelFor((m + piece - 1) / piece, 2.0 * piece * n * k, [&](size_t i) {
    const size_t r0 = i * piece, rows = std::min(piece, m - r0);
    Gemm(rows, n, k, a + r0 * lda, lda, a_col_stride, b, c + r0 * ldc, ldc, bias, accumulate);
  });
}

// y (rows, w.out) with row stride ldy = x (rows, w.in) with row stride ldx · W + bias, W float32 or 16-bit. Many
// rows: row blocks of Gemm; a few (decoding): matrix-vector products over column slices, which stream the weights
// once.
template <class PackedMatrixB>
HWY_INLINE void LinearOf(size_t rows, const float* x, size_t ldx, const LinearArgs& w, const PackedMatrixB& b, float* y,
                         size_t ldy) {
  if (rows > kGemvMaxRows) return GemmRows(rows, w.out, w.in, x, ldx, 1, b, y, ldy, w.bias, false);
  const size_t pieces = (w.out + kGemvColumns - 1) / kGemvColumns;
  ParallelFor(pieces, 2.0 * rows * w.in * kGemvColumns, [&](size_t i) {
    const size_t j0 = i * kGemvColumns, cols = std::min(kGemvColumns, w.out - j0);
    GemvPacked(rows, cols, w.in, x, ldx, b.At(0, j0), y + j0, ldy, w.bias ? w.bias + j0 : nullptr);
  });
}

HWY_INLINE void Linear(size_t rows, const float* x, size_t ldx, const LinearArgs& w, float* y, size_t ldy) {
  if (w.w16.data) return LinearOf(rows, x, ldx, w, w.w16, y, ldy);
  LinearOf(rows, x, ldx, w, w.w, y, ldy);
}

// x (n) += y (n).
HWY_INLINE void AddRows(float* HWY_RESTRICT x, const float* HWY_RESTRICT y, size_t n) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Add(hn::LoadU(dd, x + j), hn::LoadU(dd, y + j)), dd, x + j);
  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_LINEAR_INL_H_ toggle
