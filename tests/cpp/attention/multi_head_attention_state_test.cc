// MultiHeadAttention's parameters: PyTorch's state-dict names, order and shapes, LoadStateDict / StateDict round
// trips, and the default initialisation, on every Highway target.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "mha_cases.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

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

}  // namespace
}  // namespace attnlab_test
