// Loads the PyTorch reference fixtures (tests/fixtures/torch/*.json, format in its README.md).
#ifndef ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_

#include <dirent.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab_test {

// One tensor of a fixture: float32 values, bools (1 = true) or int32 values, row-major.
struct FixtureTensor {
  attnlab::Shape shape;
  bool is_bool = false;
  std::vector<float> values;
  std::vector<uint8_t> bools;
  std::vector<int32_t> ints;  // dtype "int32" (e.g. kv_lengths)

  attnlab::TensorView View() const { return attnlab::TensorView{values.data(), shape}; }
};

struct Fixture {
  std::string path;
  std::string name;
  std::string kind;  // "sdpa" or "mha"
  nlohmann::json config;
  std::map<std::string, FixtureTensor> inputs;
  std::map<std::string, FixtureTensor> params;
  std::map<std::string, FixtureTensor> outputs;
  double atol = 1e-5;
  double rtol = 1e-4;

  const FixtureTensor* FindInput(const std::string& input_name) const {
    auto it = inputs.find(input_name);
    return it == inputs.end() ? nullptr : &it->second;
  }
};

// A float element: a JSON number, or one of the strings "NaN", "Infinity", "-Infinity".
inline float ParseFixtureFloat(const nlohmann::json& element) {
  if (element.is_string()) {
    const std::string s = element.get<std::string>();
    if (s == "NaN") return std::numeric_limits<float>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<float>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<float>::infinity();
    throw std::runtime_error("fixture: unknown float string \"" + s + "\"");
  }
  return static_cast<float>(element.get<double>());
}

inline FixtureTensor ParseFixtureTensor(const nlohmann::json& j) {
  FixtureTensor t;
  t.shape = j.at("shape").get<attnlab::Shape>();
  const std::string dtype = j.at("dtype").get<std::string>();
  const nlohmann::json& data = j.at("data");
  int64_t count = 1;
  for (int64_t d : t.shape) count *= d;
  if (!data.is_array() || static_cast<int64_t>(data.size()) != count) {
    throw std::runtime_error("fixture: data size does not match shape");
  }
  if (dtype == "bool") {
    t.is_bool = true;
    t.bools.reserve(data.size());
    for (const auto& element : data) t.bools.push_back(element.get<bool>() ? 1 : 0);
  } else if (dtype == "int32") {
    t.ints.reserve(data.size());
    for (const auto& element : data) t.ints.push_back(element.get<int32_t>());
  } else if (dtype == "float32") {
    t.values.reserve(data.size());
    for (const auto& element : data) t.values.push_back(ParseFixtureFloat(element));
  } else {
    throw std::runtime_error("fixture: unknown dtype " + dtype);
  }
  return t;
}

inline std::map<std::string, FixtureTensor> ParseFixtureTensors(const nlohmann::json& j) {
  std::map<std::string, FixtureTensor> tensors;
  for (auto it = j.begin(); it != j.end(); ++it) tensors[it.key()] = ParseFixtureTensor(it.value());
  return tensors;
}

inline Fixture LoadFixture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("fixture: cannot open " + path);
  const nlohmann::json j = nlohmann::json::parse(in);
  Fixture f;
  f.path = path;
  f.name = j.at("name").get<std::string>();
  f.kind = j.at("kind").get<std::string>();
  f.config = j.at("config");
  f.inputs = ParseFixtureTensors(j.at("inputs"));
  if (j.contains("params")) f.params = ParseFixtureTensors(j.at("params"));
  f.outputs = ParseFixtureTensors(j.at("outputs"));
  if (j.contains("tolerance")) {
    f.atol = j.at("tolerance").value("atol", f.atol);
    f.rtol = j.at("tolerance").value("rtol", f.rtol);
  }
  return f;
}

// Paths of the *.json files in `dir`, sorted by name. POSIX dirent works natively and under Node's NODERAWFS.
inline std::vector<std::string> ListJsonFiles(const std::string& dir) {
  std::vector<std::string> paths;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return paths;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) paths.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_
