// Mirrors cpp/src/model/types/: each Hugging Face model_type's config.json → the normalised configuration (its
// fields, features and defaults), the inverse for writers, createModel's options and model.config, and the errors
// that name a key.
#include <fstream>
#include <iterator>
#include <string>

#include "attnlab/transformer.h"
#include "catch2/catch.hpp"
#include "model_fixture.h"
#include "nlohmann/json.hpp"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::ConfigFromHuggingFace;
using attnlab::ConfigFromOptions;
using attnlab::HuggingFaceConfigJson;
using attnlab::OptionsJson;
using attnlab::TransformerConfig;
using Json = nlohmann::json;

const std::string kTypesFixtureDir = ATTNLAB_FIXTURE_DIR "/../models";

std::string ConfigText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Throws ConfigTypeError (a TypeError in JS) whose message names `name`.
template <class Fn>
void ExpectConfigTypeError(Fn&& fn, const std::string& name) {
  try {
    fn();
    FAIL_CHECK("expected ConfigTypeError naming " << name);
  } catch (const attnlab::ConfigTypeError& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains(name));
  }
}

Json Qwen3ConfigJson() {
  return Json::parse(R"({"model_type": "qwen3", "vocab_size": 50, "hidden_size": 32, "intermediate_size": 40,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": true})");
}

TEST_CASE("model types: each fixture's config.json reads as its expected model.config, and round-trips",
          "[model][types]") {
  for (const std::string& dir : ModelFixtureDirs(kTypesFixtureDir)) {
    INFO(dir);
    const TransformerConfig c = ConfigFromHuggingFace(ConfigText(dir + "/config.json"));
    const Json expected = Json::parse(ConfigText(dir + "/expected.json")).at("config");
    CHECK(Json::parse(OptionsJson(c)) == expected);
    // model.config → createModel, and the writer's config.json → loadModel: the same configuration again.
    CHECK(OptionsJson(ConfigFromOptions(OptionsJson(c))) == OptionsJson(c));
    const Json written = Json::parse(HuggingFaceConfigJson(c));
    CHECK(written.at("model_type") == Json::parse(ConfigText(dir + "/config.json")).at("model_type"));
    CHECK(OptionsJson(ConfigFromHuggingFace(written.dump())) == OptionsJson(c));
  }
}

TEST_CASE("model types: the features a block is made of come from the type", "[model][types]") {
  const TransformerConfig gpt2 = ConfigFromOptions(
      R"({"arch": "gpt2", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1, "numHeads": 2})");
  CHECK(gpt2.norm == attnlab::NormKind::kLayerNorm);
  CHECK(gpt2.positions == attnlab::PositionKind::kLearned);
  CHECK(gpt2.mlp == attnlab::MlpKind::kGeluTanh);
  CHECK(
      (gpt2.mlp_bias && !gpt2.qk_norm && gpt2.hidden_dim == 32 && gpt2.attention_bias == attnlab::AttentionBias::kAll));
  const TransformerConfig llama = ConfigFromOptions(
      R"({"arch": "llama", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1, "numHeads": 2})");
  CHECK(llama.norm == attnlab::NormKind::kRmsNorm);
  CHECK(llama.positions == attnlab::PositionKind::kRope);
  CHECK(llama.mlp == attnlab::MlpKind::kSwiGlu);
  CHECK((!llama.mlp_bias && !llama.qk_norm));
  CHECK(llama.hidden_dim == 32);  // (the documented default: 4 · embedDim)
  CHECK(llama.norm_eps == 1e-6);
  const TransformerConfig qwen3 = ConfigFromHuggingFace(Qwen3ConfigJson().dump());
  CHECK((qwen3.arch == "qwen3" && qwen3.qk_norm && qwen3.norm == attnlab::NormKind::kRmsNorm));
  CHECK((qwen3.head_dim == 16 && qwen3.num_kv_heads == 2 && qwen3.rope_theta == 1e6 && qwen3.tie_embeddings));
}

TEST_CASE("model types: qwen3 keys absent from config.json take Qwen3Config's defaults", "[model][types]") {
  const TransformerConfig c = ConfigFromHuggingFace(R"({"model_type": "qwen3"})");
  CHECK(c.vocab_size == 151936);
  CHECK(c.embed_dim == 4096);
  CHECK(c.hidden_dim == 22016);
  CHECK(c.num_layers == 32);
  CHECK(c.num_heads == 32);
  CHECK(c.num_kv_heads == 32);
  CHECK(c.head_dim == 128);
  CHECK(c.context_length == 32768);
  CHECK(c.norm_eps == 1e-6);
  CHECK(!c.tie_embeddings);
  CHECK(c.attention_bias == attnlab::AttentionBias::kNone);
  // createModel's qwen3 defaults: headDim 128 too
  CHECK(ConfigFromOptions(R"({"arch": "qwen3", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1,
                              "numHeads": 2})")
            .head_dim == 128);
  Json newer = Qwen3ConfigJson();  // newer config.json files keep θ in rope_parameters
  newer.erase("rope_theta");
  newer["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5e5}};
  CHECK(ConfigFromHuggingFace(newer.dump()).rope_theta == 5e5);
}

TEST_CASE("model types: bad configurations are refused naming the key", "[model][types][validation]") {
  Json j = Qwen3ConfigJson();
  j["use_sliding_window"] = true;
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.use_sliding_window"});
  j = Qwen3ConfigJson();
  j["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4}};
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.rope_parameters.rope_type"});
  j = Qwen3ConfigJson();
  j["model_type"] = "falcon";
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.model_type", "falcon", "qwen3"});
  ExpectInvalidArgument([&] { ConfigFromHuggingFace("{not json"); }, {"config"});
  j = Qwen3ConfigJson();
  j["hidden_size"] = "32";
  ExpectConfigTypeError([&] { ConfigFromHuggingFace(j.dump()); }, "config.hidden_size");
  j["hidden_size"] = 32.5;
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.hidden_size"});
  ExpectConfigTypeError([&] { ConfigFromHuggingFace(R"({"model_type": "gpt2", "n_positions": 8})"); },
                        "config.vocab_size");
  ExpectConfigTypeError([&] { ConfigFromOptions(R"({"arch": "gpt2", "vocabSize": 8, "hiddenDim": 4})"); }, "hiddenDim");
  ExpectConfigTypeError([&] { ConfigFromOptions(R"({"vocabSize": 8})"); }, "arch");
  ExpectInvalidArgument([&] { ConfigFromOptions(R"({"arch": "falcon"})"); }, {"arch", "falcon"});
  ExpectInvalidArgument(
      [&] {
        ConfigFromOptions(R"({"arch": "qwen3", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1,
                              "numHeads": 2, "attentionBias": "qkv"})");
      },
      {"attentionBias", "qkv"});
  // (the model still works after every refusal: the readers hold no state)
  CHECK(ConfigFromHuggingFace(Qwen3ConfigJson().dump()).qk_norm);
}

}  // namespace
}  // namespace attnlab_test
