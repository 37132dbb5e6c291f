// Mirrors cpp/src/model/tiny_transformer.cc (the Transformer's arch 'tiny'): the PyTorch train_step fixtures (logits,
// loss, gradients, parameters after 1 and 5 Adam steps) on every target, learning the reversal task from a fixed
// seed, and the arch's decoding through a KV cache.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"
#include "grad_fixture.h"
#include "hwy_targets.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::TokensView;

attnlab::TinyTransformer ModelOf(const GradFixture& f) {
  attnlab::TinyTransformerConfig config;
  config.vocab_size = f.config.at("vocab_size").get<int64_t>();
  config.embed_dim = f.config.at("embed_dim").get<int64_t>();
  config.num_heads = f.config.at("num_heads").get<int64_t>();
  config.causal = f.config.at("causal").get<bool>();
  attnlab::TinyTransformer model(config);
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [name, tensor] : f.params) state[name] = tensor.View();
  model.LoadStateDict(state);
  return model;
}

void CheckParams(const std::string& what, const std::map<std::string, attnlab::Tensor>& actual,
                 const std::map<std::string, FixtureTensor>& expected, Tolerance tol) {
  REQUIRE(actual.size() == expected.size());
  for (const auto& [name, tensor] : expected) {
    INFO(what << " " << name);
    REQUIRE(actual.count(name) == 1);
    CHECK(actual.at(name).shape == tensor.shape);
    CheckAllClose(what + " " + name, actual.at(name).data, tensor.values, tol);
  }
}

TEST_CASE("TinyTransformer matches every PyTorch train_step fixture", "[train][fixtures]") {
  const std::vector<std::string> paths = GradFixturePaths("train_step");
  REQUIRE(paths.size() >= 2);
  ForEachTarget([&](const std::string&) {
    for (const std::string& path : paths) {
      const GradFixture f = LoadGradFixture(path);
      INFO(f.name);
      const Shape shape{f.config.at("batch_size").get<int64_t>(), f.config.at("seq_len").get<int64_t>()};
      const TokensView tokens{f.int_inputs.at("tokens").data(), shape};
      const TokensView targets{f.int_inputs.at("targets").data(), shape};
      attnlab::TinyTransformer model = ModelOf(f);

      const attnlab::TinyTransformer::Output out = model.Forward(tokens);
      CheckAllClose("logits", out.logits.data, f.outputs.at("logits").values, f.tolerance);
      const attnlab::TinyTransformer::LossAndGrad lg = model.LossAndGradient(tokens, targets);
      CheckAllClose("loss", {lg.loss}, f.outputs.at("loss").values, f.tolerance);
      CheckParams("grad_params", lg.grad_params, f.output_groups.at("grad_params"), f.tolerance);

      const std::vector<float>& step_losses = f.outputs.at("step_losses").values;
      std::vector<float> losses{model.TrainStep(tokens, targets, 1e-2f)};
      CheckParams("params_after_1_step", model.StateDict(), f.output_groups.at("params_after_1_step"), f.tolerance);
      for (int step = 1; step < 5; ++step) losses.push_back(model.TrainStep(tokens, targets, 1e-2f));
      CheckAllClose("step_losses", losses, step_losses, f.tolerance);
      CheckParams("params_after_5_steps", model.StateDict(), f.output_groups.at("params_after_5_steps"), f.tolerance);
      CheckAllClose("loss_after_5_steps", {model.LossAndGradient(tokens, targets).loss},
                    f.outputs.at("loss_after_5_steps").values, f.tolerance);
    }
  });
}

// Fresh random sequences of `len` tokens in [0, vocab) and their reversals.
void ReversalBatch(Rng& rng, int64_t batch, int64_t len, int64_t vocab, std::vector<int32_t>& tokens,
                   std::vector<int32_t>& targets) {
  tokens.resize(static_cast<size_t>(batch * len));
  targets.resize(tokens.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < len; ++t) tokens[b * len + t] = static_cast<int32_t>(rng.Int(0, vocab - 1));
    for (int64_t t = 0; t < len; ++t) targets[b * len + t] = tokens[b * len + len - 1 - t];
  }
}

// Learning, not timing: a fixed seed and a stated step budget.
TEST_CASE("TinyTransformer learns to reverse sequences (>= 95% on fresh examples within 600 steps)", "[train]") {
  constexpr int64_t kVocab = 10, kLen = 6, kBatch = 32, kMaxSteps = 600;
  attnlab::TinyTransformerConfig config;
  config.vocab_size = kVocab;
  config.embed_dim = 32;
  config.num_heads = 2;
  attnlab::TinyTransformer model(config, 1);
  Rng rng(11);
  std::vector<int32_t> tokens, targets;
  double accuracy = 0.0;
  int64_t steps = 0;
  while (steps < kMaxSteps && accuracy < 0.95) {
    for (int i = 0; i < 50; ++i, ++steps) {
      ReversalBatch(rng, kBatch, kLen, kVocab, tokens, targets);
      model.TrainStep({tokens.data(), {kBatch, kLen}}, {targets.data(), {kBatch, kLen}}, 1e-2f);
    }
    ReversalBatch(rng, 256, kLen, kVocab, tokens, targets);
    const attnlab::Tensor logits = model.Forward({tokens.data(), {256, kLen}}).logits;
    int64_t correct = 0;
    for (size_t r = 0; r < tokens.size(); ++r) {
      const float* row = logits.data.data() + r * kVocab;
      correct += std::max_element(row, row + kVocab) - row == targets[r];
    }
    accuracy = static_cast<double>(correct) / static_cast<double>(tokens.size());
  }
  INFO("accuracy " << accuracy << " after " << steps << " steps");
  CHECK(accuracy >= 0.95);
}

TEST_CASE("TinyTransformer rejects bad tokens and shapes with named errors", "[train]") {
  attnlab::TinyTransformerConfig config;
  config.vocab_size = 5;
  config.embed_dim = 8;
  config.num_heads = 2;
  attnlab::TinyTransformer model(config);
  const std::vector<int32_t> good{0, 1, 2, 3}, bad{0, 1, 7, 3};
  auto expect_error = [](auto&& call, const char* name) {
    try {
      call();
      FAIL("no error");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(name) && Catch::Contains("expected") && Catch::Contains("got"));
    }
  };
  expect_error([&] { model.Forward({bad.data(), {1, 4}}); }, "tokens");
  expect_error([&] { model.Forward({good.data(), {4}}); }, "tokens");
  expect_error([&] { model.LossAndGradient({good.data(), {1, 4}}, {good.data(), {2, 2}}); }, "targets");
  expect_error([&] { model.TrainStep({good.data(), {1, 4}}, {good.data(), {1, 4}}, -1.0f); }, "lr");
  attnlab::TinyTransformerConfig odd = config;
  odd.embed_dim = 7;
  expect_error([&] { attnlab::TinyTransformer m(odd); }, "embed_dim");
  CHECK(model.Forward({good.data(), {1, 4}}).logits.data.size() == 20);
}

// The tiny model is the Transformer's arch 'tiny': no norm, sinusoidal positions, no MLP, a head bias, causal or
// not. Decoding it through a KV cache (positions P + t, the cache read in place) gives the full forward's logits.
TEST_CASE("TinyTransformer is the Transformer's arch 'tiny': its cache decodes as the full forward", "[train][model]") {
  attnlab::TinyTransformerConfig tiny;
  tiny.vocab_size = 7;
  tiny.embed_dim = 8;
  tiny.num_heads = 2;
  tiny.causal = true;
  attnlab::TinyTransformer reference(tiny, 3);
  attnlab::TransformerConfig config;
  config.arch = "tiny";
  config.vocab_size = 7;
  config.context_length = 16;
  config.embed_dim = 8;
  config.num_layers = 1;
  config.num_heads = 2;
  attnlab::Transformer model(config, 0, /*initialise=*/false);
  const std::map<std::string, attnlab::Tensor> params = reference.StateDict();
  std::map<std::string, attnlab::TensorView> views;
  for (const auto& [name, t] : params) views[name] = attnlab::TensorView{t.data.data(), t.shape};
  model.LoadStateDict(views);
  const std::vector<int32_t> ids{1, 5, 2, 6, 0, 3, 4, 4, 1, 2};  // (2, 5)
  const attnlab::Tensor full = reference.Forward({ids.data(), {2, 5}}).logits;
  attnlab::TransformerForwardOptions with_weights;  // (as TinyTransformer's forward: the weights path, bit for bit)
  with_weights.output_attentions = {0};
  CHECK(model.Forward({ids.data(), {2, 5}}, with_weights).logits.data == full.data);
  ForEachTarget([&](const std::string&) {
    attnlab::TransformerKVCache cache = model.CreateKVCache(2, 5);
    attnlab::TransformerForwardOptions options;
    options.cache = &cache;
    for (int64_t t = 0; t < 5; ++t) {
      const std::vector<int32_t> step{ids[t], ids[5 + t]};
      const attnlab::Tensor logits = model.Forward({step.data(), {2, 1}}, options).logits;
      for (int64_t b = 0; b < 2; ++b) {
        const auto row = full.data.begin() + (b * 5 + t) * 7;
        CheckAllClose("step " + std::to_string(t),
                      std::vector<float>(logits.data.begin() + b * 7, logits.data.begin() + (b + 1) * 7),
                      std::vector<float>(row, row + 7), Tolerance{1e-5, 1e-5});
      }
    }
  });
  attnlab::TransformerConfig bidirectional = config;
  bidirectional.causal = false;
  attnlab::Transformer encoder(bidirectional, 0, /*initialise=*/false);
  CHECK_THROWS_WITH(encoder.CreateKVCache(1, 4), Catch::Contains("causal"));
  attnlab::TransformerConfig deep = config;
  deep.num_layers = 2;
  CHECK_THROWS_WITH(attnlab::Transformer(deep), Catch::Contains("numLayers"));
  // createModel does not offer it: the tiny model is createTinyTransformer's.
  CHECK_THROWS_WITH(attnlab::ConfigFromOptions(R"({"arch": "tiny"})"), Catch::Contains("arch"));
}

}  // namespace
}  // namespace attnlab_test
