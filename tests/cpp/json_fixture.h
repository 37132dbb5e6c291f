// Loads the JSON reference fixtures (tests/fixtures/torch/*.json, format in its README.md; tests/fixtures/onnx/ uses
// the same format) and runs a directory of them on every target.
#ifndef ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_

#include <dirent.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "test_util.h"

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

// A fixture mask (nullptr: none) as an OwnedMask, bools as stored: for readers whose bool convention is the file's
// (MHA and the torch fixtures: true = masked out; SDPA and the ONNX fixtures: true = may attend).
inline OwnedMask MaskAsStored(const FixtureTensor* t) {
  OwnedMask m;
  if (t == nullptr) return m;
  m.shape = t->shape;
  m.kind = t->is_bool ? attnlab::Mask::Kind::kBool : attnlab::Mask::Kind::kFloat;
  m.bools = t->bools;
  m.floats = t->values;
  return m;
}

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

// Runs run(fixture) -> bool (all matched) for every fixture file in `dir` on every compiled Highway target
// (ForEachTarget). A fixture that cannot be loaded, an exception or a false return is a failed run; at least
// min_cases fixtures must load. Prints "<label>: N cases x T targets (…) passed|FAILED, K failed runs".
template <class Run>
void CheckFixtureDirectory(const std::string& dir, size_t min_cases, const std::string& label, Run&& run) {
  const std::vector<std::string> paths = ListJsonFiles(dir);
  INFO("fixture directory " << dir);
  REQUIRE(paths.size() >= min_cases);

  size_t cases = 0, failed_runs = 0, num_targets = 0;
  for (const std::string& path : paths) {
    INFO("fixture " << path);
    Fixture fixture;
    try {
      fixture = LoadFixture(path);
    } catch (const std::exception& e) {
      FAIL_CHECK("cannot load: " << e.what());
      ++failed_runs;
      continue;
    }
    ++cases;
    num_targets = 0;
    ForEachTarget([&](const std::string&) {
      ++num_targets;
      bool ok = false;
      try {
        ok = run(fixture);
      } catch (const std::exception& e) {
        FAIL_CHECK("exception: " << e.what());
      }
      if (!ok) ++failed_runs;
    });
  }
  CHECK(cases >= min_cases);
  std::cout << label << ": " << cases << " cases x " << num_targets << " targets (" << TargetListString() << ") "
            << (failed_runs == 0 ? "passed" : "FAILED") << ", " << failed_runs << " failed runs" << std::endl;
  CHECK(failed_runs == 0);
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_JSON_FIXTURE_H_
