// Loads an encoder fixture folder of tests/fixtures/encoders/ (format: tests/fixtures/models/README.md, "Encoders";
// text encoders and vision models):
// config.json as Hugging Face wrote it, the checkpoint (model.safetensors: F32, F16 or BF16, with the prefixes,
// buffers and tied copies real checkpoints have) and expected.json (the normalised config, the task, forward cases).
#ifndef ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_

#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
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

// One forward of a text encoder (input_ids, maybe a mask and token types) or of a vision model (pixel_values).
struct EncoderForwardCase {
  std::string name;
  OptionalTensor input_ids, pixel_values;
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

// A tensor that may be null, or absent from `object`.
inline OptionalTensor ParseOptional(const nlohmann::json& object, const char* key) {
  OptionalTensor t;
  t.present = object.contains(key) && !object.at(key).is_null();
  if (t.present) t.tensor = ParseFixtureTensor(object.at(key));
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
  const std::pair<const char*, OptionalTensor*> optional[] = {
      {"input_ids", &fc.input_ids},           {"pixel_values", &fc.pixel_values},
      {"attention_mask", &fc.attention_mask}, {"token_type_ids", &fc.token_type_ids},
      {"head_mask", &fc.head_mask},           {"logits", &fc.logits},
      {"pooler_output", &fc.pooler_output}};
  for (const auto& [key, tensor] : optional) *tensor = ParseOptional(c, key);
  if (fc.input_ids.present == fc.pixel_values.present) throw std::runtime_error("input_ids or pixel_values: one");
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
