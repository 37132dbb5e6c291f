// Mirrors cpp/src/model/types/vit.cc and the vision path of encoder.cc / block-inl.h (PatchEmbed, ops/patches.h):
// ViTConfig's keys and createModel's fields (defaults, features, the head from the checkpoint's names), what the
// patch embedding reads of an image, and each bad configuration, checkpoint or input refused with
// std::invalid_argument naming the key, tensor or argument. The forward against PyTorch: encoder_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "nlohmann/json.hpp"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::AttentionBias;
using attnlab::ConfigFromHuggingFace;
using attnlab::ConfigFromOptions;
using attnlab::PixelsView;
using attnlab::Task;
using attnlab::Transformer;
using attnlab::TransformerConfig;
using Json = nlohmann::json;

// createModel's options of a small ViT (image 10, patch 3: 9 patches and a trailing pixel) with `extra` fields.
std::string VitOptions(const std::string& extra = "") {
  return R"({"arch": "vit", "embedDim": 8, "numLayers": 1, "numHeads": 2, "imageSize": 10, "patchSize": 3,
             "numChannels": 2)" +
         extra + "}";
}

// A fixture's checkpoint loaded in float32.
Transformer LoadedVit(const EncoderFixture& f) {
  Transformer model(f.Config(), 0, false);
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [name, tensor] : f.checkpoint) state[name] = tensor.View();
  model.LoadStateDict(state);
  return model;
}

TEST_CASE("vit types: absent keys take ViTConfig's defaults; blocks are pre-LayerNorm and non-causal",
          "[model][types]") {
  const TransformerConfig c = ConfigFromHuggingFace(R"({"model_type": "vit"})");
  CHECK((c.embed_dim == 768 && c.num_layers == 12 && c.num_heads == 12 && c.hidden_dim == 3072));
  CHECK((c.image_size == 224 && c.patch_size == 16 && c.num_channels == 3 && c.context_length == 197));
  CHECK((c.norm_eps == 1e-12 && c.task == Task::kBase && c.pooler && c.attention_bias == AttentionBias::kAll));
  CHECK((!c.post_norm && !c.embed_norm && !c.causal && c.norm == attnlab::NormKind::kLayerNorm));
  CHECK((c.mlp == attnlab::MlpKind::kGeluErf && c.positions == attnlab::PositionKind::kLearned && c.vocab_size == 0));
  const TransformerConfig odd = ConfigFromOptions(VitOptions());
  CHECK(odd.context_length == 1 + 3 * 3);  // (10 / 3 = 3 patches a side; the tenth pixel dropped)
  CHECK(odd.hidden_dim == 32);
}

TEST_CASE("vit types: the head comes from the checkpoint's names; qkv_bias false keeps the output bias only",
          "[model][types]") {
  const TransformerConfig c = ConfigFromHuggingFace(R"({"model_type": "vit", "qkv_bias": false, "num_labels": 5})");
  CHECK(c.attention_bias == AttentionBias::kOut);
  const TransformerConfig cls = attnlab::ConfigWithHeads(c, {"vit.embeddings.cls_token", "classifier.weight"});
  CHECK((cls.task == Task::kImageClassification && !cls.pooler && cls.num_labels == 5 && cls.head_bias));
  const TransformerConfig base = attnlab::ConfigWithHeads(c, {"pooler.dense.weight"});
  CHECK((base.task == Task::kBase && base.pooler));
  const Transformer model(cls, 0, false);
  std::map<std::string, attnlab::Shape> shapes;
  for (const auto& [name, shape] : model.ParameterShapes()) shapes[name] = shape;
  CHECK(shapes.count("encoder.layer.0.attention.attention.query.bias") == 0);
  CHECK(shapes.at("encoder.layer.0.attention.output.dense.bias") == attnlab::Shape{768});
  CHECK(shapes.at("embeddings.patch_embeddings.projection.weight") == attnlab::Shape{768, 3, 16, 16});
  CHECK(shapes.at("classifier.weight") == attnlab::Shape{5, 768});
  CHECK(model.CanonicalName("vit.layernorm.weight") == "layernorm.weight");
}

TEST_CASE("vit types: config.json's hidden_act, pooler_act and pooler_output_size are checked",
          "[model][types][validation]") {
  ExpectInvalidArgument([] { ConfigFromHuggingFace(R"({"model_type": "vit", "hidden_act": "gelu_fast"})"); },
                        {"config.hidden_act"});
  ExpectInvalidArgument([] { ConfigFromHuggingFace(R"({"model_type": "vit", "pooler_act": "relu"})"); },
                        {"config.pooler_act"});
  ExpectInvalidArgument(
      [] { ConfigFromHuggingFace(R"({"model_type": "vit", "hidden_size": 64, "pooler_output_size": 32})"); },
      {"config.pooler_output_size"});
}

TEST_CASE("vit types: imageSize, patchSize and numChannels out of range are named", "[model][types][validation]") {
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "imageSize": 0)")); }, {"imageSize"});
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "patchSize": 11)")); }, {"patchSize"});
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "patchSize": 0)")); }, {"patchSize"});
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "numChannels": 0)")); }, {"numChannels"});
  ExpectInvalidArgument([] { ConfigFromHuggingFace(R"({"model_type": "vit", "image_size": 8, "patch_size": 16})"); },
                        {"patchSize"});
}

TEST_CASE("vit types: a contextLength other than 1 + (imageSize / patchSize)² is named", "[model][types][validation]") {
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "contextLength": 16)")); }, {"contextLength"});
  CHECK(ConfigFromOptions(VitOptions(R"(, "contextLength": 10)")).context_length == 10);
}

TEST_CASE("vit types: a text task or no labels is named", "[model][types][validation]") {
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "task": "masked-lm")")); }, {"task"});
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "task": "sequence-classification")")); }, {"task"});
  ExpectInvalidArgument([] { ConfigFromOptions(VitOptions(R"(, "task": "image-classification", "numLabels": 0)")); },
                        {"numLabels"});
}

TEST_CASE("vit: token ids to a vision model and pixels to a text model are named", "[model][encoder][validation]") {
  Transformer vit(ConfigFromOptions(VitOptions()));
  const std::vector<int32_t> ids = {1, 2};
  ExpectInvalidArgument([&] { vit.Forward(attnlab::TokensView{ids.data(), {1, 2}}); }, {"tokens"});
  Transformer bert(ConfigFromOptions(
      R"({"arch": "bert", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1, "numHeads": 2})"));
  const std::vector<float> pixels(2 * 10 * 10);
  ExpectInvalidArgument([&] { bert.Forward(PixelsView{pixels.data(), {1, 2, 10, 10}}); }, {"pixelValues"});
}

TEST_CASE("vit: pixels of another channel count, height, width or rank are named", "[model][encoder][validation]") {
  Transformer vit(ConfigFromOptions(VitOptions()));
  const std::vector<float> pixels(3 * 11 * 11);
  for (const attnlab::Shape& shape : {attnlab::Shape{1, 3, 10, 10}, attnlab::Shape{1, 2, 11, 10},
                                      attnlab::Shape{1, 2, 10, 11}, attnlab::Shape{2, 10, 10}}) {
    INFO("rank " << shape.size() << ", dimension 1: " << shape[1]);
    ExpectInvalidArgument([&] { vit.Forward(PixelsView{pixels.data(), shape}); }, {"pixelValues"});
  }
  ExpectInvalidArgument([&] { vit.Forward(PixelsView{nullptr, {1, 2, 10, 10}}); }, {"pixelValues"});
  CHECK(vit.Forward(PixelsView{pixels.data(), {1, 2, 10, 10}}).last_hidden_state.shape == attnlab::Shape{1, 10, 8});
}

TEST_CASE("vit: token types, lastLogitsOnly, a KV cache and training are refused", "[model][encoder][validation]") {
  Transformer vit(ConfigFromOptions(VitOptions()));
  const std::vector<float> pixels(2 * 10 * 10);
  const std::vector<int32_t> types(10), ids = {1, 2};
  attnlab::TransformerForwardOptions options;
  options.token_type_ids = types.data();
  options.token_type_ids_shape = {1, 10};
  ExpectInvalidArgument([&] { vit.Forward(PixelsView{pixels.data(), {1, 2, 10, 10}}, options); }, {"tokenTypeIds"});
  attnlab::TransformerForwardOptions last;
  last.last_logits_only = true;
  ExpectInvalidArgument([&] { vit.Forward(PixelsView{pixels.data(), {1, 2, 10, 10}}, last); }, {"lastLogitsOnly"});
  ExpectInvalidArgument([&] { vit.CreateKVCache(1, 4); }, {"causal"});
  ExpectInvalidArgument([&] { vit.LossAndGradient({ids.data(), {1, 2}}, {ids.data(), {1, 2}}); }, {"task"});
}

TEST_CASE("vit: a masked-image-modelling tensor, a wrongly shaped patch projection and a missing [CLS] are named",
          "[model][validation]") {
  const EncoderFixture f = LoadEncoderFixture(kEncoderFixtureDir + "/vit_cls_f32");
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [name, tensor] : f.checkpoint) state[name] = tensor.View();
  Transformer model(f.Config(), 0, false);
  const std::vector<float> values(32 * 3 * 5 * 5);
  std::map<std::string, attnlab::TensorView> extra = state;
  extra["vit.embeddings.mask_token"] = attnlab::TensorView{values.data(), {1, 1, 32}};
  ExpectInvalidArgument([&] { model.LoadStateDict(extra); }, {"vit.embeddings.mask_token"});
  std::map<std::string, attnlab::TensorView> wrong = state;
  wrong["vit.embeddings.patch_embeddings.projection.weight"] = attnlab::TensorView{values.data(), {32, 3, 5, 5}};
  ExpectInvalidArgument([&] { model.LoadStateDict(wrong); }, {"vit.embeddings.patch_embeddings.projection.weight"});
  std::map<std::string, attnlab::TensorView> missing = state;
  missing.erase("vit.embeddings.cls_token");
  ExpectInvalidArgument([&] { model.LoadStateDict(missing); }, {"embeddings.cls_token"});
}

TEST_CASE("vit: pixels past the last whole patch change nothing; any other pixel changes the logits",
          "[model][encoder]") {
  const EncoderFixture f = LoadEncoderFixture(kEncoderFixtureDir + "/vit_cls_f32");  // (image 14, patch 4)
  Transformer model = LoadedVit(f);
  const FixtureTensor& pixels = f.forward.front().pixel_values.tensor;
  const attnlab::Tensor logits = model.Forward(PixelsView{pixels.values.data(), pixels.shape}).logits;
  std::vector<float> changed = pixels.values;
  for (size_t plane = 0; plane < 2 * 3; ++plane) {  // (rows and columns 12 and 13 of every image and channel)
    for (size_t y = 0; y < 14; ++y) {
      for (size_t x = 0; x < 14; ++x) {
        if (y >= 12 || x >= 12) changed[(plane * 14 + y) * 14 + x] = 7.0f;
      }
    }
  }
  CHECK(model.Forward(PixelsView{changed.data(), pixels.shape}).logits.data == logits.data);
  changed[11 * 14 + 11] += 0.5f;  // (the last pixel of the last whole patch of image 0, channel 0)
  const attnlab::Tensor moved = model.Forward(PixelsView{changed.data(), pixels.shape}).logits;
  CHECK(moved.data != logits.data);
  CHECK(std::equal(moved.data.begin() + 4, moved.data.end(), logits.data.begin() + 4));  // (image 1 unchanged)
}

TEST_CASE("vit: a created model's state dict loads into another with the same outputs", "[model][encoder]") {
  const TransformerConfig c = ConfigFromOptions(VitOptions(R"(, "task": "image-classification", "numLabels": 3)"));
  Transformer a(c, 11), b(c, 12);
  std::map<std::string, attnlab::Tensor> dict = a.StateDict();
  std::map<std::string, attnlab::TensorView> views;
  for (const auto& [name, t] : dict) views[name] = attnlab::TensorView{t.data.data(), t.shape};
  b.LoadStateDict(views);
  std::vector<float> pixels(2 * 2 * 10 * 10);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(i % 17) / 8.0f - 1.0f;
  const attnlab::TransformerOutput oa = a.Forward(PixelsView{pixels.data(), {2, 2, 10, 10}});
  const attnlab::TransformerOutput ob = b.Forward(PixelsView{pixels.data(), {2, 2, 10, 10}});
  CHECK(oa.logits.shape == attnlab::Shape{2, 3});
  CHECK(oa.logits.data == ob.logits.data);
  CHECK(dict.at("embeddings.patch_embeddings.projection.weight").shape == attnlab::Shape{8, 2, 3, 3});
  CHECK(Json::parse(attnlab::OptionsJson(c)).at("task") == "image-classification");
}

}  // namespace
}  // namespace attnlab_test
