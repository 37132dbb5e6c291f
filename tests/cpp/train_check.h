// Shared by the training tests (train_test.cc, seq2seq_train_test.cc): AdamW options from a train.json run and the
// rule for parameters after AdamW steps (tests/fixtures/models/README.md, "train.json").
#ifndef ATTNLAB_TESTS_CPP_TRAIN_CHECK_H_
#define ATTNLAB_TESTS_CPP_TRAIN_CHECK_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "json_fixture.h"
#include "test_util.h"

namespace attnlab_test {

// What every train.json holds beside its inputs: the loss, every gradient, the AdamW runs and the tolerances.
struct TrainExpected {
  double loss = 0;
  std::map<std::string, FixtureTensor> grads;
  nlohmann::json json, tolerance;  // (json: the whole file, for its runs)
  Tolerance tol;                   // of the loss and the gradients, element by element
};

inline TrainExpected ParseTrainExpected(const nlohmann::json& j) {
  TrainExpected e;
  e.loss = j.at("loss").get<double>();
  e.grads = ParseFixtureTensors(j.at("grads"));
  e.json = j;
  e.tolerance = j.at("tolerance");
  e.tol = Tolerance{e.tolerance.at("atol").get<double>(), e.tolerance.at("rtol").get<double>()};
  return e;
}

// A LossAndGradient result against the file's: the loss (to 1e-5), then every gradient's shape and values.
inline void CheckLossAndGradients(const attnlab::Transformer::LossAndGrad& g, const TrainExpected& e) {
  CHECK(g.loss == Approx(e.loss).epsilon(1e-5));
  REQUIRE(g.grad_params.size() == e.grads.size());
  for (const auto& [name, expected] : e.grads) {
    INFO("gradient " << name);
    REQUIRE(g.grad_params.count(name) == 1);
    CHECK(g.grad_params.at(name).shape == expected.shape);
    CheckAllClose(name, g.grad_params.at(name).data, expected.values, e.tol);
  }
}

inline attnlab::Transformer::AdamWOptions AdamWOptionsOf(const nlohmann::json& j) {
  attnlab::Transformer::AdamWOptions o;
  o.lr = j.at("lr").get<float>();
  o.weight_decay = j.at("weight_decay").get<float>();
  o.beta1 = j.at("betas")[0].get<float>();
  o.beta2 = j.at("betas")[1].get<float>();
  o.eps = j.at("eps").get<float>();
  o.clip_grad_norm = j.at("clip_grad_norm").is_null() ? 0.0f : j.at("clip_grad_norm").get<float>();
  return o;
}

// Parameters after AdamW steps, per tensor (README's rule): the median of |a − e| / (atol + rtol·|e|) at most 1, and
// every |a − e| at most max_abs. (Adam moves entries whose gradient is float32 noise by up to lr per step, so no
// element-wise bound holds for every entry; a wrong optimiser shifts whole tensors.)
inline void CheckParamsAfter(const std::string& name, const std::vector<float>& actual, const FixtureTensor& expected,
                             const nlohmann::json& rule, double max_abs) {
  REQUIRE(actual.size() == expected.values.size());
  const double atol = rule.at("atol").get<double>(), rtol = rule.at("rtol").get<double>();
  std::vector<double> ratios;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(actual[i]) - expected.values[i]);
    ratios.push_back(diff / (atol + rtol * std::fabs(static_cast<double>(expected.values[i]))));
    worst = std::max(worst, diff);
  }
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  INFO(name << ": median ratio " << ratios[ratios.size() / 2] << ", worst |a - e| " << worst);
  CHECK(ratios[ratios.size() / 2] <= 1.0);
  CHECK(worst <= max_abs);
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_TRAIN_CHECK_H_
