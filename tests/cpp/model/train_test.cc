// Mirrors cpp/src/model/train.cc and kernels_model_train.cc: the loss and every parameter's gradient of whole
// GPT-2 and Llama-family models, and AdamW steps with and without clipping, against PyTorch (the train.json of
// tests/fixtures/models/<case>/, gen_training.py) on every target; the training state is reset by loading.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/memory_needs.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "hwy_targets.h"
#include "model_fixture.h"
#include "test_util.h"
#include "train_check.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;

const std::string kTrainFixtureDir = ATTNLAB_FIXTURE_DIR "/../models";

struct TrainFixture : TrainExpected {
  ModelFixture model;
  FixtureTensor tokens, targets;
  nlohmann::json adamw, adamw_noclip;
};

std::vector<TrainFixture> LoadTrainFixtures() {
  std::vector<TrainFixture> out;
  for (const std::string& dir : ModelFixtureDirs(kTrainFixtureDir)) {
    std::ifstream in(dir + "/train.json");
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in);
    TrainFixture f;
    static_cast<TrainExpected&>(f) = ParseTrainExpected(j);
    f.model = LoadModelFixture(dir);
    f.tokens = ParseFixtureTensor(j.at("tokens"));
    f.targets = ParseFixtureTensor(j.at("targets"));
    f.adamw = j.at("adamw");
    f.adamw_noclip = j.at("adamw_noclip");
    out.push_back(std::move(f));
  }
  return out;
}

Transformer LoadedTrainModel(const TrainFixture& f) { return LoadedTransformer(f.model); }

// The AdamW steps of `run` ("adamw" or "adamw_noclip") on the fixture's batch: each step's loss and gradient norm,
// then every parameter.
void CheckAdamWRun(const TrainFixture& f, const std::string& run_name) {
  const nlohmann::json& run = run_name == "adamw" ? f.adamw : f.adamw_noclip;
  Transformer model = LoadedTrainModel(f);
  const Transformer::AdamWOptions options = AdamWOptionsOf(run);
  const auto& steps = run.at("steps");
  const double step_rtol = f.tolerance.at("steps").at("rtol").get<double>();
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO(run_name << " step " << i);
    const Transformer::StepResult r =
        model.TrainStep({f.tokens.ints.data(), f.tokens.shape}, {f.targets.ints.data(), f.targets.shape}, options);
    CHECK(r.loss == Approx(steps[i].at("loss").get<double>()).epsilon(step_rtol));
    CHECK(r.grad_norm == Approx(steps[i].at("grad_norm").get<double>()).epsilon(step_rtol));
  }
  const std::map<std::string, attnlab::Tensor> state = model.StateDict();
  const nlohmann::json& rule = f.tolerance.at("params_after");
  const double max_abs = rule.at("max_abs").at(run_name).get<double>();
  for (const auto& [name, expected] : ParseFixtureTensors(run.at("params_after"))) {
    INFO(run_name << ": parameter " << name << " after " << steps.size() << " steps");
    REQUIRE(state.count(name) == 1);
    CheckParamsAfter(name, state.at(name).data, expected, rule, max_abs);
  }
}

TEST_CASE("transformer training: loss, every gradient and AdamW steps match PyTorch on every target",
          "[model][train]") {
  const std::vector<TrainFixture> fixtures = LoadTrainFixtures();
  REQUIRE(fixtures.size() >= 4);
  for (const TrainFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    ForEachTarget([&](const std::string&) {
      Transformer model = LoadedTrainModel(f);
      const Transformer::LossAndGrad g =
          model.LossAndGradient({f.tokens.ints.data(), f.tokens.shape}, {f.targets.ints.data(), f.targets.shape});
      CheckLossAndGradients(g, f);
      CheckAdamWRun(f, "adamw");
      CheckAdamWRun(f, "adamw_noclip");
    });
  }
}

TEST_CASE("transformer training: bad targets and AdamW options are named; loading resets AdamW", "[model][train]") {
  const std::vector<TrainFixture> fixtures = LoadTrainFixtures();
  REQUIRE_FALSE(fixtures.empty());
  const TrainFixture& f = fixtures.front();
  Transformer model = LoadedTrainModel(f);
  const attnlab::TokensView tokens{f.tokens.ints.data(), f.tokens.shape};
  std::vector<int32_t> bad(f.targets.ints.size(), -100);
  ExpectInvalidArgument([&] { model.LossAndGradient(tokens, {bad.data(), f.targets.shape}); }, {"targets"});
  bad[0] = static_cast<int32_t>(f.model.config.vocab_size);
  ExpectInvalidArgument([&] { model.LossAndGradient(tokens, {bad.data(), f.targets.shape}); }, {"targets"});
  ExpectInvalidArgument([&] { model.LossAndGradient(tokens, {f.targets.ints.data(), {1, 2}}); }, {"targets"});
  const attnlab::TokensView targets{f.targets.ints.data(), f.targets.shape};
  Transformer::AdamWOptions options = AdamWOptionsOf(f.adamw);
  for (auto edit : std::vector<std::pair<std::string, void (*)(Transformer::AdamWOptions&)>>{
           {"lr", [](Transformer::AdamWOptions& o) { o.lr = 0; }},
           {"weightDecay", [](Transformer::AdamWOptions& o) { o.weight_decay = -1; }},
           {"betas", [](Transformer::AdamWOptions& o) { o.beta2 = 1; }},
           {"eps", [](Transformer::AdamWOptions& o) { o.eps = -1; }},
           {"clipGradNorm", [](Transformer::AdamWOptions& o) { o.clip_grad_norm = -1; }}}) {
    Transformer::AdamWOptions bad_options = options;
    edit.second(bad_options);
    ExpectInvalidArgument([&] { model.TrainStep(tokens, targets, bad_options); }, {edit.first});
  }
  // Two steps, a reload, two steps again: the same parameters (AdamW's moments and step count start again).
  const std::map<std::string, attnlab::Tensor> start = model.StateDict();
  std::map<std::string, attnlab::TensorView> views;
  for (const auto& [name, t] : start) views[name] = attnlab::TensorView{t.data.data(), t.shape};
  std::vector<std::map<std::string, attnlab::Tensor>> after;
  for (int run = 0; run < 2; ++run) {
    model.LoadStateDict(views);
    model.TrainStep(tokens, targets, options);
    model.TrainStep(tokens, targets, options);
    after.push_back(model.StateDict());
  }
  for (const auto& [name, t] : after[0]) CHECK(BitIdentical(t.data, after[1].at(name).data));
}

// The bytes of the part of `needs` whose description starts with `what`, or −1 when there is none.
double TrainPartBytes(const attnlab::MemoryNeeds& needs, const std::string& what) {
  for (const attnlab::MemoryPart& part : needs) {
    if (part.what.rfind(what, 0) == 0) return part.bytes;
  }
  return -1;
}

TEST_CASE("transformer training memory: gradients for LossAndGradient and TrainStep, moments for TrainStep only",
          "[model][train][memory_needs]") {
  using attnlab::TrainCall;
  for (const TrainFixture& f : LoadTrainFixtures()) {
    INFO("fixture " << f.model.name);
    attnlab::TransformerConfig c = f.model.config;  // (whole panels of 32 columns: packed = the tensors' floats)
    c.vocab_size = 64;
    c.embed_dim = 32;
    c.num_heads = c.num_kv_heads = 2;
    c.head_dim = 16;
    c.hidden_dim = 128;
    const double parameters = 4.0 * static_cast<double>(Transformer(c, 0, false).ParameterCount());
    const attnlab::Shape tokens{2, 5};
    const auto step = attnlab::TransformerTrainMemoryNeeds(c, tokens, TrainCall::kTrainStep);
    const auto grad = attnlab::TransformerTrainMemoryNeeds(c, tokens, TrainCall::kLossAndGradient);
    const auto analysis = attnlab::TransformerTrainMemoryNeeds(c, tokens, TrainCall::kGradientAnalysis);
    CHECK(TrainPartBytes(step, "parameter gradients") == parameters);
    CHECK(TrainPartBytes(step, "AdamW's two moments") == 2 * parameters);
    CHECK(TrainPartBytes(grad, "parameter gradients") == parameters);
    CHECK(TrainPartBytes(grad, "AdamW") == -1);
    CHECK(TrainPartBytes(grad, "gradients returned") == parameters);
    CHECK(TrainPartBytes(analysis, "parameter gradients") == -1);
    CHECK(TrainPartBytes(analysis, "AdamW") == -1);
    for (const char* shared : {"saved activations", "logits and their gradient", "forward activations"}) {
      CHECK(TrainPartBytes(analysis, shared) == TrainPartBytes(step, shared));
      CHECK(TrainPartBytes(analysis, shared) > 0);
    }
  }
}

TEST_CASE("transformer training: gradient analyses first leave every TrainStep bit as a fresh model's",
          "[model][train][analysis]") {
  const std::vector<TrainFixture> fixtures = LoadTrainFixtures();
  REQUIRE_FALSE(fixtures.empty());
  for (const TrainFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    const attnlab::TokensView tokens{f.tokens.ints.data(), f.tokens.shape};
    const attnlab::TokensView targets{f.targets.ints.data(), f.targets.shape};
    const Transformer::AdamWOptions options = AdamWOptionsOf(f.adamw);
    std::vector<std::map<std::string, attnlab::Tensor>> after;
    for (bool analyses_first : {false, true}) {
      Transformer model = LoadedTrainModel(f);
      if (analyses_first) {
        model.HeadImportance(tokens, targets, Transformer::ImportanceMethod::kGradient);
        const attnlab::TokensView first{f.tokens.ints.data(), {1, f.tokens.shape[1]}};
        model.Attribution(first, 0, 1, Transformer::AttributionMethod::kGradientXInput);
      }
      model.TrainStep(tokens, targets, options);
      const Transformer::StepResult second = model.TrainStep(tokens, targets, options);
      CHECK(std::isfinite(second.loss));
      after.push_back(model.StateDict());
    }
    for (const auto& [name, t] : after[0]) CHECK(BitIdentical(t.data, after[1].at(name).data));
  }
}

// Resets the thread count when a test ends, however it ends.
struct TrainThreadsGuard {
  ~TrainThreadsGuard() { attnlab::SetThreadCount(1); }
};

// Every bit a run of training gives: LossAndGradient twice (its loss and every gradient), two AdamW steps' losses
// and the parameters after them.
std::vector<float> TrainRunBits(Transformer& model, const attnlab::TokensView& tokens,
                                const attnlab::TokensView& targets) {
  std::vector<float> bits;
  for (int i = 0; i < 2; ++i) {
    const Transformer::LossAndGrad g = model.LossAndGradient(tokens, targets);
    bits.push_back(g.loss);
    for (const auto& named : g.grad_params) bits.insert(bits.end(), named.second.data.begin(), named.second.data.end());
  }
  Transformer::AdamWOptions options;
  options.lr = 1e-2f;
  for (int i = 0; i < 2; ++i) bits.push_back(model.TrainStep(tokens, targets, options).loss);
  for (const auto& named : model.StateDict())
    bits.insert(bits.end(), named.second.data.begin(), named.second.data.end());
  return bits;
}

TEST_CASE("transformer training: the same bits at 1 and 2 threads, and after a call at another shape",
          "[model][train]") {
  TrainThreadsGuard guard;
  const std::vector<TrainFixture> fixtures = LoadTrainFixtures();
  REQUIRE_FALSE(fixtures.empty());
  attnlab::TransformerConfig c = fixtures.front().model.config;
  c.vocab_size = 4096;  // (64 rows × 4096 logits: the cross-entropy is split over threads)
  c.context_length = std::max<int64_t>(c.context_length, 16);
  std::vector<int32_t> ids(4 * 17);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 2654435761u) % 4096);
  const std::vector<int32_t> inputs(ids.begin(), ids.end() - 1), targets(ids.begin() + 1, ids.end());
  const attnlab::TokensView x{inputs.data(), {4, 16}}, y{targets.data(), {4, 16}};
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 3; ++run) {
    attnlab::SetThreadCount(run == 1 ? 2 : 1);
    Transformer model(c, 7);
    if (run == 2) model.LossAndGradient({inputs.data(), {2, 5}}, {targets.data(), {2, 5}});  // (another layout)
    runs.push_back(TrainRunBits(model, x, y));
  }
  REQUIRE(runs[0].size() > 2 * 4096 * 16);
  CHECK(BitIdentical(runs[0], runs[1]));
  CHECK(BitIdentical(runs[0], runs[2]));
}

}  // namespace
}  // namespace attnlab_test
