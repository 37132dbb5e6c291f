// Scaled dot-product attention of one head, two paths over the same tiles:
//   exact: per block of query rows, logits for all keys → masked softmax → weights · V; writes the weights.
//   online: per block of query rows and tile of keys, a running max and sum per row (flash-style); never holds
//           more than a (tile, rows) block of logits, so extra memory is O(Lq·dv + dk·Lk), not O(Lq·Lk).
//           The block is computed transposed, Sᵀ = K_tile · Q_blockᵀ: one query per column, so the softmax runs
//           down columns (no horizontal reductions) and Sᵀ is already the packed left operand of P · V.
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_ATTENTION_INL_H_
#undef ATTNLAB_SRC_ATTENTION_ATTENTION_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_ATTENTION_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpp/src/attention/kernels.h"
#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/ops/packing-inl.h"
#include "cpp/src/ops/softmax-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kQueryBlock = 16;  // query rows per block of the exact path (a multiple of the 4-row GEMM tile)
constexpr size_t kKeyTile = 128;    // keys per tile of the online path (a multiple of 4)
// Query rows per block of the online path: a whole GEMM column tile (two vectors), at least 16.
constexpr size_t kOnlineQueries = HWY_MAX(16, 2 * hn::MaxLanes(hn::ScalableTag<float>()));

// Sizes and logit scale of one head: q (lq, dk), k (lk, dk), v (lk, dv). Shared by the forward and backward
// problems.
struct HeadDims {
  size_t lq, lk, dk, dv;
  float scale;
};

// Which keys each query row of a head may see, before masks (SdpaOptions: is_causal, causal_align, window,
// kv_lengths): query i sits at position pos = i + offset and sees keys j in [0, min(lk, valid)) with j <= pos
// when causal, j >= pos - left when left >= 0, j <= pos + right when right >= 0. The default sees every key.
struct KeyWindow {
  int64_t offset = 0;
  int64_t valid = std::numeric_limits<int64_t>::max();
  bool causal = false;
  int64_t left = -1, right = -1;  // (callers clamp them to at most lq + lk: no overflow below)
};

// Keys [begin, end) of one query row (begin == end: none).
struct KeyRange {
  size_t begin, end;
};

// One head. Rows are strided so that MHA can point into (tokens, embed) buffers without copies:
// q (lq, dk) row stride q_stride, v (lk, dv) row stride v_stride, out (lq, dv) row stride out_stride,
// weights (lq, lk) row stride lk or null. row_bias (lq, mask_cols) and key_bias (mask_cols) are additive and
// may be null. AttendHead fills in v_packed (lk, dv) and, for the exact path, kt = kᵀ (dk, lk), packed as the
// right GEMM operand, or, for the online path, k_packed (lk, dk) as the left one (PackA's layout).
struct HeadProblem : HeadDims {
  const float* q;
  size_t q_stride;
  PackedB kt;
  const float* k_packed;
  const float* v;
  size_t v_stride;
  PackedB v_packed;
  float* out;
  size_t out_stride;
  float* weights;
  KeyWindow window;
  float softcap;  // > 0: logits c · tanh(logit / c) after scaling, before biases
  const float* row_bias;
  const float* key_bias;
  size_t mask_cols;
  ptrdiff_t row_stride;  // of row_bias: mask_cols, 0 (one row for every query) or −1 (BiasArgs::toeplitz)
  // Rows of v holding NaN or ±∞, ascending. They are zero in v_packed and added back only to the rows that attend
  // them, so a masked or causally hidden key reaches no row (0 · NaN would), whatever the tiling.
  const size_t* nonfinite_v_rows;
  size_t num_nonfinite_v_rows;
};

// A head whose q rows are q_stride floats apart and v and out rows v_stride apart (SDPA: dk and dv; MHA: E, a
// head being a column slice of (tokens, E) buffers), with problem `row_problem`'s row bias and item
// `key_problem`'s key bias of `bias` (their batch strides apply per index).
HWY_INLINE HeadProblem MakeHeadProblem(const HeadDims& dims, const float* q, size_t q_stride, const float* v,
                                       size_t v_stride, float* out, float* weights, const KeyWindow& window,
                                       const BiasArgs& bias, size_t row_problem, size_t key_problem) {
  const float* row_bias = !bias.row_bias          ? nullptr
                          : bias.row_bias_offsets ? bias.row_bias + bias.row_bias_offsets[row_problem]
                                                  : bias.row_bias + row_problem * bias.row_bias_batch_stride;
  const float* key_bias = bias.key_bias ? bias.key_bias + key_problem * bias.key_bias_batch_stride : nullptr;
  // (kt, k_packed, v_packed and the non-finite value rows: AttendHead's.)
  return HeadProblem{dims,
                     q,
                     q_stride,
                     /*kt=*/PackedB(),
                     /*k_packed=*/nullptr,
                     v,
                     v_stride,
                     /*v_packed=*/PackedB(),
                     out,
                     /*out_stride=*/v_stride,
                     weights,
                     window,
                     /*softcap=*/0.0f,
                     row_bias,
                     key_bias,
                     bias.mask_cols,
                     bias.row_stride_zero ? 0
                     : bias.toeplitz      ? -1
                                          : static_cast<ptrdiff_t>(bias.mask_cols),
                     /*nonfinite_v_rows=*/nullptr,
                     0};
}

// The same with `causal` alone (top-left, every key valid).
HWY_INLINE HeadProblem MakeHeadProblem(const HeadDims& dims, const float* q, size_t q_stride, const float* v,
                                       size_t v_stride, float* out, float* weights, bool causal, const BiasArgs& bias,
                                       size_t row_problem, size_t key_problem) {
  KeyWindow window;
  window.causal = causal;
  return MakeHeadProblem(dims, q, q_stride, v, v_stride, out, weights, window, bias, row_problem, key_problem);
}

// Keys query i may see (KeyWindow).
HWY_INLINE KeyRange VisibleRange(const HeadProblem& p, size_t i) {
  const KeyWindow& w = p.window;
  const int64_t pos = static_cast<int64_t>(i) + w.offset;
  int64_t end = std::min(static_cast<int64_t>(p.lk), w.valid);
  if (w.causal) end = std::min(end, pos + 1);
  if (w.right >= 0) end = std::min(end, pos + w.right + 1);
  const int64_t begin = w.left >= 0 ? std::max<int64_t>(0, pos - w.left) : 0;
  if (end <= begin) return KeyRange{0, 0};
  return KeyRange{static_cast<size_t>(begin), static_cast<size_t>(end)};
}

// Keys that some row of [i0, i0 + rows) sees: the union of their ranges (begin == end: none).
HWY_INLINE KeyRange BlockRange(const HeadProblem& p, size_t i0, size_t rows) {
  KeyRange block{p.lk, 0};
  for (size_t r = 0; r < rows; ++r) {
    const KeyRange k = VisibleRange(p, i0 + r);
    if (k.begin == k.end) continue;
    block.begin = std::min(block.begin, k.begin);
    block.end = std::max(block.end, k.end);
  }
  return block.begin < block.end ? block : KeyRange{0, 0};
}

// Row i's row bias (mask_cols entries) or null. Element (i, j) lives at row_bias[i * row_stride + j]: row_stride
// is mask_cols, 0 for a mask broadcast over the query rows, −1 for a Toeplitz bias.
HWY_INLINE const float* RowBias(const HeadProblem& p, size_t i) {
  return p.row_bias ? p.row_bias + static_cast<ptrdiff_t>(i) * p.row_stride : nullptr;
}

// Whether query row i attends key j: visible (causal) and not masked by a -inf bias (what the softmax gives 0
// because of the mask, as opposed to a weight that underflowed to 0).
HWY_INLINE bool Attends(const HeadProblem& p, size_t i, size_t j) {
  const KeyRange range = VisibleRange(p, i);
  if (j < range.begin || j >= range.end) return false;
  if (j >= p.mask_cols) return true;
  const float* row_bias = RowBias(p, i);
  return (row_bias ? row_bias[j] : 0.0f) + (p.key_bias ? p.key_bias[j] : 0.0f) != kNegInf;  // as ScaleBiasMax
}

// out (rows, dv; row stride p.out_stride) += probs (rows, cols; element (r, j) at probs[r * row_stride + j *
// col_stride]) · v[j0, j0 + cols) for the non-finite value rows only (the GEMM saw them as 0), for the query rows
// i0 + r that attend them: a masked or hidden key adds nothing; an attended one follows IEEE even with weight 0
// (0 · NaN = NaN, as in PyTorch).
HWY_INLINE void AddNonFiniteValueRows(const HeadProblem& p, const float* probs, size_t row_stride, size_t col_stride,
                                      size_t i0, size_t rows, size_t j0, size_t cols, float* out) {
  const size_t* begin = p.nonfinite_v_rows;
  const size_t* end = begin + p.num_nonfinite_v_rows;
  for (const size_t* it = std::lower_bound(begin, end, j0); it != end && *it < j0 + cols; ++it) {
    const float* v_row = p.v + *it * p.v_stride;
    for (size_t r = 0; r < rows; ++r) {
      if (!Attends(p, i0 + r, *it)) continue;
      const float w = probs[r * row_stride + (*it - j0) * col_stride];
      float* out_row = out + r * p.out_stride;
      for (size_t c = 0; c < p.dv; ++c) out_row[c] += w * v_row[c];
    }
  }
}

// Row bias and key bias of row i from key j0 on, and how many of its keys have biases.
struct BiasFrom {
  const float* row_bias;
  const float* key_bias;
  size_t cols;
};
HWY_INLINE BiasFrom BiasesFrom(const HeadProblem& p, size_t i, size_t j0) {
  if (j0 >= p.mask_cols) return BiasFrom{nullptr, nullptr, 0};
  const float* row_bias = RowBias(p, i);
  return BiasFrom{row_bias ? row_bias + j0 : nullptr, p.key_bias ? p.key_bias + j0 : nullptr, p.mask_cols - j0};
}

// Exact path; the logits are computed in place in p.weights. Per block of query rows, only the keys
// [kb, ke) that some row of the block sees are multiplied (kb rounded down to a panel of kt); each row's
// softmax runs over its own range, the rest of the row is 0.
HWY_INLINE void AttendHeadExact(const HeadProblem& p) {
  for (size_t i0 = 0; i0 < p.lq; i0 += kQueryBlock) {
    const size_t rows = std::min(kQueryBlock, p.lq - i0);
    const KeyRange block = BlockRange(p, i0, rows);
    const size_t kb = block.begin / kPanel * kPanel, ke = block.end;
    float* logits = p.weights + i0 * p.lk;
    const size_t ld = p.lk;
    float* out = p.out + i0 * p.out_stride;
    if (ke <= kb) {  // no row of the block sees a key
      for (size_t r = 0; r < rows; ++r) {
        ZeroRow(logits + r * ld, p.lk);
        ZeroRow(out + r * p.out_stride, p.dv);
      }
      continue;
    }
    Gemm(rows, ke - kb, p.dk, p.q + i0 * p.q_stride, p.q_stride, 1, p.kt.At(0, kb), logits + kb, ld, nullptr, false);
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = i0 + r;
      float* row = logits + r * ld;
      const KeyRange range = VisibleRange(p, i);
      const BiasFrom bias = BiasesFrom(p, i, range.begin);
      const RowKind kind = MaskedSoftmaxRow(row + range.begin, range.end - range.begin, range.end - range.begin,
                                            p.scale, bias.row_bias, bias.key_bias, bias.cols, p.softcap);
      // Keys outside the row's range: 0, or NaN like the rest of a NaN row.
      const float fill = kind == RowKind::kNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
      std::fill(row, row + range.begin, fill);
      std::fill(row + range.end, row + p.lk, fill);
    }
    Gemm(rows, p.dv, ke - kb, logits + kb, ld, 1, p.v_packed.At(kb, 0), out, p.out_stride, nullptr, false);
    AddNonFiniteValueRows(p, logits + kb, ld, 1, i0, rows, kb, ke - kb, out);
  }
}

// st (cols, n; row stride kOnlineQueries) = K[j0, j0 + cols) · Q_blockᵀ, with qt = Q_blockᵀ (dk, n) packed and
// j0 a multiple of 4. p.k_packed holds K in PackA's layout: groups of 4 keys interleaved (one 4-row tile each),
// then the last lk % 4 keys as contiguous rows. A group may reach past cols: those rows are computed, not used.
HWY_INLINE void TransposedLogits(const HeadProblem& p, size_t j0, size_t cols, const PackedB& qt, size_t n,
                                 float* HWY_RESTRICT st) {
  if (p.dk == 0) {  // no products: every logit is 0 (qt is empty, its data may be null: no tile may offset it)
    for (size_t j = 0; j < cols; ++j) std::fill_n(st + j * kOnlineQueries, n, 0.0f);
    return;
  }
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  const size_t grouped_end = p.lk / 4 * 4;
  for (size_t j = 0; j < cols;) {
    const size_t key = j0 + j;
    const ATile keys{p.k_packed + key * p.dk, 1, 0};
    if (key < grouped_end) {
      for (size_t c = 0; c < n; c += width) {
        GemmTileAt<4, 4>(c, n, p.dk, keys, qt, st + j * kOnlineQueries, kOnlineQueries, nullptr, 0);
      }
      j += 4;
    } else {
      for (size_t c = 0; c < n; c += width) {
        GemmTileAt<1, 1>(c, n, p.dk, keys, qt, st + j * kOnlineQueries, kOnlineQueries, nullptr, 0);
      }
      j += 1;
    }
  }
}

// Online path. st holds kKeyTile * kOnlineQueries floats (a transposed logit tile); qt_buffer takes the packed
// query block.
HWY_INLINE void AttendHeadOnline(const HeadProblem& p, float* HWY_RESTRICT st, std::vector<float>& qt_buffer) {
  constexpr size_t kW = kOnlineQueries;
  const size_t width = 2 * hn::Lanes(hn::ScalableTag<float>());
  OnlineColumnState<kW> state;
  HWY_ALIGN float rescale[kW];
  for (size_t i0 = 0; i0 < p.lq; i0 += kW) {
    const size_t rows = std::min(kW, p.lq - i0);
    const KeyRange block = BlockRange(p, i0, rows);
    const size_t key_begin = block.begin / kKeyTile * kKeyTile, key_end = block.end;
    HWY_ALIGN int32_t row_begin[kW], row_end[kW];
    bool ranged = false;  // some row sees less than [key_begin, key_end)
    for (size_t r = 0; r < kW; ++r) {
      const KeyRange range = r < rows ? VisibleRange(p, i0 + r) : KeyRange{key_begin, key_end};
      row_begin[r] = static_cast<int32_t>(range.begin);
      row_end[r] = static_cast<int32_t>(range.end);
      ranged = ranged || range.begin > key_begin || range.end < key_end;
    }
    const size_t n = (rows + width - 1) / width * width;  // whole column tiles: Qᵀ's panel is zero-padded
    const PackedB qt = PackB(p.q + i0 * p.q_stride, p.q_stride, p.dk, rows, /*transposed=*/true, qt_buffer);
    float* out = p.out + i0 * p.out_stride;
    state.Reset();
    // Tiles outside [key_begin, key_end) are fully masked: skipped. The first tile writes out, the others add to
    // it; with no tile, the rows are zeroed below (sum 0).
    for (size_t j0 = key_begin; j0 < key_end; j0 += kKeyTile) {
      const size_t cols = std::min(kKeyTile, key_end - j0);
      TransposedLogits(p, j0, cols, qt, n, st);
      HWY_ALIGN int32_t tile_begin[kW], tile_end[kW];  // row ranges relative to the tile
      for (size_t r = 0; r < kW; ++r) {
        tile_begin[r] = row_begin[r] - static_cast<int32_t>(j0);
        tile_end[r] = row_end[r] - static_cast<int32_t>(j0);
      }
      const ColumnTileMask<kW> mask{i0,
                                    j0,
                                    rows,
                                    ranged,
                                    tile_begin,
                                    tile_end,
                                    p.row_bias && j0 < p.mask_cols ? RowBias(p, i0) + j0 : nullptr,
                                    p.row_stride,
                                    p.key_bias && j0 < p.mask_cols ? p.key_bias + j0 : nullptr,
                                    p.mask_cols > j0 ? p.mask_cols - j0 : 0};
      OnlineSoftmaxColumns<kW>(st, cols, p.scale, p.softcap, mask, state, rescale);
      const int init = j0 == key_begin ? 0 : 2;  // (the first tile's rescale is 0: out is not yet written)
      if (init == 2) {
        for (size_t r = 0; r < rows; ++r) {
          if (rescale[r] != 1.0f) ScaleRow(out + r * p.out_stride, p.dv, rescale[r]);
        }
      }
      // out (rows, dv) (+)= P (rows, cols) · V[j0, j0 + cols): Pᵀ = st is the left operand with step kW.
      const PackedB v_tile = p.v_packed.At(j0, 0);
      for (size_t c = 0; c < p.dv; c += width) {
        size_t r = 0;
        for (; r + 4 <= rows; r += 4) {
          GemmTileAt<4, kW>(c, p.dv, cols, ATile{st + r, 1, 0}, v_tile, out + r * p.out_stride, p.out_stride, nullptr,
                            init);
        }
        for (; r < rows; ++r) {
          GemmTileAt<1, kW>(c, p.dv, cols, ATile{st + r, 1, 0}, v_tile, out + r * p.out_stride, p.out_stride, nullptr,
                            init);
        }
      }
      AddNonFiniteValueRows(p, st, 1, kW, i0, rows, j0, cols, out);
    }
    for (size_t r = 0; r < rows; ++r) {
      float* row = out + r * p.out_stride;
      if (state.sum[r] == 0.0f) {
        ZeroRow(row, p.dv);  // fully masked row
      } else {
        ScaleRow(row, p.dv, 1.0f / state.sum[r]);
      }
    }
  }
}

// Reusable buffers of AttendHead.
struct HeadScratch {
  std::vector<float> k, v, logits, qt;
  std::vector<size_t> nonfinite_v_rows;
};

// Packs `k` (lk, dk) with row stride k_stride and p.v into scratch and points p's packed fields at them (the
// exact path's layout when p.weights, else the online one). Heads that read the same keys and values (grouped
// queries) may share the packing: copy the packed fields (SharePacking).
HWY_INLINE void PackHeadKV(HeadProblem& p, const float* HWY_RESTRICT k, size_t k_stride, HeadScratch& scratch) {
  if (p.weights) {
    p.kt = PackB(k, k_stride, p.dk, p.lk, /*transposed=*/true, scratch.k);
  } else {
    if (scratch.k.size() < p.lk * p.dk) scratch.k.resize(p.lk * p.dk);
    PackA(p.lk, p.dk, k, k_stride, 1, scratch.k.data());
    p.k_packed = scratch.k.data();
  }
  p.v_packed = PackB(p.v, p.v_stride, p.lk, p.dv, /*transposed=*/false, scratch.v);
  scratch.nonfinite_v_rows.clear();
  for (size_t j = 0; j < p.lk; ++j) {
    const float* row = p.v + j * p.v_stride;
    if (!AllFinite(row, p.dv)) {
      scratch.nonfinite_v_rows.push_back(j);
      for (size_t c = 0; c < p.dv; ++c)
        scratch.v[(c / kPanel) * p.v_packed.panel_stride + j * kPanel + c % kPanel] = 0.0f;
    }
  }
  p.nonfinite_v_rows = scratch.nonfinite_v_rows.data();
  p.num_nonfinite_v_rows = scratch.nonfinite_v_rows.size();
}

// Gives `to` the packed keys and values of `from` (same keys, values and path).
HWY_INLINE void SharePacking(const HeadProblem& from, HeadProblem& to) {
  to.kt = from.kt;
  to.k_packed = from.k_packed;
  to.v_packed = from.v_packed;
  to.nonfinite_v_rows = from.nonfinite_v_rows;
  to.num_nonfinite_v_rows = from.num_nonfinite_v_rows;
}

// The two entry points into one head's GEMMs, declared here and compiled once per target in kernels_heads.cc
// rather than inlined at every caller (each holds several whole GEMMs: the SDPA forward and backward and the MHA
// forward would compile them three times over).
//
// Runs one head whose keys and values are packed (PackHeadKV); lk > 0.
void RunPackedHead(const HeadProblem& p, HeadScratch& scratch);

// scores (lq, lk) of one head at `stage` (ScoresStage 1, 2, 3): s = (q · k) · scale for every key (1); then
// c · tanh(s / c) when softcap c > 0 (2); then plus the biases, -inf wherever a bias is -inf or the key is
// outside the row's range (3). k (lk, dk) with row stride k_stride.
void HeadScores(const HeadProblem& p, const float* HWY_RESTRICT k, size_t k_stride, int stage,
                float* HWY_RESTRICT scores, std::vector<float>& pack);

// Zeroes the output rows (and weights) of a head without keys or queries; returns whether there is nothing else
// to do.
HWY_INLINE bool TrivialHead(const HeadProblem& p) {
  if (p.lq == 0) return true;
  if (p.lk == 0) {  // no key: every row is fully masked (and there are no weights)
    for (size_t i = 0; i < p.lq; ++i) ZeroRow(p.out + i * p.out_stride, p.dv);
    return true;
  }
  return false;
}

// Runs one head; `k` (lk, dk) with row stride k_stride and v are packed first.
HWY_INLINE void AttendHead(HeadProblem p, const float* HWY_RESTRICT k, size_t k_stride, HeadScratch& scratch) {
  static_assert(kKeyTile % kPanel == 0, "key tiles start at panel boundaries");
  if (TrivialHead(p)) return;
  PackHeadKV(p, k, k_stride, scratch);
  RunPackedHead(p, scratch);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_ATTENTION_INL_H_ toggle
