// Panel layout of the right-hand GEMM operand, shared by load-time weight packing (plain C++) and the
// per-target kernels. B (k, n) is stored as ceil(n / kPanel) panels; panel q holds columns
// [q·kPanel, (q+1)·kPanel) as k contiguous rows of kPanel floats, zero-padded past n. A register tile then reads
// B with a fixed small stride (kPanel floats) instead of B's row stride, whose power-of-two values (E = 512:
// 2 KiB) map every row of a tile onto the same few L1 sets. kPanel is a multiple of every target's tile width
// (2 vectors: 32 floats on AVX-512, 8 on WASM SIMD128). The left operand's packing (PackA, per target) is in
// packing-inl.h. Weights stored in 16 bits (F16 or BF16) keep them in the same layout (PackedB16, PackB16,
// PackB16Into); the GEMM converts them to float32 exactly as it reads them.
#ifndef ATTNLAB_SRC_OPS_PACKING_H_
#define ATTNLAB_SRC_OPS_PACKING_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attnlab {

constexpr size_t kPanel = 32;

inline size_t PackedPanels(size_t n) { return (n + kPanel - 1) / kPanel; }
inline size_t PackedSize(size_t k, size_t n) { return PackedPanels(n) * kPanel * k; }

// A packed B: element (p, j) at data[(j / kPanel) * panel_stride + p * kPanel + j % kPanel].
struct PackedB {
  const float* data = nullptr;
  size_t panel_stride = 0;  // kPanel * (rows of the whole packed matrix)

  // The same matrix from row p0 and column j0 (j0 a multiple of kPanel) on.
  PackedB At(size_t p0, size_t j0) const {
    return PackedB{data + (j0 / kPanel) * panel_stride + p0 * kPanel, panel_stride};
  }
};

// Where element (p, j) of a packed matrix whose panels are panel_stride elements apart lies.
inline size_t PackedIndex(size_t panel_stride, size_t p, size_t j) {
  return (j / kPanel) * panel_stride + p * kPanel + j % kPanel;
}

// Packs B (k, n) with row stride ldb, or Bᵀ when `transposed` (then b is (n, k) with row stride ldb), into `out`.
inline PackedB PackB(const float* b, size_t ldb, size_t k, size_t n, bool transposed, std::vector<float>& out) {
  if (out.size() < PackedSize(k, n)) out.resize(PackedSize(k, n));  // grow-only: no zero-fill per call
  const size_t panel_stride = kPanel * k;
  for (size_t q = 0; q < PackedPanels(n); ++q) {
    const size_t j0 = q * kPanel, cols = std::min(kPanel, n - j0);
    float* panel = out.data() + q * panel_stride;
    if (cols < kPanel) {  // the padding of the last panel
      for (size_t p = 0; p < k; ++p) std::fill(panel + p * kPanel + cols, panel + (p + 1) * kPanel, 0.0f);
    }
    if (transposed) {
      for (size_t j = 0; j < cols; ++j) {
        const float* src = b + (j0 + j) * ldb;
        for (size_t p = 0; p < k; ++p) panel[p * kPanel + j] = src[p];
      }
    } else {
      for (size_t p = 0; p < k; ++p) std::copy(b + p * ldb + j0, b + p * ldb + j0 + cols, panel + p * kPanel);
    }
  }
  return PackedB{out.data(), panel_stride};
}

// ---- 16-bit weights: B stored as IEEE binary16 (F16) or bfloat16 (BF16) bits in the same panel layout, converted
// to float32 (exactly: every F16 and BF16 value is a float32) as the GEMM reads it (gemm-inl.h).

enum class Dtype16 : uint8_t { kF16, kBF16 };

// The float32 value of F16 bits. Exact for every finite value (subnormals included, ±0 keeps its sign) and ±inf.
// A NaN keeps its sign and payload (shifted to the top of float32's mantissa) and comes out quiet, as x86's F16C
// (vcvtph2ps) converts it: the per-target conversions of gemm-inl.h agree with this bit for bit.
inline float F16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = 0x7F800000u | (man << 13) | (man != 0 ? 0x00400000u : 0u);
  } else if (exp != 0) {
    bits = ((exp + (127 - 15)) << 23) | (man << 13);
  } else {  // ±0 and subnormals: man · 2⁻²⁴, exact
    const float f = static_cast<float>(man) * (1.0f / 16777216.0f);
    std::memcpy(&bits, &f, sizeof(bits));
  }
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

// The float32 value of BF16 bits: the upper half of a float32 (NaNs keep their bits, signalling ones included).
inline float BF16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

inline float Bits16ToFloat(uint16_t h, Dtype16 dtype) {
  return dtype == Dtype16::kF16 ? F16ToFloat(h) : BF16ToFloat(h);
}

// A packed 16-bit B: element (p, j) at data[PackedIndex(panel_stride, p, j)] (the layout of PackedB), all of one
// dtype; padding columns hold 0 bits (+0).
struct PackedB16 {
  const uint16_t* data = nullptr;
  size_t panel_stride = 0;  // kPanel * (rows of the whole packed matrix)
  Dtype16 dtype = Dtype16::kF16;

  // The same matrix from row p0 and column j0 (j0 a multiple of kPanel) on.
  PackedB16 At(size_t p0, size_t j0) const {
    return PackedB16{data + (j0 / kPanel) * panel_stride + p0 * kPanel, panel_stride, dtype};
  }
  uint16_t Bits(size_t p, size_t j) const { return data[PackedIndex(panel_stride, p, j)]; }
  float Get(size_t p, size_t j) const { return Bits16ToFloat(Bits(p, j), dtype); }
};

// Writes B (k, n) with row stride ldb, or Bᵀ when `transposed` (then b is (n, k) with row stride ldb, as a
// torch.nn.Linear weight), into columns [j0, j0 + n) of a packed 16-bit matrix of at least k rows whose panels are
// panel_stride elements apart (j0 need not be a multiple of kPanel: the loader puts tensors side by side, e.g. the
// query, key and value projections). Nothing else is written: the caller zero-fills the padding once.
inline void PackB16Into(const uint16_t* b, size_t ldb, size_t k, size_t n, bool transposed, uint16_t* dst,
                        size_t panel_stride, size_t j0) {
  for (size_t j = 0; j < n;) {  // one panel's share of the columns at a time
    const size_t col = j0 + j, cols = std::min(n - j, kPanel - col % kPanel);
    uint16_t* out = dst + PackedIndex(panel_stride, 0, col);
    if (transposed) {
      for (size_t jj = 0; jj < cols; ++jj) {
        const uint16_t* src = b + (j + jj) * ldb;
        for (size_t p = 0; p < k; ++p) out[p * kPanel + jj] = src[p];
      }
    } else {
      for (size_t p = 0; p < k; ++p) std::copy(b + p * ldb + j, b + p * ldb + j + cols, out + p * kPanel);
    }
    j += cols;
  }
}

// Packs B (k, n) or Bᵀ (as PackB) of 16-bit elements of `dtype` into `out` (resized to PackedSize(k, n), padding 0).
inline PackedB16 PackB16(const uint16_t* b, size_t ldb, size_t k, size_t n, bool transposed, Dtype16 dtype,
                         std::vector<uint16_t>& out) {
  out.assign(PackedSize(k, n), 0);
  PackB16Into(b, ldb, k, n, transposed, out.data(), kPanel * k, 0);
  return PackedB16{out.data(), kPanel * k, dtype};
}

}  // namespace attnlab

#endif  // ATTNLAB_SRC_OPS_PACKING_H_
