// Every invalid argument throws std::invalid_argument whose message names the argument (snake_case) and says
// what was expected and what was got; afterwards the library (and the module) still works.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "reference.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::AttentionResult;
using attnlab::Mask;
using attnlab::MhaConfig;
using attnlab::MhaForwardOptions;
using attnlab::MultiHeadAttention;
using attnlab::SdpaOptions;
using attnlab::Tensor;
using attnlab::TensorView;
using StateDict = std::map<std::string, Tensor>;

// ---------------------------------------------------------------------------------------------------------
// SDPA

// Valid inputs: batch (2), Lq 3, Lk 5, dk 4, dv 6.
struct SdpaInputs {
  std::vector<float> query, key, value;
  std::vector<float> float_mask;
  std::vector<uint8_t> bool_mask;
  SdpaInputs() {
    Rng rng(42);
    query = RandomVector(rng, 2 * 3 * 4);
    key = RandomVector(rng, 2 * 5 * 4);
    value = RandomVector(rng, 2 * 5 * 6);
    float_mask = RandomVector(rng, 2 * 3 * 5);
    bool_mask.assign(2 * 3 * 5, 1);
  }
  TensorView Query() const { return {query.data(), {2, 3, 4}}; }
  TensorView Key() const { return {key.data(), {2, 5, 4}}; }
  TensorView Value() const { return {value.data(), {2, 5, 6}}; }
};

// A valid call after an error still matches the reference.
void CheckSdpaStillWorks(const SdpaInputs& in) {
  SdpaOptions options;
  options.attn_mask = Mask::Float(in.float_mask.data(), {3, 5});
  options.is_causal = true;
  const RefResult ref = ReferenceSdpa(in.Query(), in.Key(), in.Value(), options);
  const AttentionResult r = attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), options);
  CHECK(r.output.shape == ref.output_shape);
  CheckAllClose("output after an error", r.output.data, ref.output);
  CheckAllClose("weights after an error", r.weights.data, ref.weights);
}

template <class Fn>
void ExpectSdpaError(const SdpaInputs& in, const std::vector<std::string>& names, Fn&& fn) {
  ExpectInvalidArgument(fn, names);
  CheckSdpaStillWorks(in);
}

TEST_CASE("sdpa validation: query of rank < 2", "[validation][sdpa]") {
  SdpaInputs in;
  ExpectSdpaError(in, {"query"}, [&] {
    attnlab::ScaledDotProductAttention({in.query.data(), {4}}, in.Key(), in.Value());
  });
  ExpectSdpaError(in, {"query"}, [&] {
    attnlab::ScaledDotProductAttention({in.query.data(), {}}, in.Key(), in.Value());
  });
}

TEST_CASE("sdpa validation: key/value batch dims differ from query's", "[validation][sdpa]") {
  SdpaInputs in;
  // Batch sizes that could not even broadcast: (3) against the query's (2).
  std::vector<float> key3 = in.key, value3 = in.value;
  key3.resize(3 * 5 * 4, 0.5f);
  value3.resize(3 * 5 * 6, 0.5f);
  ExpectSdpaError(in, {"key"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), {key3.data(), {3, 5, 4}}, in.Value());
  });
  ExpectSdpaError(in, {"value"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), in.Key(), {value3.data(), {3, 5, 6}});
  });
}

TEST_CASE("sdpa validation: dk of key differs from query's", "[validation][sdpa]") {
  SdpaInputs in;
  ExpectSdpaError(in, {"key"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), {in.key.data(), {2, 10, 2}}, in.Value());
  });
}

TEST_CASE("sdpa validation: Lk of value differs from key's", "[validation][sdpa]") {
  SdpaInputs in;
  ExpectSdpaError(in, {"value", "key"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), in.Key(), {in.value.data(), {2, 4, 6}});
  });
}

TEST_CASE("sdpa validation: null data with a non-zero size", "[validation][sdpa]") {
  SdpaInputs in;
  ExpectSdpaError(in, {"query"}, [&] {
    attnlab::ScaledDotProductAttention({nullptr, {2, 3, 4}}, in.Key(), in.Value());
  });
  ExpectSdpaError(in, {"key"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), {nullptr, {2, 5, 4}}, in.Value());
  });
  ExpectSdpaError(in, {"value"}, [&] {
    attnlab::ScaledDotProductAttention(in.Query(), in.Key(), {nullptr, {2, 5, 6}});
  });
  SdpaOptions options;
  options.attn_mask = Mask::Float(nullptr, {3, 5});
  ExpectSdpaError(in, {"attn_mask"},
                  [&] { attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), options); });
}

TEST_CASE("sdpa validation: attn_mask of a wrong shape", "[validation][sdpa]") {
  SdpaInputs in;
  for (const Shape& shape : std::vector<Shape>{{3, 6}, {5, 3}, {15}, {3, 3, 5}, {2, 3, 6}, {2, 1, 3, 5}}) {
    INFO("attn_mask shape " << ShapeToString(shape));
    SdpaOptions options;
    std::vector<float> mask(static_cast<size_t>(NumElements(shape)), 0.0f);
    options.attn_mask = Mask::Float(mask.data(), shape);
    ExpectSdpaError(in, {"attn_mask"},
                    [&] { attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), options); });
  }
}

TEST_CASE("sdpa validation: bool attn_mask with null data", "[validation][sdpa]") {
  SdpaInputs in;
  SdpaOptions options;
  options.attn_mask = Mask::Bool(nullptr, {3, 5});
  ExpectSdpaError(in, {"attn_mask"},
                  [&] { attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), options); });
}

TEST_CASE("sdpa validation: non-finite scale", "[validation][sdpa]") {
  SdpaInputs in;
  for (float scale : {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf}) {
    INFO("scale " << scale);
    SdpaOptions options;
    options.has_scale = true;
    options.scale = scale;
    ExpectSdpaError(in, {"scale"},
                    [&] { attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), options); });
  }
}

TEST_CASE("sdpa validation: negative dimension", "[validation][sdpa]") {
  SdpaInputs in;
  ExpectSdpaError(in, {"query"}, [&] {
    attnlab::ScaledDotProductAttention({in.query.data(), {2, -3, 4}}, in.Key(), in.Value());
  });
}

// ---------------------------------------------------------------------------------------------------------
// MultiHeadAttention construction

MhaConfig ValidConfig() {
  MhaConfig c;
  c.embed_dim = 8;
  c.num_heads = 2;
  return c;
}

TEST_CASE("mha validation: embed_dim <= 0", "[validation][mha]") {
  for (int64_t e : {0, -8}) {
    MhaConfig c = ValidConfig();
    c.embed_dim = e;
    ExpectInvalidArgument([&] { MultiHeadAttention mha(c); }, {"embed_dim"});
  }
}

TEST_CASE("mha validation: num_heads <= 0", "[validation][mha]") {
  for (int64_t h : {0, -2}) {
    MhaConfig c = ValidConfig();
    c.num_heads = h;
    ExpectInvalidArgument([&] { MultiHeadAttention mha(c); }, {"num_heads"});
  }
}

TEST_CASE("mha validation: embed_dim not divisible by num_heads", "[validation][mha]") {
  MhaConfig c = ValidConfig();
  c.embed_dim = 10;
  c.num_heads = 4;
  ExpectInvalidArgument([&] { MultiHeadAttention mha(c); }, {"embed_dim", "num_heads"});
}

TEST_CASE("mha validation: kdim / vdim <= 0 (other than -1)", "[validation][mha]") {
  for (int64_t d : {0, -2}) {
    MhaConfig c = ValidConfig();
    c.kdim = d;
    ExpectInvalidArgument([&] { MultiHeadAttention mha(c); }, {"kdim"});
    c = ValidConfig();
    c.vdim = d;
    ExpectInvalidArgument([&] { MultiHeadAttention mha(c); }, {"vdim"});
  }
}

// ---------------------------------------------------------------------------------------------------------
// MultiHeadAttention::Forward and LoadStateDict

// A module (E 8, H 2, sequence first) with loaded random parameters, and valid inputs L 3, N 2, S 4.
struct MhaFixture {
  MhaConfig config = ValidConfig();
  MultiHeadAttention mha{ValidConfig(), 7};
  StateDict state;
  std::vector<float> query, key, value, big;
  std::vector<uint8_t> kpm;

  MhaFixture() {
    Rng rng(43);
    const int64_t e = 8;
    state["in_proj_weight"] = Tensor{RandomVector(rng, 3 * e * e, -0.5f, 0.5f), {3 * e, e}};
    state["in_proj_bias"] = Tensor{RandomVector(rng, 3 * e, -0.3f, 0.3f), {3 * e}};
    state["out_proj.weight"] = Tensor{RandomVector(rng, e * e, -0.5f, 0.5f), {e, e}};
    state["out_proj.bias"] = Tensor{RandomVector(rng, e, -0.3f, 0.3f), {e}};
    mha.LoadStateDict(Views(state));
    query = RandomVector(rng, 3 * 2 * e);
    key = RandomVector(rng, 4 * 2 * e);
    value = RandomVector(rng, 4 * 2 * e);
    big = RandomVector(rng, 1000);
    kpm = {0, 0, 1, 0, 0, 1, 1, 0};
  }
  static std::map<std::string, TensorView> Views(const StateDict& dict) {
    std::map<std::string, TensorView> views;
    for (const auto& entry : dict) views[entry.first] = TensorView{entry.second.data.data(), entry.second.shape};
    return views;
  }
  TensorView Query() const { return {query.data(), {3, 2, 8}}; }
  TensorView Key() const { return {key.data(), {4, 2, 8}}; }
  TensorView Value() const { return {value.data(), {4, 2, 8}}; }
  // Any shape, backed by enough random data.
  TensorView Any(const Shape& shape) const { return {big.data(), shape}; }

  // A valid forward still matches the reference, and the parameters are unchanged.
  void CheckStillWorks() {
    MhaForwardOptions options;
    options.key_padding_mask = Mask::Bool(kpm.data(), {2, 4});
    const RefResult ref = ReferenceMha(config, state, Query(), Key(), Value(), options);
    const AttentionResult r = mha.Forward(Query(), Key(), Value(), options);
    CHECK(r.output.shape == ref.output_shape);
    CheckAllClose("output after an error", r.output.data, ref.output);
    CheckAllClose("weights after an error", r.weights.data, ref.weights);
    const StateDict now = mha.StateDict();
    CHECK(now.size() == state.size());
    for (const auto& entry : state) {
      INFO("parameter " << entry.first);
      CHECK(now.count(entry.first) == 1);
      if (now.count(entry.first)) CHECK(BitIdentical(now.at(entry.first).data, entry.second.data));
    }
  }

  template <class Fn>
  void ExpectError(Fn&& fn, const std::vector<std::string>& names) {
    ExpectInvalidArgument(fn, names);
    CheckStillWorks();
  }
};

TEST_CASE("mha validation: query of the wrong rank or last dim != embed_dim", "[validation][mha]") {
  MhaFixture f;
  f.ExpectError([&] { f.mha.Forward(f.Any({3, 2, 7}), f.Key(), f.Value()); }, {"query"});
  f.ExpectError([&] { f.mha.Forward(f.Any({48}), f.Key(), f.Value()); }, {"query"});
  f.ExpectError([&] { f.mha.Forward(f.Any({1, 3, 2, 8}), f.Key(), f.Value()); }, {"query"});
  f.ExpectError([&] { f.mha.Forward({nullptr, {3, 2, 8}}, f.Key(), f.Value()); }, {"query"});
}

TEST_CASE("mha validation: key last dim != kdim, value last dim != vdim", "[validation][mha]") {
  MhaFixture f;
  f.ExpectError([&] { f.mha.Forward(f.Query(), f.Any({4, 2, 7}), f.Value()); }, {"key"});
  f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Any({4, 2, 9})); }, {"value"});
  f.ExpectError([&] { f.mha.Forward(f.Query(), {nullptr, {4, 2, 8}}, f.Value()); }, {"key"});
}

TEST_CASE("mha validation: key and value sequence lengths differ", "[validation][mha]") {
  MhaFixture f;
  f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Any({5, 2, 8})); }, {"value", "key"});
}

TEST_CASE("mha validation: batch size of key differs from query's", "[validation][mha]") {
  MhaFixture f;
  f.ExpectError([&] { f.mha.Forward(f.Query(), f.Any({4, 3, 8}), f.Any({4, 3, 8})); }, {"key"});
}

TEST_CASE("mha validation: unbatched query with batched key", "[validation][mha]") {
  MhaFixture f;
  f.ExpectError([&] { f.mha.Forward(f.Any({3, 8}), f.Key(), f.Value()); }, {"key"});
}

TEST_CASE("mha validation: key_padding_mask of a wrong shape or null data", "[validation][mha]") {
  MhaFixture f;
  std::vector<uint8_t> bools(100, 0);
  for (const Shape& shape : std::vector<Shape>{{2, 5}, {3, 4}, {4}, {8}, {2, 4, 1}}) {
    INFO("key_padding_mask shape " << ShapeToString(shape));
    MhaForwardOptions options;
    options.key_padding_mask = Mask::Bool(bools.data(), shape);
    f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Value(), options); }, {"key_padding_mask"});
  }
  MhaForwardOptions options;
  options.key_padding_mask = Mask::Bool(nullptr, {2, 4});
  f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Value(), options); }, {"key_padding_mask"});
}

TEST_CASE("mha validation: attn_mask of a wrong 2-D or 3-D shape", "[validation][mha]") {
  MhaFixture f;
  std::vector<float> floats(200, 0.0f);
  // Valid: (3, 4) and (N * H = 4, 3, 4).
  for (const Shape& shape : std::vector<Shape>{{3, 5}, {4, 4}, {12}, {4, 3, 5}, {4, 2, 4}, {1, 4, 3, 4}}) {
    INFO("attn_mask shape " << ShapeToString(shape));
    MhaForwardOptions options;
    options.attn_mask = Mask::Float(floats.data(), shape);
    f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Value(), options); }, {"attn_mask"});
  }
}

TEST_CASE("mha validation: 3-D attn_mask whose first dim != N * num_heads", "[validation][mha]") {
  MhaFixture f;
  std::vector<uint8_t> bools(200, 0);
  for (int64_t first : {1, 2, 3, 5, 8}) {
    INFO("attn_mask shape (" << first << ", 3, 4)");
    MhaForwardOptions options;
    options.attn_mask = Mask::Bool(bools.data(), {first, 3, 4});
    f.ExpectError([&] { f.mha.Forward(f.Query(), f.Key(), f.Value(), options); }, {"attn_mask"});
  }
}

TEST_CASE("mha validation: LoadStateDict with a missing entry", "[validation][mha][state]") {
  MhaFixture f;
  for (const std::string name : {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}) {
    INFO("missing " << name);
    StateDict bad = f.state;
    for (auto& entry : bad) {
      for (float& x : entry.second.data) x += 1.0f;  // a load that went through would be visible
    }
    bad.erase(name);
    f.ExpectError([&] { f.mha.LoadStateDict(MhaFixture::Views(bad)); }, {name});
  }
}

TEST_CASE("mha validation: LoadStateDict with an unknown entry", "[validation][mha][state]") {
  MhaFixture f;
  std::vector<float> e_values(8, 0.5f);
  for (const std::string name : {"bias_k", "q_proj_weight", "out_proj.extra"}) {
    INFO("unknown " << name);
    StateDict bad = f.state;
    for (auto& entry : bad) {
      for (float& x : entry.second.data) x += 1.0f;
    }
    bad[name] = name == "bias_k" ? Tensor{e_values, {1, 1, 8}} : Tensor{std::vector<float>(64, 0.5f), {8, 8}};
    f.ExpectError([&] { f.mha.LoadStateDict(MhaFixture::Views(bad)); }, {name});
  }
}

TEST_CASE("mha validation: LoadStateDict with a wrong shape or null data", "[validation][mha][state]") {
  MhaFixture f;
  struct Bad {
    std::string name;
    Shape shape;
  };
  for (const Bad& b : std::vector<Bad>{{"in_proj_weight", {24, 9}},
                                       {"in_proj_weight", {192}},
                                       {"in_proj_bias", {8}},
                                       {"out_proj.weight", {8, 8, 1}},
                                       {"out_proj.bias", {1, 8}}}) {
    INFO(b.name << " with shape " << ShapeToString(b.shape));
    StateDict bad = f.state;
    for (auto& entry : bad) {
      for (float& x : entry.second.data) x += 1.0f;
    }
    bad[b.name] = Tensor{std::vector<float>(static_cast<size_t>(NumElements(b.shape)), 0.5f), b.shape};
    f.ExpectError([&] { f.mha.LoadStateDict(MhaFixture::Views(bad)); }, {b.name});
  }
  auto views = MhaFixture::Views(f.state);
  views["out_proj.weight"].data = nullptr;
  f.ExpectError([&] { f.mha.LoadStateDict(views); }, {"out_proj.weight"});

  // bias_k of a module with add_bias_kv must be (1, 1, E).
  MhaConfig config = ValidConfig();
  config.add_bias_kv = true;
  MultiHeadAttention with_bias_kv(config);
  StateDict state = with_bias_kv.StateDict();
  state["bias_k"] = Tensor{std::vector<float>(8, 0.5f), {8}};
  std::map<std::string, TensorView> bias_k_views;
  for (const auto& entry : state) bias_k_views[entry.first] = TensorView{entry.second.data.data(), entry.second.shape};
  ExpectInvalidArgument([&] { with_bias_kv.LoadStateDict(bias_k_views); }, {"bias_k"});
}

}  // namespace
}  // namespace attnlab_test
