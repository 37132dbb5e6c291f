// Grouped-query MultiHeadAttention (MhaConfig::num_kv_heads): forward against the double-precision reference on
// every Highway target, the state-dict names and shapes, num_kv_heads = num_heads identical to PyTorch's module,
// backward against the equivalent module with each key/value head repeated, and rejected head counts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "mha_cases.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

TEST_CASE("mha gqa: random configurations against the float64 reference on every target", "[mha][gqa]") {
  const std::vector<HeadCounts> heads = {{8, 2, 1},  {8, 4, 2},  {8, 4, 1}, {16, 8, 2},
                                         {12, 6, 3}, {24, 6, 2}, {6, 3, 1}};
  std::vector<MhaCase> cases;
  for (int i = 0; i < 40; ++i) {
    const MaskChoice attn = static_cast<MaskChoice>((i / 3) % 3);
    cases.push_back(RandomMhaCase(7000, i, heads, false, {1, 2, 5, 9}, i % 5 != 4, attn, (i / 9) % 2 == 1));
  }
  CheckCasesOnEveryTarget(cases);
}

TEST_CASE("mha gqa: state-dict names and shapes (separate projections, in_proj_bias of E + 2 Ekv)", "[mha][gqa]") {
  MhaConfig c;
  c.embed_dim = 16;
  c.num_heads = 8;
  c.num_kv_heads = 2;  // head_dim 2, Ekv 4
  c.add_bias_kv = true;
  MultiHeadAttention mha(c, 3);
  const NamedShapes expected = {{"q_proj_weight", {16, 16}},   {"k_proj_weight", {4, 16}}, {"v_proj_weight", {4, 16}},
                                {"in_proj_bias", {24}},        {"bias_k", {1, 1, 4}},      {"bias_v", {1, 1, 4}},
                                {"out_proj.weight", {16, 16}}, {"out_proj.bias", {16}}};
  CHECK(NamedShapesToString(mha.ParameterShapes()) == NamedShapesToString(expected));
  CHECK(mha.config().num_kv_heads == 2);
  // Round trip, bit for bit.
  Rng rng(4);
  const StateDict state = RandomStateDict(rng, c);
  mha.LoadStateDict(Views(state));
  for (const auto& [name, tensor] : mha.StateDict()) {
    INFO(name);
    CHECK(tensor.shape == state.at(name).shape);
    CHECK(BitIdentical(tensor.data, state.at(name).data));
  }
  // PyTorch's Xavier bound for k_proj_weight (Ekv, E): sqrt(6 / (Ekv + E)).
  const StateDict fresh = MultiHeadAttention(c, 9).StateDict();
  const double bound = std::sqrt(6.0 / (4 + 16));
  double largest = 0;
  for (float x : fresh.at("k_proj_weight").data) largest = std::max(largest, std::abs(double(x)));
  CHECK(largest <= bound);
  CHECK(largest > 0.7 * bound);
}

TEST_CASE("mha gqa: num_kv_heads = num_heads is PyTorch's module, bit for bit", "[mha][gqa]") {
  for (bool same_dims : {true, false}) {
    MhaConfig plain;
    plain.embed_dim = 12;
    plain.num_heads = 3;
    plain.batch_first = true;
    if (!same_dims) plain.kdim = 5;
    MhaConfig explicit_heads = plain;
    explicit_heads.num_kv_heads = 3;
    MultiHeadAttention a(plain, 11), b(explicit_heads, 11);
    CHECK(NamedShapesToString(a.ParameterShapes()) == NamedShapesToString(b.ParameterShapes()));
    CHECK(NamedShapesToString(a.ParameterShapes()) == NamedShapesToString(ExpectedParameterShapes(plain)));
    Rng rng(12);
    const MhaCase c = MakeCase(rng, plain, true, 2, 4, 6, MaskChoice::kBool, MaskChoice::kFloat, false);
    a.LoadStateDict(Views(c.state));
    b.LoadStateDict(Views(c.state));
    const AttentionResult ra = a.Forward(c.Query(), c.Key(), c.Value(), c.Options());
    const AttentionResult rb = b.Forward(c.Query(), c.Key(), c.Value(), c.Options());
    CHECK(BitIdentical(ra.output.data, rb.output.data));
    CHECK(BitIdentical(ra.weights.data, rb.weights.data));
  }
}

// The GQA module's parameters with each key/value head repeated for its group: an equivalent num_heads module.
StateDict Repeated(const StateDict& gqa, const MhaConfig& c) {
  const int64_t e = c.embed_dim, hd = e / c.num_heads, group = c.num_heads / c.num_kv_heads, ekv = KvDim(c);
  auto repeat_rows = [&](const std::vector<float>& w, int64_t cols) {  // (Ekv, cols) → (E, cols)
    std::vector<float> out;
    for (int64_t h = 0; h < c.num_heads; ++h) {
      const int64_t g = h / group;
      out.insert(out.end(), w.begin() + g * hd * cols, w.begin() + (g + 1) * hd * cols);
    }
    return out;
  };
  StateDict full;
  full["q_proj_weight"] = gqa.at("q_proj_weight");
  full["k_proj_weight"] = Tensor{repeat_rows(gqa.at("k_proj_weight").data, KDim(c)), {e, KDim(c)}};
  full["v_proj_weight"] = Tensor{repeat_rows(gqa.at("v_proj_weight").data, VDim(c)), {e, VDim(c)}};
  const std::vector<float>& b = gqa.at("in_proj_bias").data;
  std::vector<float> bias(b.begin(), b.begin() + e);
  for (int part = 0; part < 2; ++part) {
    const std::vector<float> kv(b.begin() + e + part * ekv, b.begin() + e + (part + 1) * ekv);
    const std::vector<float> rep = repeat_rows(kv, 1);
    bias.insert(bias.end(), rep.begin(), rep.end());
  }
  full["in_proj_bias"] = Tensor{bias, {3 * e}};
  full["out_proj.weight"] = gqa.at("out_proj.weight");
  full["out_proj.bias"] = gqa.at("out_proj.bias");
  return full;
}

TEST_CASE("mha gqa: backward equals the repeated-heads module's, summed over each group", "[mha][gqa][backward]") {
  MhaConfig c;
  c.embed_dim = 12;
  c.num_heads = 6;
  c.num_kv_heads = 2;
  c.kdim = 7;  // separate projections also in the full module
  c.vdim = 5;
  MhaConfig full_config = c;
  full_config.num_kv_heads = -1;
  Rng rng(21);
  const MhaCase gc = MakeCase(rng, c, true, 2, 5, 4, MaskChoice::kBool, MaskChoice::kNone, false);
  MultiHeadAttention gqa(c), full(full_config);
  gqa.LoadStateDict(Views(gc.state));
  const StateDict repeated = Repeated(gc.state, c);
  full.LoadStateDict(Views(repeated));
  MhaForwardOptions options = gc.Options();
  options.requires_grad = true;
  const AttentionResult rg = gqa.Forward(gc.Query(), gc.Key(), gc.Value(), options);
  const AttentionResult rf = full.Forward(gc.Query(), gc.Key(), gc.Value(), options);
  CheckAllClose("output", rg.output.data, ToDouble(rf.output.data), {1e-6, 1e-5});
  const std::vector<float> grad_out = RandomVector(rng, static_cast<int64_t>(rg.output.data.size()));
  const attnlab::MhaGradients gg = gqa.Backward({grad_out.data(), rg.output.shape});
  const attnlab::MhaGradients gf = full.Backward({grad_out.data(), rf.output.shape});
  const Tolerance tol{1e-5, 1e-4};
  CheckAllClose("grad_query", gg.grad_query.data, ToDouble(gf.grad_query.data), tol);
  CheckAllClose("grad_key", gg.grad_key.data, ToDouble(gf.grad_key.data), tol);
  CheckAllClose("grad_value", gg.grad_value.data, ToDouble(gf.grad_value.data), tol);
  CheckAllClose("grad q_proj_weight", gg.grad_params.at("q_proj_weight").data,
                ToDouble(gf.grad_params.at("q_proj_weight").data), tol);
  // A shared key/value row's gradient is the sum over its group's repeated rows.
  const int64_t hd = 2, group = 3;
  for (const char* name : {"k_proj_weight", "v_proj_weight"}) {
    const std::vector<float>& full_grad = gf.grad_params.at(name).data;
    const int64_t cols = static_cast<int64_t>(full_grad.size()) / c.embed_dim;
    std::vector<double> summed(static_cast<size_t>(KvDim(c) * cols), 0.0);
    for (int64_t h = 0; h < c.num_heads; ++h) {
      for (int64_t r = 0; r < hd * cols; ++r) summed[(h / group) * hd * cols + r] += full_grad[h * hd * cols + r];
    }
    CheckAllClose(name, gg.grad_params.at(name).data, summed, tol);
  }
}

TEST_CASE("mha gqa: num_kv_heads that do not divide num_heads are rejected by name", "[mha][gqa][validation]") {
  for (int64_t bad : {0LL, -2LL, 3LL, 16LL, 5LL}) {
    MhaConfig c;
    c.embed_dim = 16;
    c.num_heads = 8;
    c.num_kv_heads = bad;
    INFO("num_kv_heads " << bad);
    try {
      MultiHeadAttention mha(c);
      FAIL("expected std::invalid_argument");
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK(message.find("num_kv_heads") == 0);
      CHECK(message.find("divisor of num_heads = 8") != std::string::npos);
      CHECK(message.find("got " + std::to_string(bad)) != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace attnlab_test
