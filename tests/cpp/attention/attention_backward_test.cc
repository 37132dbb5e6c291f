// Mirrors cpp/src/attention/attention_backward-inl.h (SDPA and MHA backward): every PyTorch gradient fixture, and
// finite differences of the double-precision reference on random shapes and options, on every target.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "grad_fixture.h"
#include "hwy_targets.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::Mask;
using attnlab::TensorView;

// The SDPA options of a fixture config; `bool_mask` receives the inverted bool mask (fixtures: true = masked,
// attnlab SDPA: true = may attend).
attnlab::SdpaOptions SdpaOptionsOf(const GradFixture& f, std::vector<uint8_t>& bool_mask) {
  attnlab::SdpaOptions options;
  options.is_causal = f.config.at("is_causal").get<bool>();
  if (!f.config.at("scale_is_default").get<bool>()) {
    options.has_scale = true;
    options.scale = f.config.at("scale").get<float>();
  }
  const auto mask = f.inputs.find("attn_mask");
  if (mask != f.inputs.end()) {
    if (mask->second.is_bool) {
      bool_mask.clear();
      for (uint8_t b : mask->second.bools) bool_mask.push_back(b ? 0 : 1);
      options.attn_mask = Mask::Bool(bool_mask.data(), mask->second.shape);
    } else {
      options.attn_mask = Mask::Float(mask->second.values.data(), mask->second.shape);
    }
  }
  return options;
}

TEST_CASE("SDPA backward matches every PyTorch sdpa_grad fixture", "[backward][fixtures]") {
  const std::vector<std::string> paths = GradFixturePaths("sdpa_grad");
  REQUIRE(paths.size() >= 9);
  ForEachTarget([&](const std::string&) {
    for (const std::string& path : paths) {
      // A fully masked row: attnlab's zero convention has its own expected block.
      GradFixture f = LoadGradFixture(path);
      if (f.config.at("fully_masked_rows").size() > 0) f = LoadGradFixture(path, "outputs_zero_convention");
      INFO(f.name);
      std::vector<uint8_t> bool_mask;
      const attnlab::SdpaOptions options = SdpaOptionsOf(f, bool_mask);
      const TensorView q = f.inputs.at("query").View(), k = f.inputs.at("key").View(), v = f.inputs.at("value").View();
      const attnlab::AttentionResult forward = attnlab::ScaledDotProductAttention(q, k, v, options);
      CheckAllClose(f.name + " output", forward.output.data, f.outputs.at("output").values, f.tolerance);
      const attnlab::SdpaGradients g =
          attnlab::ScaledDotProductAttentionBackward(q, k, v, f.inputs.at("grad_output").View(), options);
      CheckAllClose(f.name + " grad_query", g.grad_query.data, f.outputs.at("grad_query").values, f.tolerance);
      CheckAllClose(f.name + " grad_key", g.grad_key.data, f.outputs.at("grad_key").values, f.tolerance);
      CheckAllClose(f.name + " grad_value", g.grad_value.data, f.outputs.at("grad_value").values, f.tolerance);
      CHECK(g.grad_query.shape == q.shape);
      CHECK(g.grad_key.shape == k.shape);
      CHECK(g.grad_value.shape == v.shape);
    }
  });
}

TEST_CASE("MHA backward matches every PyTorch mha_grad fixture", "[backward][fixtures]") {
  const std::vector<std::string> paths = GradFixturePaths("mha_grad");
  REQUIRE(paths.size() >= 10);
  ForEachTarget([&](const std::string&) {
    for (const std::string& path : paths) {
      const GradFixture f = LoadGradFixture(path);
      INFO(f.name);
      attnlab::MhaConfig config;
      config.embed_dim = f.config.at("embed_dim").get<int64_t>();
      config.num_heads = f.config.at("num_heads").get<int64_t>();
      config.bias = f.config.at("bias").get<bool>();
      config.add_bias_kv = f.config.at("add_bias_kv").get<bool>();
      config.add_zero_attn = f.config.at("add_zero_attn").get<bool>();
      config.kdim = f.config.at("kdim").get<int64_t>();
      config.vdim = f.config.at("vdim").get<int64_t>();
      config.batch_first = f.config.at("batch_first").get<bool>();
      attnlab::MultiHeadAttention mha(config);
      std::map<std::string, TensorView> state;
      for (const auto& [name, tensor] : f.params) state[name] = tensor.View();
      mha.LoadStateDict(state);

      attnlab::MhaForwardOptions options;
      options.need_weights = false;
      options.requires_grad = true;
      for (const auto& [name, mask] : {std::pair<const char*, Mask*>{"key_padding_mask", &options.key_padding_mask},
                                       {"attn_mask", &options.attn_mask}}) {
        const auto it = f.inputs.find(name);
        if (it == f.inputs.end()) continue;
        *mask = it->second.is_bool ? Mask::Bool(it->second.bools.data(), it->second.shape)
                                   : Mask::Float(it->second.values.data(), it->second.shape);
      }
      const attnlab::AttentionResult forward =
          mha.Forward(f.inputs.at("query").View(), f.inputs.at("key").View(), f.inputs.at("value").View(), options);
      CheckAllClose(f.name + " output", forward.output.data, f.outputs.at("output").values, f.tolerance);
      const attnlab::MhaGradients g = mha.Backward(f.inputs.at("grad_output").View());
      CheckAllClose(f.name + " grad_query", g.grad_query.data, f.outputs.at("grad_query").values, f.tolerance);
      CheckAllClose(f.name + " grad_key", g.grad_key.data, f.outputs.at("grad_key").values, f.tolerance);
      CheckAllClose(f.name + " grad_value", g.grad_value.data, f.outputs.at("grad_value").values, f.tolerance);
      const auto& expected_params = f.output_groups.at("grad_params");
      REQUIRE(g.grad_params.size() == expected_params.size());
      for (const auto& [name, expected] : expected_params) {
        INFO(name);
        REQUIRE(g.grad_params.count(name) == 1);
        CHECK(g.grad_params.at(name).shape == expected.shape);
        CheckAllClose(f.name + " " + name, g.grad_params.at(name).data, expected.values, f.tolerance);
      }
    }
  });
}

// d/dx of loss(x) by central differences on each element of x (in place; restored afterwards).
std::vector<double> NumericGradient(std::vector<float>& x, const std::function<double()>& loss) {
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float original = x[i];
    const float step = 1e-2f * std::max(1.0f, std::fabs(original));
    x[i] = original + step;
    const double up = loss();
    const float hi = x[i];
    x[i] = original - step;
    const double down = loss();
    grad[i] = (up - down) / (static_cast<double>(hi) - static_cast<double>(x[i]));
    x[i] = original;
  }
  return grad;
}

double Dot(const std::vector<double>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

TEST_CASE("SDPA backward agrees with finite differences of the double reference", "[backward]") {
  Rng rng(2024);
  struct Case {
    Shape batch;
    int64_t lq, lk, dk, dv;
    bool causal;
    int mask;  // 0 none, 1 bool, 2 float
  };
  const Case cases[] = {{{}, 3, 5, 4, 3, false, 0},
                        {{2}, 5, 5, 3, 6, true, 0},
                        {{2}, 4, 6, 5, 4, false, 1},
                        {{1, 2}, 6, 3, 8, 2, false, 2},
                        {{}, 9, 9, 17, 5, true, 1}};
  for (const Case& c : cases) {
    const Shape qs = Concat(c.batch, {c.lq, c.dk}), ks = Concat(c.batch, {c.lk, c.dk}),
                vs = Concat(c.batch, {c.lk, c.dv});
    std::vector<float> q = RandomVector(rng, NumElements(qs)), k = RandomVector(rng, NumElements(ks)),
                       v = RandomVector(rng, NumElements(vs)),
                       d_out = RandomVector(rng, NumElements(Concat(c.batch, {c.lq, c.dv})));
    OwnedMask mask;
    if (c.mask == 1) mask = RandomBoolMask(rng, {c.lq, c.lk}, 0.7);
    if (c.mask == 2) mask = RandomFloatMask(rng, Concat(c.batch, {c.lq, c.lk}), 0.2);
    attnlab::SdpaOptions options;
    options.is_causal = c.causal;
    options.attn_mask = mask.View();
    auto loss = [&] {
      return Dot(ReferenceSdpa({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, options).output, d_out);
    };
    const std::vector<double> num_q = NumericGradient(q, loss), num_k = NumericGradient(k, loss),
                              num_v = NumericGradient(v, loss);
    ForEachTarget([&](const std::string&) {
      INFO("batch " << ShapeToString(c.batch) << " lq " << c.lq << " lk " << c.lk << " dk " << c.dk << " dv " << c.dv
                    << " causal " << c.causal << " mask " << c.mask);
      const attnlab::SdpaGradients g = attnlab::ScaledDotProductAttentionBackward(
          {q.data(), qs}, {k.data(), ks}, {v.data(), vs}, {d_out.data(), Concat(c.batch, {c.lq, c.dv})}, options);
      const Tolerance tol{2e-3, 2e-3};
      CheckAllClose("grad_query", g.grad_query.data, num_q, tol);
      CheckAllClose("grad_key", g.grad_key.data, num_k, tol);
      CheckAllClose("grad_value", g.grad_value.data, num_v, tol);
    });
  }
}

TEST_CASE("MHA backward agrees with finite differences of the double reference", "[backward]") {
  Rng rng(77);
  struct Case {
    attnlab::MhaConfig config;
    int64_t n, l, s;  // n = 0: unbatched
    bool key_padding, attn_mask;
  };
  std::vector<Case> cases;
  {
    Case c;
    c.config.embed_dim = 8;
    c.config.num_heads = 2;
    c.config.batch_first = true;
    c.n = 2, c.l = 3, c.s = 4, c.key_padding = true, c.attn_mask = false;
    cases.push_back(c);
    c.config.batch_first = false;
    c.config.kdim = 5;
    c.config.vdim = 3;
    c.config.add_bias_kv = true;
    c.config.add_zero_attn = true;
    c.key_padding = false, c.attn_mask = true;
    cases.push_back(c);
    c.config.bias = false;
    c.config.add_bias_kv = false;
    c.n = 0;
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    const int64_t e = c.config.embed_dim;
    const int64_t kdim = c.config.kdim < 0 ? e : c.config.kdim, vdim = c.config.vdim < 0 ? e : c.config.vdim;
    auto shape = [&](int64_t len, int64_t dim) {
      return c.n == 0 ? Shape{len, dim} : c.config.batch_first ? Shape{c.n, len, dim} : Shape{len, c.n, dim};
    };
    const Shape qs = shape(c.l, e), ks = shape(c.s, kdim), vs = shape(c.s, vdim);
    std::vector<float> q = RandomVector(rng, NumElements(qs)), k = RandomVector(rng, NumElements(ks)),
                       v = RandomVector(rng, NumElements(vs)), d_out = RandomVector(rng, NumElements(qs));
    attnlab::MultiHeadAttention mha(c.config, 5);
    std::map<std::string, attnlab::Tensor> params = mha.StateDict();
    const int64_t batch = c.n == 0 ? 1 : c.n;
    OwnedMask kpm = RandomBoolMask(rng, c.n == 0 ? Shape{c.s} : Shape{batch, c.s}, 0.3);
    OwnedMask attn_mask = RandomFloatMask(rng, {c.l, c.s}, 0.2);
    attnlab::MhaForwardOptions options;
    options.need_weights = false;
    if (c.key_padding) options.key_padding_mask = kpm.View();
    if (c.attn_mask) options.attn_mask = attn_mask.View();
    auto loss = [&] {
      return Dot(ReferenceMha(c.config, params, {q.data(), qs}, {k.data(), ks}, {v.data(), vs}, options).output, d_out);
    };
    std::map<std::string, std::vector<double>> numeric;
    numeric["query"] = NumericGradient(q, loss);
    numeric["key"] = NumericGradient(k, loss);
    numeric["value"] = NumericGradient(v, loss);
    for (auto& [name, tensor] : params) numeric[name] = NumericGradient(tensor.data, loss);
    ForEachTarget([&](const std::string&) {
      INFO("embed_dim " << e << " kdim " << kdim << " vdim " << vdim << " n " << c.n << " batch_first "
                        << c.config.batch_first << " bias_kv " << c.config.add_bias_kv);
      attnlab::MhaForwardOptions grad_options = options;
      grad_options.requires_grad = true;
      mha.Forward({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, grad_options);
      const attnlab::MhaGradients g = mha.Backward({d_out.data(), qs});
      const Tolerance tol{2e-3, 2e-3};
      CheckAllClose("grad_query", g.grad_query.data, numeric["query"], tol);
      CheckAllClose("grad_key", g.grad_key.data, numeric["key"], tol);
      CheckAllClose("grad_value", g.grad_value.data, numeric["value"], tol);
      for (const auto& [name, tensor] : params) CheckAllClose(name, g.grad_params.at(name).data, numeric[name], tol);
    });
  }
}

TEST_CASE("MHA backward without a requires_grad forward is a state error", "[backward]") {
  attnlab::MhaConfig config;
  config.embed_dim = 4;
  config.num_heads = 2;
  attnlab::MultiHeadAttention mha(config);
  std::vector<float> x(2 * 4, 0.5f);
  CHECK_THROWS_AS(mha.Backward({x.data(), {2, 4}}), std::logic_error);
  attnlab::MhaForwardOptions options;
  options.requires_grad = true;
  mha.Forward({x.data(), {2, 4}}, {x.data(), {2, 4}}, {x.data(), {2, 4}}, options);
  try {
    mha.Backward({x.data(), {2, 3}});
    FAIL("no error for a wrongly shaped grad_output");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("grad_output") && Catch::Contains("expected") && Catch::Contains("got"));
  }
  CHECK(mha.Backward({x.data(), {2, 4}}).grad_query.data.size() == 8);
}

}  // namespace
}  // namespace attnlab_test
