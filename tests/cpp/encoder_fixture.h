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

// What every checkpoint fixture folder holds (encoders, encoder–decoders): its config.json, checkpoint, and
// expected.json's case name, task, normalised config and tolerance.
struct CheckpointFixture {
  std::string dir, name, task, config_json;
  nlohmann::json config;  // expected.json's normalised config
  Tolerance tol;
  std::map<std::string, CheckpointTensor> checkpoint;

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

struct EncoderFixture : CheckpointFixture {
  std::vector<EncoderForwardCase> forward;
};

// A whole checkpoint (buffers and tied copies included) into a model of `config`: float32 by LoadStateDict, or
// tensor by tensor as its 16-bit bits into a model of that storage.
inline attnlab::Transformer LoadedCheckpoint(const attnlab::TransformerConfig& config,
                                             const std::map<std::string, CheckpointTensor>& checkpoint,
                                             attnlab::WeightStorage storage) {
  attnlab::Transformer model(config, /*seed=*/7, storage == attnlab::WeightStorage::kFloat32, storage);
  std::map<std::string, attnlab::TensorView> state;
  std::vector<std::pair<std::string, attnlab::Shape>> shapes;
  for (const auto& [name, tensor] : checkpoint) {
    state[name] = tensor.View();
    shapes.emplace_back(name, tensor.shape);
  }
  if (storage == attnlab::WeightStorage::kFloat32) {
    model.LoadStateDict(state);
    return model;
  }
  model.CheckStateDict(shapes);
  for (const auto& [name, tensor] : checkpoint) {
    if (tensor.bits.empty()) {
      model.LoadTensor(name, tensor.View());  // (an I64 position_ids buffer: ignored)
    } else {
      model.LoadTensor16(name, tensor.bits.data(), tensor.shape, storage);
    }
  }
  return model;
}

// The 16-bit storage of a checkpoint's matrices, or kFloat32.
inline attnlab::WeightStorage CheckpointStorage(const std::map<std::string, CheckpointTensor>& checkpoint) {
  for (const auto& [name, tensor] : checkpoint) {
    if (tensor.dtype == "F16") return attnlab::WeightStorage::kF16;
    if (tensor.dtype == "BF16") return attnlab::WeightStorage::kBF16;
  }
  return attnlab::WeightStorage::kFloat32;
}

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

// Reads the folder's files into f; returns expected.json.
inline nlohmann::json LoadCheckpointFixture(const std::string& dir, CheckpointFixture& f) {
  f.dir = dir;
  nlohmann::json j = nlohmann::json::parse(FileText(dir + "/expected.json"));
  f.name = j.at("case").get<std::string>();
  f.task = j.at("task").get<std::string>();
  f.config = j.at("config");
  f.config_json = FileText(dir + "/config.json");
  f.tol = Tolerance{j.at("tolerance").at("atol").get<double>(), j.at("tolerance").at("rtol").get<double>()};
  f.checkpoint = ReadSafetensors(dir + "/model.safetensors");
  return j;
}

inline EncoderFixture LoadEncoderFixture(const std::string& dir) {
  EncoderFixture f;
  const nlohmann::json j = LoadCheckpointFixture(dir, f);
  for (const auto& c : j.at("forward")) f.forward.push_back(ParseEncoderCase(c));
  return f;
}

// config.json with its checkpoint's names reads as expected.json's config (each key but `skip`) and task, and reads
// back the same through createModel's options and through the written config.json; returns model.config's JSON.
inline nlohmann::json CheckConfigReadsBack(const CheckpointFixture& f, const std::string& skip = "") {
  using Json = nlohmann::json;
  const attnlab::TransformerConfig c = f.Config();
  const Json got = Json::parse(attnlab::OptionsJson(c));
  for (const auto& [key, value] : f.config.items()) {
    INFO(key);
    if (key != skip) CHECK(got.at(key) == value);
  }
  CHECK(got.at("task") == f.task);
  CHECK(Json::parse(attnlab::OptionsJson(attnlab::ConfigFromOptions(got.dump()))) == got);
  const std::string written = attnlab::HuggingFaceConfigJson(c);
  CHECK(Json::parse(written).at("model_type") == Json::parse(f.config_json).at("model_type"));
  CHECK(Json::parse(
            attnlab::OptionsJson(attnlab::ConfigWithHeads(attnlab::ConfigFromHuggingFace(written), f.Names()))) == got);
  return got;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_ENCODER_FIXTURE_H_
