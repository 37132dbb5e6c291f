// The NaN / Inf policy (docs/robustness.md, "NaN and Inf"), on every Highway target and on both attention paths
// (need_weights: the exact path that writes weights; without: the tiled online-softmax path):
//   * NaN or ±Inf reaches output row i (and weight row i) only from query row i, from the key and value rows that
//     row i attends (visible and not masked) and from mask row i; never from other rows or other batch items;
//   * NaN there makes the row NaN (weights and output); NaN in value row j makes NaN exactly the output columns
//     that hold it, of the rows that attend key j;
//   * a masked (bool or -inf) or causally hidden key is not attended: its key and value rows cannot reach the row,
//     whatever they hold; a row whose keys are all masked is 0 (weights and output), never NaN;
//   * +inf in a float mask element of an attended key makes the row NaN (IEEE: inf - inf in the softmax).
// Rows not named stay equal to the same call without the non-finite value.
// Shared by attention/sdpa_nan_policy_test.cc and attention/multi_head_attention_nan_policy_test.cc.
#ifndef ATTNLAB_TESTS_CPP_NAN_POLICY_H_
#define ATTNLAB_TESTS_CPP_NAN_POLICY_H_

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"

namespace nan_policy_test {

using attnlab::AttentionResult;
using attnlab::Mask;
using attnlab::Shape;
using attnlab::TensorView;

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

// Deterministic values in [-1, 1).
inline std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return v;
}

inline bool AllNaN(const std::vector<float>& v, size_t begin, size_t count) {
  for (size_t i = begin; i < begin + count; ++i) {
    if (!std::isnan(v[i])) return false;
  }
  return true;
}

inline bool AllFinite(const std::vector<float>& v, size_t begin, size_t count) {
  for (size_t i = begin; i < begin + count; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

inline bool AllZero(const std::vector<float>& v, size_t begin, size_t count) {
  for (size_t i = begin; i < begin + count; ++i) {
    if (v[i] != 0.0f) return false;
  }
  return true;
}

// Rows [begin, begin + count) of a and b agree (both finite, within 1e-6 relative).
inline bool Same(const std::vector<float>& a, const std::vector<float>& b, size_t begin, size_t count) {
  for (size_t i = begin; i < begin + count; ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return false;
    if (std::fabs(a[i] - b[i]) > 1e-6f * (1.0f + std::fabs(b[i]))) return false;
  }
  return true;
}

// Checks each row (b, i) of `got`, b < items, i < rows, against `clean`: where poisoned(b, i) its `width` outputs
// and its weights_width weights (0: weights not checked) are all NaN, elsewhere they equal the clean result.
template <class Poisoned>
inline void ExpectPoisonedRows(const AttentionResult& got, const AttentionResult& clean, size_t items, size_t rows,
                               size_t width, size_t weights_width, Poisoned&& poisoned) {
  for (size_t b = 0; b < items; ++b) {
    for (size_t i = 0; i < rows; ++i) {
      INFO("item " << b << ", row " << i);
      const size_t row = b * rows + i;
      const size_t out = row * width, w = row * weights_width;
      if (poisoned(b, i)) {
        CHECK(AllNaN(got.output.data, out, width));
        if (weights_width > 0) CHECK(AllNaN(got.weights.data, w, weights_width));
      } else {
        CHECK(Same(got.output.data, clean.output.data, out, width));
        if (weights_width > 0) CHECK(Same(got.weights.data, clean.weights.data, w, weights_width));
      }
    }
  }
}

// Runs fn(need_weights) on every target, for both paths.
template <class Fn>
inline void EveryPath(Fn&& fn) {
  attnlab_test::ForEachTarget([&](const std::string&) {
    for (const bool need_weights : {true, false}) {
      INFO("need_weights " << need_weights);
      fn(need_weights);
    }
  });
}

}  // namespace nan_policy_test

#endif  // ATTNLAB_TESTS_CPP_NAN_POLICY_H_
