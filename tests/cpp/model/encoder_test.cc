// Mirrors cpp/src/model/encoder.cc and the encoder stages of block-inl.h: BERT, RoBERTa and ViT checkpoints
// (tests/fixtures/encoders/, made by PyTorch references that follow Hugging Face's modeling files and checked
// against an independent NumPy forward) on every target, in float32 and in their own 16-bit storage: logits of
// each head, the pooled output, the last hidden state, every attention and hidden state, with padding, token types
// (or pixels) and head masks; the forward's encoder-only arguments named when wrong.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "attnlab/memory_needs.h"
#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "hwy_targets.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;
using attnlab::TransformerForwardOptions;
using attnlab::WeightStorage;

std::vector<EncoderFixture> AllEncoderFixtures() {
  std::vector<EncoderFixture> fixtures;
  for (const std::string& dir : ModelFixtureDirs(kEncoderFixtureDir)) fixtures.push_back(LoadEncoderFixture(dir));
  return fixtures;
}

Transformer Loaded(const EncoderFixture& f, WeightStorage storage) {
  return LoadedCheckpoint(f.Config(), f.checkpoint, storage);
}

WeightStorage StorageOf(const EncoderFixture& f) { return CheckpointStorage(f.checkpoint); }

attnlab::TransformerOutput Run(Transformer& model, const EncoderForwardCase& c, std::vector<uint8_t>& mask) {
  TransformerForwardOptions options;
  mask.assign(c.attention_mask.tensor.ints.begin(), c.attention_mask.tensor.ints.end());
  if (c.attention_mask.present) {
    options.attention_mask = mask.data();
    options.attention_mask_shape = c.attention_mask.tensor.shape;
  }
  if (c.token_type_ids.present) {
    options.token_type_ids = c.token_type_ids.tensor.ints.data();
    options.token_type_ids_shape = c.token_type_ids.tensor.shape;
  }
  if (c.head_mask.present) {
    options.head_mask = c.head_mask.tensor.values.data();
    options.head_mask_shape = c.head_mask.tensor.shape;
  }
  for (int64_t l = 0; l < model.config().num_layers; ++l) options.output_attentions.push_back(l);
  options.output_hidden_states = true;
  if (c.pixel_values.present)
    return model.Forward(attnlab::PixelsView{c.pixel_values.tensor.values.data(), c.pixel_values.tensor.shape},
                         options);
  return model.Forward({c.input_ids.tensor.ints.data(), c.input_ids.tensor.shape}, options);
}

void CheckEncoderCase(Transformer& model, const EncoderForwardCase& c, Tolerance tol) {
  INFO("forward case " << c.name);
  std::vector<uint8_t> mask;
  const attnlab::TransformerOutput out = Run(model, c, mask);
  if (c.logits.present) {
    CheckTensorClose("logits", out.logits, c.logits.tensor, tol);
  } else {
    CHECK(out.logits.data.empty());
  }
  if (c.pooler_output.present) {
    CheckTensorClose("pooledOutput", out.pooled_output, c.pooler_output.tensor, tol);
  } else {
    CHECK(out.pooled_output.data.empty());
  }
  CheckTensorClose("lastHiddenState", out.last_hidden_state, c.last_hidden_state, tol);
  CheckLayerOutputs(out, c.attentions, c.hidden_states, tol);
}

TEST_CASE(
    "encoders: BERT, RoBERTa and ViT checkpoints give PyTorch's logits, pooled output, attentions and hidden "
    "states on every target",
    "[model][encoder]") {
  const std::vector<EncoderFixture> fixtures = AllEncoderFixtures();
  REQUIRE(fixtures.size() == 6);
  for (const EncoderFixture& f : fixtures) {
    INFO("fixture " << f.name);
    std::vector<WeightStorage> storages = {WeightStorage::kFloat32};
    if (StorageOf(f) != WeightStorage::kFloat32) storages.push_back(StorageOf(f));
    ForEachTarget([&](const std::string&) {
      for (WeightStorage s : storages) {
        Transformer model = Loaded(f, s);
        CHECK(model.storage() == s);
        for (const EncoderForwardCase& c : f.forward) CheckEncoderCase(model, c, f.tol);
      }
    });
  }
}

TEST_CASE("encoders: each config.json with its checkpoint's names reads as the expected config and task",
          "[model][encoder][types]") {
  for (const EncoderFixture& f : AllEncoderFixtures()) {
    INFO("fixture " << f.name);
    CheckConfigReadsBack(f, "maxPositionEmbeddings");
    const attnlab::TransformerConfig c = f.Config();
    const Transformer model(c, 0, false);
    if (f.config.contains("maxPositionEmbeddings")) {  // (text; a vision model's positions: (1, contextLength, E))
      CHECK(model.ParameterShapes().at(1).first == "embeddings.position_embeddings.weight");
      CHECK(model.ParameterShapes().at(1).second.at(0) == f.config.at("maxPositionEmbeddings").get<int64_t>());
    } else {
      CHECK(model.ParameterShapes().at(1).second == attnlab::Shape{1, c.context_length, c.embed_dim});
    }
  }
}

// The first fixture of `name`, loaded in float32.
Transformer LoadedFixture(const std::string& name) {
  return Loaded(LoadEncoderFixture(kEncoderFixtureDir + "/" + name), WeightStorage::kFloat32);
}

TEST_CASE("encoders: token types out of range or of another shape are named", "[model][encoder][validation]") {
  Transformer model = LoadedFixture("bert_cls_f16");  // (3 token types)
  const std::vector<int32_t> ids = {1, 2, 3, 4}, types = {0, 1, 2, 3};
  TransformerForwardOptions options;
  options.token_type_ids = types.data();
  options.token_type_ids_shape = {1, 4};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, options); }, {"tokenTypeIds"});
  options.token_type_ids_shape = {2, 2};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, options); }, {"tokenTypeIds"});
}

TEST_CASE("encoders: a decoder refuses token types", "[model][encoder][validation]") {
  Transformer gpt2(attnlab::ConfigFromOptions(
      R"({"arch": "gpt2", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1, "numHeads": 2})"));
  const std::vector<int32_t> ids = {1, 2}, types = {0, 0};
  TransformerForwardOptions options;
  options.token_type_ids = types.data();
  options.token_type_ids_shape = {1, 2};
  ExpectInvalidArgument([&] { gpt2.Forward({ids.data(), {1, 2}}, options); }, {"tokenTypeIds"});
}

TEST_CASE("encoders: lastLogitsOnly, a KV cache and training are refused", "[model][encoder][validation]") {
  Transformer model = LoadedFixture("roberta_mlm_bf16");
  const std::vector<int32_t> ids = {3, 4, 5};
  TransformerForwardOptions options;
  options.last_logits_only = true;
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 3}}, options); }, {"lastLogitsOnly"});
  ExpectInvalidArgument([&] { model.CreateKVCache(1, 4); }, {"causal"});
  ExpectInvalidArgument([&] { model.LossAndGradient({ids.data(), {1, 3}}, {ids.data(), {1, 3}}); }, {"task"});
}

TEST_CASE("encoders: RoBERTa's positions limit a forward to contextLength tokens", "[model][encoder][validation]") {
  Transformer model = LoadedFixture("roberta_mlm_bf16");  // (max_position_embeddings 12, pad 1: 10 tokens)
  REQUIRE(model.config().context_length == 10);
  const std::vector<int32_t> ids(11, 5);
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 11}}); }, {"tokens"});
  CHECK(model.Forward({ids.data(), {1, 10}}).logits.shape == attnlab::Shape{1, 10, 24});
}

// The estimate's bytes for parts whose description starts with `prefix`.
double PartBytes(const attnlab::MemoryNeeds& needs, const std::string& prefix) {
  double bytes = 0;
  for (const attnlab::MemoryPart& part : needs) bytes += part.what.rfind(prefix, 0) == 0 ? part.bytes : 0;
  return bytes;
}

TEST_CASE("encoders: memory estimates count every parameter (RoBERTa's position rows too) and the outputs",
          "[model][encoder][memory_needs]") {
  for (const EncoderFixture& f : AllEncoderFixtures()) {
    INFO(f.name);
    const attnlab::TransformerConfig c = f.Config();
    const attnlab::MemoryNeeds needs = attnlab::TransformerParameterMemoryNeeds(c);
    const bool vision = c.patch_size > 0;  // (ViT's table is a parameter (1, 1 + N, E), not a .weight)
    const std::string table = vision ? "vit" : f.config_json.find("roberta") != std::string::npos ? "roberta" : "bert";
    const std::string positions = "embeddings.position_embeddings" + std::string(vision ? "" : ".weight");
    const auto table_entry = f.checkpoint.find(table + "." + positions);  // (a bare base model: no prefix)
    const attnlab::Shape& rows =
        (table_entry != f.checkpoint.end() ? table_entry : f.checkpoint.find(positions))->second.shape;
    CHECK(PartBytes(needs, "positions") == static_cast<double>(NumElements(rows)) * 4);
    double stored = 0, estimated = 0;
    for (const auto& [name, shape] : Transformer(c, 0).ParameterShapes())
      stored += static_cast<double>(NumElements(shape)) * 4;
    for (size_t i = 0; i + 1 < needs.size(); ++i) estimated += needs[i].bytes;  // (the last: staging)
    CHECK(estimated >= stored);
    CHECK(estimated < 1.5 * stored + 4 * 1024 * 1024);
    if (vision) continue;  // (the outputs below are a text model's forward)
    Transformer model(c, 0);
    const std::vector<int32_t> ids = {3, 4, 5, 6, 7, 8};
    const attnlab::TransformerOutput out = model.Forward({ids.data(), {2, 3}});
    const attnlab::MemoryNeeds forward = attnlab::TransformerForwardMemoryNeeds(c, {2, 3}, 0, {}, false, false, false);
    CHECK(PartBytes(forward, "logits") == static_cast<double>(NumElements(out.logits.shape)) * 4);
    CHECK(PartBytes(forward, "lastHiddenState") >=
          static_cast<double>(NumElements(out.last_hidden_state.shape) + NumElements(out.pooled_output.shape)) * 4);
  }
}

}  // namespace
}  // namespace attnlab_test
