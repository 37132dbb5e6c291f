// Every ONNX Attention fixture in tests/fixtures/onnx/ (format in its README.md) through ScaledDotProductAttention
// with the modern options (GQA, causal alignment, kv_lengths, windows, softcap, scores, past key/value), on every
// Highway target, with and without weights.
#include <catch2/catch.hpp>

#include <cstdint>
#include <exception>
#include <iostream>
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

constexpr size_t kMinOnnxCases = 41;

attnlab::ScoresStage StageOf(const nlohmann::json& c) {
  if (c.at("return_scores").is_null()) return attnlab::ScoresStage::kNone;
  const std::string s = c.at("return_scores").get<std::string>();
  if (s == "scaled") return attnlab::ScoresStage::kScaled;
  if (s == "softcapped") return attnlab::ScoresStage::kSoftcapped;
  if (s == "masked") return attnlab::ScoresStage::kMasked;
  throw std::runtime_error("fixture: unknown return_scores " + s);
}

bool CheckTensor(const Fixture& f, const std::string& name, const attnlab::Tensor& actual, const std::string& label) {
  const FixtureTensor& want = f.outputs.at(name);
  INFO(label << ": shape " << ShapeToString(actual.shape) << ", expected " << ShapeToString(want.shape));
  CHECK(actual.shape == want.shape);
  return actual.shape == want.shape && CheckAllClose(label, actual.data, want.values, Tolerance{f.atol, f.rtol});
}

bool RunOnnxFixture(const Fixture& f) {
  const nlohmann::json& c = f.config;
  attnlab::SdpaOptions options;
  // The ONNX fixtures store bool masks as true = may attend, attnlab SDPA's convention.
  const OwnedMask mask = MaskAsStored(f.FindInput("attn_mask"));
  options.attn_mask = mask.View();
  if (c.at("is_causal").is_string()) {
    options.is_causal = true;
    options.causal_align = c.at("is_causal").get<std::string>() == "lower-right" ? attnlab::CausalAlign::kLowerRight
                                                                                 : attnlab::CausalAlign::kUpperLeft;
  }
  if (!c.at("scale_is_default").get<bool>()) {
    options.has_scale = true;
    options.scale = c.at("scale").get<float>();
  }
  options.enable_gqa = c.at("enable_gqa").get<bool>();
  if (const FixtureTensor* lengths = f.FindInput("kv_lengths")) {
    options.kv_lengths = lengths->ints.data();
    options.num_kv_lengths = lengths->ints.size();
  }
  if (!c.at("window").is_null()) {
    options.window_left = c.at("window").at(0).get<int64_t>();
    options.window_right = c.at("window").at(1).get<int64_t>();
  }
  options.softcap = c.at("softcap").get<float>();
  options.return_scores = StageOf(c);
  const bool past = f.FindInput("past_key") != nullptr;
  if (past) {
    options.past_key = f.inputs.at("past_key").View();
    options.past_value = f.inputs.at("past_value").View();
  }
  const attnlab::TensorView q = f.inputs.at("query").View();
  const attnlab::TensorView k = f.inputs.at("key").View();
  const attnlab::TensorView v = f.inputs.at("value").View();

  bool ok = true;
  for (const bool need_weights : {true, false}) {
    const std::string suffix = need_weights ? "" : " (need_weights=false)";
    options.need_weights = need_weights;
    const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(q, k, v, options);
    ok &= CheckTensor(f, "output", r.output, "output" + suffix);
    if (need_weights) {
      ok &= CheckTensor(f, "weights", r.weights, "weights");
    } else {
      CHECK(r.weights.data.empty());
      ok &= r.weights.data.empty();
    }
    if (options.return_scores != attnlab::ScoresStage::kNone) {
      ok &= CheckTensor(f, "scores", r.scores, "scores" + suffix);
    } else {
      CHECK(r.scores.data.empty());
      ok &= r.scores.data.empty();
    }
    if (past) {
      ok &= CheckTensor(f, "present_key", r.present_key, "present_key" + suffix);
      ok &= CheckTensor(f, "present_value", r.present_value, "present_value" + suffix);
    } else {
      CHECK(r.present_key.data.empty());
      ok &= r.present_key.data.empty();
    }
  }
  return ok;
}

TEST_CASE("ONNX Attention fixtures match on every target", "[fixtures][onnx]") {
  CheckFixtureDirectory(std::string(ATTNLAB_FIXTURE_DIR) + "/../onnx", kMinOnnxCases, "onnx fixtures", RunOnnxFixture);
}

}  // namespace
}  // namespace attnlab_test
