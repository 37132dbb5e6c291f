// Loads the PyTorch gradient and training fixtures (tests/fixtures/torch-grad/*.json; format in its README.md):
// the forward format plus tensor groups, int32 tensors and the outputs_zero_convention block.
#ifndef ATTNLAB_TESTS_CPP_GRAD_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_GRAD_FIXTURE_H_

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "json_fixture.h"
#include "test_util.h"

namespace attnlab_test {

inline const std::string& GradFixtureDir() {
  static const std::string dir = std::string(ATTNLAB_FIXTURE_DIR) + "/../torch-grad";
  return dir;
}

struct GradFixture {
  std::string name, kind;
  nlohmann::json config;
  std::map<std::string, FixtureTensor> inputs, params;
  std::map<std::string, std::vector<int32_t>> int_inputs;                     // tokens, targets
  std::map<std::string, FixtureTensor> outputs;                               // plain tensors
  std::map<std::string, std::map<std::string, FixtureTensor>> output_groups;  // grad_params, params_after_*
  Tolerance tolerance;
};

inline GradFixture LoadGradFixture(const std::string& path, const char* outputs_key = "outputs") {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("fixture: cannot open " + path);
  const nlohmann::json j = nlohmann::json::parse(in);
  GradFixture f;
  f.name = j.at("name").get<std::string>();
  f.kind = j.at("kind").get<std::string>();
  f.config = j.at("config");
  for (auto it = j.at("inputs").begin(); it != j.at("inputs").end(); ++it) {
    if (it.value().at("dtype") == "int32") {
      f.int_inputs[it.key()] = it.value().at("data").get<std::vector<int32_t>>();
    } else {
      f.inputs[it.key()] = ParseFixtureTensor(it.value());
    }
  }
  f.params = ParseFixtureTensors(j.at("params"));
  for (auto it = j.at(outputs_key).begin(); it != j.at(outputs_key).end(); ++it) {
    if (it.value().contains("shape")) {
      f.outputs[it.key()] = ParseFixtureTensor(it.value());
    } else {
      f.output_groups[it.key()] = ParseFixtureTensors(it.value());
    }
  }
  f.tolerance.atol = j.at("tolerance").at("atol").get<double>();
  f.tolerance.rtol = j.at("tolerance").at("rtol").get<double>();
  return f;
}

// The fixtures of one kind ("sdpa_grad", "mha_grad", "train_step").
inline std::vector<std::string> GradFixturePaths(const std::string& kind_prefix) {
  std::vector<std::string> paths;
  for (const std::string& path : ListJsonFiles(GradFixtureDir())) {
    const std::string file = path.substr(path.rfind('/') + 1);
    if (file.rfind(kind_prefix, 0) == 0) paths.push_back(path);
  }
  return paths;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_GRAD_FIXTURE_H_
