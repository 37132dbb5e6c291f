// Loads an encoder fixture folder of tests/fixtures/encoders/ (format: tests/fixtures/models/README.md, "Encoders"):
// config.json as Hugging Face wrote it, the checkpoint (model.safetensors: F32, F16 or BF16, with the prefixes,
// buffers and tied copies real checkpoints have) and expected.json (the normalised config, the task, forward cases).
#ifndef ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_

#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "json_fixture.h"
#include "model_fixture.h"
#include "test_util.h"

namespace attnlab_test {

// tests/fixtures/encoders/: one folder per case (gen_encoders.py).
inline const std::string kEncoderFixtureDir = ATTNLAB_FIXTURE_DIR "/../encoders";

// A tensor of expected.json that may be null.
struct OptionalTensor {
  bool present = false;
  FixtureTensor tensor;
};

struct EncoderForwardCase {
  std::string name;
  FixtureTensor input_ids;
  OptionalTensor attention_mask, token_type_ids, head_mask, logits, pooler_output;
  FixtureTensor last_hidden_state;
  std::vector<FixtureTensor> attentions, hidden_states;
};

struct EncoderFixture {
  std::string dir, name, task, config_json;
  nlohmann::json config;  // expected.json's normalised config
  Tolerance tol;
  std::map<std::string, CheckpointTensor> checkpoint;
  std::vector<EncoderForwardCase> forward;

  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : checkpoint) names.push_back(name);
    return names;
  }
  // config.json with the head the checkpoint holds, as a loader reads them.
  attnlab::TransformerConfig Config() const {
    return attnlab::ConfigWithHeads(attnlab::ConfigFromHuggingFace(config_json), Names());
  }
};

inline OptionalTensor ParseOptional(const nlohmann::json& j) {
  OptionalTensor t;
  t.present = !j.is_null();
  if (t.present) t.tensor = ParseFixtureTensor(j);
  return t;
}

inline std::string FileText(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline EncoderForwardCase ParseEncoderCase(const nlohmann::json& c) {
  EncoderForwardCase fc;
  fc.name = c.at("name").get<std::string>();
  fc.input_ids = ParseFixtureTensor(c.at("input_ids"));
  fc.attention_mask = ParseOptional(c.at("attention_mask"));
  fc.token_type_ids = ParseOptional(c.at("token_type_ids"));
  fc.head_mask = ParseOptional(c.at("head_mask"));
  fc.logits = ParseOptional(c.at("logits"));
  fc.pooler_output = ParseOptional(c.at("pooler_output"));
  fc.last_hidden_state = ParseFixtureTensor(c.at("last_hidden_state"));
  fc.attentions = ParseTensorList(c.at("attentions"));
  fc.hidden_states = ParseTensorList(c.at("hidden_states"));
  return fc;
}

inline EncoderFixture LoadEncoderFixture(const std::string& dir) {
  EncoderFixture f;
  f.dir = dir;
  const nlohmann::json j = nlohmann::json::parse(FileText(dir + "/expected.json"));
  f.name = j.at("case").get<std::string>();
  f.task = j.at("task").get<std::string>();
  f.config = j.at("config");
  f.config_json = FileText(dir + "/config.json");
  f.tol = Tolerance{j.at("tolerance").at("atol").get<double>(), j.at("tolerance").at("rtol").get<double>()};
  f.checkpoint = ReadSafetensors(dir + "/model.safetensors");
  for (const auto& c : j.at("forward")) f.forward.push_back(ParseEncoderCase(c));
  return f;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_
