// The NaN / Inf policy of MultiHeadAttention (nan_policy.h states it): the same policy per (item, query position),
// through the projections, on every Highway target.
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

struct Mha {
  static constexpr int64_t E = 4, H = 2, N = 2, L = 3, S = 4;
  attnlab::MultiHeadAttention mha;
  std::vector<float> q = Values(N * L * E, 11), k = Values(N * S * E, 12), v = Values(N * S * E, 13);
  std::vector<uint8_t> kpm;  // (N, S), true = padded
  std::vector<float> am;     // (N * H, L, S) float

  static attnlab::MhaConfig Config() {
    attnlab::MhaConfig c;
    c.embed_dim = E;
    c.num_heads = H;
    c.batch_first = true;
    return c;
  }
  Mha() : mha(Config(), 5) {}
  float& Q(size_t b, size_t i, size_t c) { return q[(b * L + i) * E + c]; }
  float& K(size_t b, size_t j, size_t c) { return k[(b * S + j) * E + c]; }
  float& V(size_t b, size_t j, size_t c) { return v[(b * S + j) * E + c]; }

  AttentionResult Run(bool need_weights, bool average = false) {
    attnlab::MhaForwardOptions o;
    o.need_weights = need_weights;
    o.average_attn_weights = average;
    if (!kpm.empty()) o.key_padding_mask = Mask::Bool(kpm.data(), {N, S});
    if (!am.empty()) o.attn_mask = Mask::Float(am.data(), {N * H, L, S});
    return mha.Forward(TensorView{q.data(), {N, L, E}}, TensorView{k.data(), {N, S, E}},
                       TensorView{v.data(), {N, S, E}}, o);
  }
};

template <class Poisoned>
void ExpectNaNTokens(const AttentionResult& got, const AttentionResult& clean, Poisoned&& poisoned) {
  for (size_t b = 0; b < Mha::N; ++b) {
    for (size_t i = 0; i < Mha::L; ++i) {
      INFO("item " << b << ", position " << i);
      const size_t tok = b * Mha::L + i;
      if (poisoned(b, i)) {
        CHECK(AllNaN(got.output.data, tok * Mha::E, Mha::E));
      } else {
        CHECK(Same(got.output.data, clean.output.data, tok * Mha::E, Mha::E));
      }
    }
  }
}

}  // namespace

TEST_CASE("NaN policy (MHA): NaN in a query token poisons that token only", "[nan][mha]") {
  EveryPath([](bool nw) {
    Mha m;
    const AttentionResult clean = m.Run(nw);
    m.Q(1, 0, 2) = kNaN;
    const AttentionResult got = m.Run(nw);
    ExpectNaNTokens(got, clean, [](size_t b, size_t i) { return b == 1 && i == 0; });
    if (nw) {  // per-head weights (N, H, L, S): both heads of that row
      for (size_t h = 0; h < Mha::H; ++h)
        CHECK(AllNaN(got.weights.data, ((1 * Mha::H + h) * Mha::L + 0) * Mha::S, Mha::S));
    }
  });
}

TEST_CASE("NaN policy (MHA): NaN in a key or value token poisons its item only", "[nan][mha]") {
  EveryPath([](bool nw) {
    Mha m;
    const AttentionResult clean = m.Run(nw);
    m.K(0, 2, 1) = kNaN;
    ExpectNaNTokens(m.Run(nw), clean, [](size_t b, size_t) { return b == 0; });
    Mha v;
    v.V(1, 3, 3) = kNaN;
    ExpectNaNTokens(v.Run(nw), clean, [](size_t b, size_t) { return b == 1; });
  });
}

TEST_CASE("NaN policy (MHA): a padded key/value token holding NaN / Inf does not reach any row", "[nan][mha][mask]") {
  EveryPath([](bool nw) {
    Mha m;
    m.kpm.assign(Mha::N * Mha::S, 0);
    m.kpm[0 * Mha::S + 1] = 1;  // item 0, key 1 padded
    const AttentionResult clean = m.Run(nw);
    m.K(0, 1, 0) = kNaN;
    m.V(0, 1, 2) = kNaN;
    m.V(0, 1, 3) = kInf;
    ExpectNaNTokens(m.Run(nw), clean, [](size_t, size_t) { return false; });
  });
}

TEST_CASE("NaN policy (MHA): a fully padded item gives out_proj.bias rows even with NaN values", "[nan][mha][mask]") {
  EveryPath([](bool nw) {
    Mha m;
    m.kpm.assign(Mha::N * Mha::S, 0);
    for (size_t j = 0; j < Mha::S; ++j) m.kpm[1 * Mha::S + j] = 1;  // item 1 fully padded
    m.V(1, 0, 0) = kNaN;
    m.K(1, 2, 1) = kInf;
    const AttentionResult got = m.Run(nw);
    const auto sd = m.mha.StateDict();
    const std::vector<float>& bias = sd.at("out_proj.bias").data;
    for (size_t i = 0; i < Mha::L; ++i) {
      for (size_t c = 0; c < Mha::E; ++c) CHECK(got.output.data[((1 * Mha::L) + i) * Mha::E + c] == bias[c]);
    }
    if (nw) CHECK(AllZero(got.weights.data, 1 * Mha::H * Mha::L * Mha::S, Mha::H * Mha::L * Mha::S));
  });
}

TEST_CASE("NaN policy (MHA): NaN in a 3-D attn_mask element poisons that head's row and the token",
          "[nan][mha][mask]") {
  EveryPath([](bool nw) {
    Mha m;
    m.am.assign(Mha::N * Mha::H * Mha::L * Mha::S, 0.0f);
    const AttentionResult clean = m.Run(nw);
    const size_t b = 1, h = 1, i = 2;
    m.am[((b * Mha::H + h) * Mha::L + i) * Mha::S + 0] = kNaN;
    const AttentionResult got = m.Run(nw);
    ExpectNaNTokens(got, clean, [&](size_t bb, size_t ii) { return bb == b && ii == i; });
    if (nw) {
      CHECK(AllNaN(got.weights.data, ((b * Mha::H + h) * Mha::L + i) * Mha::S, Mha::S));
      CHECK(Same(got.weights.data, clean.weights.data, ((b * Mha::H + 0) * Mha::L + i) * Mha::S, Mha::S));  // head 0
    }
  });
}
