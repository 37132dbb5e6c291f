// The NaN / Inf policy of ScaledDotProductAttention (nan_policy.h states it), on every Highway target and both
// attention paths.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "nan_policy.h"

namespace {

using namespace nan_policy_test;  // NOLINT(build/namespaces): the policy's helpers

// An SDPA problem (batch, lq, lk, d) with d = dk = dv, random data, optional float mask (batch, lq, lk).
struct Sdpa {
  size_t batch = 2, lq = 5, lk = 6, d = 3;
  std::vector<float> q, k, v, mask;
  bool causal = false;
  bool use_mask = false;

  Sdpa() : q(Values(batch * lq * d, 1)), k(Values(batch * lk * d, 2)), v(Values(batch * lk * d, 3)) {}
  void EnableMask() {
    use_mask = true;
    mask.assign(batch * lq * lk, 0.0f);
  }
  float& Q(size_t b, size_t i, size_t c) { return q[(b * lq + i) * d + c]; }
  float& K(size_t b, size_t j, size_t c) { return k[(b * lk + j) * d + c]; }
  float& V(size_t b, size_t j, size_t c) { return v[(b * lk + j) * d + c]; }
  float& M(size_t b, size_t i, size_t j) { return mask[(b * lq + i) * lk + j]; }

  AttentionResult Run(bool need_weights) const {
    attnlab::SdpaOptions o;
    o.is_causal = causal;
    o.need_weights = need_weights;
    if (use_mask) o.attn_mask = Mask::Float(mask.data(), {int64_t(batch), int64_t(lq), int64_t(lk)});
    const Shape qs{int64_t(batch), int64_t(lq), int64_t(d)}, ks{int64_t(batch), int64_t(lk), int64_t(d)};
    return attnlab::ScaledDotProductAttention(TensorView{q.data(), qs}, TensorView{k.data(), ks},
                                              TensorView{v.data(), ks}, o);
  }
};

// Checks each row (b, i) of `got` against `clean`: rows where poisoned(b, i) must be all NaN (weights too),
// the others must equal the clean result.
template <class Poisoned>
void ExpectNaNRows(const Sdpa& p, const AttentionResult& got, const AttentionResult& clean, bool need_weights,
                   Poisoned&& poisoned) {
  ExpectPoisonedRows(got, clean, p.batch, p.lq, p.d, need_weights ? p.lk : 0, poisoned);
}

}  // namespace

TEST_CASE("NaN policy (SDPA): NaN in query row i makes row i NaN, and only it", "[nan]") {
  EveryPath([](bool nw) {
    Sdpa p;
    const AttentionResult clean = p.Run(nw);
    p.Q(1, 2, 1) = kNaN;
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t b, size_t i) { return b == 1 && i == 2; });
  });
}

// Rows whose length is a multiple of the vector width have no scalar tail: every logit goes through the vector
// code (8 lanes on AVX2, 16 on AVX3, 4 on SSE4/WASM). NaN must be found there too.
TEST_CASE("NaN policy (SDPA): NaN found in full vectors (Lk a multiple of every lane count)", "[nan]") {
  EveryPath([](bool nw) {
    for (const size_t lk : {4, 8, 16, 32, 48, 128, 256}) {
      INFO("Lk " << lk);
      const size_t lq = 3, d = 2;
      std::vector<float> q = Values(lq * d, 7), k = Values(lk * d, 8), v = Values(lk * d, 9);
      q[1 * d + 0] = kNaN;         // query row 1
      k[(lk - 1) * d + 1] = kNaN;  // the last key: seen by every row
      attnlab::SdpaOptions o;
      o.need_weights = nw;
      const AttentionResult r = attnlab::ScaledDotProductAttention(TensorView{q.data(), {int64_t(lq), int64_t(d)}},
                                                                   TensorView{k.data(), {int64_t(lk), int64_t(d)}},
                                                                   TensorView{v.data(), {int64_t(lk), int64_t(d)}}, o);
      CHECK(AllNaN(r.output.data, 0, lq * d));
      if (nw) CHECK(AllNaN(r.weights.data, 0, lq * lk));
      // Query NaN alone (finite keys).
      k[(lk - 1) * d + 1] = 0.5f;
      const AttentionResult r2 = attnlab::ScaledDotProductAttention(TensorView{q.data(), {int64_t(lq), int64_t(d)}},
                                                                    TensorView{k.data(), {int64_t(lk), int64_t(d)}},
                                                                    TensorView{v.data(), {int64_t(lk), int64_t(d)}}, o);
      CHECK(AllNaN(r2.output.data, 1 * d, d));
      CHECK(AllFinite(r2.output.data, 0, d));
      CHECK(AllFinite(r2.output.data, 2 * d, d));
      if (nw) CHECK(AllNaN(r2.weights.data, 1 * lk, lk));
    }
  });
}

TEST_CASE("NaN policy (SDPA): +inf in query row i makes row i NaN (inf - inf), and only it", "[nan][inf]") {
  EveryPath([](bool nw) {
    Sdpa p;
    const AttentionResult clean = p.Run(nw);
    p.Q(0, 1, 0) = kInf;  // logits ±inf (keys of either sign): softmax gives inf - inf = NaN
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t b, size_t i) { return b == 0 && i == 1; });
  });
}

TEST_CASE("NaN policy (SDPA): NaN in a key row poisons the rows of its batch item that attend it, nothing else",
          "[nan]") {
  EveryPath([](bool nw) {
    Sdpa p;
    const AttentionResult clean = p.Run(nw);
    p.K(0, 3, 2) = kNaN;
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t b, size_t) { return b == 0; });
    // Causal: rows 0..2 cannot see key 3.
    Sdpa c;
    c.causal = true;
    const AttentionResult clean_c = c.Run(nw);
    c.K(0, 3, 2) = kNaN;
    ExpectNaNRows(c, c.Run(nw), clean_c, nw, [](size_t b, size_t i) { return b == 0 && i >= 3; });
  });
}

TEST_CASE("NaN policy (SDPA): NaN in a value row reaches only its column of the rows that attend it", "[nan]") {
  EveryPath([](bool nw) {
    for (const bool causal : {false, true}) {
      INFO("causal " << causal);
      Sdpa p;
      p.causal = causal;
      const AttentionResult clean = p.Run(nw);
      p.V(1, 3, 1) = kNaN;
      const AttentionResult got = p.Run(nw);
      for (size_t b = 0; b < p.batch; ++b) {
        for (size_t i = 0; i < p.lq; ++i) {
          INFO("batch item " << b << ", row " << i);
          const size_t row = b * p.lq + i;
          const bool attends = b == 1 && (!causal || i >= 3);
          for (size_t c = 0; c < p.d; ++c) {
            INFO("column " << c);
            if (attends && c == 1) {
              CHECK(std::isnan(got.output.data[row * p.d + c]));
            } else {
              CHECK(Same(got.output.data, clean.output.data, row * p.d + c, 1));
            }
          }
          if (nw) CHECK(Same(got.weights.data, clean.weights.data, row * p.lk, p.lk));  // weights never see V
        }
      }
    }
  });
}

TEST_CASE("NaN policy (SDPA): NaN in float mask element (i, j) makes row i NaN, and only it", "[nan][mask]") {
  EveryPath([](bool nw) {
    Sdpa p;
    p.EnableMask();
    const AttentionResult clean = p.Run(nw);
    p.M(1, 4, 0) = kNaN;
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t b, size_t i) { return b == 1 && i == 4; });
  });
}

TEST_CASE("NaN policy (SDPA): +inf in float mask element (i, j) makes row i NaN (IEEE inf - inf)", "[nan][mask][inf]") {
  EveryPath([](bool nw) {
    Sdpa p;
    p.EnableMask();
    const AttentionResult clean = p.Run(nw);
    p.M(0, 2, 5) = kInf;
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t b, size_t i) { return b == 0 && i == 2; });
  });
}

TEST_CASE("NaN policy (SDPA): a -inf mask row is fully masked: weights and output 0, never NaN", "[nan][mask]") {
  EveryPath([](bool nw) {
    Sdpa p;
    p.EnableMask();
    const AttentionResult clean = p.Run(nw);
    for (size_t j = 0; j < p.lk; ++j) p.M(1, 3, j) = -kInf;
    const AttentionResult got = p.Run(nw);
    for (size_t b = 0; b < p.batch; ++b) {
      for (size_t i = 0; i < p.lq; ++i) {
        INFO("batch item " << b << ", row " << i);
        const size_t row = b * p.lq + i;
        if (b == 1 && i == 3) {
          CHECK(AllZero(got.output.data, row * p.d, p.d));
          if (nw) CHECK(AllZero(got.weights.data, row * p.lk, p.lk));
        } else {
          CHECK(Same(got.output.data, clean.output.data, row * p.d, p.d));
        }
      }
    }
  });
}

TEST_CASE("NaN policy (SDPA): a fully masked row stays 0 even when keys and values hold NaN / Inf", "[nan][mask]") {
  EveryPath([](bool nw) {
    Sdpa p;
    p.EnableMask();
    for (size_t j = 0; j < p.lk; ++j) p.M(0, 0, j) = -kInf;
    p.V(0, 2, 0) = kNaN;
    p.V(0, 4, 1) = kInf;
    p.K(0, 5, 2) = kNaN;
    const AttentionResult got = p.Run(nw);
    CHECK(AllZero(got.output.data, 0, p.d));
    if (nw) CHECK(AllZero(got.weights.data, 0, p.lk));
  });
}

TEST_CASE("NaN policy (SDPA): NaN / Inf in a masked or causally hidden key or value row does not reach the row",
          "[nan][mask]") {
  EveryPath([](bool nw) {
    // Key 2 masked (-inf) for every row of item 0; its key and value rows hold NaN and Inf.
    Sdpa p;
    p.EnableMask();
    for (size_t i = 0; i < p.lq; ++i) p.M(0, i, 2) = -kInf;
    const AttentionResult clean = p.Run(nw);
    p.K(0, 2, 0) = kNaN;
    p.V(0, 2, 1) = kNaN;
    p.V(0, 2, 2) = -kInf;
    ExpectNaNRows(p, p.Run(nw), clean, nw, [](size_t, size_t) { return false; });
    // The same with a bool mask (SDPA: false = masked).
    std::vector<uint8_t> allowed(p.lq * p.lk, 1);
    for (size_t i = 0; i < p.lq; ++i) allowed[i * p.lk + 2] = 0;
    attnlab::SdpaOptions o;
    o.need_weights = nw;
    o.attn_mask = Mask::Bool(allowed.data(), {int64_t(p.lq), int64_t(p.lk)});
    const Shape qs{2, 5, 3}, ks{2, 6, 3};
    const AttentionResult got = attnlab::ScaledDotProductAttention(
        TensorView{p.q.data(), qs}, TensorView{p.k.data(), ks}, TensorView{p.v.data(), ks}, o);
    CHECK(AllFinite(got.output.data, 0, p.lq * p.d));
    // Causal: value row 4 of item 1 holds NaN; rows 0..3 cannot see it.
    Sdpa c;
    c.causal = true;
    const AttentionResult clean_c = c.Run(nw);
    c.V(1, 4, 0) = kNaN;
    c.K(1, 5, 0) = kNaN;
    const AttentionResult got_c = c.Run(nw);
    for (size_t i = 0; i < 4; ++i) {
      INFO("causal row " << i);
      CHECK(Same(got_c.output.data, clean_c.output.data, (c.lq + i) * c.d, c.d));
    }
  });
}

TEST_CASE("NaN policy (SDPA): huge finite inputs: finite logits stay exact, overflowing ones poison only their row",
          "[nan][large]") {
  EveryPath([](bool nw) {
    // Query row 0 of item 0 scaled to 1e30: logits up to ~1e30, a finite float: softmax is one-hot-like, finite.
    Sdpa p;
    for (size_t c = 0; c < p.d; ++c) p.Q(0, 0, c) *= 1e30f;
    const AttentionResult clean = p.Run(nw);
    CHECK(AllFinite(clean.output.data, 0, p.batch * p.lq * p.d));
    // 1e30 in a key as well: the logit overflows float32 (1e60): that row is NaN (inf - inf), like PyTorch;
    // other rows keep their values.
    Sdpa o = p;
    for (size_t c = 0; c < o.d; ++c) o.K(0, 1, c) = 1e30f * (c % 2 ? 1.0f : -1.0f);
    const AttentionResult got = o.Run(nw);
    for (size_t i = 1; i < o.lq; ++i) {
      INFO("row " << i);
      CHECK(AllFinite(got.output.data, i * o.d, o.d));
    }
    CHECK(Same(got.output.data, clean.output.data, o.lq * o.d, o.lq * o.d));  // item 1 untouched
  });
}

TEST_CASE("NaN policy (SDPA): denormal inputs are ordinary finite numbers", "[nan][denormal]") {
  EveryPath([](bool nw) {
    Sdpa p;
    for (float& x : p.q) x *= 1e-39f;  // denormal
    for (float& x : p.v) x *= 1e-38f;
    const AttentionResult got = p.Run(nw);
    CHECK(AllFinite(got.output.data, 0, got.output.data.size()));
    if (nw) {
      // logits ~1e-39: weights uniform
      for (float w : got.weights.data) CHECK(std::fabs(w - 1.0f / 6.0f) < 1e-6f);
    }
  });
}

TEST_CASE("NaN policy (SDPA): repeated calls with NaN and Inf inputs are bit-identical", "[nan][determinism]") {
  EveryPath([](bool nw) {
    Sdpa p;
    p.EnableMask();
    p.Q(0, 0, 0) = kNaN;
    p.K(1, 1, 1) = kInf;
    p.V(1, 2, 2) = -kInf;
    p.M(0, 3, 3) = kNaN;
    const AttentionResult a = p.Run(nw), b = p.Run(nw);
    CHECK(std::memcmp(a.output.data.data(), b.output.data.data(), a.output.data.size() * sizeof(float)) == 0);
    CHECK(a.weights.data.size() == b.weights.data.size());
    if (!a.weights.data.empty()) {
      CHECK(std::memcmp(a.weights.data.data(), b.weights.data.data(), a.weights.data.size() * sizeof(float)) == 0);
    }
  });
}
