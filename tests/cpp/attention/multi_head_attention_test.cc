// MultiHeadAttention (torch.nn.MultiheadAttention, eval mode) forward against the double-precision reference, on
// every Highway target: all constructor options, both layouts, unbatched inputs, masks, moves, determinism.
// (State dicts and default initialisation: multi_head_attention_state_test.cc.)
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

TEST_CASE("mha: random configurations (all options, both layouts, unbatched, masks)", "[mha]") {
  CheckCasesOnEveryTarget(RandomCases());
}

TEST_CASE("mha: longer sequences, L != S, both layouts", "[mha]") {
  std::vector<MhaCase> cases;
  uint64_t seed = 500;
  for (bool batch_first : {true, false}) {
    for (int variant = 0; variant < 3; ++variant) {
      Rng rng(seed++);
      MhaConfig config = HeadsConfig(32, 4);
      config.batch_first = batch_first;
      if (variant == 1) {
        config.kdim = 24;
        config.vdim = 40;
      }
      const MaskChoice attn = variant == 2 ? MaskChoice::kFloat : MaskChoice::kNone;
      cases.push_back(MakeCase(rng, config, true, 2, 33, 70, variant == 1 ? MaskChoice::kBool : MaskChoice::kNone, attn,
                               /*attn_3d=*/false));
    }
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("mha: unbatched inputs with a 3-D (H, L, S) attn_mask and a 1-D key_padding_mask", "[mha]") {
  std::vector<MhaCase> cases;
  for (int variant = 0; variant < 4; ++variant) {
    Rng rng(600 + variant);
    MhaConfig config = HeadsConfig(12, 3);
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
  MhaConfig config = HeadsConfig(8, 2);
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

TEST_CASE("mha: moved-from and moved-to modules", "[mha]") {
  Rng rng(1000);
  MhaConfig config = HeadsConfig(8, 2);
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
  MhaConfig config = HeadsConfig(16, 4);
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
