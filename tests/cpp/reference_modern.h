// Independent float64 oracle for scaled dot-product attention with the issue-19 options (attention.h,
// SdpaOptions), written from ONNX Attention (opsets 23–25, onnx/docs/Operators.md) and PyTorch 2.5 SDPA:
// grouped-query heads, causal upper-left / lower-right, kv_lengths, windows, softcap, every scores stage, masks
// broadcast by NumPy rules, past ‖ new keys. Plain loops over (problem, i, j); it shares no code with the library
// and reads only the public value types. Inputs are double vectors so that finite differences can perturb them.
#ifndef ATTNLAB_TESTS_CPP_REFERENCE_MODERN_H_
#define ATTNLAB_TESTS_CPP_REFERENCE_MODERN_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab_test {

// A tensor of doubles for the oracle.
struct RefTensor {
  std::vector<double> data;
  attnlab::Shape shape;
};

inline RefTensor ToRef(const std::vector<float>& data, const attnlab::Shape& shape) {
  return RefTensor{std::vector<double>(data.begin(), data.end()), shape};
}

struct ModernRefResult {
  std::vector<double> output, weights, scores, present_key, present_value;
};

namespace modern_ref {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline int64_t Numel(const attnlab::Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < s.size() && i < to; ++i) n *= s[i];
  return n;
}

// Element of `mask` that broadcasts (right-aligned, size-1 dims repeat) to position `index` of a tensor of shape
// `full`.
inline double MaskValue(const attnlab::Mask& mask, const attnlab::Shape& full, const std::vector<int64_t>& index) {
  if (mask.kind == attnlab::Mask::Kind::kNone) return 0.0;
  int64_t flat = 0;
  const size_t m = mask.shape.size();
  for (size_t d = 0; d < m; ++d) {
    const int64_t dim = mask.shape[d];
    const int64_t full_d = static_cast<int64_t>(full.size()) - static_cast<int64_t>(m) + static_cast<int64_t>(d);
    const int64_t i = full_d >= 0 && dim != 1 ? index[static_cast<size_t>(full_d)] : 0;
    flat = flat * dim + i;
  }
  if (mask.kind == attnlab::Mask::Kind::kBool) return mask.bool_data[flat] ? 0.0 : kNegInf;  // true = may attend
  return mask.float_data[flat];
}

}  // namespace modern_ref

// The SDPA of attention.h with every option. past_key/past_value: null when there is none (options' past
// fields are not read). options.attn_mask, kv_lengths and the scalars are read as given.
inline ModernRefResult ReferenceSdpaModern(const RefTensor& q, const RefTensor& k, const RefTensor& v,
                                           const RefTensor* past_key, const RefTensor* past_value,
                                           const attnlab::SdpaOptions& o) {
  using namespace modern_ref;
  const size_t rank = q.shape.size();
  const int64_t lq = q.shape[rank - 2], dk = q.shape[rank - 1], lnew = k.shape[rank - 2], dv = v.shape[rank - 1];
  const int64_t lpast = past_key ? past_key->shape[rank - 2] : 0, lk = lpast + lnew;
  const int64_t batch = Numel(q.shape, 0, rank - 2), kv_batch = Numel(k.shape, 0, rank - 2);
  const int64_t hq = rank >= 3 ? q.shape[rank - 3] : 1, hkv = rank >= 3 ? k.shape[rank - 3] : 1;
  const int64_t items0 = rank >= 3 ? q.shape[0] : 1;
  const double scale = o.has_scale ? o.scale : 1.0 / std::sqrt(static_cast<double>(dk));
  const double cap = o.softcap;
  ModernRefResult r;
  r.output.assign(batch * lq * dv, 0.0);
  r.weights.assign(batch * lq * lk, 0.0);
  r.scores.assign(batch * lq * lk, 0.0);
  // present = past ‖ new, per key/value problem.
  r.present_key.assign(kv_batch * lk * dk, 0.0);
  r.present_value.assign(kv_batch * lk * dv, 0.0);
  for (int64_t p = 0; p < kv_batch; ++p) {
    for (int64_t j = 0; j < lk; ++j) {
      for (int64_t c = 0; c < dk; ++c) {
        r.present_key[(p * lk + j) * dk + c] =
            j < lpast ? past_key->data[(p * lpast + j) * dk + c] : k.data[(p * lnew + j - lpast) * dk + c];
      }
      for (int64_t c = 0; c < dv; ++c) {
        r.present_value[(p * lk + j) * dv + c] =
            j < lpast ? past_value->data[(p * lpast + j) * dv + c] : v.data[(p * lnew + j - lpast) * dv + c];
      }
    }
  }
  attnlab::Shape full(q.shape.begin(), q.shape.end() - 2);
  full.push_back(lq);
  full.push_back(lk);
  for (int64_t b = 0; b < batch; ++b) {
    // The query problem's batch index, item of the first batch dim, head and the key/value problem it reads.
    std::vector<int64_t> index(rank, 0);
    for (int64_t rest = b, d = static_cast<int64_t>(rank) - 3; d >= 0; --d) {
      index[d] = rest % q.shape[d];
      rest /= q.shape[d];
    }
    const int64_t item = batch / items0 > 0 ? b / (batch / items0) : 0;
    const int64_t head = b % hq, outer = b / hq;
    const int64_t kvb = o.enable_gqa ? outer * hkv + head / (hq / hkv) : b;
    const int64_t valid = o.kv_lengths ? o.kv_lengths[item] : lk;
    const int64_t offset = o.causal_align == attnlab::CausalAlign::kLowerRight ? valid - lq : lpast;
    for (int64_t i = 0; i < lq; ++i) {
      std::vector<double> masked(lk);
      const int64_t pos = i + offset;
      for (int64_t j = 0; j < lk; ++j) {
        double s = 0.0;
        for (int64_t c = 0; c < dk; ++c) s += q.data[(b * lq + i) * dk + c] * r.present_key[(kvb * lk + j) * dk + c];
        s *= scale;
        const double capped = cap > 0.0 ? cap * std::tanh(s / cap) : s;
        index[rank - 2] = i;
        index[rank - 1] = j;
        const double bias = MaskValue(o.attn_mask, full, index);
        bool allowed = j < valid && bias != kNegInf;
        if (o.is_causal && j > pos) allowed = false;
        if (o.window_left >= 0 && j < pos - o.window_left) allowed = false;
        if (o.window_right >= 0 && j > pos + o.window_right) allowed = false;
        masked[j] = allowed ? capped + bias : kNegInf;
        const double stage_value = o.return_scores == attnlab::ScoresStage::kScaled       ? s
                                   : o.return_scores == attnlab::ScoresStage::kSoftcapped ? capped
                                                                                          : masked[j];
        r.scores[(b * lq + i) * lk + j] = stage_value;
      }
      double max = kNegInf;
      for (double x : masked) max = std::max(max, x);
      if (max == kNegInf) continue;  // no visible key: zero weights and output
      double sum = 0.0;
      for (double x : masked) sum += std::exp(x - max);
      for (int64_t j = 0; j < lk; ++j) {
        const double w = std::exp(masked[j] - max) / sum;
        r.weights[(b * lq + i) * lk + j] = w;
        for (int64_t c = 0; c < dv; ++c)
          r.output[(b * lq + i) * dv + c] += w * r.present_value[(kvb * lk + j) * dv + c];
      }
    }
  }
  return r;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_REFERENCE_MODERN_H_
