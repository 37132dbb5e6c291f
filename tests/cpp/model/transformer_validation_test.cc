// Mirrors the checks of cpp/src/model/transformer.cc and architectures.cc: each bad configuration, checkpoint,
// token batch, mask and cache is a std::invalid_argument naming the argument (in JS spelling), and the model keeps
// working after it.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;
using attnlab::TransformerConfig;

TransformerConfig SmallLlama() {
  TransformerConfig c;
  c.arch = "llama";
  c.vocab_size = 11;
  c.context_length = 8;
  c.embed_dim = 8;
  c.num_layers = 2;
  c.num_heads = 2;
  c.num_kv_heads = 1;
  c.hidden_dim = 12;
  c.tie_embeddings = false;
  return c;
}

TransformerConfig SmallGpt2() {
  TransformerConfig c;
  c.vocab_size = 11;
  c.context_length = 8;
  c.embed_dim = 8;
  c.num_layers = 1;
  c.num_heads = 2;
  return c;
}

// The model's own state dict as views, with `edit` applied.
template <class Edit>
void LoadEdited(Transformer& model, Edit&& edit) {
  std::map<std::string, attnlab::Tensor> state = model.StateDict();
  edit(state);
  std::map<std::string, attnlab::TensorView> views;
  for (const auto& [name, t] : state) views[name] = attnlab::TensorView{t.data.data(), t.shape};
  model.LoadStateDict(views);
}

TEST_CASE("transformer validation: each bad configuration field is named", "[model][validation]") {
  auto with = [](auto edit) {
    TransformerConfig c = SmallLlama();
    edit(c);
    return c;
  };
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.vocab_size = 0; })); }, {"vocabSize"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.context_length = -1; })); }, {"contextLength"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.num_layers = 0; })); }, {"numLayers"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.num_kv_heads = 3; })); }, {"numKVHeads"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.head_dim = 3; })); }, {"headDim"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.rope_theta = 0; })); }, {"ropeTheta"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.norm_eps = -1; })); }, {"normEps"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.sliding_window = -2; })); }, {"slidingWindow"});
  ExpectInvalidArgument([&] { Transformer(with([](auto& c) { c.num_heads = 3; })); }, {"numHeads"});
  TransformerConfig gpt2 = SmallGpt2();
  gpt2.tie_embeddings = false;
  ExpectInvalidArgument([&] { Transformer{gpt2}; }, {"tieEmbeddings"});
  gpt2 = SmallGpt2();
  gpt2.num_kv_heads = 1;
  ExpectInvalidArgument([&] { Transformer{gpt2}; }, {"numKVHeads"});
  // A model whose parameters could not be addressed is refused before anything is allocated. (Only wasm32 can
  // reach that bound within the fields' ranges: 2^29 floats.)
  if (sizeof(void*) == 4) {
    gpt2 = SmallGpt2();
    gpt2.vocab_size = int64_t{1} << 20;
    gpt2.embed_dim = int64_t{1} << 10;
    ExpectInvalidArgument([&] { Transformer{gpt2}; }, {"config"});
  }
}

TEST_CASE("transformer validation: checkpoints with unknown, missing, misshapen or untied tensors are named",
          "[model][validation]") {
  Transformer model(SmallLlama(), 1);
  const std::string q = "model.layers.1.self_attn.q_proj.weight";
  ExpectInvalidArgument([&] { LoadEdited(model, [](auto& s) {
                                s["model.layers.0.mlp.extra.weight"] = {{0}, {1}};
                              }); },
                        {"model.layers.0.mlp.extra.weight"});
  ExpectInvalidArgument([&] { LoadEdited(model, [&](auto& s) { s.erase(q); }); }, {q});
  ExpectInvalidArgument([&] { LoadEdited(model, [&](auto& s) { s[q].shape = {8, 4, 2}; }); }, {q});
  // The same parameter twice (with and without the prefix).
  ExpectInvalidArgument([&] { LoadEdited(model, [&](auto& s) { s["layers.1.self_attn.q_proj.weight"] = s[q]; }); },
                        {"layers.1.self_attn.q_proj.weight"});
  // Ignored: a rotary_emb.inv_freq buffer, the bare names of a LlamaModel checkpoint.
  LoadEdited(model, [&](auto& s) {
    s["model.layers.0.self_attn.rotary_emb.inv_freq"] = {{1, 2}, {2}};
    s["layers.1.self_attn.q_proj.weight"] = s[q];
    s.erase(q);
  });

  TransformerConfig tied = SmallLlama();
  tied.tie_embeddings = true;
  Transformer tied_model(tied, 2);
  LoadEdited(tied_model, [](auto& s) { s["lm_head.weight"] = s["model.embed_tokens.weight"]; });  // equal: accepted
  ExpectInvalidArgument(
      [&] {
        LoadEdited(tied_model, [](auto& s) {
          s["lm_head.weight"] = s["model.embed_tokens.weight"];
          s["lm_head.weight"].data[3] += 1.0f;
        });
      },
      {"lm_head.weight"});
  // GPT-2: the transformer. prefix and the attention buffers are accepted.
  Transformer gpt2(SmallGpt2(), 3);
  LoadEdited(gpt2, [](auto& s) {
    std::map<std::string, attnlab::Tensor> prefixed;
    for (auto& [name, t] : s) prefixed["transformer." + name] = t;
    prefixed["transformer.h.0.attn.masked_bias"] = {{-1e4f}, {}};
    s = prefixed;
  });
}

TEST_CASE("transformer validation: tokens, masks, layers and caches are checked; the model keeps working",
          "[model][validation]") {
  Transformer model(SmallLlama(), 4);
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  const std::vector<int32_t> bad_ids = {1, 11, 3, 4};
  attnlab::TransformerForwardOptions none;
  ExpectInvalidArgument([&] { model.Forward({bad_ids.data(), {1, 4}}); }, {"tokens"});
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {4}}); }, {"tokens"});
  const std::vector<int32_t> long_ids(9, 1);
  ExpectInvalidArgument([&] { model.Forward({long_ids.data(), {1, 9}}); }, {"tokens"});
  const std::vector<uint8_t> mask(5, 1);
  attnlab::TransformerForwardOptions masked;
  masked.attention_mask = mask.data();
  masked.attention_mask_shape = {1, 5};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, masked); }, {"attentionMask"});
  const std::vector<float> head_mask(2, 1.0f);
  attnlab::TransformerForwardOptions heads;
  heads.head_mask = head_mask.data();
  heads.head_mask_shape = {1, 2};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, heads); }, {"headMask"});
  attnlab::TransformerForwardOptions layers;
  layers.output_attentions = {2};
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, layers); }, {"outputAttentions"});

  ExpectInvalidArgument([&] { model.CreateKVCache(0, 4); }, {"batchSize"});
  ExpectInvalidArgument([&] { model.CreateKVCache(1, 9); }, {"maxLength"});
  attnlab::TransformerKVCache cache = model.CreateKVCache(1, 6);
  attnlab::TransformerForwardOptions cached;
  cached.cache = &cache;
  model.Forward({ids.data(), {1, 4}}, cached);
  ExpectInvalidArgument([&] { model.Forward({ids.data(), {1, 4}}, cached); }, {"tokens"});  // 4 + 4 > 6
  CHECK(cache.Length() == 4);  // (a refused step leaves the cache as it was)
  const std::vector<int32_t> two = {1, 2, 3, 4};
  ExpectInvalidArgument([&] { model.Forward({two.data(), {2, 2}}, cached); }, {"tokens"});  // batch 2, cache 1
  Transformer other(SmallLlama(), 5);
  ExpectInvalidArgument([&] { other.Forward({ids.data(), {1, 1}}, cached); }, {"kvCache"});

  const attnlab::TransformerOutput out = model.Forward({ids.data(), {1, 4}}, none);
  CHECK(out.logits.shape == attnlab::Shape{1, 4, 11});
}

}  // namespace
}  // namespace attnlab_test
