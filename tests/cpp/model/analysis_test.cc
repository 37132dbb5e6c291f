// Mirrors cpp/src/model/analysis.cc and the analysis paths of train.cc / kernels_model_train.cc / block-inl.h: head
// importance (the head mask's gradient of each row, ablation by zero and by mean) and attribution (gradient × input,
// gradient norm, occlusion) and activation patching of GPT-2 and Llama-style decoders against PyTorch (the
// analysis.json of tests/fixtures/models/<case>/, gen_analysis.py) on every target; and properties against the forward
// itself.
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
#include "hwy_targets.h"
#include "model_fixture.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::Tensor;
using attnlab::Transformer;

struct AnalysisFixture {
  ModelFixture model;
  FixtureTensor tokens, targets;
  int64_t position = 0, target = 0;
  std::map<std::string, FixtureTensor> expected;  // loss, head_mask_grad, importance, ablation_*, logit, attributions
  Tolerance tol;
};

std::vector<AnalysisFixture> LoadAnalysisFixtures() {
  std::vector<AnalysisFixture> out;
  for (const std::string& dir : ModelFixtureDirs(ATTNLAB_FIXTURE_DIR "/../models")) {
    std::ifstream in(dir + "/analysis.json");
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in);
    AnalysisFixture f;
    f.model = LoadModelFixture(dir);
    f.tokens = ParseFixtureTensor(j.at("tokens"));
    f.targets = ParseFixtureTensor(j.at("targets"));
    f.position = j.at("position").get<int64_t>();
    f.target = j.at("target").get<int64_t>();
    for (const char* k :
         {"loss", "head_mask_grad", "importance", "ablation_zero", "ablation_mean", "logit", "gradient_x_input",
          "gradient", "occlusion", "patch_effect", "patch_clean_logit", "patch_corrupted_logit"}) {
      f.expected[k] = ParseFixtureTensor(j.at(k));
    }
    f.tol = Tolerance{j.at("tolerance").at("atol").get<double>(), j.at("tolerance").at("rtol").get<double>()};
    out.push_back(std::move(f));
  }
  return out;
}

Transformer LoadedModel(const AnalysisFixture& f) { return LoadedTransformer(f.model); }

attnlab::TokensView Tokens(const AnalysisFixture& f) { return {f.tokens.ints.data(), f.tokens.shape}; }
attnlab::TokensView Targets(const AnalysisFixture& f) { return {f.targets.ints.data(), f.targets.shape}; }

// The test's own loss: mean over rows with a target of each row's mean cross-entropy, in double.
double RowMeanLoss(const Tensor& logits, const std::vector<int32_t>& targets) {
  const size_t b_n = static_cast<size_t>(logits.shape[0]), t_n = static_cast<size_t>(logits.shape[1]);
  const size_t v = static_cast<size_t>(logits.shape[2]);
  double total = 0;
  size_t rows = 0;
  for (size_t b = 0; b < b_n; ++b) {
    double sum = 0;
    size_t n = 0;
    for (size_t t = 0; t < t_n; ++t) {
      const int32_t y = targets[b * t_n + t];
      if (y == -100) continue;
      const float* row = logits.data.data() + (b * t_n + t) * v;
      double z = 0;
      for (size_t j = 0; j < v; ++j) z += std::exp(static_cast<double>(row[j]));
      sum += std::log(z) - row[y];
      ++n;
    }
    if (n) total += sum / static_cast<double>(n), ++rows;
  }
  return total / static_cast<double>(rows);
}

double MaskedLoss(Transformer& model, const AnalysisFixture& f, const std::vector<float>& mask) {
  attnlab::TransformerForwardOptions o;
  o.head_mask = mask.data();
  o.head_mask_shape = {model.config().num_layers, model.config().num_heads};
  return RowMeanLoss(model.Forward(Tokens(f), o).logits, f.targets.ints);
}

void CheckScalar(const std::string& what, double actual, const FixtureTensor& expected, Tolerance tol) {
  INFO(what << ": " << actual << " vs " << expected.values.at(0));
  CHECK(std::fabs(actual - expected.values.at(0)) <= tol.atol + tol.rtol * std::fabs(expected.values.at(0)));
}

void CheckAgainstFixture(const AnalysisFixture& f) {
  Transformer model = LoadedModel(f);
  const Transformer::HeadImportanceResult grad =
      model.HeadImportance(Tokens(f), Targets(f), Transformer::ImportanceMethod::kGradient);
  CheckTensorClose("importance (gradient)", grad.importance, f.expected.at("importance"), f.tol);
  CheckScalar("loss (gradient)", grad.loss, f.expected.at("loss"), f.tol);
  Transformer::GradientOptions o;
  o.objective = Transformer::Objective::kRowMeanCrossEntropy;
  o.head_mask_gradient = true;
  CheckTensorClose("head_mask_grad", model.LossAndGradient(Tokens(f), Targets(f), o).head_mask_grad,
                   f.expected.at("head_mask_grad"), f.tol);
  for (const auto& [key, ablation] : {std::pair{"ablation_zero", Transformer::Ablation::kZero},
                                      std::pair{"ablation_mean", Transformer::Ablation::kMean}}) {
    const Transformer::HeadImportanceResult r =
        model.HeadImportance(Tokens(f), Targets(f), Transformer::ImportanceMethod::kAblation, ablation);
    CheckTensorClose(key, r.importance, f.expected.at(key), f.tol);
    CheckScalar(std::string("loss (") + key + ")", r.loss, f.expected.at("loss"), f.tol);
  }
  const attnlab::TokensView one{f.tokens.ints.data(), {1, f.tokens.shape[1]}};
  for (const auto& [key, method] : {std::pair{"gradient_x_input", Transformer::AttributionMethod::kGradientXInput},
                                    std::pair{"gradient", Transformer::AttributionMethod::kGradient},
                                    std::pair{"occlusion", Transformer::AttributionMethod::kOcclusion}}) {
    CheckTensorClose(key, model.Attribution(one, f.position, f.target, method), f.expected.at(key), f.tol);
  }
  // activation patching from row 0 (clean) into row 2 (corrupted: row 0 reversed)
  const size_t t_len = static_cast<size_t>(f.tokens.shape[1]);
  const attnlab::TokensView corrupted{f.tokens.ints.data() + 2 * t_len, {1, f.tokens.shape[1]}};
  const Transformer::PatchingResult p = model.PatchHeads(one, corrupted, f.position, f.target);
  CheckTensorClose("patch_effect", p.effect, f.expected.at("patch_effect"), f.tol);
  CheckScalar("patch_clean_logit", p.clean_logit, f.expected.at("patch_clean_logit"), f.tol);
  CheckScalar("patch_corrupted_logit", p.corrupted_logit, f.expected.at("patch_corrupted_logit"), f.tol);
}

TEST_CASE("analysis: head importance and attribution match PyTorch on every target", "[model][analysis]") {
  const std::vector<AnalysisFixture> fixtures = LoadAnalysisFixtures();
  REQUIRE(fixtures.size() == 3);
  for (const AnalysisFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    ForEachTarget([&](const std::string&) { CheckAgainstFixture(f); });
  }
}

TEST_CASE("analysis: zero ablation is the forward with that head mask; the gradient is ξ's finite difference",
          "[model][analysis]") {
  for (const AnalysisFixture& f : LoadAnalysisFixtures()) {
    INFO("fixture " << f.model.name);
    Transformer model = LoadedModel(f);
    const size_t heads = static_cast<size_t>(model.config().num_layers * model.config().num_heads);
    const Transformer::HeadImportanceResult zero =
        model.HeadImportance(Tokens(f), Targets(f), Transformer::ImportanceMethod::kAblation);
    const double base = MaskedLoss(model, f, std::vector<float>(heads, 1.0f));
    Transformer::GradientOptions o;
    o.objective = Transformer::Objective::kRowMeanCrossEntropy;
    o.head_mask_gradient = true;
    const Tensor g = model.LossAndGradient(Tokens(f), Targets(f), o).head_mask_grad;
    const size_t batch = static_cast<size_t>(f.tokens.shape[0]);
    for (size_t i = 0; i < heads; ++i) {
      INFO("head " << i);
      std::vector<float> mask(heads, 1.0f);
      mask[i] = 0.0f;
      CHECK(zero.importance.data[i] == Approx(MaskedLoss(model, f, mask) - base).margin(1e-6));
      // d (mean of loss_b) / d ξ_i = the mean over counted rows of row b's gradient (the third row has no target)
      double mean = 0;
      for (size_t b = 0; b < batch; ++b) mean += g.data[b * heads + i];
      mean /= 2.0;
      constexpr float kH = 1.0f / 64;
      mask[i] = 1.0f + kH;
      const double up = MaskedLoss(model, f, mask);
      mask[i] = 1.0f - kH;
      const double fd = (up - MaskedLoss(model, f, mask)) / (2.0 * kH);
      CHECK(mean == Approx(fd).margin(2e-4).epsilon(2e-2));
      CHECK(g.data[(batch - 1) * heads + i] == 0.0f);
    }
  }
}

TEST_CASE("analysis: a head's own outputs fed back as head_values give the same logits; occlusion of -1 is none",
          "[model][analysis]") {
  const AnalysisFixture f = LoadAnalysisFixtures().front();
  Transformer model = LoadedModel(f);
  attnlab::TransformerForwardOptions o;
  o.output_head_outputs = true;
  const attnlab::TransformerOutput clean = model.Forward(Tokens(f), o);
  const size_t layers = clean.head_outputs.size(), heads = static_cast<size_t>(model.config().num_heads);
  REQUIRE(layers == static_cast<size_t>(model.config().num_layers));
  // head (l, h)'s (B, T, hd) values, gathered from (B, T, H, hd)
  std::vector<std::vector<float>> own(layers * heads);
  const size_t hd = static_cast<size_t>(clean.head_outputs[0].shape[3]);
  const size_t rows = clean.head_outputs[0].data.size() / (heads * hd);
  attnlab::TransformerForwardOptions fed;
  for (size_t i = 0; i < layers * heads; ++i) {
    for (size_t r = 0; r < rows; ++r) {
      const float* src = clean.head_outputs[i / heads].data.data() + (r * heads + i % heads) * hd;
      own[i].insert(own[i].end(), src, src + hd);
    }
    fed.head_values.push_back(own[i].data());
  }
  CHECK(model.Forward(Tokens(f), fed).logits.data == clean.logits.data);
  // patching a prompt with itself changes nothing
  const attnlab::TokensView one{f.tokens.ints.data(), {1, f.tokens.shape[1]}};
  const Transformer::PatchingResult same = model.PatchHeads(one, one, 1, 2);
  CHECK(same.clean_logit == same.corrupted_logit);
  CHECK(same.effect.data == std::vector<float>(layers * heads, 0.0f));
  std::vector<int64_t> none(static_cast<size_t>(f.tokens.shape[0]), -1);
  attnlab::TransformerForwardOptions occ;
  occ.occlude = none.data();
  occ.occlude_shape = {f.tokens.shape[0]};
  CHECK(model.Forward(Tokens(f), occ).logits.data == clean.logits.data);
  none[0] = f.tokens.shape[1];
  CHECK_THROWS_WITH(model.Forward(Tokens(f), occ), Catch::Contains("occlude"));
}

TEST_CASE("analysis: bad positions, targets, token shapes and head values are named", "[model][analysis]") {
  const AnalysisFixture f = LoadAnalysisFixtures().front();
  Transformer model = LoadedModel(f);
  const int64_t t_len = f.tokens.shape[1], vocab = model.config().vocab_size;
  const attnlab::TokensView one{f.tokens.ints.data(), {1, t_len}};
  const auto method = Transformer::AttributionMethod::kGradient;
  CHECK_THROWS_AS(model.Attribution(one, t_len, 0, method), std::invalid_argument);
  CHECK_THROWS_WITH(model.Attribution(one, t_len, 0, method), Catch::Contains("position"));
  CHECK_THROWS_WITH(model.Attribution(one, -1, 0, method), Catch::Contains("position"));
  CHECK_THROWS_WITH(model.Attribution(one, 0, vocab, method), Catch::Contains("target"));
  CHECK_THROWS_WITH(model.Attribution(one, 0, -1, Transformer::AttributionMethod::kOcclusion),
                    Catch::Contains("target"));
  CHECK_THROWS_WITH(model.Attribution(Tokens(f), 0, 0, method), Catch::Contains("tokens"));
  const attnlab::TokensView shorter{f.tokens.ints.data(), {1, t_len - 1}};
  CHECK_THROWS_WITH(model.PatchHeads(one, shorter, 0, 0), Catch::Contains("corrupted"));
  CHECK_THROWS_WITH(model.PatchHeads(Tokens(f), Tokens(f), 0, 0), Catch::Contains("clean"));
  CHECK_THROWS_WITH(model.PatchHeads(one, one, t_len, 0), Catch::Contains("position"));
  CHECK_THROWS_WITH(model.PatchHeads(one, one, 0, vocab), Catch::Contains("target"));
  attnlab::TransformerForwardOptions o;
  o.head_values.assign(3, nullptr);
  CHECK_THROWS_WITH(model.Forward(Tokens(f), o), Catch::Contains("headValues"));
  std::vector<int32_t> ignored(f.targets.ints.size(), -100);
  CHECK_THROWS_WITH(
      model.HeadImportance(Tokens(f), {ignored.data(), f.targets.shape}, Transformer::ImportanceMethod::kGradient),
      Catch::Contains("targets"));
}

}  // namespace
}  // namespace attnlab_test
