// Scaled dot-product attention of one head, two paths over the same tiles:
//   exact: per block of query rows, logits for all keys → masked softmax → weights · V; writes the weights.
//   online: per block of query rows and tile of keys, a running max and sum per row (flash-style); never holds
//           more than a (rows, tile) block of logits, so extra memory is O(Lq·dv + dk·Lk), not O(Lq·Lk).
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_INL_H_
#undef ATTNLAB_SRC_ATTENTION_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "cpp/src/gemm-inl.h"
#include "cpp/src/softmax-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kQueryBlock = 16;  // query rows per block (a multiple of the 4-row GEMM tile)
constexpr size_t kKeyTile = 128;    // keys per tile of the online path

// One head. Rows are strided so that MHA can point into (tokens, embed) buffers without copies:
// q (lq, dk) row stride q_stride, v (lk, dv) row stride v_stride, out (lq, dv) row stride out_stride,
// weights (lq, lk) row stride lk or null. row_bias (lq, mask_cols) and key_bias (mask_cols) are additive and
// may be null. AttendHead fills in kt = kᵀ (dk, lk) and v_packed (lk, dv), packed for the GEMM.
struct HeadProblem {
  const float* q;
  size_t q_stride;
  PackedB kt;
  const float* v;
  size_t v_stride;
  PackedB v_packed;
  float* out;
  size_t out_stride;
  float* weights;
  size_t lq, lk, dk, dv;
  float scale;
  bool causal;
  const float* row_bias;
  const float* key_bias;
  size_t mask_cols;
  // Rows of v holding NaN or ±∞, ascending. They are zero in v_packed and added back only to the rows that attend
  // them, so a masked or causally hidden key reaches no row (0 · NaN would), whatever the tiling.
  const size_t* nonfinite_v_rows;
  size_t num_nonfinite_v_rows;
};

// Keys query i may see: all, or j <= i when causal.
HWY_INLINE size_t VisibleKeys(const HeadProblem& p, size_t i) { return p.causal ? std::min(p.lk, i + 1) : p.lk; }

HWY_INLINE const float* RowBias(const HeadProblem& p, size_t i) {
  return p.row_bias ? p.row_bias + i * p.mask_cols : nullptr;
}

// Whether query row i attends key j: visible (causal) and not masked by a -inf bias (what the softmax gives 0
// because of the mask, as opposed to a weight that underflowed to 0).
HWY_INLINE bool Attends(const HeadProblem& p, size_t i, size_t j) {
  if (j >= VisibleKeys(p, i)) return false;
  if (j >= p.mask_cols) return true;
  const float* row_bias = RowBias(p, i);
  return (row_bias ? row_bias[j] : 0.0f) + (p.key_bias ? p.key_bias[j] : 0.0f) != kNegInf;  // as ScaleBiasMax
}

// out (rows, dv; row stride p.out_stride) += probs (rows, cols; row stride ld) · v[j0, j0 + cols) for the
// non-finite value rows only (the GEMM saw them as 0), for the query rows i0 + r that attend them: a masked or
// hidden key adds nothing; an attended one follows IEEE even with weight 0 (0 · NaN = NaN, as in PyTorch).
HWY_INLINE void AddNonFiniteValueRows(const HeadProblem& p, const float* probs, size_t ld, size_t i0, size_t rows,
                                      size_t j0, size_t cols, float* out) {
  const size_t* begin = p.nonfinite_v_rows;
  const size_t* end = begin + p.num_nonfinite_v_rows;
  for (const size_t* it = std::lower_bound(begin, end, j0); it != end && *it < j0 + cols; ++it) {
    const float* v_row = p.v + *it * p.v_stride;
    for (size_t r = 0; r < rows; ++r) {
      if (!Attends(p, i0 + r, *it)) continue;
      const float w = probs[r * ld + (*it - j0)];
      float* out_row = out + r * p.out_stride;
      for (size_t c = 0; c < p.dv; ++c) out_row[c] += w * v_row[c];
    }
  }
}

// Exact path; the logits are computed in place in p.weights.
HWY_INLINE void AttendHeadExact(const HeadProblem& p) {
  for (size_t i0 = 0; i0 < p.lq; i0 += kQueryBlock) {
    const size_t rows = std::min(kQueryBlock, p.lq - i0);
    const size_t key_end = p.causal ? std::min(p.lk, i0 + rows) : p.lk;  // no row of the block sees beyond
    float* logits = p.weights + i0 * p.lk;
    const size_t ld = p.lk;
    Gemm(rows, key_end, p.dk, p.q + i0 * p.q_stride, p.q_stride, 1, p.kt, logits, ld, nullptr, false);
    RowKind kinds[kQueryBlock];
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = i0 + r;
      float* row = logits + r * ld;
      kinds[r] = MaskedSoftmaxRow(row, key_end, std::min(key_end, VisibleKeys(p, i)), p.scale, RowBias(p, i),
                                  p.key_bias, p.mask_cols);
      // Keys past the block's last visible one: 0, or NaN like the rest of a NaN row.
      std::fill(row + key_end, row + p.lk, kinds[r] == RowKind::kNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
    }
    Gemm(rows, p.dv, key_end, logits, ld, 1, p.v_packed, p.out + i0 * p.out_stride, p.out_stride, nullptr, false);
    AddNonFiniteValueRows(p, logits, ld, i0, rows, 0, key_end, p.out + i0 * p.out_stride);
  }
}

// Online path. scratch holds kQueryBlock * kKeyTile floats.
HWY_INLINE void AttendHeadOnline(const HeadProblem& p, float* HWY_RESTRICT scratch) {
  OnlineRowState state[kQueryBlock];
  for (size_t i0 = 0; i0 < p.lq; i0 += kQueryBlock) {
    const size_t rows = std::min(kQueryBlock, p.lq - i0);
    const size_t key_end = p.causal ? std::min(p.lk, i0 + rows) : p.lk;
    float* out = p.out + i0 * p.out_stride;
    for (size_t r = 0; r < rows; ++r) {
      state[r] = OnlineRowState();
      ZeroRow(out + r * p.out_stride, p.dv);
    }
    for (size_t j0 = 0; j0 < key_end; j0 += kKeyTile) {  // tiles past key_end are fully masked: skipped
      const size_t cols = std::min(kKeyTile, key_end - j0);
      Gemm(rows, cols, p.dk, p.q + i0 * p.q_stride, p.q_stride, 1, p.kt.At(0, j0), scratch, cols, nullptr, false);
      for (size_t r = 0; r < rows; ++r) {
        const size_t i = i0 + r;
        const size_t visible = VisibleKeys(p, i);
        const size_t valid = visible > j0 ? std::min(cols, visible - j0) : 0;
        const float* row_bias = RowBias(p, i);
        const size_t tile_mask_cols = p.mask_cols > j0 ? p.mask_cols - j0 : 0;
        const float rescale =
            OnlineSoftmaxTile(scratch + r * cols, cols, valid, p.scale, row_bias ? row_bias + j0 : nullptr,
                              p.key_bias ? p.key_bias + j0 : nullptr, tile_mask_cols, state[r]);
        if (rescale != 1.0f) ScaleRow(out + r * p.out_stride, p.dv, rescale);
      }
      Gemm(rows, p.dv, cols, scratch, cols, 1, p.v_packed.At(j0, 0), out, p.out_stride, nullptr, true);
      AddNonFiniteValueRows(p, scratch, cols, i0, rows, j0, cols, out);
    }
    for (size_t r = 0; r < rows; ++r) {
      float* row = out + r * p.out_stride;
      if (state[r].sum == 0.0f) {
        ZeroRow(row, p.dv);  // fully masked row
      } else {
        ScaleRow(row, p.dv, 1.0f / state[r].sum);
      }
    }
  }
}

// Reusable buffers of AttendHead.
struct HeadScratch {
  std::vector<float> kt, v, logits;
  std::vector<size_t> nonfinite_v_rows;
};

// Runs one head; `k` (lk, dk) with row stride k_stride is packed transposed first, and v packed.
HWY_INLINE void AttendHead(HeadProblem p, const float* HWY_RESTRICT k, size_t k_stride, HeadScratch& scratch) {
  static_assert(kKeyTile % kPanel == 0, "key tiles start at panel boundaries");
  if (p.lq == 0) return;
  if (p.lk == 0) {  // no key: every row is fully masked (and there are no weights)
    for (size_t i = 0; i < p.lq; ++i) ZeroRow(p.out + i * p.out_stride, p.dv);
    return;
  }
  p.kt = PackB(k, k_stride, p.dk, p.lk, /*transposed=*/true, scratch.kt);
  p.v_packed = PackB(p.v, p.v_stride, p.lk, p.dv, /*transposed=*/false, scratch.v);
  scratch.nonfinite_v_rows.clear();
  for (size_t j = 0; j < p.lk; ++j) {
    const float* row = p.v + j * p.v_stride;
    if (!std::all_of(row, row + p.dv, [](float x) { return std::isfinite(x); })) {
      scratch.nonfinite_v_rows.push_back(j);
      for (size_t c = 0; c < p.dv; ++c) scratch.v[(c / kPanel) * p.v_packed.panel_stride + j * kPanel + c % kPanel] = 0.0f;
    }
  }
  p.nonfinite_v_rows = scratch.nonfinite_v_rows.data();
  p.num_nonfinite_v_rows = scratch.nonfinite_v_rows.size();
  if (p.weights) {
    AttendHeadExact(p);
  } else {
    scratch.logits.resize(kQueryBlock * kKeyTile);
    AttendHeadOnline(p, scratch.logits.data());
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_INL_H_ toggle
