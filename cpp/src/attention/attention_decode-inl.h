// Attention of a few query rows over keys and values read in place (decoding with a KV cache: each key/value
// head's rows are contiguous, (lk, hd) with row stride kv_stride), for the query heads of one grouped-query group
// at once: one pass over K and one over V serve all of the group's rows, and nothing is packed or copied, so a
// step costs O(lk · hd) reads of the cache (AttendHead would pack kᵀ and v per query head first).
//   rows r = (t, i): query head t of the group (t < heads), query position i (i < lq)
//   logits[r][j] = q_r · k_j                                          j < lk
//   w[r] = softmax(logits[r] · scale + row_bias_r + key_bias)        (MaskedSoftmaxRow: −∞ bias masks a key)
//   out_r = Σ_j w[r][j] · v_j                                         (dv = hd)
// causal (the cache's lower-right alignment): row (t, i) sees only keys j < lk − lq + 1 + i, its weights beyond
// are 0.
// NaN policy as AttendHead's: a key masked or hidden for row r adds nothing to out_r even if v_j holds NaN
// or ±∞; an attended key follows IEEE even with weight 0 (0 · NaN = NaN); a NaN row (kNaN) gives a NaN output,
// a fully masked row 0. Every row's arithmetic depends only on that row: any split over threads gives the same
// bits. Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_ATTENTION_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_ATTENTION_DECODE_INL_H_
#undef ATTNLAB_SRC_ATTENTION_ATTENTION_DECODE_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_ATTENTION_DECODE_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "cpp/src/ops/softmax-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Query positions per call, and query heads per key/value head, up to which MHA's KV-cache path takes this kernel
// (decoding: one token per step).
constexpr size_t kDecodeMaxQueries = 4;
constexpr size_t kDecodeMaxGroup = 64;
constexpr size_t kDecodeMaxRows = kDecodeMaxQueries * kDecodeMaxGroup;

// One key/value head and the query rows that read it. Row (t, i) of q, out, weights and row_bias starts at
// base + t * head_stride + i * row_stride (weights' and row_bias's row strides: lk and mask_cols).
struct DecodeGroup {
  size_t heads, lq, lk, hd;
  float scale;
  const float* q;
  size_t q_head_stride, q_row_stride;
  const float* k;  // key j: k + j * kv_stride; value j: v + j * kv_stride
  const float* v;
  size_t kv_stride;
  float* out;
  size_t out_head_stride, out_row_stride;
  float* weights;  // or null
  size_t weights_head_stride;
  const float* row_bias;  // or null
  size_t row_bias_head_stride;
  const float* key_bias;  // or null
  size_t mask_cols;       // biases cover keys [0, mask_cols)
  bool causal = false;    // lower-right (lk >= lq): row (t, i) sees keys [0, lk - lq + 1 + i) only
};

// s[0..kKeys) = q · k_j for the kKeys key rows k + j * stride (hd features): whole vectors, then single lanes.
template <size_t kKeys>
HWY_INLINE void DotKeys(const float* HWY_RESTRICT q, const float* HWY_RESTRICT k, size_t stride, size_t hd,
                        float* HWY_RESTRICT s) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> acc[kKeys];
  for (size_t j = 0; j < kKeys; ++j) acc[j] = hn::Zero(d);
  size_t c = 0;
  for (; c + N <= hd; c += N) {
    const auto qv = hn::LoadU(d, q + c);
    for (size_t j = 0; j < kKeys; ++j) acc[j] = hn::MulAdd(qv, hn::LoadU(d, k + j * stride + c), acc[j]);
  }
  for (size_t j = 0; j < kKeys; ++j) {
    float tail = 0.0f;
    for (size_t cc = c; cc < hd; ++cc) tail += q[cc] * k[j * stride + cc];
    s[j] = hn::GetLane(hn::SumOfLanes(d, acc[j])) + tail;
  }
}

// out rows (kRows of them, out[r]) = Σ_j w[r][j] · v_j over columns [c, c + kCols vectors), all keys attended:
// kRows x kCols accumulators (at most 8: with the loaded values they fit the registers V8 gives wasm), each
// summed in key order.
template <size_t kRows, size_t kCols>
HWY_INLINE void WeightedValueTile(const float* const* w, size_t lk, const float* HWY_RESTRICT v, size_t stride,
                                  size_t c, float* const* out) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<decltype(d)> acc[kRows][kCols];
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kCols; ++x) acc[r][x] = hn::Zero(d);
  }
  const float* vj = v + c;
  for (size_t j = 0; j < lk; ++j, vj += stride) {
    hn::Vec<decltype(d)> vv[kCols];
    for (size_t x = 0; x < kCols; ++x) vv[x] = hn::LoadU(d, vj + x * N);
    for (size_t r = 0; r < kRows; ++r) {
      const auto wv = hn::Set(d, w[r][j]);
      for (size_t x = 0; x < kCols; ++x) acc[r][x] = hn::MulAdd(wv, vv[x], acc[r][x]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t x = 0; x < kCols; ++x) hn::StoreU(acc[r][x], d, out[r] + c + x * N);
  }
}

// Columns [0, hd) of kRows rows: the widest tiles (8 / kRows vectors, then 4, 2, 1) that fit, then single columns
// (in key order, as the tiles). Which tile computes a column depends on hd only.
template <size_t kRows>
HWY_INLINE void WeightedValueRows(const float* const* w, size_t lk, const float* HWY_RESTRICT v, size_t stride,
                                  size_t hd, float* const* out) {
  constexpr size_t kWide = 8 / kRows;
  const size_t N = hn::Lanes(hn::ScalableTag<float>());
  size_t c = 0;
  for (; c + kWide * N <= hd; c += kWide * N) WeightedValueTile<kRows, kWide>(w, lk, v, stride, c, out);
  if (kWide > 4 && c + 4 * N <= hd) {
    WeightedValueTile<kRows, HWY_MIN(kWide, 4)>(w, lk, v, stride, c, out);
    c += HWY_MIN(kWide, 4) * N;
  }
  if (kWide > 2 && c + 2 * N <= hd) {
    WeightedValueTile<kRows, HWY_MIN(kWide, 2)>(w, lk, v, stride, c, out);
    c += HWY_MIN(kWide, 2) * N;
  }
  for (; c + N <= hd; c += N) WeightedValueTile<kRows, 1>(w, lk, v, stride, c, out);
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t cc = c; cc < hd; ++cc) {
      float sum = 0.0f;
      for (size_t j = 0; j < lk; ++j) sum += w[r][j] * v[j * stride + cc];
      out[r][cc] = sum;
    }
  }
}

// out_r = Σ_j w_r[j] · v_j for `rows` rows (w[r], out[r]), every key attended: up to 4 rows per pass over V.
HWY_INLINE void WeightedValues(const float* const* w, size_t rows, size_t lk, const float* HWY_RESTRICT v,
                               size_t stride, size_t hd, float* const* out) {
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) WeightedValueRows<4>(w + r, lk, v, stride, hd, out + r);
  if (rows - r >= 2) {
    WeightedValueRows<2>(w + r, lk, v, stride, hd, out + r);
    r += 2;
  }
  if (r < rows) WeightedValueRows<1>(w + r, lk, v, stride, hd, out + r);
}

// MaskedSoftmaxRow of x (n) over its visible keys [0, visible); keys [visible, n) get weight 0 whatever their logit
// or bias holds. The sum still runs over all n entries, the hidden ones as −∞ (exp gives exactly 0), so the
// weights are the bits of MaskedSoftmaxRow with a −∞ mask over the hidden keys (the lane grouping of the sum
// depends on n).
HWY_INLINE RowKind SoftmaxVisibleKeys(float* HWY_RESTRICT x, size_t n, size_t visible, float scale,
                                      const float* HWY_RESTRICT row_bias, const float* HWY_RESTRICT key_bias,
                                      size_t mask_cols) {
  if (visible == n) return MaskedSoftmaxRow(x, n, n, scale, row_bias, key_bias, mask_cols);
  const RowMax m = ScaleBiasMax(x, visible, scale, row_bias, key_bias, mask_cols);
  if (m.has_nan || m.max == kPosInf) {
    std::fill(x, x + n, std::numeric_limits<float>::quiet_NaN());
    return RowKind::kNaN;
  }
  if (m.max == kNegInf) {
    ZeroRow(x, n);
    return RowKind::kFullyMasked;
  }
  std::fill(x + visible, x + n, kNegInf);
  ScaleRow(x, n, 1.0f / ExpSubtractSum(x, n, m.max));
  return RowKind::kAttends;
}

// This thread's logits scratch for AttendDecodeGroup (grow-only: a step allocates nothing once it has grown).
inline std::vector<float>& DecodeScratch() {
  static thread_local std::vector<float> logits;
  return logits;
}

// Runs one group (heads <= kDecodeMaxGroup, lq <= kDecodeMaxQueries); `logits` is grow-only scratch (heads · lq · lk
// floats once grown).
HWY_INLINE void AttendDecodeGroup(const DecodeGroup& g, std::vector<float>& logits) {
  const size_t rows = g.heads * g.lq, lk = g.lk, hd = g.hd;
  if (rows == 0) return;
  if (logits.size() < rows * lk) logits.resize(rows * lk);
  const float* q_rows[kDecodeMaxRows];
  float* out_rows[kDecodeMaxRows];
  const float* w_rows[kDecodeMaxRows];
  for (size_t t = 0; t < g.heads; ++t) {
    for (size_t i = 0; i < g.lq; ++i) {
      const size_t r = t * g.lq + i;
      q_rows[r] = g.q + t * g.q_head_stride + i * g.q_row_stride;
      out_rows[r] = g.out + t * g.out_head_stride + i * g.out_row_stride;
      w_rows[r] = logits.data() + r * lk;
    }
  }
  // Logits: 4 keys at a time (their rows stay in L1 while every query row reads them).
  size_t j = 0;
  for (; j + 4 <= lk; j += 4) {
    for (size_t r = 0; r < rows; ++r)
      DotKeys<4>(q_rows[r], g.k + j * g.kv_stride, g.kv_stride, hd, &logits[r * lk + j]);
  }
  for (; j < lk; ++j) {
    for (size_t r = 0; r < rows; ++r)
      DotKeys<1>(q_rows[r], g.k + j * g.kv_stride, g.kv_stride, hd, &logits[r * lk + j]);
  }
  // Softmax per row; rows whose result is not a plain weighted sum of every key are handled on their own below.
  // Causal with several queries: every row takes the per-row sum below, the last one (which sees every key) too,
  // so that a step gives the bits it gave under a −∞ causal mask (the tiles' tail columns do not fuse the multiply
  // and add as the per-row sum does). With lq == 1 the limit is lk: nothing changes.
  size_t plain[kDecodeMaxRows], num_plain = 0, visible[kDecodeMaxRows];
  RowKind kinds[kDecodeMaxRows];
  const bool biased = (g.row_bias || g.key_bias) && g.mask_cols > 0;
  const bool limited = g.causal && g.lq > 1;
  for (size_t t = 0; t < g.heads; ++t) {
    for (size_t i = 0; i < g.lq; ++i) {
      const size_t r = t * g.lq + i;
      const float* row_bias = g.row_bias ? g.row_bias + t * g.row_bias_head_stride + i * g.mask_cols : nullptr;
      visible[r] = limited ? lk - g.lq + 1 + i : lk;
      kinds[r] = SoftmaxVisibleKeys(&logits[r * lk], lk, visible[r], g.scale, row_bias, g.key_bias, g.mask_cols);
      if (kinds[r] == RowKind::kAttends && !biased && !limited) plain[num_plain++] = r;
      if (g.weights) {
        std::copy(&logits[r * lk], &logits[r * lk] + lk, g.weights + t * g.weights_head_stride + i * lk);
      }
    }
  }
  // Plain rows: one pass over V for all of them, 4 rows per register tile.
  const float* plain_w[kDecodeMaxRows];
  float* plain_out[kDecodeMaxRows];
  for (size_t p = 0; p < num_plain; ++p) {
    plain_w[p] = w_rows[plain[p]];
    plain_out[p] = out_rows[plain[p]];
  }
  WeightedValues(plain_w, num_plain, lk, g.v, g.kv_stride, hd, plain_out);
  // The others: NaN or fully masked rows, and rows with a mask or a causal limit (masked and hidden keys skipped,
  // so that their values, NaN or not, reach nothing).
  for (size_t t = 0; t < g.heads; ++t) {
    for (size_t i = 0; i < g.lq; ++i) {
      const size_t r = t * g.lq + i;
      if (kinds[r] == RowKind::kAttends && !biased && !limited) continue;
      float* out = out_rows[r];
      if (kinds[r] != RowKind::kAttends) {
        std::fill(out, out + hd,
                  kinds[r] == RowKind::kNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f);  // (fully masked: 0)
        continue;
      }
      const float* row_bias = g.row_bias ? g.row_bias + t * g.row_bias_head_stride + i * g.mask_cols : nullptr;
      ZeroRow(out, hd);
      for (size_t jj = 0; jj < visible[r]; ++jj) {
        if (jj < g.mask_cols && (row_bias ? row_bias[jj] : 0.0f) + (g.key_bias ? g.key_bias[jj] : 0.0f) == kNegInf) {
          continue;  // masked (as Attends)
        }
        const float w = w_rows[r][jj];
        const float* vj = g.v + jj * g.kv_stride;
        ForEachLane(0, hd, [&](auto dd, size_t c) HWY_ATTR {
          hn::StoreU(hn::MulAdd(hn::Set(dd, w), hn::LoadU(dd, vj + c), hn::LoadU(dd, out + c)), dd, out + c);
        });
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_ATTENTION_DECODE_INL_H_ toggle
