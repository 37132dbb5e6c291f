// Mirrors cpp/src/model/encoder_train.cc and kernels_encoder_train.cc: training encoders — BERT and RoBERTa with
// masked-LM and classification heads (post-norm, padding, token types, RoBERTa's positions, a pooler off the loss
// path), a ViT image classifier — the loss and every parameter's gradient, AdamW steps with and without clipping —
// against PyTorch (the train.json of
// tests/fixtures/encoders/<case>/, gen_encoder_training.py) on every target; bidirectional heads and padded keys in
// the backward; each bad batch named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "hwy_targets.h"
#include "json_fixture.h"
#include "test_util.h"
#include "train_check.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;

struct EncoderTrainFixture {
  EncoderFixture model;
  FixtureTensor pixels, input_ids, token_type_ids, labels;  // (pixels for ViT, the others for a text encoder)
  std::vector<uint8_t> attention_mask;
  attnlab::Shape mask_shape;
  double loss = 0;
  std::map<std::string, FixtureTensor> grads;
  nlohmann::json j;
  Tolerance tol;
};

std::vector<EncoderTrainFixture> LoadEncoderTrainFixtures() {
  std::vector<EncoderTrainFixture> out;
  for (const std::string& dir : ModelFixtureDirs(kEncoderFixtureDir)) {
    std::ifstream in(dir + "/train.json");
    if (!in) continue;
    EncoderTrainFixture f;
    f.j = nlohmann::json::parse(in);
    f.model = LoadEncoderFixture(dir);
    if (f.j.contains("pixel_values")) {
      f.pixels = ParseFixtureTensor(f.j.at("pixel_values"));
    } else {
      f.input_ids = ParseFixtureTensor(f.j.at("input_ids"));
      f.token_type_ids = ParseFixtureTensor(f.j.at("token_type_ids"));
      const FixtureTensor mask = ParseFixtureTensor(f.j.at("attention_mask"));
      f.attention_mask.assign(mask.ints.begin(), mask.ints.end());
      f.mask_shape = mask.shape;
    }
    f.labels = ParseFixtureTensor(f.j.at("labels"));
    f.loss = f.j.at("loss").get<double>();
    f.grads = ParseFixtureTensors(f.j.at("grads"));
    f.tol = Tolerance{f.j.at("tolerance").at("atol").get<double>(), f.j.at("tolerance").at("rtol").get<double>()};
    out.push_back(std::move(f));
  }
  return out;
}

Transformer LoadedEncoder(const EncoderTrainFixture& f) {
  return LoadedCheckpoint(f.model.Config(), f.model.checkpoint, attnlab::WeightStorage::kFloat32);
}

// The fixture's batch: ViT's pixels, or a text encoder's ids with their padding and token types; `pixels` must
// outlive it.
Transformer::TrainBatch EncoderBatchOf(const EncoderTrainFixture& f, attnlab::PixelsView& pixels) {
  Transformer::TrainBatch batch;
  batch.labels = attnlab::TokensView{f.labels.ints.data(), f.labels.shape};
  if (f.input_ids.shape.empty()) {
    pixels = attnlab::PixelsView{f.pixels.values.data(), f.pixels.shape};
    batch.pixels = &pixels;
    return batch;
  }
  batch.tokens = attnlab::TokensView{f.input_ids.ints.data(), f.input_ids.shape};
  batch.options.attention_mask = f.attention_mask.data();
  batch.options.attention_mask_shape = f.mask_shape;
  batch.options.token_type_ids = f.token_type_ids.ints.data();
  batch.options.token_type_ids_shape = f.token_type_ids.shape;
  return batch;
}

const EncoderTrainFixture& VitTrainFixture(const std::vector<EncoderTrainFixture>& fixtures) {
  for (const EncoderTrainFixture& f : fixtures) {
    if (f.model.name == "vit_cls_f32") return f;
  }
  throw std::runtime_error("no vit_cls_f32/train.json");
}

void CheckEncoderAdamWRun(const EncoderTrainFixture& f, const std::string& run_name) {
  const nlohmann::json& run = f.j.at(run_name);
  Transformer model = LoadedEncoder(f);
  attnlab::PixelsView pixels;
  const Transformer::TrainBatch batch = EncoderBatchOf(f, pixels);
  const double step_rtol = f.j.at("tolerance").at("steps").at("rtol").get<double>();
  const auto& steps = run.at("steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO(run_name << " step " << i);
    const Transformer::StepResult r = model.TrainStep(batch, AdamWOptionsOf(run));
    CHECK(r.loss == Approx(steps[i].at("loss").get<double>()).epsilon(step_rtol));
    CHECK(r.grad_norm == Approx(steps[i].at("grad_norm").get<double>()).epsilon(step_rtol));
  }
  const std::map<std::string, attnlab::Tensor> state = model.StateDict();
  const nlohmann::json& rule = f.j.at("tolerance").at("params_after");
  const std::vector<std::string> noise = f.j.at("noise_driven").get<std::vector<std::string>>();
  for (const auto& [name, expected] : ParseFixtureTensors(run.at("params_after"))) {
    INFO(run_name << ": parameter " << name);
    REQUIRE(state.count(name) == 1);
    const bool noisy = std::find(noise.begin(), noise.end(), name) != noise.end();
    CheckParamsAfter(name, state.at(name).data, expected, rule, rule.at("max_abs").at(run_name).get<double>(), !noisy);
  }
}

TEST_CASE(
    "encoder training: BERT's, RoBERTa's and ViT's loss, every gradient and AdamW steps match PyTorch on every "
    "target",
    "[model][train][encoder]") {
  const std::vector<EncoderTrainFixture> fixtures = LoadEncoderTrainFixtures();
  REQUIRE(fixtures.size() == 5);
  for (const EncoderTrainFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    ForEachTarget([&](const std::string&) {
      Transformer model = LoadedEncoder(f);
      attnlab::PixelsView pixels;
      CheckLossAndGradients(model.LossAndGradient(EncoderBatchOf(f, pixels)), f.loss, f.grads, f.tol);
      CheckEncoderAdamWRun(f, "adamw");
      CheckEncoderAdamWRun(f, "adamw_noclip");
    });
  }
}

// The mean cross-entropy (double) of classification logits (B, K) against labels (−100 ignored).
double ClassificationLoss(const attnlab::Tensor& logits, const std::vector<int32_t>& labels) {
  const size_t k = static_cast<size_t>(logits.shape[1]);
  double sum = 0;
  size_t counted = 0;
  for (size_t b = 0; b < labels.size(); ++b) {
    if (labels[b] == -100) continue;
    const float* row = logits.data.data() + b * k;
    const double top = *std::max_element(row, row + k);
    double z = 0;
    for (size_t c = 0; c < k; ++c) z += std::exp(row[c] - top);
    sum += std::log(z) + top - row[labels[b]];
    ++counted;
  }
  return sum / static_cast<double>(counted);
}

// Whether row `row` of a (1, T, E) gradient is exactly zero.
bool RowIsZero(const attnlab::Tensor& g, size_t row) {
  const size_t e = static_cast<size_t>(g.shape.back());
  return std::all_of(g.data.begin() + row * e, g.data.begin() + (row + 1) * e, [](float x) { return x == 0.0f; });
}

TEST_CASE("encoder training: heads are bidirectional and padded keys pass no gradient", "[model][train][encoder]") {
  const std::vector<EncoderTrainFixture> fixtures = LoadEncoderTrainFixtures();
  const EncoderTrainFixture& f = VitTrainFixture(fixtures);
  Transformer model = LoadedEncoder(f);
  attnlab::PixelsView pixels;
  Transformer::TrainBatch batch = EncoderBatchOf(f, pixels);
  const size_t items = static_cast<size_t>(f.pixels.shape[0]);
  const size_t t_len = static_cast<size_t>(model.config().context_length), hidden = 3;
  // Without a mask, token 0 (the classifier's) sees every later token: every position row has a gradient.
  const Transformer::LossAndGrad open = model.LossAndGradient(batch);
  const attnlab::Tensor& rows = open.grad_params.at("embeddings.position_embeddings");
  for (size_t t = 0; t < t_len; ++t) CHECK_FALSE(RowIsZero(rows, t));
  // Token `hidden` masked as a key in every item: nothing reads it, so its position row gets exactly 0; the loss is
  // the cross-entropy of the forward's logits under the same mask.
  std::vector<uint8_t> mask(items * t_len, 1);
  for (size_t b = 0; b < items; ++b) mask[b * t_len + hidden] = 0;
  batch.options.attention_mask = mask.data();
  batch.options.attention_mask_shape = {static_cast<int64_t>(items), static_cast<int64_t>(t_len)};
  const Transformer::LossAndGrad masked = model.LossAndGradient(batch);
  const attnlab::Tensor& masked_rows = masked.grad_params.at("embeddings.position_embeddings");
  for (size_t t = 0; t < t_len; ++t) CHECK(RowIsZero(masked_rows, t) == (t == hidden));
  attnlab::TransformerForwardOptions options;
  options.attention_mask = mask.data();
  options.attention_mask_shape = batch.options.attention_mask_shape;
  const attnlab::TransformerOutput out = model.Forward(pixels, options);
  CHECK(masked.loss == Approx(ClassificationLoss(out.logits, f.labels.ints)).epsilon(1e-5));
  CHECK(std::fabs(masked.loss - open.loss) > 1e-6);  // (the mask changes the loss)
}

TEST_CASE("encoder training: each bad batch or option is named", "[model][train][encoder]") {
  const std::vector<EncoderTrainFixture> fixtures = LoadEncoderTrainFixtures();
  const EncoderTrainFixture& f = VitTrainFixture(fixtures);
  Transformer model = LoadedEncoder(f);
  attnlab::PixelsView pixels;
  const Transformer::TrainBatch good = EncoderBatchOf(f, pixels);
  const int64_t items = f.pixels.shape[0];
  auto expect = [&](Transformer::TrainBatch batch, const std::string& name) {
    INFO("expects an error naming " << name);
    ExpectInvalidArgument([&] { model.LossAndGradient(batch); }, {name});
  };
  std::vector<int32_t> labels(f.labels.ints);
  Transformer::TrainBatch bad = good;
  bad.labels = attnlab::TokensView{labels.data(), {items, 1}};
  expect(bad, "labels");  // (B, 1): not (B)
  labels[0] = static_cast<int32_t>(model.config().num_labels);
  bad.labels = attnlab::TokensView{labels.data(), {items}};
  expect(bad, "labels");  // out of [0, numLabels)
  std::fill(labels.begin(), labels.end(), -100);
  expect(bad, "labels");  // none counted
  std::vector<int32_t> ids(static_cast<size_t>(items) * 4, 0);
  bad = good;
  bad.tokens = attnlab::TokensView{ids.data(), {items, 4}};
  expect(bad, "inputIds");  // token ids for a vision model
  bad = good;
  bad.pixels = nullptr;
  expect(bad, "pixelValues");
  attnlab::PixelsView small{f.pixels.values.data(), {1, f.pixels.shape[1], 2, 2}};
  bad.pixels = &small;
  expect(bad, "pixelValues");
  const float head_mask[1] = {1.0f};
  bad = good;
  bad.options.head_mask = head_mask;
  expect(bad, "headMask");
  std::vector<uint8_t> mask(3, 1);
  bad = good;
  bad.options.attention_mask = mask.data();
  bad.options.attention_mask_shape = {1, 3};
  expect(bad, "attentionMask");
  Transformer::AdamWOptions options = AdamWOptionsOf(f.j.at("adamw"));
  options.lr = 0;
  ExpectInvalidArgument([&] { model.TrainStep(good, options); }, {"lr"});
  // A ViTModel without a classifier has nothing to train on.
  attnlab::TransformerConfig base = model.config();
  base.task = attnlab::Task::kBase;
  Transformer bare(base, 0, false);
  ExpectInvalidArgument([&] { bare.LossAndGradient(good); }, {"task"});
}

TEST_CASE("encoder training: a text encoder's bad batch is named (masked-LM labels, inputs)",
          "[model][train][encoder]") {
  const std::vector<EncoderTrainFixture> fixtures = LoadEncoderTrainFixtures();
  const auto mlm = std::find_if(fixtures.begin(), fixtures.end(),
                                [](const EncoderTrainFixture& x) { return x.model.name == "bert_mlm_f32"; });
  REQUIRE(mlm != fixtures.end());
  Transformer model = LoadedEncoder(*mlm);
  attnlab::PixelsView pixels;
  const Transformer::TrainBatch good = EncoderBatchOf(*mlm, pixels);
  const int64_t items = mlm->input_ids.shape[0];
  std::vector<int32_t> labels(mlm->labels.ints);
  Transformer::TrainBatch bad = good;
  bad.labels = attnlab::TokensView{labels.data(), {items}};
  ExpectInvalidArgument([&] { model.LossAndGradient(bad); }, {"labels"});  // (B): a classifier's shape
  labels[0] = static_cast<int32_t>(model.config().vocab_size);
  bad.labels = attnlab::TokensView{labels.data(), mlm->labels.shape};
  ExpectInvalidArgument([&] { model.LossAndGradient(bad); }, {"labels"});  // an id = vocabSize
  std::vector<float> image(12, 0.0f);
  attnlab::PixelsView some{image.data(), {1, 3, 2, 2}};
  bad = good;
  bad.pixels = &some;
  ExpectInvalidArgument([&] { model.LossAndGradient(bad); }, {"pixelValues"});  // pixels for a text model
  std::vector<int32_t> ids(mlm->input_ids.ints);
  ids[1] = -1;
  bad = good;
  bad.tokens = attnlab::TokensView{ids.data(), mlm->input_ids.shape};
  ExpectInvalidArgument([&] { model.LossAndGradient(bad); }, {"inputIds"});
  CHECK(model.LossAndGradient(good).loss == Approx(mlm->loss).epsilon(1e-5));  // (still the fixture's loss)
}

}  // namespace
}  // namespace attnlab_test
