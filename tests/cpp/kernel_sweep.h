// Helpers of the kernel tests below the public API (tests/cpp/ops/), in Highway's own test style:
// a per-target sweep over sizes 0…2N and misaligned pointers returns what it checked and its first failure; the
// Catch2 side runs it once per compiled target (hwy_targets.h) through the test file's own dynamic dispatch.
#ifndef ATTNLAB_TESTS_CPP_KERNEL_SWEEP_H_
#define ATTNLAB_TESTS_CPP_KERNEL_SWEEP_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "hwy_targets.h"

namespace attnlab_test {

struct SweepResult {
  size_t cases = 0;     // calls checked
  std::string failure;  // the first failed check, "" when none

  bool Failed() const { return !failure.empty(); }
  // Records `what` (built from the stream) as the failure unless one is already recorded.
  template <class... Parts>
  void Fail(const Parts&... parts) {
    if (Failed()) return;
    std::ostringstream os;
    (os << ... << parts);
    failure = os.str();
  }
};

// Offsets in floats from an aligned start for vectors of n lanes: 0, n/4 and 3n/5, as Highway's
// ForeachCountAndMisalign, without repeats.
inline std::vector<size_t> Misalignments(size_t n) {
  std::vector<size_t> m{0, n / 4, 3 * n / 5};
  std::sort(m.begin(), m.end());
  m.erase(std::unique(m.begin(), m.end()), m.end());
  return m;
}

// The lengths a row sweep covers for vectors of n lanes: the `longer` ones (past every tile) first, then first, first +
// 1, …, 2n + 1: every remainder up to two whole vectors and one more.
inline std::vector<size_t> SweepLengths(size_t n, size_t first, std::initializer_list<size_t> longer) {
  std::vector<size_t> lengths(longer);
  for (size_t len = first; len <= 2 * n + 1; ++len) lengths.push_back(len);
  return lengths;
}

// The tolerance of a float32 dot product of length k against float64 (the standard bound γ_k, with a margin of two
// roundings for a start value and the store): bound is |start| + Σ |products|.
inline double DotTolerance(size_t k, double bound) { return 1.2e-7 * static_cast<double>(k + 2) * bound + 1e-30; }

// Runs the sweep `run` (a dispatched per-target function) on every compiled target.
template <class Run>
void CheckSweepOnEveryTarget(Run&& run) {
  ForEachTarget([&](const std::string&) {
    const SweepResult r = run();
    INFO(r.failure);
    CHECK(r.failure.empty());
    CHECK(r.cases > 0);
  });
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_KERNEL_SWEEP_H_
