// Tests of cpp/src/ops/softmax-inl.h below the public API, on every compiled target, against float64 references:
// MaskedSoftmaxRow over row lengths 0…2N+1, misaligned rows and biases, causal cut-offs and -inf masks (and the NaN
// rules: a NaN or +inf logit a row attends makes the row NaN, a masked one reaches nothing); ExpNonPositive via
// ExpSubtractSum over [-100, 0]; OnlineSoftmaxColumns folding tiles of several sizes into the exact softmax.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/softmax_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <vector>

#include "cpp/src/ops/softmax-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

constexpr double kInfD = std::numeric_limits<double>::infinity();

// Reference softmax of logits z (−inf: masked); all 0 when every entry is masked.
std::vector<double> ReferenceSoftmax(const std::vector<double>& z) {
  double max = -kInfD;
  for (double x : z) max = std::max(max, x);
  std::vector<double> w(z.size(), 0.0);
  if (max == -kInfD) return w;
  double sum = 0;
  for (size_t j = 0; j < z.size(); ++j) sum += w[j] = std::exp(z[j] - max);
  for (double& x : w) x /= sum;
  return w;
}

// Weights within 1e-6 absolute and 1e-5 relative of the reference (ExpNonPositive: 1.3e-7 absolute).
bool Near(float w, double ref) { return std::fabs(w - ref) <= 1e-6 + 1e-5 * ref; }

// One MaskedSoftmaxRow call: n logits, the first `valid` visible, biases on the first mask_cols (bias_kind: bit 0
// row bias, bit 1 key bias; some entries -inf), `special` (NaN, +inf or 0 for none) at position `at`.
void CheckMaskedRow(size_t n, size_t valid, size_t mask_cols, int bias_kind, float special, size_t at, size_t misalign,
                    attnlab_test::Rng& rng, SweepResult& result) {
  const float scale = 0.37f;
  std::vector<float> x(misalign + n), row_bias(misalign + n), key_bias(misalign + n);
  for (float& v : x) v = rng.Uniform(-8.0f, 8.0f);
  for (std::vector<float>* bias : {&row_bias, &key_bias}) {
    for (float& v : *bias) v = rng.Bernoulli(0.25) ? -attnlab_test::kInf : rng.Uniform(-2.0f, 2.0f);
  }
  if (special != 0.0f && at < n) x[misalign + at] = special;
  const float* rb = bias_kind & 1 ? row_bias.data() + misalign : nullptr;
  const float* kb = bias_kind & 2 ? key_bias.data() + misalign : nullptr;
  std::vector<double> z(valid);
  bool nan = false;
  for (size_t j = 0; j < valid; ++j) {
    const double b = j < mask_cols ? (rb ? rb[j] : 0.0) + (kb ? kb[j] : 0.0) : 0.0;
    const double logit = static_cast<double>(x[misalign + j]) * scale;
    z[j] = b == -kInfD ? -kInfD : logit + b;  // a -inf bias masks whatever the logit holds
    nan = nan || std::isnan(z[j]) || z[j] == kInfD;
  }
  const std::vector<double> ref = ReferenceSoftmax(z);
  bool attends = false;
  for (double v : z) attends = attends || v != -kInfD;

  float* row = x.data() + misalign;
  const RowKind kind = MaskedSoftmaxRow(row, n, valid, scale, rb, kb, mask_cols);
  ++result.cases;
  const RowKind expected = nan ? RowKind::kNaN : attends ? RowKind::kAttends : RowKind::kFullyMasked;
  auto where = [&] {
    std::ostringstream os;
    os << "MaskedSoftmaxRow n " << n << " valid " << valid << " mask_cols " << mask_cols << " biases " << bias_kind
       << " special " << special << " at " << at << " misalign " << misalign << ": ";
    return os.str();
  };
  if (kind != expected) return result.Fail(where(), "kind ", int(kind), ", expected ", int(expected));
  double sum = 0;
  for (size_t j = 0; j < n; ++j) {
    if (nan ? !std::isnan(row[j]) : j >= valid ? row[j] != 0.0f : !Near(row[j], ref[j])) {
      return result.Fail(where(), "weight[", j, "] = ", row[j], ", reference ", nan ? NAN : j < valid ? ref[j] : 0.0);
    }
    sum += row[j];
  }
  if (kind == RowKind::kAttends && !(std::fabs(sum - 1.0) <= 1e-5)) return result.Fail(where(), "sum ", sum);
}

SweepResult MaskedRowSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(31);
  SweepResult result;
  const float specials[] = {0.0f, std::numeric_limits<float>::quiet_NaN(), attnlab_test::kInf};
  size_t v = 0;
  for (size_t n = 0; n <= 2 * lanes + 1; ++n) {
    for (const size_t valid : {n, n / 2}) {
      for (const size_t mask_cols : {size_t{0}, n / 3, n}) {
        for (int bias_kind = 0; bias_kind < 4; ++bias_kind) {
          for (const float special : specials) {
            ++v;
            CheckMaskedRow(n, valid, mask_cols, bias_kind, special, v % (n + 1), misalign[v % misalign.size()], rng,
                           result);
            if (result.Failed()) return result;
          }
        }
      }
    }
  }
  return result;
}

// ExpSubtractSum(x, n, 0) = exp(x) in place and its sum; x over [-100, 0] (0 below -87.7), plus -inf and NaN.
SweepResult ExpSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  SweepResult result;
  const size_t n = 100001;
  for (const size_t off : attnlab_test::Misalignments(lanes)) {
    std::vector<float> x(off + n + 2);
    for (size_t i = 0; i < n; ++i) x[off + i] = static_cast<float>(-100.0 * static_cast<double>(i) / (n - 1));
    x[off + n] = -attnlab_test::kInf;
    x[off + n + 1] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> in = x;
    const float sum = ExpSubtractSum(x.data() + off, n + 1, 0.0f);  // (not the NaN: the sum stays finite)
    ExpSubtractSum(x.data() + off + n + 1, 1, 0.0f);
    ++result.cases;
    double ref_sum = 0;
    for (size_t i = 0; i <= n; ++i) {
      const double ref = std::exp(static_cast<double>(in[off + i]));
      ref_sum += ref;
      const bool ok = in[off + i] < -87.7f ? x[off + i] == 0.0f : std::fabs(x[off + i] - ref) <= 1.3e-7;
      if (!ok) {
        result.Fail("exp(", in[off + i], ") = ", x[off + i], ", reference ", ref, " (misalign ", off, ")");
        return result;
      }
    }
    // Each lane sums n / lanes terms, then the lanes are added: float32 rounding at most that many times.
    const double tol = 1.2e-7 * static_cast<double>(n / lanes + lanes) * ref_sum + 1.3e-7 * static_cast<double>(n);
    if (!(std::fabs(sum - ref_sum) <= tol)) result.Fail("sum of exp ", sum, ", reference ", ref_sum);
    if (!std::isnan(x[off + n + 1])) result.Fail("exp(NaN) = ", x[off + n + 1]);
    if (result.Failed()) return result;
  }
  return result;
}

// OnlineSoftmaxColumns over `keys` keys in tiles of `tile`, kW query columns of which `queries` are real, causal
// from first_query, with row and key biases: the accumulated weights (rescaled per tile, divided by the final sum)
// must equal the exact softmax of each query's row.
constexpr size_t kW = HWY_MAX(16, 2 * hn::MaxLanes(hn::ScalableTag<float>()));

void CheckOnline(size_t keys, size_t tile, size_t queries, bool causal, bool biased, attnlab_test::Rng& rng,
                 SweepResult& result) {
  const float scale = biased ? 0.5f : 1.25f;
  const size_t first_query = causal ? 2 : 0;
  std::vector<float> logits(keys * kW), row_bias(queries * keys), key_bias(keys);
  for (float& v : logits) v = rng.Uniform(-6.0f, 6.0f);
  for (float& v : row_bias) v = rng.Bernoulli(0.2) ? -attnlab_test::kInf : rng.Uniform(-1.0f, 1.0f);
  for (float& v : key_bias) v = rng.Bernoulli(0.1) ? -attnlab_test::kInf : rng.Uniform(-1.0f, 1.0f);
  OnlineColumnState<kW> state;
  state.Reset();
  HWY_ALIGN float rescale[kW];
  std::vector<float> x(tile * kW);
  std::vector<std::vector<double>> acc(kW);  // per query: the unnormalised weights of the keys so far
  for (size_t j0 = 0; j0 < keys; j0 += tile) {
    const size_t n = std::min(tile, keys - j0);
    std::copy(logits.begin() + j0 * kW, logits.begin() + (j0 + n) * kW, x.begin());
    // Causal: query q sees keys j <= first_query + q, i.e. tile rows [-j0, first_query + q + 1 - j0).
    HWY_ALIGN int32_t begin[kW], end[kW];
    for (size_t q = 0; q < kW; ++q) {
      begin[q] = -static_cast<int32_t>(j0);
      end[q] = static_cast<int32_t>(first_query + q + 1) - static_cast<int32_t>(j0);
    }
    const ColumnTileMask<kW> mask{first_query,
                                  j0,
                                  queries,
                                  causal,
                                  begin,
                                  end,
                                  biased ? row_bias.data() + j0 : nullptr,
                                  static_cast<ptrdiff_t>(keys),
                                  biased ? key_bias.data() + j0 : nullptr,
                                  biased ? n : 0};
    OnlineSoftmaxColumns<kW>(x.data(), n, scale, /*cap=*/0.0f, mask, state, rescale);
    for (size_t q = 0; q < queries; ++q) {
      for (double& w : acc[q]) w *= rescale[q];
      for (size_t j = 0; j < n; ++j) acc[q].push_back(x[j * kW + q]);
    }
  }
  ++result.cases;
  for (size_t q = 0; q < queries; ++q) {
    std::vector<double> z(keys);
    for (size_t j = 0; j < keys; ++j) {
      const double b = biased ? static_cast<double>(row_bias[q * keys + j]) + key_bias[j] : 0.0;
      const bool hidden = causal && j > first_query + q;
      z[j] = hidden || b == -kInfD ? -kInfD : static_cast<double>(logits[j * kW + q]) * scale + b;
    }
    const std::vector<double> ref = ReferenceSoftmax(z);
    const bool none = ref.empty() || std::all_of(z.begin(), z.end(), [](double v) { return v == -kInfD; });
    if (none != (state.sum[q] == 0.0f)) {
      return result.Fail("online keys ", keys, " tile ", tile, ": query ", q, " sum ", state.sum[q],
                         none ? ", expected 0 (nothing attendable)" : ", expected > 0");
    }
    for (size_t j = 0; j < keys && !none; ++j) {
      const double w = acc[q][j] / state.sum[q];
      if (!(std::fabs(w - ref[j]) <= 2e-6 + 1e-5 * ref[j])) {
        return result.Fail("online keys ", keys, " tile ", tile, " causal ", causal, " biased ", biased, ": query ", q,
                           " weight[", j, "] = ", w, ", reference ", ref[j]);
      }
    }
  }
}

SweepResult OnlineSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  attnlab_test::Rng rng(37);
  SweepResult result;
  for (size_t keys = 0; keys <= 2 * lanes + 1; ++keys) {
    for (const size_t tile : {size_t{1}, size_t{3}, lanes, size_t{128}}) {
      for (int variant = 0; variant < 4; ++variant) {
        CheckOnline(keys, tile, (keys + variant / 2) % 2 ? kW : kW - 3, variant & 1, variant & 2, rng, result);
        if (result.Failed()) return result;
      }
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(
    MaskedRowSweep, "softmax: MaskedSoftmaxRow over lengths 0…2N+1, masks, NaN rules vs float64, on every target",
    "[softmax][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(ExpSweep, "softmax: ExpNonPositive within 1.3e-7 of exp over [-100, 0], on every target",
                             "[softmax][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(OnlineSweep,
                             "softmax: OnlineSoftmaxColumns over tiles equals the exact softmax, on every target",
                             "[softmax][kernels]");
#endif  // HWY_ONCE
