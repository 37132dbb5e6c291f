// Mirrors cpp/src/model/types/t5.cc and T5's relative position bias (cpp/src/attention/relative_bias.h, the
// Toeplitz row bias of the attention kernels, block-inl.h's RelativeDiagonals): Hugging Face's bucket of every
// relative position on a grid (tests/fixtures/models/t5_buckets.json, from reference_t5.py); a long source and
// target (S 260, T 210: several key tiles of the online path, several query blocks of the exact one) against a
// float64 forward written here, on every target; a cache fed in chunks of 1, 2 and 4 tokens against a fixture's full
// forward; each bad config and checkpoint named. (The fixtures' logits, attentions, hidden states and greedy decoding
// run in seq2seq_test.cc with Marian's.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/attention/relative_bias.h"
#include "hwy_targets.h"
#include "nlohmann/json.hpp"
#include "seq2seq_fixture.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;
using attnlab::TransformerForwardOptions;
using Json = nlohmann::json;

TEST_CASE("t5: each relative position's bucket is Hugging Face's, both directions", "[model][seq2seq][t5]") {
  std::ifstream in(ATTNLAB_FIXTURE_DIR "/../models/t5_buckets.json");
  REQUIRE(in);
  const Json grid = Json::parse(in);
  const std::vector<int64_t> relative = grid.at("relative").get<std::vector<int64_t>>();
  REQUIRE(relative.size() == 601);
  REQUIRE(grid.at("cases").size() == 12);
  for (const Json& c : grid.at("cases")) {
    const int64_t buckets = c.at("buckets").get<int64_t>(), distance = c.at("max_distance").get<int64_t>();
    const bool bidirectional = c.at("bidirectional").get<bool>();
    const std::vector<int64_t> expected = c.at("bucket").get<std::vector<int64_t>>();
    INFO("buckets " << buckets << ", max distance " << distance << ", bidirectional " << bidirectional);
    size_t wrong = 0;
    for (size_t i = 0; i < relative.size(); ++i) {
      wrong += attnlab::RelativeBucket(relative[i], bidirectional, buckets, distance) != expected[i];
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("t5: a head's diagonal holds the bias of key j for query i at lq − 1 − i + j", "[model][seq2seq][t5]") {
  const size_t heads = 3, lq = 4, lk = 9, past = 5;
  const int64_t buckets = 8, distance = 6;
  std::vector<float> table(static_cast<size_t>(buckets) * heads);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i) * 0.5f - 3.0f;
  for (const bool bidirectional : {true, false}) {
    for (size_t h = 0; h < heads; ++h) {
      std::vector<float> diagonal(lq + lk - 1);
      attnlab::RelativeBiasDiagonal(table.data(), heads, h, buckets, distance, bidirectional, lq, lk, past,
                                    diagonal.data());
      for (size_t i = 0; i < lq; ++i) {
        for (size_t j = 0; j < lk; ++j) {
          const int64_t rel = static_cast<int64_t>(j) - static_cast<int64_t>(past + i);
          const size_t bucket = static_cast<size_t>(attnlab::RelativeBucket(rel, bidirectional, buckets, distance));
          CHECK(diagonal[lq - 1 - i + j] == table[bucket * heads + h]);
        }
      }
    }
  }
}

// ---- a float64 T5 forward of one item, written from modeling_t5.py's equations (batch 1, no padding) ----

using T5Weights64 = std::map<std::string, std::vector<double>>;

// y (rows, out) = x (rows, in) · Wᵀ, W (out, in).
std::vector<double> T5RefLinear(const std::vector<double>& x, size_t rows, const std::vector<double>& w, size_t in) {
  const size_t out = w.size() / in;
  std::vector<double> y(rows * out, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      for (size_t c = 0; c < in; ++c) y[r * out + o] += x[r * in + c] * w[o * in + c];
    }
  }
  return y;
}

std::vector<double> T5RefRmsNorm(const std::vector<double>& x, const std::vector<double>& w, double eps) {
  const size_t e = w.size();
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / e; ++r) {
    double ms = 0;
    for (size_t c = 0; c < e; ++c) ms += x[r * e + c] * x[r * e + c] / static_cast<double>(e);
    for (size_t c = 0; c < e; ++c) y[r * e + c] = w[c] * x[r * e + c] / std::sqrt(ms + eps);
  }
  return y;
}

// One T5Attention: queries from xq (tq rows), keys and values from xkv (tk rows), logits q·k (no scale) + the
// relative bias of `table` (null: none), causal or not; its output (tq, E).
struct T5RefAttention {
  const attnlab::TransformerConfig& c;
  const T5Weights64& w;
  std::vector<double> operator()(const std::string& pre, const std::vector<double>& xq, size_t tq,
                                 const std::vector<double>& xkv, size_t tk, const std::vector<double>* table,
                                 bool causal) const {
    const size_t e = static_cast<size_t>(c.embed_dim), hd = static_cast<size_t>(c.head_dim);
    const size_t heads = static_cast<size_t>(c.num_heads), inner = heads * hd;
    const std::vector<double> q = T5RefLinear(xq, tq, w.at(pre + "q.weight"), e),
                              k = T5RefLinear(xkv, tk, w.at(pre + "k.weight"), e),
                              v = T5RefLinear(xkv, tk, w.at(pre + "v.weight"), e);
    std::vector<double> ctx(tq * inner, 0.0);
    for (size_t h = 0; h < heads; ++h) {
      for (size_t i = 0; i < tq; ++i) {
        const size_t seen = causal ? i + 1 : tk;
        std::vector<double> s(seen);
        for (size_t j = 0; j < seen; ++j) {
          for (size_t d = 0; d < hd; ++d) s[j] += q[i * inner + h * hd + d] * k[j * inner + h * hd + d];
          const int64_t rel = static_cast<int64_t>(j) - static_cast<int64_t>(i);
          if (table) {
            s[j] += (*table)[static_cast<size_t>(
                                 attnlab::RelativeBucket(rel, !causal, c.relative_buckets, c.relative_max_distance)) *
                                 heads +
                             h];
          }
        }
        const double top = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - top));
        for (size_t j = 0; j < seen; ++j) {
          for (size_t d = 0; d < hd; ++d) ctx[i * inner + h * hd + d] += s[j] / sum * v[j * inner + h * hd + d];
        }
      }
    }
    return T5RefLinear(ctx, tq, w.at(pre + "o.weight"), inner);
  }
};

void T5RefAdd(std::vector<double>& x, const std::vector<double>& y) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

// wo(gelu_tanh(wi_0 h) · wi_1 h).
std::vector<double> T5RefGatedGelu(const std::string& pre, const std::vector<double>& h, size_t rows,
                                   const T5Weights64& w, size_t e) {
  std::vector<double> g = T5RefLinear(h, rows, w.at(pre + "wi_0.weight"), e);
  const std::vector<double> up = T5RefLinear(h, rows, w.at(pre + "wi_1.weight"), e);
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    g[i] = 0.5 * x * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x))) * up[i];
  }
  return T5RefLinear(g, rows, w.at(pre + "wo.weight"), up.size() / rows);
}

// A stack's last hidden state after its final norm (`memory`: the encoder's output, for the decoder's blocks).
std::vector<double> T5RefStack(const attnlab::TransformerConfig& c, const T5Weights64& w, const std::string& stack,
                               const std::vector<int32_t>& ids, const std::vector<double>* memory, size_t s_len) {
  const size_t e = static_cast<size_t>(c.embed_dim), t = ids.size();
  const bool decoder = memory != nullptr;
  std::vector<double> x(t * e);
  for (size_t r = 0; r < t; ++r) {
    std::copy_n(w.at("shared.weight").begin() + static_cast<ptrdiff_t>(ids[r] * e), e, x.begin() + r * e);
  }
  const std::vector<double>& table = w.at(stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  const T5RefAttention attend{c, w};
  const int64_t layers = decoder ? c.decoder_layers : c.num_layers;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string b = stack + ".block." + std::to_string(l) + ".layer.";
    std::vector<double> h = T5RefRmsNorm(x, w.at(b + "0.layer_norm.weight"), c.norm_eps);
    T5RefAdd(x, attend(b + "0.SelfAttention.", h, t, h, t, &table, decoder));
    if (decoder) {
      h = T5RefRmsNorm(x, w.at(b + "1.layer_norm.weight"), c.norm_eps);
      T5RefAdd(x, attend(b + "1.EncDecAttention.", h, t, *memory, s_len, nullptr, false));
    }
    const std::string ff = b + (decoder ? "2." : "1.");
    h = T5RefRmsNorm(x, w.at(ff + "layer_norm.weight"), c.norm_eps);
    T5RefAdd(x, T5RefGatedGelu(ff + "DenseReluDense.", h, t, w, e));
  }
  return T5RefRmsNorm(x, w.at(stack + ".final_layer_norm.weight"), c.norm_eps);
}

// Every parameter of `model` drawn (norms 1 ± 0.1, the relative biases ± 2, the rest ± 0.5) and loaded; the same
// values in float64.
T5Weights64 T5RandomWeights(Transformer& model, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  T5Weights64 w;
  for (const auto& shape : model.ParameterShapes()) {
    const std::string& name = shape.first;
    const bool norm = name.find("layer_norm") != std::string::npos;
    const float scale = norm ? 0.1f : name.find("relative_attention_bias") != std::string::npos ? 2.0f : 0.5f;
    std::vector<float> values(static_cast<size_t>(NumElements(shape.second)));
    for (float& v : values) v = (norm ? 1.0f : 0.0f) + scale * unit(rng);
    model.LoadTensor(name, attnlab::TensorView{values.data(), shape.second});
    w[name].assign(values.begin(), values.end());
  }
  return w;
}

TEST_CASE("t5: a long source and target (tiled and exact paths) match a float64 forward on every target",
          "[model][seq2seq][t5][attention]") {
  const attnlab::TransformerConfig c = attnlab::ConfigFromOptions(
      R"({"arch": "t5", "vocabSize": 16, "contextLength": 300, "embedDim": 8, "numLayers": 2, "decoderLayers": 2,
          "numHeads": 2, "headDim": 3, "hiddenDim": 10, "feedForwardProj": "gated-gelu", "relativeBuckets": 12,
          "relativeMaxDistance": 90, "task": "base"})");
  Transformer model(c, 1);
  const T5Weights64 w = T5RandomWeights(model, 33);
  const size_t s_len = 260, t_len = 210, e = 8;
  std::vector<int32_t> src(s_len), tgt(t_len);
  for (size_t i = 0; i < s_len; ++i) src[i] = static_cast<int32_t>((i * 7 + 3) % 16);
  for (size_t i = 0; i < t_len; ++i) tgt[i] = static_cast<int32_t>((i * 5 + 1) % 16);
  const std::vector<double> enc = T5RefStack(c, w, "encoder", src, nullptr, s_len);
  const std::vector<double> dec = T5RefStack(c, w, "decoder", tgt, &enc, s_len);
  const Tolerance tol{1e-4, 1e-3};
  ForEachTarget([&](const std::string&) {
    for (const bool weights : {false, true}) {  // (no weights kept: the online path; weights: the exact one)
      INFO("attention weights kept: " << weights);
      TransformerForwardOptions o;
      o.decoder_input_ids = tgt.data();
      o.decoder_input_ids_shape = {1, static_cast<int64_t>(t_len)};
      if (weights) o.output_attentions = {0, 1};
      const attnlab::TransformerOutput out = model.Forward({src.data(), {1, static_cast<int64_t>(s_len)}}, o);
      CheckAllClose("encoderLastHiddenState", out.encoder_last_hidden_state.data, enc, tol);
      CheckAllClose("lastHiddenState", out.last_hidden_state.data, dec, tol);
      REQUIRE(out.last_hidden_state.data.size() == t_len * e);
    }
  });
}

TEST_CASE("t5: a cache fed 1, 2 and 4 tokens at a time gives the full forward's logits", "[model][seq2seq][t5]") {
  const Seq2SeqFixture f = LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/t5_v10_f32");
  const Seq2SeqForwardCase& c = f.forward.at(0);  // (plain: B 2, S 9, T 7)
  REQUIRE(c.decoder_input_ids.shape == attnlab::Shape{2, 7});
  ForEachTarget([&](const std::string&) {
    Transformer model = LoadedCheckpoint(f.Config(), f.checkpoint, attnlab::WeightStorage::kFloat32);
    attnlab::TransformerKVCache cache = model.CreateKVCache(2, 7);
    TransformerForwardOptions o;
    o.cache = &cache;
    size_t done = 0;
    for (const size_t n : {size_t{1}, size_t{2}, size_t{4}}) {
      std::vector<int32_t> chunk;
      for (size_t b = 0; b < 2; ++b) {
        const auto row = c.decoder_input_ids.ints.begin() + static_cast<ptrdiff_t>(b * 7 + done);
        chunk.insert(chunk.end(), row, row + static_cast<ptrdiff_t>(n));
      }
      o.decoder_input_ids = chunk.data();
      o.decoder_input_ids_shape = {2, static_cast<int64_t>(n)};
      const attnlab::TransformerOutput out = model.Forward({c.input_ids.ints.data(), c.input_ids.shape}, o);
      const size_t v = static_cast<size_t>(f.Config().vocab_size);
      for (size_t b = 0; b < 2; ++b) {
        const auto got = out.logits.data.begin() + static_cast<ptrdiff_t>(b * n * v);
        const auto want = c.logits.tensor.values.begin() + static_cast<ptrdiff_t>((b * 7 + done) * v);
        CheckAllClose("logits of positions " + std::to_string(done) + "+", std::vector<float>(got, got + n * v),
                      std::vector<float>(want, want + n * v), f.tol);
      }
      done += n;
    }
    CHECK(cache.Length() == 7);
  });
}

// config.json of t5_v10_f32 with one key changed.
std::string T5ConfigWith(const std::string& key, const Json& value) {
  Json hf = Json::parse(LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/t5_v10_f32").config_json);
  hf[key] = value;
  return hf.dump();
}

TEST_CASE("t5: config.json values attnlab does not compute are named", "[model][seq2seq][t5][validation]") {
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("feed_forward_proj", "gated-silu")); },
                        {"config.feed_forward_proj"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("relative_attention_num_buckets", 2)); },
                        {"relativeBuckets"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("relative_attention_max_distance", 4)); },
                        {"relativeMaxDistance"});  // (8 buckets: the decoder's 4 exact ones reach distance 4)
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("decoder_start_token_id", 24)); },
                        {"decoderStartTokenId"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("num_decoder_layers", 0)); },
                        {"decoderLayers"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromHuggingFace(T5ConfigWith("d_kv", "8")); }, {"config.d_kv"});
  const std::string options =
      R"({"arch": "t5", "vocabSize": 8, "embedDim": 8, "numLayers": 1, "decoderLayers": 1, "numHeads": 2, )";
  ExpectInvalidArgument([&] { attnlab::ConfigFromOptions(options + R"("feedForwardProj": "swish"})"); },
                        {"feedForwardProj"});
  ExpectInvalidArgument([&] { attnlab::ConfigFromOptions(options + R"("task": "masked-lm"})"); }, {"task"});
  CHECK(attnlab::ConfigFromHuggingFace(T5ConfigWith("num_decoder_layers", nullptr)).decoder_layers == 2);
}

// LoadStateDict of t5_v10_f32 without tensor `name` (edit null), or with `edit` applied, must fail naming it.
void ExpectT5CheckpointRefused(const std::string& name, void (*edit)(std::vector<float>&)) {
  const Seq2SeqFixture f = LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/t5_v10_f32");
  Transformer model(f.Config(), 0, false);
  std::vector<float> edited;
  const std::map<std::string, attnlab::TensorView> state = EditedStateDict(f, name, edit, edited);
  INFO(name);
  ExpectInvalidArgument([&] { model.LoadStateDict(state); }, {name});
}

TEST_CASE("t5: a missing relative_attention_bias, final norm or projection, or a tied copy that differs, is named",
          "[model][seq2seq][t5][validation]") {
  for (const char* missing :
       {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", "encoder.final_layer_norm.weight",
        "decoder.block.1.layer.2.DenseReluDense.wi.weight", "decoder.block.1.layer.1.EncDecAttention.v.weight"}) {
    ExpectT5CheckpointRefused(missing, nullptr);
  }
  for (const char* tied : {"lm_head.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}) {
    ExpectT5CheckpointRefused(tied, [](std::vector<float>& v) { v[3] += 0.25f; });
  }
}

TEST_CASE("t5: a fresh model's parameters follow its config; the unused cross-attention bias is ignored",
          "[model][seq2seq][t5][types]") {
  const attnlab::TransformerConfig c = attnlab::ConfigFromOptions(
      R"({"arch": "t5", "vocabSize": 10, "embedDim": 8, "numLayers": 2, "decoderLayers": 1, "numHeads": 2,
          "headDim": 5, "hiddenDim": 6, "feedForwardProj": "gated-gelu", "relativeBuckets": 6,
          "relativeMaxDistance": 20, "tieEmbeddings": false})");
  CHECK(c.head_dim == 5);
  CHECK(c.task == attnlab::Task::kSeq2SeqLm);
  const Transformer model(c, 3);
  const auto shapes = model.ParameterShapes();
  // shared; each encoder block q, k, v, o, norm, wi_0, wi_1, wo, norm (block 0 also its bias), the final norm; the
  // decoder block the same with its bias and the cross-attention's q, k, v, o and norm; the final norm; lm_head.
  REQUIRE(shapes.size() == 1 + (10 + 9) + 1 + 15 + 1 + 1);
  CHECK(shapes.at(1).first == "encoder.block.0.layer.0.SelfAttention.q.weight");
  CHECK(shapes.at(1).second == attnlab::Shape{10, 8});  // (heads × d_kv, d_model)
  CHECK(shapes.at(5) ==
        std::make_pair(std::string("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"),
                       attnlab::Shape{6, 2}));
  CHECK(shapes.back() == std::make_pair(std::string("lm_head.weight"), attnlab::Shape{10, 8}));
  CHECK(model.TiedTo("decoder.embed_tokens.weight") == "shared.weight");
  CHECK(model.TiedTo("lm_head.weight").empty());
  CHECK(model.CanonicalName("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight").empty());
  const Json hf = Json::parse(attnlab::HuggingFaceConfigJson(c));
  CHECK(hf.at("model_type") == "t5");
  CHECK(hf.at("feed_forward_proj") == "gated-gelu");
  CHECK(attnlab::OptionsJson(attnlab::ConfigFromHuggingFace(hf.dump())) == attnlab::OptionsJson(c));
}

}  // namespace
}  // namespace attnlab_test
