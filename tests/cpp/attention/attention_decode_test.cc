// The few-query decoding kernel (cpp/src/attention/attention_decode-inl.h: the heads of a key/value group attend over
// the KV cache in place) and the matrix-vector projections (GemvPacked, cpp/src/ops/gemm-inl.h) that
// MultiHeadAttention's KV-cache path takes for steps of up to 4 tokens: each step's output and weights against the
// float64 reference of one causal forward over the whole sequence, on every Highway target. Head dims with and without
// a tail past the SIMD tiles, groups of 1 to 8 query heads, steps of 1-4 tokens (this kernel) between steps of 5 (the
// general path), per-head and averaged weights, a padding mask, and a NaN token that is padded (reaches nothing) or
// not. Steps are bit-identical at every thread count, with and without the key/value groups split over threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "cpp/src/parallel.h"  // kMinParallelDecodeFlops
#include "hwy_targets.h"
#include "mha_cases.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::KVCache;

// float32 against the float64 reference (as the full forward's check in multi_head_attention_kv_cache_test.cc).
const Tolerance kRefTol{1e-5, 1e-4};

// Rows [t0, t0 + len) of every leading plane of x (planes, total, width), as a new (planes, len, width).
template <class T>
std::vector<T> Rows(const std::vector<T>& x, int64_t planes, int64_t total, int64_t width, int64_t t0, int64_t len) {
  std::vector<T> out;
  for (int64_t p = 0; p < planes; ++p) {
    out.insert(out.end(), x.begin() + (p * total + t0) * width, x.begin() + (p * total + t0 + len) * width);
  }
  return out;
}

// Weight rows [t0, t0 + len) over keys [0, t0 + len) of (planes, total, total) weights.
std::vector<double> WeightRows(const std::vector<double>& w, int64_t planes, int64_t total, int64_t t0, int64_t len) {
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = t0; i < t0 + len; ++i) {
      out.insert(out.end(), w.begin() + (p * total + i) * total, w.begin() + (p * total + i) * total + t0 + len);
    }
  }
  return out;
}

OwnedMask BoolMask(const Shape& shape, const std::vector<uint8_t>& bools) {
  OwnedMask m;
  m.kind = attnlab::Mask::Kind::kBool;
  m.shape = shape;
  m.bools = bools;
  return m;
}

struct Case {
  int64_t e, heads, kv_heads;
  std::vector<int64_t> steps;
  bool average;
};

// Batch-first, n = 2 items: queries from xq, keys and values from xkv; pad[b * total + j] masks key j of item b
// (0: attended). The reference sees x_ref for all three (xkv differs from it only at padded tokens).
void CheckAgainstReference(const Case& k, const std::vector<float>& xq, const std::vector<float>& xkv,
                           const std::vector<uint8_t>& pad, const std::vector<float>& x_ref) {
  MhaConfig c = BatchFirstConfig(k.e, k.heads, k.kv_heads);
  const int64_t n = 2, e = k.e;
  int64_t total = 0;
  for (int64_t len : k.steps) total += len;
  INFO("E " << e << " H " << k.heads << " Hkv " << k.kv_heads << " average " << k.average);
  Rng rng(static_cast<uint64_t>(e * 13 + k.kv_heads));
  const StateDict state = RandomStateDict(rng, c);
  MultiHeadAttention mha(c);
  mha.LoadStateDict(Views(state));
  // The reference: one causal forward over all tokens.
  std::vector<uint8_t> causal_bools;
  for (int64_t i = 0; i < total; ++i) {
    for (int64_t j = 0; j < total; ++j) causal_bools.push_back(j > i ? 1 : 0);
  }
  const OwnedMask causal = BoolMask({total, total}, causal_bools), full_pad = BoolMask({n, total}, pad);
  MhaForwardOptions full;
  full.attn_mask = causal.View();
  full.key_padding_mask = full_pad.View();
  full.average_attn_weights = k.average;
  const TensorView whole{x_ref.data(), {n, total, e}};
  const RefResult ref = ReferenceMha(c, state, whole, whole, whole, full);
  const int64_t planes = n * (k.average ? 1 : k.heads);

  ForEachTarget([&](const std::string&) {
    KVCache cache = mha.CreateKVCache(n, total);
    int64_t t0 = 0;
    for (int64_t len : k.steps) {
      INFO("step at position " << t0 << " with " << len << " tokens");
      const std::vector<float> qs = Rows(xq, n, total, e, t0, len), kvs = Rows(xkv, n, total, e, t0, len);
      std::vector<uint8_t> step_pad;
      for (int64_t b = 0; b < n; ++b)
        step_pad.insert(step_pad.end(), pad.begin() + b * total, pad.begin() + b * total + t0 + len);
      const OwnedMask pad_view = BoolMask({n, t0 + len}, step_pad);
      MhaForwardOptions options;
      options.kv_cache = &cache;
      options.key_padding_mask = pad_view.View();
      options.average_attn_weights = k.average;
      const TensorView step{qs.data(), {n, len, e}}, step_kv{kvs.data(), {n, len, e}};
      const AttentionResult r = mha.Forward(step, step_kv, step_kv, options);
      CheckAllClose("output", r.output.data, Rows(ref.output, n, total, e, t0, len), kRefTol);
      CheckAllClose("weights", r.weights.data, WeightRows(ref.weights, planes, total, t0, len), kRefTol);
      // need_weights = false: the same output (the kernel writes no weights then), here from a fresh cache
      // filled up to t0 by the general path in one call.
      KVCache other = mha.CreateKVCache(n, total);
      MhaForwardOptions quiet = options;
      quiet.kv_cache = &other;
      quiet.need_weights = false;
      if (t0 > 0) {
        const std::vector<float> past_q = Rows(xq, n, total, e, 0, t0), past_kv = Rows(xkv, n, total, e, 0, t0);
        const TensorView prefix{past_q.data(), {n, t0, e}}, prefix_kv{past_kv.data(), {n, t0, e}};
        std::vector<uint8_t> past_pad;
        for (int64_t b = 0; b < n; ++b)
          past_pad.insert(past_pad.end(), pad.begin() + b * total, pad.begin() + b * total + t0);
        const OwnedMask past_view = BoolMask({n, t0}, past_pad);
        MhaForwardOptions prefill = quiet;
        prefill.key_padding_mask = past_view.View();
        std::vector<uint8_t> past_causal;
        for (int64_t i = 0; i < t0; ++i) {
          for (int64_t j = 0; j < t0; ++j) past_causal.push_back(j > i ? 1 : 0);
        }
        const OwnedMask past_causal_view = BoolMask({t0, t0}, past_causal);
        prefill.attn_mask = past_causal_view.View();
        mha.Forward(prefix, prefix_kv, prefix_kv, prefill);
      }
      const AttentionResult q = mha.Forward(step, step_kv, step_kv, quiet);
      CheckAllClose("output, need_weights false", q.output.data, Rows(ref.output, n, total, e, t0, len), kRefTol);
      t0 += len;
    }
  });
}

TEST_CASE("attention decode: few-query steps over the KV cache match the float64 reference", "[mha][kv_cache]") {
  // Head dims 4 (below one vector on most targets), 20 (tiles and a tail), 64 (whole tiles everywhere); groups
  // of 1, 2, 3 and 8 query heads.
  const Case cases[] = {{24, 6, 6, {1, 1, 2, 1, 3, 1, 4, 1}, true}, {24, 6, 2, {1, 1, 2, 1, 3, 1, 4, 1}, false},
                        {40, 2, 1, {3, 1, 5, 1, 1, 2}, true},       {40, 2, 2, {1, 1, 1, 1, 1, 1, 1}, false},
                        {128, 8, 1, {4, 1, 1, 5, 1, 2, 1}, false},  {128, 2, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
                        {64, 8, 4, {2, 2, 1, 1, 1, 1, 4, 3}, true}};
  for (const Case& k : cases) {
    int64_t total = 0;
    for (int64_t len : k.steps) total += len;
    Rng rng(static_cast<uint64_t>(k.e + k.kv_heads * 5 + total));
    const std::vector<float> x = RandomVector(rng, 2 * total * k.e);
    std::vector<uint8_t> pad(static_cast<size_t>(2 * total), 0);
    pad[static_cast<size_t>(total + 1)] = 1;  // item 1: position 1 padded
    CheckAgainstReference(k, x, x, pad, x);
  }
}

TEST_CASE("attention decode: a padded NaN token reaches nothing, an attended one makes its rows NaN",
          "[mha][kv_cache][nan]") {
  const Case k{40, 4, 2, {1, 1, 1, 2, 1, 1}, false};
  const int64_t total = 7, e = 40;
  Rng rng(21);
  std::vector<float> x = RandomVector(rng, 2 * total * e);
  std::vector<uint8_t> pad(2 * total, 0);
  // Item 1's token 2 has NaN in its key/value input and is padded: its key and value (NaN) are masked for every
  // query, so the output is the reference's with any finite token there.
  std::vector<float> x_kv = x;
  x_kv[(total + 2) * e + 3] = std::nanf("");
  pad[total + 2] = 1;
  CheckAgainstReference(k, x, x_kv, pad, x);

  // Item 0's token 2 holds NaN and is attended: from that step on every output row of item 0 is NaN, item 1's
  // rows stay finite.
  MhaConfig c = BatchFirstConfig(e, 4, 2);
  MultiHeadAttention mha(c, 3);
  std::vector<float> y = RandomVector(rng, 2 * total * e);
  y[2 * e + 5] = std::nanf("");
  ForEachTarget([&](const std::string&) {
    KVCache cache = mha.CreateKVCache(2, total);
    for (int64_t t = 0; t < total; ++t) {
      INFO("position " << t);
      const std::vector<float> ys = Rows(y, 2, total, e, t, 1);
      MhaForwardOptions options;
      options.kv_cache = &cache;
      options.need_weights = false;
      const TensorView step{ys.data(), {2, 1, e}};
      const AttentionResult r = mha.Forward(step, step, step, options);
      for (int64_t j = 0; j < e; ++j) {
        CHECK(std::isnan(r.output.data[j]) == (t >= 2));
        CHECK(std::isfinite(r.output.data[e + j]));
      }
    }
  });
}

// A sequence x (n, total, e) to decode.
struct DecodeInput {
  const std::vector<float>& x;
  int64_t n, total, e;
};

// `steps` decode steps of `step` tokens each from token t0 on through `cache` (per-head weights on odd steps,
// averaged on even ones), each step's output and weights appended to `all`.
void AppendDecodeSteps(MultiHeadAttention& mha, KVCache& cache, const DecodeInput& in, int64_t t0, int64_t step,
                       int64_t steps, std::vector<float>& all) {
  for (int64_t t = 0; t < steps; ++t) {
    const std::vector<float> xs = Rows(in.x, in.n, in.total, in.e, t0 + t * step, step);
    MhaForwardOptions options;
    options.kv_cache = &cache;
    options.average_attn_weights = t % 2 == 0;
    const TensorView next{xs.data(), {in.n, step, in.e}};
    const AttentionResult r = mha.Forward(next, next, next, options);
    all.insert(all.end(), r.output.data.begin(), r.output.data.end());
    all.insert(all.end(), r.weights.data.begin(), r.weights.data.end());
  }
}

// decode(threads) gives the same bits at each thread count in `counts` as at 1 thread.
template <class Decode>
void CheckDecodeBitIdentical(Decode&& decode, std::initializer_list<size_t> counts) {
  const std::vector<float> one = decode(1);
  for (size_t threads : counts) {
    INFO(threads << " threads");
    const std::vector<float> other = decode(threads);
    REQUIRE(other.size() == one.size());
    CHECK(std::memcmp(other.data(), one.data(), one.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("attention decode: steps are bit-identical at 1, 2, 3 and 8 threads", "[mha][kv_cache][threads]") {
  MhaConfig c = BatchFirstConfig(64, 8, 2);
  const int64_t n = 3, total = 6, e = 64;
  MultiHeadAttention mha(c, 4);
  Rng rng(33);
  const std::vector<float> x = RandomVector(rng, n * total * e);
  CheckDecodeBitIdentical(
      [&](size_t threads) {
        attnlab::SetThreadCount(threads);
        KVCache cache = mha.CreateKVCache(n, total);
        std::vector<float> all;
        AppendDecodeSteps(mha, cache, {x, n, total, e}, 0, 1, total, all);
        attnlab::SetThreadCount(1);
        return all;
      },
      {2, 3, 8});
}

TEST_CASE("attention decode: key/value groups split over threads are bit-identical at 1, 2 and 3 threads",
          "[mha][kv_cache][threads]") {
  // The case above attends over at most 6 tokens: too little work to split over threads (kMinParallelDecodeFlops).
  // Here 4 items × 2 key/value groups of 4 query heads attend over a cache of 1024-1032 tokens in steps
  // of 4 queries, enough for ParallelFor to split the 8 groups (the ThreadSanitizer suite, scripts/tsan.sh, needs
  // it).
  struct Guard {
    ~Guard() { attnlab::SetThreadCount(1); }
  } guard;
  MhaConfig c = BatchFirstConfig(128, 8, 2);
  const int64_t n = 4, e = 128, head_dim = 16, prompt = 1020, step = 4, steps = 3, total = prompt + steps * step;
  // The decode work of the first step as ParallelFor counts it (2 · L · S · (dk + dv) per query head).
  REQUIRE(2.0 * step * (prompt + step) * (2 * head_dim) * c.num_heads * n >= attnlab::kMinParallelDecodeFlops);
  MultiHeadAttention mha(c, 6);
  Rng rng(47);
  const std::vector<float> x = RandomVector(rng, n * total * e);
  auto decode = [&](size_t threads) {
    attnlab::SetThreadCount(threads);
    KVCache cache = mha.CreateKVCache(n, total);
    const std::vector<float> xp = Rows(x, n, total, e, 0, prompt);
    MhaForwardOptions fill;
    fill.kv_cache = &cache;
    fill.need_weights = false;
    const TensorView first{xp.data(), {n, prompt, e}};
    std::vector<float> all = mha.Forward(first, first, first, fill).output.data;
    // (the averaged weights are summed after the split)
    AppendDecodeSteps(mha, cache, {x, n, total, e}, prompt, step, steps, all);
    return all;
  };
  CheckDecodeBitIdentical(decode, {2, 3});
}

}  // namespace
}  // namespace attnlab_test
