// Loads a whole-model fixture folder of tests/fixtures/models/ (format in its README.md): the checkpoint
// (model.safetensors: F32, F16 or BF16, with the prefixes and buffers real checkpoints have) and expected.json
// (the normalised config, forward cases, cache decoding steps, greedy generation).
#ifndef ATTNLAB_TESTS_CPP_MODEL_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_MODEL_FIXTURE_H_

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "json_fixture.h"
#include "test_util.h"

namespace attnlab_test {

// One checkpoint tensor as float32 (F32, F16 and BF16 converted exactly); other dtypes keep only their shape.
struct CheckpointTensor {
  std::string dtype;
  attnlab::Shape shape;
  std::vector<float> values;
  std::vector<uint16_t> bits;  // F16 / BF16: the file's 16-bit values
  bool is_float() const { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }
  attnlab::TensorView View() const { return attnlab::TensorView{is_float() ? values.data() : nullptr, shape}; }
};

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  float magnitude;
  if (exp == 0) {
    magnitude = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    magnitude = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

inline std::map<std::string, CheckpointTensor> ReadSafetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  const nlohmann::json header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + header_size);
  const uint8_t* data = bytes.data() + 8 + header_size;
  std::map<std::string, CheckpointTensor> tensors;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    CheckpointTensor t;
    t.dtype = it.value().at("dtype").get<std::string>();
    t.shape = it.value().at("shape").get<attnlab::Shape>();
    const auto offsets = it.value().at("data_offsets").get<std::vector<size_t>>();
    const uint8_t* p = data + offsets[0];
    const size_t n = static_cast<size_t>(NumElements(t.shape));
    if (t.is_float()) t.values.resize(n);
    for (size_t i = 0; i < n && t.is_float(); ++i) {
      if (t.dtype == "F32") {
        std::memcpy(&t.values[i], p + 4 * i, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        t.bits.push_back(h);
        if (t.dtype == "F16") {
          t.values[i] = HalfToFloat(h);
        } else {
          const uint32_t bits = static_cast<uint32_t>(h) << 16;
          std::memcpy(&t.values[i], &bits, 4);
        }
      }
    }
    tensors[it.key()] = std::move(t);
  }
  return tensors;
}

struct ModelForwardCase {
  std::string name;
  FixtureTensor input_ids;
  bool has_attention_mask = false, has_head_mask = false;
  FixtureTensor attention_mask, head_mask;
  FixtureTensor logits;
  std::vector<FixtureTensor> attentions, hidden_states;
};

struct ModelFixture {
  std::string dir, name;
  attnlab::TransformerConfig config;
  Tolerance tol;
  std::map<std::string, CheckpointTensor> checkpoint;
  std::vector<ModelForwardCase> forward;
  FixtureTensor decode_ids;
  std::vector<std::pair<int64_t, int64_t>> decode_steps;  // [t0, t1) of each step
  std::vector<FixtureTensor> decode_logits;
  std::vector<std::vector<FixtureTensor>> decode_attentions;
  std::vector<int32_t> greedy_prompt, greedy_tokens;
  int64_t greedy_new_tokens = 0;
};

// The fixture's normalised config (model.config's form), read by the library's own reader of createModel's options.
inline attnlab::TransformerConfig ModelConfigFromJson(const nlohmann::json& j) {
  return attnlab::ConfigFromOptions(j.dump());
}

inline std::vector<FixtureTensor> ParseTensorList(const nlohmann::json& j) {
  std::vector<FixtureTensor> out;
  for (const auto& t : j) out.push_back(ParseFixtureTensor(t));
  return out;
}

inline ModelFixture LoadModelFixture(const std::string& dir) {
  ModelFixture f;
  f.dir = dir;
  std::ifstream in(dir + "/expected.json");
  if (!in) throw std::runtime_error("cannot open " + dir + "/expected.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  f.name = j.at("case").get<std::string>();
  f.config = ModelConfigFromJson(j.at("config"));
  f.tol = Tolerance{j.at("tolerance").at("atol").get<double>(), j.at("tolerance").at("rtol").get<double>()};
  f.checkpoint = ReadSafetensors(dir + "/model.safetensors");
  for (const auto& c : j.at("forward")) {
    ModelForwardCase fc;
    fc.name = c.at("name").get<std::string>();
    fc.input_ids = ParseFixtureTensor(c.at("input_ids"));
    fc.has_attention_mask = !c.at("attention_mask").is_null();
    if (fc.has_attention_mask) fc.attention_mask = ParseFixtureTensor(c.at("attention_mask"));
    fc.has_head_mask = !c.at("head_mask").is_null();
    if (fc.has_head_mask) fc.head_mask = ParseFixtureTensor(c.at("head_mask"));
    fc.logits = ParseFixtureTensor(c.at("logits"));
    fc.attentions = ParseTensorList(c.at("attentions"));
    fc.hidden_states = ParseTensorList(c.at("hidden_states"));
    f.forward.push_back(std::move(fc));
  }
  const nlohmann::json& d = j.at("decode");
  f.decode_ids = ParseFixtureTensor(d.at("input_ids"));
  for (const auto& s : d.at("steps")) f.decode_steps.emplace_back(s.at("t0").get<int64_t>(), s.at("t1").get<int64_t>());
  f.decode_logits = ParseTensorList(d.at("logits"));
  for (const auto& step : d.at("attentions")) f.decode_attentions.push_back(ParseTensorList(step));
  const nlohmann::json& g = j.at("greedy");
  f.greedy_prompt = g.at("prompt").get<std::vector<int32_t>>();
  f.greedy_new_tokens = g.at("max_new_tokens").get<int64_t>();
  f.greedy_tokens = g.at("tokens").get<std::vector<int32_t>>();
  return f;
}

// The fixture folders (each holds an expected.json), sorted.
inline std::vector<std::string> ModelFixtureDirs(const std::string& root) {
  std::vector<std::string> dirs;
  DIR* d = opendir(root.c_str());
  if (!d) return dirs;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name[0] == '.') continue;
    if (std::ifstream(root + "/" + name + "/expected.json")) dirs.push_back(root + "/" + name);
  }
  closedir(d);
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// A Transformer of the fixture's config with its checkpoint loaded.
inline attnlab::Transformer LoadedTransformer(const ModelFixture& f) {
  attnlab::Transformer model(f.config);
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [name, tensor] : f.checkpoint) state[name] = tensor.View();
  model.LoadStateDict(state);
  return model;
}

// A result tensor against its fixture: the same shape, values within `tol`.
inline void CheckTensorClose(const std::string& what, const attnlab::Tensor& actual, const FixtureTensor& expected,
                             Tolerance tol) {
  INFO(what);
  CHECK(actual.shape == expected.shape);
  CheckAllClose(what, actual.data, expected.values, tol);
}

// Every layer's attentions and every hidden state of a forward against the fixture's lists.
inline void CheckLayerOutputs(const attnlab::TransformerOutput& out, const std::vector<FixtureTensor>& attentions,
                              const std::vector<FixtureTensor>& hidden_states, Tolerance tol) {
  REQUIRE(out.attentions.size() == attentions.size());
  for (size_t l = 0; l < attentions.size(); ++l) {
    CheckTensorClose("attentions[" + std::to_string(l) + "]", out.attentions[l], attentions[l], tol);
  }
  REQUIRE(out.hidden_states.size() == hidden_states.size());
  for (size_t l = 0; l < hidden_states.size(); ++l) {
    CheckTensorClose("hiddenStates[" + std::to_string(l) + "]", out.hidden_states[l], hidden_states[l], tol);
  }
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_MODEL_FIXTURE_H_
