// Loads an encoder–decoder fixture folder of tests/fixtures/seq2seq/ (format: tests/fixtures/models/README.md,
// "Encoder–decoders: Marian"): config.json as Hugging Face wrote it, the checkpoint (model.safetensors, with the
// prefixes, buffers and tied copies real checkpoints have) and expected.json (the normalised config, the task,
// forward cases with both stacks' outputs).
#ifndef ATTNLAB_TESTS_CPP_SEQ2SEQ_FIXTURE_H_
#define ATTNLAB_TESTS_CPP_SEQ2SEQ_FIXTURE_H_

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "json_fixture.h"
#include "model_fixture.h"
#include "test_util.h"

namespace attnlab_test {

// tests/fixtures/seq2seq/: one folder per case (gen_seq2seq.py).
inline const std::string kSeq2SeqFixtureDir = ATTNLAB_FIXTURE_DIR "/../seq2seq";

struct Seq2SeqForwardCase {
  std::string name;
  FixtureTensor input_ids, decoder_input_ids, encoder_last_hidden_state;
  OptionalTensor attention_mask, head_mask, decoder_head_mask, cross_attn_head_mask, logits, last_hidden_state;
  std::vector<FixtureTensor> encoder_attentions, decoder_attentions, cross_attentions, encoder_hidden_states,
      decoder_hidden_states;
};

struct Seq2SeqFixture : CheckpointFixture {
  std::vector<Seq2SeqForwardCase> forward;
};

inline Seq2SeqForwardCase ParseSeq2SeqCase(const nlohmann::json& c) {
  Seq2SeqForwardCase fc;
  fc.name = c.at("name").get<std::string>();
  fc.input_ids = ParseFixtureTensor(c.at("input_ids"));
  fc.decoder_input_ids = ParseFixtureTensor(c.at("decoder_input_ids"));
  fc.encoder_last_hidden_state = ParseFixtureTensor(c.at("encoder_last_hidden_state"));
  fc.attention_mask = ParseOptional(c, "attention_mask");
  fc.head_mask = ParseOptional(c, "head_mask");
  fc.decoder_head_mask = ParseOptional(c, "decoder_head_mask");
  fc.cross_attn_head_mask = ParseOptional(c, "cross_attn_head_mask");
  fc.logits = ParseOptional(c, "logits");
  fc.last_hidden_state = ParseOptional(c, "last_hidden_state");
  fc.encoder_attentions = ParseTensorList(c.at("encoder_attentions"));
  fc.decoder_attentions = ParseTensorList(c.at("decoder_attentions"));
  fc.cross_attentions = ParseTensorList(c.at("cross_attentions"));
  fc.encoder_hidden_states = ParseTensorList(c.at("encoder_hidden_states"));
  fc.decoder_hidden_states = ParseTensorList(c.at("decoder_hidden_states"));
  return fc;
}

inline Seq2SeqFixture LoadSeq2SeqFixture(const std::string& dir) {
  Seq2SeqFixture f;
  const nlohmann::json j = LoadCheckpointFixture(dir, f);
  for (const auto& c : j.at("forward")) f.forward.push_back(ParseSeq2SeqCase(c));
  return f;
}

// The checkpoint as a state dict without tensor `name` (edit null), or with `edit` applied to a copy of its values
// (held in `edited`).
inline std::map<std::string, attnlab::TensorView> EditedStateDict(const CheckpointFixture& f, const std::string& name,
                                                                  void (*edit)(std::vector<float>&),
                                                                  std::vector<float>& edited) {
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [n, tensor] : f.checkpoint) {
    if (n != name) {
      state[n] = tensor.View();
    } else if (edit) {
      edited = tensor.values;
      edit(edited);
      state[n] = attnlab::TensorView{edited.data(), tensor.shape};
    }
  }
  return state;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_SEQ2SEQ_FIXTURE_H_
