// Writes tests/consistency/native_cases.json: deterministic random SDPA and MultiHeadAttention cases (every
// option, masks with -inf, tile-crossing lengths) with the NATIVE build's outputs. tests/js/nan_policy.test.mjs
// checks that both wasm variants agree with them within 1e-5; tests/cpp/consistency_test.cc checks that the native
// build (every Highway target) still does. Regenerate with scripts/make_consistency_cases.sh after a deliberate
// numerical change.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/rng.h"

namespace {

using attnlab::Shape;

class Rng : public attnlab::Rng {  // the library's SplitMix64, with this generator's draws
 public:
  using attnlab::Rng::Rng;
  double U() { return Uniform01(); }
  int Int(int lo, int hi) { return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool Bool(double p = 0.5) { return U() < p; }
  std::vector<float> Floats(size_t n, double lo = -1, double hi = 1) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(lo + (hi - lo) * U());
    return v;
  }
};

size_t Numel(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

std::string Num(float x) {
  if (std::isnan(x)) return "\"NaN\"";
  if (std::isinf(x)) return x > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

std::string ShapeJson(const Shape& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

std::string TensorJson(const std::vector<float>& data, const Shape& shape) {
  std::string o = "{\"shape\":" + ShapeJson(shape) + ",\"data\":[";
  for (size_t i = 0; i < data.size(); ++i) o += (i ? "," : "") + Num(data[i]);
  return o + "]}";
}

struct OwnedMask {
  bool is_bool = false;
  std::vector<uint8_t> b;
  std::vector<float> f;
  Shape shape;
  attnlab::Mask View() const {
    return is_bool ? attnlab::Mask::Bool(b.data(), shape) : attnlab::Mask::Float(f.data(), shape);
  }
  std::string Json() const {
    std::string o =
        std::string("{\"kind\":\"") + (is_bool ? "bool" : "float") + "\",\"shape\":" + ShapeJson(shape) + ",\"data\":[";
    const size_t n = Numel(shape);
    for (size_t i = 0; i < n; ++i) o += (i ? "," : "") + (is_bool ? std::to_string(b[i]) : Num(f[i]));
    return o + "]}";
  }
};

OwnedMask RandomMask(Rng& rng, const Shape& shape, double p_masked) {
  OwnedMask m;
  m.is_bool = rng.Bool();
  m.shape = shape;
  const size_t n = Numel(shape);
  if (m.is_bool) {
    m.b.resize(n);
    for (auto& x : m.b) x = rng.Bool(p_masked) ? 1 : 0;  // meaning depends on the call; flipped for SDPA below
  } else {
    m.f.resize(n);
    for (auto& x : m.f)
      x = rng.Bool(p_masked) ? -std::numeric_limits<float>::infinity() : static_cast<float>(rng.U() - 0.5);
  }
  return m;
}

std::string SdpaCase(Rng& rng) {
  const int nb = rng.Int(0, 2);
  Shape batch;
  for (int i = 0; i < nb; ++i) batch.push_back(rng.Int(1, 3));
  auto dim = [&] {
    return rng.Bool(0.15) ? static_cast<int64_t>(rng.Bool() ? 17 : 33) : static_cast<int64_t>(rng.Int(1, 8));
  };
  const int64_t lq = dim(), lk = rng.Bool(0.1) ? 130 : dim(), dk = rng.Int(1, 8), dv = rng.Int(1, 8);
  Shape qs = batch, ks = batch, vs = batch;
  qs.insert(qs.end(), {lq, dk});
  ks.insert(ks.end(), {lk, dk});
  vs.insert(vs.end(), {lk, dv});
  const auto q = rng.Floats(Numel(qs)), k = rng.Floats(Numel(ks)), v = rng.Floats(Numel(vs));
  attnlab::SdpaOptions o;
  o.is_causal = rng.Bool(0.3);
  if (rng.Bool(0.3)) {
    o.has_scale = true;
    o.scale = static_cast<float>(rng.U() * 2 - 0.5);
  }
  o.need_weights = rng.Bool(0.7);
  OwnedMask mask;
  const bool use_mask = rng.Bool(0.5);
  if (use_mask) {
    Shape ms = batch;
    ms.insert(ms.end(), {lq, lk});
    mask = RandomMask(rng, rng.Bool() ? Shape{lq, lk} : ms, 0.25);
    if (mask.is_bool) {
      for (auto& x : mask.b) x = !x;  // SDPA: true = may attend
    }
    o.attn_mask = mask.View();
  }
  const auto r = attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, o);
  std::string j = "{\"kind\":\"sdpa\",\"query\":" + TensorJson(q, qs) + ",\"key\":" + TensorJson(k, ks) +
                  ",\"value\":" + TensorJson(v, vs) + ",\"options\":{\"isCausal\":" + (o.is_causal ? "true" : "false") +
                  ",\"needWeights\":" + (o.need_weights ? "true" : "false");
  if (o.has_scale) j += ",\"scale\":" + Num(o.scale);
  if (use_mask) j += ",\"attnMask\":" + mask.Json();
  j += "},\"output\":" + TensorJson(r.output.data, r.output.shape);
  if (o.need_weights) j += ",\"weights\":" + TensorJson(r.weights.data, r.weights.shape);
  return j + "}";
}

std::string MhaCase(Rng& rng) {
  attnlab::MhaConfig c;
  c.num_heads = rng.Int(1, 4);
  c.embed_dim = c.num_heads * rng.Int(1, 4);
  c.bias = rng.Bool(0.7);
  c.add_bias_kv = rng.Bool(0.3);
  c.add_zero_attn = rng.Bool(0.3);
  const bool custom_kdim = rng.Bool(0.3), custom_vdim = rng.Bool(0.3);
  if (custom_kdim) c.kdim = rng.Int(1, 9);
  if (custom_vdim) c.vdim = rng.Int(1, 9);
  c.batch_first = rng.Bool();
  attnlab::MultiHeadAttention mha(c, 1);
  std::map<std::string, std::vector<float>> params;
  std::map<std::string, attnlab::TensorView> dict;
  const auto shapes = mha.ParameterShapes();
  for (const auto& [name, shape] : shapes) params[name] = rng.Floats(Numel(shape), -0.7, 0.7);
  for (const auto& [name, shape] : shapes) dict[name] = attnlab::TensorView{params[name].data(), shape};
  mha.LoadStateDict(dict);
  const int64_t e = c.embed_dim, kdim = mha.config().kdim, vdim = mha.config().vdim;
  const bool batched = rng.Bool(0.8);
  const int64_t n = batched ? rng.Int(1, 3) : 1, l = rng.Bool(0.1) ? 17 : rng.Int(1, 6), s = rng.Int(1, 6);
  auto layout = [&](int64_t len, int64_t f) -> Shape {
    if (!batched) return {len, f};
    return c.batch_first ? Shape{n, len, f} : Shape{len, n, f};
  };
  const Shape qs = layout(l, e), ks = layout(s, kdim), vs = layout(s, vdim);
  const auto q = rng.Floats(Numel(qs)), k = rng.Floats(Numel(ks)), v = rng.Floats(Numel(vs));
  attnlab::MhaForwardOptions o;
  o.need_weights = rng.Bool(0.7);
  o.average_attn_weights = rng.Bool();
  OwnedMask kpm, am;
  const bool use_kpm = rng.Bool(0.4), use_am = rng.Bool(0.4);
  if (use_kpm) {
    kpm = RandomMask(rng, batched ? Shape{n, s} : Shape{s}, 0.25);
    o.key_padding_mask = kpm.View();
  }
  if (use_am) {
    am = RandomMask(rng, rng.Bool() ? Shape{l, s} : Shape{n * c.num_heads, l, s}, 0.25);
    o.attn_mask = am.View();
  }
  const auto r = mha.Forward({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, o);
  std::string j = "{\"kind\":\"mha\",\"config\":{\"embedDim\":" + std::to_string(e) +
                  ",\"numHeads\":" + std::to_string(c.num_heads) + ",\"bias\":" + (c.bias ? "true" : "false") +
                  ",\"addBiasKV\":" + (c.add_bias_kv ? "true" : "false") +
                  ",\"addZeroAttn\":" + (c.add_zero_attn ? "true" : "false") + ",\"kdim\":" + std::to_string(kdim) +
                  ",\"vdim\":" + std::to_string(vdim) + ",\"batchFirst\":" + (c.batch_first ? "true" : "false") +
                  "},\"params\":{";
  bool first = true;
  for (const auto& [name, shape] : shapes) {
    j += std::string(first ? "" : ",") + "\"" + name + "\":" + TensorJson(params[name], shape);
    first = false;
  }
  j += "},\"query\":" + TensorJson(q, qs) + ",\"key\":" + TensorJson(k, ks) + ",\"value\":" + TensorJson(v, vs) +
       ",\"options\":{\"needWeights\":" + (o.need_weights ? "true" : "false") +
       ",\"averageAttnWeights\":" + (o.average_attn_weights ? "true" : "false");
  if (use_kpm) j += ",\"keyPaddingMask\":" + kpm.Json();
  if (use_am) j += ",\"attnMask\":" + am.Json();
  j += "},\"output\":" + TensorJson(r.output.data, r.output.shape);
  if (o.need_weights) j += ",\"weights\":" + TensorJson(r.weights.data, r.weights.shape);
  return j + "}";
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "tests/consistency/native_cases.json";
  Rng rng(20240611);
  std::string out = std::string("{\"generator\":\"tests/consistency/make_native_cases.cc\",\"target\":\"") +
                    attnlab::ActiveTargetName() + "\",\"cases\":[\n";
  const int kSdpa = 40, kMha = 40;
  for (int i = 0; i < kSdpa + kMha; ++i) {
    out += (i ? ",\n" : "") + (i < kSdpa ? SdpaCase(rng) : MhaCase(rng));
  }
  out += "\n]}\n";
  FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    return 1;
  }
  std::fputs(out.c_str(), f);
  std::fclose(f);
  std::printf("wrote %d cases (native target %s) to %s\n", kSdpa + kMha, attnlab::ActiveTargetName(), path);
  return 0;
}
