// Shared test helpers: a portable random generator, shape helpers, owned masks and the allclose check.
#ifndef ATTNLAB_TESTS_CPP_TEST_UTIL_H_
#define ATTNLAB_TESTS_CPP_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/rng.h"

namespace attnlab_test {

using attnlab::Shape;

constexpr float kInf = std::numeric_limits<float>::infinity();

// The library's SplitMix64 (the same stream on every compiler and standard library; std:: distributions are not
// portable) with the draws the tests need.
class Rng : public attnlab::Rng {
 public:
  using attnlab::Rng::Rng;
  float Uniform(float lo, float hi) { return static_cast<float>(lo + (hi - lo) * Uniform01()); }
  // Uniform integer in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool Bernoulli(double p) { return Uniform01() < p; }
  template <class T>
  const T& Pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(Int(0, int64_t(items.size()) - 1))];
  }
};

inline std::vector<float> RandomVector(Rng& rng, int64_t n, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.Uniform(lo, hi);
  return v;
}

inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline std::string ShapeToString(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ")";
  return os.str();
}

// `prefix` followed by `tail`.
inline Shape Concat(const Shape& prefix, const Shape& tail) {
  Shape s = prefix;
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

// A mask that owns its data; View() gives the attnlab::Mask to pass.
struct OwnedMask {
  attnlab::Mask::Kind kind = attnlab::Mask::Kind::kNone;
  std::vector<uint8_t> bools;
  std::vector<float> floats;
  Shape shape;

  attnlab::Mask View() const {
    switch (kind) {
      case attnlab::Mask::Kind::kBool:
        return attnlab::Mask::Bool(bools.data(), shape);
      case attnlab::Mask::Kind::kFloat:
        return attnlab::Mask::Float(floats.data(), shape);
      default:
        return attnlab::Mask::None();
    }
  }
  std::string Describe() const {
    const char* name = kind == attnlab::Mask::Kind::kBool    ? "bool"
                       : kind == attnlab::Mask::Kind::kFloat ? "float"
                                                             : "none";
    return std::string(name) + (kind == attnlab::Mask::Kind::kNone ? "" : " " + ShapeToString(shape));
  }
};

// Each element is `true_value` with probability p_true.
inline OwnedMask RandomBoolMask(Rng& rng, const Shape& shape, double p_true) {
  OwnedMask m;
  m.kind = attnlab::Mask::Kind::kBool;
  m.shape = shape;
  m.bools.resize(static_cast<size_t>(NumElements(shape)));
  for (uint8_t& b : m.bools) b = rng.Bernoulli(p_true) ? 1 : 0;
  return m;
}

// Finite values in [-3, 3], each -inf with probability p_neg_inf.
inline OwnedMask RandomFloatMask(Rng& rng, const Shape& shape, double p_neg_inf) {
  OwnedMask m;
  m.kind = attnlab::Mask::Kind::kFloat;
  m.shape = shape;
  m.floats.resize(static_cast<size_t>(NumElements(shape)));
  for (float& x : m.floats) x = rng.Bernoulli(p_neg_inf) ? -kInf : rng.Uniform(-3.0f, 3.0f);
  return m;
}

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
};

// numpy.allclose, element by element: |actual - expected| <= atol + rtol * |expected|. A NaN expected value needs
// a NaN, an infinite one the same infinity, a finite one a finite value. Reports the first mismatches; returns
// whether all matched.
template <class Expected>
bool CheckAllClose(const std::string& what, const std::vector<float>& actual, const std::vector<Expected>& expected,
                   Tolerance tol = {}) {
  INFO(what << ": " << actual.size() << " values, expected " << expected.size());
  CHECK(actual.size() == expected.size());
  if (actual.size() != expected.size()) return false;
  size_t mismatches = 0;
  double worst_excess = 0.0;
  std::ostringstream first;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i];
    const double e = static_cast<double>(expected[i]);
    bool ok;
    if (std::isnan(e)) {
      ok = std::isnan(a);
    } else if (std::isinf(e)) {
      ok = a == e;
    } else {
      const double bound = tol.atol + tol.rtol * std::fabs(e);
      const double diff = std::fabs(a - e);
      ok = std::isfinite(a) && diff <= bound;
      if (std::isfinite(a) && diff - bound > worst_excess) worst_excess = diff - bound;
    }
    if (!ok) {
      if (mismatches < 5) first << "  [" << i << "] actual " << a << " expected " << e << "\n";
      ++mismatches;
    }
  }
  INFO(what << ": " << mismatches << " of " << actual.size() << " values outside atol " << tol.atol << " + rtol "
            << tol.rtol << " (worst excess " << worst_excess << ")\n"
            << first.str());
  CHECK(mismatches == 0);
  return mismatches == 0;
}

inline std::vector<double> ToDouble(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

inline bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline bool AllFinite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_TEST_UTIL_H_
