// Panel layout of the right-hand GEMM operand, shared by load-time weight packing (plain C++) and the
// per-target kernels. B (k, n) is stored as ceil(n / kPanel) panels; panel q holds columns
// [q·kPanel, (q+1)·kPanel) as k contiguous rows of kPanel floats, zero-padded past n. A register tile then reads
// B with a fixed small stride (kPanel floats) instead of B's row stride, whose power-of-two values (E = 512:
// 2 KiB) map every row of a tile onto the same few L1 sets. kPanel is a multiple of every target's tile width
// (2 vectors: 32 floats on AVX-512, 8 on WASM SIMD128). The left operand's packing (PackA, per target) is in
// packing-inl.h.
#ifndef ATTNLAB_SRC_PACKING_H_
#define ATTNLAB_SRC_PACKING_H_

#include <algorithm>
#include <cstddef>
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

}  // namespace attnlab

#endif  // ATTNLAB_SRC_PACKING_H_
