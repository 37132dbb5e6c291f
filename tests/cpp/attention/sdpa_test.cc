// Scaled dot-product attention (both the need_weights and the tiled online-softmax path) against the
// double-precision reference, on every Highway target.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::AttentionResult;
using attnlab::Mask;
using attnlab::SdpaOptions;
using attnlab::TensorView;

const std::vector<int64_t> kLengths = {0, 1, 3, 4, 5, 7, 8, 9, 16, 17, 33, 70};
const std::vector<int64_t> kHeadDims = {1, 3, 4, 5, 8, 16, 17, 33, 64};
const std::vector<Shape> kBatchShapes = {{}, {2}, {2, 3}};

// need_weights=false against need_weights=true: same math, different summation order.
constexpr Tolerance kPathTolerance{1e-5, 1e-5};

// The inputs of one SDPA call (owned), with its options and the reference result.
struct SdpaCase {
  Shape batch;
  int64_t lq = 0, lk = 0, dk = 0, dv = 0;
  std::vector<float> query, key, value;
  OwnedMask mask;
  SdpaOptions options;  // attn_mask is set from `mask` by Finish()
  RefResult ref;

  TensorView Query() const { return {query.data(), Concat(batch, {lq, dk})}; }
  TensorView Key() const { return {key.data(), Concat(batch, {lk, dk})}; }
  TensorView Value() const { return {value.data(), Concat(batch, {lk, dv})}; }

  std::string Describe() const {
    std::ostringstream os;
    os << "batch " << ShapeToString(batch) << " Lq " << lq << " Lk " << lk << " dk " << dk << " dv " << dv << " mask "
       << mask.Describe() << " causal " << options.is_causal;
    if (options.has_scale) os << " scale " << options.scale;
    return os.str();
  }

  // An explicit scale (SdpaOptions::scale) instead of 1/sqrt(dk).
  void SetScale(float scale) {
    options.has_scale = true;
    options.scale = scale;
  }

  // Binds the mask and computes the reference (call after the data is final).
  void Finish() {
    options.attn_mask = mask.View();
    SdpaOptions ref_options = options;
    ref_options.need_weights = true;
    ref = ReferenceSdpa(Query(), Key(), Value(), ref_options);
  }
};

// Finishes c (SdpaCase::Finish) and appends it to cases.
void AddFinished(std::vector<SdpaCase>& cases, SdpaCase c) {
  c.Finish();
  cases.push_back(std::move(c));
}

SdpaCase RandomCase(Rng& rng, const Shape& batch, int64_t lq, int64_t lk, int64_t dk, int64_t dv) {
  SdpaCase c{batch, lq, lk, dk, dv};
  const int64_t b = NumElements(batch);
  c.query = RandomVector(rng, b * lq * dk, -2.0f, 2.0f);
  c.key = RandomVector(rng, b * lk * dk, -2.0f, 2.0f);
  c.value = RandomVector(rng, b * lk * dv, -2.0f, 2.0f);
  return c;
}

// Rows whose reference weights are all zero (every key masked, or no keys) must be exactly zero.
void CheckFullyMaskedRowsAreZero(const SdpaCase& c, const AttentionResult& actual) {
  const int64_t rows = NumElements(c.batch) * c.lq;
  if (actual.output.data.size() != static_cast<size_t>(rows * c.dv)) return;  // reported by the shape checks
  if (!actual.weights.data.empty() && actual.weights.data.size() != static_cast<size_t>(rows * c.lk)) return;
  int64_t bad_rows = 0;
  for (int64_t r = 0; r < rows; ++r) {
    bool fully_masked = true;
    for (int64_t j = 0; j < c.lk; ++j) fully_masked &= c.ref.weights[r * c.lk + j] == 0.0;
    if (!fully_masked) continue;
    bool zero = true;
    for (int64_t j = 0; j < c.dv; ++j) zero &= actual.output.data[r * c.dv + j] == 0.0f;
    if (!actual.weights.data.empty()) {
      for (int64_t j = 0; j < c.lk; ++j) zero &= actual.weights.data[r * c.lk + j] == 0.0f;
    }
    if (!zero) ++bad_rows;
  }
  INFO("fully masked rows that are not exactly zero: " << bad_rows);
  CHECK(bad_rows == 0);
}

// Both paths on the current target against the reference, and against each other.
void CheckCase(const SdpaCase& c, Tolerance tol = {}) {
  INFO(c.Describe());
  SdpaOptions options = c.options;
  options.need_weights = true;
  const AttentionResult full = attnlab::ScaledDotProductAttention(c.Query(), c.Key(), c.Value(), options);
  CHECK(full.output.shape == c.ref.output_shape);
  CHECK(full.weights.shape == c.ref.weights_shape);
  CheckAllClose("output", full.output.data, c.ref.output, tol);
  CheckAllClose("weights", full.weights.data, c.ref.weights, tol);
  CheckFullyMaskedRowsAreZero(c, full);

  options.need_weights = false;
  const AttentionResult tiled = attnlab::ScaledDotProductAttention(c.Query(), c.Key(), c.Value(), options);
  CHECK(tiled.output.shape == c.ref.output_shape);
  CHECK(tiled.weights.data.empty());
  CHECK(tiled.weights.shape.empty());
  CheckAllClose("output (need_weights=false)", tiled.output.data, c.ref.output, tol);
  CheckAllClose("output: need_weights=false vs true", tiled.output.data, ToDouble(full.output.data), kPathTolerance);
  CheckFullyMaskedRowsAreZero(c, tiled);
}

void CheckCasesOnEveryTarget(const std::vector<SdpaCase>& cases, Tolerance tol = {}) {
  ForEachTarget([&](const std::string&) {
    for (const SdpaCase& c : cases) CheckCase(c, tol);
  });
}

// A mask of `shape` (the last two dims are Lq, Lk) of the given kind, with some rows fully masked.
OwnedMask MakeSdpaMask(Rng& rng, Mask::Kind kind, const Shape& shape) {
  OwnedMask m = kind == Mask::Kind::kBool ? RandomBoolMask(rng, shape, /*p_true=may attend*/ 0.7)
                                          : RandomFloatMask(rng, shape, /*p_neg_inf=*/0.2);
  const int64_t lk = shape.back();
  const int64_t rows = NumElements(shape) / lk;
  for (int64_t r = 0; r < rows; ++r) {
    if (r != rows - 1 && !rng.Bernoulli(0.15)) continue;  // the last row is always fully masked
    for (int64_t j = 0; j < lk; ++j) {
      if (kind == Mask::Kind::kBool) {
        m.bools[r * lk + j] = 0;
      } else {
        m.floats[r * lk + j] = -kInf;
      }
    }
  }
  return m;
}

TEST_CASE("Highway targets: listed, default is the best, every one selectable", "[targets]") {
  PrintTargetsOnce();
  const std::vector<int64_t> targets = TestTargets();
  REQUIRE_FALSE(targets.empty());
  CHECK(std::string(attnlab::ActiveTargetName()) == hwy::TargetName(targets[0]));
  size_t visited = 0;
  ForEachTarget([&](const std::string& name) {
    CHECK(std::string(attnlab::ActiveTargetName()) == name);
    ++visited;
  });
  CHECK(visited == targets.size());
  // ForEachTarget restores the real choice.
  CHECK(std::string(attnlab::ActiveTargetName()) == hwy::TargetName(targets[0]));
}

TEST_CASE("sdpa: every (Lq, Lk) pair, including empty and Lq != Lk", "[sdpa]") {
  std::vector<SdpaCase> cases;
  for (size_t i = 0; i < kLengths.size(); ++i) {
    for (size_t j = 0; j < kLengths.size(); ++j) {
      Rng rng(1000 + 100 * i + j);
      const int64_t dk = kHeadDims[(i + 2 * j) % kHeadDims.size()];
      const int64_t dv = kHeadDims[(3 * i + j + 4) % kHeadDims.size()];
      cases.push_back(RandomCase(rng, kBatchShapes[(i + j) % kBatchShapes.size()], kLengths[i], kLengths[j], dk, dv));
      cases.back().Finish();
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: every (dk, dv) pair, including dk != dv", "[sdpa]") {
  std::vector<SdpaCase> cases;
  for (size_t i = 0; i < kHeadDims.size(); ++i) {
    for (size_t j = 0; j < kHeadDims.size(); ++j) {
      Rng rng(2000 + 100 * i + j);
      const bool odd = (i + j) % 2 == 1;
      cases.push_back(RandomCase(rng, kBatchShapes[(i + 2 * j) % kBatchShapes.size()], odd ? 17 : 5, odd ? 33 : 9,
                                 kHeadDims[i], kHeadDims[j]));
      cases.back().Finish();
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: long key sequences (several tiles), with masks and causal", "[sdpa]") {
  struct Dims {
    int64_t lq, lk, dk, dv;
  };
  const std::vector<Dims> dims = {
      {2, 257, 16, 8}, {3, 513, 8, 8}, {130, 300, 17, 5}, {64, 1000, 4, 4}, {300, 130, 8, 3}};
  std::vector<SdpaCase> cases;
  uint64_t seed = 3000;
  for (const Dims& d : dims) {
    for (int variant = 0; variant < 4; ++variant) {
      Rng rng(seed++);
      SdpaCase c = RandomCase(rng, {2}, d.lq, d.lk, d.dk, d.dv);
      if (variant == 1) c.mask = MakeSdpaMask(rng, Mask::Kind::kBool, {d.lq, d.lk});
      if (variant == 2) c.mask = MakeSdpaMask(rng, Mask::Kind::kFloat, {2, d.lq, d.lk});
      c.options.is_causal = variant == 3;
      AddFinished(cases, std::move(c));
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: bool and float masks, broadcast (Lq, Lk) and full, with and without causal", "[sdpa][mask]") {
  struct Lengths {
    int64_t lq, lk;
  };
  const std::vector<Lengths> lengths = {{1, 1}, {3, 5}, {5, 3}, {8, 8}, {9, 17}, {17, 9}, {33, 70}};
  std::vector<SdpaCase> cases;
  uint64_t seed = 4000;
  for (const Lengths& len : lengths) {
    for (const Shape& batch : kBatchShapes) {
      for (int mask_variant = 0; mask_variant < 5; ++mask_variant) {
        for (bool causal : {false, true}) {
          Rng rng(seed++);
          SdpaCase c = RandomCase(rng, batch, len.lq, len.lk, rng.Pick(kHeadDims), rng.Pick(kHeadDims));
          const Mask::Kind kind = mask_variant == 0   ? Mask::Kind::kNone
                                  : mask_variant <= 2 ? Mask::Kind::kBool
                                                      : Mask::Kind::kFloat;
          const bool broadcast = mask_variant % 2 == 1;
          if (kind != Mask::Kind::kNone) {
            c.mask = MakeSdpaMask(rng, kind, broadcast ? Shape{len.lq, len.lk} : Concat(batch, {len.lq, len.lk}));
          }
          c.options.is_causal = causal;
          AddFinished(cases, std::move(c));
        }
      }
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: custom scale", "[sdpa][scale]") {
  std::vector<SdpaCase> cases;
  uint64_t seed = 5000;
  for (float scale : {0.3f, 1.7f, 0.05f, 4.0f, 1.0f}) {
    for (bool causal : {false, true}) {
      Rng rng(seed++);
      SdpaCase c = RandomCase(rng, {2}, 7, causal ? 7 : 9, 8, 5);
      c.SetScale(scale);
      c.options.is_causal = causal;
      if (!causal) c.mask = MakeSdpaMask(rng, Mask::Kind::kFloat, {7, 9});
      AddFinished(cases, std::move(c));
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: scale 0 (uniform weights) and a negative scale are valid", "[sdpa][scale]") {
  std::vector<SdpaCase> cases;
  uint64_t seed = 5500;
  for (float scale : {0.0f, -0.5f}) {
    Rng rng(seed++);
    SdpaCase c = RandomCase(rng, {3}, 4, 6, 5, 3);
    c.SetScale(scale);
    AddFinished(cases, std::move(c));
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("sdpa: logits around 1e6 stay finite and correct (max-subtracted softmax)", "[sdpa][large]") {
  // Integer query/key values up to 1000 make every dot product and partial sum exact in float32 (|x| < 2^24),
  // and the scales below are powers of two, so any correct float32 kernel matches the reference closely.
  std::vector<SdpaCase> cases;
  uint64_t seed = 6000;
  for (int64_t dk : {4, 8}) {
    for (int variant = 0; variant < 3; ++variant) {
      Rng rng(seed++);
      SdpaCase c = RandomCase(rng, {2}, 6, 9, dk, 8);
      for (float& x : c.query) x = static_cast<float>(rng.Int(-1000, 1000));
      for (float& x : c.key) x = static_cast<float>(rng.Int(-1000, 1000));
      // Exact ties: key rows 1 and 4 of each item equal key row 0.
      for (int64_t item = 0; item < 2; ++item) {
        float* k = c.key.data() + item * 9 * dk;
        std::memcpy(k + 1 * dk, k, dk * sizeof(float));
        std::memcpy(k + 4 * dk, k, dk * sizeof(float));
      }
      if (dk == 8) c.SetScale(0.25f);  // default 1/sqrt(8) is not a power of two
      if (variant == 1) c.mask = MakeSdpaMask(rng, Mask::Kind::kBool, {6, 9});
      if (variant == 2) c.options.is_causal = true;
      AddFinished(cases, std::move(c));
    }
  }
  ForEachTarget([&](const std::string&) {
    for (const SdpaCase& c : cases) {
      CheckCase(c);
      SdpaOptions options = c.options;
      const AttentionResult r = attnlab::ScaledDotProductAttention(c.Query(), c.Key(), c.Value(), options);
      CHECK(AllFinite(r.output.data));
      CHECK(AllFinite(r.weights.data));
    }
  });
}

// Copies `v` into a larger buffer at `offset` elements; the view of the copy is then misaligned.
template <class T>
struct OffsetCopy {
  std::vector<T> buffer;
  size_t offset;
  OffsetCopy(const std::vector<T>& v, size_t offset_elements)
      : buffer(v.size() + offset_elements + 1), offset(offset_elements) {
    std::copy(v.begin(), v.end(), buffer.begin() + offset);
  }
  const T* data() const { return buffer.data() + offset; }
};

TEST_CASE("sdpa: unaligned input and mask pointers", "[sdpa][unaligned]") {
  struct Dims {
    int64_t lq, lk, dk, dv;
  };
  const std::vector<Dims> dims = {{5, 7, 3, 5}, {17, 33, 16, 17}, {8, 8, 64, 64}, {9, 70, 33, 8}};
  uint64_t seed = 7000;
  std::vector<SdpaCase> cases;
  for (const Dims& d : dims) {
    for (int mask_variant = 0; mask_variant < 3; ++mask_variant) {
      Rng rng(seed++);
      SdpaCase c = RandomCase(rng, {2}, d.lq, d.lk, d.dk, d.dv);
      if (mask_variant == 1) c.mask = MakeSdpaMask(rng, Mask::Kind::kBool, {2, d.lq, d.lk});
      if (mask_variant == 2) c.mask = MakeSdpaMask(rng, Mask::Kind::kFloat, {d.lq, d.lk});
      AddFinished(cases, std::move(c));
    }
  }
  ForEachTarget([&](const std::string&) {
    for (const SdpaCase& c : cases) {
      for (size_t offset : {1, 3}) {
        INFO(c.Describe() << ", data offset by " << offset << " elements");
        const OffsetCopy<float> q(c.query, offset), k(c.key, offset), v(c.value, offset);
        const OffsetCopy<float> float_mask(c.mask.floats, offset);
        const OffsetCopy<uint8_t> bool_mask(c.mask.bools, offset);
        SdpaOptions options = c.options;
        if (c.mask.kind == Mask::Kind::kBool) options.attn_mask = Mask::Bool(bool_mask.data(), c.mask.shape);
        if (c.mask.kind == Mask::Kind::kFloat) options.attn_mask = Mask::Float(float_mask.data(), c.mask.shape);
        const TensorView query{q.data(), c.Query().shape}, key{k.data(), c.Key().shape},
            value{v.data(), c.Value().shape};
        for (bool need_weights : {true, false}) {
          options.need_weights = need_weights;
          const AttentionResult r = attnlab::ScaledDotProductAttention(query, key, value, options);
          CHECK(r.output.shape == c.ref.output_shape);
          CheckAllClose(need_weights ? "output" : "output (need_weights=false)", r.output.data, c.ref.output);
          if (need_weights) CheckAllClose("weights", r.weights.data, c.ref.weights);
        }
      }
    }
  });
}

TEST_CASE("sdpa: repeated calls give bit-identical results", "[sdpa][determinism]") {
  Rng rng(8000);
  SdpaCase c = RandomCase(rng, {2, 3}, 33, 70, 64, 17);
  c.mask = MakeSdpaMask(rng, Mask::Kind::kFloat, {33, 70});
  c.options.is_causal = true;
  c.Finish();
  ForEachTarget([&](const std::string&) {
    for (bool need_weights : {true, false}) {
      INFO("need_weights " << need_weights);
      SdpaOptions options = c.options;
      options.need_weights = need_weights;
      const AttentionResult first = attnlab::ScaledDotProductAttention(c.Query(), c.Key(), c.Value(), options);
      for (int repeat = 0; repeat < 3; ++repeat) {
        const AttentionResult again = attnlab::ScaledDotProductAttention(c.Query(), c.Key(), c.Value(), options);
        CHECK(BitIdentical(first.output.data, again.output.data));
        CHECK(BitIdentical(first.weights.data, again.weights.data));
      }
    }
  });
}

}  // namespace
}  // namespace attnlab_test
