// The MultiHeadAttention session: construction, LoadStateDict (valid or broken dicts), Forward, StateDict, each
// against the model of torch.nn.MultiheadAttention's rules; Forward's rows are checked in mha_check.cc.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/oracle.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

namespace {

bool SameBits(const std::map<std::string, attnlab::Tensor>& a, const std::map<std::string, attnlab::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape || it->second.data.size() != t.data.size()) return false;
    if (!BitsEqual(t.data, it->second.data)) return false;
  }
  return true;
}

}  // namespace

void Session::RunMha(bool ext) {
  const uint8_t c1 = r_.U8(), c2 = r_.U8();
  attnlab::MhaConfig c;
  if (c1 < 240) {
    c.num_heads = 1 + c1 % 4;
    c.embed_dim = c.num_heads * (1 + (c1 / 4) % 4);
  } else {
    c.embed_dim = Dim(r_);
    c.num_heads = Dim(r_);
  }
  c.bias = !(c2 & 1);
  c.add_bias_kv = c2 & 2;
  c.add_zero_attn = c2 & 4;
  c.batch_first = c2 & 8;
  auto side_dim = [&]() -> int64_t {
    const uint8_t b = r_.U8();
    if (b < 224) return 1 + b % 8;
    switch (b % 8) {
      case 0:
        return -1;
      case 1:
        return 0;
      case 2:
        return -2;
      case 3:
        return c.embed_dim;
      default:
        return HostileDim(r_.U8());
    }
  };
  if (c2 & 16) c.kdim = side_dim();
  if (c2 & 32) c.vdim = side_dim();
  if (ext) {  // grouped-query heads: a divisor of num_heads (or -1), or a wrong count
    const uint8_t nk = r_.U8();
    if (nk < 224) {
      std::vector<int64_t> divisors{-1};
      for (int64_t d = 1; d <= c.num_heads && d <= 64; ++d) {
        if (c.num_heads % d == 0) divisors.push_back(d);
      }
      c.num_kv_heads = divisors[nk % divisors.size()];
    } else {
      const int64_t bad[4] = {0, -2, c.num_heads >= 0 && c.num_heads < 64 ? c.num_heads + 1 : 0, HostileDim(nk)};
      c.num_kv_heads = bad[nk % 4];
    }
  }
  const uint64_t seed = r_.U8();
  {
    std::ostringstream os;
    os << "MHA embed_dim " << c.embed_dim << ", num_heads " << c.num_heads << ", bias " << c.bias << ", add_bias_kv "
       << c.add_bias_kv << ", add_zero_attn " << c.add_zero_attn << ", kdim " << c.kdim << ", vdim " << c.vdim
       << ", batch_first " << c.batch_first << ", num_kv_heads " << c.num_kv_heads << ", seed " << seed;
    case_ = os.str();
  }
  const int64_t e = c.embed_dim, h = c.num_heads;
  const int64_t kdim = c.kdim == -1 ? e : c.kdim, vdim = c.vdim == -1 ? e : c.vdim;
  const int64_t hkv = c.num_kv_heads == -1 ? h : c.num_kv_heads;
  bool valid = e > 0 && h > 0 && e % h == 0 && (c.kdim == -1 || c.kdim > 0) && (c.vdim == -1 || c.vdim > 0) &&
               hkv > 0 && h % hkv == 0;
  valid = valid && ModelNumel({4, e, e}).ok && ModelNumel({e, kdim}).ok && ModelNumel({e, vdim}).ok;
  if (valid && static_cast<double>(e) * static_cast<double>(2 * e + kdim + vdim + 8) > 1e5) return;  // too big

  std::unique_ptr<attnlab::MultiHeadAttention> mha;
  if (!Invoke("MultiHeadAttention(config)", valid,
              [&] { mha = std::make_unique<attnlab::MultiHeadAttention>(c, seed); })) {
    return;
  }
  // Parameter names, order and shapes are PyTorch's.
  // Grouped-query heads: k/v projections of Ekv = num_kv_heads · head_dim outputs, never packed.
  std::vector<std::pair<std::string, Shape>> expected_shapes;
  const int64_t ekv = e / h * hkv;
  const bool packed = kdim == e && vdim == e && ekv == e;
  if (packed) {
    expected_shapes.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    expected_shapes.push_back({"q_proj_weight", {e, e}});
    expected_shapes.push_back({"k_proj_weight", {ekv, kdim}});
    expected_shapes.push_back({"v_proj_weight", {ekv, vdim}});
  }
  if (c.bias) expected_shapes.push_back({"in_proj_bias", {e + 2 * ekv}});
  if (c.add_bias_kv) {
    expected_shapes.push_back({"bias_k", {1, 1, ekv}});
    expected_shapes.push_back({"bias_v", {1, 1, ekv}});
  }
  expected_shapes.push_back({"out_proj.weight", {e, e}});
  if (c.bias) expected_shapes.push_back({"out_proj.bias", {e}});
  if (mha->ParameterShapes() != expected_shapes)
    return Finding("ParameterShapes() differs from PyTorch's names/shapes");
  if (mha->config().kdim != kdim || mha->config().vdim != vdim || mha->config().num_kv_heads != hkv) {
    return Finding("config() does not resolve kdim/vdim/num_kv_heads");
  }

  const int ops = 1 + r_.U8() % 3;
  const std::string base = case_;
  for (int op = 0; op < ops && !Failed(); ++op) {
    const uint8_t which = r_.U8();
    case_ = base + "; operation " + std::to_string(op) + ": ";
    if (which % 4 == 3) {
      MhaLoad(*mha, expected_shapes);
    } else if (ext && which % 4 == 2) {
      MhaCache(*mha, c, kdim, vdim);
    } else {
      MhaForward(*mha, c, kdim, vdim);
    }
  }
}

void Session::MhaLoad(attnlab::MultiHeadAttention& mha, const std::vector<std::pair<std::string, Shape>>& shapes) {
  const uint8_t variant = r_.U8() % 6;
  const size_t victim = r_.U8() % shapes.size();
  std::vector<std::pair<std::string, TensorBuf>> entries;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (variant == 1 && i == victim) continue;  // missing
    TensorBuf t;
    t.shape = shapes[i].second;
    if (variant == 3 && i == victim) {  // wrong shape
      Shape* s[1] = {&t.shape};
      const uint8_t how = r_.U8();
      if (how % 3 == 0 && !t.shape.empty()) {
        t.shape[r_.U8() % t.shape.size()] = Dim(r_);
      } else if (how % 3 == 1) {
        t.shape.push_back(1);
      } else {
        PerturbShapes(r_, s, 1);
        if (t.shape == shapes[i].second && !t.shape.empty()) t.shape.pop_back();
      }
    }
    if (variant == 4 && i == victim) t.null_ptr = true;
    entries.push_back({shapes[i].first, std::move(t)});
  }
  if (variant == 5) entries.clear();
  if (variant == 2) {
    static const char* kNames[] = {
        "in_proj_weight",  "q_proj_weight", "k_proj_weight",   "v_proj_weight", "in_proj_bias",
        "bias_k",          "bias_v",        "out_proj.weight", "out_proj.bias", "",
        "in_proj_weight ", "weight"};
    const std::string name = kNames[r_.U8() % 12];
    bool known = false;
    for (const auto& s : shapes) known = known || s.first == name;
    if (!known) {
      TensorBuf t;
      t.shape = {Dim(r_)};
      entries.push_back({name, std::move(t)});
    }
  }
  bool valid = true;
  std::map<std::string, attnlab::TensorView> dict;
  std::string desc = "LoadStateDict {";
  for (auto& [name, t] : entries) {
    t.Fill(r_);
    dict[name] = t.View();
    desc += "\"" + name + "\": " + DescribeTensor("", t) + "; ";
  }
  case_ += desc + "}";
  // The model: exactly the names of ParameterShapes with their shapes, data for every element.
  valid = dict.size() == shapes.size();
  for (const auto& [name, shape] : shapes) {
    bool found = false;
    for (const auto& [n2, t] : entries) {
      if (n2 == name) {
        found = true;
        valid = valid && t.shape == shape && t.ModelValid();
      }
    }
    valid = valid && found;
  }
  for (const auto& [name, t] : entries) {
    if (valid && !t.allocated) return;  // too big for the fuzzer to allocate (a legitimate, large module)
  }
  const auto before = mha.StateDict();
  const bool ok = Invoke("LoadStateDict", valid, [&] { mha.LoadStateDict(dict); });
  if (Failed()) return;
  const auto after = mha.StateDict();
  if (!ok) {
    if (!SameBits(before, after)) Finding("a rejected LoadStateDict changed the parameters");
    return;
  }
  std::map<std::string, attnlab::Tensor> loaded;
  for (const auto& [name, t] : entries) {
    loaded[name] = attnlab::Tensor{std::vector<float>(t.data.get(), t.data.get() + t.n()), t.shape};
  }
  if (!SameBits(loaded, after)) Finding("StateDict() after LoadStateDict differs from what was loaded");
}

void Session::MhaForward(attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim, int64_t vdim) {
  const uint8_t fb = r_.U8();
  const bool batched = !(fb & 1);
  attnlab::MhaForwardOptions o;
  o.need_weights = !(fb & 2);
  o.average_attn_weights = !(fb & 4);
  const int64_t n = batched ? BatchDim(r_) : 1, l = Dim(r_), s = Dim(r_);
  const int64_t e = c.embed_dim, h = c.num_heads;
  auto layout = [&](int64_t len, int64_t feat) -> Shape {
    if (!batched) return {len, feat};
    return c.batch_first ? Shape{n, len, feat} : Shape{len, n, feat};
  };
  TensorBuf q, k, v;
  q.shape = layout(l, e);
  k.shape = layout(s, kdim);
  v.shape = layout(s, vdim);
  Shape* shapes[3] = {&q.shape, &k.shape, &v.shape};
  PerturbShapes(r_, shapes, 3);
  MaskBuf kpm, am;
  DecodeMask(r_, kpm, {batched ? Shape{n, s} : Shape{s}});
  // N * num_heads wraps (defined, unsigned) for hostile N: then the shape is simply a wrong one.
  const int64_t nh = static_cast<int64_t>(static_cast<uint64_t>(n) * static_cast<uint64_t>(h));
  DecodeMask(r_, am, {Shape{l, s}, Shape{nh, l, s}});
  uint8_t nulls = 0;
  if (fb & 8) nulls = r_.U8();
  FillInputs(nulls, {&q, &k, &v}, {&kpm, &am});
  {
    std::ostringstream os;
    os << "Forward " << DescribeTensor("query", q) << "; " << DescribeTensor("key", k) << "; "
       << DescribeTensor("value", v) << "; key_padding_mask " << kpm.Describe() << "; attn_mask " << am.Describe()
       << "; need_weights " << o.need_weights << "; average_attn_weights " << o.average_attn_weights;
    case_ += os.str();
  }

  // The model (torch.nn.MultiheadAttention's shape rules).
  const size_t rank = q.shape.size();
  bool valid = (rank == 2 || rank == 3) && k.shape.size() == rank && v.shape.size() == rank && q.ModelValid() &&
               k.ModelValid() && v.ModelValid() && kpm.ModelValid() && am.ModelValid();
  int64_t N = 0, L = 0, S = 0, s_all = 0;
  Shape w_shape;
  if (valid) {
    const bool bt = rank == 3;
    auto seq = [&](const Shape& t) { return !bt ? t[0] : c.batch_first ? t[1] : t[0]; };
    auto bsz = [&](const Shape& t) { return !bt ? int64_t{1} : c.batch_first ? t[0] : t[1]; };
    N = bsz(q.shape);
    L = seq(q.shape);
    S = seq(k.shape);
    valid = bsz(k.shape) == N && bsz(v.shape) == N && seq(v.shape) == S && q.shape.back() == e &&
            k.shape.back() == kdim && v.shape.back() == vdim;
    if (valid && kpm.kind != Mask::Kind::kNone) valid = kpm.shape == (bt ? Shape{N, S} : Shape{S});
    if (valid && am.kind != Mask::Kind::kNone) {
      const __int128 nh = static_cast<__int128>(N) * h;
      valid = am.shape == Shape{L, S} || (am.shape.size() == 3 && static_cast<__int128>(am.shape[0]) == nh &&
                                          am.shape[1] == L && am.shape[2] == S);
    }
    s_all = S + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
    if (valid) {
      w_shape = o.average_attn_weights ? Shape{N, L, s_all} : Shape{N, h, L, s_all};
      if (!bt) w_shape.erase(w_shape.begin());
      valid = (!o.need_weights || ModelNumel(w_shape).ok) && ModelNumel({N, s_all, e}).ok;
    }
  }
  if (TooBigToAllocate({&q, &k, &v}) || (kpm.kind != Mask::Kind::kNone && kpm.numel.ok && !kpm.allocated) ||
      (am.kind != Mask::Kind::kNone && am.numel.ok && !am.allocated)) {
    return;  // see RunSdpa
  }
  if (valid) {
    if (!q.allocated || !k.allocated || !v.allocated || (kpm.kind != Mask::Kind::kNone && !kpm.allocated) ||
        (am.kind != Mask::Kind::kNone && !am.allocated)) {
      return;
    }
    const double nd = static_cast<double>(N), ld = static_cast<double>(L), sd = static_cast<double>(s_all),
                 ed = static_cast<double>(e);
    const double work = nd * (ld * ed * 2 * ed + sd * ed * static_cast<double>(kdim + vdim) + ld * sd * 2 * ed +
                              (o.need_weights ? ld * sd * static_cast<double>(h) * 16 : 0.0));
    if (work > kMaxWork) return;
  }
  attnlab::AttentionResult res;
  auto call = [&] {
    attnlab::MhaForwardOptions oo = o;
    oo.key_padding_mask = kpm.View();
    oo.attn_mask = am.View();
    return mha.Forward(q.View(), k.View(), v.View(), oo);
  };
  if (!Invoke("Forward", valid, [&] { res = call(); })) return;
  if (res.output.shape != q.shape || res.output.data.size() != q.numel.n) {
    return Finding("output shape " + ShapeStr(res.output.shape) + ", expected " + ShapeStr(q.shape));
  }
  if (o.need_weights ? (res.weights.shape != w_shape || res.weights.data.size() != ModelNumel(w_shape).n)
                     : (!res.weights.shape.empty() || !res.weights.data.empty())) {
    return Finding("weights shape " + ShapeStr(res.weights.shape) + ", expected " +
                   (o.need_weights ? ShapeStr(w_shape) : std::string("none")));
  }
  {
    const attnlab::AttentionResult again = call();
    if (!BitsEqual(again.output.data, res.output.data) || !BitsEqual(again.weights.data, res.weights.data)) {
      return Finding("a repeated Forward is not bit-identical");
    }
  }
  if (static_cast<double>(N) * static_cast<double>(std::max<int64_t>(L, 1)) > 1e5) return;  // see RunSdpa
  CheckMhaRows(mha, c, kdim, vdim, q, k, v, kpm, am, o, res, N, L, S, rank == 3);
}

}  // namespace attnlab_fuzz
