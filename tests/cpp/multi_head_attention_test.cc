// MultiHeadAttention (torch.nn.MultiheadAttention, eval mode) against the double-precision reference, on every
// Highway target: all constructor options, both layouts, unbatched inputs, masks, state dicts, default init.
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
namespace {

using attnlab::AttentionResult;
using attnlab::Mask;
using attnlab::MhaConfig;
using attnlab::MhaForwardOptions;
using attnlab::MultiHeadAttention;
using attnlab::Tensor;
using attnlab::TensorView;
using StateDict = std::map<std::string, Tensor>;
using NamedShapes = std::vector<std::pair<std::string, Shape>>;

constexpr Tolerance kPathTolerance{1e-5, 1e-5};

int64_t KDim(const MhaConfig& c) { return c.kdim < 0 ? c.embed_dim : c.kdim; }
int64_t VDim(const MhaConfig& c) { return c.vdim < 0 ? c.embed_dim : c.vdim; }

// PyTorch's state_dict() names and shapes, in its order (own parameters first, then out_proj's).
NamedShapes ExpectedParameterShapes(const MhaConfig& c) {
  const int64_t e = c.embed_dim;
  NamedShapes shapes;
  if (KDim(c) == e && VDim(c) == e) {
    shapes.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    shapes.push_back({"q_proj_weight", {e, e}});
    shapes.push_back({"k_proj_weight", {e, KDim(c)}});
    shapes.push_back({"v_proj_weight", {e, VDim(c)}});
  }
  if (c.bias) shapes.push_back({"in_proj_bias", {3 * e}});
  if (c.add_bias_kv) {
    shapes.push_back({"bias_k", {1, 1, e}});
    shapes.push_back({"bias_v", {1, 1, e}});
  }
  shapes.push_back({"out_proj.weight", {e, e}});
  if (c.bias) shapes.push_back({"out_proj.bias", {e}});
  return shapes;
}

StateDict RandomStateDict(Rng& rng, const MhaConfig& c) {
  StateDict dict;
  for (const auto& entry : ExpectedParameterShapes(c)) {
    const std::string& name = entry.first;
    const bool is_bias = name.find("bias") != std::string::npos;
    const float range = name == "bias_k" || name == "bias_v" ? 1.0f : is_bias ? 0.3f : 0.5f;
    dict[name] = Tensor{RandomVector(rng, NumElements(entry.second), -range, range), entry.second};
  }
  return dict;
}

std::string NamedShapesToString(const NamedShapes& shapes) {
  std::string s;
  for (const auto& entry : shapes) s += entry.first + ShapeToString(entry.second) + " ";
  return s;
}

std::map<std::string, TensorView> Views(const StateDict& dict) {
  std::map<std::string, TensorView> views;
  for (const auto& entry : dict) views[entry.first] = TensorView{entry.second.data.data(), entry.second.shape};
  return views;
}

std::string DescribeConfig(const MhaConfig& c) {
  std::ostringstream os;
  os << "E " << c.embed_dim << " H " << c.num_heads << " bias " << c.bias << " add_bias_kv " << c.add_bias_kv
     << " add_zero_attn " << c.add_zero_attn << " kdim " << c.kdim << " vdim " << c.vdim << " batch_first "
     << c.batch_first;
  return os.str();
}

// Shape of an input with `len` positions of `dim` features in the configured layout.
Shape InputShape(const MhaConfig& c, bool batched, int64_t n, int64_t len, int64_t dim) {
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

MhaCase MakeCase(Rng& rng, const MhaConfig& config, bool batched, int64_t n, int64_t l, int64_t s, MaskChoice kpm,
                 MaskChoice attn, bool attn_3d) {
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
void CheckForward(MultiHeadAttention& mha, const MhaCase& c, Tolerance tol = {}) {
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

std::vector<MhaCase> RandomCases() {
  struct HeadConfig {
    int64_t embed_dim, num_heads;
  };
  const std::vector<HeadConfig> heads = {{8, 1}, {8, 2}, {8, 8}, {12, 3}, {16, 4}, {6, 2}, {4, 4}, {20, 5}};
  const std::vector<int64_t> lengths = {1, 2, 5, 7};
  std::vector<MhaCase> cases;
  for (int i = 0; i < 64; ++i) {
    Rng rng(100 + i);
    MhaConfig config;
    const HeadConfig hc = rng.Pick(heads);
    config.embed_dim = hc.embed_dim;
    config.num_heads = hc.num_heads;
    config.bias = (i & 1) == 0;
    config.add_bias_kv = (i & 2) != 0;
    config.add_zero_attn = (i & 4) != 0;
    config.batch_first = (i & 8) != 0;
    const std::vector<int64_t> dims = {-1, config.embed_dim, 5, 11};
    config.kdim = rng.Pick(dims);
    config.vdim = rng.Pick(dims);
    const bool batched = i % 3 != 2;
    const MaskChoice kpm = static_cast<MaskChoice>(i % 3);
    const int attn_variant = (i / 3) % 5;  // none, bool 2-D, float 2-D, bool 3-D, float 3-D
    const MaskChoice attn = attn_variant == 0 ? MaskChoice::kNone
                            : attn_variant % 2 == 1 ? MaskChoice::kBool
                                                    : MaskChoice::kFloat;
    MhaCase c = MakeCase(rng, config, batched, rng.Int(1, 3), rng.Pick(lengths), rng.Pick(lengths), kpm, attn,
                         attn_variant >= 3);
    c.need_weights = i % 4 != 3;
    c.average_attn_weights = (i / 2) % 2 == 0;
    c.Finish();
    cases.push_back(std::move(c));
  }
  return cases;
}

void CheckCasesOnEveryTarget(const std::vector<MhaCase>& cases) {
  ForEachTarget([&](const std::string&) {
    for (const MhaCase& c : cases) {
      INFO(c.Describe());
      MultiHeadAttention mha(c.config);
      mha.LoadStateDict(Views(c.state));
      CheckForward(mha, c);
    }
  });
}

TEST_CASE("mha: random configurations (all options, both layouts, unbatched, masks)", "[mha]") {
  CheckCasesOnEveryTarget(RandomCases());
}

TEST_CASE("mha: longer sequences, L != S, both layouts", "[mha]") {
  std::vector<MhaCase> cases;
  uint64_t seed = 500;
  for (bool batch_first : {true, false}) {
    for (int variant = 0; variant < 3; ++variant) {
      Rng rng(seed++);
      MhaConfig config;
      config.embed_dim = 32;
      config.num_heads = 4;
      config.batch_first = batch_first;
      if (variant == 1) {
        config.kdim = 24;
        config.vdim = 40;
      }
      const MaskChoice attn = variant == 2 ? MaskChoice::kFloat : MaskChoice::kNone;
      cases.push_back(MakeCase(rng, config, true, 2, 33, 70, variant == 1 ? MaskChoice::kBool : MaskChoice::kNone,
                               attn, /*attn_3d=*/false));
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("mha: unbatched inputs with a 3-D (H, L, S) attn_mask and a 1-D key_padding_mask", "[mha]") {
  std::vector<MhaCase> cases;
  for (int variant = 0; variant < 4; ++variant) {
    Rng rng(600 + variant);
    MhaConfig config;
    config.embed_dim = 12;
    config.num_heads = 3;
    config.add_bias_kv = variant == 1;
    config.add_zero_attn = variant == 2;
    config.batch_first = variant == 3;
    cases.push_back(MakeCase(rng, config, /*batched=*/false, 1, 4, 6, MaskChoice::kBool,
                             variant % 2 ? MaskChoice::kBool : MaskChoice::kFloat, /*attn_3d=*/true));
    cases.back().average_attn_weights = variant % 2 == 0;
    cases.back().Finish();
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("mha: an item whose keys are all padded gives zero weights and output rows equal to out_proj.bias",
          "[mha][mask]") {
  Rng rng(700);
  MhaConfig config;
  config.embed_dim = 8;
  config.num_heads = 2;
  config.batch_first = true;
  MhaCase c = MakeCase(rng, config, true, 2, 3, 5, MaskChoice::kNone, MaskChoice::kNone, false);
  c.key_padding_mask = RandomBoolMask(rng, {2, 5}, 0.0);
  for (int64_t j = 0; j < 5; ++j) c.key_padding_mask.bools[5 + j] = 1;  // item 1: every key padded
  c.Finish();
  const std::vector<float>& bias = c.state.at("out_proj.bias").data;
  ForEachTarget([&](const std::string&) {
    MultiHeadAttention mha(config);
    mha.LoadStateDict(Views(c.state));
    CheckForward(mha, c);
    const AttentionResult r = mha.Forward(c.Query(), c.Key(), c.Value(), c.Options());
    REQUIRE(r.output.data.size() == 2u * 3 * 8);
    REQUIRE(r.weights.data.size() == 2u * 3 * 5);
    CHECK(AllFinite(r.output.data));
    for (int64_t t = 0; t < 3; ++t) {
      for (int64_t f = 0; f < 8; ++f) CHECK(r.output.data[(3 + t) * 8 + f] == Approx(bias[f]).margin(1e-6));
      for (int64_t j = 0; j < 5; ++j) CHECK(r.weights.data[(3 + t) * 5 + j] == 0.0f);
    }
  });
}

TEST_CASE("mha: ParameterShapes follow PyTorch's names, order and shapes", "[mha][state]") {
  std::vector<MhaConfig> configs;
  for (int i = 0; i < 16; ++i) {
    MhaConfig c;
    c.embed_dim = 12;
    c.num_heads = 3;
    c.bias = (i & 1) != 0;
    c.add_bias_kv = (i & 2) != 0;
    c.kdim = (i & 4) ? 7 : -1;
    c.vdim = (i & 8) ? 5 : -1;
    configs.push_back(c);
  }
  MhaConfig explicit_same = configs[0];
  explicit_same.kdim = 12;  // kdim == vdim == embed_dim: PyTorch still uses in_proj_weight
  explicit_same.vdim = 12;
  configs.push_back(explicit_same);
  MhaConfig only_kdim = configs[0];
  only_kdim.kdim = 7;  // one differing dim is enough for separate projections
  configs.push_back(only_kdim);
  for (const MhaConfig& c : configs) {
    INFO(DescribeConfig(c));
    MultiHeadAttention mha(c);
    CHECK(NamedShapesToString(mha.ParameterShapes()) == NamedShapesToString(ExpectedParameterShapes(c)));
    CHECK(mha.config().embed_dim == c.embed_dim);
    CHECK(mha.config().num_heads == c.num_heads);
    CHECK(mha.config().bias == c.bias);
    CHECK(mha.config().add_bias_kv == c.add_bias_kv);
  }
}

TEST_CASE("mha: LoadStateDict then StateDict round-trips every value bit for bit", "[mha][state]") {
  for (int i = 0; i < 8; ++i) {
    Rng rng(800 + i);
    MhaConfig config;
    config.embed_dim = 8;
    config.num_heads = 2;
    config.bias = (i & 1) == 0;
    config.add_bias_kv = (i & 2) != 0;
    config.kdim = (i & 4) ? 3 : -1;
    INFO(DescribeConfig(config));
    MultiHeadAttention mha(config);
    const StateDict loaded = RandomStateDict(rng, config);
    mha.LoadStateDict(Views(loaded));
    const StateDict saved = mha.StateDict();
    REQUIRE(saved.size() == loaded.size());
    for (const auto& entry : loaded) {
      INFO("parameter " << entry.first);
      auto it = saved.find(entry.first);
      REQUIRE(it != saved.end());
      CHECK(it->second.shape == entry.second.shape);
      CHECK(BitIdentical(it->second.data, entry.second.data));
    }
  }
}

TEST_CASE("mha: default initialisation (before LoadStateDict) is PyTorch-like and usable", "[mha][init]") {
  std::vector<MhaConfig> configs(4);
  for (MhaConfig& c : configs) {
    c.embed_dim = 16;
    c.num_heads = 4;
  }
  configs[1].kdim = 6;
  configs[1].vdim = 10;
  configs[2].add_bias_kv = true;
  configs[2].add_zero_attn = true;
  configs[3].bias = false;
  configs[3].batch_first = true;
  for (const MhaConfig& config : configs) {
    INFO(DescribeConfig(config));
    const int64_t e = config.embed_dim;
    MultiHeadAttention mha(config, /*seed=*/1234);
    const StateDict state = mha.StateDict();
    CHECK(state.size() == ExpectedParameterShapes(config).size());
    for (const auto& entry : ExpectedParameterShapes(config)) {
      INFO("parameter " << entry.first);
      REQUIRE(state.count(entry.first) == 1);
      const Tensor& t = state.at(entry.first);
      CHECK(t.shape == entry.second);
      REQUIRE(static_cast<int64_t>(t.data.size()) == NumElements(entry.second));
      CHECK(AllFinite(t.data));
      float max_abs = 0.0f;
      for (float x : t.data) max_abs = std::max(max_abs, std::fabs(x));
      const std::string& name = entry.first;
      if (name == "in_proj_bias" || name == "out_proj.bias") {
        CHECK(max_abs == 0.0f);
      } else if (name == "bias_k" || name == "bias_v") {
        // Xavier-normal, std 1/sqrt(E) for shape (1, 1, E).
        CHECK(max_abs > 0.0f);
        CHECK(max_abs < 6.0f / std::sqrt(float(e)));
      } else {
        // Xavier-uniform bound sqrt(6 / (fan_in + fan_out)). PyTorch leaves out_proj.weight at nn.Linear's
        // default (bound 1/sqrt(E)); both stay within the Xavier bound checked here.
        const int64_t fan_out = entry.second[0], fan_in = entry.second[1];
        const float bound = std::sqrt(6.0f / float(fan_in + fan_out));
        INFO("max |w| " << max_abs << " bound " << bound);
        CHECK(max_abs <= bound * (1.0f + 1e-6f));
        CHECK(max_abs > 0.25f * bound);  // not degenerate
      }
    }

    // Same seed: same parameters; another seed: different projections.
    const StateDict same = MultiHeadAttention(config, 1234).StateDict();
    const StateDict other = MultiHeadAttention(config, 99).StateDict();
    const std::string first = ExpectedParameterShapes(config)[0].first;
    for (const auto& entry : state) CHECK(BitIdentical(same.at(entry.first).data, entry.second.data));
    CHECK_FALSE(BitIdentical(other.at(first).data, state.at(first).data));

    // Forward works on every target and agrees with the reference run on the exported parameters.
    Rng rng(900);
    MhaCase c = MakeCase(rng, config, true, 2, 5, 4, MaskChoice::kBool, MaskChoice::kNone, false);
    c.state = state;
    c.Finish();
    ForEachTarget([&](const std::string&) {
      const AttentionResult r = mha.Forward(c.Query(), c.Key(), c.Value(), c.Options());
      CHECK(AllFinite(r.output.data));
      CheckForward(mha, c);
    });
  }
}

TEST_CASE("mha: moved-from and moved-to modules", "[mha]") {
  Rng rng(1000);
  MhaConfig config;
  config.embed_dim = 8;
  config.num_heads = 2;
  MhaCase c = MakeCase(rng, config, true, 2, 3, 4, MaskChoice::kNone, MaskChoice::kNone, false);
  MultiHeadAttention a(config);
  a.LoadStateDict(Views(c.state));
  MultiHeadAttention b(std::move(a));
  CheckForward(b, c);
  MultiHeadAttention d(config, 5);
  d = std::move(b);
  CheckForward(d, c);
  CHECK(d.config().embed_dim == 8);
}

TEST_CASE("mha: repeated forward calls give bit-identical results", "[mha][determinism]") {
  Rng rng(1100);
  MhaConfig config;
  config.embed_dim = 16;
  config.num_heads = 4;
  config.add_bias_kv = true;
  MhaCase c = MakeCase(rng, config, true, 3, 9, 17, MaskChoice::kBool, MaskChoice::kFloat, true);
  c.average_attn_weights = false;
  c.Finish();
  ForEachTarget([&](const std::string&) {
    MultiHeadAttention mha(config);
    mha.LoadStateDict(Views(c.state));
    for (bool need_weights : {true, false}) {
      MhaForwardOptions options = c.Options();
      options.need_weights = need_weights;
      const AttentionResult first = mha.Forward(c.Query(), c.Key(), c.Value(), options);
      for (int repeat = 0; repeat < 3; ++repeat) {
        const AttentionResult again = mha.Forward(c.Query(), c.Key(), c.Value(), options);
        CHECK(BitIdentical(first.output.data, again.output.data));
        CHECK(BitIdentical(first.weights.data, again.weights.data));
      }
    }
  });
}

}  // namespace
}  // namespace attnlab_test
