// Mirrors cpp/src/model/types/bert.cc and roberta.cc: config.json keys and createModel's fields of the BERT family
// (defaults, features, the head from the checkpoint's names), and each bad configuration or checkpoint refused
// with std::invalid_argument naming the key or tensor.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "nlohmann/json.hpp"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::ConfigFromHuggingFace;
using attnlab::ConfigFromOptions;
using attnlab::Task;
using attnlab::TransformerConfig;
using Json = nlohmann::json;

Json BertJson() {
  return Json::parse(R"({"model_type": "bert", "vocab_size": 30, "hidden_size": 16, "num_hidden_layers": 1,
    "num_attention_heads": 2, "intermediate_size": 24, "max_position_embeddings": 8})");
}

TEST_CASE("bert types: absent keys take BertConfig's defaults; features are the family's", "[model][types]") {
  const TransformerConfig c = ConfigFromHuggingFace(R"({"model_type": "bert"})");
  CHECK((c.vocab_size == 30522 && c.embed_dim == 768 && c.num_layers == 12 && c.num_heads == 12));
  CHECK((c.hidden_dim == 3072 && c.context_length == 512 && c.type_vocab_size == 2 && c.norm_eps == 1e-12));
  CHECK((c.task == Task::kBase && c.pooler && c.pad_token_id == 0));
  CHECK((c.post_norm && c.embed_norm && !c.causal && c.mlp == attnlab::MlpKind::kGeluErf));
  CHECK(c.attention_bias == attnlab::AttentionBias::kAll);
  const TransformerConfig r = ConfigFromHuggingFace(R"({"model_type": "roberta", "hidden_act": "gelu_new"})");
  CHECK((r.pad_token_id == 1 && r.context_length == 510 && r.pad_offset_positions));
  CHECK((r.mlp == attnlab::MlpKind::kGeluTanh && r.head_act == attnlab::MlpKind::kGeluErf));
  Json relu = BertJson();
  relu["hidden_act"] = "relu";
  CHECK(ConfigFromHuggingFace(relu.dump()).mlp == attnlab::MlpKind::kRelu);
}

TEST_CASE("bert types: the head comes from the checkpoint's tensor names", "[model][types]") {
  const TransformerConfig c = ConfigFromHuggingFace(BertJson().dump());
  const TransformerConfig mlm = attnlab::ConfigWithHeads(
      c, {"bert.embeddings.word_embeddings.weight", "cls.predictions.bias", "cls.seq_relationship.bias"});
  CHECK((mlm.task == Task::kMaskedLm && !mlm.pooler && mlm.tie_embeddings && mlm.head_bias));
  const TransformerConfig cls = attnlab::ConfigWithHeads(c, {"classifier.weight", "classifier.bias"});
  CHECK((cls.task == Task::kSequenceClassification && cls.pooler && !cls.tie_embeddings));
  const TransformerConfig base = attnlab::ConfigWithHeads(c, {"embeddings.word_embeddings.weight"});
  CHECK((base.task == Task::kBase && !base.pooler));
  Json roberta = BertJson();
  roberta["model_type"] = "roberta";
  const TransformerConfig rcls =
      attnlab::ConfigWithHeads(ConfigFromHuggingFace(roberta.dump()), {"classifier.out_proj.weight"});
  CHECK((rcls.task == Task::kSequenceClassification && rcls.classifier_dense && !rcls.pooler));
}

TEST_CASE("bert types: position_embedding_type relative_key is refused", "[model][types][validation]") {
  Json j = BertJson();
  j["position_embedding_type"] = "relative_key";
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.position_embedding_type"});
}

TEST_CASE("bert types: an activation attnlab does not compute is refused", "[model][types][validation]") {
  Json j = BertJson();
  j["hidden_act"] = "gelu_fast";
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.hidden_act"});
  ExpectInvalidArgument(
      [&] {
        ConfigFromOptions(R"({"arch": "bert", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1,
                              "numHeads": 2, "hiddenAct": "tanh"})");
      },
      {"hiddenAct"});
}

TEST_CASE("bert types: BERT as a decoder is refused", "[model][types][validation]") {
  Json j = BertJson();
  j["is_decoder"] = true;
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.is_decoder"});
}

TEST_CASE("bert types: RoBERTa needs positions past its padding offset", "[model][types][validation]") {
  Json j = BertJson();
  j["model_type"] = "roberta";
  j["max_position_embeddings"] = 2;  // (pad 1: positions start at 2)
  ExpectInvalidArgument([&] { ConfigFromHuggingFace(j.dump()); }, {"config.max_position_embeddings"});
}

TEST_CASE("bert types: createModel's task, pooler and padTokenId are checked", "[model][types][validation]") {
  const std::string base = R"({"arch": "bert", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1,
                               "numHeads": 2, )";
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("task": "causal-lm"})"); }, {"task"});
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("task": "translation"})"); }, {"task"});
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("task": "image-classification"})"); }, {"task"});
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("task": "sequence-classification", "pooler": false})"); },
                        {"pooler"});
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("padTokenId": 8})"); }, {"padTokenId"});
  ExpectInvalidArgument([&] { ConfigFromOptions(base + R"("task": "sequence-classification", "numLabels": 0})"); },
                        {"numLabels"});
}

// A fixture's checkpoint as views, with `edit` applied to a copy of its values.
struct Checkpoint {
  EncoderFixture f;
  std::map<std::string, std::vector<float>> copies;
  std::map<std::string, attnlab::TensorView> views;
  explicit Checkpoint(const std::string& name) : f(LoadEncoderFixture(kEncoderFixtureDir + "/" + name)) {
    for (const auto& [n, t] : f.checkpoint) views[n] = t.View();
  }
  void Change(const std::string& name, size_t index, float delta) {
    copies[name] = f.checkpoint.at(name).values;
    copies[name][index] += delta;
    views[name] = attnlab::TensorView{copies[name].data(), f.checkpoint.at(name).shape};
  }
};

TEST_CASE("bert types: a BERT classifier without its pooler names the missing tensor", "[model][validation]") {
  Checkpoint cp("bert_cls_f16");
  cp.views.erase("bert.pooler.dense.weight");
  cp.views.erase("bert.pooler.dense.bias");
  std::vector<std::string> names;
  for (const auto& [n, v] : cp.views) names.push_back(n);
  attnlab::Transformer model(attnlab::ConfigWithHeads(ConfigFromHuggingFace(cp.f.config_json), names));
  ExpectInvalidArgument([&] { model.LoadStateDict(cp.views); }, {"pooler.dense.weight"});
}

TEST_CASE("bert types: a tied masked-LM decoder that differs from its tie is named", "[model][validation]") {
  for (const char* tensor : {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}) {
    Checkpoint cp("bert_mlm_f32");
    cp.Change(tensor, 3, 0.5f);
    attnlab::Transformer model(cp.f.Config());
    ExpectInvalidArgument([&] { model.LoadStateDict(cp.views); }, {tensor});
  }
}

TEST_CASE("bert types: a head tensor of another task is an unknown name", "[model][validation]") {
  Checkpoint cp("roberta_cls_f32");
  attnlab::Transformer model(cp.f.Config());
  const std::vector<float> bias(24);
  cp.views["lm_head.bias"] = attnlab::TensorView{bias.data(), {24}};
  ExpectInvalidArgument([&] { model.LoadStateDict(cp.views); }, {"lm_head.bias"});
}

}  // namespace
}  // namespace attnlab_test
