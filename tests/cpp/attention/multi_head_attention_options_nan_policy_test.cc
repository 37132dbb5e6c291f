// The NaN / Inf policy of MultiHeadAttention (nan_policy.h states it) with grouped-query heads and KV-cache
// decoding, on every Highway target: NaN in the key projection of K/V head g reaches exactly the weights of the
// query heads that read it; a NaN token decoded through the cache reaches the steps that attend it, not the earlier
// ones, and Reset() leaves nothing of it behind.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "nan_policy.h"

namespace {

using namespace nan_policy_test;  // NOLINT(build/namespaces): the policy's helpers

attnlab::MhaConfig GqaConfig() {
  attnlab::MhaConfig c;
  c.embed_dim = 8;
  c.num_heads = 4;
  c.num_kv_heads = 2;  // head_dim 2: heads 0, 1 read K/V head 0; heads 2, 3 read K/V head 1
  c.batch_first = true;
  return c;
}

}  // namespace

TEST_CASE("NaN policy (MHA options): NaN in K/V head g's key projection reaches only its query heads",
          "[nan][mha][gqa]") {
  attnlab_test::ForEachTarget([](const std::string&) {
    constexpr int64_t N = 2, L = 3, S = 4, E = 8, H = 4;
    attnlab::MultiHeadAttention mha(GqaConfig(), 3);
    const std::vector<float> q = Values(N * L * E, 21), k = Values(N * S * E, 22), v = Values(N * S * E, 23);
    attnlab::MhaForwardOptions o;
    o.average_attn_weights = false;
    auto run = [&] {
      return mha.Forward(TensorView{q.data(), {N, L, E}}, TensorView{k.data(), {N, S, E}},
                         TensorView{v.data(), {N, S, E}}, o);
    };
    const AttentionResult clean = run();
    std::map<std::string, attnlab::Tensor> sd = mha.StateDict();
    REQUIRE(sd.at("k_proj_weight").shape == Shape{4, E});  // (Ekv, E)
    sd.at("k_proj_weight").data[2 * E + 5] = kNaN;         // feature 2: the first of K/V head 1
    std::map<std::string, TensorView> views;
    for (const auto& [name, t] : sd) views[name] = TensorView{t.data.data(), t.shape};
    mha.LoadStateDict(views);
    const AttentionResult got = run();
    REQUIRE(got.weights.shape == Shape{N, H, L, S});
    for (size_t b = 0; b < N; ++b) {
      for (size_t h = 0; h < H; ++h) {
        INFO("item " << b << ", head " << h);
        const size_t at = (b * H + h) * L * S;
        if (h >= 2) {
          CHECK(AllNaN(got.weights.data, at, L * S));
        } else {
          CHECK(Same(got.weights.data, clean.weights.data, at, L * S));
        }
      }
    }
    CHECK(AllNaN(got.output.data, 0, N * L * E));  // the out-projection mixes every head
  });
}

TEST_CASE("NaN policy (MHA options): a NaN token in the KV cache reaches the later steps only; Reset() clears it",
          "[nan][mha][kv_cache]") {
  attnlab_test::ForEachTarget([](const std::string&) {
    constexpr int64_t E = 8, T = 4;
    attnlab::MultiHeadAttention mha(GqaConfig(), 4);
    std::vector<float> x = Values(T * E, 31);
    attnlab::KVCache cache = mha.CreateKVCache(1, T);
    auto decode = [&](const std::vector<float>& tokens) {
      std::vector<AttentionResult> steps;
      for (int64_t t = 0; t < T; ++t) {
        attnlab::MhaForwardOptions o;
        o.kv_cache = &cache;
        const TensorView tok{tokens.data() + t * E, {1, 1, E}};
        steps.push_back(mha.Forward(tok, tok, tok, o));
      }
      return steps;
    };
    const std::vector<AttentionResult> clean = decode(x);
    cache.Reset();
    std::vector<float> poisoned = x;
    poisoned[2 * E + 3] = kNaN;  // token 2: its query, key and value
    const std::vector<AttentionResult> got = decode(poisoned);
    for (int64_t t = 0; t < T; ++t) {
      INFO("step " << t);
      if (t < 2) {
        CHECK(Same(got[t].output.data, clean[t].output.data, 0, E));
        CHECK(Same(got[t].weights.data, clean[t].weights.data, 0, t + 1));
      } else {
        CHECK(AllNaN(got[t].output.data, 0, E));
      }
    }
    CHECK(cache.length() == T);
    cache.Reset();
    const std::vector<AttentionResult> again = decode(x);
    for (int64_t t = 0; t < T; ++t) {
      INFO("step " << t << " after Reset()");
      CHECK(Same(again[t].output.data, clean[t].output.data, 0, E));
    }
  });
}
