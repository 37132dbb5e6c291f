// ScaledDotProductAttention with the issue-19 options (grouped-query heads, causal alignment, kv_lengths,
// windows, softcap, scores stages, broadcast masks, past keys) against the float64 oracle of reference_modern.h,
// on every Highway target, on the exact (need_weights) and online paths; bit-identical at every thread count;
// each invalid option named.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "hwy_targets.h"
#include "reference_modern.h"
#include "test_util.h"

namespace {

using attnlab::CausalAlign;
using attnlab::ScoresStage;
using attnlab::SdpaOptions;
using attnlab::Shape;
using attnlab::TensorView;
using attnlab_test::OwnedMask;
using attnlab_test::RefTensor;

// One call: shapes, options (pointers filled in by Inputs) and how the data is drawn.
struct ModernCase {
  std::string name;
  Shape q, k, v;
  int64_t past = -1;  // past length, -1: none
  SdpaOptions options;
  std::vector<int32_t> kv_lengths;
  Shape mask_shape;  // empty: no mask
  bool bool_mask = true;
  float q_range = 1.0f;  // |q| bound: large values give huge logits
};

Shape PastShape(const Shape& s, int64_t past) {
  Shape p = s;
  p.end()[-2] = past;
  return p;
}

// The drawn tensors of a case and the options that point at them.
struct Inputs {
  std::vector<float> q, k, v, past_k, past_v;
  OwnedMask mask;
  SdpaOptions options;

  Inputs(const ModernCase& c, uint64_t seed) {
    attnlab_test::Rng rng(seed);
    q = attnlab_test::RandomVector(rng, attnlab_test::NumElements(c.q), -c.q_range, c.q_range);
    k = attnlab_test::RandomVector(rng, attnlab_test::NumElements(c.k));
    v = attnlab_test::RandomVector(rng, attnlab_test::NumElements(c.v));
    options = c.options;
    if (c.past >= 0) {
      past_k = attnlab_test::RandomVector(rng, attnlab_test::NumElements(PastShape(c.k, c.past)));
      past_v = attnlab_test::RandomVector(rng, attnlab_test::NumElements(PastShape(c.v, c.past)));
      options.past_key = TensorView{past_k.data(), PastShape(c.k, c.past)};
      options.past_value = TensorView{past_v.data(), PastShape(c.v, c.past)};
    }
    if (!c.mask_shape.empty()) {
      mask = c.bool_mask ? attnlab_test::RandomBoolMask(rng, c.mask_shape, 0.75)
                         : attnlab_test::RandomFloatMask(rng, c.mask_shape, 0.2);
      options.attn_mask = mask.View();
    }
    if (!c.kv_lengths.empty()) {
      options.kv_lengths = c.kv_lengths.data();
      options.num_kv_lengths = c.kv_lengths.size();
    }
  }

  attnlab_test::ModernRefResult Reference(const ModernCase& c) const {
    const RefTensor rq = attnlab_test::ToRef(q, c.q), rk = attnlab_test::ToRef(k, c.k),
                    rv = attnlab_test::ToRef(v, c.v);
    const RefTensor pk = attnlab_test::ToRef(past_k, PastShape(c.k, c.past < 0 ? 0 : c.past));
    const RefTensor pv = attnlab_test::ToRef(past_v, PastShape(c.v, c.past < 0 ? 0 : c.past));
    return attnlab_test::ReferenceSdpaModern(rq, rk, rv, c.past >= 0 ? &pk : nullptr, c.past >= 0 ? &pv : nullptr,
                                             options);
  }
};

SdpaOptions Opts(bool causal, CausalAlign align = CausalAlign::kUpperLeft, bool gqa = false) {
  SdpaOptions o;
  o.is_causal = causal;
  o.causal_align = align;
  o.enable_gqa = gqa;
  return o;
}

SdpaOptions Window(SdpaOptions o, int64_t left, int64_t right) {
  o.window_left = left;
  o.window_right = right;
  return o;
}

SdpaOptions Softcap(SdpaOptions o, float cap, ScoresStage stage = ScoresStage::kNone) {
  o.softcap = cap;
  o.return_scores = stage;
  return o;
}

const CausalAlign kUL = CausalAlign::kUpperLeft, kLR = CausalAlign::kLowerRight;

std::vector<ModernCase> Cases() {
  std::vector<ModernCase> c;
  const Shape q4{2, 4, 5, 8}, k2{2, 2, 7, 8}, v2{2, 2, 7, 6}, k1{2, 1, 7, 8}, v1{2, 1, 7, 6};
  c.push_back({"GQA 4/2 causal upper-left", q4, k2, v2, -1, Opts(true, kUL, true)});
  c.push_back({"GQA 4/1 causal lower-right", q4, k1, v1, -1, Opts(true, kLR, true)});
  c.push_back({"GQA 4/4 (enable_gqa, equal heads)", q4, {2, 4, 7, 8}, {2, 4, 7, 6}, -1, Opts(false, kUL, true)});
  const Shape q2{2, 2, 5, 8}, k7{2, 2, 7, 8}, v7{2, 2, 7, 6};
  c.push_back({"kv_lengths {0, 7} causal lower-right", q2, k7, v7, -1, Opts(true, kLR), {0, 7}});
  c.push_back({"kv_lengths {3, 5} no causal", q2, k7, v7, -1, Opts(false), {3, 5}});
  c.push_back({"kv_lengths {4, 7} causal upper-left", q2, k7, v7, -1, Opts(true, kUL), {4, 7}});
  c.push_back({"window left 2 only", q2, k7, v7, -1, Window(Opts(false), 2, -1)});
  c.push_back({"window right 1 only", q2, k7, v7, -1, Window(Opts(false), -1, 1)});
  c.push_back({"window both, lower-right", q2, k7, v7, -1, Window(Opts(false, kLR), 1, 2)});
  c.push_back({"window 2 + causal lower-right + kv_lengths", q2, k7, v7, -1, Window(Opts(true, kLR), 2, -1), {7, 4}});
  c.push_back({"window 1,1 + kv_lengths upper-left", q2, k7, v7, -1, Window(Opts(false), 1, 1), {2, 6}});
  // Long rows: the kernels skip whole key tiles (exact: 32-key panels; online: 128-key tiles) on both sides.
  c.push_back({"window 50 + causal lower-right, Lk 300",
               {1, 2, 40, 8},
               {1, 2, 300, 8},
               {1, 2, 300, 4},
               -1,
               Window(Opts(true, kLR), 50, -1)});
  c.push_back({"window 20,5 upper-left, Lq 70 Lk 200",
               {1, 1, 70, 16},
               {1, 1, 200, 16},
               {1, 1, 200, 8},
               -1,
               Window(Opts(false), 20, 5)});
  c.push_back({"causal lower-right Lq 40 Lk 260 + kv_lengths",
               {2, 1, 40, 8},
               {2, 1, 260, 8},
               {2, 1, 260, 4},
               -1,
               Opts(true, kLR),
               {260, 150}});
  // Softcap: huge logits stay finite, -inf masks stay -inf.
  ModernCase soft{"softcap 20, huge logits, float mask with -inf", q2, k7, v7, -1, Softcap(Opts(false), 20.0f)};
  soft.mask_shape = {5, 7};
  soft.bool_mask = false;
  soft.q_range = 50.0f;
  c.push_back(soft);
  ModernCase soft_causal{"softcap 5 + causal lower-right, huge logits", q2, k7, v7, -1, Softcap(Opts(true, kLR), 5.0f)};
  soft_causal.q_range = 1e6f;
  c.push_back(soft_causal);
  // Each scores stage.
  ModernCase scaled{
      "scores scaled, causal + bool mask", q2, k7, v7, -1, Softcap(Opts(true), 2.0f, ScoresStage::kScaled)};
  scaled.mask_shape = {2, 2, 5, 7};
  c.push_back(scaled);
  c.push_back({"scores softcapped", q2, k7, v7, -1, Softcap(Opts(false), 0.5f, ScoresStage::kSoftcapped)});
  c.push_back(
      {"scores softcapped without softcap", q2, k7, v7, -1, Softcap(Opts(false), 0.0f, ScoresStage::kSoftcapped)});
  ModernCase masked{"scores masked: softcap, window, kv_lengths, float mask",
                    q2,
                    k7,
                    v7,
                    -1,
                    Softcap(Window(Opts(true, kLR), 3, -1), 1.5f, ScoresStage::kMasked),
                    {6, 0}};
  masked.mask_shape = {2, 1, 5, 7};
  masked.bool_mask = false;
  c.push_back(masked);
  // Masks of every broadcast kind.
  const Shape qb{2, 3, 4, 8}, kb{2, 3, 6, 8}, vb{2, 3, 6, 5};
  for (const Shape& m : std::vector<Shape>{
           {6}, {1, 6}, {4, 1}, {3, 1, 6}, {2, 1, 1, 6}, {2, 1, 4, 6}, {1, 1, 1, 1, 6}, {1}, {2, 3, 4, 1}, {3, 4, 6}}) {
    for (bool is_bool : {true, false}) {
      ModernCase b{
          "mask " + attnlab_test::ShapeToString(m) + (is_bool ? " bool" : " float"), qb, kb, vb, -1, Opts(is_bool)};
      b.mask_shape = m;
      b.bool_mask = is_bool;
      c.push_back(b);
    }
  }
  // Past keys and values.
  const Shape qp{2, 2, 3, 8}, kp{2, 2, 3, 8}, vp{2, 2, 3, 6};
  c.push_back({"past 5, causal upper-left (query 0 at the first new key)", qp, kp, vp, 5, Opts(true, kUL)});
  c.push_back({"past 5, causal lower-right, new keys 2", qp, {2, 2, 2, 8}, {2, 2, 2, 6}, 5, Opts(true, kLR)});
  c.push_back({"past 0 (empty), causal", qp, kp, vp, 0, Opts(true, kUL)});
  c.push_back({"past 4 + GQA 2/1 + window", qp, {2, 1, 3, 8}, {2, 1, 3, 6}, 4, Window(Opts(true, kLR, true), 2, -1)});
  ModernCase past_mask{"past 3 + kv_lengths + mask over past ‖ new", qp, kp, vp, 3, Opts(false), {6, 2}};
  past_mask.mask_shape = {3, 6};
  c.push_back(past_mask);
  // Negative lower-right offsets: the first Lq - Lk rows see nothing.
  c.push_back({"causal lower-right Lq 8 > Lk 3", {1, 2, 8, 8}, {1, 2, 3, 8}, {1, 2, 3, 4}, -1, Opts(true, kLR)});
  c.push_back({"causal lower-right Lq 20 > Lk 3 (a whole block empty)",
               {1, 1, 20, 8},
               {1, 1, 3, 8},
               {1, 1, 3, 4},
               -1,
               Opts(true, kLR)});
  // No batch dimension.
  c.push_back({"rank 2, kv_lengths {3}, window 1", {4, 8}, {6, 8}, {6, 3}, -1, Window(Opts(false, kLR), 1, 1), {3}});
  return c;
}

void CheckCase(const ModernCase& c, bool need_weights, uint64_t seed) {
  Inputs in(c, seed);
  in.options.need_weights = need_weights;
  const attnlab_test::ModernRefResult ref = in.Reference(c);
  INFO(c.name << (need_weights ? " (exact path)" : " (online path)"));
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(
      TensorView{in.q.data(), c.q}, TensorView{in.k.data(), c.k}, TensorView{in.v.data(), c.v}, in.options);
  attnlab_test::CheckAllClose("output", r.output.data, ref.output);
  CHECK(attnlab_test::AllFinite(r.output.data));
  if (need_weights) {
    attnlab_test::CheckAllClose("weights", r.weights.data, ref.weights);
  } else {
    CHECK(r.weights.data.empty());
  }
  if (in.options.return_scores != ScoresStage::kNone) {
    attnlab_test::CheckAllClose("scores", r.scores.data, ref.scores, attnlab_test::Tolerance{1e-4, 1e-5});
    Shape want(c.q.begin(), c.q.end() - 1);
    want.push_back(c.k.end()[-2] + (c.past > 0 ? c.past : 0));
    CHECK(r.scores.shape == want);
  } else {
    CHECK(r.scores.data.empty());
  }
  if (c.past >= 0) {
    attnlab_test::CheckAllClose("present_key", r.present_key.data, ref.present_key, attnlab_test::Tolerance{0, 0});
    attnlab_test::CheckAllClose("present_value", r.present_value.data, ref.present_value,
                                attnlab_test::Tolerance{0, 0});
  } else {
    CHECK(r.present_key.data.empty());
  }
}

}  // namespace

TEST_CASE("SDPA options (#19) match the float64 reference, exact and online path, on every target", "[sdpa][modern]") {
  const std::vector<ModernCase> cases = Cases();
  attnlab_test::ForEachTarget([&](const std::string&) {
    uint64_t seed = 19;
    for (const ModernCase& c : cases) {
      for (bool need_weights : {true, false}) CheckCase(c, need_weights, ++seed);
    }
  });
}

TEST_CASE("SDPA options (#19): a row with no visible key is zero, never NaN", "[sdpa][modern]") {
  ModernCase c{"kv_lengths 0", {1, 1, 3, 4}, {1, 1, 5, 4}, {1, 1, 5, 4}, -1, Window(Opts(true, kLR), 0, 0), {0}};
  Inputs in(c, 7);
  for (bool need_weights : {true, false}) {
    in.options.need_weights = need_weights;
    const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(
        TensorView{in.q.data(), c.q}, TensorView{in.k.data(), c.k}, TensorView{in.v.data(), c.v}, in.options);
    for (float x : r.output.data) CHECK(x == 0.0f);
    for (float x : r.weights.data) CHECK(x == 0.0f);
  }
}

TEST_CASE("SDPA options (#19): forward and backward bit-identical at 1, 2 and 3 threads", "[sdpa][modern][parallel]") {
  struct Guard {
    ~Guard() { attnlab::SetThreadCount(1); }
  } guard;
  ModernCase c{"GQA 8/2 + window + softcap",
               {2, 8, 33, 16},
               {2, 2, 150, 16},
               {2, 2, 150, 16},
               -1,
               Softcap(Window(Opts(true, kLR, true), 40, 3), 4.0f, ScoresStage::kMasked),
               {150, 90}};
  Inputs in(c, 3);
  attnlab_test::Rng rng(4);
  const std::vector<float> grad_out = attnlab_test::RandomVector(rng, 2 * 8 * 33 * 16);
  const Shape out_shape{2, 8, 33, 16};
  std::vector<std::vector<float>> first;
  for (size_t threads : {1, 2, 3}) {
    attnlab::SetThreadCount(threads);
    std::vector<std::vector<float>> results;
    for (bool need_weights : {true, false}) {
      in.options.need_weights = need_weights;
      attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(
          TensorView{in.q.data(), c.q}, TensorView{in.k.data(), c.k}, TensorView{in.v.data(), c.v}, in.options);
      results.push_back(r.output.data);
      results.push_back(r.weights.data);
      results.push_back(r.scores.data);
    }
    attnlab::SdpaGradients g = attnlab::ScaledDotProductAttentionBackward(
        TensorView{in.q.data(), c.q}, TensorView{in.k.data(), c.k}, TensorView{in.v.data(), c.v},
        TensorView{grad_out.data(), out_shape}, in.options);
    results.push_back(g.grad_query.data);
    results.push_back(g.grad_key.data);
    results.push_back(g.grad_value.data);
    if (first.empty()) {
      first = results;
      continue;
    }
    INFO(threads << " threads");
    for (size_t i = 0; i < results.size(); ++i) CHECK(attnlab_test::BitIdentical(results[i], first[i]));
  }
}

TEST_CASE("SDPA options (#19): each invalid option is named", "[sdpa][modern][validation]") {
  std::vector<float> data(2 * 4 * 3 * 8, 0.5f);
  const TensorView q{data.data(), {2, 4, 3, 8}}, k{data.data(), {2, 3, 3, 8}}, v{data.data(), {2, 3, 3, 8}};
  const TensorView k2{data.data(), {2, 2, 3, 8}}, v2{data.data(), {2, 2, 3, 8}};
  auto expect = [&](const TensorView& key, const TensorView& value, const SdpaOptions& o, const std::string& name) {
    INFO("expects an error naming " << name);
    CHECK_THROWS_AS(attnlab::ScaledDotProductAttention(q, key, value, o), std::invalid_argument);
    CHECK_THROWS_WITH(attnlab::ScaledDotProductAttention(q, key, value, o), Catch::StartsWith(name + ":"));
  };
  expect(k, v, Opts(false, kUL, true), "key");     // 3 key/value heads do not divide 4
  expect(k2, v2, Opts(false), "key");              // 2 heads without enable_gqa
  expect(k2, v, Opts(false, kUL, true), "value");  // value's heads differ from key's
  const std::vector<int32_t> lengths{3, 4, 1};
  SdpaOptions o = Opts(false, kUL, true);
  o.kv_lengths = lengths.data();
  o.num_kv_lengths = 3;
  expect(k2, v2, o, "kv_lengths");  // 3 lengths for 2 items
  o.num_kv_lengths = 2;
  expect(k2, v2, o, "kv_lengths");  // 4 > Lk = 3
  o.num_kv_lengths = 0;
  expect(k2, v2, o, "kv_lengths");  // data but no count
  expect(k2, v2, Window(Opts(false, kUL, true), -2, -1), "window_left");
  expect(k2, v2, Window(Opts(false, kUL, true), 0, -5), "window_right");
  for (float bad : {-1.0f, attnlab_test::kInf, std::nanf("")})
    expect(k2, v2, Softcap(Opts(false, kUL, true), bad), "softcap");
  SdpaOptions stage = Opts(false, kUL, true);
  stage.return_scores = static_cast<ScoresStage>(7);
  expect(k2, v2, stage, "return_scores");
  SdpaOptions align = Opts(true, kUL, true);
  align.causal_align = static_cast<CausalAlign>(5);
  expect(k2, v2, align, "causal_align");
  SdpaOptions past = Opts(false, kUL, true);
  past.past_key = TensorView{data.data(), {2, 2, 4, 8}};
  expect(k2, v2, past, "past_value");  // past_key without past_value
  past.past_value = TensorView{data.data(), {2, 2, 5, 8}};
  expect(k2, v2, past, "past_value");  // Lpast differs
  past.past_value = TensorView{data.data(), {2, 2, 4, 8}};
  past.past_key = TensorView{data.data(), {2, 4, 4, 8}};
  expect(k2, v2, past, "past_key");  // query's heads, not key's
  SdpaOptions mask = Opts(false, kUL, true);
  std::vector<uint8_t> bits(64, 1);
  mask.attn_mask = attnlab::Mask::Bool(bits.data(), {3, 4});  // Lk is 3, not 4
  expect(k2, v2, mask, "attn_mask");
  mask.attn_mask = attnlab::Mask::Bool(bits.data(), {3, 2, 4, 3, 3});  // a leading 3 cannot broadcast away
  expect(k2, v2, mask, "attn_mask");
}

// Fuzz findings (tests/fuzz): each once wrong on some target or path.
TEST_CASE("SDPA: logits near 1e10 give the softmax of the largest, on the online path too", "[sdpa][modern][nan]") {
  // Logits 7e9 … 2.1e10: a fused x·scale − max (an implicit FMA) kept a rounding error of ~1e3 on the largest
  // logit, exp of which is 0, and the row came out all zero.
  const std::vector<float> q{1e10f, 1.0f}, k{1, 0, -1, 0, 0.5f, 0, 3, 1}, v{1, 2, 3, 4, 5, 6, 7, 8};
  attnlab_test::ForEachTarget([&](const std::string&) {
    for (bool need_weights : {true, false}) {
      SdpaOptions o;
      o.need_weights = need_weights;
      const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(
          TensorView{q.data(), {1, 2}}, TensorView{k.data(), {4, 2}}, TensorView{v.data(), {4, 2}}, o);
      INFO("need_weights " << need_weights);
      CHECK(r.output.data == std::vector<float>{7, 8});
    }
  });
}

TEST_CASE("SDPA backward: grouped-query heads with no query head give zero gradients", "[sdpa][modern]") {
  // q (2, 0, 6, 0) against k (2, 1, 3, 0): no query head in the group (a division by a group of 0 once).
  const std::vector<float> v(2 * 3 * 5, 1.0f);
  SdpaOptions o;
  o.enable_gqa = true;
  const attnlab::SdpaGradients g = attnlab::ScaledDotProductAttentionBackward(
      TensorView{nullptr, {2, 0, 6, 0}}, TensorView{nullptr, {2, 1, 3, 0}}, TensorView{v.data(), {2, 1, 3, 5}},
      TensorView{nullptr, {2, 0, 6, 5}}, o);
  CHECK(g.grad_value.shape == Shape{2, 1, 3, 5});
  for (float x : g.grad_value.data) CHECK(x == 0.0f);
}

TEST_CASE("SDPA: an empty call with a huge batch and a broadcast mask allocates nothing per problem",
          "[sdpa][modern]") {
  // q (2^29 - 1, 0, 1): nothing to compute; the mask's per-problem offsets (2 GiB in wasm, 4 GiB natively) are never
  // made.
  const uint8_t mask = 1;
  SdpaOptions o;
  o.attn_mask = attnlab::Mask::Bool(&mask, {1, 1});
  const int64_t huge = (int64_t{1} << 29) - 1;  // the most elements wasm32 allows
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(
      TensorView{nullptr, {huge, 0, 1}}, TensorView{nullptr, {huge, 0, 1}}, TensorView{nullptr, {huge, 0, 1}}, o);
  CHECK(r.output.shape == Shape{huge, 0, 1});
  CHECK(r.output.data.empty());
}
