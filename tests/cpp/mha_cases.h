// Cases of the MultiHeadAttention tests (tests/cpp/attention/multi_head_attention*_test.cc, attention_decode_test.cc):
// random configurations, inputs, masks and state dicts with their double-precision reference, and the forward
// check on one target.
#ifndef ATTNLAB_TESTS_CPP_MHA_CASES_H_
#define ATTNLAB_TESTS_CPP_MHA_CASES_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {

using attnlab::AttentionResult;
using attnlab::Mask;
using attnlab::MhaConfig;
using attnlab::MhaForwardOptions;
using attnlab::MultiHeadAttention;
using attnlab::Tensor;
using attnlab::TensorView;
using StateDict = std::map<std::string, Tensor>;
using NamedShapes = std::vector<std::pair<std::string, Shape>>;

inline constexpr Tolerance kPathTolerance{1e-5, 1e-5};

// A module of embed_dim features and num_heads heads, every other setting its default.
inline MhaConfig HeadsConfig(int64_t embed_dim, int64_t num_heads) {
  MhaConfig c;
  c.embed_dim = embed_dim;
  c.num_heads = num_heads;
  return c;
}

// A batch-first module of embed_dim features, num_heads query heads and num_kv_heads key/value heads (the
// decoding tests' configuration).
inline MhaConfig BatchFirstConfig(int64_t embed_dim, int64_t num_heads, int64_t num_kv_heads) {
  MhaConfig c = HeadsConfig(embed_dim, num_heads);
  c.num_kv_heads = num_kv_heads;
  c.batch_first = true;
  return c;
}

// The module flags of random case i, one bit each: bias (bit 0 clear), add_bias_kv, add_zero_attn, batch_first.
inline void SetCaseFlags(MhaConfig& config, int i) {
  config.bias = (i & 1) == 0;
  config.add_bias_kv = (i & 2) != 0;
  config.add_zero_attn = (i & 4) != 0;
  config.batch_first = (i & 8) != 0;
}

inline int64_t KDim(const MhaConfig& c) { return c.kdim < 0 ? c.embed_dim : c.kdim; }
inline int64_t VDim(const MhaConfig& c) { return c.vdim < 0 ? c.embed_dim : c.vdim; }

// Key/value features: num_kv_heads * head_dim (embed_dim without grouped-query heads).
inline int64_t KvDim(const MhaConfig& c) {
  return c.num_kv_heads < 0 ? c.embed_dim : c.embed_dim / c.num_heads * c.num_kv_heads;
}

// PyTorch's state_dict() names and shapes, in its order (own parameters first, then out_proj's); grouped-query
// heads keep the names with Ekv = KvDim key/value features (docs/api.md).
inline NamedShapes ExpectedParameterShapes(const MhaConfig& c) {
  const int64_t e = c.embed_dim, ekv = KvDim(c);
  NamedShapes shapes;
  if (KDim(c) == e && VDim(c) == e && ekv == e) {
    shapes.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    shapes.push_back({"q_proj_weight", {e, e}});
    shapes.push_back({"k_proj_weight", {ekv, KDim(c)}});
    shapes.push_back({"v_proj_weight", {ekv, VDim(c)}});
  }
  if (c.bias) shapes.push_back({"in_proj_bias", {e + 2 * ekv}});
  if (c.add_bias_kv) {
    shapes.push_back({"bias_k", {1, 1, ekv}});
    shapes.push_back({"bias_v", {1, 1, ekv}});
  }
  shapes.push_back({"out_proj.weight", {e, e}});
  if (c.bias) shapes.push_back({"out_proj.bias", {e}});
  return shapes;
}

inline StateDict RandomStateDict(Rng& rng, const MhaConfig& c) {
  StateDict dict;
  for (const auto& entry : ExpectedParameterShapes(c)) {
    const std::string& name = entry.first;
    const bool is_bias = name.find("bias") != std::string::npos;
    const float range = name == "bias_k" || name == "bias_v" ? 1.0f : is_bias ? 0.3f : 0.5f;
    dict[name] = Tensor{RandomVector(rng, NumElements(entry.second), -range, range), entry.second};
  }
  return dict;
}

inline std::string NamedShapesToString(const NamedShapes& shapes) {
  std::string s;
  for (const auto& entry : shapes) s += entry.first + ShapeToString(entry.second) + " ";
  return s;
}

inline std::map<std::string, TensorView> Views(const StateDict& dict) {
  std::map<std::string, TensorView> views;
  for (const auto& entry : dict) views[entry.first] = TensorView{entry.second.data.data(), entry.second.shape};
  return views;
}

inline std::string DescribeConfig(const MhaConfig& c) {
  std::ostringstream os;
  os << "E " << c.embed_dim << " H " << c.num_heads << " bias " << c.bias << " add_bias_kv " << c.add_bias_kv
     << " add_zero_attn " << c.add_zero_attn << " kdim " << c.kdim << " vdim " << c.vdim << " batch_first "
     << c.batch_first << " num_kv_heads " << c.num_kv_heads;
  return os.str();
}

// Shape of an input with `len` positions of `dim` features in the configured layout.
inline Shape InputShape(const MhaConfig& c, bool batched, int64_t n, int64_t len, int64_t dim) {
  if (!batched) return {len, dim};
  return c.batch_first ? Shape{n, len, dim} : Shape{len, n, dim};
}

enum class MaskChoice { kNone, kBool, kFloat };

struct MhaCase {
  MhaConfig config;
  bool batched = true;
  int64_t n = 1, l = 1, s = 1;
  std::vector<float> query, key, value;
  OwnedMask key_padding_mask, attn_mask;
  bool need_weights = true, average_attn_weights = true;
  StateDict state;
  RefResult ref;

  TensorView Query() const { return {query.data(), InputShape(config, batched, n, l, config.embed_dim)}; }
  TensorView Key() const { return {key.data(), InputShape(config, batched, n, s, KDim(config))}; }
  TensorView Value() const { return {value.data(), InputShape(config, batched, n, s, VDim(config))}; }
  MhaForwardOptions Options() const {
    MhaForwardOptions o;
    o.key_padding_mask = key_padding_mask.View();
    o.attn_mask = attn_mask.View();
    o.need_weights = need_weights;
    o.average_attn_weights = average_attn_weights;
    return o;
  }
  std::string Describe() const {
    std::ostringstream os;
    os << DescribeConfig(config) << " | batched " << batched << " N " << n << " L " << l << " S " << s
       << " key_padding_mask " << key_padding_mask.Describe() << " attn_mask " << attn_mask.Describe()
       << " need_weights " << need_weights << " average " << average_attn_weights;
    return os.str();
  }
  void Finish() { ref = ReferenceMha(config, state, Query(), Key(), Value(), Options()); }
};

inline MhaCase MakeCase(Rng& rng, const MhaConfig& config, bool batched, int64_t n, int64_t l, int64_t s,
                        MaskChoice kpm, MaskChoice attn, bool attn_3d) {
  MhaCase c;
  c.config = config;
  c.batched = batched;
  c.n = batched ? n : 1;
  c.l = l;
  c.s = s;
  c.query = RandomVector(rng, c.n * l * config.embed_dim);
  c.key = RandomVector(rng, c.n * s * KDim(config));
  c.value = RandomVector(rng, c.n * s * VDim(config));
  c.state = RandomStateDict(rng, config);
  const Shape kpm_shape = batched ? Shape{c.n, s} : Shape{s};
  if (kpm == MaskChoice::kBool) {
    c.key_padding_mask = RandomBoolMask(rng, kpm_shape, /*p_true=masked*/ 0.25);
    if (rng.Bernoulli(0.4)) {  // one fully padded item
      for (int64_t j = 0; j < s; ++j) c.key_padding_mask.bools[j] = 1;
    }
  } else if (kpm == MaskChoice::kFloat) {
    c.key_padding_mask = RandomFloatMask(rng, kpm_shape, 0.2);
  }
  const Shape attn_shape = attn_3d ? Shape{c.n * config.num_heads, l, s} : Shape{l, s};
  if (attn == MaskChoice::kBool) {
    c.attn_mask = RandomBoolMask(rng, attn_shape, 0.25);
    for (int64_t j = 0; j < s; ++j) c.attn_mask.bools[j] = 1;  // a fully masked row
  } else if (attn == MaskChoice::kFloat) {
    c.attn_mask = RandomFloatMask(rng, attn_shape, 0.2);
  }
  c.Finish();
  return c;
}

// Forward on the current target against the reference, and need_weights=false against need_weights=true.
inline void CheckForward(MultiHeadAttention& mha, const MhaCase& c, Tolerance tol = {}) {
  INFO(c.Describe());
  MhaForwardOptions options = c.Options();
  const AttentionResult r = mha.Forward(c.Query(), c.Key(), c.Value(), options);
  CHECK(r.output.shape == c.ref.output_shape);
  CheckAllClose("output", r.output.data, c.ref.output, tol);
  CHECK(r.weights.shape == c.ref.weights_shape);
  CheckAllClose("weights", r.weights.data, c.ref.weights, tol);
  if (c.need_weights) {
    options.need_weights = false;
    const AttentionResult no_weights = mha.Forward(c.Query(), c.Key(), c.Value(), options);
    CHECK(no_weights.output.shape == c.ref.output_shape);
    CHECK(no_weights.weights.data.empty());
    CHECK(no_weights.weights.shape.empty());
    CheckAllClose("output (need_weights=false)", no_weights.output.data, c.ref.output, tol);
    CheckAllClose("output: need_weights=false vs true", no_weights.output.data, ToDouble(r.output.data),
                  kPathTolerance);
  }
}

// The heads of a random configuration (num_kv_heads -1: as many as num_heads).
struct HeadCounts {
  int64_t embed_dim, num_heads, num_kv_heads = -1;
};

// Case i of a random sweep, from Rng(seed + i): heads picked from `heads`, SetCaseFlags(i), kdim and vdim each
// picked from -1 (embed_dim), embed_dim itself when `explicit_embed_dim`, 5 and 11; key padding none, bool or float
// by i % 3, attention mask `attn` (3-D when attn_3d) on n (random 1…3) items when batched, lengths from `lengths`;
// weights except every fourth case, averaged in every other pair of cases.
inline MhaCase RandomMhaCase(uint64_t seed, int i, const std::vector<HeadCounts>& heads, bool explicit_embed_dim,
                             const std::vector<int64_t>& lengths, bool batched, MaskChoice attn, bool attn_3d) {
  Rng rng(seed + static_cast<uint64_t>(i));
  MhaConfig config;
  const HeadCounts h = rng.Pick(heads);
  config.embed_dim = h.embed_dim;
  config.num_heads = h.num_heads;
  config.num_kv_heads = h.num_kv_heads;
  SetCaseFlags(config, i);
  std::vector<int64_t> dims = {-1, 5, 11};
  if (explicit_embed_dim) dims.insert(dims.begin() + 1, config.embed_dim);
  config.kdim = rng.Pick(dims);
  config.vdim = rng.Pick(dims);
  const MaskChoice kpm = static_cast<MaskChoice>(i % 3);
  MhaCase c = MakeCase(rng, config, batched, rng.Int(1, 3), rng.Pick(lengths), rng.Pick(lengths), kpm, attn, attn_3d);
  c.need_weights = i % 4 != 3;
  c.average_attn_weights = (i / 2) % 2 == 0;
  c.Finish();
  return c;
}

// 64 cases over head counts without grouped queries, batched and not, attention masks none, bool or float, 2-D or 3-D.
inline std::vector<MhaCase> RandomCases() {
  const std::vector<HeadCounts> heads = {{8, 1}, {8, 2}, {8, 8}, {12, 3}, {16, 4}, {6, 2}, {4, 4}, {20, 5}};
  std::vector<MhaCase> cases;
  for (int i = 0; i < 64; ++i) {
    const int attn_variant = (i / 3) % 5;  // none, bool 2-D, float 2-D, bool 3-D, float 3-D
    const MaskChoice attn = attn_variant == 0       ? MaskChoice::kNone
                            : attn_variant % 2 == 1 ? MaskChoice::kBool
                                                    : MaskChoice::kFloat;
    cases.push_back(RandomMhaCase(100, i, heads, true, {1, 2, 5, 7}, i % 3 != 2, attn, attn_variant >= 3));
  }
  return cases;
}

inline void CheckCasesOnEveryTarget(const std::vector<MhaCase>& cases) {
  ForEachTarget([&](const std::string&) {
    for (const MhaCase& c : cases) {
      INFO(c.Describe());
      MultiHeadAttention mha(c.config);
      mha.LoadStateDict(Views(c.state));
      CheckForward(mha, c);
    }
  });
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_MHA_CASES_H_
