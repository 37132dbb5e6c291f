// Decoding with a KV cache (MultiHeadAttention::CreateKVCache, MhaForwardOptions::kv_cache): token by token, and
// after a multi-token prefill, every step equals the matching rows of ONE causal forward over the whole sequence
// (which itself matches the float64 reference), on every Highway target, with and without grouped-query heads,
// both layouts, batch > 1, unbatched; padding masks; and every misuse rejected without changing the cache.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "mha_cases.h"
#include "reference.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::KVCache;

// Positions [t0, t0 + len) of x (an input in the configured layout with `total` positions of `dim` features), in
// the same layout.
std::vector<float> Slice(const MhaConfig& c, bool batched, int64_t n, const std::vector<float>& x, int64_t total,
                         int64_t dim, int64_t t0, int64_t len) {
  std::vector<float> out;
  auto append = [&](int64_t row) { out.insert(out.end(), x.begin() + row * dim, x.begin() + (row + 1) * dim); };
  if (batched && !c.batch_first) {  // (L, N, dim)
    for (int64_t t = t0; t < t0 + len; ++t) {
      for (int64_t b = 0; b < n; ++b) append(t * n + b);
    }
  } else {  // (N, L, dim) or (L, dim)
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t t = t0; t < t0 + len; ++t) append(b * total + t);
    }
  }
  return out;
}

// Causal (L, L) bool mask in nn.MultiheadAttention's convention: true = masked out (j > i).
OwnedMask CausalMask(int64_t l) {
  OwnedMask m;
  m.kind = attnlab::Mask::Kind::kBool;
  m.shape = {l, l};
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < l; ++j) m.bools.push_back(j > i ? 1 : 0);
  }
  return m;
}

struct DecodeCase {
  MhaConfig config;
  bool batched = true;
  int64_t n = 2, total = 9;
  std::vector<int64_t> steps;  // tokens per step, summing to total
  bool average = true;
};

// Weights of the full forward for query rows [t0, t0 + len) over keys [0, t0 + len): (N, [H,] len, t0 + len).
std::vector<double> FullWeightRows(const std::vector<float>& w, int64_t planes, int64_t total, int64_t t0,
                                   int64_t len) {
  std::vector<double> out;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = t0; i < t0 + len; ++i) {
      for (int64_t j = 0; j < t0 + len; ++j) out.push_back(w[(p * total + i) * total + j]);
    }
  }
  return out;
}

void CheckDecode(const DecodeCase& d) {
  const MhaConfig& c = d.config;
  const int64_t e = c.embed_dim, n = d.batched ? d.n : 1;
  INFO(DescribeConfig(c) << " batched " << d.batched << " steps " << d.steps.size() << " average " << d.average);
  Rng rng(static_cast<uint64_t>(e * 31 + c.num_kv_heads * 7 + d.steps.size() + (c.batch_first ? 1 : 0)));
  const std::vector<float> x = RandomVector(rng, n * d.total * e);
  const StateDict state = RandomStateDict(rng, c);
  MultiHeadAttention mha(c);
  mha.LoadStateDict(Views(state));
  const TensorView whole{x.data(), InputShape(c, d.batched, n, d.total, e)};
  const OwnedMask causal = CausalMask(d.total);
  MhaForwardOptions full_options;
  full_options.attn_mask = causal.View();
  full_options.average_attn_weights = d.average;
  const AttentionResult full = mha.Forward(whole, whole, whole, full_options);
  const RefResult ref = ReferenceMha(c, state, whole, whole, whole, full_options);
  CheckAllClose("full causal forward vs float64 reference", full.output.data, ref.output, {1e-5, 1e-4});

  const int64_t planes = n * (d.average ? 1 : c.num_heads);
  ForEachTarget([&](const std::string&) {
    KVCache cache = mha.CreateKVCache(n, d.total);
    int64_t t0 = 0;
    for (int64_t len : d.steps) {
      INFO("step at position " << t0 << " with " << len << " tokens");
      const std::vector<float> xs = Slice(c, d.batched, n, x, d.total, e, t0, len);
      const TensorView step{xs.data(), InputShape(c, d.batched, n, len, e)};
      MhaForwardOptions options;
      options.kv_cache = &cache;
      options.average_attn_weights = d.average;
      const AttentionResult r = mha.Forward(step, step, step, options);
      CHECK(cache.length() == t0 + len);
      const std::vector<float> expected = Slice(c, d.batched, n, full.output.data, d.total, e, t0, len);
      CHECK(r.output.shape == step.shape);
      CheckAllClose("output vs the full causal forward", r.output.data, ToDouble(expected), {2e-6, 1e-5});
      Shape w_shape = d.average ? Shape{n, len, t0 + len} : Shape{n, c.num_heads, len, t0 + len};
      if (!d.batched) w_shape.erase(w_shape.begin());
      CHECK(r.weights.shape == w_shape);
      CheckAllClose("weights", r.weights.data, FullWeightRows(full.weights.data, planes, d.total, t0, len),
                    {2e-6, 1e-5});
      t0 += len;
    }
    CHECK(cache.length() == d.total);
    // reset(): the same sequence again gives the same first step, bit for bit (need_weights = false: online path).
    cache.Reset();
    CHECK(cache.length() == 0);
    const std::vector<float> x0 = Slice(c, d.batched, n, x, d.total, e, 0, 1);
    const TensorView first{x0.data(), InputShape(c, d.batched, n, 1, e)};
    MhaForwardOptions options;
    options.kv_cache = &cache;
    options.need_weights = false;
    const AttentionResult again = mha.Forward(first, first, first, options);
    CheckAllClose("first step after reset", again.output.data,
                  ToDouble(Slice(c, d.batched, n, full.output.data, d.total, e, 0, 1)), {2e-6, 1e-5});
  });
}

TEST_CASE("mha kv cache: token-by-token decoding equals one causal forward at every step", "[mha][kv_cache]") {
  for (int64_t kv_heads : {4LL, 2LL, 1LL}) {
    for (bool batch_first : {true, false}) {
      DecodeCase d;
      d.config.embed_dim = 16;
      d.config.num_heads = 4;
      d.config.num_kv_heads = kv_heads;
      d.config.batch_first = batch_first;
      d.steps = std::vector<int64_t>(9, 1);
      d.average = kv_heads != 2;
      CheckDecode(d);
    }
  }
}

TEST_CASE("mha kv cache: multi-token prefill, then single tokens; kdim/vdim; unbatched", "[mha][kv_cache]") {
  DecodeCase d;
  d.config.embed_dim = 12;
  d.config.num_heads = 6;
  d.config.num_kv_heads = 2;
  d.config.batch_first = false;
  d.n = 3;
  d.total = 40;  // past a query block and the 4-key GEMM groups
  d.steps = {20, 1, 1, 3, 1, 14};
  CheckDecode(d);
  d.config.bias = false;
  d.config.batch_first = true;
  d.average = false;
  d.steps = {5, 1, 1, 33};
  CheckDecode(d);
  d.batched = false;
  d.config.num_kv_heads = -1;
  d.total = 6;
  d.steps = {3, 1, 2};
  CheckDecode(d);
}

TEST_CASE("mha kv cache: key_padding_mask over the cached positions", "[mha][kv_cache]") {
  MhaConfig c = BatchFirstConfig(8, 4, 2);
  Rng rng(5);
  const int64_t n = 2, total = 6;
  const std::vector<float> x = RandomVector(rng, n * total * 8);
  MultiHeadAttention mha(c, 1);
  // Item 1 is left-padded by two positions.
  OwnedMask pad;
  pad.kind = attnlab::Mask::Kind::kBool;
  pad.shape = {n, total};
  pad.bools = {0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0};
  const OwnedMask causal = CausalMask(total);
  MhaForwardOptions full_options;
  full_options.attn_mask = causal.View();
  full_options.key_padding_mask = pad.View();
  const TensorView whole{x.data(), {n, total, 8}};
  const AttentionResult full = mha.Forward(whole, whole, whole, full_options);
  KVCache cache = mha.CreateKVCache(n, total);
  for (int64_t t = 0; t < total; ++t) {
    INFO("position " << t);
    const std::vector<float> xs = Slice(c, true, n, x, total, 8, t, 1);
    OwnedMask step_pad;
    step_pad.kind = attnlab::Mask::Kind::kBool;
    step_pad.shape = {n, t + 1};
    for (int64_t b = 0; b < n; ++b) {
      step_pad.bools.insert(step_pad.bools.end(), pad.bools.begin() + b * total, pad.bools.begin() + b * total + t + 1);
    }
    MhaForwardOptions options;
    options.kv_cache = &cache;
    options.key_padding_mask = step_pad.View();
    const TensorView step{xs.data(), {n, 1, 8}};
    const AttentionResult r = mha.Forward(step, step, step, options);
    // Fully padded rows (item 1 at t < 2) give out_proj.bias = 0 here, as in the full forward.
    CheckAllClose("output", r.output.data, ToDouble(Slice(c, true, n, full.output.data, total, 8, t, 1)), {2e-6, 1e-5});
  }
}

// The multi-token cases below: 4 query heads over 2 key/value heads (E = 16), 20 tokens in steps of 3, 6, 2, 4 and
// 5 (steps of up to 4 tokens take the decode kernel, longer ones the general path).
MhaConfig MultiTokenStepConfig() {
  MhaConfig c = BatchFirstConfig(16, 4, 2);
  return c;
}
std::vector<int64_t> MultiTokenSteps() { return {3, 6, 2, 4, 5}; }

TEST_CASE("mha kv cache: multi-token steps with an attn_mask and NaN values hidden by the causal limit",
          "[mha][kv_cache][nan]") {
  // Steps of 2-4 tokens take the decode kernel, steps of more than 4 the general one; both hide the keys past each
  // query's position themselves. Token 5 (a general step) and token 13 (a decode step) hold NaN in their key/value
  // inputs: the earlier rows of their step do not see them (causal), and the user mask masks them for every later
  // row, so the NaN reaches nothing. The mask is NaN wherever the causal limit hides a key, but 0 at those two
  // tokens' hidden entries (a kernel that read past the limit would attend a NaN value there). Rows 7 (general)
  // and 10 (decode) are fully masked: zero weights, output = out_proj.bias.
  const MhaConfig c = MultiTokenStepConfig();
  const int64_t n = 2, total = 20, e = c.embed_dim;
  const std::vector<int64_t> steps = MultiTokenSteps();
  const int64_t nan_tokens[] = {5, 13}, masked_rows[] = {7, 10};
  Rng rng(61);
  const StateDict state = RandomStateDict(rng, c);
  MultiHeadAttention mha(c);
  mha.LoadStateDict(Views(state));
  const std::vector<float> x = RandomVector(rng, n * total * e);
  std::vector<float> x_kv = x;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t j : nan_tokens) x_kv[(b * total + j) * e + 3] = std::nanf("");
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> user(total * total);  // (i, j): the step masks' entries
  const std::vector<float> noise = RandomVector(rng, total * total);
  for (int64_t i = 0; i < total; ++i) {
    for (int64_t j = 0; j < total; ++j) {
      float& m = user[i * total + j];
      m = j > i ? std::nanf("") : (noise[i * total + j] < -0.8f ? -inf : noise[i * total + j]);
      for (int64_t t : nan_tokens) {
        if (j == t) m = j > i ? 0.0f : -inf;
      }
      for (int64_t r : masked_rows) {
        if (i == r && j <= i) m = -inf;
      }
    }
  }
  for (bool per_head : {false, true}) {
    INFO("per-head mask " << per_head);
    const int64_t planes = per_head ? n * c.num_heads : 1;
    // Mask plane p: the user mask, its finite entries shifted per plane (per head).
    auto plane_value = [&](int64_t p, int64_t i, int64_t j) {
      const float m = user[i * total + j];
      return std::isfinite(m) ? m + 0.25f * static_cast<float>(p % 3) : m;
    };
    OwnedMask full_mask;  // the user mask with the causal part: what one forward over all tokens gets
    full_mask.kind = attnlab::Mask::Kind::kFloat;
    full_mask.shape = per_head ? Shape{planes, total, total} : Shape{total, total};
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t i = 0; i < total; ++i) {
        for (int64_t j = 0; j < total; ++j) full_mask.floats.push_back(j > i ? -inf : plane_value(p, i, j));
      }
    }
    MhaForwardOptions full_options;
    full_options.attn_mask = full_mask.View();
    full_options.average_attn_weights = false;
    const TensorView whole{x.data(), {n, total, e}};
    const AttentionResult full = mha.Forward(whole, whole, whole, full_options);
    const RefResult ref = ReferenceMha(c, state, whole, whole, whole, full_options);
    CheckAllClose("full forward vs float64 reference", full.output.data, ref.output, {1e-5, 1e-4});
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t r : masked_rows) {
        for (int64_t j = 0; j < e; ++j)
          CHECK(full.output.data[(b * total + r) * e + j] == state.at("out_proj.bias").data[j]);
      }
    }
    ForEachTarget([&](const std::string&) {
      for (bool need_weights : {true, false}) {
        KVCache cache = mha.CreateKVCache(n, total);
        int64_t t0 = 0;
        for (int64_t len : steps) {
          INFO("step at position " << t0 << " with " << len << " tokens, need_weights " << need_weights);
          OwnedMask step_mask;
          step_mask.kind = attnlab::Mask::Kind::kFloat;
          step_mask.shape = per_head ? Shape{planes, len, t0 + len} : Shape{len, t0 + len};
          for (int64_t p = 0; p < planes; ++p) {
            for (int64_t i = t0; i < t0 + len; ++i) {
              for (int64_t j = 0; j < t0 + len; ++j) step_mask.floats.push_back(plane_value(p, i, j));
            }
          }
          const std::vector<float> qs = Slice(c, true, n, x, total, e, t0, len);
          const std::vector<float> kvs = Slice(c, true, n, x_kv, total, e, t0, len);
          MhaForwardOptions options;
          options.kv_cache = &cache;
          options.attn_mask = step_mask.View();
          options.need_weights = need_weights;
          options.average_attn_weights = false;
          const TensorView step_q{qs.data(), {n, len, e}}, step_kv{kvs.data(), {n, len, e}};
          const AttentionResult r = mha.Forward(step_q, step_kv, step_kv, options);
          CheckAllClose("output vs the full forward", r.output.data,
                        ToDouble(Slice(c, true, n, full.output.data, total, e, t0, len)), {2e-6, 1e-5});
          if (need_weights) {
            CheckAllClose("weights", r.weights.data, FullWeightRows(full.weights.data, n * c.num_heads, total, t0, len),
                          {2e-6, 1e-5});
          }
          t0 += len;
        }
      }
    });
  }
}

TEST_CASE("mha kv cache: without a mask, a NaN token reaches only its own and later rows of a multi-token step",
          "[mha][kv_cache][nan]") {
  // Token 13 (a 4-token decode step) or token 5 (a 6-token general step) holds NaN in its value input only, no
  // mask: the rows before it in its step (and earlier steps) equal one causal forward over finite tokens (its value
  // is never read for them), the rows from it on are NaN (they attend a NaN value).
  const MhaConfig c = MultiTokenStepConfig();
  const int64_t n = 2, total = 20, e = c.embed_dim;
  const std::vector<int64_t> steps = MultiTokenSteps();
  MultiHeadAttention mha(c, 8);
  Rng rng(67);
  const std::vector<float> x = RandomVector(rng, n * total * e);
  const OwnedMask causal = CausalMask(total);
  MhaForwardOptions full_options;
  full_options.attn_mask = causal.View();
  const TensorView whole{x.data(), {n, total, e}};
  const AttentionResult full = mha.Forward(whole, whole, whole, full_options);
  for (int64_t nan_token : {5, 13}) {
    std::vector<float> x_v = x;
    for (int64_t b = 0; b < n; ++b) x_v[(b * total + nan_token) * e + 7] = std::nanf("");
    ForEachTarget([&](const std::string&) {
      for (bool need_weights : {true, false}) {
        KVCache cache = mha.CreateKVCache(n, total);
        int64_t t0 = 0;
        for (int64_t len : steps) {
          INFO("NaN token " << nan_token << ", step at " << t0 << " with " << len << " tokens, need_weights "
                            << need_weights);
          const std::vector<float> qs = Slice(c, true, n, x, total, e, t0, len);
          const std::vector<float> vs = Slice(c, true, n, x_v, total, e, t0, len);
          MhaForwardOptions options;
          options.kv_cache = &cache;
          options.need_weights = need_weights;
          const TensorView step_qk{qs.data(), {n, len, e}}, step_v{vs.data(), {n, len, e}};
          const AttentionResult r = mha.Forward(step_qk, step_qk, step_v, options);
          for (int64_t b = 0; b < n; ++b) {
            for (int64_t i = t0; i < t0 + len; ++i) {
              INFO("item " << b << " row " << i);
              const auto row = r.output.data.begin() + (b * len + i - t0) * e;
              const std::vector<float> got(row, row + e);
              if (i < nan_token) {
                const auto want = full.output.data.begin() + (b * total + i) * e;
                CheckAllClose("row before the NaN token", got, ToDouble(std::vector<float>(want, want + e)),
                              {2e-6, 1e-5});
              } else {
                for (float v : got) CHECK(std::isnan(v));
              }
            }
          }
          t0 += len;
        }
      }
    });
  }
}

// Runs fn, expects std::invalid_argument (or std::logic_error when `logic`) whose message starts with `name`.
template <class Fn>
void ExpectRejected(Fn&& fn, const std::string& name, const std::string& detail = "", bool logic = false) {
  INFO("expected an error naming " << name);
  try {
    fn();
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK_FALSE(logic);
    CHECK(std::string(e.what()).find(name) == 0);
    CHECK(std::string(e.what()).find(detail) != std::string::npos);
  } catch (const std::logic_error& e) {
    CHECK(logic);
    CHECK(std::string(e.what()).find(name) == 0);
    CHECK(std::string(e.what()).find(detail) != std::string::npos);
  }
}

TEST_CASE("mha kv cache: misuse is rejected by name and leaves the cache as it was", "[mha][kv_cache][validation]") {
  MhaConfig c = BatchFirstConfig(8, 2, 1);
  MultiHeadAttention mha(c, 2), other(c, 2);
  Rng rng(8);
  const std::vector<float> x = RandomVector(rng, 2 * 4 * 8);
  const TensorView one{x.data(), {2, 1, 8}}, three{x.data(), {2, 3, 8}}, single{x.data(), {1, 1, 8}};
  KVCache cache = mha.CreateKVCache(2, 4);
  MhaForwardOptions options;
  options.kv_cache = &cache;
  mha.Forward(three, three, three, options);
  REQUIRE(cache.length() == 3);
  // A step past max_length: nothing appended, and the cache keeps working.
  ExpectRejected([&] { mha.Forward(three, three, three, options); }, "kv_cache", "max_length = 4");
  CHECK(cache.length() == 3);
  ExpectRejected([&] { mha.Forward(single, single, single, options); }, "kv_cache", "batch_size = 1");
  ExpectRejected([&] { mha.Forward(one, three, three, options); }, "key", "as many as query's L = 1");
  ExpectRejected([&] { other.Forward(one, one, one, options); }, "kv_cache", "another module");
  MhaForwardOptions grad = options;
  grad.requires_grad = true;
  ExpectRejected([&] { mha.Forward(one, one, one, grad); }, "requires_grad");
  OwnedMask wrong_pad;
  wrong_pad.kind = attnlab::Mask::Kind::kBool;
  wrong_pad.shape = {2, 1};  // must cover the 4 cached positions after this step
  wrong_pad.bools = {0, 0};
  MhaForwardOptions padded = options;
  padded.key_padding_mask = wrong_pad.View();
  ExpectRejected([&] { mha.Forward(one, one, one, padded); }, "key_padding_mask", "[2, 4]");
  CHECK(cache.length() == 3);
  mha.Forward(one, one, one, options);
  CHECK(cache.length() == 4);
  ExpectRejected([&] { mha.Forward(one, one, one, options); }, "kv_cache", "max_length = 4");
  // New parameters make the cached keys stale: reset first.
  mha.LoadStateDict(Views(mha.StateDict()));
  cache.Reset();
  mha.Forward(one, one, one, options);
  mha.LoadStateDict(Views(mha.StateDict()));
  ExpectRejected([&] { mha.Forward(one, one, one, options); }, "kv_cache", "load_state_dict", /*logic=*/true);
  // Construction.
  ExpectRejected([&] { mha.CreateKVCache(0, 4); }, "batch_size");
  ExpectRejected([&] { mha.CreateKVCache(2, 0); }, "max_length");
  ExpectRejected([&] { mha.CreateKVCache(2, int64_t{1} << 61); }, "max_length");
  MhaConfig with_bias_kv = c;
  with_bias_kv.add_bias_kv = true;
  ExpectRejected([&] { MultiHeadAttention(with_bias_kv).CreateKVCache(1, 4); }, "add_bias_kv");
  MhaConfig with_zero_attn = c;
  with_zero_attn.add_zero_attn = true;
  ExpectRejected([&] { MultiHeadAttention(with_zero_attn).CreateKVCache(1, 4); }, "add_zero_attn");
  KVCache moved_from = std::move(cache);
  options.kv_cache = &cache;
  ExpectRejected([&] { mha.Forward(one, one, one, options); }, "kv_cache", "moved-from");
  CHECK(moved_from.max_length() == 4);
}

}  // namespace
}  // namespace attnlab_test
