// Mirrors cpp/src/model/seq2seq.cc, cpp/src/model/types/marian.cc and the cross-attention stage of block-inl.h:
// Marian and T5 checkpoints (tests/fixtures/seq2seq/, made by PyTorch references that follow Hugging Face's
// modeling_marian.py and modeling_t5.py and checked against independent NumPy forwards) on every target, in float32 and
// in their own 16-bit storage: logits or the decoder's last hidden state, the encoder's last hidden state, the encoder,
// decoder and cross-attention weights of every layer and both stacks' hidden states, with padding and the three head
// masks; each bad config, checkpoint and argument named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "attnlab/memory_needs.h"
#include "attnlab/transformer.h"
#include "hwy_targets.h"
#include "nlohmann/json.hpp"
#include "seq2seq_fixture.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;
using attnlab::TransformerForwardOptions;
using attnlab::WeightStorage;
using Json = nlohmann::json;

std::vector<Seq2SeqFixture> AllSeq2SeqFixtures() {
  std::vector<Seq2SeqFixture> fixtures;
  for (const std::string& dir : ModelFixtureDirs(kSeq2SeqFixtureDir)) fixtures.push_back(LoadSeq2SeqFixture(dir));
  return fixtures;
}

// A forward case's inputs as options (`mask` holds the padding mask's bytes), every layer's weights asked for.
TransformerForwardOptions OptionsOf(const Seq2SeqForwardCase& c, int64_t layers, std::vector<uint8_t>& mask) {
  TransformerForwardOptions o;
  o.decoder_input_ids = c.decoder_input_ids.ints.data();
  o.decoder_input_ids_shape = c.decoder_input_ids.shape;
  mask.assign(c.attention_mask.tensor.ints.begin(), c.attention_mask.tensor.ints.end());
  if (c.attention_mask.present) {
    o.attention_mask = mask.data();
    o.attention_mask_shape = c.attention_mask.tensor.shape;
  }
  const std::vector<std::pair<const OptionalTensor*, std::pair<const float**, attnlab::Shape*>>> head_masks = {
      {&c.head_mask, {&o.head_mask, &o.head_mask_shape}},
      {&c.decoder_head_mask, {&o.decoder_head_mask, &o.decoder_head_mask_shape}},
      {&c.cross_attn_head_mask, {&o.cross_attn_head_mask, &o.cross_attn_head_mask_shape}}};
  for (const auto& [given, option] : head_masks) {
    if (!given->present) continue;
    *option.first = given->tensor.values.data();
    *option.second = given->tensor.shape;
  }
  for (int64_t l = 0; l < layers; ++l) o.output_attentions.push_back(l);
  o.output_hidden_states = true;
  return o;
}

void CheckList(const std::string& what, const std::vector<attnlab::Tensor>& got,
               const std::vector<FixtureTensor>& expected, Tolerance tol) {
  REQUIRE(got.size() == expected.size());
  for (size_t l = 0; l < expected.size(); ++l) {
    CheckTensorClose(what + "[" + std::to_string(l) + "]", got[l], expected[l], tol);
  }
}

void CheckSeq2SeqCase(Transformer& model, const Seq2SeqForwardCase& c, Tolerance tol) {
  INFO("forward case " << c.name);
  std::vector<uint8_t> mask;
  const attnlab::TransformerConfig& config = model.config();
  const TransformerForwardOptions o = OptionsOf(c, std::max(config.num_layers, config.decoder_layers), mask);
  const attnlab::TransformerOutput out = model.Forward({c.input_ids.ints.data(), c.input_ids.shape}, o);
  if (c.logits.present) {
    CheckTensorClose("logits", out.logits, c.logits.tensor, tol);
    CHECK(out.last_hidden_state.data.empty());
  } else {
    CHECK(out.logits.data.empty());
    CheckTensorClose("lastHiddenState", out.last_hidden_state, c.last_hidden_state.tensor, tol);
  }
  CheckTensorClose("encoderLastHiddenState", out.encoder_last_hidden_state, c.encoder_last_hidden_state, tol);
  CheckList("encoderAttentions", out.encoder_attentions, c.encoder_attentions, tol);
  CheckList("decoderAttentions", out.attentions, c.decoder_attentions, tol);
  CheckList("crossAttentions", out.cross_attentions, c.cross_attentions, tol);
  CheckList("encoderHiddenStates", out.encoder_hidden_states, c.encoder_hidden_states, tol);
  CheckList("decoderHiddenStates", out.hidden_states, c.decoder_hidden_states, tol);
}

TEST_CASE(
    "encoder-decoders: Marian and T5 checkpoints give PyTorch's logits, both stacks' attentions, the "
    "cross-attention and hidden states on every target",
    "[model][seq2seq]") {
  const std::vector<Seq2SeqFixture> fixtures = AllSeq2SeqFixtures();
  REQUIRE(fixtures.size() == 6);
  for (const Seq2SeqFixture& f : fixtures) {
    INFO("fixture " << f.name);
    std::vector<WeightStorage> storages = {WeightStorage::kFloat32};
    if (CheckpointStorage(f.checkpoint) != WeightStorage::kFloat32) storages.push_back(CheckpointStorage(f.checkpoint));
    ForEachTarget([&](const std::string&) {
      for (WeightStorage s : storages) {
        Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, s);
        CHECK(model.storage() == s);
        for (const Seq2SeqForwardCase& c : f.forward) CheckSeq2SeqCase(model, c, f.tol);
      }
    });
  }
}

TEST_CASE("encoder-decoders: each config.json with its checkpoint's names reads as the expected config and task",
          "[model][seq2seq][types]") {
  for (const Seq2SeqFixture& f : AllSeq2SeqFixtures()) {
    INFO("fixture " << f.name);
    CheckConfigReadsBack(f);
    const Transformer model(f.Config(), 0, false);
    CHECK(model.ParameterShapes().front().first == "shared.weight");
  }
}

Seq2SeqFixture MtFixture() { return LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/marian_mt_f32"); }

// LoadStateDict of the checkpoint with `edit` applied to a copy of the named tensor's values (or the tensor removed
// when `edit` is null) must fail naming it.
void ExpectCheckpointRefused(const Seq2SeqFixture& f, const std::string& name, void (*edit)(std::vector<float>&)) {
  Transformer model(f.Config(), 0, false);
  std::vector<float> edited;
  const std::map<std::string, attnlab::TensorView> state = EditedStateDict(f, name, edit, edited);
  const std::string bare = name.rfind("model.", 0) == 0 ? name.substr(6) : name;  // (a missing one: its own name)
  ExpectInvalidArgument([&] { model.LoadStateDict(state); }, {name, bare});
}

TEST_CASE("encoder-decoders: a missing final_logits_bias or a tied copy that differs is named",
          "[model][seq2seq][validation]") {
  const Seq2SeqFixture f = MtFixture();
  REQUIRE(f.Config().task == attnlab::Task::kSeq2SeqLm);
  REQUIRE(f.checkpoint.count("lm_head.weight") == 1);
  ExpectCheckpointRefused(f, "final_logits_bias", nullptr);
  for (const char* tied :
       {"lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"}) {
    ExpectCheckpointRefused(f, tied, [](std::vector<float>& v) { v[3] += 0.25f; });
  }
  ExpectCheckpointRefused(f, "model.decoder.layers.1.encoder_attn.k_proj.weight", nullptr);
}

TEST_CASE("encoder-decoders: the decoder's inputs, masks and head masks are checked and named",
          "[model][seq2seq][validation]") {
  const Seq2SeqFixture f = MtFixture();
  Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, WeightStorage::kFloat32);
  const std::vector<int32_t> src = {3, 4, 5, 6}, tgt = {23, 7, 8, 9};  // (V 24, contextLength 12, L 2, Ld 3, H 4)
  const attnlab::TokensView tokens{src.data(), {2, 2}};
  auto forward = [&](const TransformerForwardOptions& o) { return model.Forward(tokens, o); };
  TransformerForwardOptions o;
  ExpectInvalidArgument([&] { forward(o); }, {"decoderInputIds"});
  o.decoder_input_ids = tgt.data();
  o.decoder_input_ids_shape = {1, 4};
  ExpectInvalidArgument([&] { forward(o); }, {"decoderInputIds"});  // (batch 1, the tokens' 2)
  const std::vector<int32_t> out_of_range = {23, 24, 1, 2};
  o.decoder_input_ids = out_of_range.data();
  o.decoder_input_ids_shape = {2, 2};
  ExpectInvalidArgument([&] { forward(o); }, {"decoderInputIds"});
  o.decoder_input_ids = tgt.data();
  CHECK(forward(o).logits.shape == attnlab::Shape{2, 2, 24});
  const std::vector<float> heads(3 * 4, 1.0f);
  o.decoder_head_mask = heads.data();
  o.decoder_head_mask_shape = {2, 4};
  ExpectInvalidArgument([&] { forward(o); }, {"decoderHeadMask"});
  o.decoder_head_mask = nullptr;
  o.cross_attn_head_mask = heads.data();
  o.cross_attn_head_mask_shape = {3, 3};
  ExpectInvalidArgument([&] { forward(o); }, {"crossAttnHeadMask"});
  o.cross_attn_head_mask = nullptr;
  const std::vector<uint8_t> mask(6, 1);
  o.decoder_attention_mask = mask.data();
  o.decoder_attention_mask_shape = {2, 3};
  ExpectInvalidArgument([&] { forward(o); }, {"decoderAttentionMask"});
  o.decoder_attention_mask = nullptr;
  o.output_attentions = {3};  // (the decoder's layers 0 … 2)
  ExpectInvalidArgument([&] { forward(o); }, {"outputAttentions"});
  o.output_attentions = {2};  // (a decoder layer only: the encoder's list stays empty)
  const attnlab::TransformerOutput out = forward(o);
  CHECK(out.encoder_attentions.at(0).data.empty());
  CHECK(out.cross_attentions.at(2).shape == attnlab::Shape{2, 4, 2, 2});
}

TEST_CASE("encoder-decoders: occlusion, head values of the wrong count or over a cache, pixel values: named",
          "[model][seq2seq][validation]") {
  const Seq2SeqFixture f = MtFixture();
  Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, WeightStorage::kFloat32);
  const std::vector<int32_t> src = {3, 4, 5, 6}, tgt = {23, 7, 8, 9};
  const attnlab::TokensView tokens{src.data(), {2, 2}};
  TransformerForwardOptions o;
  o.decoder_input_ids = tgt.data();
  o.decoder_input_ids_shape = {2, 2};
  const std::vector<int64_t> occlude = {0, -1};
  o.occlude = occlude.data();
  o.occlude_shape = {2};
  ExpectInvalidArgument([&] { model.Forward(tokens, o); }, {"occlude"});
  o.occlude = nullptr;
  const std::vector<float> values(2 * 2 * 4, 0.0f);
  o.head_values.assign(3 * 4, values.data());  // (not (L + 2·Ld)·H)
  ExpectInvalidArgument([&] { model.Forward(tokens, o); }, {"headValues", "(L + 2·Ld)·H"});
  o.head_values.clear();
  o.output_head_outputs = true;
  attnlab::TransformerKVCache cache = model.CreateKVCache(2, 4);
  o.cache = &cache;
  ExpectInvalidArgument([&] { model.Forward(tokens, o); }, {"kvCache", "outputHeadOutputs"});
  o.cache = nullptr;
  const std::vector<float> pixels(2 * 3 * 4 * 4, 0.5f);
  ExpectInvalidArgument([&] { model.Forward(attnlab::PixelsView{pixels.data(), {2, 3, 4, 4}}, {}); }, {"pixelValues"});
}

// Row k of the full forward's logits (B, T, V) for item b.
std::vector<float> LogitsRow(const std::vector<float>& logits, const attnlab::Shape& shape, size_t b, size_t k) {
  const size_t t_len = static_cast<size_t>(shape[1]), v = static_cast<size_t>(shape[2]);
  const float* row = logits.data() + (b * t_len + k) * v;
  return std::vector<float>(row, row + v);
}

// Greedy decoding of a fixture's padded source: each step's logits (over the cache, the encoder run once) against a
// full forward of the start token and the ids generated before it, and each id the argmax of those logits (the pad
// after an item's eos).
void CheckGreedy(Transformer& model, const Seq2SeqFixture& f) {
  const Seq2SeqForwardCase& c = f.forward.at(1);  // (padding: item 2 nothing but padding)
  REQUIRE(c.attention_mask.present);
  const std::vector<uint8_t> mask(c.attention_mask.tensor.ints.begin(), c.attention_mask.tensor.ints.end());
  TransformerForwardOptions o;
  o.attention_mask = mask.data();
  o.attention_mask_shape = c.attention_mask.tensor.shape;
  const attnlab::TokensView tokens{c.input_ids.ints.data(), c.input_ids.shape};
  std::vector<attnlab::Tensor> steps;
  const auto ids = model.GenerateGreedy(tokens, o, 6, [&](const attnlab::TransformerOutput& out) {
    CHECK(out.encoder_last_hidden_state.data.empty() == !steps.empty());  // (the encoder runs on the first step only)
    steps.push_back(out.logits);
  });
  const size_t batch = ids.size(), n = steps.size();
  REQUIRE(batch == static_cast<size_t>(c.input_ids.shape[0]));
  REQUIRE(n >= 1);
  const int32_t start = static_cast<int32_t>(model.config().decoder_start_token_id);
  std::vector<int32_t> decoder;  // (B, n): the start token, then each item's first n − 1 ids
  for (const auto& row : ids) {
    REQUIRE(row.size() == n);
    decoder.push_back(start);
    decoder.insert(decoder.end(), row.begin(), row.end() - 1);
  }
  o.decoder_input_ids = decoder.data();
  o.decoder_input_ids_shape = {static_cast<int64_t>(batch), static_cast<int64_t>(n)};
  const attnlab::TransformerOutput full = model.Forward(tokens, o);
  for (size_t k = 0; k < n; ++k) {
    INFO("step " << k);
    REQUIRE(steps[k].shape == attnlab::Shape{static_cast<int64_t>(batch), 1, model.config().vocab_size});
    for (size_t b = 0; b < batch; ++b) {
      const std::vector<float> expected = LogitsRow(full.logits.data, full.logits.shape, b, k),
                               got = LogitsRow(steps[k].data, steps[k].shape, b, 0);
      CheckAllClose("step logits", got, expected, f.tol);
      const bool finished =
          std::find(ids[b].begin(), ids[b].begin() + k, model.config().eos_token_id) != ids[b].begin() + k;
      const int32_t argmax =
          static_cast<int32_t>(std::max_element(expected.begin(), expected.end()) - expected.begin());
      CHECK(ids[b][k] == (finished ? model.config().pad_token_id : argmax));
    }
  }
}

TEST_CASE("encoder-decoders: greedy decoding over a KV cache gives a full forward's logits at every step",
          "[model][seq2seq][generate]") {
  for (const Seq2SeqFixture& f : AllSeq2SeqFixtures()) {
    if (f.task != "seq2seq-lm") continue;
    INFO("fixture " << f.name);
    ForEachTarget([&](const std::string&) {
      Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, CheckpointStorage(f.checkpoint));
      CheckGreedy(model, f);
    });
  }
}

TEST_CASE("encoder-decoders: greedy decoding stops once every item has emitted eosTokenId",
          "[model][seq2seq][generate]") {
  // These random checkpoints repeat one token whatever the source (marian_mt_f16: 5 each step); with it as eos,
  // one step, else every step asked for.
  const Seq2SeqFixture f = LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/marian_mt_f16");
  const Seq2SeqForwardCase& c = f.forward.at(0);
  const attnlab::TokensView tokens{c.input_ids.ints.data(), c.input_ids.shape};
  for (const int64_t eos : {int64_t{0}, int64_t{5}}) {
    attnlab::TransformerConfig config = f.Config();
    config.eos_token_id = eos;
    Transformer model = LoadedCheckpoint(config, f.checkpoint, WeightStorage::kFloat32);
    const auto ids = model.GenerateGreedy(tokens, {}, 4);
    REQUIRE(ids.size() == 2);
    const std::vector<int32_t> expected(eos == 5 ? 1 : 4, 5);
    CHECK(ids[0] == expected);
    CHECK(ids[1] == expected);
  }
}

TEST_CASE("encoder-decoders: a cache continues in chunks as one forward; its misuse is named",
          "[model][seq2seq][generate][validation]") {
  const Seq2SeqFixture f = MtFixture();
  Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, WeightStorage::kFloat32);
  const Seq2SeqForwardCase& c = f.forward.at(0);  // (plain: B 2, S 5, T 4)
  const attnlab::TokensView tokens{c.input_ids.ints.data(), c.input_ids.shape};
  attnlab::TransformerKVCache cache = model.CreateKVCache(2, 5);
  const std::vector<int32_t> first = {c.decoder_input_ids.ints[0], c.decoder_input_ids.ints[1],
                                      c.decoder_input_ids.ints[4], c.decoder_input_ids.ints[5]},
                             second = {c.decoder_input_ids.ints[2], c.decoder_input_ids.ints[3],
                                       c.decoder_input_ids.ints[6], c.decoder_input_ids.ints[7]};
  TransformerForwardOptions o;
  o.cache = &cache;
  o.output_attentions = {0, 1, 2};
  o.decoder_input_ids = first.data();
  o.decoder_input_ids_shape = {2, 2};
  CheckTensorClose("encoderLastHiddenState", model.Forward(tokens, o).encoder_last_hidden_state,
                   c.encoder_last_hidden_state, f.tol);
  o.decoder_input_ids = second.data();
  const attnlab::TransformerOutput out = model.Forward(tokens, o);
  CHECK(cache.Length() == 4);
  CHECK(out.encoder_last_hidden_state.data.empty());
  for (size_t b = 0; b < 2; ++b) {
    for (size_t k = 0; k < 2; ++k) {
      CheckAllClose("logits", LogitsRow(out.logits.data, out.logits.shape, b, k),
                    LogitsRow(c.logits.tensor.values, c.logits.tensor.shape, b, k + 2), f.tol);
    }
  }
  CHECK(out.attentions.at(2).shape == attnlab::Shape{2, 4, 2, 4});  // (B, H, T, P + T)
  CHECK(out.cross_attentions.at(2).shape == attnlab::Shape{2, 4, 2, 5});
  ExpectInvalidArgument([&] { model.Forward(tokens, o); }, {"decoderInputIds"});  // (4 + 2 > maxLength 5)
  const std::vector<int32_t> shorter(8, 3);
  o.decoder_input_ids_shape = {2, 1};
  ExpectInvalidArgument([&] { model.Forward({shorter.data(), {2, 4}}, o); }, {"tokens"});  // (S 4, the cache's 5)
  Transformer other = LoadedCheckpoint(f.Config(), f.checkpoint, WeightStorage::kFloat32);
  ExpectInvalidArgument([&] { other.Forward(tokens, o); }, {"kvCache"});
  ExpectInvalidArgument([&] { model.GenerateGreedy(tokens, {}, 0); }, {"maxNewTokens"});
  cache.Reset();
  CHECK(!model.Forward({shorter.data(), {2, 4}}, o).encoder_last_hidden_state.data.empty());  // (encoded again)
}

TEST_CASE("encoder-decoders: positions past contextLength and training are refused", "[model][seq2seq][validation]") {
  const Seq2SeqFixture f = MtFixture();
  Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, WeightStorage::kFloat32);
  const std::vector<int32_t> long_ids(13, 5), ids = {23, 5};
  TransformerForwardOptions o;
  o.decoder_input_ids = long_ids.data();
  o.decoder_input_ids_shape = {1, 13};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 2}}, o); }, {"decoderInputIds"});
  o.decoder_input_ids = ids.data();
  o.decoder_input_ids_shape = {1, 2};
  ExpectInvalidArgument([&] { model.Forward({long_ids.data(), {1, 13}}, o); }, {"tokens"});
  ExpectInvalidArgument([&] { model.LossAndGradient({ids.data(), {1, 2}}, {ids.data(), {1, 2}}); }, {"task"});
  Transformer gpt2(attnlab::ConfigFromOptions(
      R"({"arch": "gpt2", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1, "numHeads": 2})"));
  ExpectInvalidArgument([&] { gpt2.Forward({ids.data(), {1, 1}}, o); }, {"decoderInputIds"});
}

// config.json of the F32 case with one key changed.
std::string ConfigWith(const std::string& key, const Json& value) {
  Json hf = Json::parse(MtFixture().config_json);
  hf[key] = value;
  return hf.dump();
}

TEST_CASE("encoder-decoders: config.json values attnlab does not compute are named", "[model][seq2seq][validation]") {
  const std::vector<std::pair<std::string, Json>> refused = {{"decoder_attention_heads", 2},
                                                             {"decoder_ffn_dim", 64},
                                                             {"decoder_vocab_size", 30},
                                                             {"activation_function", "tanh"},
                                                             {"share_encoder_decoder_embeddings", false}};
  for (const auto& entry : refused) {
    const std::string& key = entry.first;  // a plain name: clang 14 cannot capture structured bindings
    INFO(key);
    ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(ConfigWith(key, entry.second)); }, {"config." + key});
  }
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(ConfigWith("decoder_start_token_id", 24)); },
                        {"decoderStartTokenId"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(ConfigWith("decoder_layers", 0)); }, {"decoderLayers"});
  CHECK(attnlab::ConfigFromHuggingFace(ConfigWith("decoder_vocab_size", nullptr)).vocab_size == 24);
  ExpectInvalidArgument(
      [&] {
        attnlab::ConfigFromOptions(
            R"({"arch": "marian", "vocabSize": 8, "contextLength": 4, "embedDim": 8, "numLayers": 1,
                "decoderLayers": 1, "numHeads": 2, "task": "masked-lm"})");
      },
      {"task"});
}

TEST_CASE("encoder-decoders: a fresh Marian model's untied head and sizes follow its config",
          "[model][seq2seq][types]") {
  const attnlab::TransformerConfig c = attnlab::ConfigFromOptions(
      R"({"arch": "marian", "vocabSize": 10, "contextLength": 6, "embedDim": 8, "numLayers": 1, "decoderLayers": 2,
          "numHeads": 2, "hiddenAct": "relu", "padTokenId": 9, "decoderStartTokenId": 9, "tieEmbeddings": false})");
  const Transformer model(c, 3);
  const auto shapes = model.ParameterShapes();
  // shared; 16 per encoder layer, 26 per decoder layer; lm_head, final_logits_bias.
  REQUIRE(shapes.size() == 1 + 16 + 2 * 26 + 2);
  CHECK(shapes.at(shapes.size() - 2).first == "lm_head.weight");
  CHECK(shapes.back() == std::make_pair(std::string("final_logits_bias"), attnlab::Shape{1, 10}));
  CHECK(model.TiedTo("model.decoder.embed_tokens.weight") == "shared.weight");
  CHECK(model.TiedTo("lm_head.weight").empty());
  CHECK(model.CanonicalName("model.encoder.embed_positions.weight").empty());
  // The parameters' memory counts both stacks (at least 4 bytes a parameter; packing pads the matrices).
  double bytes = 0;
  for (const auto& part : attnlab::TransformerParameterMemoryNeeds(c)) bytes += part.bytes;
  CHECK(bytes >= 4.0 * static_cast<double>(model.ParameterCount()));
}

}  // namespace
}  // namespace attnlab_test
