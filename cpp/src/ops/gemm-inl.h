// Register-tiled, cache-blocked single-precision matrix product for every Highway target:
// C (m, n) = A (m, k) · B (k, n) [+ bias (n)], or C += A · B: C row-major, A with a row and a column stride (so that Aᵀ
// is read in place: dW = dYᵀ X needs no transpose), B in the panel layout of packing.h: float32 (PackedB), or 16-bit
// F16/BF16 weights (PackedB16) converted exactly to float32 as they are read, so that a 16-bit B gives bit for bit
// the result of the float32 B holding the same values.
// Per-target code: include after hwy/highway.h, inside the foreach_target translation unit.

#if defined(ATTNLAB_SRC_OPS_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_GEMM_INL_H_
#undef ATTNLAB_SRC_OPS_GEMM_INL_H_
#else
#define ATTNLAB_SRC_OPS_GEMM_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpp/src/ops/packing-inl.h"
#include "cpp/src/ops/packing.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Cache blocking of a B read in place (GemmBlocks; GemmPanels, below, blocks otherwise): a (kGemmMc, kGemmKc) block
// of A (packed when that pays: 64 KiB) stays in L2 and every column tile of B passes over it; a tile's (kGemmKc,
// 2 vectors) slice of B stays in L1 for all kGemmMc / kGemmRows row tiles.
constexpr size_t kGemmKc = 256;
constexpr size_t kGemmMc = 64;  // a multiple of kGemmRows
// Rows of a register tile (of 2 vectors): AVX-512's 32 registers hold 8 x 2 accumulators, enough independent
// multiply-adds to cover FMA's latency on two units; 4 x 2 fits the 15 SIMD registers V8 gives wasm and AVX2's 16.
// The tile shape changes no arithmetic (every element is one multiply-add chain over k in order).
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr size_t kGemmRows = 8;
#else
constexpr size_t kGemmRows = 4;
#endif
// A is packed when at least this many column tiles reuse it: packing costs one copy of the A block; reading A
// in place costs an address computation per row and step (in wasm no addressing mode takes a register index).
constexpr size_t kPackAMinTiles = 8;

// ---- Reading B: float32, or 16-bit converted exactly to float32.

// F16 → float32 without F16C: the float32 with F16's sign and mantissa and F16's biased exponent e as its own
// (value 2^(e − 127) · 1.m, or 2⁻¹²⁶ · 0.m for e = 0) times 2^112 is the F16 value 2^(e − 15) · 1.m (or
// 2⁻¹⁴ · 0.m): exact for normals, subnormals and ±0, with no branch and no table. For e = 31 (inf, NaN) the
// exponent is set to 255 first: the product stays ±inf, and a NaN comes out quiet with its sign and payload, as
// F16C's (x86 multiplies do that, so does wasm in V8 on x86: tested; the WebAssembly spec would allow any NaN).
// A subnormal F16 makes the multiplication's operand a denormal float32: exact everywhere (WASM has no
// flush-to-zero), possibly slow on some x86 CPUs, and rare in weights. Not Highway 1.0.3's own PromoteTo from
// float16_t on these targets: it turns ±inf into ±65536 and NaNs into finite numbers.
constexpr float kF16Scale = 0x1p112f;

// Loads Lanes(df) 16-bit elements at p (unaligned) as float32: bit for bit F16ToFloat / BF16ToFloat of packing.h.
// BF16 is the upper half of a float32 (a shift). F16: x86 targets with F16C (AVX2, AVX-512) convert in hardware
// (vcvtph2ps), the others as above.
template <Dtype16 kDtype, class DF>
HWY_INLINE hn::Vec<DF> LoadPromote16(DF df, const uint16_t* HWY_RESTRICT p) {
  const hn::Rebind<uint16_t, DF> d16;
  const hn::RebindToUnsigned<DF> du;
  const auto h = hn::LoadU(d16, p);
  if constexpr (kDtype == Dtype16::kBF16) {
    return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, h)));
  } else {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
    return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), h));
#else
    const hn::RebindToSigned<DF> di;
    const auto bits = hn::PromoteTo(du, h);
    const auto em = hn::ShiftLeft<13>(hn::And(bits, hn::Set(du, 0x7FFFu)));  // exponent and mantissa in place
    const auto sign = hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)));
    const auto special = hn::RebindMask(du, hn::Gt(hn::BitCast(di, em), hn::Set(di, 0x0F7FFFFF)));  // e = 31
    const auto f = hn::Or(hn::Or(em, sign), hn::IfThenElseZero(special, hn::Set(du, 0x7F800000u)));
    return hn::Mul(hn::BitCast(df, f), hn::Set(df, kF16Scale));
#endif
  }
}

// The 128-bit targets without F16C, where LoadPromote16x2 rearranges whole vectors of 16-bit lanes.
#ifdef ATTNLAB_ZIP16
#undef ATTNLAB_ZIP16
#endif
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_WASM || HWY_TARGET == HWY_EMU128
#define ATTNLAB_ZIP16 1
#else
#define ATTNLAB_ZIP16 0
#endif

// Loads 2 · Lanes(df) 16-bit elements at p as two float32 vectors (the first Lanes(df) in lo), as LoadPromote16.
// On the 128-bit targets (ATTNLAB_ZIP16) one vector of 8 elements is rearranged at once and its halves zipped
// into 32-bit lanes: BF16 one zip per float vector; F16 the upper 16 bits of the float32 (sign, exponent, top 7
// mantissa bits: an arithmetic shift and a mask; exponent 31 → 255) and the lower (the low 3 mantissa bits), zipped
// and multiplied by 2^112 as in LoadPromote16: a dozen operations per 8 elements, no branch.
template <Dtype16 kDtype, class DF>
HWY_INLINE void LoadPromote16x2(DF df, const uint16_t* HWY_RESTRICT p, hn::Vec<DF>& lo, hn::Vec<DF>& hi) {
#if ATTNLAB_ZIP16
  const hn::Repartition<uint16_t, DF> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::RebindToUnsigned<DF> du;
  const auto h = hn::LoadU(d16, p);
  if constexpr (kDtype == Dtype16::kBF16) {
    lo = hn::BitCast(df, hn::ZipLower(du, hn::Zero(d16), h));
    hi = hn::BitCast(df, hn::ZipUpper(du, hn::Zero(d16), h));
  } else {
    const auto special = hn::Gt(hn::BitCast(di16, hn::And(h, hn::Set(d16, 0x7FFF))), hn::Set(di16, 0x7BFF));
    const auto upper = hn::Or(hn::And(hn::BitCast(d16, hn::ShiftRight<3>(hn::BitCast(di16, h))), hn::Set(d16, 0x8FFF)),
                              hn::IfThenElseZero(hn::RebindMask(d16, special), hn::Set(d16, 0x7F80)));
    const auto lower = hn::ShiftLeft<13>(h);
    const auto scale = hn::Set(df, kF16Scale);
    lo = hn::Mul(hn::BitCast(df, hn::ZipLower(du, lower, upper)), scale);
    hi = hn::Mul(hn::BitCast(df, hn::ZipUpper(du, lower, upper)), scale);
  }
#else
  lo = LoadPromote16<kDtype>(df, p);
  hi = LoadPromote16<kDtype>(df, p + hn::Lanes(df));
#endif
}

// dst[0, count) = the float32 values of src[0, count) as Read::Load2 reads them; count a multiple of 2 vectors.
template <class Read>
HWY_INLINE void ToF32(const typename Read::T* HWY_RESTRICT src, size_t count, float* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < count; i += 2 * N) {
    hn::Vec<decltype(d)> lo, hi;
    Read::Load2(d, src + i, lo, hi);
    hn::StoreU(lo, d, dst + i);
    hn::StoreU(hi, d, dst + i + N);
  }
}

// How GemvPanels and GemmPanels read B: two vectors at a time, from a packed B whose elements are of type T.
struct ReadF32 {
  using T = float;
  template <class D>
  static HWY_INLINE void Load2(D d, const float* HWY_RESTRICT p, hn::Vec<D>& lo, hn::Vec<D>& hi) {
    lo = hn::LoadU(d, p);
    hi = hn::LoadU(d, p + hn::Lanes(d));
  }
};
template <Dtype16 kDtype>
struct Read16 {
  using T = uint16_t;
  template <class D>
  static HWY_INLINE void Load2(D d, const uint16_t* HWY_RESTRICT p, hn::Vec<D>& lo, hn::Vec<D>& hi) {
    LoadPromote16x2<kDtype>(d, p, lo, hi);
  }
};

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

// One (mc, kc) block of A against every column tile of an n-column B: A already packed into a_packed (PackA), or
// read in place.
template <bool kPackedA>
HWY_INLINE void GemmBlockTiles(size_t mc, size_t n, size_t kc, const float* HWY_RESTRICT a, size_t lda,
                               size_t a_col_stride, const float* HWY_RESTRICT a_packed, const PackedB& b,
                               float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias, int init) {
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  // Rows [i, i + rows) of the block.
  auto rows_at = [&](size_t i) HWY_ATTR {
    return kPackedA ? ATile{a_packed + i * kc, 1, 0} : ATile{a + i * lda, lda, a_col_stride};
  };
  for (size_t j = 0; j < n; j += width) {
    size_t i = 0;
    for (; i + kGemmRows <= mc; i += kGemmRows) {
      GemmTileAt<kGemmRows, kPackedA ? kGemmRows : 0>(j, n, kc, rows_at(i), b, c + i * ldc, ldc, bias, init);
    }
    for (; i < mc; ++i) GemmTileAt<1, kPackedA ? 1 : 0>(j, n, kc, rows_at(i), b, c + i * ldc, ldc, bias, init);
  }
}

// A block of the cache blocking (GemmBlocks): rows [i0, i0 + mc) of A and C over k's range [p0, p0 + kc). a is the
// block's first element of A, a_packed the block packed by PackA or null (A read in place), c row i0 of C; init as
// GemmTileAt's (0: C starts from 0, 1: from bias, 2: accumulates).
struct GemmBlockAt {
  size_t p0, kc, mc;
  const float* a;
  const float* a_packed;
  float* c;
  int init;
};

// GemmBlockTiles on a block of GemmBlocks for n columns of B (b: their panels) into C from c, bias from `bias`.
HWY_INLINE void GemmBlockColumns(const GemmBlockAt& blk, size_t n, size_t lda, size_t a_col_stride, const PackedB& b,
                                 float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias) {
  if (blk.a_packed) {
    GemmBlockTiles<true>(blk.mc, n, blk.kc, blk.a, lda, a_col_stride, blk.a_packed, b, c, ldc, bias, blk.init);
  } else {
    GemmBlockTiles<false>(blk.mc, n, blk.kc, blk.a, lda, a_col_stride, nullptr, b, c, ldc, bias, blk.init);
  }
}

// Gemm's calls without products: m or n is 0, or k is 0 (C keeps its start value, bias or 0; B is empty and its data
// may be null). True when it handled the call.
HWY_INLINE bool GemmWithoutProducts(size_t m, size_t n, size_t k, float* HWY_RESTRICT c, size_t ldc,
                                    const float* HWY_RESTRICT bias, bool accumulate) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  if (accumulate) return true;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) c[i * ldc + j] = bias ? bias[j] : 0.0f;
  }
  return true;
}

// Whether packing A pays off: B has enough column tiles (of two vectors) to reuse each packed row block.
HWY_INLINE bool PackAPays(size_t n) {
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  return (n + width - 1) / width >= kPackAMinTiles;
}

// The cache blocking of Gemm on a B read in place, C (m, n) = A (m, k) · B [+ bias] or C += A · B: per block of kGemmKc
// of k, per block of kGemmMc rows of A, A's block packed when that pays (PackAPays); block(GemmBlockAt) runs the
// block's column tiles. Calls without products are GemmWithoutProducts'.
template <class Block>
HWY_INLINE void GemmBlocks(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                           float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias, bool accumulate,
                           const Block& block) {
  if (GemmWithoutProducts(m, n, k, c, ldc, bias, accumulate)) return;
  const int first_init = accumulate ? 2 : (bias ? 1 : 0);
  const bool pack_a = PackAPays(n);
  HWY_ALIGN float a_packed[kGemmMc * kGemmKc];
  for (size_t p0 = 0; p0 < k; p0 += kGemmKc) {
    const size_t kc = std::min(kGemmKc, k - p0);
    for (size_t i0 = 0; i0 < m; i0 += kGemmMc) {
      const size_t mc = std::min(kGemmMc, m - i0);
      const float* a_blk = a + i0 * lda + p0 * a_col_stride;
      if (pack_a) PackARows<kGemmRows>(mc, kc, a_blk, lda, a_col_stride, a_packed);
      block(GemmBlockAt{p0, kc, mc, a_blk, pack_a ? a_packed : nullptr, c + i0 * ldc, p0 == 0 ? first_init : 2});
    }
  }
}

// Rows of A from which Gemm on a float32 B runs GemmPanels: its copy of each panel slice, one load and store per
// element, is then shared by at least this many rows. Fewer rows (decoding's attention) read B in place.
constexpr size_t kGemmCopyMinRows = 16;

// Per thread: all rows of A's current k block, packed (GemmPanels); grows to the largest call and is kept.
HWY_INLINE std::vector<float>& GemmABuffer() {
  static thread_local std::vector<float> buffer;
  return buffer;
}

// C (m, n) = A · B [+ bias] or C += A · B (as Gemm) with B read through Read (ReadF32, Read16<dtype>). Per block of
// kGemmKc of k: every row of A packed (PackARows), then per panel of B its (kc, kPanel) slice converted (or copied)
// once into an aligned float32 buffer in L1 and every row tile of A run on it. So B is read once per call, whatever
// m (for m = 256, 4 times less than by 64-row blocks: the bench model's weights do not fit in L2), a 16-bit element
// is converted once per call, and the tiles read B aligned (a B in a std::vector is only 16-byte aligned: every
// AVX-512 load of it in place straddles two cache lines; the 8-row tile ran at 93 GFLOP/s on such a B, 117 on an
// aligned one). A's block (m x kc floats: 256 KiB at m = 256) streams from L2. Same tiles and order of additions as
// on B in place: the same bits.
template <class Read, class PackedMatrixB>
HWY_INLINE void GemmPanels(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                           const PackedMatrixB& b, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias,
                           bool accumulate) {
  if (GemmWithoutProducts(m, n, k, c, ldc, bias, accumulate)) return;
  HWY_ALIGN float b_block[kGemmKc * kPanel];  // one panel's kc rows, as float32
  std::vector<float>& a_packed = GemmABuffer();
  if (a_packed.size() < m * std::min(k, kGemmKc)) a_packed.resize(m * std::min(k, kGemmKc));
  const int first_init = accumulate ? 2 : (bias ? 1 : 0);
  for (size_t p0 = 0; p0 < k; p0 += kGemmKc) {
    const size_t kc = std::min(kGemmKc, k - p0);
    PackARows<kGemmRows>(m, kc, a + p0 * a_col_stride, lda, a_col_stride, a_packed.data());
    const GemmBlockAt blk{p0, kc, m, a + p0 * a_col_stride, a_packed.data(), c, p0 == 0 ? first_init : 2};
    const PackedB b_f32{b_block, kc * kPanel};
    for (size_t j0 = 0; j0 < n; j0 += kPanel) {
      ToF32<Read>(b.data + (j0 / kPanel) * b.panel_stride + p0 * kPanel, kc * kPanel, b_block);
      GemmBlockColumns(blk, std::min(kPanel, n - j0), lda, a_col_stride, b_f32, c + j0, ldc,
                       bias ? bias + j0 : nullptr);
    }
  }
}

// C (m, n) = A (m, k) · B (k, n) + (bias (n) if non-null), or C += A · B when accumulate (bias is then not read),
// B packed (packing.h). k may be 0.
// A's element (i, p) is a[i * lda + p * a_col_stride]: a_col_stride 1 for A, or lda 1 and a_col_stride = the
// row stride of a (k, m) matrix for its transpose.
HWY_INLINE void Gemm(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                     const PackedB& b, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias,
                     bool accumulate) {
  if (m >= kGemmCopyMinRows) return GemmPanels<ReadF32>(m, n, k, a, lda, a_col_stride, b, c, ldc, bias, accumulate);
  GemmBlocks(m, n, k, a, lda, a_col_stride, c, ldc, bias, accumulate, [&](const GemmBlockAt& blk) HWY_ATTR {
    GemmBlockColumns(blk, n, lda, a_col_stride, b.At(blk.p0, 0), blk.c, ldc, bias);
  });
}

// Gemm with B packed in 16 bits (F16 or BF16, packing.h): bit for bit Gemm on the float32 values of B.
HWY_INLINE void Gemm(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, size_t a_col_stride,
                     const PackedB16& b, float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias,
                     bool accumulate) {
  if (b.dtype == Dtype16::kF16) {
    GemmPanels<Read16<Dtype16::kF16>>(m, n, k, a, lda, a_col_stride, b, c, ldc, bias, accumulate);
  } else {
    GemmPanels<Read16<Dtype16::kBF16>>(m, n, k, a, lda, a_col_stride, b, c, ldc, bias, accumulate);
  }
}

// Rows of A up to which a caller may prefer GemvPacked to Gemm (decoding: one token's projections).
constexpr size_t kGemvMaxRows = 4;

// Interleaved sets of steps in GemvPanels (below): at least 8 independent multiply-add chains per panel.
template <class D>
constexpr size_t GemvSets(D d) {
  return kPanel / hn::MaxLanes(d) >= 8 ? 1 : 8 / (kPanel / hn::MaxLanes(d));
}

// The end of one panel of one row: the sets of accumulators added in order (0 + 1 + …), then bias[j0, j0 + cols)
// if non-null; the cols results stored at ci + j0 (through `last` when the panel is partial).
template <size_t kSets, size_t kVecs, class D, class V>
HWY_INLINE void GemvFinishPanel(D d, V (&acc)[kSets][kVecs], size_t j0, size_t cols, const float* HWY_RESTRICT bias,
                                float* HWY_RESTRICT ci, float* HWY_RESTRICT last) {
  constexpr size_t kN = hn::MaxLanes(D());
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

// C (m, n) = A (m, k) · B (k, n) [+ bias (n) if non-null] for a few rows of A with contiguous elements (a_ij at
// a[i * lda + j]), B packed (packing.h): a matrix-vector product per row that streams B's panels in order, each
// panel once per row. Per panel, kPanel / lanes accumulators run over all of k (no k blocking, A not packed),
// over kSets interleaved steps p ≡ s (mod kSets) so that at least 8 independent multiply-add chains hide their
// latency; the sets are added in order at the end (0 + 1 + …), then the bias. Gemm's 1-row tile has 2 chains and
// reads B 2 vectors per kPanel floats; this reads it sequentially. Rounding differs from Gemm's (another order).
// Each row depends on that row only. k may be 0. Read (ReadF32, Read16<dtype>) loads B's vectors as float32: a
// 16-bit B is streamed as it is stored (half the bytes) and converted in registers.
template <class Read>
HWY_INLINE void GemvPanels(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda,
                           const typename Read::T* HWY_RESTRICT b_data, size_t b_panel_stride, float* HWY_RESTRICT c,
                           size_t ldc, const float* HWY_RESTRICT bias) {
  using TB = typename Read::T;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kN = hn::MaxLanes(d);
  static_assert(kPanel % (2 * kN) == 0, "a panel is whole pairs of vectors");
  constexpr size_t kVecs = kPanel / kN;
  constexpr size_t kSets = GemvSets(d);
  HWY_ALIGN float last[kPanel];  // the partial last panel's bias and result
  for (size_t i = 0; i < m; ++i) {
    const float* HWY_RESTRICT ai = a + i * lda;
    float* ci = c + i * ldc;
    for (size_t j0 = 0; j0 < n; j0 += kPanel) {
      const size_t cols = std::min(kPanel, n - j0);
      const TB* HWY_RESTRICT bp = b_data + (j0 / kPanel) * b_panel_stride;
      V acc[kSets][kVecs];
      for (size_t s = 0; s < kSets; ++s) {
        for (size_t v = 0; v < kVecs; ++v) acc[s][v] = hn::Zero(d);
      }
      size_t p = 0;
      for (; p + kSets <= k; p += kSets) {
        for (size_t s = 0; s < kSets; ++s) {
          const V av = hn::Set(d, ai[p + s]);
          const TB* row = bp + (p + s) * kPanel;
          for (size_t v = 0; v < kVecs; v += 2) {
            V b0, b1;
            Read::Load2(d, row + v * kN, b0, b1);
            acc[s][v] = hn::MulAdd(av, b0, acc[s][v]);
            acc[s][v + 1] = hn::MulAdd(av, b1, acc[s][v + 1]);
          }
        }
      }
      for (; p < k; ++p) {
        const V av = hn::Set(d, ai[p]);
        for (size_t v = 0; v < kVecs; v += 2) {
          V b0, b1;
          Read::Load2(d, bp + p * kPanel + v * kN, b0, b1);
          acc[0][v] = hn::MulAdd(av, b0, acc[0][v]);
          acc[0][v + 1] = hn::MulAdd(av, b1, acc[0][v + 1]);
        }
      }
      GemvFinishPanel(d, acc, j0, cols, bias, ci, last);
    }
  }
}

// GemvPanels on a float32 B.
HWY_INLINE void GemvPacked(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, const PackedB& b,
                           float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias) {
  GemvPanels<ReadF32>(m, n, k, a, lda, b.data, b.panel_stride, c, ldc, bias);
}

// GemvPacked on a 16-bit B (F16 or BF16): bit for bit GemvPacked on the float32 values of B.
HWY_INLINE void GemvPacked(size_t m, size_t n, size_t k, const float* HWY_RESTRICT a, size_t lda, const PackedB16& b,
                           float* HWY_RESTRICT c, size_t ldc, const float* HWY_RESTRICT bias) {
  if (b.dtype == Dtype16::kF16) {
    GemvPanels<Read16<Dtype16::kF16>>(m, n, k, a, lda, b.data, b.panel_stride, c, ldc, bias);
  } else {
    GemvPanels<Read16<Dtype16::kBF16>>(m, n, k, a, lda, b.data, b.panel_stride, c, ldc, bias);
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

#endif  // ATTNLAB_SRC_OPS_GEMM_INL_H_ toggle
