// Masked, max-subtracted softmax over rows of logits, and the online (running max and sum) variant used by the
// tiled attention path, over logit tiles stored transposed (one query per column). Per-target code: include after
// hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_SOFTMAX_INL_H_
#undef ATTNLAB_SRC_OPS_SOFTMAX_INL_H_
#else
#define ATTNLAB_SRC_OPS_SOFTMAX_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// v + b where b is a key's bias sum, or -inf where b is -inf: the key is masked whatever its logit holds (so a
// NaN or ∞ logit of a masked key reaches nothing); a NaN bias makes the logit NaN.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V AddBias(D d, V v, V b) {
  const V neg_inf = hn::Set(d, kNegInf);
  return hn::IfThenElse(hn::Eq(b, neg_inf), neg_inf, hn::Add(v, b));
}

// c · tanh(v / c) (logit soft-capping, c > 0): finite for ±∞, NaN for NaN. Tanh sees only x = v / c clamped to
// [-20, 20] with NaN as 0 (tanh(±20) is ±1 in float, as Tanh gives beyond 18.7): its Expm1 converts 2|x| to int,
// which for NaN, ±∞ or |x| > 2^31 is undefined on EMU128 (a scalar cast) and UBSan stops it. NaN is put back after.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Softcap(D d, V v, float cap) {
  const V x = hn::Div(v, hn::Set(d, cap));
  const auto nan = hn::IsNaN(x);
  const V bounded = hn::Min(hn::Max(hn::IfThenZeroElse(nan, x), hn::Set(d, -20.0f)), hn::Set(d, 20.0f));
  return hn::IfThenElse(nan, x, hn::Mul(hn::Tanh(d, bounded), hn::Set(d, cap)));
}

// Largest logit of a row and whether any logit is NaN.
struct RowMax {
  float max;
  bool has_nan;
};

// x[j] = softcap(x[j] * scale) + row_bias[j] + key_bias[j] for j in [0, n) (softcap only when cap > 0; biases only on j
// < mask_cols; either may be null). A bias sum of -inf masks the key like PyTorch's masked_fill: x[j] becomes -inf
// whatever the logit holds, so a NaN or ∞ logit of a masked key reaches nothing; a NaN in either bias makes x[j] NaN.
// Returns the maximum (-inf when n == 0) and whether a NaN remains (Highway's Max may skip NaN: the caller must see it
// here).
HWY_INLINE RowMax ScaleBiasMax(float* HWY_RESTRICT x, size_t n, float scale, const float* HWY_RESTRICT row_bias,
                               const float* HWY_RESTRICT key_bias, size_t mask_cols, float cap = 0.0f) {
  const hn::ScalableTag<float> d;
  auto vmax = hn::Set(d, kNegInf);
  auto vnan = hn::Zero(d);  // 1 in lanes that saw a NaN
  float smax = kNegInf;
  bool snan = false;
  const size_t biased = std::min(n, mask_cols);
  auto step = [&](auto dd, size_t j, bool with_bias) HWY_ATTR {
    auto v = hn::Mul(hn::LoadU(dd, x + j), hn::Set(dd, scale));
    if (cap > 0.0f) v = Softcap(dd, v, cap);
    if (with_bias && (row_bias || key_bias)) {
      // The biases' sum: NaN when either is NaN (whatever the other holds: PyTorch adds float masks), else -inf
      // when either is -inf (masked, whatever the logit holds).
      const auto b = row_bias && key_bias ? hn::Add(hn::LoadU(dd, row_bias + j), hn::LoadU(dd, key_bias + j))
                                          : hn::LoadU(dd, (row_bias ? row_bias : key_bias) + j);
      v = AddBias(dd, v, b);
    }
    hn::StoreU(v, dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      const float lane = hn::GetLane(v);
      smax = std::max(smax, lane);
      snan = snan || std::isnan(lane);
    } else {
      vmax = hn::Max(vmax, v);
      vnan = hn::Max(vnan, hn::IfThenElseZero(hn::IsNaN(v), hn::Set(dd, 1.0f)));
    }
  };
  ForEachLane(0, biased, [&](auto dd, size_t j) HWY_ATTR { step(dd, j, true); });
  ForEachLane(biased, n, [&](auto dd, size_t j) HWY_ATTR { step(dd, j, false); });
  return RowMax{std::max(smax, MaxLane(d, vmax)), snan || MaxLane(d, vnan) > 0.0f};
}

// max(v, lo), NaN staying NaN. Highway's Max(lo, v) returns v for a NaN v on x86 and in wasm (pmax, one
// instruction), but skips the NaN on EMU128 and SCALAR: there, a compare and select.
template <class V>
HWY_INLINE V ClampBelow(V v, V lo) {
#if (HWY_ARCH_X86 || HWY_ARCH_WASM) && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
  return hn::Max(lo, v);
#else
  return hn::IfThenElse(hn::Lt(v, lo), lo, v);
#endif
}

// exp(x) for x <= 0 (or -inf), as softmax needs it: exactly 0 for x < -87.7 (so -inf, a masked key, gives 0),
// else 2^n · 2^f with t = x·log2(e) = n + f, n = round(t), |f| <= 1/2 and a degree-5 fit of 2^f (relative error
// 1.9e-7). The error of t itself grows with |x| (5.6e-7 relative where exp(x) > 1e-3), so the absolute error
// stays below 1.3e-7: all that matters for weights in [0, 1]. Half the operations of hn::Exp (whose full-range
// argument reduction and float-to-int conversion a softmax does not need). NaN gives NaN.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExpNonPositive(D d, V x) {
  const hn::RebindToSigned<D> di;
  // t >= -127 keeps 2^n a float: n = -127 gives exponent bits 0, the float 0, so t < -126.5 gives exactly 0.
  const V t = ClampBelow(hn::Mul(x, hn::Set(d, 1.44269504088896341f)), hn::Set(d, -127.0f));
  const V magic = hn::Set(d, 12582912.0f);  // 1.5 · 2^23: t + magic rounds t to an integer in the low bits
  const V r = hn::Add(t, magic);
  const V f = hn::Sub(t, hn::Sub(r, magic));
  V p = hn::Set(d, 0.0013264723820611835f);
  p = hn::MulAdd(p, f, hn::Set(d, 0.009671512991189957f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.05550733581185341f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.24022242426872253f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.6931470036506653f));
  p = hn::MulAdd(p, f, hn::Set(d, 1.0f));
  // 2^n: bits(r) = bits(magic) + n, so (bits(r) - bits(magic) + 127) << 23 is the float 2^n.
  const auto pow2n = hn::ShiftLeft<23>(hn::Sub(hn::BitCast(di, r), hn::Set(di, 0x4B400000 - 127)));
  return hn::Mul(p, hn::BitCast(d, pow2n));
}

// x[j] = exp(x[j] - max) for j in [0, n), max >= every x[j]; returns the sum.
HWY_INLINE float ExpSubtractSum(float* HWY_RESTRICT x, size_t n, float max) {
  const hn::ScalableTag<float> d;
  auto vsum = hn::Zero(d);
  float ssum = 0.0f;
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto e = ExpNonPositive(dd, hn::Sub(hn::LoadU(dd, x + j), hn::Set(dd, max)));
    hn::StoreU(e, dd, x + j);
    if constexpr (hn::MaxLanes(decltype(dd)()) == 1) {
      ssum += hn::GetLane(e);
    } else {
      vsum = hn::Add(vsum, e);
    }
  });
  return ssum + hn::GetLane(hn::SumOfLanes(d, vsum));
}

enum class RowKind { kAttends, kFullyMasked, kNaN };

// Softmax of one row of raw logits q·k in place: x (n) → softmax(x · scale + biases) over the first `valid`
// entries (softcapped first when cap > 0), 0 for entries [valid, n) (hidden keys). A row with no attendable key (every
// logit -inf) becomes 0 (kFullyMasked). A NaN or +∞ among the attended logits makes the whole row NaN (kNaN; IEEE: NaN,
// or ∞ − ∞), never a hidden "masked".
HWY_INLINE RowKind MaskedSoftmaxRow(float* HWY_RESTRICT x, size_t n, size_t valid, float scale,
                                    const float* HWY_RESTRICT row_bias, const float* HWY_RESTRICT key_bias,
                                    size_t mask_cols, float cap = 0.0f) {
  ZeroRow(x + valid, n - valid);
  const RowMax m = ScaleBiasMax(x, valid, scale, row_bias, key_bias, mask_cols, cap);
  if (m.has_nan || m.max == kPosInf) {
    std::fill(x, x + n, std::numeric_limits<float>::quiet_NaN());
    return RowKind::kNaN;
  }
  if (m.max == kNegInf) {
    ZeroRow(x, valid);
    return RowKind::kFullyMasked;
  }
  const float sum = ExpSubtractSum(x, valid, m.max);
  ScaleRow(x, valid, 1.0f / sum);
  return RowKind::kAttends;
}

// Which keys each query of a transposed logit tile sees (OnlineSoftmaxColumns): row j of the tile is key
// first_key + j, column q is query first_query + q; only the first `queries` columns are real queries.
// Query q sees only the tile's rows [key_begin[q], key_end[q]) (its causal / window / valid-length range);
// `ranged` false: every row.
template <size_t kWidth>
struct ColumnTileMask {
  size_t first_query, first_key, queries;
  bool ranged;
  const int32_t* key_begin;  // (kWidth), aligned
  const int32_t* key_end;
  const float* row_bias;      // (queries, ·), row stride row_bias_stride, from key first_key on; may be null
  ptrdiff_t row_bias_stride;  // (−1: a Toeplitz bias, row q starting q floats before row 0)
  const float* key_bias;      // from key first_key on; may be null
  size_t bias_keys;           // the tile's rows [0, bias_keys) have biases
};

// Running state of kWidth query rows of the online (flash-style) softmax, one lane each: the largest logit seen
// and the sum of exp(logit - max) over the keys seen so far (NaN once the row's result is NaN).
template <size_t kWidth>
struct OnlineColumnState {
  HWY_ALIGN float max[kWidth];
  HWY_ALIGN float sum[kWidth];

  void Reset() {
    std::fill(max, max + kWidth, kNegInf);
    std::fill(sum, sum + kWidth, 0.0f);
  }
};

// Folds one tile of raw logits q·k, stored transposed, into `state`: x (n keys, kWidth queries; row stride
// kWidth) becomes exp(softcap(x · scale) + bias - new max), 0 where a key is hidden (range) or masked (bias sum -inf,
// whatever the logit holds), and rescale[q] the factor exp(old max - new max) by which query q's accumulated
// output must be multiplied. One lane per query: max and sum need no horizontal reduction. A NaN or +∞ among a
// query's attended logits makes its sum NaN for good (ExpNonPositive passes NaN on, and +∞ - +∞ is NaN), so its
// result is NaN; a query with nothing attendable yet keeps max -inf and sum 0.
template <size_t kWidth>
HWY_INLINE void OnlineSoftmaxColumns(float* HWY_RESTRICT x, size_t n, float scale, float cap,
                                     const ColumnTileMask<kWidth>& mask, OnlineColumnState<kWidth>& state,
                                     float* HWY_RESTRICT rescale) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kN = hn::MaxLanes(decltype(d)());
  static_assert(kWidth % kN == 0, "whole vectors of queries");
  constexpr size_t kGroups = kWidth / kN;
  const V neg_inf = hn::Set(d, kNegInf), vscale = hn::Set(d, scale);
  V vmax[kGroups], sub[kGroups], vsum[kGroups];
  for (size_t g = 0; g < kGroups; ++g) vmax[g] = neg_inf;
  // A tile without bias and causal hiding, with scale > 0, needs only the maximum of the raw logits:
  // fl(scale · max x) = max fl(scale · x) (rounding is monotonic), and pass 2 scales as it goes.
  const bool biased = mask.bias_keys > 0 && (mask.row_bias || mask.key_bias);
  const bool hides = mask.ranged;
  const bool raw = scale > 0.0f && !biased && !hides && !(cap > 0.0f);
  // Pass 1: running maximum (and, unless raw, scale and mask in place).
  for (size_t j = 0; j < n; ++j) {
    float* HWY_RESTRICT row = x + j * kWidth;
    if (raw) {
      for (size_t g = 0; g < kGroups; ++g) vmax[g] = hn::Max(vmax[g], hn::LoadU(d, row + g * kN));
      continue;
    }
    const bool row_biased = biased && j < mask.bias_keys;
    for (size_t g = 0; g < kGroups; ++g) {
      V v = hn::Mul(hn::LoadU(d, row + g * kN), vscale);
      if (cap > 0.0f) v = Softcap(d, v, cap);
      if (row_biased) {  // the biases' sum, as in ScaleBiasMax
        HWY_ALIGN float bias[kN];
        for (size_t l = 0; l < kN; ++l) {
          const size_t q = g * kN + l;
          bias[l] = (mask.key_bias ? mask.key_bias[j] : 0.0f) +
                    (mask.row_bias && q < mask.queries
                         ? mask.row_bias[static_cast<ptrdiff_t>(q) * mask.row_bias_stride + static_cast<ptrdiff_t>(j)]
                         : 0.0f);
        }
        v = AddBias(d, v, hn::Load(d, bias));
      }
      if (hides) {  // outside [key_begin, key_end) of its query
        const auto jj = hn::Set(di, static_cast<int32_t>(j));
        const auto hidden = hn::RebindMask(d, hn::Or(hn::Lt(jj, hn::Load(di, mask.key_begin + g * kN)),
                                                     hn::Not(hn::Lt(jj, hn::Load(di, mask.key_end + g * kN)))));
        v = hn::IfThenElse(hidden, neg_inf, v);
      }
      hn::StoreU(v, d, row + g * kN);
      vmax[g] = hn::Max(vmax[g], v);
    }
  }
  // The new maximum; a query with nothing attendable so far subtracts 0 (its logits are all -inf).
  for (size_t g = 0; g < kGroups; ++g) {
    const V old_max = hn::Load(d, state.max + g * kN);
    const V new_max = hn::Max(old_max, raw ? hn::Mul(vmax[g], vscale) : vmax[g]);
    sub[g] = hn::IfThenZeroElse(hn::Eq(new_max, neg_inf), new_max);
    hn::Store(ExpNonPositive(d, hn::Sub(old_max, sub[g])), d, rescale + g * kN);  // 0 while old max is -inf
    hn::Store(new_max, d, state.max + g * kN);
    vsum[g] = hn::Zero(d);
  }
  // Pass 2: probabilities and their sum, one group of queries at a time (one exp in flight: in wasm, several
  // would exceed V8's 15 SIMD registers).
  for (size_t g = 0; g < kGroups; ++g) {
    float* HWY_RESTRICT col = x + g * kN;
    for (size_t j = 0; j < n; ++j) {
      V v = hn::LoadU(d, col + j * kWidth);
      if (raw) v = hn::Mul(v, vscale);
      const V e = ExpNonPositive(d, hn::Sub(v, sub[g]));
      hn::StoreU(e, d, col + j * kWidth);
      vsum[g] = hn::Add(vsum[g], e);
    }
  }
  for (size_t g = 0; g < kGroups; ++g) {
    const V sum = hn::MulAdd(hn::Load(d, state.sum + g * kN), hn::Load(d, rescale + g * kN), vsum[g]);
    hn::Store(sum, d, state.sum + g * kN);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_SOFTMAX_INL_H_ toggle
