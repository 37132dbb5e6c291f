// Native vs committed native results: tests/consistency/native_cases.json (scripts/make_consistency_cases.sh) holds
// random SDPA / MHA cases with the outputs of the native build; tests/js/nan_policy.test.mjs checks both wasm
// variants against the same file. Here every Highway target must reproduce them within 1e-5, so that native,
// wasm-SIMD and wasm-scalar all agree.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"

namespace {

using nlohmann::json;

const std::string kCasesPath = ATTNLAB_FIXTURE_DIR "/../../consistency/native_cases.json";

float Num(const json& x) {
  if (x.is_string()) {
    const std::string s = x.get<std::string>();
    if (s == "NaN") return std::numeric_limits<float>::quiet_NaN();
    return s[0] == '-' ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  return x.get<float>();
}

struct T {
  std::vector<float> data;
  attnlab::Shape shape;
  attnlab::TensorView View() const { return {data.data(), shape}; }
};

T Tensor(const json& j) {
  T t;
  t.shape = j.at("shape").get<attnlab::Shape>();
  for (const json& x : j.at("data")) t.data.push_back(Num(x));
  return t;
}

struct M {
  bool is_bool = false;
  std::vector<uint8_t> b;
  std::vector<float> f;
  attnlab::Shape shape;
  attnlab::Mask View() const {
    return is_bool ? attnlab::Mask::Bool(b.data(), shape) : attnlab::Mask::Float(f.data(), shape);
  }
};

M MaskOf(const json& j) {
  M m;
  m.is_bool = j.at("kind") == "bool";
  m.shape = j.at("shape").get<attnlab::Shape>();
  for (const json& x : j.at("data")) {
    if (m.is_bool) {
      m.b.push_back(x.get<uint8_t>());
    } else {
      m.f.push_back(Num(x));
    }
  }
  return m;
}

// |a - e| <= 1e-5 (1 + |e|) everywhere; reports the first bad element.
void CheckClose(const std::string& what, const std::vector<float>& actual, const T& expected) {
  INFO(what);
  REQUIRE(actual.size() == expected.data.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected.data[i];
    if (!(std::fabs(a - e) <= 1e-5 * (1 + std::fabs(e)))) {
      INFO("element " << i << ": " << a << ", expected " << e);
      CHECK(false);
      return;
    }
  }
}

}  // namespace

TEST_CASE("consistency: every target reproduces tests/consistency/native_cases.json within 1e-5", "[consistency]") {
  std::ifstream in(kCasesPath);
  REQUIRE(in.good());
  const json doc = json::parse(in);
  const json& cases = doc.at("cases");
  REQUIRE(cases.size() >= 40);
  attnlab_test::ForEachTarget([&](const std::string& target) {
    for (size_t idx = 0; idx < cases.size(); ++idx) {
      const json& c = cases[idx];
      const std::string where = target + " case " + std::to_string(idx) + " (" + c.at("kind").get<std::string>() + ")";
      const json& o = c.at("options");
      const T q = Tensor(c.at("query")), k = Tensor(c.at("key")), v = Tensor(c.at("value"));
      attnlab::AttentionResult r;
      if (c.at("kind") == "sdpa") {
        attnlab::SdpaOptions so;
        so.is_causal = o.at("isCausal");
        so.need_weights = o.at("needWeights");
        if (o.contains("scale")) {
          so.has_scale = true;
          so.scale = Num(o.at("scale"));
        }
        M mask;
        if (o.contains("attnMask")) {
          mask = MaskOf(o.at("attnMask"));
          so.attn_mask = mask.View();
        }
        r = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), so);
      } else {
        const json& cfg = c.at("config");
        attnlab::MhaConfig mc;
        mc.embed_dim = cfg.at("embedDim");
        mc.num_heads = cfg.at("numHeads");
        mc.bias = cfg.at("bias");
        mc.add_bias_kv = cfg.at("addBiasKV");
        mc.add_zero_attn = cfg.at("addZeroAttn");
        mc.kdim = cfg.at("kdim");
        mc.vdim = cfg.at("vdim");
        mc.batch_first = cfg.at("batchFirst");
        attnlab::MultiHeadAttention mha(mc);
        std::map<std::string, T> params;
        std::map<std::string, attnlab::TensorView> dict;
        for (const auto& [name, t] : c.at("params").items()) params[name] = Tensor(t);
        for (const auto& [name, t] : params) dict[name] = t.View();
        mha.LoadStateDict(dict);
        attnlab::MhaForwardOptions fo;
        fo.need_weights = o.at("needWeights");
        fo.average_attn_weights = o.at("averageAttnWeights");
        M kpm, am;
        if (o.contains("keyPaddingMask")) {
          kpm = MaskOf(o.at("keyPaddingMask"));
          fo.key_padding_mask = kpm.View();
        }
        if (o.contains("attnMask")) {
          am = MaskOf(o.at("attnMask"));
          fo.attn_mask = am.View();
        }
        r = mha.Forward(q.View(), k.View(), v.View(), fo);
      }
      const T out = Tensor(c.at("output"));
      CHECK(r.output.shape == out.shape);
      CheckClose(where + ": output", r.output.data, out);
      if (c.contains("weights")) {
        const T w = Tensor(c.at("weights"));
        CHECK(r.weights.shape == w.shape);
        CheckClose(where + ": weights", r.weights.data, w);
      }
    }
  });
}
