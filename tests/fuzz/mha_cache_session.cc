// The MultiHeadAttention decoding session (an operation of ext MHA inputs, session.h): CreateKVCache against its
// rules (no add_bias_kv / add_zero_attn, positive batch_size and max_length), then 1-4 Forward steps of 0-2 new
// tokens each through the cache. Checked: the model of each step (the batch size of the cache, key and value with
// query's tokens, at most max_length cached; a rejected step appends nothing), cache.length(), the shapes, and,
// when every token and parameter is tame, each step's output and weights equal the rows of one causal Forward over
// all tokens so far (attn_mask: true above the diagonal). Then Reset() empties the cache.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/oracle.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

void Session::MhaCache(attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim, int64_t vdim) {
  const uint8_t cb = r_.U8();
  const int64_t n = (cb & 1) ? BatchDim(r_) : 1 + (cb >> 1) % 2;
  const int64_t max_len = Dim(r_);
  const int steps = 1 + (cb >> 2) % 4;
  const bool need_weights = !(cb & 16), average = !(cb & 32), wrong_batch = (cb & 192) == 192;
  case_ += "KV cache: batch_size " + std::to_string(n) + ", max_length " + std::to_string(max_len) + ", " +
           std::to_string(steps) + " steps, need_weights " + std::to_string(need_weights) + ", average " +
           std::to_string(average) + (wrong_batch ? ", a step with another batch size" : "");
  const int64_t e = c.embed_dim, h = c.num_heads, hkv = c.num_kv_heads == -1 ? h : c.num_kv_heads;
  const bool valid = !c.add_bias_kv && !c.add_zero_attn && n > 0 && max_len > 0;
  // A legitimately big cache (valid, but more memory than the fuzzer allows itself): not created.
  if (valid && static_cast<double>(n) * static_cast<double>(max_len) * static_cast<double>(e / h * hkv) > 1 << 14)
    return;
  attnlab::KVCache cache;
  if (!Invoke("CreateKVCache", valid, [&] { cache = mha.CreateKVCache(n, max_len); })) return;
  if (cache.length() != 0 || cache.batch_size() != n || cache.max_length() != max_len) {
    return Finding("a new KV cache has length " + std::to_string(cache.length()) + ", batch_size " +
                   std::to_string(cache.batch_size()) + ", max_length " + std::to_string(max_len));
  }
  // Every token of the session, (n, T, ·) batch-first in the fuzzer's buffers.
  std::vector<int64_t> lens;
  for (int s = 0; s < steps; ++s) lens.push_back(r_.U8() % 3);
  int64_t total = 0;
  for (int64_t l : lens) total += l;
  std::vector<float> xq(static_cast<size_t>(n * total * e)), xk(static_cast<size_t>(n * total * kdim)),
      xv(static_cast<size_t>(n * total * vdim));
  // Tolerances from bounds: |projection| <= P = max|x| · max(E, kdim, vdim) · max|w| + max|w|, |logit| <= hd P² ·
  // scale, its float32 error δ ≈ kEps (E + kdim + vdim + hd + 10) |logit| (compared only when δ <= 1e-2).
  double max_x = 0, max_w = 0;
  bool finite = true;
  for (std::vector<float>* x : {&xq, &xk, &xv}) {
    for (float& f : *x) {
      f = Value(r_);
      finite = finite && std::isfinite(f);
      max_x = std::max(max_x, std::fabs(static_cast<double>(f)));
    }
  }
  for (const auto& [name, t] : mha.StateDict()) {
    for (float f : t.data) {
      finite = finite && std::isfinite(f);
      max_w = std::max(max_w, std::fabs(static_cast<double>(f)));
    }
  }
  const double hd = static_cast<double>(e / h), feats = static_cast<double>(std::max({e, kdim, vdim}));
  const double proj = max_x * feats * max_w + max_w, logit = hd * proj * proj / std::sqrt(hd);
  const double delta = kEps * (static_cast<double>(e + kdim + vdim) + hd + 10) * logit;
  const bool tame = finite && delta <= 1e-2;
  const double tol_w = 1e-5 + 4 * delta,
               tol_o = (1e-4 + 4 * delta) * (1 + static_cast<double>(e) * max_w * proj + max_w);
  // Tokens [t0, t0 + len) of `x` (features f) in the module's layout, for `items` items.
  auto layout = [&](const std::vector<float>& x, int64_t f, int64_t t0, int64_t len, int64_t items) {
    std::vector<float> out(static_cast<size_t>(items * len * f));
    for (int64_t b = 0; b < items; ++b) {
      for (int64_t t = 0; t < len; ++t) {
        const int64_t src = (b % n) * total + t0 + t, dst = c.batch_first ? b * len + t : t * items + b;
        std::copy_n(x.begin() + src * f, f, out.begin() + dst * f);
      }
    }
    return out;
  };
  auto shape = [&](int64_t len, int64_t items, int64_t f) {
    return c.batch_first ? Shape{items, len, f} : Shape{len, items, f};
  };
  int64_t t0 = 0;
  for (int s = 0; s < steps && !Failed(); ++s) {
    const int64_t len = lens[static_cast<size_t>(s)];
    const int64_t items = wrong_batch && s == steps - 1 ? n + 1 : n;
    const std::vector<float> q = layout(xq, e, t0, len, items), k = layout(xk, kdim, t0, len, items),
                             v = layout(xv, vdim, t0, len, items);
    attnlab::MhaForwardOptions o;
    o.kv_cache = &cache;
    o.need_weights = need_weights;
    o.average_attn_weights = average;
    const bool step_valid = items == n && t0 + len <= max_len;
    case_ +=
        "; step " + std::to_string(s) + ": " + std::to_string(len) + " tokens of " + std::to_string(items) + " items";
    attnlab::AttentionResult res;
    if (!Invoke("Forward (kv_cache)", step_valid, [&] {
          res = mha.Forward({q.data(), shape(len, items, e)}, {k.data(), shape(len, items, kdim)},
                            {v.data(), shape(len, items, vdim)}, o);
        })) {
      if (!Failed() && cache.length() != t0) Finding("a rejected step changed the cache length");
      return;
    }
    const int64_t t1 = t0 + len;
    if (cache.length() != t1) {
      return Finding("cache.length() = " + std::to_string(cache.length()) + " after a step, expected " +
                     std::to_string(t1));
    }
    const Shape w_shape = average ? Shape{n, len, t1} : Shape{n, h, len, t1};
    if (res.output.shape != shape(len, n, e) ||
        (need_weights ? res.weights.shape != w_shape : !res.weights.data.empty())) {
      return Finding("step output/weights shapes " + ShapeStr(res.output.shape) + " / " + ShapeStr(res.weights.shape));
    }
    if (tame && len > 0) {
      // The same rows of one causal Forward over tokens [0, t1).
      const std::vector<float> fq = layout(xq, e, 0, t1, n), fk = layout(xk, kdim, 0, t1, n),
                               fv = layout(xv, vdim, 0, t1, n);
      std::vector<uint8_t> causal(static_cast<size_t>(t1 * t1), 0);
      for (int64_t i = 0; i < t1; ++i) {
        for (int64_t j = i + 1; j < t1; ++j) causal[static_cast<size_t>(i * t1 + j)] = 1;
      }
      attnlab::MhaForwardOptions fo;
      fo.need_weights = need_weights;
      fo.average_attn_weights = average;
      fo.attn_mask = Mask::Bool(causal.data(), {t1, t1});
      const attnlab::AttentionResult full = mha.Forward({fq.data(), shape(t1, n, e)}, {fk.data(), shape(t1, n, kdim)},
                                                        {fv.data(), shape(t1, n, vdim)}, fo);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t i = 0; i < len; ++i) {
          const int64_t got = c.batch_first ? b * len + i : i * n + b,
                        want = c.batch_first ? b * t1 + t0 + i : (t0 + i) * n + b;
          for (int64_t f = 0; f < e; ++f) {
            const float x = res.output.data[static_cast<size_t>(got * e + f)],
                        y = full.output.data[static_cast<size_t>(want * e + f)];
            if (!(std::fabs(x - y) <= tol_o)) {
              std::ostringstream os;
              os << "KV cache step " << s << ", item " << b << ", token " << t0 + i << ": output[" << f
                 << "] = " << FloatStr(x) << ", but one causal Forward over all tokens gives " << FloatStr(y);
              return Finding(os.str());
            }
          }
          if (!need_weights) continue;
          const int64_t planes = average ? 1 : h;
          for (int64_t hh = 0; hh < planes; ++hh) {
            for (int64_t j = 0; j < t1; ++j) {
              const float x = res.weights.data[static_cast<size_t>(((b * planes + hh) * len + i) * t1 + j)],
                          y = full.weights.data[static_cast<size_t>(((b * planes + hh) * t1 + t0 + i) * t1 + j)];
              if (!(std::fabs(x - y) <= tol_w)) {
                std::ostringstream os;
                os << "KV cache step " << s << ", item " << b << ", token " << t0 + i << ", head plane " << hh
                   << ": weight[" << j << "] = " << FloatStr(x) << ", causal Forward " << FloatStr(y);
                return Finding(os.str());
              }
            }
          }
        }
      }
    }
    t0 = t1;
  }
  if (Failed()) return;
  cache.Reset();
  if (cache.length() != 0) Finding("cache.length() after Reset() = " + std::to_string(cache.length()));
}

}  // namespace attnlab_fuzz
