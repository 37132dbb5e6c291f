// Register-tiled, cache-blocked single-precision matrix product for every Highway target:
// C (m, n) = A (m, k) · B (k, n) [+ bias (n)], or C += A · B: C row-major, A with a row and a column stride (so that Aᵀ
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

#include "cpp/src/packing-inl.h"
#include "cpp/src/packing.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Cache blocking: a (kGemmMc, kGemmKc) block of A (packed when that pays) stays in L1/L2 and every column tile
// of B passes over it; a tile's (kGemmKc, 2 vectors) slice of B stays in L1 for all kGemmMc / 4 row tiles.
constexpr size_t kGemmKc = 256;
constexpr size_t kGemmMc = 32;  // a multiple of 4
// A is packed when at least this many column tiles reuse it: packing costs one copy of the A block; reading A
// in place costs an address computation per row and step (in wasm no addressing mode takes a register index).
constexpr size_t kPackAMinTiles = 8;

// Where a tile reads A: element (r, p) of its kRows rows at a[r * row_stride + p * step]. When the layout is
// known at compile time (kAStep != 0: PackA's, or the attention's transposed probabilities) the tile reads
// a[r + p * kAStep] and ignores the strides.
struct ATile {
  const float* a;
  size_t row_stride, step;
};

// One register tile: kRows rows of C by kCols vectors of D. Per step p, broadcasts the kRows A elements, loads
// kCols vectors of one packed B row (bp, rows kPanel floats apart) and multiply-adds into kRows * kCols
// accumulators (4 x 2 fits the 15 SIMD registers V8 gives wasm). The accumulators start from 0, or from start
// (kRows rows start_stride apart: C itself, or a bias row with stride 0). In wasm not inlined: in a small
// function of its own the accumulators stay in registers (inlined into a large caller, V8 kept them on the
// stack and reloaded each one on every step); natively inlining is faster.
#if HWY_ARCH_WASM
#define ATTNLAB_GEMM_TILE_INLINE HWY_NOINLINE
#else
#define ATTNLAB_GEMM_TILE_INLINE HWY_INLINE
#endif
// A's pointer and strides come as scalars, not as an ATile: in wasm a struct argument goes through memory.
template <size_t kRows, size_t kCols, size_t kAStep, class D>
ATTNLAB_GEMM_TILE_INLINE void GemmTile(D d, size_t k, const float* HWY_RESTRICT a, size_t a_row_stride, size_t a_step,
                                       const float* HWY_RESTRICT bp, float* c, size_t ldc, const float* start,
                                       size_t start_stride) {  // start may be c
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  const size_t row_stride = kAStep ? 1 : a_row_stride, step = kAStep ? kAStep : a_step;
  V acc[kRows][kCols];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kCols; ++j) acc[r][j] = start ? hn::LoadU(d, start + r * start_stride + j * N) : hn::Zero(d);
  }
  for (size_t p = 0; p < k; ++p, a += step, bp += kPanel) {
    V bv[kCols];
    for (size_t j = 0; j < kCols; ++j) bv[j] = hn::LoadU(d, bp + j * N);
    for (size_t r = 0; r < kRows; ++r) {
      const V av = hn::Set(d, a[r * row_stride]);
      for (size_t j = 0; j < kCols; ++j) acc[r][j] = hn::MulAdd(av, bv[j], acc[r][j]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kCols; ++j) hn::StoreU(acc[r][j], d, c + r * ldc + j * N);
  }
}

// The tile of kRows rows (A: at) at columns [j, j + two vectors) of C (n columns). B's zero padding lets the
// last tile compute past n; it runs on a local copy of its C block so that nothing past column n is read or
// written. `init`: the tile starts from 0 (0), bias (1) or the current C (2).
template <size_t kRows, size_t kAStep>
HWY_INLINE void GemmTileAt(size_t j, size_t n, size_t k, ATile at, const PackedB& b, float* HWY_RESTRICT c, size_t ldc,
                           const float* HWY_RESTRICT bias, int init) {
  const hn::ScalableTag<float> d;
  constexpr size_t kMaxWidth = 2 * hn::MaxLanes(hn::ScalableTag<float>());
  const size_t width = 2 * hn::Lanes(d);
  const float* bp = b.data + (j / kPanel) * b.panel_stride + j % kPanel;
  if (j + width <= n) {
    const float* start = init == 2 ? c + j : init == 1 ? bias + j : nullptr;
    GemmTile<kRows, 2, kAStep>(d, k, at.a, at.row_stride, at.step, bp, c + j, ldc, start, init == 2 ? ldc : 0);
    return;
  }
  const size_t valid = n - j;
  HWY_ALIGN float tile[kRows * kMaxWidth];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t jj = 0; jj < width; ++jj) {
      tile[r * width + jj] = jj >= valid ? 0.0f : init == 2 ? c[r * ldc + j + jj] : init == 1 ? bias[j + jj] : 0.0f;
    }
  }
  GemmTile<kRows, 2, kAStep>(d, k, at.a, at.row_stride, at.step, bp, tile, width, tile, width);
  for (size_t r = 0; r < kRows; ++r) std::copy(tile + r * width, tile + r * width + valid, c + r * ldc + j);
}

// One (mc, kc) block of A against every column tile: A packed into a_packed, or read in place.
template <bool kPackedA>
HWY_INLINE void GemmBlock(size_t mc, size_t n, size_t kc, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                          float* HWY_RESTRICT a_packed, const PackedB& b, float* HWY_RESTRICT c, size_t ldc,
                          const float* HWY_RESTRICT bias, int init) {
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  if (kPackedA) PackA(mc, kc, a, lda, a_col_stride, a_packed);
  // Rows [i, i + rows) of the block.
  auto rows_at = [&](size_t i) HWY_ATTR {
    return kPackedA ? ATile{a_packed + i * kc, 1, 0} : ATile{a + i * lda, lda, a_col_stride};
  };
  for (size_t j = 0; j < n; j += width) {
    size_t i = 0;
    for (; i + 4 <= mc; i += 4) {
      GemmTileAt<4, kPackedA ? 4 : 0>(j, n, kc, rows_at(i), b, c + i * ldc, ldc, bias, init);
    }
    for (; i < mc; ++i) GemmTileAt<1, kPackedA ? 1 : 0>(j, n, kc, rows_at(i), b, c + i * ldc, ldc, bias, init);
  }
}

// C (m, n) = A (m, k) · B (k, n) + (bias (n) if non-null), or C += A · B when accumulate (bias is then not read),
// B packed (packing.h). k may be 0.
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
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  const bool pack_a = (n + width - 1) / width >= kPackAMinTiles;
  HWY_ALIGN float a_packed[kGemmMc * kGemmKc];
  for (size_t p0 = 0; p0 < k; p0 += kGemmKc) {
    const size_t kc = std::min(kGemmKc, k - p0);
    const int init = p0 == 0 ? first_init : 2;
    const PackedB b_blk = b.At(p0, 0);
    for (size_t i0 = 0; i0 < m; i0 += kGemmMc) {
      const size_t mc = std::min(kGemmMc, m - i0);
      const float* a_blk = a + i0 * lda + p0 * a_col_stride;
      if (pack_a) {
        GemmBlock<true>(mc, n, kc, a_blk, lda, a_col_stride, a_packed, b_blk, c + i0 * ldc, ldc, bias, init);
      } else {
        GemmBlock<false>(mc, n, kc, a_blk, lda, a_col_stride, a_packed, b_blk, c + i0 * ldc, ldc, bias, init);
      }
    }
  }
}

// Rows of A up to which a caller may prefer GemvPacked to Gemm (decoding: one token's projections).
constexpr size_t kGemvMaxRows = 4;

// C (m, n) = A (m, k) · B (k, n) [+ bias (n) if non-null] for a few rows of A with contiguous elements (a_ij at
// a[i * lda + j]), B packed (packing.h): a matrix-vector product per row that streams B's panels in order, each
// panel once per row. Per panel, kPanel / lanes accumulators run over all of k (no k blocking, A not packed),
// over kSets interleaved steps p ≡ s (mod kSets) so that at least 8 independent multiply-add chains hide their
// latency; the sets are added in order at the end (0 + 1 + …), then the bias. Gemm's 1-row tile has 2 chains and
// reads B 2 vectors per kPanel floats; this reads it sequentially. Rounding differs from Gemm's (another order).
// Each row depends on that row only. k may be 0.
HWY_INLINE void GemvPacked(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, const PackedB& b,
                           float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kN = hn::MaxLanes(d);
  static_assert(kPanel % kN == 0, "a panel is whole vectors");
  constexpr size_t kVecs = kPanel / kN;
  constexpr size_t kSets = kVecs >= 8 ? 1 : 8 / kVecs;
  HWY_ALIGN float last[kPanel];  // the partial last panel's bias and result
  for (size_t i = 0; i < m; ++i) {
    const float* HWY_RESTRICT ai = a + i * lda;
    float* ci = c + i * ldc;
    for (size_t j0 = 0; j0 < n; j0 += kPanel) {
      const size_t cols = std::min(kPanel, n - j0);
      const float* HWY_RESTRICT bp = b.data + (j0 / kPanel) * b.panel_stride;
      V acc[kSets][kVecs];
      for (size_t s = 0; s < kSets; ++s) {
        for (size_t v = 0; v < kVecs; ++v) acc[s][v] = hn::Zero(d);
      }
      size_t p = 0;
      for (; p + kSets <= k; p += kSets) {
        for (size_t s = 0; s < kSets; ++s) {
          const V av = hn::Set(d, ai[p + s]);
          const float* row = bp + (p + s) * kPanel;
          for (size_t v = 0; v < kVecs; ++v) acc[s][v] = hn::MulAdd(av, hn::LoadU(d, row + v * kN), acc[s][v]);
        }
      }
      for (; p < k; ++p) {
        const V av = hn::Set(d, ai[p]);
        for (size_t v = 0; v < kVecs; ++v)
          acc[0][v] = hn::MulAdd(av, hn::LoadU(d, bp + p * kPanel + v * kN), acc[0][v]);
      }
      for (size_t s = 1; s < kSets; ++s) {
        for (size_t v = 0; v < kVecs; ++v) acc[0][v] = hn::Add(acc[0][v], acc[s][v]);
      }
      float* dst = cols == kPanel ? ci + j0 : last;
      if (bias) {
        if (cols < kPanel) {
          std::fill(last, last + kPanel, 0.0f);
          std::copy(bias + j0, bias + j0 + cols, last);
        }
        const float* bsrc = cols == kPanel ? bias + j0 : last;
        for (size_t v = 0; v < kVecs; ++v) acc[0][v] = hn::Add(acc[0][v], hn::LoadU(d, bsrc + v * kN));
      }
      for (size_t v = 0; v < kVecs; ++v) hn::StoreU(acc[0][v], d, dst + v * kN);
      if (cols < kPanel) std::copy(last, last + cols, ci + j0);
    }
  }
}

// Gemm with a row-major B (k, n) of row stride ldb, or Bᵀ given as (n, k) when b_transposed; packs B into
// pack_buffer first.
HWY_INLINE void GemmUnpacked(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                             const float* HWY_RESTRICT b, size_t ldb, bool b_transposed, float* HWY_RESTRICT c,
                             size_t ldc, const float* HWY_RESTRICT bias, bool accumulate,
                             std::vector<float>& pack_buffer) {
  const PackedB packed = PackB(b, ldb, k, n, b_transposed, pack_buffer);
  Gemm(m, n, k, a, lda, a_col_stride, packed, c, ldc, bias, accumulate);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_GEMM_INL_H_ toggle
