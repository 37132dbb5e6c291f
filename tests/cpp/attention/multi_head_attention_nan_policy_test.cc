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
  std::vector<uint8_t> kpm;      // (N, S), true = padded
  std::vector<float> kpm_float;  // (N, S) float, added (instead of kpm)
  std::vector<float> am;         // (N * H, L, S) float

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
    if (!kpm_float.empty()) o.key_padding_mask = Mask::Float(kpm_float.data(), {N, S});
    if (!am.empty()) o.attn_mask = Mask::Float(am.data(), {N * H, L, S});
    return mha.Forward(TensorView{q.data(), {N, L, E}}, TensorView{k.data(), {N, S, E}},
                       TensorView{v.data(), {N, S, E}}, o);
  }
};

template <class Poisoned>
void ExpectNaNTokens(const AttentionResult& got, const AttentionResult& clean, Poisoned&& poisoned) {
  ExpectPoisonedRows(got, clean, Mha::N, Mha::L, Mha::E, 0, poisoned);  // (weights: checked per head by the caller)
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

// The two float masks are added in float32 (as PyTorch 2 adds attn_mask + key_padding_mask), and a sum of -inf masks
// the key like a -inf element, even when it is the overflow of two finite masks: -FLT_MAX + -FLT_MAX (the fuzzer's
// finding of issue 27, tests/fuzz/regressions/crash-strict-mha-float-masks-overflow-to-neg-inf-over-nan-key). A NaN
// key token under it reaches nothing; rows where the sum stays finite (-FLT_MAX alone) attend the key and are NaN. A
// sum that overflows to +inf makes the row NaN, as a +inf element does.
TEST_CASE("NaN policy (MHA): float masks whose float32 sum overflows to -inf mask the key, to +inf poison the row",
          "[nan][mha][mask]") {
  constexpr float kMax = std::numeric_limits<float>::max();
  EveryPath([&](bool nw) {
    Mha m;
    m.kpm_float.assign(Mha::N * Mha::S, 0.0f);
    m.am.assign(Mha::N * Mha::H * Mha::L * Mha::S, 0.0f);
    const size_t j = 1, i = 2;  // item 0: key j; row i also gets -FLT_MAX from attn_mask in both heads
    m.kpm_float[0 * Mha::S + j] = -kMax;
    for (size_t h = 0; h < Mha::H; ++h) m.am[((0 * Mha::H + h) * Mha::L + i) * Mha::S + j] = -kMax;
    const AttentionResult clean = m.Run(nw);
    if (nw) {
      for (size_t h = 0; h < Mha::H; ++h)
        CHECK(clean.weights.data[((0 * Mha::H + h) * Mha::L + i) * Mha::S + j] == 0.0f);
    }
    for (size_t c = 0; c < Mha::E; ++c) m.K(0, j, c) = kNaN;
    const AttentionResult got = m.Run(nw);
    ExpectNaNTokens(got, clean, [&](size_t b, size_t ii) { return b == 0 && ii != i; });
    if (nw) {
      for (size_t h = 0; h < Mha::H; ++h) {
        CHECK(Same(got.weights.data, clean.weights.data, ((0 * Mha::H + h) * Mha::L + i) * Mha::S, Mha::S));
      }
    }

    Mha p;
    p.kpm_float.assign(Mha::N * Mha::S, 0.0f);
    p.am.assign(Mha::N * Mha::H * Mha::L * Mha::S, 0.0f);
    p.kpm_float[1 * Mha::S + 0] = kMax;  // item 1, key 0: +FLT_MAX alone is a finite (huge) bias
    const AttentionResult finite = p.Run(nw);
    const size_t h = 1, row = 1;
    p.am[((1 * Mha::H + h) * Mha::L + row) * Mha::S + 0] = kMax;  // + FLT_MAX = +inf in head 1, row 1
    const AttentionResult poisoned = p.Run(nw);
    ExpectNaNTokens(poisoned, finite, [&](size_t b, size_t ii) { return b == 1 && ii == row; });
    if (nw) {
      CHECK(AllNaN(poisoned.weights.data, ((1 * Mha::H + h) * Mha::L + row) * Mha::S, Mha::S));
      CHECK(Same(poisoned.weights.data, finite.weights.data, ((1 * Mha::H + 0) * Mha::L + row) * Mha::S, Mha::S));
    }
  });
}
