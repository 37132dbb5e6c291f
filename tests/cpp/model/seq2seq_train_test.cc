// Mirrors cpp/src/model/seq2seq_train.cc and kernels_seq2seq_train.cc: T5's and Marian's training on a batch (a
// padded source, labels with −100 ignored, decoder inputs shifted from the labels) against PyTorch (the train.json of
// tests/fixtures/seq2seq/<case>/, gen_t5_train.py and gen_marian_train.py): the loss, every parameter's gradient
// (both relative position bias tables, the cross-attention, Marian's post-norm blocks, biases and scaled embedding
// with its padding_idx row included) and three AdamW steps, on every target and from 16-bit storage; Marian's
// final_logits_bias a buffer; the step's buffers reused across shapes; each bad batch field named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/memory_needs.h"
#include "attnlab/transformer.h"
#include "hwy_targets.h"
#include "seq2seq_fixture.h"
#include "test_util.h"
#include "train_check.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;

struct Seq2SeqTrainFixture : TrainExpected {
  Seq2SeqFixture model;
  FixtureTensor tokens, attention_mask, labels, decoder_input_ids;
  std::vector<uint8_t> mask;
  nlohmann::json adamw;
  std::vector<std::string> noise_driven;  // (tensors whose gradient is rounding noise: the max_abs rule only)

  // The fixture's batch; decoder inputs given explicitly when `explicit_decoder` (else shift_right(labels)).
  Transformer::TrainBatch Batch(bool explicit_decoder = false) const {
    Transformer::TrainBatch b;
    b.tokens = {tokens.ints.data(), tokens.shape};
    b.labels = {labels.ints.data(), labels.shape};
    b.options.attention_mask = mask.data();
    b.options.attention_mask_shape = attention_mask.shape;
    if (explicit_decoder) {
      b.options.decoder_input_ids = decoder_input_ids.ints.data();
      b.options.decoder_input_ids_shape = decoder_input_ids.shape;
    }
    return b;
  }
};

std::vector<Seq2SeqTrainFixture> LoadSeq2SeqTrainFixtures() {
  std::vector<Seq2SeqTrainFixture> out;
  for (const std::string& dir : ModelFixtureDirs(kSeq2SeqFixtureDir)) {
    std::ifstream in(dir + "/train.json");
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in);
    Seq2SeqTrainFixture f;
    static_cast<TrainExpected&>(f) = ParseTrainExpected(j);
    f.model = LoadSeq2SeqFixture(dir);
    f.tokens = ParseFixtureTensor(j.at("tokens"));
    f.attention_mask = ParseFixtureTensor(j.at("attention_mask"));
    f.mask.assign(f.attention_mask.ints.begin(), f.attention_mask.ints.end());
    f.labels = ParseFixtureTensor(j.at("labels"));
    f.decoder_input_ids = ParseFixtureTensor(j.at("decoder_input_ids"));
    f.adamw = j.at("adamw");
    f.noise_driven = j.value("noise_driven", std::vector<std::string>{});
    out.push_back(std::move(f));
  }
  return out;
}

Transformer LoadedSeq2SeqTrainModel(const Seq2SeqTrainFixture& f, attnlab::WeightStorage storage) {
  return LoadedCheckpoint(f.model.Config(), f.model.checkpoint, storage);
}

void CheckSeq2SeqAdamW(const Seq2SeqTrainFixture& f, Transformer& model) {
  const Transformer::AdamWOptions options = AdamWOptionsOf(f.adamw);
  const auto& steps = f.adamw.at("steps");
  const double step_rtol = f.tolerance.at("steps").at("rtol").get<double>();
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i);
    const Transformer::StepResult r = model.TrainStep(f.Batch(), options);
    CHECK(r.loss == Approx(steps[i].at("loss").get<double>()).epsilon(step_rtol));
    CHECK(r.grad_norm == Approx(steps[i].at("grad_norm").get<double>()).epsilon(step_rtol));
  }
  const std::map<std::string, attnlab::Tensor> state = model.StateDict();
  const nlohmann::json& rule = f.tolerance.at("params_after");
  for (const auto& [name, expected] : ParseFixtureTensors(f.adamw.at("params_after"))) {
    INFO("parameter " << name << " after " << steps.size() << " steps");
    REQUIRE(state.count(name) == 1);
    const bool noisy = std::find(f.noise_driven.begin(), f.noise_driven.end(), name) != f.noise_driven.end();
    CheckParamsAfter(name, state.at(name).data, expected, rule, rule.at("max_abs").at("adamw").get<double>(), !noisy);
  }
}

TEST_CASE("encoder–decoder training (t5, marian): loss, every gradient and AdamW steps match PyTorch on every target",
          "[model][seq2seq][train]") {
  const std::vector<Seq2SeqTrainFixture> fixtures = LoadSeq2SeqTrainFixtures();
  REQUIRE(fixtures.size() >= 3);
  for (const Seq2SeqTrainFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    const attnlab::WeightStorage storage = CheckpointStorage(f.model.checkpoint);
    ForEachTarget([&](const std::string&) {
      Transformer model = LoadedSeq2SeqTrainModel(f, attnlab::WeightStorage::kFloat32);
      CheckLossAndGradients(model.LossAndGradient(f.Batch()), f);
      CheckSeq2SeqAdamW(f, model);
      Transformer sixteen = LoadedSeq2SeqTrainModel(f, storage);  // (training widens 16-bit storage first)
      CheckLossAndGradients(sixteen.LossAndGradient(f.Batch(/*explicit_decoder=*/true)), f);
    });
  }
}

TEST_CASE("encoder–decoder training: the step's buffers serve another shape and come back unchanged",
          "[model][seq2seq][train]") {
  const std::vector<Seq2SeqTrainFixture> fixtures = LoadSeq2SeqTrainFixtures();
  REQUIRE_FALSE(fixtures.empty());
  const Seq2SeqTrainFixture& f = fixtures.front();
  Transformer model = LoadedSeq2SeqTrainModel(f, attnlab::WeightStorage::kFloat32);
  const Transformer::LossAndGrad first = model.LossAndGradient(f.Batch());
  Transformer::TrainBatch shorter = f.Batch();  // (the first item, its first 3 source and 2 target positions)
  const int64_t s = f.tokens.shape[1], t = f.labels.shape[1];
  const std::vector<int32_t> tokens(f.tokens.ints.begin(), f.tokens.ints.begin() + 3);
  const std::vector<int32_t> labels(f.labels.ints.begin(), f.labels.ints.begin() + 2);
  shorter.tokens = {tokens.data(), {1, 3}};
  shorter.labels = {labels.data(), {1, 2}};
  shorter.options.attention_mask = nullptr;
  shorter.options.attention_mask_shape = {};
  CHECK(std::isfinite(model.LossAndGradient(shorter).loss));
  const Transformer::LossAndGrad again = model.LossAndGradient(f.Batch());
  CHECK(again.loss == first.loss);
  for (const auto& [name, g] : first.grad_params) {
    INFO(name << " (source " << s << ", target " << t << ")");
    CHECK(again.grad_params.at(name).data == g.data);
  }
}

TEST_CASE("marian training: final_logits_bias is a buffer, with no gradient and untouched by AdamW",
          "[model][seq2seq][train]") {
  size_t checked = 0;
  for (const Seq2SeqTrainFixture& f : LoadSeq2SeqTrainFixtures()) {
    if (f.model.checkpoint.count("final_logits_bias") == 0) continue;
    INFO("fixture " << f.model.name);
    Transformer model = LoadedSeq2SeqTrainModel(f, attnlab::WeightStorage::kFloat32);
    CHECK(model.LossAndGradient(f.Batch()).grad_params.count("final_logits_bias") == 0);
    const std::vector<float> before = model.StateDict().at("final_logits_bias").data;
    Transformer::AdamWOptions options = AdamWOptionsOf(f.adamw);
    options.eps = 0;  // (an update from a zero gradient would be 0 / 0)
    model.TrainStep(f.Batch(), options);
    CHECK(model.StateDict().at("final_logits_bias").data == before);
    ++checked;
  }
  CHECK(checked >= 1);
}

// The bytes of the first part whose description starts with `what`, or −1.
double Seq2SeqPartBytes(const attnlab::MemoryNeeds& needs, const std::string& what) {
  for (const auto& part : needs) {
    if (part.what.rfind(what, 0) == 0) return part.bytes;
  }
  return -1;
}

TEST_CASE("encoder–decoder training memory: the training state by call, every stack's saved attention weights",
          "[model][seq2seq][train][memory_needs]") {
  using attnlab::TrainCall;
  for (const Seq2SeqTrainFixture& f : LoadSeq2SeqTrainFixtures()) {
    INFO("fixture " << f.model.name);
    const attnlab::TransformerConfig c = f.model.Config();
    const Transformer model(c, 0, false);
    const double parameters = 4.0 * static_cast<double>(model.ParameterCount());  // (packed matrices: at least)
    const double b = 2, s = 7, t = 5, h = static_cast<double>(model.config().num_heads);
    const auto step = attnlab::TransformerSeq2SeqTrainMemoryNeeds(c, {2, 7}, {2, 5}, TrainCall::kTrainStep);
    const auto grad = attnlab::TransformerSeq2SeqTrainMemoryNeeds(c, {2, 7}, {2, 5}, TrainCall::kLossAndGradient);
    const double gradients = Seq2SeqPartBytes(step, "parameter gradients");
    CHECK(gradients >= parameters);
    CHECK(Seq2SeqPartBytes(step, "AdamW's two moments") == 2 * gradients);
    CHECK(Seq2SeqPartBytes(grad, "parameter gradients") == gradients);
    CHECK(Seq2SeqPartBytes(grad, "AdamW") == -1);
    CHECK(Seq2SeqPartBytes(grad, "gradients returned") > 0);
    const double weights =
        4 * b * h *
        (static_cast<double>(c.num_layers) * s * s + static_cast<double>(c.decoder_layers) * (t * t + t * s));
    CHECK(Seq2SeqPartBytes(step, "saved activations") > weights);
    CHECK(Seq2SeqPartBytes(step, "logits and their gradient") == 4 * b * t * static_cast<double>(c.vocab_size));
    const auto longer = attnlab::TransformerSeq2SeqTrainMemoryNeeds(c, {2, 14}, {2, 5}, TrainCall::kTrainStep);
    CHECK(Seq2SeqPartBytes(longer, "saved activations") > Seq2SeqPartBytes(step, "saved activations"));
  }
}

TEST_CASE("encoder–decoder training: each bad batch field is named", "[model][seq2seq][train][validation]") {
  const std::vector<Seq2SeqTrainFixture> fixtures = LoadSeq2SeqTrainFixtures();
  REQUIRE_FALSE(fixtures.empty());
  const Seq2SeqTrainFixture& f = fixtures.front();
  Transformer model = LoadedSeq2SeqTrainModel(f, attnlab::WeightStorage::kFloat32);
  std::vector<int32_t> bad = f.labels.ints;
  auto expect = [&](const Transformer::TrainBatch& b, const std::string& name) {
    INFO("field " << name);
    ExpectInvalidArgument([&] { model.LossAndGradient(b); }, {name});
  };
  Transformer::TrainBatch b = f.Batch();
  b.labels.shape = {f.labels.shape[0], f.labels.shape[1] - 1, 1};
  expect(b, "labels");
  bad[1] = static_cast<int32_t>(f.model.Config().vocab_size);
  b = f.Batch();
  b.labels.data = bad.data();
  expect(b, "labels");
  std::fill(bad.begin(), bad.end(), -100);
  expect(b, "labels");
  b = f.Batch(true);
  b.options.decoder_input_ids_shape = {f.labels.shape[0], f.labels.shape[1] - 1};
  expect(b, "decoderInputIds");
  b = f.Batch();
  b.options.attention_mask_shape = {f.tokens.shape[0], f.tokens.shape[1] + 1};
  expect(b, "attentionMask");
  b = f.Batch();
  const std::vector<float> head_mask(64, 1.0f);
  b.options.head_mask = head_mask.data();
  expect(b, "headMask");
  b = f.Batch();
  b.tokens.shape = {f.tokens.shape[0], 0};
  expect(b, "tokens");
  Transformer::AdamWOptions options;
  options.lr = -1.0f;
  ExpectInvalidArgument([&] { model.TrainStep(f.Batch(), options); }, {"lr"});
}

}  // namespace
}  // namespace attnlab_test
