// Every PyTorch fixture in tests/fixtures/torch/ through the public API, on every Highway target.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "json_fixture.h"
#include "test_util.h"

#ifndef ATTNLAB_FIXTURE_DIR
#error "ATTNLAB_FIXTURE_DIR must be defined as the absolute path of tests/fixtures/torch"
#endif

namespace attnlab_test {
namespace {

constexpr size_t kMinFixtureCases = 30;

bool CheckShape(const std::string& what, const Shape& actual, const Shape& expected) {
  INFO(what << ": shape " << ShapeToString(actual) << ", expected " << ShapeToString(expected));
  CHECK(actual == expected);
  return actual == expected;
}

// The sdpa fixtures store bool masks as true = masked out; attnlab's SDPA reads true = may attend.
OwnedMask SdpaMaskFromFixture(const FixtureTensor& t) {
  OwnedMask m;
  m.shape = t.shape;
  if (t.is_bool) {
    m.kind = attnlab::Mask::Kind::kBool;
    for (uint8_t masked_out : t.bools) m.bools.push_back(masked_out ? 0 : 1);
  } else {
    m.kind = attnlab::Mask::Kind::kFloat;
    m.floats = t.values;
  }
  return m;
}

// PyTorch writes NaN for fully masked rows; attnlab defines them: element i becomes replacement(i).
template <class Replacement>
std::vector<float> ReplaceNaN(const std::vector<float>& expected, Replacement replacement) {
  std::vector<float> out = expected;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i])) out[i] = replacement(i);
  }
  return out;
}

bool RunSdpaFixture(const Fixture& f) {
  const nlohmann::json& config = f.config;
  const Tolerance tol{f.atol, f.rtol};
  attnlab::SdpaOptions options;
  options.is_causal = config.value("is_causal", false);
  if (!config.value("scale_is_default", true)) {
    options.has_scale = true;
    options.scale = config.at("scale").get<float>();
  }
  OwnedMask mask;
  if (const FixtureTensor* m = f.FindInput("attn_mask")) mask = SdpaMaskFromFixture(*m);
  options.attn_mask = mask.View();
  const attnlab::TensorView q = f.inputs.at("query").View();
  const attnlab::TensorView k = f.inputs.at("key").View();
  const attnlab::TensorView v = f.inputs.at("value").View();

  // Fully masked rows: zero output and zero weights where PyTorch has NaN.
  const FixtureTensor& expected_output = f.outputs.at("output");
  const std::vector<float> output_want = ReplaceNaN(expected_output.values, [](size_t) { return 0.0f; });
  const bool has_weights = f.outputs.count("weights") > 0;

  bool ok = true;
  options.need_weights = has_weights;
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(q, k, v, options);
  ok &= CheckShape("output", r.output.shape, expected_output.shape);
  ok &= CheckAllClose("output", r.output.data, output_want, tol);
  if (has_weights) {
    const FixtureTensor& expected_weights = f.outputs.at("weights");
    ok &= CheckShape("weights", r.weights.shape, expected_weights.shape);
    ok &=
        CheckAllClose("weights", r.weights.data, ReplaceNaN(expected_weights.values, [](size_t) { return 0.0f; }), tol);
    // The need_weights=false (tiled online-softmax) path must match the same file.
    options.need_weights = false;
    const attnlab::AttentionResult tiled = attnlab::ScaledDotProductAttention(q, k, v, options);
    ok &= CheckShape("output (need_weights=false)", tiled.output.shape, expected_output.shape);
    ok &= CheckAllClose("output (need_weights=false)", tiled.output.data, output_want, tol);
    CHECK(tiled.weights.data.empty());
    ok &= tiled.weights.data.empty();
  }
  return ok;
}

attnlab::MhaConfig MhaConfigFromFixture(const nlohmann::json& c) {
  attnlab::MhaConfig config;
  config.embed_dim = c.at("embed_dim").get<int64_t>();
  config.num_heads = c.at("num_heads").get<int64_t>();
  config.bias = c.at("bias").get<bool>();
  config.add_bias_kv = c.at("add_bias_kv").get<bool>();
  config.add_zero_attn = c.at("add_zero_attn").get<bool>();
  // kdim == embed_dim is PyTorch's default; pass -1 so these runs do not depend on how an explicit value is read
  // (multi_head_attention_test checks that separately).
  const int64_t kdim = c.at("kdim").get<int64_t>(), vdim = c.at("vdim").get<int64_t>();
  config.kdim = kdim == config.embed_dim ? -1 : kdim;
  config.vdim = vdim == config.embed_dim ? -1 : vdim;
  config.batch_first = c.at("batch_first").get<bool>();
  return config;
}

bool RunMhaFixture(const Fixture& f) {
  const nlohmann::json& c = f.config;
  const Tolerance tol{f.atol, f.rtol};
  const attnlab::MhaConfig config = MhaConfigFromFixture(c);
  attnlab::MultiHeadAttention mha(config);
  std::map<std::string, attnlab::TensorView> state_dict;
  for (const auto& p : f.params) state_dict[p.first] = p.second.View();
  mha.LoadStateDict(state_dict);

  // MHA masks: the fixtures and attnlab both read bool true = masked out.
  const OwnedMask key_padding_mask = MaskAsStored(f.FindInput("key_padding_mask"));
  const OwnedMask attn_mask = MaskAsStored(f.FindInput("attn_mask"));
  attnlab::MhaForwardOptions options;
  options.key_padding_mask = key_padding_mask.View();
  options.attn_mask = attn_mask.View();
  options.need_weights = c.at("need_weights").get<bool>();
  options.average_attn_weights = c.at("average_attn_weights").get<bool>();
  const attnlab::TensorView q = f.inputs.at("query").View();
  const attnlab::TensorView k = f.inputs.at("key").View();
  const attnlab::TensorView v = f.inputs.at("value").View();

  // A fully masked item has zero attention output, so its layer output is out_proj.bias (0 without bias).
  const int64_t e = config.embed_dim;
  auto out_bias = f.params.find("out_proj.bias");
  const FixtureTensor& expected_output = f.outputs.at("output");
  const std::vector<float> output_want = ReplaceNaN(expected_output.values, [&](size_t i) {
    return out_bias == f.params.end() ? 0.0f : out_bias->second.values[i % static_cast<size_t>(e)];
  });

  bool ok = true;
  const attnlab::AttentionResult r = mha.Forward(q, k, v, options);
  ok &= CheckShape("output", r.output.shape, expected_output.shape);
  ok &= CheckAllClose("output", r.output.data, output_want, tol);
  if (options.need_weights) {
    const FixtureTensor& expected_weights = f.outputs.at("weights");
    ok &= CheckShape("weights", r.weights.shape, expected_weights.shape);
    ok &=
        CheckAllClose("weights", r.weights.data, ReplaceNaN(expected_weights.values, [](size_t) { return 0.0f; }), tol);
    options.need_weights = false;
    const attnlab::AttentionResult no_weights = mha.Forward(q, k, v, options);
    ok &= CheckAllClose("output (need_weights=false)", no_weights.output.data, output_want, tol);
    CHECK(no_weights.weights.data.empty());
    ok &= no_weights.weights.data.empty();
  } else {
    CHECK(r.weights.data.empty());
    ok &= r.weights.data.empty();
  }
  return ok;
}

TEST_CASE("PyTorch fixtures match on every target", "[fixtures]") {
  CheckFixtureDirectory(ATTNLAB_FIXTURE_DIR, kMinFixtureCases, "fixtures", [](const Fixture& fixture) {
    if (fixture.kind == "sdpa") return RunSdpaFixture(fixture);
    if (fixture.kind == "mha") return RunMhaFixture(fixture);
    FAIL_CHECK("unknown kind " << fixture.kind);
    return false;
  });
}

}  // namespace
}  // namespace attnlab_test
